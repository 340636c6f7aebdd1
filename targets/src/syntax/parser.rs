//! Recursive-descent parser from tokens to a checked [`Program`].

use std::collections::HashMap;
use std::sync::Arc;

use super::lexer::{lex, Tok, Token};
use crate::diag::{Diagnostic, Pos};
use crate::dim::Dim;
use crate::dtype::{DType, Lit};
use crate::expr::{Expr, Ty};
use crate::ops::{BinaryOp, EinsumSpec, Op, ReduceKind, SliceItem, UnaryOp};
use crate::program::{
    Access, DeclaredExtent, Guard, Meta, Param, ParamKind, Program, Requirement, Stmt,
};

/// Stack for the parsing thread: recursion is bounded by `MAX_NESTING`, and
/// unoptimized builds use large frames.
const PARSER_STACK_BYTES: usize = 64 << 20;

/// Parses and checks a TensIR program; `file` names the source in
/// diagnostics.
pub fn parse_program(file: &str, text: &str) -> Result<Program, Diagnostic> {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, || parse_on_this_thread(file, text));
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(Diagnostic::new(
                    file,
                    text,
                    Pos { line: 1, col: 1 },
                    "internal error: the parser panicked",
                ))
            }),
            // No thread available: parse here (the nesting bound still holds).
            Err(_) => parse_on_this_thread(file, text),
        }
    })
}

fn parse_on_this_thread(file: &str, text: &str) -> Result<Program, Diagnostic> {
    let tokens = lex(text).map_err(|(pos, msg)| Diagnostic::new(file, text, pos, msg))?;
    let mut p = Parser {
        tokens,
        at: 0,
        env: HashMap::new(),
        depth: 0,
    };
    let (program, stmt_pos) = p
        .program()
        .map_err(|(pos, msg)| Diagnostic::new(file, text, pos, msg))?;
    program.validate().map_err(|e| {
        let pos = e
            .stmt
            .and_then(|i| stmt_pos.get(i).copied())
            .unwrap_or(Pos { line: 1, col: 1 });
        Diagnostic::new(file, text, pos, e.message)
    })?;
    Ok(program)
}

type PResult<T> = Result<T, (Pos, String)>;

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// Types of the names bound so far (parameters, then `let`s).
    env: HashMap<String, Ty>,
    /// Current expression nesting, bounded so input cannot overflow the stack.
    depth: usize,
}

/// Deeper expressions are rejected (use `let`).
const MAX_NESTING: usize = 256;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.at].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.tokens[(self.at + k).min(self.tokens.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.tokens[self.at].pos
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.at].clone();
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
        t
    }

    fn describe(tok: &Tok) -> String {
        match tok {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Number(s) => format!("number `{s}`"),
            Tok::Str(_) => "a string".to_string(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "end of file".to_string(),
        }
    }

    fn fail<T>(&self, what: &str) -> PResult<T> {
        Err((
            self.pos(),
            format!("expected {what}, found {}", Self::describe(self.peek())),
        ))
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Tok::Punct(q) if *q == p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            self.fail(&format!("`{p}`"))
        }
    }

    fn is_keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == kw)
    }

    fn ident(&mut self, what: &str) -> PResult<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.fail(what),
        }
    }

    fn integer(&mut self) -> PResult<i64> {
        let neg = self.eat("-");
        match self.peek().clone() {
            Tok::Number(s) => match s.parse::<i64>() {
                Ok(v) => {
                    self.bump();
                    Ok(if neg { -v } else { v })
                }
                Err(_) => self.fail("an integer"),
            },
            _ => self.fail("an integer"),
        }
    }

    /// `ext_1000 = 1000 of C[0]` after the keyword `extent`.
    fn declared_extent(&mut self) -> PResult<DeclaredExtent> {
        let name = self.ident("an extent size name")?;
        self.expect("=")?;
        let value = self.integer()?;
        if !self.is_keyword("of") {
            return self.fail("`of`");
        }
        self.bump();
        let array = self.ident("an array name")?;
        self.expect("[")?;
        let dim = self.integer()?;
        self.expect("]")?;
        let Ok(dim) = usize::try_from(dim) else {
            return self.fail("an axis number");
        };
        Ok(DeclaredExtent {
            name,
            value,
            array,
            dim,
        })
    }

    /// `"cond" store "a" "v" … return "v"` after the keyword `guard`.
    fn guard(&mut self) -> PResult<Guard> {
        let cond = self.string("a guard condition")?;
        let mut stores = Vec::new();
        while self.is_keyword("store") {
            self.bump();
            let array = self.string("the array a guard stores into")?;
            stores.push((array, self.string("the literal a guard stores")?));
        }
        let value = if self.is_keyword("return") {
            self.bump();
            Some(self.string("the literal a guard returns")?)
        } else {
            None
        };
        Ok(Guard {
            cond,
            stores,
            value,
        })
    }

    fn program(&mut self) -> PResult<(Program, Vec<Pos>)> {
        let mut meta = Meta::default();
        loop {
            if self.is_keyword("source") {
                self.bump();
                meta.source_file = Some(self.string("a source file name")?);
                if matches!(self.peek(), Tok::Number(_)) {
                    let first = self.line_number()?;
                    self.expect("-")?;
                    let last = self.line_number()?;
                    meta.lines = Some((first, last));
                }
            } else if self.is_keyword("status") {
                self.bump();
                meta.status = self.string("a verification status")?;
            } else if self.is_keyword("requires") {
                self.bump();
                let needed = self.dim()?;
                self.expect("<=")?;
                let declared = self.dim()?;
                meta.requires.push(Requirement { needed, declared });
            } else if self.is_keyword("precondition") {
                self.bump();
                let text = self.string("a precondition")?;
                meta.preconditions.push(text);
            } else if self.is_keyword("extent") {
                self.bump();
                meta.extents.push(self.declared_extent()?);
            } else if self.is_keyword("guard") {
                self.bump();
                meta.guards.push(self.guard()?);
            } else {
                break;
            }
        }
        if !self.is_keyword("func") {
            return self.fail("`func`");
        }
        self.bump();
        let name = self.ident("a function name")?;
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.eat(")") {
            if !params.is_empty() {
                self.expect(",")?;
            }
            params.push(self.param()?);
        }
        let ret = if self.eat("->") {
            Some(self.dtype()?)
        } else {
            None
        };
        self.expect("{")?;
        for p in &params {
            self.env.insert(p.name.to_string(), p.ty());
        }
        let mut stmt_pos = Vec::new();
        let body = self.block(&mut stmt_pos)?;
        if *self.peek() != Tok::Eof {
            return self.fail("end of file");
        }
        let program = Program {
            meta,
            name: Arc::from(name.as_str()),
            params,
            ret,
            body,
        };
        Ok((program, stmt_pos))
    }

    fn string(&mut self, what: &str) -> PResult<String> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.fail(what),
        }
    }

    fn line_number(&mut self) -> PResult<u32> {
        let pos = self.pos();
        let v = self.integer()?;
        u32::try_from(v).map_err(|_| (pos, format!("line number {v} is out of range")))
    }

    fn dtype(&mut self) -> PResult<DType> {
        match self.peek().clone() {
            Tok::Ident(s) => match DType::from_name(&s) {
                Some(d) => {
                    self.bump();
                    Ok(d)
                }
                None => self.fail("an element type (bool, i8..i64, u8..u32, f32, f64)"),
            },
            _ => self.fail("an element type"),
        }
    }

    fn param(&mut self) -> PResult<Param> {
        let name = self.ident("a parameter name")?;
        self.expect(":")?;
        let kind = if self.is_keyword("size") {
            self.bump();
            ParamKind::Size
        } else {
            let access = match self.peek() {
                Tok::Ident(s) if s == "in" => Some(Access::In),
                Tok::Ident(s) if s == "out" => Some(Access::Out),
                Tok::Ident(s) if s == "inout" => Some(Access::InOut),
                _ => None,
            };
            if access.is_some() {
                self.bump();
            }
            let dtype = self.dtype()?;
            if self.eat("[") {
                let shape = self.dims_until("]")?;
                ParamKind::Array {
                    dtype,
                    shape,
                    access: access.unwrap_or(Access::In),
                }
            } else if access.is_some() {
                return self.fail("`[` (arrays with an access mode need a shape)");
            } else {
                ParamKind::Scalar(dtype)
            }
        };
        Ok(Param {
            name: Arc::from(name.as_str()),
            kind,
        })
    }

    /// Comma-separated dims up to the closing token (consumed).
    fn dims_until(&mut self, close: &str) -> PResult<Vec<Dim>> {
        let mut dims = Vec::new();
        while !self.eat(close) {
            if !dims.is_empty() {
                self.expect(",")?;
            }
            dims.push(self.dim()?);
        }
        Ok(dims)
    }

    fn dim(&mut self) -> PResult<Dim> {
        let pos = self.pos();
        let mut acc = self.dim_term()?;
        loop {
            let r = if self.eat("+") {
                let t = self.dim_term()?;
                acc.add(&t)
            } else if self.eat("-") {
                let t = self.dim_term()?;
                acc.sub(&t)
            } else {
                return Ok(acc);
            };
            acc = r.map_err(|e| (pos, e.to_string()))?;
        }
    }

    fn dim_term(&mut self) -> PResult<Dim> {
        let pos = self.pos();
        let mut acc = self.dim_atom()?;
        loop {
            let r = if self.eat("*") {
                let t = self.dim_atom()?;
                acc.mul(&t)
            } else if self.eat("/") {
                let d = self.integer()?;
                acc.floor_div(d)
            } else {
                return Ok(acc);
            };
            acc = r.map_err(|e| (pos, e.to_string()))?;
        }
    }

    fn dim_atom(&mut self) -> PResult<Dim> {
        if self.depth >= MAX_NESTING {
            return Err((self.pos(), "dimension nested too deeply".to_string()));
        }
        if self.eat("(") {
            self.depth += 1;
            let d = self.dim();
            self.depth -= 1;
            let d = d?;
            self.expect(")")?;
            return Ok(d);
        }
        if self.eat("-") {
            let pos = self.pos();
            self.depth += 1;
            let d = self.dim_atom();
            self.depth -= 1;
            let d = d?;
            return Dim::constant(0).sub(&d).map_err(|e| (pos, e.to_string()));
        }
        match self.peek().clone() {
            Tok::Number(_) => Ok(Dim::constant(self.integer()?)),
            Tok::Ident(s) => {
                self.bump();
                Ok(Dim::sym(&s))
            }
            _ => self.fail("a dimension (size parameter or integer)"),
        }
    }

    /// Statements up to `}` (consumed); `stmt_pos` gets each statement's
    /// position in pre-order, the numbering of `ProgramError::stmt`.
    fn block(&mut self, stmt_pos: &mut Vec<Pos>) -> PResult<Vec<Stmt>> {
        let mut body = Vec::new();
        while !self.eat("}") {
            stmt_pos.push(self.pos());
            body.push(self.stmt(stmt_pos)?);
        }
        Ok(body)
    }

    /// `for var in start..stop { body }`; the keyword is already consumed.
    fn for_loop(&mut self, stmt_pos: &mut Vec<Pos>) -> PResult<Stmt> {
        let pos = self.pos();
        let var = self.ident("a loop variable")?;
        if !self.is_keyword("in") {
            return self.fail("`in`");
        }
        self.bump();
        let start = self.dim()?;
        self.expect("..")?;
        let stop = self.dim()?;
        self.expect("{")?;
        if self.env.contains_key(&var) {
            return Err((pos, format!("loop variable `{var}` is already bound")));
        }
        // Body `let`s and the loop variable go out of scope after the loop.
        let outer = self.env.clone();
        self.env.insert(var.clone(), Ty::scalar(DType::I64));
        let body = self.block(stmt_pos);
        self.env = outer;
        Ok(Stmt::Loop {
            var: Arc::from(var.as_str()),
            start,
            stop,
            body: body?,
        })
    }

    fn stmt(&mut self, stmt_pos: &mut Vec<Pos>) -> PResult<Stmt> {
        if self.is_keyword("for")
            && matches!(self.peek_at(1), Tok::Ident(_))
            && matches!(self.peek_at(2), Tok::Ident(s) if s == "in")
        {
            self.bump();
            if self.depth >= MAX_NESTING {
                return Err((self.pos(), "loops nested too deeply".to_string()));
            }
            self.depth += 1;
            let stmt = self.for_loop(stmt_pos);
            self.depth -= 1;
            return stmt;
        }
        let stmt = if self.is_keyword("let") && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let pos = self.pos();
            let name = self.ident("a name")?;
            self.expect("=")?;
            let value = self.expr()?;
            if self.env.contains_key(&name) {
                return Err((pos, format!("`{name}` is already bound")));
            }
            self.env.insert(name.clone(), value.ty().clone());
            Stmt::Let {
                name: Arc::from(name.as_str()),
                value,
            }
        } else if self.is_keyword("var") && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let pos = self.pos();
            let name = self.ident("a name")?;
            self.expect(":")?;
            let dtype = self.dtype()?;
            self.expect("[")?;
            let ty = Ty::tensor(dtype, self.dims_until("]")?);
            if self.env.contains_key(&name) {
                return Err((pos, format!("`{name}` is already bound")));
            }
            self.env.insert(name.clone(), ty.clone());
            Stmt::Var {
                name: Arc::from(name.as_str()),
                ty,
            }
        } else if self.is_keyword("return")
            && !matches!(self.peek_at(1), Tok::Punct("=") | Tok::Punct("["))
        {
            self.bump();
            Stmt::Return(self.expr()?)
        } else {
            let target = self.ident("a statement (`let`, a store, `for`, or `return`)")?;
            let region = if self.eat("[") {
                Some(self.slice_items()?)
            } else {
                None
            };
            self.expect("=")?;
            let value = self.expr()?;
            Stmt::Store {
                target: Arc::from(target.as_str()),
                region,
                value,
            }
        };
        self.expect(";")?;
        Ok(stmt)
    }

    /// Slice components up to `]` (consumed).
    fn slice_items(&mut self) -> PResult<Vec<SliceItem>> {
        let mut items = Vec::new();
        while !self.eat("]") {
            if !items.is_empty() {
                self.expect(",")?;
            }
            if self.eat(":") {
                items.push(SliceItem::Full);
                continue;
            }
            let start = self.dim()?;
            if self.eat(":") {
                let stop = self.dim()?;
                let step = if self.eat(":") {
                    let pos = self.pos();
                    let s = self.integer()?;
                    if s <= 0 {
                        return Err((pos, format!("slice step {s} must be a positive integer")));
                    }
                    s
                } else {
                    1
                };
                items.push(SliceItem::Range { start, stop, step });
            } else {
                items.push(SliceItem::Index(start));
            }
        }
        Ok(items)
    }

    fn expr(&mut self) -> PResult<Expr> {
        if self.depth >= MAX_NESTING {
            return Err((
                self.pos(),
                format!("expression nested more than {MAX_NESTING} levels deep (use `let`)"),
            ));
        }
        self.depth += 1;
        let e = self.postfix();
        self.depth -= 1;
        e
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        while matches!(self.peek(), Tok::Punct("[")) {
            let pos = self.pos();
            self.bump();
            let items = self.slice_items()?;
            e = Expr::new(Op::Slice(items), vec![e]).map_err(|err| (pos, err.message))?;
        }
        Ok(e)
    }

    fn literal(&mut self, negative: bool) -> PResult<Lit> {
        let pos = self.pos();
        let text = match self.peek().clone() {
            Tok::Number(s) => s,
            Tok::Ident(s) if (s == "true" || s == "false") && !negative => {
                self.bump();
                return Ok(Lit::Bool(s == "true"));
            }
            _ => return self.fail("a literal"),
        };
        self.bump();
        let split = text
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(text.len());
        let (digits, suffix) = text.split_at(split);
        let is_float_text = digits.contains(['.', 'e', 'E']);
        let dtype = if suffix.is_empty() {
            if is_float_text {
                DType::F64
            } else {
                DType::I64
            }
        } else {
            DType::from_name(suffix)
                .filter(|d| *d != DType::Bool)
                .ok_or_else(|| (pos, format!("unknown literal suffix `{suffix}`")))?
        };
        let bad = || (pos, format!("malformed number `{text}`"));
        let lit = if dtype.is_float() {
            let v: f64 = digits.parse().map_err(|_| bad())?;
            Lit::float(if negative { -v } else { v }, dtype)
        } else {
            if is_float_text {
                return Err((
                    pos,
                    format!("`{text}`: an integer type needs an integer value"),
                ));
            }
            let v: i128 = digits.parse().map_err(|_| bad())?;
            let v = if negative { -v } else { v };
            let v = i64::try_from(v).map_err(|_| (pos, format!("`{text}` is out of range")))?;
            Lit::int(v, dtype)
        };
        if !lit.in_range() {
            return Err((pos, format!("literal `{text}` is out of range for {dtype}")));
        }
        Ok(lit)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("-") => {
                self.bump();
                Ok(Expr::lit(self.literal(true)?))
            }
            Tok::Number(_) => Ok(Expr::lit(self.literal(false)?)),
            Tok::Ident(name) if name == "true" || name == "false" => {
                Ok(Expr::lit(self.literal(false)?))
            }
            Tok::Ident(name) => {
                self.bump();
                if self.eat("(") {
                    self.call(&name, pos)
                } else {
                    match self.env.get(&name) {
                        Some(ty) => Ok(Expr::var(&name, ty.clone())),
                        None => Err((pos, format!("`{name}` is not defined"))),
                    }
                }
            }
            _ => self.fail("an expression"),
        }
    }

    /// Positional expression operands up to `)` or a keyword argument.
    fn operands(&mut self) -> PResult<Vec<Expr>> {
        let mut args = Vec::new();
        loop {
            if matches!(self.peek(), Tok::Punct(")")) {
                break;
            }
            if matches!(
                (self.peek(), self.peek_at(1)),
                (Tok::Ident(_), Tok::Punct("="))
            ) {
                break;
            }
            if !args.is_empty() {
                self.expect(",")?;
                if matches!(
                    (self.peek(), self.peek_at(1)),
                    (Tok::Ident(_), Tok::Punct("="))
                ) {
                    break;
                }
            }
            args.push(self.expr()?);
        }
        Ok(args)
    }

    /// `, key=` introducing a keyword argument (the comma is optional when
    /// no positional operand preceded it).
    fn keyword(&mut self, key: &str) -> PResult<()> {
        self.eat(",");
        let k = self.ident(&format!("`{key}=`"))?;
        if k != key {
            return Err((
                self.tokens[self.at - 1].pos,
                format!("expected `{key}=`, found `{k}`"),
            ));
        }
        self.expect("=")
    }

    fn int_list(&mut self) -> PResult<Vec<i64>> {
        self.expect("[")?;
        let mut v = Vec::new();
        while !self.eat("]") {
            if !v.is_empty() {
                self.expect(",")?;
            }
            v.push(self.integer()?);
        }
        Ok(v)
    }

    fn axis_list(&mut self) -> PResult<Vec<usize>> {
        let pos = self.pos();
        self.int_list()?
            .into_iter()
            .map(|a| {
                usize::try_from(a).map_err(|_| (pos, format!("axis {a} must not be negative")))
            })
            .collect()
    }

    fn call(&mut self, name: &str, pos: Pos) -> PResult<Expr> {
        let typed = |r: Result<Expr, crate::expr::TypeError>| r.map_err(|e| (pos, e.message));
        if let Some(u) = UnaryOp::ALL.iter().find(|u| u.name() == name) {
            let args = self.operands()?;
            self.expect(")")?;
            return typed(Expr::new(Op::Unary(*u), args));
        }
        if let Some(b) = BinaryOp::ALL.iter().find(|b| b.name() == name) {
            let args = self.operands()?;
            self.expect(")")?;
            return typed(Expr::new(Op::Binary(*b), args));
        }
        if let Some(kind) = ReduceKind::ALL.iter().find(|k| k.name() == name) {
            let args = self.operands()?;
            let axes = if matches!(self.peek(), Tok::Punct(")")) {
                match args.first() {
                    Some(a) => (0..a.ty().rank()).collect(),
                    None => Vec::new(),
                }
            } else {
                self.keyword("axes")?;
                self.axis_list()?
            };
            self.expect(")")?;
            return typed(Expr::new(Op::Reduce { kind: *kind, axes }, args));
        }
        if let Some(kind) = ReduceKind::ALL.iter().find(|k| k.scan_name() == name) {
            let args = self.operands()?;
            self.keyword("axis")?;
            let apos = self.pos();
            let axis = usize::try_from(self.integer()?)
                .map_err(|_| (apos, "axis must not be negative".to_string()))?;
            self.expect(")")?;
            return typed(Expr::new(Op::Scan { kind: *kind, axis }, args));
        }
        if let Some(op) = crate::ops::trisolve_of_name(name) {
            let args = self.operands()?;
            self.expect(")")?;
            return typed(Expr::new(op, args));
        }
        let op_and_args = match name {
            "where" | "matmul" | "dot" | "outer" | "diag" | "cholesky" | "lu_nopivot"
            | "scatter_add" | "syrk" | "syr2k" | "mirror_lower" => {
                let args = self.operands()?;
                let op = match name {
                    "where" => Op::Where,
                    "scatter_add" => Op::ScatterAdd,
                    "syrk" => Op::Syrk,
                    "syr2k" => Op::Syr2k,
                    "mirror_lower" => Op::MirrorLower,
                    "outer" => Op::Outer,
                    "diag" => Op::Diag,
                    "cholesky" => Op::Cholesky,
                    "lu_nopivot" => Op::LuNoPivot,
                    _ => Op::Matmul,
                };
                (op, args)
            }
            "tensordot" => {
                let args = self.operands()?;
                self.keyword("axes")?;
                self.expect("[")?;
                let lhs_axes = self.axis_list()?;
                self.expect(",")?;
                let rhs_axes = self.axis_list()?;
                self.expect("]")?;
                (Op::Tensordot { lhs_axes, rhs_axes }, args)
            }
            "einsum" => {
                let spec_pos = self.pos();
                let text = self.string("an einsum subscript string")?;
                let spec = EinsumSpec::parse(&text)
                    .ok_or_else(|| (spec_pos, format!("malformed einsum subscript \"{text}\"")))?;
                self.expect(",")?;
                (Op::Einsum(spec), self.operands()?)
            }
            "transpose" => {
                let args = self.operands()?;
                self.keyword("perm")?;
                (Op::Transpose(self.axis_list()?), args)
            }
            "broadcast" | "reshape" | "window" => {
                let args = vec![self.expr()?];
                self.expect(",")?;
                self.expect("[")?;
                let dims = self.dims_until("]")?;
                let op = match name {
                    "reshape" => Op::Reshape(dims),
                    "window" => Op::Window(dims),
                    _ => Op::Broadcast(dims),
                };
                (op, args)
            }
            "flip" => {
                let args = self.operands()?;
                self.keyword("axes")?;
                (Op::Flip(self.axis_list()?), args)
            }
            "concat" => {
                self.expect("[")?;
                let mut args = Vec::new();
                while !self.eat("]") {
                    if !args.is_empty() {
                        self.expect(",")?;
                    }
                    args.push(self.expr()?);
                }
                self.keyword("axis")?;
                let apos = self.pos();
                let axis = usize::try_from(self.integer()?)
                    .map_err(|_| (apos, "axis must not be negative".to_string()))?;
                (Op::Concat { axis }, args)
            }
            "triu" | "tril" => {
                let args = self.operands()?;
                let k = if matches!(self.peek(), Tok::Punct(")")) {
                    0
                } else {
                    self.keyword("k")?;
                    self.integer()?
                };
                (
                    if name == "triu" {
                        Op::Triu(k)
                    } else {
                        Op::Tril(k)
                    },
                    args,
                )
            }
            "full" | "zeros" | "ones" => {
                self.expect("[")?;
                let shape = self.dims_until("]")?;
                self.expect(",")?;
                let value = if name == "full" {
                    let neg = self.eat("-");
                    self.literal(neg)?
                } else {
                    let dtype = self.dtype()?;
                    let one = name == "ones";
                    match dtype {
                        DType::Bool => Lit::Bool(one),
                        d if d.is_float() => Lit::float(if one { 1.0 } else { 0.0 }, d),
                        d => Lit::int(i64::from(one), d),
                    }
                };
                (Op::Full { shape, value }, Vec::new())
            }
            "argmax" | "argmin" => {
                let args = vec![self.expr()?];
                self.expect(",")?;
                self.keyword("axis")?;
                let apos = self.pos();
                let axis = usize::try_from(self.integer()?)
                    .map_err(|_| (apos, "axis must not be negative".to_string()))?;
                self.expect(",")?;
                self.keyword("dtype")?;
                let dtype = self.dtype()?;
                let largest = name == "argmax";
                let last = if matches!(self.peek(), Tok::Punct(")")) {
                    false
                } else {
                    self.keyword("last")?;
                    let lpos = self.pos();
                    match self.ident("`true` or `false`")?.as_str() {
                        "true" => true,
                        "false" => false,
                        other => {
                            return Err((
                                lpos,
                                format!("expected `true` or `false`, found `{other}`"),
                            ))
                        }
                    }
                };
                (
                    Op::ArgExtreme {
                        largest,
                        axis,
                        dtype,
                        last,
                    },
                    args,
                )
            }
            "cast" => {
                let args = vec![self.expr()?];
                self.expect(",")?;
                (Op::Cast(self.dtype()?), args)
            }
            _ => return Err((pos, format!("unknown operation `{name}`"))),
        };
        self.expect(")")?;
        let (op, args) = op_and_args;
        typed(Expr::new(op, args))
    }
}
