//! The C's leading guards as the program's (`Meta::guards`; the driver
//! attaches them to what it found): takes the
//! kernel's `KernelGuard`s (loop-IR expressions over scalar parameters and
//! literals, see `tenslift_frontend::lower::guards`) and hands on each as a
//! Python condition with `{param}` placeholders, literals to store and a
//! literal to return, which every Python target checks before its program.
//!
//! The rendering is C's arithmetic exactly on Python's unbounded integers:
//! an unsigned result is reduced modulo `2^bits` (`blockSize - 1U` at 0 is
//! 4294967295, as in C), a conversion to an unsigned type likewise, a
//! float converted to an integer truncates (`int(x)`), an integer
//! converted to a float is `float(x)`; comparisons and `&&`, `||`, `!` are
//! Python's on those values. Signed overflow is undefined in C, and the
//! frontend admits no division, so nothing else can differ.

use tenslift_frontend::ir::{BinaryOp, Expr, ExprKind, KernelGuard, ScalarType, UnaryOp};
use tenslift_targets::program::Guard;

/// One guard as the program states it.
pub fn program_guard(g: &KernelGuard) -> Guard {
    Guard {
        cond: python(&g.cond),
        stores: g
            .stores
            .iter()
            .map(|(array, value)| (array.clone(), python(value)))
            .collect(),
        value: g.value.map(float_literal),
    }
}

/// `e` as a Python expression, parameters as `{name}`.
pub fn python(e: &Expr) -> String {
    match &e.kind {
        ExprKind::IntLit { value } => value.to_string(),
        ExprKind::FloatLit { value, .. } => float_literal(*value),
        ExprKind::Var { name, .. } => format!("{{{name}}}"),
        ExprKind::Unary { op, arg } => match op {
            UnaryOp::Neg => wrapped(e.ty, format!("(-{})", python(arg))),
            UnaryOp::Not => format!("(not {})", python(arg)),
        },
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (python(lhs), python(rhs));
            match op {
                BinaryOp::And => format!("({a} and {b})"),
                BinaryOp::Or => format!("({a} or {b})"),
                _ => wrapped(e.ty, format!("({a} {} {b})", op.symbol())),
            }
        }
        ExprKind::Cast { arg } => converted(arg, e.ty),
        // The frontend keeps no guard that reads these (`scalar_params_only`).
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => format!(
            "({} if {} else {})",
            python(then_value),
            python(cond),
            python(else_value)
        ),
        ExprKind::Load { .. } | ExprKind::Call { .. } => "None".to_string(),
    }
}

/// `arg` converted to `to` as C converts it.
fn converted(arg: &Expr, to: ScalarType) -> String {
    // A literal the type holds converts to itself (`1U`, `(float)0`).
    if let ExprKind::IntLit { value } = arg.kind {
        let fits =
            to.is_float() || to.is_signed() || (value >= 0 && value < 1i64 << to.bits().min(62));
        if fits && to != ScalarType::Bool {
            return match to.is_float() {
                true => float_literal(value as f64),
                false => value.to_string(),
            };
        }
    }
    let inner = python(arg);
    match (arg.ty.is_float(), to.is_float()) {
        (true, true) => inner,
        (false, true) => format!("float({inner})"),
        (true, false) if to == ScalarType::Bool => format!("({inner} != 0)"),
        (true, false) => wrapped(to, format!("int({inner})")),
        (false, false) => wrapped(to, inner),
    }
}

/// `value` of type `ty`: an unsigned integer's reduced modulo `2^bits`.
fn wrapped(ty: ScalarType, value: String) -> String {
    if ty.is_float() || ty.is_signed() || ty == ScalarType::Bool {
        value
    } else {
        format!("({value} % {})", 1u128 << ty.bits())
    }
}

/// A float literal Python reads back exactly (`0.0`, `1e-05`).
fn float_literal(v: f64) -> String {
    let text = format!("{v:?}");
    if text.contains(['.', 'e', 'n', 'i']) {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guards of the one kernel of `source`, rendered.
    fn guards_of(source: &str) -> Vec<Guard> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("k.c");
        std::fs::write(&path, source).expect("write C");
        let options = tenslift_frontend::Options::default();
        let tu = tenslift_frontend::extract(path.to_str().expect("utf-8"), &options)
            .unwrap_or_else(|e| panic!("{e:?}"));
        tu.kernels[0].guards.iter().map(program_guard).collect()
    }

    #[test]
    fn unsigned_arithmetic_wraps_as_in_c_and_literals_stay_plain() {
        let g = guards_of(
            "void f(unsigned n, float a, float *y, float *r) {\n\
               if (n - 1U < 4U) { *r = 0; return; }\n\
               for (unsigned i = 0; i < n; i++) y[i] = a;\n\
               r[0] = 1;\n\
             }",
        );
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].cond, "((({n} - 1) % 4294967296) < 4)");
        assert_eq!(g[0].stores, [("r".to_string(), "0.0".to_string())]);
        assert_eq!(g[0].value, None);
    }

    #[test]
    fn float_literals_read_back_exactly() {
        assert_eq!(float_literal(0.0), "0.0");
        assert_eq!(float_literal(-1.0), "-1.0");
        assert_eq!(float_literal(1e-5), "1e-5");
        assert_eq!(float_literal(0.1), "0.1");
    }
}
