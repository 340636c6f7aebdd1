//! Python syntax to npir: evaluates one function's statements over an
//! environment of values, the way Python would, but symbolically (arrays
//! are npir nodes, ints read off shapes are affine forms in the sizes).

use std::collections::{BTreeSet, HashMap};

use tenslift_frontend::diagnostics::Diagnostic;
use tenslift_frontend::ir::{Affine, Loc, ScalarType};

use super::diagnostics::{
    error, BAD_RETURN, NOT_AFFINE, UNDEFINED_NAME, UNSUPPORTED_DTYPE, UNSUPPORTED_EXPRESSION,
    UNSUPPORTED_STATEMENT,
};
use super::ir::{self, aff_add, aff_scale, aff_sub, BinaryFn, Node, UnaryFn, T};
use super::syntax::{ConstKind, ExprKind, PyExpr, PyStmt, StmtKind};

pub type Result<V> = std::result::Result<V, Diagnostic>;

/// A Python value during evaluation.
#[derive(Clone, Debug)]
pub enum Value {
    Tensor(T),
    /// A Python int that is affine in the sizes (`2`, `n - 1`).
    Size(Affine),
    /// A tuple or list.
    Tuple(Vec<Value>),
    /// The `numpy` module.
    Module,
    Str(String),
    None,
    Ellipsis,
    /// `range(start, stop)`.
    Range(Affine, Affine),
    /// `np.float64`, `np.float32`.
    DType(ScalarType),
}

/// What a function returns: one value or a tuple of them.
pub enum Returned {
    One(T),
    Many(Vec<T>),
}

/// Evaluates one function.
pub struct Evaluator<'a> {
    pub file: &'a str,
    /// Names bound to the numpy module (`np`).
    pub numpy_names: Vec<String>,
    pub env: HashMap<String, Value>,
    /// Every name in use (parameters, sizes, loop variables made so far).
    pub taken: BTreeSet<String>,
}

impl<'a> Evaluator<'a> {
    pub fn loc(&self, line: u32, col: u32) -> Loc {
        Loc {
            file: self.file.to_string(),
            line,
            col,
        }
    }

    pub fn at(&self, e: &PyExpr) -> Loc {
        self.loc(e.line, e.col)
    }

    /// A name not in use, starting with `base`; reserved from now on.
    pub fn fresh(&mut self, base: &str) -> String {
        fresh_name(&mut self.taken, base)
    }

    /// Runs the body; the final `return`'s value.
    pub fn run(&mut self, body: &[PyStmt], def: &Loc) -> Result<Returned> {
        for (i, stmt) in body.iter().enumerate() {
            let loc = self.loc(stmt.line, stmt.col);
            let last = i + 1 == body.len();
            match &stmt.kind {
                StmtKind::Return { value: Some(v) } if last => return self.returned(v),
                StmtKind::Return { .. } => {
                    let why = if last {
                        "the function returns nothing"
                    } else {
                        "statements after `return` are not supported"
                    };
                    return Err(error(BAD_RETURN, loc, why));
                }
                StmtKind::Assign { targets, value } => {
                    let v = self.expr(value)?;
                    for t in targets {
                        self.bind(t, v.clone())?;
                    }
                }
                StmtKind::AugAssign { target, op, value } => self.aug_assign(target, op, value)?,
                StmtKind::Expr { value } if i == 0 && is_docstring(value) => {}
                StmtKind::Pass => {}
                StmtKind::Expr { .. } => {
                    return Err(error(
                        UNSUPPORTED_STATEMENT,
                        loc,
                        "an expression statement has no effect on the result",
                    ))
                }
                StmtKind::Other { what } => {
                    return Err(error(
                        UNSUPPORTED_STATEMENT,
                        loc,
                        format!(
                        "`{}` statements are not supported (the function must be straight-line)",
                        what.to_lowercase()
                    ),
                    ))
                }
            }
        }
        Err(error(
            BAD_RETURN,
            def.clone(),
            "the function does not end with `return`",
        ))
    }

    fn returned(&mut self, e: &PyExpr) -> Result<Returned> {
        let loc = self.at(e);
        let array = |v: Value| match v {
            Value::Tensor(t) if t.dtype == ScalarType::Bool => Err(error(
                UNSUPPORTED_DTYPE,
                loc.clone(),
                "returning a boolean array is not supported",
            )),
            Value::Tensor(t) if t.dtype.is_float() => Ok(t),
            Value::Tensor(_) | Value::Size(_) => Err(error(
                UNSUPPORTED_DTYPE,
                loc.clone(),
                "the function must return float arrays or scalars (not Python ints)",
            )),
            _ => Err(error(
                BAD_RETURN,
                loc.clone(),
                "the function must return arrays",
            )),
        };
        match self.expr(e)? {
            Value::Tuple(items) => {
                let tensors = items.into_iter().map(array).collect::<Result<Vec<T>>>()?;
                if tensors.iter().any(|t| t.shape.is_empty()) {
                    return Err(error(
                        BAD_RETURN,
                        loc.clone(),
                        "a returned tuple holds arrays only (return a 0-d value on its own)",
                    ));
                }
                Ok(Returned::Many(tensors))
            }
            v => Ok(Returned::One(array(v)?)),
        }
    }

    /// Binds an assignment target (a name, or a tuple of names unpacked).
    fn bind(&mut self, target: &PyExpr, value: Value) -> Result<()> {
        let loc = self.at(target);
        match (&target.kind, value) {
            (ExprKind::Name { id }, v) => {
                self.env.insert(id.clone(), v);
                Ok(())
            }
            (ExprKind::Tuple { elts } | ExprKind::List { elts }, Value::Tuple(items))
                if elts.len() == items.len() =>
            {
                for (t, v) in elts.iter().zip(items) {
                    self.bind(t, v)?;
                }
                Ok(())
            }
            (ExprKind::Tuple { .. } | ExprKind::List { .. }, _) => Err(error(
                UNSUPPORTED_STATEMENT,
                loc,
                "unpacking needs a tuple of the same length (such as `n, m = A.shape`)",
            )),
            (ExprKind::Subscript { .. } | ExprKind::Attr { .. }, _) => Err(error(
                BAD_RETURN,
                loc,
                "assigning into an array is not supported (NumPy programs here are pure: bind a new name)",
            )),
            _ => Err(error(UNSUPPORTED_STATEMENT, loc, "unsupported assignment target")),
        }
    }

    /// `x += e`: a new value for `x`, unless `x` is (a view of) a parameter,
    /// which NumPy would change in place for the caller.
    fn aug_assign(&mut self, target: &PyExpr, op: &str, value: &PyExpr) -> Result<()> {
        let loc = self.at(target);
        let ExprKind::Name { id } = &target.kind else {
            return Err(error(
                BAD_RETURN,
                loc,
                "augmented assignment into an array element is not supported",
            ));
        };
        let old = self.expr(target)?;
        if let Value::Tensor(t) = &old {
            if views_input(t) {
                return Err(error(
                    BAD_RETURN,
                    loc,
                    format!("`{id} {op}= ...` would change the caller's array in place"),
                ));
            }
        }
        let rhs = self.expr(value)?;
        let new = self.arith(op, old.clone(), rhs, &loc)?;
        if let (Value::Tensor(a), Value::Tensor(b)) = (&old, &new) {
            if a.shape != b.shape {
                return Err(error(
                    ir_shape_code(),
                    loc,
                    format!(
                        "in-place `{op}=` cannot change the shape {} to {}",
                        ir::shape_text(&a.shape),
                        ir::shape_text(&b.shape)
                    ),
                ));
            }
        }
        self.env.insert(id.clone(), new);
        Ok(())
    }

    /// Evaluates an expression.
    pub fn expr(&mut self, e: &PyExpr) -> Result<Value> {
        let loc = self.at(e);
        match &e.kind {
            ExprKind::Name { id } => self.name(id, &loc),
            ExprKind::Const { kind, text } => constant(*kind, text, &loc),
            ExprKind::Attr { value, attr } => self.attribute(value, attr, &loc),
            ExprKind::Call {
                func,
                args,
                keywords,
            } => self.call(func, args, keywords, &loc),
            ExprKind::BinOp { op, left, right } => {
                let (a, b) = (self.expr(left)?, self.expr(right)?);
                self.arith(op, a, b, &loc)
            }
            ExprKind::Unary { op, operand } => {
                let v = self.expr(operand)?;
                self.unary_op(op, v, &loc)
            }
            ExprKind::Compare {
                left,
                ops,
                comparators,
            } => self.compare(left, ops, comparators, &loc),
            ExprKind::Subscript { value, index } => self.subscript(value, index, &loc),
            ExprKind::Tuple { elts } | ExprKind::List { elts } => Ok(Value::Tuple(
                elts.iter().map(|x| self.expr(x)).collect::<Result<_>>()?,
            )),
            ExprKind::Slice { .. } => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc,
                "a slice outside a subscript",
            )),
            ExprKind::ListComp { .. } => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc,
                "a list comprehension is supported only as the argument of np.stack or np.array",
            )),
            ExprKind::Other { what } => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc,
                format!("{} expressions are not supported", describe(what)),
            )),
        }
    }

    fn name(&self, id: &str, loc: &Loc) -> Result<Value> {
        if let Some(v) = self.env.get(id) {
            return Ok(v.clone());
        }
        if self.numpy_names.iter().any(|n| n == id) {
            return Ok(Value::Module);
        }
        Err(error(
            UNDEFINED_NAME,
            loc.clone(),
            format!("name `{id}` is not defined (not a parameter, an earlier assignment or numpy)"),
        ))
    }

    /// The value as an array (Python numbers become weak 0-d arrays).
    pub fn tensor(&self, v: Value, loc: &Loc) -> Result<T> {
        match v {
            Value::Tensor(t) => Ok(t),
            Value::Size(a) => Ok(size_tensor(&a, loc)),
            Value::Tuple(_) => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc.clone(),
                "a tuple or list where an array is expected (use np.stack to build arrays)",
            )),
            _ => Err(error(
                UNSUPPORTED_DTYPE,
                loc.clone(),
                "expected an array or a number",
            )),
        }
    }

    /// Python arithmetic: on sizes it stays affine where it can.
    pub fn arith(&mut self, op: &str, a: Value, b: Value, loc: &Loc) -> Result<Value> {
        if let (Value::Size(x), Value::Size(y)) = (&a, &b) {
            let scaled = |k: &Affine, s: &Affine| k.as_constant().map(|c| aff_scale(s, c));
            let affine = match op {
                "add" => Some(aff_add(x, y)),
                "sub" => Some(aff_sub(x, y)),
                "mul" => scaled(x, y).or_else(|| scaled(y, x)),
                _ => None,
            };
            if let Some(r) = affine {
                return Ok(Value::Size(r));
            }
        }
        let f = match op {
            "add" => BinaryFn::Add,
            "sub" => BinaryFn::Sub,
            "mul" => BinaryFn::Mul,
            "div" => BinaryFn::Div,
            "pow" => BinaryFn::Pow,
            "bitand" => BinaryFn::And,
            "bitor" => BinaryFn::Or,
            "matmul" => {
                let (x, y) = (self.tensor(a, loc)?, self.tensor(b, loc)?);
                return super::calls::matmul(&x, &y, loc).map(Value::Tensor);
            }
            other => {
                return Err(error(
                    UNSUPPORTED_EXPRESSION,
                    loc.clone(),
                    format!("the operator `{}` is not supported", operator_symbol(other)),
                ))
            }
        };
        let (x, y) = (self.tensor(a, loc)?, self.tensor(b, loc)?);
        ir::binary(f, &x, &y, loc).map(Value::Tensor)
    }

    fn unary_op(&mut self, op: &str, v: Value, loc: &Loc) -> Result<Value> {
        match (op, v) {
            ("pos", v) => Ok(v),
            ("neg", Value::Size(a)) => Ok(Value::Size(aff_scale(&a, -1))),
            ("neg", v) => ir::unary(UnaryFn::Neg, &self.tensor(v, loc)?, loc).map(Value::Tensor),
            ("invert", v) => ir::unary(UnaryFn::Not, &self.tensor(v, loc)?, loc).map(Value::Tensor),
            (other, _) => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc.clone(),
                format!("the operator `{}` is not supported", operator_symbol(other)),
            )),
        }
    }

    fn compare(
        &mut self,
        left: &PyExpr,
        ops: &[String],
        comparators: &[PyExpr],
        loc: &Loc,
    ) -> Result<Value> {
        if ops.len() != 1 {
            return Err(error(
                UNSUPPORTED_EXPRESSION,
                loc.clone(),
                "chained comparisons are not supported (combine two with `&`)",
            ));
        }
        let f = match ops[0].as_str() {
            "lt" => BinaryFn::Lt,
            "le" => BinaryFn::Le,
            "gt" => BinaryFn::Gt,
            "ge" => BinaryFn::Ge,
            "eq" => BinaryFn::Eq,
            "ne" => BinaryFn::Ne,
            other => {
                return Err(error(
                    UNSUPPORTED_EXPRESSION,
                    loc.clone(),
                    format!("the comparison `{other}` is not supported"),
                ))
            }
        };
        let a = self.expr(left)?;
        let b = self.expr(&comparators[0])?;
        let (x, y) = (self.tensor(a, loc)?, self.tensor(b, loc)?);
        ir::binary(f, &x, &y, loc).map(Value::Tensor)
    }

    fn attribute(&mut self, value: &PyExpr, attr: &str, loc: &Loc) -> Result<Value> {
        match self.expr(value)? {
            Value::Module => super::calls::module_attribute(attr, loc),
            Value::Tensor(t) => match attr {
                "T" => super::calls::transpose(&t, None, loc).map(Value::Tensor),
                "shape" => Ok(Value::Tuple(
                    t.shape.iter().cloned().map(Value::Size).collect(),
                )),
                "ndim" => Ok(Value::Size(Affine::constant(t.shape.len() as i64))),
                other => Err(error(
                    super::diagnostics::UNKNOWN_FUNCTION,
                    loc.clone(),
                    format!("the array attribute `.{other}` is not supported"),
                )),
            },
            _ => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc.clone(),
                format!("`.{attr}` of something that is neither numpy nor an array"),
            )),
        }
    }

    /// The value of `e` as an affine size (an int, a shape entry).
    pub fn size(&mut self, e: &PyExpr) -> Result<Affine> {
        let loc = self.at(e);
        match self.expr(e)? {
            Value::Size(a) => Ok(a),
            _ => Err(error(
                NOT_AFFINE,
                loc,
                "expected an integer affine in the sizes (a constant, a size, `n - 1`)",
            )),
        }
    }
}

fn ir_shape_code() -> tenslift_frontend::diagnostics::Code {
    super::diagnostics::SHAPE_MISMATCH
}

/// Whether `t` is a parameter or a view of one (writing it in place
/// writes the caller's array).
fn views_input(t: &T) -> bool {
    match &t.node {
        Node::Input(_) => true,
        Node::View(base, _) => views_input(base),
        _ => false,
    }
}

fn is_docstring(e: &PyExpr) -> bool {
    matches!(
        e.kind,
        ExprKind::Const {
            kind: ConstKind::Str,
            ..
        }
    )
}

/// A Python int as a weak 0-d array.
pub fn size_tensor(a: &Affine, loc: &Loc) -> T {
    let n = match a.as_constant() {
        Some(c) => Node::Literal(c.to_string()),
        None => Node::Size(a.clone()),
    };
    ir::node(n, Vec::new(), ScalarType::I64, true, loc)
}

fn constant(kind: ConstKind, text: &str, loc: &Loc) -> Result<Value> {
    match kind {
        ConstKind::Int => text
            .replace('_', "")
            .parse::<i64>()
            .map(|v| Value::Size(Affine::constant(v)))
            .map_err(|_| {
                error(
                    UNSUPPORTED_EXPRESSION,
                    loc.clone(),
                    format!("the integer {text} does not fit in 64 bits"),
                )
            }),
        ConstKind::Float => {
            let t = ir::node(
                Node::Literal(text.replace('_', "")),
                Vec::new(),
                ScalarType::F64,
                true,
                loc,
            );
            Ok(Value::Tensor(t))
        }
        ConstKind::Str => Ok(Value::Str(text.to_string())),
        ConstKind::None => Ok(Value::None),
        ConstKind::Ellipsis => Ok(Value::Ellipsis),
        ConstKind::Bool => Err(error(
            UNSUPPORTED_DTYPE,
            loc.clone(),
            "boolean constants are not supported",
        )),
    }
}

fn operator_symbol(op: &str) -> &str {
    match op {
        "floordiv" => "//",
        "mod" => "%",
        "bitxor" => "^",
        "lshift" => "<<",
        "rshift" => ">>",
        "not" => "not",
        "invert" => "~",
        other => other,
    }
}

/// A Python AST class name as the user knows the construct.
fn describe(what: &str) -> String {
    match what {
        "Lambda" => "lambda".to_string(),
        "GeneratorExp" => "generator".to_string(),
        "IfExp" => "conditional (`a if c else b`)".to_string(),
        "JoinedStr" => "f-string".to_string(),
        "BoolOp" => "`and`/`or` (use `&`/`|` on comparisons)".to_string(),
        "DictComp" | "SetComp" | "Dict" | "Set" => "dict and set".to_string(),
        other => format!("`{other}`"),
    }
}

/// `base0`, `base1`, ...: the first not in `taken`, which then holds it.
pub fn fresh_name(taken: &mut BTreeSet<String>, base: &str) -> String {
    let name = (0..)
        .map(|i| format!("{base}{i}"))
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| base.to_string());
    taken.insert(name.clone());
    name
}
