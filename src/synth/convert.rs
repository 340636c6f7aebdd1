//! C conversions on a store, read off the spec.
//!
//! A float value stored into an integer array (`c[i] = sum;` with `float
//! sum`, or `q[i] = (int)(x[i] * s)`) is converted by truncation toward
//! zero. The spec shows that conversion as the opaque application
//! `trunc(x)` around every element, and the algebra compares such
//! applications only by their arguments (equal when the arguments are
//! equal), so no sketch over the library can produce one. Like `direct`
//! reads a template off the spec, the store's conversion is read off here:
//! the output is solved as the float values `x` in the type the C converted
//! from, and the found expression is wrapped in TensIR's `cast`, whose C
//! semantics (truncation toward zero) give back `trunc(x)` exactly.

use tenslift_frontend::ir::{ExprKind, Kernel, LValue, ScalarType, Stmt};
use tenslift_targets::{build, DType, Expr};

use super::signature::dtype_of;
use crate::algebra::{Func, Tensor, Value};
use crate::spec::Output;

/// An integer output solved through the float values it converts.
pub struct Peeled {
    /// The output with its elements' conversions removed and the float
    /// element type they were converted from.
    pub output: Output,
    /// The output's own (integer) element type: the found expression's cast.
    pub to: DType,
}

/// The argument of `trunc(x)`, when `value` is exactly that application.
pub fn truncated_argument(value: &Value) -> Option<Value> {
    match value.as_atom().and_then(|a| a.as_app()) {
        Some((Func::Trunc, [arg])) if value == &arg.trunc() => Some(arg.clone()),
        _ => None,
    }
}

/// Every element's truncated argument, when every element is a `trunc`.
pub fn strip_truncation(value: &Tensor) -> Option<Tensor> {
    let elems: Option<Vec<Value>> = value.elems().iter().map(truncated_argument).collect();
    Tensor::new(value.shape().to_vec(), elems?).ok()
}

/// The float type the kernel converts from when it stores into `name` (or
/// returns, for `return`): the argument type of the store's conversion.
/// Double when the stores disagree or none is a plain conversion (the
/// wider type loses nothing the algebra could see).
fn converted_from(kernel: &Kernel, name: &str) -> ScalarType {
    let mut found = Vec::new();
    collect_conversions(&kernel.body, name, &mut found);
    found.sort_by_key(|t| t.bits());
    found.dedup();
    match found.as_slice() {
        [one] => *one,
        _ => ScalarType::F64,
    }
}

fn collect_conversions(body: &[Stmt], name: &str, out: &mut Vec<ScalarType>) {
    for stmt in body {
        match stmt {
            Stmt::Loop(l) => collect_conversions(&l.body, name, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                collect_conversions(then_body, name, out);
                collect_conversions(else_body, name, out);
            }
            Stmt::Assign {
                target: LValue::Element { array, .. },
                value,
                ..
            } if array == name => out.extend(float_argument(value)),
            Stmt::Return { value, .. } if name == "return" => out.extend(float_argument(value)),
            _ => {}
        }
    }
}

fn float_argument(value: &tenslift_frontend::ir::Expr) -> Option<ScalarType> {
    match &value.kind {
        ExprKind::Cast { arg } if arg.ty.is_float() && !value.ty.is_float() => Some(arg.ty),
        _ => None,
    }
}

/// The output solved through its store's conversion, when it is an
/// integer output every element of which truncates a float value.
pub fn peel_store_conversion(kernel: &Kernel, output: &Output) -> Option<Peeled> {
    if output.elem.is_float() || output.elem == ScalarType::Bool {
        return None;
    }
    let inner = strip_truncation(&output.value)?;
    let from = converted_from(kernel, &output.name);
    Some(Peeled {
        output: Output {
            name: output.name.clone(),
            elem: from,
            value: inner,
        },
        to: dtype_of(output.elem),
    })
}

/// `expr` converted to the output's type, as the C store converts it.
pub fn convert_back(peeled: &Peeled, expr: Expr) -> Expr {
    match build::cast(expr.clone(), peeled.to) {
        Ok(cast) => cast,
        Err(_) => expr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::Symbol;

    fn x(i: u32) -> Value {
        Symbol::element("x", &[i]).to_expr()
    }

    #[test]
    fn a_tensor_of_truncations_gives_back_their_arguments() {
        let t = Tensor::from_fn(&[3], |i| x(i[0] as u32).mul(&x(0)).trunc());
        let inner = strip_truncation(&t).expect("every element truncates");
        assert_eq!(inner.elems()[2], x(2).mul(&x(0)));
    }

    #[test]
    fn one_element_that_is_not_a_truncation_keeps_the_output_as_it_is() {
        let t = Tensor::from_fn(&[2], |i| if i[0] == 0 { x(0).trunc() } else { x(1) });
        assert!(strip_truncation(&t).is_none());
        // A truncated integer division is not a float conversion.
        let div = Value::trunc_div(&x(0), &x(1));
        assert!(truncated_argument(&div).is_none());
    }
}
