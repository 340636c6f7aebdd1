//! TensIR `var`s of a partial lift in the simulation.
//!
//! A partial lift keeps some C locals as TensIR `var`s (durbin's `alpha`,
//! `beta`, `sum` and `z[N]`, gramschmidt's `nrm`). A `var` with the name,
//! element type and shape of a C local is *paired* with it: the pair joins
//! the state each segment is proved on, like the arrays the C passes in.
//! Every segment starts with the two holding the same (arbitrary) value and
//! must end with them equal, so the simulation's invariant becomes "after
//! every iteration, every array and every paired local equals the C's".
//! At the kernel's start the pair holds an arbitrary common value: the C
//! reads no local before writing it (a C read of an unwritten local has no
//! defined value), so its outputs do not depend on that value, and by the
//! proof neither do the program's.
//!
//! A `var` without a C counterpart is the program's own: every segment is
//! proved for any value it holds on entry and it is never compared, so no
//! segment may depend on what an earlier one left in it.

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Affine, Kernel, LocalKind};
use tenslift_targets::{self as tensir, Access, Dim, Program, Stmt, Ty};

use super::super::{shape, Unsupported};
use crate::concrete::dtype_of;

/// How a kept `var` relates to the C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pairing {
    /// Paired with a C local scalar of the same name.
    Scalar,
    /// Paired with a C local array of the same name and extents.
    Array,
    /// The program's own: arbitrary on every segment's entry.
    Own,
}

#[derive(Clone, Debug)]
pub(super) struct KeptVar {
    pub name: Arc<str>,
    pub ty: Ty,
    pub pairing: Pairing,
}

/// The program's top-level `var`s with their pairing; refused when a `var`
/// has a C local's name but not its type or shape.
pub(super) fn kept_vars(kernel: &Kernel, program: &Program) -> Result<Vec<KeptVar>, Unsupported> {
    program
        .vars()
        .into_iter()
        .map(|(name, ty)| {
            let pairing = match kernel.locals.iter().find(|l| *l.name == **name) {
                None => Pairing::Own,
                Some(local) => pairing(name, ty, &local.kind)?,
            };
            Ok(KeptVar {
                name: name.clone(),
                ty: ty.clone(),
                pairing,
            })
        })
        .collect()
}

fn pairing(name: &str, ty: &Ty, local: &LocalKind) -> Result<Pairing, Unsupported> {
    let mismatch = |what: &str| {
        Unsupported(format!(
            "the program's `var {name}` and the C's local `{name}` differ in {what}"
        ))
    };
    match local {
        LocalKind::Scalar { ty: c } => {
            if dtype_of(*c) != Some(ty.dtype) {
                return Err(mismatch("element type"));
            }
            if !ty.shape.is_empty() {
                return Err(mismatch("shape (a scalar in the C)"));
            }
            Ok(Pairing::Scalar)
        }
        LocalKind::Array(info) => {
            if dtype_of(info.elem) != Some(ty.dtype) {
                return Err(mismatch("element type"));
            }
            let same = info.dims.len() == ty.shape.len()
                && info
                    .dims
                    .iter()
                    .zip(&ty.shape)
                    .all(|(c, t)| c.as_ref().is_some_and(|c| same_extent(c, t)));
            if !same {
                return Err(mismatch("extents"));
            }
            Ok(Pairing::Array)
        }
    }
}

/// Whether a C extent and a TensIR extent are the same: equal constants,
/// or the same single size.
fn same_extent(c: &Affine, t: &Dim) -> bool {
    if c.terms.is_empty() {
        return t.as_const() == Some(c.constant);
    }
    let mut terms = c.terms.iter();
    match (terms.next(), terms.next()) {
        (Some((name, 1)), None) => c.constant == 0 && t.to_string() == *name,
        _ => false,
    }
}

/// Scalars paired with a C local that no segment reads before writing
/// become the program's own: nothing they hold crosses a segment boundary
/// on the C side, so comparing them would only make the proof harder
/// (gramschmidt's `nrm`, set at the top of every iteration, feeds a
/// reduction that the proof relates to the stored `R[k][k]`, not to `nrm`).
pub(super) fn settle(vars: &mut [KeptVar], segments: &[&[loop_ir::Stmt]]) {
    for v in vars.iter_mut() {
        if v.pairing == Pairing::Scalar
            && !segments.iter().any(|c| shape::live_on_entry(c, &v.name))
        {
            v.pairing = Pairing::Own;
        }
    }
}

/// The `var`s as array parameters of a segment's program: paired ones are
/// written and compared with the C at the segment's end, the program's own
/// are only read (never compared).
pub(super) fn as_params(vars: &[KeptVar]) -> Vec<tensir::Param> {
    vars.iter()
        .map(|v| tensir::Param {
            name: v.name.clone(),
            kind: tensir::ParamKind::Array {
                dtype: v.ty.dtype,
                shape: v.ty.shape.clone(),
                access: if v.pairing == Pairing::Own {
                    Access::In
                } else {
                    Access::InOut
                },
            },
        })
        .collect()
}

/// The segment's C kernel with each C local array paired with a `var`
/// made an array parameter: it is state like the arrays the C passes in.
/// Left a local, the proof would read an element the segment does not
/// write off the segment's own writes (sound only for a local that holds
/// nothing on entry, where such a read has no defined value).
pub(super) fn arrays_as_params(kernel: &mut Kernel, vars: &[KeptVar]) {
    let paired = |name: &str| {
        vars.iter()
            .any(|v| v.pairing == Pairing::Array && *v.name == *name)
    };
    let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut kernel.locals)
        .into_iter()
        .partition(|l| paired(&l.name) && matches!(l.kind, LocalKind::Array(_)));
    kernel.locals = kept;
    for l in moved {
        if let LocalKind::Array(info) = l.kind {
            kernel.params.push(loop_ir::Param {
                name: l.name,
                kind: loop_ir::ParamKind::Array(info),
                role: loop_ir::Role::InOut,
                origin: loop_ir::Origin::Argument,
                loc: l.loc,
            });
        }
    }
}

/// The C scalars paired with a `var`: the segment's C side starts with
/// them holding the `var`'s entry value and compares them at its end.
pub(super) fn shared_scalars(vars: &[KeptVar]) -> Vec<String> {
    vars.iter()
        .filter(|v| v.pairing == Pairing::Scalar)
        .map(|v| v.name.to_string())
        .collect()
}

/// The program without its top-level `var` declarations (the segments
/// take the `var`s as parameters instead).
pub(super) fn without_vars(program: &Program) -> Program {
    let mut out = program.clone();
    out.body.retain(|s| !matches!(s, Stmt::Var { .. }));
    out
}

/// The invariant line that says how the `var`s take part.
pub(super) fn invariant(vars: &[KeptVar]) -> Option<String> {
    let names = |p: Pairing| -> Vec<String> {
        vars.iter()
            .filter(|v| v.pairing == p)
            .map(|v| format!("`{}`", v.name))
            .collect()
    };
    let paired: Vec<String> = names(Pairing::Scalar)
        .into_iter()
        .chain(names(Pairing::Array))
        .collect();
    let own = names(Pairing::Own);
    let mut parts = Vec::new();
    if !paired.is_empty() {
        parts.push(format!(
            "the program's locals {} equal the C's locals of the same names wherever the arrays are compared (the C reads no local before writing it)",
            paired.join(", ")
        ));
    }
    if !own.is_empty() {
        parts.push(format!(
            "the program's own locals {} carry nothing between segments (each segment is proved for any value they hold on entry)",
            own.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::DType;

    fn ty(dtype: DType, shape: Vec<Dim>) -> Ty {
        Ty { dtype, shape }
    }

    #[test]
    fn a_scalar_local_pairs_with_a_scalar_var_of_its_type() {
        let local = LocalKind::Scalar {
            ty: tenslift_frontend::ir::ScalarType::F64,
        };
        assert_eq!(
            pairing("nrm", &ty(DType::F64, vec![]), &local).ok(),
            Some(Pairing::Scalar)
        );
        assert!(pairing("nrm", &ty(DType::F32, vec![]), &local).is_err());
        assert!(pairing("nrm", &ty(DType::F64, vec![Dim::constant(3)]), &local).is_err());
    }

    #[test]
    fn an_array_local_pairs_only_at_the_same_extents() {
        let local = |n: i64| {
            LocalKind::Array(tenslift_frontend::ir::ArrayInfo {
                elem: tenslift_frontend::ir::ScalarType::F64,
                dims: vec![Some(Affine::constant(n))],
                storage: tenslift_frontend::ir::Storage::Declared,
            })
        };
        let var = ty(DType::F64, vec![Dim::constant(40)]);
        assert_eq!(pairing("z", &var, &local(40)).ok(), Some(Pairing::Array));
        assert!(pairing("z", &var, &local(41)).is_err());
    }
}
