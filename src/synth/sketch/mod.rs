//! The sketch families the search tries at every level, beside its
//! arithmetic sketches: each module holds one family (a
//! [`SketchFamily`](crate::synth::search::SketchFamily)), and
//! `synth::registry` lists them in the order the search tries them. The
//! helpers here are the ones several families share: literals of a
//! target's type, the arguments of one function applied in every element,
//! and solving a value that may be a plain constant.
//!
//! Families (TENSORIZE's `where` sketches with density accounting, among
//! others): [`pattern`] (invertible outermost functions), [`constant`] (a
//! literal fill), [`select`] (data-dependent `where`), [`division`] (C
//! integer division and remainder by a tensor), [`split`] (a polynomial
//! plus one opaque application), [`product`] (an integer product with a
//! common factor), [`region`] (two formulas split by a diagonal, solved on
//! their triangles through [`masked`]), [`power`] (a power of a monomial),
//! [`scan`] (a running sum along an axis, its differences as the hole),
//! [`view`] (a leaf read through a strided, reversed or reshaped view),
//! [`window`] (a sliding-window filter with its taps as the hole),
//! [`interleave`] (a vector computed in blocks, its strided parts searched
//! over strided views), [`contraction`] (`einsum(X, ?h)` with the tensor
//! hole solved by coefficient extraction).

pub mod constant;
pub mod contraction;
pub mod division;
pub mod interleave;
mod masked;
pub mod pattern;
pub mod power;
pub mod product;
pub mod region;
pub mod scan;
pub mod select;
pub mod split;
pub mod view;
pub mod window;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use tenslift_targets::{DType, Dim, Expr, Lit};

use crate::algebra::{Func, Rat, Symbol, Tensor, Value};
use crate::spec::tensir::float_literal_value;

/// The per-element cost of one element-wise step, as the search counts it.
fn step_cost(target: &Tensor) -> f64 {
    target.len().max(1) as f64 * 2.0
}

/// The literal of `dtype` equal to `value`, when it has one.
fn literal(value: &Rat, dtype: DType) -> Option<Expr> {
    if dtype.is_int() {
        // Only values the type holds: a literal never wraps.
        if value.wrap_int(dtype.bits(), dtype.is_signed_int()).as_ref() != Some(value) {
            return None;
        }
        Some(Expr::lit(Lit::int(value.to_i64()?, dtype)))
    } else if dtype.is_float() {
        let v = value.to_f64();
        // Only constants the literal denotes exactly: the spec compares
        // exactly, and reads a literal as the shortest decimal that
        // round-trips (`0.1` is 1/10, as in the C source) or as the binary
        // value itself.
        let lit = Lit::float(v, dtype);
        let exact = Rat::from_f64(v).as_ref() == Some(value)
            || float_literal_value(v, dtype).as_ref() == Some(value);
        exact.then(|| Expr::lit(lit))
    } else {
        None
    }
}

/// Whether every element is the same expression.
fn uniform(t: &Tensor) -> Option<&Value> {
    let first = t.elems().first()?;
    t.elems().iter().all(|e| e == first).then_some(first)
}

/// The arguments of `f` in every element, when every element is one
/// application of `f`.
fn args_of_all(target: &Tensor, f: Func) -> Option<Vec<Vec<Value>>> {
    target
        .elems()
        .iter()
        .map(|e| {
            let (g, args) = e.as_atom()?.as_app()?;
            (g == f).then(|| args.to_vec())
        })
        .collect()
}

/// The tensor of argument `i` of each element's application.
fn column(target: &Tensor, args: &[Vec<Value>], i: usize) -> Option<Tensor> {
    let elems: Option<Vec<Value>> = args.iter().map(|a| a.get(i).cloned()).collect();
    Tensor::new(target.shape().to_vec(), elems?).ok()
}

/// The constant term of a polynomial value.
fn constant_term(v: &Value) -> Rat {
    v.terms()
        .iter()
        .find(|t| t.mono.is_one())
        .map_or(Rat::from(0), |t| t.coeff.clone())
}

/// Where each element of a leaf lives (its flat offset), when its elements
/// are distinct input symbols.
fn positions(leaf: &Tensor) -> Option<HashMap<Symbol, usize>> {
    let mut at = HashMap::with_capacity(leaf.len());
    for (offset, e) in leaf.elems().iter().enumerate() {
        let s = e.as_symbol().filter(|s| !s.is_hole())?;
        if at.insert(s, offset).is_some() {
            return None;
        }
    }
    Some(at)
}

/// A position `v` along an axis of length `len` (its dim `len_dim`), as a
/// dim that generalises to other sizes: near the start a constant, near
/// the end an offset from the end (`n - 1`), the end itself `len_dim`.
fn spell(v: usize, len: usize, len_dim: &Dim) -> Dim {
    if v == len {
        len_dim.clone()
    } else if v > len || 2 * v <= len || len_dim.as_const().is_some() {
        Dim::constant(v as i64)
    } else {
        len_dim
            .sub(&Dim::constant((len - v) as i64))
            .unwrap_or_else(|_| Dim::constant(v as i64))
    }
}
