//! The TensIR signature of a C kernel: parameters in C order with types
//! whose dims are the frontend's extents, and the views a search may read.
//!
//! A flat pointer with a leading dimension (`A[i*lda + k]`) is the array
//! `A: f32[m, lda]`; the search reads it through `A[:, 0:n]` for each other
//! size parameter `n` (the golden programs' convention).

use std::sync::Arc;

use tenslift_frontend::ir::{Affine, Kernel, ParamKind as CParam, Role, ScalarType, Storage};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{Access, DType, Dim, Param, ParamKind};

use super::SynthError;

/// The TensIR element type of a C scalar type.
pub fn dtype_of(t: ScalarType) -> DType {
    match t {
        ScalarType::Bool => DType::Bool,
        ScalarType::I8 => DType::I8,
        ScalarType::U8 => DType::U8,
        ScalarType::I16 => DType::I16,
        ScalarType::U16 => DType::U16,
        ScalarType::I32 => DType::I32,
        ScalarType::U32 => DType::U32,
        // TensIR has no u64: sizes and indices fit i64 in every corpus kernel.
        ScalarType::I64 | ScalarType::U64 => DType::I64,
        ScalarType::F32 => DType::F32,
        ScalarType::F64 => DType::F64,
    }
}

/// A symbolic dim from an affine extent.
fn dim_of(a: &Affine) -> Result<Dim, SynthError> {
    let bad = |e: tenslift_targets::dim::DimError| SynthError::Signature(e.to_string());
    let mut d = Dim::constant(a.constant);
    for (name, coeff) in &a.terms {
        let term = Dim::sym(name).mul(&Dim::constant(*coeff)).map_err(bad)?;
        d = d.add(&term).map_err(bad)?;
    }
    Ok(d)
}

/// The kernel's parameters as TensIR parameters, in C order.
pub fn params_of(kernel: &Kernel) -> Result<Vec<Param>, SynthError> {
    let mut params = Vec::new();
    for p in &kernel.params {
        let kind = match &p.kind {
            CParam::Scalar { is_size: true, .. } => ParamKind::Size,
            CParam::Scalar { ty, .. } => ParamKind::Scalar(dtype_of(*ty)),
            CParam::Array(info) => {
                let mut shape = Vec::new();
                for (axis, d) in info.dims.iter().enumerate() {
                    let d = d.as_ref().ok_or_else(|| {
                        SynthError::Signature(format!("extent {axis} of `{}` is unknown", p.name))
                    })?;
                    shape.push(dim_of(d)?);
                }
                let access = match p.role {
                    Role::Input => Access::In,
                    Role::Output => Access::Out,
                    Role::InOut => Access::InOut,
                };
                ParamKind::Array {
                    dtype: dtype_of(info.elem),
                    shape,
                    access,
                }
            }
        };
        params.push(Param {
            name: Arc::from(p.name.as_str()),
            kind,
        });
    }
    Ok(params)
}

/// The regions an array may be read or written through: the whole array,
/// and for a 2-D flat array whose rows are a leading dimension `lda`,
/// `[:, 0:s]` for every other size parameter `s`.
pub fn views_of(kernel: &Kernel, name: &str) -> Vec<Option<Vec<SliceItem>>> {
    let mut views = vec![None];
    let Some(p) = kernel.params.iter().find(|p| p.name == name) else {
        return views;
    };
    let CParam::Array(info) = &p.kind else {
        return views;
    };
    let Storage::Flat { strides } = &info.storage else {
        return views;
    };
    if strides.len() != 2 {
        return views;
    }
    let Some(Some(inner)) = info.dims.get(1) else {
        return views;
    };
    let Some((lda, 1)) = inner.terms.iter().next().map(|(k, v)| (k.clone(), *v)) else {
        return views;
    };
    if inner.terms.len() != 1 || inner.constant != 0 {
        return views;
    }
    for q in &kernel.params {
        if matches!(q.kind, CParam::Scalar { is_size: true, .. }) && q.name != lda {
            views.push(Some(vec![
                SliceItem::Full,
                SliceItem::Range {
                    start: Dim::constant(0),
                    stop: Dim::sym(&q.name),
                    step: 1,
                },
            ]));
        }
    }
    views
}
