//! Numeric values of a spec on concrete inputs, for checking specs against
//! compiled C.
//!
//! Inputs are `.npy` files, one per parameter, as `scripts/cref.py` writes
//! them: `<param>.npy` holds the whole C buffer (a flat pointer's buffer, a
//! declared array's full extent) and a scalar is a 0-d array. The spec's
//! element `A[i,j]` lives at the flat offset `Σ index[d]·stride[d]` of that
//! buffer: the IR's strides for a `Storage::Flat` view, row-major strides of
//! the extents otherwise. Every output element is evaluated in `f64` with the
//! C integer operations kept exact (see [`crate::algebra::eval`]), then
//! converted to the output's C type; the result is scattered back into a
//! copy of the input buffer of the same name, so an output file has the
//! same shape as the C reference driver's and elements the kernel never
//! writes keep their initial values, as in memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tenslift_frontend::ir::{Kernel, ParamKind, ScalarType, Storage};
use tenslift_targets::dtype::DType;
use tenslift_targets::interp::{Array, Data};
use tenslift_targets::npy::{self, NpyError};
use thiserror::Error;

use super::sizes::{check_sizes, eval_affine};
use super::{Spec, SpecError};
use crate::algebra::{EvalError, Evaluator, Symbol};

/// Why a spec could not be evaluated on the given inputs.
#[derive(Debug, Error)]
pub enum NumericError {
    #[error(transparent)]
    Npy(#[from] NpyError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("{path}: missing input for parameter `{name}`")]
    MissingInput { path: PathBuf, name: String },
    #[error("`{name}`: element {index:?} is at flat offset {offset}, beyond the {len} elements of {path}")]
    BufferTooSmall {
        name: String,
        index: Vec<usize>,
        offset: i64,
        len: usize,
        path: PathBuf,
    },
    #[error("`{name}` has C type {ty}, which .npy files here cannot hold")]
    UnsupportedType { name: String, ty: String },
    #[error("`{name}`{index:?}: {source}")]
    Eval {
        name: String,
        index: Vec<usize>,
        source: EvalError,
    },
    #[error("`{name}`{index:?}: the value {value} is not a finite integer for C type {ty}")]
    NotAnInteger {
        name: String,
        index: Vec<usize>,
        value: f64,
        ty: String,
    },
}

/// The `.npy` element type of a C scalar type.
pub fn dtype_of(ty: ScalarType) -> Option<DType> {
    Some(match ty {
        ScalarType::Bool => DType::Bool,
        ScalarType::I8 => DType::I8,
        ScalarType::U8 => DType::U8,
        ScalarType::I16 => DType::I16,
        ScalarType::U16 => DType::U16,
        ScalarType::I32 => DType::I32,
        ScalarType::U32 => DType::U32,
        ScalarType::I64 => DType::I64,
        ScalarType::F32 => DType::F32,
        ScalarType::F64 => DType::F64,
        ScalarType::U64 => return None,
    })
}

fn values_f64(a: &Array) -> Vec<f64> {
    match &a.data {
        Data::Float(v) => v.clone(),
        Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

/// One array parameter: its buffer as read, and where each logical element
/// lives in it.
struct Buffer {
    file: Array,
    path: PathBuf,
    values: Vec<f64>,
    strides: Vec<i64>,
}

impl Buffer {
    fn offset(&self, name: &str, index: &[usize]) -> Result<usize, NumericError> {
        let offset: i64 = index
            .iter()
            .zip(&self.strides)
            .map(|(&i, &s)| i as i64 * s)
            .sum();
        if offset < 0 || offset as usize >= self.values.len() {
            return Err(NumericError::BufferTooSmall {
                name: name.into(),
                index: index.to_vec(),
                offset,
                len: self.values.len(),
                path: self.path.clone(),
            });
        }
        Ok(offset as usize)
    }
}

fn row_major_strides(extents: &[usize]) -> Vec<i64> {
    let mut strides = vec![1i64; extents.len()];
    for d in (0..extents.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * extents[d + 1] as i64;
    }
    strides
}

/// An evaluated output, ready to be written as `<name>.npy`.
pub struct NumericOutput {
    pub name: String,
    pub array: Array,
}

fn read_npy(dir: &Path, name: &str) -> Result<Option<(PathBuf, Array)>, NumericError> {
    let path = dir.join(format!("{name}.npy"));
    if !path.is_file() {
        return Ok(None);
    }
    let array = npy::read(&path)?;
    Ok(Some((path, array)))
}

/// Evaluates every output of `spec` (computed from `kernel`) on the inputs
/// in `dir`.
pub fn evaluate(
    kernel: &Kernel,
    spec: &Spec,
    dir: &Path,
) -> Result<Vec<NumericOutput>, NumericError> {
    let layout = check_sizes(kernel, &spec.sizes)?;
    let no_iters = HashMap::new();
    let mut buffers: HashMap<String, Buffer> = HashMap::new();
    let mut scalars: HashMap<String, f64> = HashMap::new();
    let read_by_spec = |name: &str| spec.inputs.iter().any(|i| i.name == name);
    for p in &kernel.params {
        if !read_by_spec(&p.name) && spec.output(&p.name).is_none() {
            continue;
        }
        let Some((path, file)) = read_npy(dir, &p.name)? else {
            // An output whose initial contents the spec never reads needs
            // no file; it is then written in the spec's own shape.
            if !read_by_spec(&p.name) {
                continue;
            }
            return Err(NumericError::MissingInput {
                path: dir.to_path_buf(),
                name: p.name.clone(),
            });
        };
        match &p.kind {
            ParamKind::Scalar { .. } => {
                let value = values_f64(&file).first().copied().unwrap_or(f64::NAN);
                scalars.insert(p.name.clone(), value);
            }
            ParamKind::Array(info) => {
                let strides = match &info.storage {
                    // A block-selected array's spec index is physical: the
                    // axes before the selector, then a flat offset.
                    Storage::Flat { strides } => match layout.blocks.get(&p.name) {
                        Some((view, _)) => strides[..view.axis]
                            .iter()
                            .map(|s| eval_affine(s, &no_iters, &spec.sizes, &p.loc))
                            .chain(std::iter::once(Ok(1)))
                            .collect::<Result<Vec<_>, _>>()?,
                        None => strides
                            .iter()
                            .map(|s| eval_affine(s, &no_iters, &spec.sizes, &p.loc))
                            .collect::<Result<Vec<_>, _>>()?,
                    },
                    Storage::Declared | Storage::RowPointers => row_major_strides(
                        layout.extents.get(&p.name).map_or(&[][..], Vec::as_slice),
                    ),
                };
                let values = values_f64(&file);
                buffers.insert(
                    p.name.clone(),
                    Buffer {
                        file,
                        path,
                        values,
                        strides,
                    },
                );
            }
        }
    }
    let lookup_error = std::cell::RefCell::new(None);
    let env = |s: &Symbol| -> Option<f64> {
        if s.index().is_empty() {
            if let Some(v) = scalars.get(s.name()) {
                return Some(*v);
            }
        }
        let buffer = buffers.get(s.name())?;
        let index: Vec<usize> = s.index().iter().map(|&i| i as usize).collect();
        match buffer.offset(s.name(), &index) {
            Ok(offset) => Some(buffer.values[offset]),
            Err(e) => {
                lookup_error.borrow_mut().get_or_insert(e);
                None
            }
        }
    };
    let mut evaluator = Evaluator::new(&env);
    let mut results = Vec::new();
    for out in &spec.outputs {
        let dtype = dtype_of(out.elem).ok_or_else(|| NumericError::UnsupportedType {
            name: out.name.clone(),
            ty: out.elem.name().to_string(),
        })?;
        let mut values = Vec::with_capacity(out.value.len());
        for (offset, e) in out.value.elems().iter().enumerate() {
            let index = out.value.index_of(offset);
            let value = match evaluator.eval(e) {
                Ok(v) => v,
                Err(source) => {
                    if let Some(found) = lookup_error.borrow_mut().take() {
                        return Err(found);
                    }
                    return Err(NumericError::Eval {
                        name: out.name.clone(),
                        index,
                        source,
                    });
                }
            };
            values.push((index, value));
        }
        results.push(NumericOutput {
            name: out.name.clone(),
            array: place(
                &out.name,
                out.elem,
                dtype,
                out.value.shape(),
                values,
                &buffers,
            )?,
        });
    }
    Ok(results)
}

/// Converts evaluated elements to the output's C type and lays them out in
/// the output's buffer (or, without one, in the spec's own shape).
fn place(
    name: &str,
    ty: ScalarType,
    dtype: DType,
    shape: &[usize],
    values: Vec<(Vec<usize>, f64)>,
    buffers: &HashMap<String, Buffer>,
) -> Result<Array, NumericError> {
    let mut ints = Vec::new();
    if !dtype.is_float() {
        for (index, v) in &values {
            // The spec models every C conversion, so an integer output is an
            // integer up to f64 rounding of its intermediate values.
            if !v.is_finite() {
                return Err(NumericError::NotAnInteger {
                    name: name.into(),
                    index: index.clone(),
                    value: *v,
                    ty: ty.name().to_string(),
                });
            }
            ints.push(v.round() as i64);
        }
    }
    let Some(buffer) = buffers.get(name) else {
        let flat: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
        return Ok(if dtype.is_float() {
            Array::from_f64(dtype, shape.to_vec(), flat)
        } else {
            Array::from_i64(dtype, shape.to_vec(), ints)
        });
    };
    let mut offsets = Vec::with_capacity(values.len());
    for (index, _) in &values {
        offsets.push(buffer.offset(name, index)?);
    }
    let file_shape = buffer.file.shape.clone();
    Ok(if dtype.is_float() {
        let mut flat = buffer.values.clone();
        for (offset, (_, v)) in offsets.iter().zip(&values) {
            flat[*offset] = *v;
        }
        Array::from_f64(dtype, file_shape, flat)
    } else {
        let mut flat: Vec<i64> = match &buffer.file.data {
            Data::Int(v) => v.clone(),
            Data::Float(v) => v.iter().map(|&x| x as i64).collect(),
        };
        for (offset, v) in offsets.iter().zip(ints) {
            flat[*offset] = v;
        }
        Array::from_i64(dtype, file_shape, flat)
    })
}

/// Writes each output as `<dir>/<name>.npy` (creating `dir`).
pub fn write_outputs(dir: &Path, outputs: &[NumericOutput]) -> Result<(), NumericError> {
    std::fs::create_dir_all(dir).map_err(|source| {
        NumericError::Npy(NpyError::Io {
            path: dir.display().to_string(),
            source,
        })
    })?;
    for out in outputs {
        npy::write(&dir.join(format!("{}.npy", out.name)), &out.array)?;
    }
    Ok(())
}
