//! `syrk`, `syr2k`, `mirror_lower` in the Python targets.
//!
//! NumPy calls BLAS through SciPy (`scipy.linalg.blas`'s `?syrk`/`?syr2k`),
//! which computes only the triangle it keeps: half the flops of the
//! product. BLAS is column-major, so a C-order result is the transpose of
//! what Fortran sees and its lower triangle is Fortran's upper one; the
//! helpers pass transposed views (no copies for C- or F-contiguous
//! operands) and hand back the transpose. PyTorch and JAX have no `syrk`:
//! their helpers compute the definition with one matrix product (the
//! symmetry rewrites are not applied for them where that is not faster,
//! see `symmetry::Policy::for_target`).

/// `_syrk(a, c, alpha, beta)`, `_syrk0(a, alpha)` (`c` zero, `beta` 0),
/// `_syr2k(a, b, c, alpha, beta)`, `_syr2k0(a, b, alpha)`,
/// `_mirror_lower(x)`.
pub const NUMPY_SYRK: &str = r#"def _syrk(a, c, alpha, beta):
    """tril(alpha * a @ a.T + beta * c) + triu(c, 1) by one BLAS syrk."""
    from scipy.linalg.blas import get_blas_funcs
    f = get_blas_funcs("syrk", (a,))
    ct = np.array(c, dtype=a.dtype, copy=True).T
    if a.flags.f_contiguous and not a.flags.c_contiguous:
        r = f(alpha, a, beta=beta, c=ct, trans=0, lower=0, overwrite_c=1)
    else:
        r = f(alpha, np.ascontiguousarray(a).T, beta=beta, c=ct, trans=1, lower=0, overwrite_c=1)
    return r.T
"#;

pub const NUMPY_SYRK0: &str = r#"def _syrk0(a, alpha):
    """tril(alpha * a @ a.T) by one BLAS syrk (the other triangle zero)."""
    from scipy.linalg.blas import get_blas_funcs
    f = get_blas_funcs("syrk", (a,))
    if a.flags.f_contiguous and not a.flags.c_contiguous:
        return f(alpha, a, trans=0, lower=0).T
    return f(alpha, np.ascontiguousarray(a).T, trans=1, lower=0).T
"#;

pub const NUMPY_SYR2K: &str = r#"def _syr2k(a, b, c, alpha, beta):
    """tril(alpha * (a @ b.T + b @ a.T) + beta * c) + triu(c, 1) by one
    BLAS syr2k."""
    from scipy.linalg.blas import get_blas_funcs
    f = get_blas_funcs("syr2k", (a, b))
    ct = np.array(c, dtype=a.dtype, copy=True).T
    at, bt = np.ascontiguousarray(a).T, np.ascontiguousarray(b).T
    return f(alpha, at, bt, beta=beta, c=ct, trans=1, lower=0, overwrite_c=1).T
"#;

pub const NUMPY_SYR2K0: &str = r#"def _syr2k0(a, b, alpha):
    """tril(alpha * (a @ b.T + b @ a.T)) by one BLAS syr2k."""
    from scipy.linalg.blas import get_blas_funcs
    f = get_blas_funcs("syr2k", (a, b))
    at, bt = np.ascontiguousarray(a).T, np.ascontiguousarray(b).T
    return f(alpha, at, bt, trans=1, lower=0).T
"#;

pub const NUMPY_MIRROR: &str = r#"def _mirror_lower(x):
    """The symmetric matrix with x's lower triangle."""
    r = np.tril(x)
    r += np.tril(x, -1).T
    return r
"#;

pub const TORCH_SYRK: &str = r#"def _syrk(a, c, alpha, beta):
    """tril(alpha * a @ a.T + beta * c) + triu(c, 1) (no syrk in PyTorch)."""
    return torch.tril(alpha * (a @ a.T) + beta * c) + torch.triu(c, 1)
"#;

pub const TORCH_SYR2K: &str = r#"def _syr2k(a, b, c, alpha, beta):
    """tril(alpha * (a @ b.T + b @ a.T) + beta * c) + triu(c, 1), with
    b @ a.T read as (a @ b.T).T: one product."""
    x = a @ b.T
    return torch.tril(alpha * (x + x.T) + beta * c) + torch.triu(c, 1)
"#;

pub const TORCH_MIRROR: &str = r#"def _mirror_lower(x):
    """The symmetric matrix with x's lower triangle."""
    return torch.tril(x) + torch.tril(x, -1).T
"#;

pub const JAX_SYRK: &str = r#"def _syrk(a, c, alpha, beta):
    """tril(alpha * a @ a.T + beta * c) + triu(c, 1), a @ a.T's lower
    triangle by blocks (_lower_gram)."""
    return jnp.tril(alpha * _lower_gram(a) + beta * c) + jnp.triu(c, 1)
"#;

pub const JAX_SYRK0: &str = r#"def _syrk0(a, alpha):
    """tril(alpha * a @ a.T), by blocks (_lower_gram)."""
    return alpha * _lower_gram(a)
"#;

/// The same blocks as `symmetry::blas::lower_gram_blocks` (StableHLO).
pub const JAX_LOWER_GRAM: &str = r#"def _lower_gram(a):
    """tril(a @ a.T) by 2 x 2 blocks, halving while at least 512 rows:
    the diagonal blocks recursively, a2 @ a1.T below, zeros above (5/8 of
    the product's flops at two levels). Shapes are static: the recursion
    unrolls while tracing."""
    n = a.shape[0]
    if n < 512:
        return jnp.tril(a @ a.T)
    h = n // 2
    a1, a2 = a[:h], a[h:]
    upper = jnp.zeros((h, n - h), a.dtype)
    return jnp.block([[_lower_gram(a1), upper], [a2 @ a1.T, _lower_gram(a2)]])
"#;

pub const JAX_SYR2K: &str = r#"def _syr2k(a, b, c, alpha, beta):
    """tril(alpha * (a @ b.T + b @ a.T) + beta * c) + triu(c, 1), with
    b @ a.T read as (a @ b.T).T: one product."""
    x = a @ b.T
    return jnp.tril(alpha * (x + x.T) + beta * c) + jnp.triu(c, 1)
"#;

pub const JAX_MIRROR: &str = r#"def _mirror_lower(x):
    """The symmetric matrix with x's lower triangle."""
    return jnp.tril(x) + jnp.tril(x, -1).T
"#;

use crate::expr::Expr;
use crate::ops::Op;
use crate::symmetry::blas::starts_from_zero;

/// The rule for an update whose `c` is the constant zero and whose `beta`
/// is the literal 0 (NumPy: BLAS then starts from zeros it allocates; no
/// matrix of zeros is built and copied), for NumPy and JAX.
pub fn zero_update_rule(e: &Expr) -> Option<&'static str> {
    let (c, beta, rule) = match (e.op(), e.args()) {
        (Op::Syrk, [_, c, _, beta]) => (c, beta, "_syrk0({0}, {2})"),
        (Op::Syr2k, [_, _, c, _, beta]) => (c, beta, "_syr2k0({0}, {1}, {3})"),
        _ => return None,
    };
    starts_from_zero(c, beta).then_some(rule)
}
