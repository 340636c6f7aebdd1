//! Matches a kernel's parameters with a program's, by name, at concrete
//! sizes: which scalars are pinned sizes, which are data, which arrays both
//! sides share (with the program's shape giving the memory's extent), and
//! what has to be compared at the end.

use std::collections::BTreeMap;

use tenslift_frontend::ir::{self as loop_ir, Kernel, Role};
use tenslift_targets::{Access, DType, ParamKind, Program};

use crate::concrete::dtype_of;
use crate::error::VerifyError;

/// One parameter as both sides see it.
#[derive(Clone, Debug)]
pub(crate) enum Entry {
    /// A size (or any integer scalar the caller pinned): the same constant
    /// on both sides.
    Pinned { name: String, value: i64 },
    /// A data scalar passed by value.
    Scalar { name: String, dtype: DType },
    /// An array: flat memory of `shape` (row-major, the program's view).
    /// `compare` when either side may write it.
    Array {
        name: String,
        dtype: DType,
        shape: Vec<usize>,
        compare: bool,
        in_program: bool,
        /// Whether either side may read the initial contents (false for
        /// a C output that the program declares `out`).
        initial_read: bool,
    },
    /// A C scalar the kernel writes (a global) that the program holds as a
    /// rank-0 array.
    Cell { name: String, dtype: DType },
}

/// The matched interface.
pub(crate) struct Interface {
    pub entries: Vec<Entry>,
    /// The element type of the returned scalar, when both return one.
    pub returns: Option<DType>,
    /// Whether any value is a float (the verdict is then over the reals).
    pub uses_floats: bool,
}

fn mismatch(msg: String) -> VerifyError {
    VerifyError::Interface(msg)
}

fn eval_dims(
    name: &str,
    dims: &[tenslift_targets::Dim],
    sizes: &BTreeMap<String, i64>,
) -> Result<Vec<usize>, VerifyError> {
    dims.iter()
        .map(|d| {
            let v = d.eval(&|s| sizes.get(s).copied()).map_err(|e| match e {
                tenslift_targets::DimError::Unbound(s) => VerifyError::MissingSize(s),
                other => VerifyError::Program(format!("shape of `{name}`: {other}")),
            })?;
            usize::try_from(v)
                .map_err(|_| VerifyError::Program(format!("`{name}` has extent {d} = {v}")))
        })
        .collect()
}

/// Matches `kernel` with `program` at `sizes`.
pub(crate) fn build(
    kernel: &Kernel,
    program: &Program,
    sizes: &BTreeMap<String, i64>,
) -> Result<Interface, VerifyError> {
    let mut entries = Vec::new();
    let mut uses_floats = false;
    for p in &program.params {
        let name = p.name.to_string();
        let c_param = kernel.params.iter().find(|c| c.name == name);
        match &p.kind {
            ParamKind::Size => {
                let value = *sizes
                    .get(&name)
                    .ok_or_else(|| VerifyError::MissingSize(name.clone()))?;
                if let Some(c) = c_param {
                    match &c.kind {
                        loop_ir::ParamKind::Scalar { ty, .. } if !ty.is_float() => {}
                        _ => {
                            return Err(mismatch(format!(
                            "`{name}` is a size in the program but not an integer scalar in the C"
                        )))
                        }
                    }
                }
                entries.push(Entry::Pinned { name, value });
            }
            ParamKind::Scalar(dtype) => {
                let Some(loop_ir::ParamKind::Scalar { ty, .. }) = c_param.map(|c| &c.kind) else {
                    return Err(mismatch(format!(
                        "the program's scalar `{name}` is not a scalar parameter of the C"
                    )));
                };
                if dtype_of(*ty) != Some(*dtype) {
                    return Err(mismatch(format!(
                        "`{name}` is {ty} in the C but {dtype} in the program"
                    )));
                }
                uses_floats |= dtype.is_float();
                match sizes.get(&name) {
                    Some(&value) if !dtype.is_float() => {
                        entries.push(Entry::Pinned { name, value })
                    }
                    _ => entries.push(Entry::Scalar {
                        name,
                        dtype: *dtype,
                    }),
                }
            }
            ParamKind::Array {
                dtype,
                shape,
                access,
            } => {
                uses_floats |= dtype.is_float();
                let shape = eval_dims(&name, shape, sizes)?;
                match c_param.map(|c| (&c.kind, c.role)) {
                    Some((loop_ir::ParamKind::Array(info), role)) => {
                        if dtype_of(info.elem) != Some(*dtype) {
                            return Err(mismatch(format!(
                                "`{name}` holds {} in the C but {dtype} in the program",
                                info.elem
                            )));
                        }
                        entries.push(Entry::Array {
                            name,
                            dtype: *dtype,
                            shape,
                            compare: access.is_written() || role != Role::Input,
                            in_program: true,
                            initial_read: !(role == Role::Output && *access == Access::Out),
                        });
                    }
                    Some((loop_ir::ParamKind::Scalar { ty, .. }, _)) if shape.is_empty() => {
                        if dtype_of(*ty) != Some(*dtype) {
                            return Err(mismatch(format!(
                                "`{name}` is {ty} in the C but {dtype} in the program"
                            )));
                        }
                        entries.push(Entry::Cell {
                            name,
                            dtype: *dtype,
                        });
                    }
                    Some(_) => {
                        return Err(mismatch(format!(
                            "`{name}` is an array in the program but a scalar in the C"
                        )))
                    }
                    None => {
                        return Err(mismatch(format!(
                            "the program's array `{name}` is not a parameter of the C"
                        )))
                    }
                }
            }
        }
    }
    for c in &kernel.params {
        if program.param(&c.name).is_some() {
            continue;
        }
        let name = c.name.clone();
        match &c.kind {
            loop_ir::ParamKind::Scalar { ty, is_size } => {
                if let Some(&value) = sizes.get(&name) {
                    entries.push(Entry::Pinned { name, value });
                } else if *is_size {
                    return Err(VerifyError::MissingSize(name));
                } else if c.role == Role::Input {
                    let dtype = dtype_of(*ty).ok_or_else(|| {
                        mismatch(format!("`{name}` has type {ty}, which TensIR lacks"))
                    })?;
                    uses_floats |= dtype.is_float();
                    entries.push(Entry::Scalar { name, dtype });
                } else {
                    return Err(mismatch(format!(
                        "the C writes the global `{name}`; the program must declare it (a rank-0 `inout` array)"
                    )));
                }
            }
            loop_ir::ParamKind::Array(info) => {
                if c.role != Role::Input {
                    return Err(mismatch(format!(
                        "the C writes `{name}`; the program must declare it as an `out` or `inout` array"
                    )));
                }
                // Read-only and unused by the program: its memory still needs
                // an extent, taken from the C declaration.
                let mut shape = Vec::new();
                for d in &info.dims {
                    let extent = d
                        .as_ref()
                        .and_then(|a| a.eval(&|v| sizes.get(v).copied()))
                        .ok_or_else(|| {
                            mismatch(format!(
                                "`{name}` has no known extent; declare it in the program"
                            ))
                        })?;
                    shape.push(usize::try_from(extent).unwrap_or(0));
                }
                let dtype = dtype_of(info.elem).ok_or_else(|| {
                    mismatch(format!("`{name}` holds {}, which TensIR lacks", info.elem))
                })?;
                uses_floats |= dtype.is_float();
                entries.push(Entry::Array {
                    name,
                    dtype,
                    shape,
                    compare: false,
                    in_program: false,
                    initial_read: true,
                });
            }
        }
    }
    let returns = match (kernel.returns, program.ret) {
        (None, None) => None,
        (Some(c), Some(p)) if dtype_of(c) == Some(p) => {
            uses_floats |= p.is_float();
            Some(p)
        }
        (Some(c), Some(p)) => {
            return Err(mismatch(format!(
                "the C returns {c} but the program returns {p}"
            )))
        }
        (Some(c), None) => {
            return Err(mismatch(format!(
                "the C returns {c}; the program returns nothing"
            )))
        }
        (None, Some(p)) => {
            return Err(mismatch(format!(
                "the program returns {p}; the C returns nothing"
            )))
        }
    };
    Ok(Interface {
        entries,
        returns,
        uses_floats,
    })
}

/// `kernel` with the extent sizes `program` does not take fixed at their
/// declared values ([`Kernel::with_fixed_extents`]): a program written with
/// the literal shapes is checked against the kernel at those shapes.
pub(crate) fn kernel_for_program(kernel: &Kernel, program: &tenslift_targets::Program) -> Kernel {
    let missing: Vec<&str> = kernel
        .params
        .iter()
        .filter(|p| matches!(p.origin, tenslift_frontend::ir::Origin::Extent { .. }))
        .filter(|p| !program.params.iter().any(|q| *q.name == *p.name))
        .map(|p| p.name.as_str())
        .collect();
    kernel.with_fixed_extents(&missing)
}
