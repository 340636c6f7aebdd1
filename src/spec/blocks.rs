//! Block-selected flat arrays: a pointer read as `base[s*b + i]` where `s`
//! is a size parameter (`q[head*head_size + i]`,
//! `key_cache[t*kv_dim + head*head_size + i]`).
//!
//! The frontend delinearises such subscripts into a logical axis indexed by
//! `s` whose extent it cannot know (`kv_dim / head_size` need not be an
//! integer), so no tensor of the logical shape has the C array's memory
//! layout. The spec therefore names these arrays by their physical
//! coordinates instead: the block-selector axis and the block axis merge
//! into one axis of flat offsets `s*b + i`, whose extent is the pitch of the
//! row around it (`kv_dim`), or for a selector on the leading axis, the
//! touched `(s + 1)*b`. A tensor program then reads the block through the
//! slice `[s*b:(s + 1)*b]`, which means the same thing at every size.

use tenslift_frontend::ir::{
    Affine, ArrayInfo, Expr, ExprKind, Kernel, LValue, ParamKind, Stmt, Storage,
};

/// How one flat array's logical axes `axis` (the selector) and `axis + 1`
/// (the block) merge into one physical axis.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockView {
    /// The selector axis; axes before it keep their meaning.
    pub axis: usize,
    /// The size parameter every access selects the block with.
    pub selector: String,
    /// The block length: the block axis's extent and the selector's stride.
    pub block: Affine,
    /// The merged axis's extent when the selector is not the leading axis:
    /// the stride of the axis before it (the row pitch, `kv_dim`).
    pub pitch: Option<Affine>,
}

/// The block view of the array parameter `name`, when it has one: flat
/// storage, a logical axis of unknown extent that every access indexes by
/// the same size parameter alone, followed by the innermost axis whose
/// extent equals that axis's stride (contiguous blocks).
pub fn block_view(kernel: &Kernel, name: &str) -> Option<BlockView> {
    let info = kernel.params.iter().find_map(|p| match &p.kind {
        ParamKind::Array(info) if p.name == name => Some(info),
        _ => None,
    })?;
    block_view_of(kernel, name, info)
}

pub(crate) fn block_view_of(kernel: &Kernel, name: &str, info: &ArrayInfo) -> Option<BlockView> {
    let Storage::Flat { strides } = &info.storage else {
        return None;
    };
    let rank = info.dims.len();
    if rank < 2 || strides.len() != rank {
        return None;
    }
    let axis = rank - 2;
    let block = info.dims[rank - 1].clone()?;
    let contiguous = strides[rank - 1].as_constant() == Some(1) && strides[axis] == block;
    if info.dims[axis].is_some() || !contiguous {
        return None;
    }
    let sizes = super::size_params(kernel);
    let selector = sole_size_index(kernel, name, axis, &sizes)?;
    let pitch = axis.checked_sub(1).map(|before| strides[before].clone());
    Some(BlockView {
        axis,
        selector,
        block,
        pitch,
    })
}

/// The size parameter every access to `array` uses as its index along
/// `axis`, when all of them use the same one and nothing else.
pub fn sole_size_index(
    kernel: &Kernel,
    array: &str,
    axis: usize,
    sizes: &[String],
) -> Option<String> {
    let mut indices = Vec::new();
    for stmt in &kernel.body {
        collect_stmt_indices(stmt, array, axis, &mut indices);
    }
    let first = indices.first()?;
    let (name, &coeff) = first.terms.iter().next()?;
    let sole = first.terms.len() == 1 && coeff == 1 && first.constant == 0;
    (sole && sizes.contains(name) && indices.iter().all(|a| a == first)).then(|| name.clone())
}

fn collect_stmt_indices(stmt: &Stmt, array: &str, axis: usize, out: &mut Vec<Affine>) {
    match stmt {
        Stmt::Loop(l) => {
            for s in &l.body {
                collect_stmt_indices(s, array, axis, out);
            }
        }
        Stmt::Assign { target, value, .. } => {
            if let LValue::Element {
                array: a, index, ..
            } = target
            {
                if a == array {
                    out.extend(index.get(axis).cloned());
                }
            }
            collect_expr_indices(value, array, axis, out);
        }
        Stmt::If {
            cond,
            then_body,
            else_body,
            ..
        } => {
            collect_expr_indices(cond, array, axis, out);
            for s in then_body.iter().chain(else_body) {
                collect_stmt_indices(s, array, axis, out);
            }
        }
        Stmt::Return { value, .. } => collect_expr_indices(value, array, axis, out),
    }
}

fn collect_expr_indices(expr: &Expr, array: &str, axis: usize, out: &mut Vec<Affine>) {
    match &expr.kind {
        ExprKind::Load { array: a, index } if a == array => {
            out.extend(index.get(axis).cloned());
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => {
            collect_expr_indices(arg, array, axis, out)
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_expr_indices(lhs, array, axis, out);
            collect_expr_indices(rhs, array, axis, out);
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            for e in [cond, then_value, else_value] {
                collect_expr_indices(e, array, axis, out);
            }
        }
        ExprKind::Call { args, .. } => {
            for e in args {
                collect_expr_indices(e, array, axis, out);
            }
        }
        _ => {}
    }
}

impl BlockView {
    /// The physical index of a logical one: axes before the selector, then
    /// the flat offset `selector*block + i` (`block` evaluated).
    pub fn physical(&self, logical: &[i64], block: i64) -> Vec<i64> {
        let mut out = logical[..self.axis.min(logical.len())].to_vec();
        let sel = logical.get(self.axis).copied().unwrap_or(0);
        let inner = logical.get(self.axis + 1).copied().unwrap_or(0);
        out.push(sel.saturating_mul(block).saturating_add(inner));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_frontend::Options;

    fn corpus_kernel(file: &str) -> Kernel {
        let path = format!("{}/benchmarks/{file}", env!("CARGO_MANIFEST_DIR"));
        let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
        unit.kernels.into_iter().next().expect("one kernel")
    }

    #[test]
    fn a_cached_key_row_block_merges_into_the_row_pitch() {
        let kernel = corpus_kernel("llama/transformer_part1.c");
        let view = block_view(&kernel, "key_cache").expect("a block view");
        assert_eq!((view.axis, view.selector.as_str()), (1, "head"));
        assert_eq!(view.block.to_string(), "head_size");
        assert_eq!(
            view.pitch.as_ref().map(|p| p.to_string()),
            Some("kv_dim".into())
        );
        assert_eq!(view.physical(&[2, 4, 3], 5), vec![2, 23]);
    }

    #[test]
    fn a_leading_selector_has_no_pitch_and_loop_indexed_rows_no_view() {
        let kernel = corpus_kernel("llama/transformer_part1.c");
        let q = block_view(&kernel, "q").expect("q is a block of a vector");
        assert_eq!((q.axis, q.pitch), (0, None));
        assert_eq!(block_view(&kernel, "att"), None);
        // Rows selected by a loop iterator are an ordinary matrix.
        let gemm = corpus_kernel("blas/gemv.c");
        for p in &gemm.params {
            assert_eq!(block_view(&gemm, &p.name), None, "{}", p.name);
        }
    }
}
