//! Reads libclang cursors into the owned syntax tree of [`crate::syntax`].
//!
//! Recursion is bounded: expressions and statements nested deeper than
//! [`MAX_DEPTH`] yield one TL004 diagnostic instead of a deep walk, so
//! pathological input (10 000 nested parentheses or `a+a+...+a`) can never
//! overflow the stack. Statements with no loop-IR meaning (`while`,
//! `goto`, ...) are diagnosed here and kept as [`CStmt::Rejected`].

use std::collections::{BTreeMap, HashMap, HashSet};

use clang_sys as sys;

use crate::diagnostics::{self as codes, Diagnostic};
use crate::ir::{Loc, ScalarType};
use crate::libclang::{Cursor, EvaluatedInt, Type};
use crate::syntax::*;

mod do_while;
mod mem_calls;
mod skip_continue;
mod switch;

/// Most helper-call expansions per function (a helper calling two helpers
/// calling two helpers... would otherwise grow exponentially).
const MAX_INLINE_EXPANSIONS: usize = 1000;

/// Most statements before the `return` of a helper that is hoisted.
const MAX_HELPER_STATEMENTS: usize = 64;

/// Deepest expression or statement nesting we walk.
/// 100 keeps the JSON of any accepted kernel within serde_json's default
/// recursion limit (128), so `--json` output always parses back.
pub const MAX_DEPTH: usize = 100;

/// Collects diagnostics and the globals a function references.
pub struct Reader {
    pub diagnostics: Vec<Diagnostic>,
    /// Globals seen so far, keyed by declaration key (ordered by position).
    globals: BTreeMap<(String, u32, u32), CVarDecl>,
    too_deep_reported: bool,
    inline_expansions: usize,
    /// Keys of the helpers whose statements are being read (a helper that
    /// calls itself, directly or not, is not hoisted).
    helpers_open: Vec<String>,
    /// Overridable integer macros (see [`crate::macros`]): a literal
    /// spelled with one of these names is read as a `MacroInt`.
    size_macros: HashMap<String, i64>,
    /// Source lines by file, read when a literal may be a macro's.
    source_lines: HashMap<String, Option<Vec<String>>>,
    /// Declaration keys of the parameters of the function being read.
    param_keys: HashSet<String>,
    /// Where the `for` loops written without an initialiser are (they are
    /// read like a counted `while`, and refused with their own message).
    initless_fors: Vec<Loc>,
    /// Layouts of the struct fields the function being read names.
    field_layouts: BTreeMap<(String, String), FieldLayout>,
    /// The `assert(…)`s of the function being read, as written.
    asserted: Vec<(String, Loc)>,
    /// The conditions of the `do … while` loops read as `while` loops, as
    /// written, with where each loop is.
    entered: Vec<(String, Loc)>,
}

/// Whether `c` holds a condition (`?:` or `if`) within a few levels: an
/// `assert` expansion does unless `NDEBUG` emptied it.
fn tests_anything(c: &Cursor<'_>, depth: usize) -> bool {
    depth < 8
        && c.children().iter().any(|k| {
            matches!(
                k.kind(),
                sys::CXCursor_ConditionalOperator | sys::CXCursor_IfStmt
            ) || tests_anything(k, depth + 1)
        })
}

fn loc_of(c: &Cursor<'_>) -> Loc {
    match c.position() {
        Some(p) => Loc {
            file: p.file,
            line: p.line,
            col: p.col,
        },
        None => Loc {
            file: String::new(),
            line: 0,
            col: 0,
        },
    }
}

/// A declaration's identity: its name and where it is declared.
pub fn decl_key(c: &Cursor<'_>) -> String {
    let loc = loc_of(c);
    format!("{}@{}:{}:{}", c.spelling(), loc.file, loc.line, loc.col)
}

/// Maps a libclang type to ours, resolving typedefs.
pub fn read_type(ty: Type<'_>) -> CType {
    let canonical = ty.canonical();
    let scalar = |s| CType::Scalar(s);
    match canonical.kind() {
        sys::CXType_Bool => scalar(ScalarType::Bool),
        sys::CXType_Char_S | sys::CXType_SChar => scalar(ScalarType::I8),
        sys::CXType_Char_U | sys::CXType_UChar => scalar(ScalarType::U8),
        sys::CXType_Short => scalar(ScalarType::I16),
        sys::CXType_UShort => scalar(ScalarType::U16),
        sys::CXType_Int | sys::CXType_Enum => scalar(ScalarType::I32),
        sys::CXType_UInt => scalar(ScalarType::U32),
        sys::CXType_Long | sys::CXType_LongLong => scalar(ScalarType::I64),
        sys::CXType_ULong | sys::CXType_ULongLong => scalar(ScalarType::U64),
        sys::CXType_Float => scalar(ScalarType::F32),
        sys::CXType_Double => scalar(ScalarType::F64),
        sys::CXType_Void => CType::Void,
        sys::CXType_Pointer => CType::Pointer {
            pointee: Box::new(read_type(canonical.pointee())),
            restrict: canonical.is_restrict(),
        },
        sys::CXType_ConstantArray => CType::Array {
            elem: Box::new(read_type(canonical.element())),
            len: canonical.array_size(),
        },
        sys::CXType_VariableArray | sys::CXType_IncompleteArray => CType::Array {
            elem: Box::new(read_type(canonical.element())),
            len: None,
        },
        // The written spelling (`matrix`) when it names the struct, since an
        // anonymous struct's canonical spelling is no C type name.
        sys::CXType_Record => {
            // Qualifiers are not part of the name a driver declares.
            let unqualified = |s: String| {
                s.split_whitespace()
                    .filter(|w| !matches!(*w, "const" | "volatile" | "restrict"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let canonical_name = unqualified(canonical.spelling());
            if canonical_name.contains('(') {
                CType::Struct(unqualified(ty.spelling()))
            } else {
                CType::Struct(canonical_name)
            }
        }
        _ => CType::Other(ty.spelling()),
    }
}

/// Number of array levels of a declared type that carry a size expression.
fn sized_levels(ty: Type<'_>) -> Vec<bool> {
    let mut levels = Vec::new();
    let mut t = ty.canonical();
    loop {
        match t.kind() {
            sys::CXType_ConstantArray | sys::CXType_VariableArray => levels.push(true),
            sys::CXType_IncompleteArray => levels.push(false),
            _ => return levels,
        }
        t = t.element().canonical();
    }
}

fn binary_op(kind: sys::CXBinaryOperatorKind) -> CBinOp {
    match kind {
        sys::CXBinaryOperator_Mul => CBinOp::Mul,
        sys::CXBinaryOperator_Div => CBinOp::Div,
        sys::CXBinaryOperator_Rem => CBinOp::Rem,
        sys::CXBinaryOperator_Add => CBinOp::Add,
        sys::CXBinaryOperator_Sub => CBinOp::Sub,
        sys::CXBinaryOperator_LT => CBinOp::Lt,
        sys::CXBinaryOperator_GT => CBinOp::Gt,
        sys::CXBinaryOperator_LE => CBinOp::Le,
        sys::CXBinaryOperator_GE => CBinOp::Ge,
        sys::CXBinaryOperator_EQ => CBinOp::Eq,
        sys::CXBinaryOperator_NE => CBinOp::Ne,
        sys::CXBinaryOperator_LAnd => CBinOp::LAnd,
        sys::CXBinaryOperator_LOr => CBinOp::LOr,
        sys::CXBinaryOperator_Assign => CBinOp::Assign,
        sys::CXBinaryOperator_MulAssign => CBinOp::CompoundAssign(ArithOp::Mul),
        sys::CXBinaryOperator_DivAssign => CBinOp::CompoundAssign(ArithOp::Div),
        sys::CXBinaryOperator_RemAssign => CBinOp::CompoundAssign(ArithOp::Rem),
        sys::CXBinaryOperator_AddAssign => CBinOp::CompoundAssign(ArithOp::Add),
        sys::CXBinaryOperator_SubAssign => CBinOp::CompoundAssign(ArithOp::Sub),
        sys::CXBinaryOperator_Shl => CBinOp::Shl,
        sys::CXBinaryOperator_Shr => CBinOp::Shr,
        sys::CXBinaryOperator_ShlAssign => CBinOp::CompoundAssign(ArithOp::Shl),
        sys::CXBinaryOperator_ShrAssign => CBinOp::CompoundAssign(ArithOp::Shr),
        sys::CXBinaryOperator_And | sys::CXBinaryOperator_AndAssign => CBinOp::Unsupported("&"),
        sys::CXBinaryOperator_Or | sys::CXBinaryOperator_OrAssign => CBinOp::Unsupported("|"),
        sys::CXBinaryOperator_Xor | sys::CXBinaryOperator_XorAssign => CBinOp::Unsupported("^"),
        sys::CXBinaryOperator_Comma => CBinOp::Unsupported(","),
        _ => CBinOp::Unsupported("?"),
    }
}

fn unary_op(kind: sys::CXUnaryOperatorKind) -> CUnOp {
    match kind {
        sys::CXUnaryOperator_PostInc => CUnOp::PostInc,
        sys::CXUnaryOperator_PostDec => CUnOp::PostDec,
        sys::CXUnaryOperator_PreInc => CUnOp::PreInc,
        sys::CXUnaryOperator_PreDec => CUnOp::PreDec,
        sys::CXUnaryOperator_Plus => CUnOp::Plus,
        sys::CXUnaryOperator_Minus => CUnOp::Minus,
        sys::CXUnaryOperator_LNot => CUnOp::LNot,
        sys::CXUnaryOperator_Not => CUnOp::Unsupported("~"),
        sys::CXUnaryOperator_AddrOf => CUnOp::Unsupported("&"),
        sys::CXUnaryOperator_Deref => CUnOp::Unsupported("*"),
        _ => CUnOp::Unsupported("?"),
    }
}

/// `while (cond) { …; i++; }` whose condition compares the counter `i`
/// that only its last statement steps (`i++`, `--i`, `i += c`) is
/// `for (; cond; i++) { … }`: returned as that `for` with a `Null`
/// initialiser, which [`Reader::fold_while_inits`] takes from the statement
/// before it. `None` for any other `while`.
fn counted_while(cond: CExpr, body: CStmt, loc: &Loc) -> Option<CStmt> {
    let CStmt::Compound(mut stmts, body_loc) = body else {
        return None;
    };
    step_moved_last(&mut stmts, &cond);
    let CStmt::Expr(inc) = stmts.pop()? else {
        return None;
    };
    let counter = step_counter(&inc)?.key.clone();
    let compares = matches!(&unwrap_expr(&cond).kind, CExprKind::Binary { op, lhs, rhs }
        if matches!(op, CBinOp::Lt | CBinOp::Le | CBinOp::Gt | CBinOp::Ge | CBinOp::Ne)
            && [lhs, rhs].iter().any(|x| is_ref_to(x, &counter)));
    if !compares || stmts.iter().any(|s| s.writes(&counter)) {
        return None;
    }
    Some(CStmt::For {
        init: Box::new(CStmt::Null(loc.clone())),
        cond,
        inc,
        body: Box::new(CStmt::Compound(stmts, body_loc)),
        loc: loc.clone(),
    })
}

/// A unit step of the tested counter followed by statements that only read
/// it (`col--; pIn2 = pInB + (numColsB - col);`, as DSP libraries write
/// their `do … while` bodies) moved last, the reads after it rewritten to
/// the value it left (`numColsB - (col - 1)`): the same body, in the form
/// [`counted_while`] reads. Nothing moves when a later statement writes the
/// counter or returns.
fn step_moved_last(stmts: &mut Vec<CStmt>, cond: &CExpr) {
    let tested = |key: &str| cond.refers_to(key);
    let Some(at) = stmts.iter().rposition(
        |s| matches!(s, CStmt::Expr(e) if step_counter(e).is_some_and(|r| tested(&r.key))),
    ) else {
        return;
    };
    let CStmt::Expr(step) = &stmts[at] else {
        return;
    };
    let Some(counter) = step_counter(step).cloned() else {
        return;
    };
    let Some(delta) = crate::induction::unit_step(step, &counter.key) else {
        return;
    };
    let rest = &stmts[at + 1..];
    if rest.is_empty() || rest.iter().any(|s| s.writes(&counter.key) || returns(s)) {
        return;
    }
    let stepped = CExpr {
        kind: CExprKind::Binary {
            op: if delta > 0 { CBinOp::Add } else { CBinOp::Sub },
            lhs: Box::new(unwrap_expr(step_target(step)).clone()),
            rhs: Box::new(CExpr {
                kind: CExprKind::Int(IntValue::Fits(1)),
                ty: step.ty.clone(),
                loc: step.loc.clone(),
            }),
        },
        ty: step.ty.clone(),
        loc: step.loc.clone(),
    };
    let stepped = crate::induction::paren(stepped);
    let step = stmts.remove(at);
    for s in &mut stmts[at..] {
        *s = s.map_exprs(&mut |e| crate::induction::replace_reads(e, &counter.key, &stepped));
    }
    stmts.push(step);
}

/// The variable expression a step statement writes.
fn step_target(e: &CExpr) -> &CExpr {
    match &unwrap_expr(e).kind {
        CExprKind::Unary { arg, .. } => arg,
        CExprKind::Binary { lhs, .. } => lhs,
        _ => e,
    }
}

fn returns(s: &CStmt) -> bool {
    match s {
        CStmt::Return(..) => true,
        CStmt::Compound(items, _) => items.iter().any(returns),
        CStmt::If {
            then_branch,
            else_branch,
            ..
        } => returns(then_branch) || else_branch.as_deref().is_some_and(returns),
        CStmt::For { body, .. } => returns(body),
        _ => false,
    }
}

fn unwrap_expr(e: &CExpr) -> &CExpr {
    match &e.kind {
        CExprKind::Paren(inner) | CExprKind::Implicit(inner) => unwrap_expr(inner),
        _ => e,
    }
}

fn is_ref_to(e: &CExpr, key: &str) -> bool {
    matches!(&unwrap_expr(e).kind, CExprKind::Ref(r) if r.key == key)
}

/// The variable a loop step `i++`, `--i`, `i += c`, `i -= c` steps.
fn step_counter(e: &CExpr) -> Option<&DeclRef> {
    let target = match &unwrap_expr(e).kind {
        CExprKind::Unary {
            op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
            arg,
        } => arg,
        CExprKind::Binary {
            op: CBinOp::CompoundAssign(ArithOp::Add | ArithOp::Sub),
            lhs,
            ..
        } => lhs,
        _ => return None,
    };
    match &unwrap_expr(target).kind {
        CExprKind::Ref(r) => Some(r),
        _ => None,
    }
}

/// Whether `s` is `key = e;` or the declaration of `key` with an initialiser.
fn sets_counter(s: &CStmt, key: &str) -> bool {
    match s {
        CStmt::Expr(e) => matches!(&unwrap_expr(e).kind,
            CExprKind::Binary { op: CBinOp::Assign, lhs, .. } if is_ref_to(lhs, key)),
        CStmt::Decl(vars, _) => matches!(vars.as_slice(), [v] if v.key == key && v.init.is_some()),
        _ => false,
    }
}

/// The declaration of `key` among others (`uint32_t col, row = nRows, i
/// = 0U;`) as one declaration a variable, in order: C initialises the
/// declarators one after another, so that is the same program, and the
/// counter's own declaration can then move down to its loop.
fn split_declaration(stmts: &mut Vec<CStmt>, key: &str) {
    let Some(at) = stmts.iter().rposition(
        |s| matches!(s, CStmt::Decl(vars, _) if vars.len() > 1 && vars.iter().any(|v| v.key == key)),
    ) else {
        return;
    };
    let CStmt::Decl(vars, loc) = stmts.remove(at) else {
        return;
    };
    for (k, v) in vars.into_iter().enumerate() {
        stmts.insert(at + k, CStmt::Decl(vec![v], loc.clone()));
    }
}

/// Where in `stmts` the statement setting the counter `key` of a counted
/// `while` that follows them is, when it can move down to the `while`:
/// it is the last one that sets it, its value reads only variables, and
/// the statements after it neither mention the counter nor write what
/// that value reads (`uint32_t cnt = size; float sum = 0; while (cnt > 0)`).
fn movable_init(stmts: &[CStmt], key: &str) -> Option<usize> {
    let at = stmts.iter().rposition(|s| sets_counter(s, key))?;
    let value = match &stmts[at] {
        CStmt::Expr(e) => match &unwrap_expr(e).kind {
            CExprKind::Binary { rhs, .. } => &**rhs,
            _ => return None,
        },
        CStmt::Decl(vars, _) => vars.first()?.init.as_ref()?,
        _ => return None,
    };
    let mut reads = Vec::new();
    if !variables_only(value, &mut reads) {
        return None;
    }
    let between = &stmts[at + 1..];
    let untouched = between
        .iter()
        .all(|s| !s.refers_to(key) && reads.iter().all(|r| !s.writes(r)));
    untouched.then_some(at)
}

/// Whether `e` reads nothing but variables (collected into `reads`),
/// literals and arithmetic: no memory, call or side effect.
pub(crate) fn variables_only(e: &CExpr, reads: &mut Vec<String>) -> bool {
    match &e.kind {
        CExprKind::Ref(r) => {
            reads.push(r.key.clone());
            true
        }
        CExprKind::Int(_) | CExprKind::MacroInt { .. } | CExprKind::Float { .. } => true,
        // A size field of a struct parameter (`pSrc->numRows`): read as
        // the parameter, which the statements between must not write.
        CExprKind::Member { base, .. } if e.ty.is_integer() => match param_of(base) {
            Some(key) => {
                reads.push(key);
                true
            }
            None => false,
        },
        CExprKind::Binary {
            op: CBinOp::Assign | CBinOp::CompoundAssign(_),
            ..
        } => false,
        CExprKind::Unary { op, .. } if !matches!(op, CUnOp::Plus | CUnOp::Minus | CUnOp::LNot) => {
            false
        }
        CExprKind::Binary { .. }
        | CExprKind::Unary { .. }
        | CExprKind::Implicit(_)
        | CExprKind::Cast(_)
        | CExprKind::Paren(_) => e.children().into_iter().all(|c| variables_only(c, reads)),
        _ => false,
    }
}

/// The key of the parameter a member chain starts from (`l.out`, `p->n`).
fn param_of(e: &CExpr) -> Option<String> {
    match &unwrap_expr(e).kind {
        CExprKind::Ref(r) if r.target == RefTarget::Param => Some(r.key.clone()),
        CExprKind::Member { base, .. } => param_of(base),
        _ => None,
    }
}

/// Whether a token spells a floating literal (digits, `.`, exponent, suffix).
fn looks_like_float_literal(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '.')
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '+' || c == '-')
}

impl Reader {
    pub fn new() -> Reader {
        Reader {
            diagnostics: Vec::new(),
            globals: BTreeMap::new(),
            too_deep_reported: false,
            inline_expansions: 0,
            helpers_open: Vec::new(),
            size_macros: HashMap::new(),
            source_lines: HashMap::new(),
            param_keys: HashSet::new(),
            initless_fors: Vec::new(),
            field_layouts: BTreeMap::new(),
            asserted: Vec::new(),
            entered: Vec::new(),
        }
    }

    /// A reader that recognises literals spelled with `size_macros`.
    pub fn with_size_macros(size_macros: HashMap<String, i64>) -> Reader {
        Reader {
            size_macros,
            ..Reader::new()
        }
    }

    /// The overridable macro a literal with `value` is spelled as, if any:
    /// the identifier written where the literal was expanded.
    fn macro_spelling(&mut self, c: &Cursor<'_>, value: i64) -> Option<String> {
        if self.size_macros.is_empty() {
            return None;
        }
        let name: String = self
            .source_at(c, 1)?
            .chars()
            .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
            .collect();
        (self.size_macros.get(&name) == Some(&value)).then_some(name)
    }

    /// The source text from where `c` was written (a macro's expansion
    /// point for a cursor a macro made) to the end of that line and up to
    /// `lines - 1` more.
    fn source_at(&mut self, c: &Cursor<'_>, lines: usize) -> Option<String> {
        let at = c.position()?;
        let text = self
            .source_lines
            .entry(at.file.clone())
            .or_insert_with(|| {
                std::fs::read_to_string(&at.file)
                    .ok()
                    .map(|t| t.lines().map(str::to_string).collect())
            })
            .as_ref()?;
        let first = (at.line as usize).checked_sub(1)?;
        let mut out = text
            .get(first)?
            .get((at.col as usize).checked_sub(1)?..)?
            .to_string();
        for line in text.iter().skip(first + 1).take(lines.saturating_sub(1)) {
            out.push('\n');
            out.push_str(line);
        }
        Some(out)
    }

    /// The condition of an expression statement that is the expansion of
    /// the standard `assert` macro (`assert(from.rows == to.rows)`), as
    /// written (whitespace collapsed); `None` for anything else, a function
    /// the program itself calls `assert` included (that is a call, not the
    /// macro's conditional or comma expression).
    fn assertion(&mut self, c: &Cursor<'_>) -> Option<String> {
        if c.kind() == sys::CXCursor_CallExpr {
            return None;
        }
        let text = self.source_at(c, 16)?;
        if text.starts_with("assert") && !tests_anything(c, 0) {
            // `-DNDEBUG`: the macro is `((void) 0)`, nothing is asserted.
            return Some(String::new());
        }
        let rest = text
            .strip_prefix("assert")?
            .trim_start()
            .strip_prefix('(')?;
        let mut depth = 1;
        let end = rest.char_indices().find_map(|(i, ch)| {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        Some(rest[..end].split_whitespace().collect::<Vec<_>>().join(" "))
    }

    fn reject_while(&mut self, loc: &Loc, what: &str) -> CStmt {
        self.reject(
            codes::WHILE_LOOP,
            loc,
            format!("{what} loop has no affine trip count; write it as a counted `for`"),
        );
        CStmt::Rejected(loc.clone())
    }

    /// Keeps each count-down `while` read as a `for`
    /// ([`crate::decrement_while`]) where that reading is exact in this
    /// block, followed by the counter's final value when the block reads it
    /// later; refuses the others.
    fn settle_count_downs(&mut self, stmts: Vec<CStmt>, function_body: bool) -> Vec<CStmt> {
        use crate::decrement_while::{final_value, pending_counter, valid_in_block};
        if !stmts.iter().any(|s| pending_counter(s).is_some()) {
            return stmts;
        }
        let mut out = Vec::with_capacity(stmts.len());
        for at in 0..stmts.len() {
            let Some(key) = pending_counter(&stmts[at]) else {
                out.push(stmts[at].clone());
                continue;
            };
            let is_param = self.param_keys.contains(key);
            if !valid_in_block(&stmts, at, function_body, is_param) {
                let loc = stmts[at].loc().clone();
                out.push(self.reject_while(&loc, "count-down `while`"));
                continue;
            }
            out.push(stmts[at].clone());
            if stmts[at + 1..].iter().any(|s| s.refers_to(key)) {
                out.extend(final_value(&stmts[at]));
            }
        }
        out
    }

    /// A block's statements as read, with its counted and count-down
    /// `while` loops settled.
    fn finish_block(&mut self, stmts: Vec<CStmt>, loc: Loc, function_body: bool) -> CStmt {
        let stmts = crate::comma_temps::hoist(stmts);
        let stmts = crate::hoist_helpers::hoist_helper_calls(stmts);
        let stmts = crate::reroll::reroll(stmts, function_body);
        let stmts = self.fold_while_inits(stmts);
        let stmts = self.settle_count_downs(stmts, function_body);
        let stmts = crate::flat_product::split_product_bounds(stmts);
        let stmts = crate::pointer_for::count_pointer_loops(stmts);
        let mut stmts = crate::induction::substitute_inductions(stmts);
        if function_body {
            stmts = crate::flag_sizes::unswitch_flag_sizes(stmts, &self.param_keys);
        }
        let block = CStmt::Compound(stmts, loc);
        if function_body {
            crate::flat_product::split_iterator_loops(block)
        } else {
            block
        }
    }

    /// Completes each counted `while` ([`counted_while`]) with the statement
    /// before it that sets its counter (`i = 0;` or `int i = 0;`), making it
    /// the `for` it is; one without such a statement is refused.
    fn fold_while_inits(&mut self, mut stmts: Vec<CStmt>) -> Vec<CStmt> {
        let mut out: Vec<CStmt> = Vec::with_capacity(stmts.len());
        for at in 0..stmts.len() {
            // Taken out, the statements after it still in place to read.
            let placeholder = CStmt::Null(stmts[at].loc().clone());
            let s = std::mem::replace(&mut stmts[at], placeholder);
            let CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } = s
            else {
                out.push(s);
                continue;
            };
            if !matches!(*init, CStmt::Null(_)) {
                out.push(CStmt::For {
                    init,
                    cond,
                    inc,
                    body,
                    loc,
                });
                continue;
            }
            let counter = step_counter(&inc).map(|r| r.key.clone());
            if let Some(k) = &counter {
                split_declaration(&mut out, k);
            }
            match counter.and_then(|k| movable_init(&out, &k)) {
                Some(at) => {
                    let init = out.remove(at);
                    out.push(CStmt::For {
                        init: Box::new(init),
                        cond,
                        inc,
                        body,
                        loc,
                    });
                }
                None => {
                    // A counter with nothing to start from, counted down in
                    // place: the count-down reading, where nothing after
                    // the loop reads the counter's final 0.
                    let read_later = |key: &str| stmts[at + 1..].iter().any(|s| s.refers_to(key));
                    let stepped = crate::decrement_while::stepped_last(&cond, &inc, &body, &loc)
                        .filter(|_| step_counter(&inc).is_some_and(|r| !read_later(&r.key)));
                    match stepped {
                        Some(pending) => out.push(pending),
                        None if self.initless_fors.contains(&loc) => {
                            self.reject(
                                codes::FOR_SHAPE,
                                &loc,
                                "`for` loop without an initialiser, and no statement before it sets its \
                                 counter where it could move into the loop; give the loop its initialiser",
                            );
                            out.push(CStmt::Rejected(loc));
                        }
                        None => out.push(self.reject_while(&loc, "`while`")),
                    }
                }
            }
        }
        out
    }

    fn reject(&mut self, code: codes::Code, loc: &Loc, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::new(code, Some(loc.clone()), message));
    }

    fn too_deep(&mut self, loc: &Loc) {
        self.too_deep_because(loc, format!("nesting deeper than {MAX_DEPTH} levels"));
    }

    fn too_deep_because(&mut self, loc: &Loc, why: String) {
        if !self.too_deep_reported {
            self.too_deep_reported = true;
            self.reject(codes::TOO_DEEP, loc, why);
        }
    }

    /// Reads a function definition.
    pub fn read_function(&mut self, f: &Cursor<'_>) -> CFunction {
        self.globals.clear();
        self.inline_expansions = 0;
        self.param_keys.clear();
        self.field_layouts.clear();
        self.asserted.clear();
        self.entered.clear();
        let mut params = Vec::new();
        let mut body = Vec::new();
        for child in f.children() {
            match child.kind() {
                sys::CXCursor_ParmDecl => {
                    let param = self.read_var_decl(&child);
                    self.param_keys.insert(param.key.clone());
                    params.push(param);
                }
                sys::CXCursor_CompoundStmt => {
                    // The function body's statements were folded as a
                    // compound's (`fold_while_inits`).
                    if let CStmt::Compound(stmts, _) = self.read_stmt(&child, 0) {
                        body = stmts;
                    }
                }
                _ => {}
            }
        }
        let (start_line, end_line) = f.line_span().unwrap_or((0, 0));
        CFunction {
            name: f.spelling(),
            key: decl_key(f),
            params,
            result: read_type(f.result_type()),
            body,
            loc: loc_of(f),
            start_line,
            end_line,
            globals: std::mem::take(&mut self.globals).into_values().collect(),
            field_layouts: std::mem::take(&mut self.field_layouts),
            asserted: std::mem::take(&mut self.asserted),
            entered: std::mem::take(&mut self.entered),
        }
    }

    /// Records where the field a member expression names lies (for arrays
    /// of structs, `lower::aos`).
    fn note_field_layout(&mut self, member: &Cursor<'_>) {
        // A bit-field is no element of any array (`lower::aos` needs one).
        let Some(field) = member.referenced().filter(|f| !f.is_bit_field()) else {
            return;
        };
        let Some(record) = field.semantic_parent() else {
            return;
        };
        let (Some(offset), Some(record_size)) = (field.field_offset_bytes(), record.ty().size_of())
        else {
            return;
        };
        if let CType::Struct(name) = read_type(record.ty()) {
            let layout = FieldLayout {
                offset,
                record_size,
            };
            self.field_layouts.insert((name, field.spelling()), layout);
        }
    }

    /// Reads a parameter, local or global declaration.
    pub fn read_var_decl(&mut self, c: &Cursor<'_>) -> CVarDecl {
        let init_cursor = c.var_initializer();
        let exprs: Vec<Cursor<'_>> = c
            .children()
            .into_iter()
            .filter(|k| k.is_expression())
            .filter(|k| init_cursor.as_ref().is_none_or(|i| !i.same_as(k)))
            .collect();
        let levels = sized_levels(c.ty());
        let wanted = levels.iter().filter(|&&s| s).count();
        let mut dims = Vec::new();
        if wanted == exprs.len() {
            // libclang visits array sizes innermost first.
            let mut sizes = exprs.iter().rev();
            for sized in &levels {
                dims.push(if *sized {
                    sizes.next().map(|e| self.read_expr(e, 0))
                } else {
                    None
                });
            }
        } else {
            // Sizes hidden behind a typedef: only constant levels are known.
            dims = levels.iter().map(|_| None).collect();
        }
        CVarDecl {
            name: c.spelling(),
            key: decl_key(c),
            ty: read_type(c.ty()),
            dims,
            init: init_cursor.map(|i| self.read_expr(&i, 0)),
            is_static: matches!(c.storage_class(), sys::CX_SC_Static | sys::CX_SC_Extern)
                || c.has_global_storage(),
            loc: loc_of(c),
        }
    }

    fn read_stmt(&mut self, c: &Cursor<'_>, depth: usize) -> CStmt {
        let loc = loc_of(c);
        if depth > MAX_DEPTH {
            self.too_deep(&loc);
            return CStmt::Rejected(loc);
        }
        let children = c.children();
        match c.kind() {
            sys::CXCursor_CompoundStmt => {
                let stmts = children
                    .iter()
                    .map(|s| self.read_stmt(s, depth + 1))
                    .collect();
                self.finish_block(stmts, loc, depth == 0)
            }
            sys::CXCursor_DeclStmt => CStmt::Decl(
                children
                    .iter()
                    .filter(|d| d.kind() == sys::CXCursor_VarDecl)
                    .map(|d| self.read_var_decl(d))
                    .collect(),
                loc,
            ),
            sys::CXCursor_IfStmt => {
                if children.len() < 2 {
                    self.reject(codes::UNSUPPORTED_STATEMENT, &loc, "malformed `if`");
                    return CStmt::Rejected(loc);
                }
                CStmt::If {
                    cond: self.read_expr(&children[0], depth + 1),
                    // Branches and loop bodies count two levels: in the
                    // IR (and its JSON) each is a statement plus a list.
                    then_branch: Box::new(self.read_stmt(&children[1], depth + 2)),
                    else_branch: children
                        .get(2)
                        .map(|e| Box::new(self.read_stmt(e, depth + 2))),
                    loc,
                }
            }
            sys::CXCursor_ForStmt
                if children.len() == 3 && c.tokens().get(2).is_some_and(|t| t == ";") =>
            {
                // `for (; i < n; i++)`: the counter set before the loop
                // (taken from there by `fold_while_inits`, as for a `while`).
                self.initless_fors.push(loc.clone());
                CStmt::For {
                    init: Box::new(CStmt::Null(loc.clone())),
                    cond: self.read_expr(&children[0], depth + 1),
                    inc: self.read_expr(&children[1], depth + 1),
                    body: Box::new(self.read_loop_body(&children[2], depth + 2)),
                    loc,
                }
            }
            sys::CXCursor_ForStmt => {
                if children.len() != 4 {
                    self.reject(
                        codes::FOR_SHAPE,
                        &loc,
                        "`for` loop without an initialiser, a condition and an increment",
                    );
                    return CStmt::Rejected(loc);
                }
                CStmt::For {
                    init: Box::new(self.read_stmt(&children[0], depth + 1)),
                    cond: self.read_expr(&children[1], depth + 1),
                    inc: self.read_expr(&children[2], depth + 1),
                    body: Box::new(self.read_loop_body(&children[3], depth + 2)),
                    loc,
                }
            }
            sys::CXCursor_ReturnStmt => {
                CStmt::Return(children.first().map(|e| self.read_expr(e, depth + 1)), loc)
            }
            sys::CXCursor_NullStmt => CStmt::Null(loc),
            sys::CXCursor_WhileStmt if children.len() == 2 => {
                let cond = self.read_expr(&children[0], depth + 1);
                let body = self.read_loop_body(&children[1], depth + 2);
                if let Some(pending) = crate::decrement_while::count_down(&cond, &body, &loc) {
                    return pending;
                }
                match counted_while(cond, body, &loc) {
                    Some(pending) => pending,
                    None => self.reject_while(&loc, "`while`"),
                }
            }
            sys::CXCursor_DoStmt => match self.read_do_while(c, depth) {
                Some(read) => read,
                None => self.reject_while(&loc, "`do`"),
            },
            sys::CXCursor_WhileStmt => self.reject_while(&loc, "`while`"),
            sys::CXCursor_GotoStmt | sys::CXCursor_IndirectGotoStmt => {
                self.reject(codes::GOTO, &loc, "`goto` is not supported");
                CStmt::Rejected(loc)
            }
            sys::CXCursor_LabelStmt => {
                self.reject(codes::GOTO, &loc, "labels are not supported");
                CStmt::Rejected(loc)
            }
            sys::CXCursor_SwitchStmt => self.read_switch(c, depth),
            sys::CXCursor_BreakStmt => {
                self.reject(codes::BREAK_CONTINUE, &loc, "`break` is not supported");
                CStmt::Rejected(loc)
            }
            sys::CXCursor_ContinueStmt => {
                self.reject(codes::BREAK_CONTINUE, &loc, "`continue` is not supported");
                CStmt::Rejected(loc)
            }
            sys::CXCursor_CallExpr => match self.read_mem_call(c, depth) {
                Some(the_loop) => the_loop,
                None => CStmt::Expr(self.read_expr(c, depth + 1)),
            },
            _ if c.is_expression() => match self.assertion(c) {
                // An assertion computes nothing when it holds: the lifted
                // program assumes it (a stated precondition).
                Some(text) => {
                    if !text.is_empty() {
                        self.asserted.push((text, loc.clone()));
                    }
                    CStmt::Null(loc)
                }
                None => CStmt::Expr(self.read_expr(c, depth + 1)),
            },
            _ => {
                self.reject(
                    codes::UNSUPPORTED_STATEMENT,
                    &loc,
                    format!("unsupported statement ({})", c.kind_name()),
                );
                CStmt::Rejected(loc)
            }
        }
    }

    /// A function whose body is exactly `return expr;`: its parameter keys
    /// and the expression. Anything else is not inlined.
    /// `Err` when the expansion budget is spent (already diagnosed).
    fn read_inline_body(
        &mut self,
        def: &Cursor<'_>,
        depth: usize,
    ) -> Result<Option<InlineBody>, ()> {
        if def.kind() != sys::CXCursor_FunctionDecl {
            return Ok(None);
        }
        let children = def.children();
        let param_decls: Vec<&Cursor<'_>> = children
            .iter()
            .filter(|c| c.kind() == sys::CXCursor_ParmDecl)
            .collect();
        let result = read_type(def.result_type());
        // A `void` helper (darknet's `softmax`, called per group by
        // `softmax_cpu`) is hoisted out of the statement calling it.
        let void = matches!(result, CType::Void);
        if result.scalar().is_none() && !void {
            return Ok(None);
        }
        // A `return expr;` helper takes scalars (a pointer would need
        // aliasing rules of its own); one with statements before its
        // `return` may also take pointers: it is hoisted, each parameter a
        // local set to its argument, so a pointer is a walking pointer.
        let scalar_or_pointer =
            |p: &&Cursor<'_>| matches!(read_type(p.ty()), CType::Scalar(_) | CType::Pointer { .. });
        if !param_decls.iter().all(scalar_or_pointer) {
            return Ok(None);
        }
        let all_scalar = param_decls
            .iter()
            .all(|p| read_type(p.ty()).scalar().is_some());
        let params: Vec<String> = param_decls.iter().map(|p| decl_key(p)).collect();
        let Some(body) = children
            .iter()
            .find(|c| c.kind() == sys::CXCursor_CompoundStmt)
        else {
            return Ok(None);
        };
        let stmts = body.children();
        let Some((ret, _)) = stmts.split_last() else {
            return Ok(None);
        };
        // The last statement is the `return`, or (returns from several
        // places) an `if` every path of which returns; a `void` helper's
        // statements run to their end (a trailing bare `return;` too).
        let (ret, before) = if void {
            let bare_return = ret.kind() == sys::CXCursor_ReturnStmt && ret.children().is_empty();
            (
                None,
                if bare_return {
                    &stmts[..stmts.len() - 1]
                } else {
                    &stmts[..]
                },
            )
        } else if ret.kind() == sys::CXCursor_ReturnStmt {
            (Some(ret), &stmts[..stmts.len() - 1])
        } else if ret.kind() == sys::CXCursor_IfStmt {
            (None, &stmts[..])
        } else {
            return Ok(None);
        };
        if before.is_empty() && (!all_scalar || void) {
            return Ok(None);
        }
        if before.len() > MAX_HELPER_STATEMENTS {
            return Ok(None);
        }
        self.inline_expansions += 1;
        if self.inline_expansions > MAX_INLINE_EXPANSIONS {
            let loc = loc_of(def);
            self.too_deep_because(
                &loc,
                format!("more than {MAX_INLINE_EXPANSIONS} helper calls to inline"),
            );
            return Err(());
        }
        let value = match ret {
            Some(ret) => match ret.children().into_iter().next() {
                Some(value) => Some(value),
                None => return Ok(None),
            },
            None => None,
        };
        let key = decl_key(def);
        if !before.is_empty() && self.helpers_open.contains(&key) {
            return Ok(None);
        }
        self.helpers_open.push(key);
        let read: Vec<CStmt> = before
            .iter()
            .map(|c| self.read_stmt(c, depth + 1))
            .collect();
        let value = value.map(|v| self.read_expr(&v, depth + 1));
        self.helpers_open.pop();
        // Returns from several places: one conditional value.
        let early = read.iter().any(crate::hoist_helpers::returns_early);
        let (read, value) = match value {
            // A `void` helper has no value: the hoisting drops its call.
            None if void && !early => {
                let nothing = CExpr {
                    kind: CExprKind::Int(IntValue::Fits(0)),
                    ty: CType::Void,
                    loc: loc_of(def),
                };
                (read, nothing)
            }
            None if void => return Ok(None),
            Some(value) if !early => (read, value),
            value => match crate::early_returns::fold_early_returns(read, value) {
                Some(folded) => folded,
                None => return Ok(None),
            },
        };
        if read.is_empty() && !all_scalar {
            return Ok(None);
        }
        let param_decls = param_decls.iter().map(|p| self.read_var_decl(p)).collect();
        Ok(Some(InlineBody {
            params,
            value,
            stmts: read,
            param_decls,
            name: def.spelling(),
            result,
        }))
    }

    fn read_ref(&mut self, c: &Cursor<'_>) -> DeclRef {
        let name = c.spelling();
        let Some(decl) = c.referenced() else {
            return DeclRef {
                key: name.clone(),
                name,
                target: RefTarget::Other,
            };
        };
        let key = decl_key(&decl);
        let target = match decl.kind() {
            sys::CXCursor_ParmDecl => RefTarget::Param,
            sys::CXCursor_VarDecl => {
                if decl.has_global_storage() {
                    let loc = loc_of(&decl);
                    let order = (loc.file.clone(), loc.line, loc.col);
                    if !self.globals.contains_key(&order) {
                        let var = self.read_var_decl(&decl);
                        self.globals.insert(order, var);
                    }
                    RefTarget::Global
                } else {
                    RefTarget::Local
                }
            }
            sys::CXCursor_FunctionDecl => RefTarget::Function,
            sys::CXCursor_EnumConstantDecl => match c.evaluate_int() {
                Some(EvaluatedInt::Signed(v)) => RefTarget::EnumConstant(v),
                Some(EvaluatedInt::Unsigned(v)) => {
                    i64::try_from(v).map_or(RefTarget::Other, RefTarget::EnumConstant)
                }
                None => RefTarget::Other,
            },
            _ => RefTarget::Other,
        };
        DeclRef { name, key, target }
    }

    /// Reads an expression; never recurses deeper than [`MAX_DEPTH`].
    pub fn read_expr(&mut self, c: &Cursor<'_>, depth: usize) -> CExpr {
        let loc = loc_of(c);
        let ty = read_type(c.ty());
        if depth > MAX_DEPTH {
            self.too_deep(&loc);
            return CExpr {
                kind: CExprKind::Rejected,
                ty,
                loc,
            };
        }
        let children = c.children();
        let sub = |this: &mut Reader, i: usize| -> Box<CExpr> {
            Box::new(match children.get(i) {
                Some(k) => this.read_expr(k, depth + 1),
                None => CExpr {
                    kind: CExprKind::Unsupported("missing operand".into()),
                    ty: CType::Void,
                    loc: loc.clone(),
                },
            })
        };
        let kind = match c.kind() {
            sys::CXCursor_IntegerLiteral | sys::CXCursor_CharacterLiteral => {
                match c.evaluate_int() {
                    Some(EvaluatedInt::Signed(v)) => match self.macro_spelling(c, v) {
                        Some(name) => CExprKind::MacroInt { name, value: v },
                        None => CExprKind::Int(IntValue::Fits(v)),
                    },
                    Some(EvaluatedInt::Unsigned(v)) => {
                        CExprKind::Int(i64::try_from(v).map_or(IntValue::TooLarge, IntValue::Fits))
                    }
                    None => CExprKind::Int(IntValue::TooLarge),
                }
            }
            sys::CXCursor_FloatingLiteral => {
                let value = c.evaluate_float().unwrap_or(f64::NAN);
                // Inside a macro the cursor's tokens are the macro's name;
                // then spell the value as the shortest literal that rounds
                // to it in its own type.
                let text = c
                    .tokens()
                    .into_iter()
                    .next()
                    .filter(|t| looks_like_float_literal(t))
                    .unwrap_or_else(|| match ty {
                        CType::Scalar(ScalarType::F32) => format!("{:?}f", value as f32),
                        _ => format!("{value:?}"),
                    });
                CExprKind::Float { value, text }
            }
            sys::CXCursor_DeclRefExpr => CExprKind::Ref(self.read_ref(c)),
            sys::CXCursor_ArraySubscriptExpr => {
                let mut base = sub(self, 0);
                let mut index = sub(self, 1);
                // `i[A]` is legal C: the pointer side is the base.
                if matches!(index.ty, CType::Pointer { .. } | CType::Array { .. }) {
                    std::mem::swap(&mut base, &mut index);
                }
                CExprKind::Subscript { base, index }
            }
            sys::CXCursor_BinaryOperator | sys::CXCursor_CompoundAssignOperator => {
                CExprKind::Binary {
                    op: binary_op(c.binary_operator()),
                    lhs: sub(self, 0),
                    rhs: sub(self, 1),
                }
            }
            sys::CXCursor_UnaryOperator => CExprKind::Unary {
                op: unary_op(c.unary_operator()),
                arg: sub(self, 0),
            },
            sys::CXCursor_UnexposedExpr if children.len() == 1 => CExprKind::Implicit(sub(self, 0)),
            sys::CXCursor_CStyleCastExpr => {
                let last = children
                    .iter()
                    .rposition(|k| k.is_expression())
                    .unwrap_or(usize::MAX);
                CExprKind::Cast(sub(self, last))
            }
            sys::CXCursor_ParenExpr => CExprKind::Paren(sub(self, 0)),
            sys::CXCursor_ConditionalOperator => CExprKind::Conditional {
                cond: sub(self, 0),
                then_value: sub(self, 1),
                else_value: sub(self, 2),
            },
            sys::CXCursor_CallExpr => {
                let callee = c.referenced().map(|d| DeclRef {
                    name: d.spelling(),
                    key: decl_key(&d),
                    target: match d.kind() {
                        sys::CXCursor_FunctionDecl => RefTarget::Function,
                        _ => RefTarget::Other,
                    },
                });
                let args = (1..children.len()).map(|i| *sub(self, i)).collect();
                let definition = c.referenced().and_then(|d| d.definition());
                match definition.map(|def| self.read_inline_body(&def, depth + 1)) {
                    Some(Err(())) => CExprKind::Rejected,
                    Some(Ok(inline)) => CExprKind::Call {
                        callee,
                        args,
                        inline: inline.map(Box::new),
                    },
                    None => CExprKind::Call {
                        callee,
                        args,
                        inline: None,
                    },
                }
            }
            sys::CXCursor_MemberRefExpr => match children.first() {
                Some(_) => {
                    self.note_field_layout(c);
                    CExprKind::Member {
                        base: sub(self, 0),
                        field: c.spelling(),
                    }
                }
                None => CExprKind::Unsupported("member access without a base".into()),
            },
            sys::CXCursor_UnaryExpr => CExprKind::Unsupported("sizeof".into()),
            _ => CExprKind::Unsupported(c.kind_name()),
        };
        CExpr { kind, ty, loc }
    }
}

impl Default for Reader {
    fn default() -> Self {
        Reader::new()
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_counted_while_takes_its_counter_from_before_unrelated_statements() {
        let body = lowered(
            "void k(const float *x, unsigned n, float *r) {
               unsigned cnt = n;
               float sum = 0.0f;
               while (cnt > 0U) { sum += *x++; cnt--; }
               *r = sum / (float) n;
             }",
        )
        .expect("lifts");
        assert!(
            body.starts_with("sum = 0.0f for cnt in n..0 step -1"),
            "{body}"
        );
    }

    /// A statement between the counter's start and its loop keeps the
    /// start from moving into a `for`; the loop then counts down from the
    /// counter's value where it starts (`while (cnt--)`'s reading), which
    /// is exact however the statements before read it. A parameter
    /// written on the way makes the kernel refused (it is no size).
    #[test]
    fn a_counter_read_on_the_way_counts_down_from_its_value_at_the_loop() {
        for between in ["x[0] = cnt;", "x[cnt] = 0;"] {
            let source = format!(
                "void k(float *x, unsigned n) {{
                   unsigned cnt = n;
                   {between}
                   while (cnt > 0U) {{ x[cnt - 1] = 1; cnt--; }}
                 }}"
            );
            let body = lowered(&source).expect("lowers");
            assert!(
                body.ends_with("for cnt_1 in n - 1..-1 step -1 x[cnt_1] = f32(1)"),
                "{body}"
            );
        }
        let source = "void k(float *x, unsigned n) {
                   unsigned cnt = n;
                   n = 2;
                   while (cnt > 0U) { x[cnt - 1] = 1; cnt--; }
                 }";
        assert!(lowered(source).is_err());
    }
}
