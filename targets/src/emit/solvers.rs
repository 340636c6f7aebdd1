//! Library calls for TensIR's solver operations in the Python targets.
//!
//! `cholesky` is LAPACK's `potrf` (NumPy, PyTorch, JAX read only the lower
//! triangle, as the TensIR operation does); `trisolve_*` is `trsm`/`trsv`
//! (SciPy's `solve_triangular`, `torch.linalg.solve_triangular`,
//! `jax.scipy.linalg.solve_triangular`). No library of these targets has an
//! LU without pivoting on the CPU (`scipy.linalg.lu` and
//! `torch.linalg.lu_factor` pivot; `pivot=False` is CUDA-only in PyTorch),
//! so `lu_nopivot` is a recursive blocked program over them: the leading
//! half's LU, two triangular solves, the Schur complement by one matrix
//! product, the trailing half's LU; blocks of at most 64 rows by rank-1
//! updates. Every flop but the small blocks' goes through BLAS-3.

/// NumPy: SciPy for the triangular solves (imported on first use).
pub const NUMPY_TRISOLVE: &str = r#"def _trisolve(t, b, lower, unit):
    """T x = b for triangular T (LAPACK trsm through SciPy)."""
    from scipy.linalg import solve_triangular
    return solve_triangular(t, b, lower=lower, unit_diagonal=unit, check_finite=False)
"#;

pub const NUMPY_LU_NOPIVOT: &str = r#"def _lu_nopivot(a):
    """LU without pivoting, unit-lower L and U packed in one matrix."""
    from scipy.linalg import solve_triangular
    a = np.array(a, dtype=a.dtype, copy=True)

    def rec(a):
        n = a.shape[0]
        if n <= 64:
            for k in range(n - 1):
                a[k + 1:, k] /= a[k, k]
                a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
            return
        h = n // 2
        rec(a[:h, :h])
        a[:h, h:] = solve_triangular(a[:h, :h], a[:h, h:], lower=True, unit_diagonal=True, check_finite=False)
        a[h:, :h] = solve_triangular(a[:h, :h], a[h:, :h].T, trans="T", lower=False, check_finite=False).T
        a[h:, h:] -= a[h:, :h] @ a[:h, h:]
        rec(a[h:, h:])

    rec(a)
    return a
"#;

pub const TORCH_TRISOLVE: &str = r#"def _trisolve(t, b, lower, unit):
    """T x = b for triangular T (a vector b is solved as one column)."""
    x = b.unsqueeze(-1) if b.dim() == 1 else b
    x = torch.linalg.solve_triangular(t, x, upper=not lower, unitriangular=unit)
    return x.squeeze(-1) if b.dim() == 1 else x
"#;

pub const TORCH_LU_NOPIVOT: &str = r#"def _lu_nopivot(a):
    """LU without pivoting, unit-lower L and U packed in one matrix
    (torch.linalg.lu_factor(pivot=False) runs only on CUDA)."""
    a = a.clone()

    def rec(a):
        n = a.shape[0]
        if n <= 64:
            for k in range(n - 1):
                a[k + 1:, k] /= a[k, k]
                a[k + 1:, k + 1:] -= torch.outer(a[k + 1:, k], a[k, k + 1:])
            return
        h = n // 2
        rec(a[:h, :h])
        a[:h, h:] = torch.linalg.solve_triangular(a[:h, :h], a[:h, h:], upper=False, unitriangular=True)
        a[h:, :h] = torch.linalg.solve_triangular(a[:h, :h], a[h:, :h], upper=True, left=False)
        a[h:, h:] -= a[h:, :h] @ a[:h, h:]
        rec(a[h:, h:])

    rec(a)
    return a
"#;

pub const JAX_TRISOLVE: &str = r#"def _trisolve(t, b, lower, unit):
    """T x = b for triangular T."""
    return jax.scipy.linalg.solve_triangular(t, b, lower=lower, unit_diagonal=unit)
"#;

pub const JAX_LU_NOPIVOT: &str = r#"def _lu_nopivot(a):
    """LU without pivoting, unit-lower L and U packed in one matrix: halves
    recursively (static shapes: the recursion unrolls while tracing), blocks
    of at most 64 by a fori_loop over masked full-block steps, so the traced
    program does not grow with n (an unrolled leaf loop took 73 s to compile
    at n = 2000, this 6 s)."""
    n = a.shape[0]
    if n <= 64:
        idx = jnp.arange(n)

        def step(k, a):
            below = idx > k
            col = jnp.where(below, a[:, k] / a[k, k], a[:, k])
            a = a.at[:, k].set(col)
            inside = below[:, None] & below[None, :]
            return jnp.where(inside, a - jnp.outer(col, a[k, :]), a)

        return jax.lax.fori_loop(0, n - 1, step, a)
    h = n // 2
    a11 = _lu_nopivot(a[:h, :h])
    u12 = jax.scipy.linalg.solve_triangular(a11, a[:h, h:], lower=True, unit_diagonal=True)
    l21 = jax.scipy.linalg.solve_triangular(a11, a[h:, :h].T, trans="T", lower=False).T
    a22 = _lu_nopivot(a[h:, h:] - l21 @ u12)
    return jnp.block([[a11, u12], [l21, a22]])
"#;

/// The call of a triangular solve with its attributes, `{0}` the matrix
/// and `{1}` the right-hand side.
pub fn trisolve_rule(lower: bool, unit: bool) -> &'static str {
    match (lower, unit) {
        (true, false) => "_trisolve({0}, {1}, True, False)",
        (true, true) => "_trisolve({0}, {1}, True, True)",
        (false, false) => "_trisolve({0}, {1}, False, False)",
        (false, true) => "_trisolve({0}, {1}, False, True)",
    }
}
