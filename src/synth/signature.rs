//! The TensIR signature of a C kernel: parameters in C order with types
//! whose dims are the frontend's extents, and the views a search may read.
//!
//! A pointer whose extent the frontend leaves unknown (`float *x` read up
//! to `x[size - 1]`) gets the size expression (`size`, `pos + 1`, the
//! largest index the loops reach plus one: `n_out + n_taps - 1`, `2*n`)
//! that equals its touched range at both size tuples the spec checks.
//!
//! A flat pointer with a leading dimension (`A[i*lda + k]`) is the array
//! `A: f32[m, lda]`; the search reads it through `A[:, 0:n]` for each other
//! size parameter `n` (the golden programs' convention).
//!
//! A declared array whose loops touch a sub-box of its extent (PolyBench's
//! `C[NI + PAD][NJ + PAD]` written for `i < ni`, `j < nj`) is read and
//! written only through `C[0:ni, 0:nj]` ([`crate::spec::region`]).

use std::collections::HashMap;
use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Affine, Kernel, Origin, Role, ScalarType, Storage};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{
    Access, DType, DeclaredExtent, Dim, Expr, Op, Param, ParamKind, Requirement, Stmt,
};

use super::SynthError;
use crate::spec::blocks::{block_view, sole_size_index, BlockView};
use crate::spec::reach;
use crate::spec::region::region_of;
use crate::spec::sizes::{check_sizes, Layout};
use crate::spec::{choose_second_sizes, format_sizes, size_params, Sizes};

/// Extents the frontend left unknown, keyed by (array, axis).
pub type InferredExtents = HashMap<(String, usize), Dim>;

/// Size expressions an unknown extent may be: `s - 1`, `s`, `s + 1` for each
/// size parameter `s`, then a constant. Listed simplest first.
fn extent_candidates(sizes: &[String], first_extent: i64) -> Vec<Dim> {
    let mut out = Vec::new();
    for offset in [0, 1, -1] {
        for s in sizes {
            if let Ok(d) = Dim::sym(s).add(&Dim::constant(offset)) {
                out.push(d);
            }
        }
    }
    out.push(Dim::constant(first_extent));
    out
}

/// `1 +` the largest index each access of `array` reaches on `axis`
/// ([`reach::reaches`]), as size expressions. A guard inside may keep an
/// access below this; the caller keeps only a candidate equal to the
/// touched range at both size tuples.
fn reach_candidates(kernel: &Kernel, array: &str, axis: usize) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::new();
    for r in reach::reaches(kernel, array, axis) {
        if let Ok(d) = dim_of(&r) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

fn extent_at(layout: &Layout, array: &str, axis: usize) -> Option<i64> {
    Some(*layout.extents.get(array)?.get(axis)? as i64)
}

/// For every array extent the frontend left unknown, the size expression
/// equal to the array's touched range at `first` and at the second size
/// tuple; a clear error when none of the candidates fits.
pub fn infer_unknown_extents(
    kernel: &Kernel,
    first: &Sizes,
) -> Result<InferredExtents, SynthError> {
    let unknown = reach::unknown_extents(kernel);
    let mut inferred = InferredExtents::new();
    if unknown.is_empty() {
        return Ok(inferred);
    }
    let spec_error = |e: crate::spec::SpecError| SynthError::Signature(e.to_string());
    let second = choose_second_sizes(kernel, first).map_err(spec_error)?;
    let layouts = [
        (first, check_sizes(kernel, first).map_err(spec_error)?),
        (&second, check_sizes(kernel, &second).map_err(spec_error)?),
    ];
    for (array, axis) in unknown {
        let dim = fitting_extent(kernel, &layouts, &array, axis)?;
        inferred.insert((array, axis), dim);
    }
    Ok(inferred)
}

/// The one size expression equal to `array`'s touched range on `axis` at
/// both size tuples (with their layouts), or why there is none.
fn fitting_extent(
    kernel: &Kernel,
    layouts: &[(&Sizes, Layout); 2],
    array: &str,
    axis: usize,
) -> Result<Dim, SynthError> {
    let names = size_params(kernel);
    let touched: Vec<i64> = layouts
        .iter()
        .map(|(_, l)| extent_at(l, array, axis).unwrap_or(0))
        .collect();
    let fits = |d: &Dim| {
        layouts
            .iter()
            .zip(&touched)
            .all(|((sizes, _), &t)| d.eval(&|n| sizes.get(n).copied()).ok() == Some(t))
    };
    let mut fitting: Vec<Dim> = Vec::new();
    for d in extent_candidates(&names, touched[0])
        .into_iter()
        .chain(reach_candidates(kernel, array, axis))
    {
        if fits(&d) && !fitting.contains(&d) {
            fitting.push(d);
        }
    }
    // An axis only ever indexed by one size parameter `s` (`q[head *
    // head_size + i]` is row `head` of `q[?, head_size]`) is touched up
    // to `s + 1` whatever the sizes: the access pattern decides.
    let fitting = match sole_size_index(kernel, array, axis, &names) {
        Some(s) => match Dim::sym(&s).add(&Dim::constant(1)) {
            Ok(d) if fitting.contains(&d) => vec![d],
            _ => fitting,
        },
        None => fitting,
    };
    // Two size expressions equal at both tuples cannot be told apart by the
    // acceptance check, so picking one could give the program a signature
    // wrong at every other size: refuse instead.
    if let [a, b, ..] = fitting.as_slice() {
        return Err(SynthError::Signature(format!(
            "extent {axis} of `{array}` is unknown to the frontend and ambiguous: \
             `{a}` and `{b}` both equal its touched range at both size tuples"
        )));
    }
    fitting.into_iter().next().ok_or_else(|| {
        let seen: Vec<String> = layouts
            .iter()
            .zip(&touched)
            .map(|((sizes, _), t)| format!("{t} at {}", format_sizes(sizes)))
            .collect();
        SynthError::Signature(format!(
            "extent {axis} of `{array}` is unknown to the frontend and no size expression \
             (a size parameter, plus or minus 1, a constant, or the largest index its \
             loops reach, plus 1) equals its touched range ({})",
            seen.join(", ")
        ))
    })
}

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

/// The extent of a block-selected array's merged axis: the row pitch
/// (`kv_dim`), or for a leading selector `s` the `(s + 1)*block` its
/// accesses reach.
fn merged_extent(view: &BlockView) -> Result<Dim, SynthError> {
    match &view.pitch {
        Some(pitch) => dim_of(pitch),
        None => {
            let bad = |e: tenslift_targets::dim::DimError| SynthError::Signature(e.to_string());
            let rows = Dim::sym(&view.selector)
                .add(&Dim::constant(1))
                .map_err(bad)?;
            rows.mul(&dim_of(&view.block)?).map_err(bad)
        }
    }
}

/// The slice `[s*block:(s + 1)*block]` of a block view's merged axis.
fn block_slice(view: &BlockView) -> Result<SliceItem, SynthError> {
    let bad = |e: tenslift_targets::dim::DimError| SynthError::Signature(e.to_string());
    let block = dim_of(&view.block)?;
    let start = Dim::sym(&view.selector).mul(&block).map_err(bad)?;
    let stop = start.add(&block).map_err(bad)?;
    Ok(SliceItem::Range {
        start,
        stop,
        step: 1,
    })
}

/// The kernel's parameters as TensIR parameters, in C order; unknown
/// extents come from `inferred`.
pub fn params_of(kernel: &Kernel, inferred: &InferredExtents) -> Result<Vec<Param>, SynthError> {
    let mut params = Vec::new();
    for p in &kernel.params {
        let kind =
            match &p.kind {
                loop_ir::ParamKind::Scalar { is_size: true, .. } => ParamKind::Size,
                loop_ir::ParamKind::Scalar { ty, .. } => ParamKind::Scalar(dtype_of(*ty)),
                loop_ir::ParamKind::Array(info) => {
                    let view = block_view(kernel, &p.name);
                    let logical_axes = view.as_ref().map_or(info.dims.len(), |v| v.axis);
                    let mut shape = Vec::new();
                    for (axis, d) in info.dims[..logical_axes].iter().enumerate() {
                        let dim =
                            match d {
                                Some(d) => dim_of(d)?,
                                None => inferred.get(&(p.name.clone(), axis)).cloned().ok_or_else(
                                    || {
                                        SynthError::Signature(format!(
                                            "extent {axis} of `{}` is unknown",
                                            p.name
                                        ))
                                    },
                                )?,
                            };
                        shape.push(dim);
                    }
                    if let Some(view) = &view {
                        shape.push(merged_extent(view)?);
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

/// The relations between sizes the kernel relies on for its regions to
/// fit its arrays ([`crate::spec::region::relations`]), as TensIR dims.
/// The header of a program for `kernel` before verification: where it
/// comes from, what its C requires and states, its declared extents (the
/// driver attaches the kernel's guards to the final program).
pub fn program_meta(kernel: &Kernel) -> Result<tenslift_targets::Meta, SynthError> {
    Ok(tenslift_targets::Meta {
        source_file: Some(kernel.range.file.clone()),
        lines: Some((kernel.range.start_line, kernel.range.end_line)),
        status: "unverified".to_string(),
        requires: requirements(kernel)?,
        preconditions: kernel.preconditions(),
        extents: declared_extents(kernel),
        guards: Vec::new(),
    })
}

pub fn requirements(kernel: &Kernel) -> Result<Vec<Requirement>, SynthError> {
    crate::spec::region::relations(kernel)
        .iter()
        .map(|r| requirement(&r.needed, &r.declared))
        .collect()
}

/// `needed <= declared` as the program states it.
pub fn requirement(needed: &Affine, declared: &Affine) -> Result<Requirement, SynthError> {
    Ok(Requirement {
        needed: dim_of(needed)?,
        declared: dim_of(declared)?,
    })
}

/// The kernel's extent sizes (`Origin::Extent`) with the value the build
/// declared and the first array axis declared with it, for the program's
/// metadata: drivers pass that value, and readers see where it came from.
pub fn declared_extents(kernel: &Kernel) -> Vec<DeclaredExtent> {
    kernel
        .params
        .iter()
        .filter_map(|p| match p.origin {
            Origin::Extent { value } => Some((p.name.as_str(), value)),
            _ => None,
        })
        .filter_map(|(name, value)| {
            let at = Affine::var(name.to_string());
            let (array, dim) = kernel.params.iter().find_map(|a| match &a.kind {
                loop_ir::ParamKind::Array(info) => info
                    .dims
                    .iter()
                    .position(|d| d.as_ref() == Some(&at))
                    .map(|dim| (a.name.clone(), dim)),
                _ => None,
            })?;
            Some(DeclaredExtent {
                name: name.to_string(),
                value,
                array,
                dim,
            })
        })
        .collect()
}

/// The sub-box `[0:ni, 0:nj]` a declared array's loops touch, when it is
/// smaller than the declared extent on some axis ([`region_of`]).
fn declared_region(kernel: &Kernel, name: &str) -> Option<Vec<SliceItem>> {
    let ends = region_of(kernel, name)?;
    ends.iter()
        .map(|end| match end {
            None => Some(SliceItem::Full),
            Some(end) => Some(SliceItem::Range {
                start: Dim::constant(0),
                stop: dim_of(end).ok()?,
                step: 1,
            }),
        })
        .collect()
}

/// The region of every declared array whose loops touch a sub-box of it
/// (`C[NI][NJ]` written for `i < ni`, `j < nj`): it is only ever read and
/// written through that box, the rest staying as it is.
#[derive(Clone, Debug, Default)]
pub struct Regions {
    /// Array name -> its region of the declared array.
    pub items: HashMap<String, Vec<SliceItem>>,
    /// Array name -> the declared parameter.
    declared: HashMap<String, Param>,
}

impl Regions {
    pub fn get(&self, name: &str) -> Option<&Vec<SliceItem>> {
        self.items.get(name)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.items.contains_key(name)
    }
}

/// The [`Regions`] of `kernel`'s declared arrays (`params` as declared).
pub fn region_views(kernel: &Kernel, params: &[Param]) -> Regions {
    let mut regions = Regions::default();
    for p in params {
        if let Some(items) = declared_region(kernel, &p.name) {
            regions.items.insert(p.name.to_string(), items);
            regions.declared.insert(p.name.to_string(), p.clone());
        }
    }
    regions
}

/// `params` with each region array typed as its region (`C: f64[ni,
/// nj]`): what the search reads and writes.
pub fn search_params(params: &[Param], regions: &Regions) -> Vec<Param> {
    params
        .iter()
        .map(|p| match (&p.kind, regions.get(&p.name)) {
            (
                ParamKind::Array {
                    dtype,
                    shape,
                    access,
                },
                Some(items),
            ) => match tenslift_targets::expr::slice_shape(shape, items) {
                Ok(region) => Param {
                    name: p.name.clone(),
                    kind: ParamKind::Array {
                        dtype: *dtype,
                        shape: region,
                        access: *access,
                    },
                },
                Err(_) => p.clone(),
            },
            _ => p.clone(),
        })
        .collect()
}

/// `stmts` found over the search's region-typed arrays, reading each
/// region array through its region of the declared array instead.
pub fn rebase_onto_regions(stmts: &[Stmt], regions: &Regions) -> Result<Vec<Stmt>, SynthError> {
    if regions.items.is_empty() {
        return Ok(stmts.to_vec());
    }
    stmts.iter().map(|s| rebase_stmt(s, regions)).collect()
}

fn rebase_stmt(s: &Stmt, regions: &Regions) -> Result<Stmt, SynthError> {
    let e = |x: &Expr| rebase_expr(x, regions);
    Ok(match s {
        Stmt::Let { name, value } => Stmt::Let {
            name: name.clone(),
            value: e(value)?,
        },
        Stmt::Store {
            target,
            region,
            value,
        } => Stmt::Store {
            target: target.clone(),
            region: region.clone(),
            value: e(value)?,
        },
        Stmt::Return(value) => Stmt::Return(e(value)?),
        Stmt::Var { .. } => s.clone(),
        Stmt::Loop {
            var,
            start,
            stop,
            body,
        } => Stmt::Loop {
            var: var.clone(),
            start: start.clone(),
            stop: stop.clone(),
            body: rebase_onto_regions(body, regions)?,
        },
    })
}

/// Every read of a region array's search variable becomes the slice of
/// the declared array; every node above is rebuilt (types re-inferred).
fn rebase_expr(e: &Expr, regions: &Regions) -> Result<Expr, SynthError> {
    let bad = |what: String| SynthError::Rejected(format!("rebasing onto regions: {what}"));
    if let Op::Var(name) = e.op() {
        return match (regions.get(name), regions.declared.get(&**name)) {
            (Some(items), Some(param)) => {
                tenslift_targets::build::slice(Expr::var(name, param.ty()), items.clone())
                    .map_err(|err| bad(err.to_string()))
            }
            _ => Ok(e.clone()),
        };
    }
    let args = e
        .args()
        .iter()
        .map(|a| rebase_expr(a, regions))
        .collect::<Result<Vec<_>, _>>()?;
    Expr::new(e.op().clone(), args).map_err(|err| bad(err.to_string()))
}

/// The regions an array may be read or written through: the whole array,
/// for a block-selected array its block `[…, s*b:(s + 1)*b]`, and for a
/// 2-D flat array whose rows are a leading dimension `lda`, `[:, 0:s]` for
/// every other size parameter `s`.
pub fn views_of(kernel: &Kernel, name: &str) -> Vec<Option<Vec<SliceItem>>> {
    let mut views = vec![None];
    let Some(p) = kernel.params.iter().find(|p| p.name == name) else {
        return views;
    };
    let loop_ir::ParamKind::Array(info) = &p.kind else {
        return views;
    };
    let Storage::Flat { strides } = &info.storage else {
        return views;
    };
    if let Some(view) = block_view(kernel, name) {
        // The block the kernel reads or writes, whole rows before it.
        if let Ok(block) = block_slice(&view) {
            let mut items = vec![SliceItem::Full; view.axis];
            items.push(block);
            views.push(Some(items));
        }
        return views;
    }
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
    let sizes: Vec<&str> = kernel
        .params
        .iter()
        .filter(|q| {
            matches!(q.kind, loop_ir::ParamKind::Scalar { is_size: true, .. }) && q.name != lda
        })
        .map(|q| q.name.as_str())
        .collect();
    let columns = |start: Dim, stop: Dim| {
        Some(vec![
            SliceItem::Full,
            SliceItem::Range {
                start,
                stop,
                step: 1,
            },
        ])
    };
    for s in &sizes {
        views.push(columns(Dim::constant(0), Dim::sym(s)));
    }
    views
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::choose_sizes;
    use tenslift_frontend::Options;

    fn corpus_kernel(file: &str) -> Kernel {
        let path = format!("{}/benchmarks/{file}", env!("CARGO_MANIFEST_DIR"));
        let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
        unit.kernels.into_iter().next().expect("one kernel")
    }

    fn inferred(file: &str) -> Result<Vec<Param>, SynthError> {
        let kernel = corpus_kernel(file);
        let first = choose_sizes(&kernel, &Sizes::new()).expect("sizes");
        params_of(&kernel, &infer_unknown_extents(&kernel, &first)?)
    }

    #[test]
    fn a_pointer_read_up_to_size_minus_one_has_extent_size() {
        let params = inferred("llama/softmax_part1.c").expect("a signature");
        let x = params.iter().find(|p| &*p.name == "x").expect("x");
        assert_eq!(x.ty().shape, vec![Dim::sym("size")], "{x:?}");
    }

    fn dim(text: &str) -> Dim {
        let mut total = Dim::constant(0);
        for term in text.split('+') {
            let mut product = Dim::constant(1);
            for factor in term.trim().split('*') {
                let f = match factor.trim().parse::<i64>() {
                    Ok(c) => Dim::constant(c),
                    Err(_) => Dim::sym(factor.trim()),
                };
                product = product.mul(&f).expect("dim");
            }
            total = total.add(&product).expect("dim");
        }
        total
    }

    #[test]
    fn a_block_selected_pointer_is_a_vector_of_the_blocks_it_reaches() {
        // `q[head * head_size + i]`: the blocks up to `head`'s, as one axis.
        let params = inferred("llama/transformer_part1.c").expect("a signature");
        let q = params.iter().find(|p| &*p.name == "q").expect("q");
        assert_eq!(q.ty().shape, vec![dim("head*head_size + head_size")]);
        // `key_cache[t*kv_dim + head*head_size + i]`: rows `kv_dim` wide.
        let cache = params
            .iter()
            .find(|p| &*p.name == "key_cache")
            .expect("cache");
        assert_eq!(cache.ty().shape, vec![dim("pos + 1"), dim("kv_dim")]);
    }

    #[test]
    fn a_block_selected_array_is_read_and_written_through_its_block() {
        let block = SliceItem::Range {
            start: dim("head*head_size"),
            stop: dim("head*head_size + head_size"),
            step: 1,
        };
        let reads = corpus_kernel("llama/transformer_part1.c");
        assert_eq!(
            views_of(&reads, "key_cache"),
            vec![None, Some(vec![SliceItem::Full, block.clone()])]
        );
        assert_eq!(views_of(&reads, "q"), vec![None, Some(vec![block.clone()])]);
        let writes = corpus_kernel("llama/transformer_part2.c");
        assert_eq!(views_of(&writes, "xb"), vec![None, Some(vec![block])]);
    }
}
