//! Histogram writes: `h[x[i]] += v`, `h[x[i]]++` and `++h[x[i]]`, where
//! the subscript of `h` is read from memory. Elsewhere such a subscript is
//! refused (TL021); this one idiom is lowered to a loop over the bins that
//! adds `v` to the bin the index selects,
//!
//! ```text
//! for (bin = 0; bin < bins; bin++) if (x[i] == bin) h[bin] = h[bin] + v;
//! ```
//!
//! which is the C statement whenever `0 <= x[i] < bins` (C writes outside
//! `h` otherwise), and which the spec, the verifier and the synthesizer
//! represent like any other data-dependent `if`. The range of the bins is
//! the index's type (`unsigned char`: 256 bins) or the declared extent of
//! `h` (`float h[nbins]`); in the latter case the range is a precondition on
//! the caller's data that [`Kernel::preconditions`] states
//! ([`Kernel::histograms`]).

use super::{strip, Binding, FlatAccess, Lowerer, FLAT_MARKER};
use crate::affine::{NotAffine, Poly};
use crate::diagnostics as codes;
use crate::ir::*;
use crate::syntax::*;
use crate::types::usual_arithmetic;

/// The most bins an index type may stand for (`unsigned char`): the spec
/// traces every bin, so a 16-bit index type's 65536 are too many.
const MAX_TYPE_BINS: i64 = 256;

impl Lowerer<'_> {
    /// Lowers `lhs += value` (`value` `None` for `++`) when `lhs` is a
    /// histogram write, returning whether it was one. Anything else is left
    /// to the ordinary lowering (and its diagnostics).
    pub(super) fn histogram(
        &mut self,
        lhs: &CExpr,
        value: Option<&CExpr>,
        loc: &Loc,
        out: &mut Vec<Stmt>,
    ) -> bool {
        let CExprKind::Subscript { base, index } = &strip(lhs).kind else {
            return false;
        };
        let CExprKind::Ref(r) = &strip(base).kind else {
            return false;
        };
        let Some(Binding::Array {
            name,
            elem,
            ndims: 1,
            flat,
        }) = self.bindings.get(&r.key).cloned()
        else {
            return false;
        };
        if !matches!(self.affine(index), Err(NotAffine::Indirect)) {
            return false;
        }
        let Some(bin_index) = self.expr(index) else {
            return true;
        };
        let Some((bins, precondition)) =
            self.histogram_bins(&name, &bin_index, &c_text(index), &index.loc)
        else {
            return true;
        };
        let v = match value {
            Some(v) => match self.expr(v) {
                Some(v) if !reads_array(&v, &name) => v,
                Some(_) => {
                    self.error(
                        codes::INDIRECT_SUBSCRIPT,
                        &v.loc,
                        format!("histogram `{name}`: the added value reads `{name}` itself"),
                    );
                    return true;
                }
                None => return true,
            },
            None => super::stmt::one(usual_arithmetic(elem, ScalarType::I32)),
        };
        let bin = self.fresh_name("bin");
        let zero = Affine::constant(0);
        self.loop_bounds
            .insert(bin.clone(), (zero.clone(), bins.clone(), 1));
        let slot = if flat {
            let id = self.flat_accesses.len();
            self.flat_accesses.push(FlatAccess {
                array: name.clone(),
                poly: Poly::var(&bin),
                loc: index.loc.clone(),
            });
            Affine::var(format!("{FLAT_MARKER}{id}"))
        } else {
            Affine::var(bin.clone())
        };
        let target = LValue::Element {
            array: name.clone(),
            index: vec![slot],
            ty: elem,
        };
        let sum = self.compound(&target, BinaryOp::Add, v);
        let cond = equals_iterator(bin_index.clone(), &bin);
        let body = vec![Stmt::If {
            cond,
            kind: IfKind::Data,
            then_body: vec![Stmt::Assign {
                target,
                value: sum,
                loc: loc.clone(),
            }],
            else_body: Vec::new(),
            loc: loc.clone(),
        }];
        out.push(Stmt::Loop(Loop {
            iter: bin.clone(),
            start: zero,
            end: bins.clone(),
            step: 1,
            body,
            loc: loc.clone(),
        }));
        self.histograms.push(Histogram {
            target: name,
            bin_iter: bin,
            index: c_text(index),
            bins,
            precondition,
            loc: index.loc.clone(),
        });
        true
    }

    /// How many bins `h` has, and whether the index's range is a
    /// precondition: the index type's range when it fits the declared
    /// extent (or none is declared), else the declared extent.
    fn histogram_bins(
        &mut self,
        h: &str,
        index: &Expr,
        index_text: &str,
        at: &Loc,
    ) -> Option<(Affine, bool)> {
        let declared = self
            .params
            .iter()
            .find(|p| p.name == h)
            .and_then(|p| match &p.kind {
                ParamKind::Array(info) if info.storage == Storage::Declared => info.dims[0].clone(),
                _ => None,
            });
        let by_type = type_bins(index);
        match (by_type, declared) {
            (Some(n), None) => Some((Affine::constant(n), false)),
            (Some(n), Some(d)) if d.as_constant().is_some_and(|c| c >= n) => {
                Some((Affine::constant(n), false))
            }
            (_, Some(d)) => Some((d, true)),
            (None, None) => {
                self.error(
                    codes::INDIRECT_SUBSCRIPT,
                    at,
                    format!(
                        "histogram `{h}[{}]`: the range of its bins is not declared; declare the array with its extent (`{h}[nbins]` as a C99 array parameter) or index it with an `unsigned char`",
                        index_text
                    ),
                );
                None
            }
        }
    }
}

/// The bins an index's own type allows: 256 for an `unsigned char`
/// (through any widening conversions), 2 for a `bool`.
fn type_bins(e: &Expr) -> Option<i64> {
    let mut cur = e;
    while let ExprKind::Cast { arg } = &cur.kind {
        if arg.ty.is_float() || arg.ty.bits() > cur.ty.bits() {
            return None;
        }
        cur = arg;
    }
    match cur.ty {
        ScalarType::Bool => Some(2),
        ScalarType::U8 => Some(MAX_TYPE_BINS),
        _ => None,
    }
}

/// `index == bin` in C's types (`bin` an `int` iterator).
fn equals_iterator(index: Expr, bin: &str) -> Expr {
    let common = usual_arithmetic(index.ty, ScalarType::I32);
    let iter = Expr {
        ty: ScalarType::I32,
        kind: ExprKind::Var {
            name: bin.to_string(),
            class: VarClass::Iter,
        },
    };
    Expr {
        ty: ScalarType::I32,
        kind: ExprKind::Binary {
            op: BinaryOp::Eq,
            lhs: Box::new(super::stmt::cast_to(common, index)),
            rhs: Box::new(super::stmt::cast_to(common, iter)),
        },
    }
}

/// Whether `e` loads from `array`.
fn reads_array(e: &Expr, array: &str) -> bool {
    match &e.kind {
        ExprKind::Load { array: a, .. } => a == array,
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => reads_array(arg, array),
        ExprKind::Binary { lhs, rhs, .. } => reads_array(lhs, array) || reads_array(rhs, array),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => [cond, then_value, else_value]
            .iter()
            .any(|x| reads_array(x, array)),
        ExprKind::Call { args, .. } => args.iter().any(|x| reads_array(x, array)),
        _ => false,
    }
}

/// The index as the C spells it (`bin[i]`, `img[i][j]`), for messages.
pub(super) fn c_text(e: &CExpr) -> String {
    match &strip(e).kind {
        CExprKind::Ref(r) => r.name.clone(),
        CExprKind::Int(IntValue::Fits(v)) => v.to_string(),
        CExprKind::MacroInt { name, .. } => name.clone(),
        CExprKind::Subscript { base, index } => format!("{}[{}]", c_text(base), c_text(index)),
        CExprKind::Binary { op, lhs, rhs } => {
            format!("{} {} {}", c_text(lhs), op_text(op), c_text(rhs))
        }
        CExprKind::Cast(inner) => c_text(inner),
        _ => "...".to_string(),
    }
}

fn op_text(op: &CBinOp) -> &'static str {
    match op {
        CBinOp::Add => "+",
        CBinOp::Sub => "-",
        CBinOp::Mul => "*",
        _ => "?",
    }
}
