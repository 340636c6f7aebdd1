//! A compact builder for loop-IR kernels, for tests and benchmarks that need
//! a [`Kernel`] without going through the C frontend.
//!
//! ```
//! use tenslift::spec::build::*;
//! use tenslift_frontend::ir::{Role, ScalarType::F64};
//! // C[i][j] += A[i][k] * B[k][j]
//! let k = KernelBuilder::new("mm")
//!     .size("n")
//!     .array("A", F64, &["n", "n"], Role::Input)
//!     .array("B", F64, &["n", "n"], Role::Input)
//!     .array("C", F64, &["n", "n"], Role::InOut)
//!     .body(vec![for_("i", "0", "n", vec![for_("j", "0", "n", vec![for_("k", "0", "n", vec![
//!         assign(el("C", &["i", "j"], F64),
//!                add(load("C", &["i", "j"], F64), mul(load("A", &["i", "k"], F64), load("B", &["k", "j"], F64)))),
//!     ])])])])
//!     .build();
//! assert_eq!(k.params.len(), 4);
//! ```
//!
//! # Panics
//! [`aff`] panics on a malformed affine string: the strings are literals in
//! the caller's code, never user input.

use tenslift_frontend::ir::*;

fn here() -> Loc {
    Loc {
        file: "<builder>".into(),
        line: 1,
        col: 1,
    }
}

/// Parses an affine expression such as `0`, `n`, `i+1`, `n-1-i`, `2*i + j`.
pub fn aff(text: &str) -> Affine {
    let mut result = Affine::default();
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut terms: Vec<(i64, String)> = Vec::new();
    let mut current = String::new();
    let mut sign = 1;
    for ch in cleaned.chars() {
        if (ch == '+' || ch == '-') && !current.is_empty() {
            terms.push((sign, std::mem::take(&mut current)));
            sign = if ch == '-' { -1 } else { 1 };
        } else if ch == '-' {
            sign = -sign;
        } else if ch != '+' {
            current.push(ch);
        }
    }
    if !current.is_empty() {
        terms.push((sign, current));
    }
    for (sign, term) in terms {
        let (coeff, var) = match term.split_once('*') {
            Some((c, v)) => (
                c.parse::<i64>()
                    .unwrap_or_else(|_| panic!("bad affine `{text}`")),
                Some(v),
            ),
            None => match term.parse::<i64>() {
                Ok(c) => (c, None),
                Err(_) => (1, Some(term.as_str())),
            },
        };
        match var {
            Some(v) => {
                let entry = result.terms.entry(v.to_string()).or_insert(0);
                *entry += sign * coeff;
            }
            None => result.constant += sign * coeff,
        }
    }
    result.terms.retain(|_, c| *c != 0);
    result
}

fn affs(items: &[&str]) -> Vec<Affine> {
    items.iter().map(|s| aff(s)).collect()
}

/// Builds a [`Kernel`] step by step.
pub struct KernelBuilder {
    kernel: Kernel,
}

impl KernelBuilder {
    pub fn new(name: &str) -> Self {
        KernelBuilder {
            kernel: Kernel {
                name: name.into(),
                range: SourceRange {
                    file: "<builder>".into(),
                    start_line: 1,
                    end_line: 1,
                },
                params: Vec::new(),
                locals: Vec::new(),
                body: Vec::new(),
                returns: None,
                histograms: Vec::new(),
                assumed_set: Vec::new(),
                negative_steps: Vec::new(),
                guards: Vec::new(),
                struct_arrays: Vec::new(),
                asserted: Vec::new(),
                entered: Vec::new(),
                case: None,
            },
        }
    }

    fn param(mut self, name: &str, kind: ParamKind, role: Role) -> Self {
        self.kernel.params.push(Param {
            name: name.into(),
            kind,
            role,
            origin: Origin::Argument,
            loc: here(),
        });
        self
    }

    /// An `int` size parameter.
    pub fn size(self, name: &str) -> Self {
        self.param(
            name,
            ParamKind::Scalar {
                ty: ScalarType::I32,
                is_size: true,
            },
            Role::Input,
        )
    }

    /// A scalar data parameter.
    pub fn scalar(self, name: &str, ty: ScalarType) -> Self {
        self.param(name, ParamKind::Scalar { ty, is_size: false }, Role::Input)
    }

    /// A declared (`double A[n][m]`) array parameter.
    pub fn array(self, name: &str, elem: ScalarType, dims: &[&str], role: Role) -> Self {
        let info = ArrayInfo {
            elem,
            dims: dims.iter().map(|d| Some(aff(d))).collect(),
            storage: Storage::Declared,
        };
        self.param(name, ParamKind::Array(info), role)
    }

    /// A pointer array accessed through strides; `None` dims are written "?".
    pub fn flat_array(
        self,
        name: &str,
        elem: ScalarType,
        dims: &[&str],
        strides: &[&str],
        role: Role,
    ) -> Self {
        let info = ArrayInfo {
            elem,
            dims: dims.iter().map(|d| (*d != "?").then(|| aff(d))).collect(),
            storage: Storage::Flat {
                strides: affs(strides),
            },
        };
        self.param(name, ParamKind::Array(info), role)
    }

    pub fn local_scalar(mut self, name: &str, ty: ScalarType) -> Self {
        self.kernel.locals.push(Local {
            name: name.into(),
            kind: LocalKind::Scalar { ty },
            loc: here(),
        });
        self
    }

    pub fn local_array(mut self, name: &str, elem: ScalarType, dims: &[&str]) -> Self {
        self.kernel.locals.push(Local {
            name: name.into(),
            kind: LocalKind::Array(ArrayInfo {
                elem,
                dims: dims.iter().map(|d| Some(aff(d))).collect(),
                storage: Storage::Declared,
            }),
            loc: here(),
        });
        self
    }

    pub fn returns(mut self, ty: ScalarType) -> Self {
        self.kernel.returns = Some(ty);
        self
    }

    pub fn body(mut self, body: Vec<Stmt>) -> Self {
        self.kernel.body = body;
        self
    }

    pub fn build(self) -> Kernel {
        self.kernel
    }
}

/// `for (iter = start; iter < end; iter++)`.
pub fn for_(iter: &str, start: &str, end: &str, body: Vec<Stmt>) -> Stmt {
    for_step(iter, start, end, 1, body)
}

/// A loop with an explicit step (negative steps count down to `> end`).
pub fn for_step(iter: &str, start: &str, end: &str, step: i64, body: Vec<Stmt>) -> Stmt {
    Stmt::Loop(Loop {
        iter: iter.into(),
        start: aff(start),
        end: aff(end),
        step,
        body,
        loc: here(),
    })
}

pub fn assign(target: LValue, value: Expr) -> Stmt {
    Stmt::Assign {
        target,
        value,
        loc: here(),
    }
}

pub fn if_(kind: IfKind, cond: Expr, then_body: Vec<Stmt>, else_body: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        kind,
        then_body,
        else_body,
        loc: here(),
    }
}

pub fn ret(value: Expr) -> Stmt {
    Stmt::Return { value, loc: here() }
}

/// An array element as an assignment target.
pub fn el(array: &str, index: &[&str], ty: ScalarType) -> LValue {
    LValue::Element {
        array: array.into(),
        index: affs(index),
        ty,
    }
}

/// A scalar as an assignment target.
pub fn sc(name: &str, ty: ScalarType) -> LValue {
    LValue::Scalar {
        name: name.into(),
        ty,
    }
}

pub fn lit(value: i64) -> Expr {
    Expr {
        ty: ScalarType::I32,
        kind: ExprKind::IntLit { value },
    }
}

/// A floating literal as written (`"0.5"`), of type `ty`.
pub fn flit(text: &str, ty: ScalarType) -> Expr {
    Expr {
        ty,
        kind: ExprKind::FloatLit {
            value: text
                .trim_end_matches(['f', 'F'])
                .parse()
                .unwrap_or(f64::NAN),
            text: text.into(),
        },
    }
}

pub fn var(name: &str, class: VarClass, ty: ScalarType) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Var {
            name: name.into(),
            class,
        },
    }
}

/// A loop iterator used as a value.
pub fn it(name: &str) -> Expr {
    var(name, VarClass::Iter, ScalarType::I32)
}

pub fn param(name: &str, ty: ScalarType) -> Expr {
    var(name, VarClass::Param, ty)
}

pub fn local(name: &str, ty: ScalarType) -> Expr {
    var(name, VarClass::Local, ty)
}

pub fn load(array: &str, index: &[&str], ty: ScalarType) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Load {
            array: array.into(),
            index: affs(index),
        },
    }
}

pub fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or) {
        ScalarType::I32
    } else {
        lhs.ty
    };
    Expr {
        ty,
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    }
}

pub fn add(a: Expr, b: Expr) -> Expr {
    binary(BinaryOp::Add, a, b)
}

pub fn sub(a: Expr, b: Expr) -> Expr {
    binary(BinaryOp::Sub, a, b)
}

pub fn mul(a: Expr, b: Expr) -> Expr {
    binary(BinaryOp::Mul, a, b)
}

pub fn div(a: Expr, b: Expr) -> Expr {
    binary(BinaryOp::Div, a, b)
}

pub fn neg(a: Expr) -> Expr {
    Expr {
        ty: a.ty,
        kind: ExprKind::Unary {
            op: UnaryOp::Neg,
            arg: Box::new(a),
        },
    }
}

pub fn select(cond: Expr, then_value: Expr, else_value: Expr) -> Expr {
    Expr {
        ty: then_value.ty,
        kind: ExprKind::Select {
            cond: Box::new(cond),
            then_value: Box::new(then_value),
            else_value: Box::new(else_value),
        },
    }
}

/// A conversion of `arg` to `ty`.
pub fn cast(ty: ScalarType, arg: Expr) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Cast { arg: Box::new(arg) },
    }
}

pub fn call(func: MathFn, args: Vec<Expr>) -> Expr {
    let ty = args.first().map_or(ScalarType::F64, |a| a.ty);
    Expr {
        ty,
        kind: ExprKind::Call { func, args },
    }
}
