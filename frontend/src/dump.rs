//! The readable text form of the loop IR (`tenslift extract` without
//! `--json`). The format is stable (snapshot-tested):
//!
//! ```text
//! file tests/fixtures/extract/positive/gemm_flat_lda.c
//!
//! kernel sgemm_nn (tests/fixtures/extract/positive/gemm_flat_lda.c:2-11)
//!   param m: i32 size
//!   param alpha: f32
//!   param A: f32[m][lda] input flat(lda, 1)
//!   param C: f32[m][ldc] inout flat(ldc, 1)
//!   local sum: f32
//!   body
//!     for i in 0..m step 1
//!       for j in 0..n step 1
//!         sum = f32(0)
//!         for p in 0..k step 1
//!           sum = (sum + (A[i][p] * B[p][j]):f32):f32
//!         C[i][j] = ((alpha * sum):f32 + (beta * C[i][j]):f32):f32
//! ```
//!
//! Other lines: `global NAME: ...` for globals (scalars also show their
//! role), `local T: f64[3]` for local arrays, `returns f64`, and in bodies
//! `if guard COND` / `if data COND` with an optional `else` at the same
//! indentation, and `return EXPR`.
//!
//! Expressions are fully parenthesised; every operator, select, call and
//! cast shows its C type (`(a + b):f64`, `f64(x)`, `sqrt(x):f32`); integer
//! literals show a type only when it is not `i32`, float literals only when
//! it differs from what the spelling implies (`f` suffix: `f32`, else `f64`).
//! Variables and loads take their types from the declarations above.

use std::fmt::Write as _;

use crate::ir::*;

fn dims(info: &ArrayInfo) -> String {
    info.dims
        .iter()
        .map(|d| match d {
            Some(a) => format!("[{a}]"),
            None => "[?]".to_string(),
        })
        .collect()
}

fn storage(s: &Storage) -> String {
    match s {
        Storage::Declared => "declared".into(),
        Storage::RowPointers => "row_pointers".into(),
        Storage::Flat { strides } => format!(
            "flat({})",
            strides
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn role(r: Role) -> &'static str {
    match r {
        Role::Input => "input",
        Role::Output => "output",
        Role::InOut => "inout",
    }
}

fn index(ix: &[Affine]) -> String {
    ix.iter().map(|a| format!("[{a}]")).collect()
}

/// Renders one expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::IntLit { value } => {
            if e.ty == ScalarType::I32 {
                value.to_string()
            } else {
                format!("{value}:{}", e.ty)
            }
        }
        ExprKind::FloatLit { text, .. } => {
            let implied = if text.ends_with(['f', 'F']) {
                ScalarType::F32
            } else {
                ScalarType::F64
            };
            if e.ty == implied {
                text.clone()
            } else {
                format!("{text}:{}", e.ty)
            }
        }
        ExprKind::Var { name, .. } => name.clone(),
        ExprKind::Load { array, index: ix } => format!("{array}{}", index(ix)),
        ExprKind::Unary { op, arg } => {
            let sym = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
            };
            format!("({sym}{}):{}", expr(arg), e.ty)
        }
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {}):{}", expr(lhs), op.symbol(), expr(rhs), e.ty)
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => format!(
            "({} ? {} : {}):{}",
            expr(cond),
            expr(then_value),
            expr(else_value),
            e.ty
        ),
        ExprKind::Cast { arg } => format!("{}({})", e.ty, expr(arg)),
        ExprKind::Call { func, args } => {
            let name = match func {
                MathFn::Sqrt => "sqrt",
                MathFn::Exp => "exp",
                MathFn::Log => "log",
                MathFn::Abs => "abs",
                MathFn::Pow => "pow",
                MathFn::Max => "max",
                MathFn::Min => "min",
                MathFn::Tanh => "tanh",
                MathFn::Round => "round",
                MathFn::Floor => "floor",
                MathFn::Ceil => "ceil",
                MathFn::Sin => "sin",
                MathFn::Cos => "cos",
                MathFn::Cosh => "cosh",
                MathFn::Sinh => "sinh",
            };
            let args: Vec<String> = args.iter().map(expr).collect();
            format!("{name}({}):{}", args.join(", "), e.ty)
        }
    }
}

fn lvalue(l: &LValue) -> String {
    match l {
        LValue::Scalar { name, .. } => name.clone(),
        LValue::Element {
            array, index: ix, ..
        } => format!("{array}{}", index(ix)),
    }
}

fn stmts(out: &mut String, body: &[Stmt], depth: usize) {
    let pad = "  ".repeat(depth);
    for s in body {
        match s {
            Stmt::Loop(l) => {
                let _ = writeln!(
                    out,
                    "{pad}for {} in {}..{} step {}",
                    l.iter, l.start, l.end, l.step
                );
                stmts(out, &l.body, depth + 1);
            }
            Stmt::Assign { target, value, .. } => {
                let _ = writeln!(out, "{pad}{} = {}", lvalue(target), expr(value));
            }
            Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                ..
            } => {
                let kind = match kind {
                    IfKind::Guard => "guard",
                    IfKind::Data => "data",
                };
                let _ = writeln!(out, "{pad}if {kind} {}", expr(cond));
                stmts(out, then_body, depth + 1);
                if !else_body.is_empty() {
                    let _ = writeln!(out, "{pad}else");
                    stmts(out, else_body, depth + 1);
                }
            }
            Stmt::Return { value, .. } => {
                let _ = writeln!(out, "{pad}return {}", expr(value));
            }
        }
    }
}

/// Renders one kernel.
pub fn kernel(k: &Kernel) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {} ({}:{}-{})",
        k.name, k.range.file, k.range.start_line, k.range.end_line
    );
    for p in &k.params {
        let word = match p.origin {
            Origin::Argument | Origin::Pointee => "param",
            Origin::Global => "global",
            Origin::Macro { .. } => "macro",
            Origin::Extent { .. } => "extent",
            Origin::Field(_) => "field",
        };
        // A struct field says where it lives: `field m_rows = m.rows: i32`.
        let shown = match &p.origin {
            Origin::Field(path) => format!("{} = {}", p.name, path.c_source()),
            _ => p.name.clone(),
        };
        match &p.kind {
            ParamKind::Scalar { ty, is_size } => {
                let mut line = format!("  {word} {shown}: {ty}");
                if *is_size {
                    line.push_str(" size");
                }
                if p.origin == Origin::Global {
                    let _ = write!(line, " {}", role(p.role));
                }
                if p.origin == Origin::Pointee {
                    line.push_str(" by reference");
                }
                if let Origin::Macro { value } | Origin::Extent { value } = &p.origin {
                    let _ = write!(line, " (= {value} in this build)");
                }
                let _ = writeln!(out, "{line}");
            }
            ParamKind::Array(info) => {
                let _ = writeln!(
                    out,
                    "  {word} {shown}: {}{} {} {}",
                    info.elem,
                    dims(info),
                    role(p.role),
                    storage(&info.storage)
                );
            }
        }
    }
    for l in &k.locals {
        match &l.kind {
            LocalKind::Scalar { ty } => {
                let _ = writeln!(out, "  local {}: {ty}", l.name);
            }
            LocalKind::Array(info) => {
                let _ = writeln!(out, "  local {}: {}{}", l.name, info.elem, dims(info));
            }
        }
    }
    if let Some(r) = k.returns {
        let _ = writeln!(out, "  returns {r}");
    }
    for g in &k.guards {
        let mut line = format!("  guard if {}:", expr(&g.cond));
        for (array, value) in &g.stores {
            let _ = write!(line, " {array}[0] = {};", expr(value));
        }
        match g.value {
            Some(v) => {
                let _ = write!(line, " return {v}");
            }
            None => line.push_str(" return"),
        }
        let _ = writeln!(out, "{line}");
    }
    for (name, at) in &k.negative_steps {
        let _ = writeln!(
            out,
            "  positive {name} (negative start at line {})",
            at.line
        );
    }
    if let Some(c) = &k.case {
        let _ = writeln!(out, "  case {} of {}", c.number, c.count);
        for (cond, taken) in &c.path {
            let _ = writeln!(
                out,
                "    {} {}",
                if *taken { "when" } else { "unless" },
                expr(cond)
            );
        }
    }
    let _ = writeln!(out, "  body");
    stmts(&mut out, &k.body, 2);
    out
}

/// Renders a whole translation unit.
pub fn translation_unit(tu: &TranslationUnit) -> String {
    let mut out = format!("file {}\n", tu.file);
    for k in &tu.kernels {
        out.push('\n');
        out.push_str(&kernel(k));
    }
    out
}
