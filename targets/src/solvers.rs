//! The semantics of TensIR's solver operations (`cholesky`, `trisolve_*`,
//! `lu_nopivot`), written once over any scalar arithmetic ([`Arith`]) so
//! that every evaluator — the interpreter (floats), the symbolic spec
//! (exact normal forms), the verifier (Z3 terms) — runs the same
//! recurrence. The recurrence is the textbook one in the order PolyBench's
//! C computes it (row by row, inner products accumulated left to right,
//! then one division or square root), so a C kernel that computes it in
//! place has the same expression tree per element as the operation.
//!
//! Targets call their libraries instead (LAPACK's `potrf`/`trsm` through
//! NumPy/SciPy, PyTorch, JAX, StableHLO); those differ from the recurrence
//! only in rounding (blocked orders of the same sums).

/// Scalar arithmetic that a solver recurrence needs. Every operation may
/// fail (a division by a constant zero in exact arithmetic, an evaluator's
/// own limits), and takes `&mut self` so that evaluators with state (a Z3
/// context, recorded requirements) implement it directly.
pub trait Arith {
    type V: Clone;
    type E;
    fn sub(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E>;
    fn mul(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E>;
    fn div(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E>;
    fn sqrt(&mut self, a: &Self::V) -> Result<Self::V, Self::E>;
}

/// `v - sum_k x_k * y_k`, subtracting one product at a time in `k` order
/// (the C's `w -= a * b` accumulation).
fn sub_products<A: Arith>(
    ar: &mut A,
    mut v: A::V,
    pairs: impl Iterator<Item = (A::V, A::V)>,
) -> Result<A::V, A::E> {
    for (x, y) in pairs {
        let p = ar.mul(&x, &y)?;
        v = ar.sub(&v, &p)?;
    }
    Ok(v)
}

/// The Cholesky factor `L` (`A = L Lᵀ`) of the `n × n` row-major matrix
/// `a`, reading only its lower triangle; `zero` fills the strict upper
/// triangle of the result. Row `i`: `L[i][j] = (A[i][j] - Σ_{k<j} L[i][k]
/// L[j][k]) / L[j][j]` for `j < i`, then `L[i][i] = sqrt(A[i][i] -
/// Σ_{k<i} L[i][k]²)`.
pub fn cholesky<A: Arith>(ar: &mut A, n: usize, a: &[A::V], zero: A::V) -> Result<Vec<A::V>, A::E> {
    let mut l = vec![zero; n * n];
    for i in 0..n {
        for j in 0..i {
            let pairs: Vec<_> = (0..j)
                .map(|k| (l[i * n + k].clone(), l[j * n + k].clone()))
                .collect();
            let v = sub_products(ar, a[i * n + j].clone(), pairs.into_iter())?;
            l[i * n + j] = ar.div(&v, &l[j * n + j])?;
        }
        let pairs: Vec<_> = (0..i)
            .map(|k| (l[i * n + k].clone(), l[i * n + k].clone()))
            .collect();
        let v = sub_products(ar, a[i * n + i].clone(), pairs.into_iter())?;
        l[i * n + i] = ar.sqrt(&v)?;
    }
    Ok(l)
}

/// Solves `T X = B` for `X` with `T` (`n × n`, row-major) triangular:
/// `lower` reads `T`'s lower triangle (forward substitution, rows in
/// increasing order), otherwise its upper triangle (back substitution,
/// rows in decreasing order); `unit` takes the diagonal as ones (it is
/// never read). `B` is `n × m` row-major (`m = 1` for a vector); columns
/// are independent. Row `i`: `X[i] = (B[i] - Σ_j T[i][j] X[j]) / T[i][i]`,
/// `j` over the rows solved before, in increasing order.
pub fn trisolve<A: Arith>(
    ar: &mut A,
    n: usize,
    m: usize,
    t: &[A::V],
    b: &[A::V],
    lower: bool,
    unit: bool,
) -> Result<Vec<A::V>, A::E> {
    let mut x = b.to_vec();
    let rows: Vec<usize> = if lower {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    for c in 0..m {
        for &i in &rows {
            let others: Vec<usize> = if lower {
                (0..i).collect()
            } else {
                (i + 1..n).collect()
            };
            let pairs: Vec<_> = others
                .iter()
                .map(|&j| (t[i * n + j].clone(), x[j * m + c].clone()))
                .collect();
            let v = sub_products(ar, b[i * m + c].clone(), pairs.into_iter())?;
            x[i * m + c] = if unit { v } else { ar.div(&v, &t[i * n + i])? };
        }
    }
    Ok(x)
}

/// LU factorisation without pivoting of the `n × n` row-major `a`, packed
/// as the C computes it in place: the strict lower triangle holds `L`
/// (unit diagonal, not stored), the upper triangle with the diagonal `U`.
/// Row `i`: `L[i][j] = (A[i][j] - Σ_{k<j} L[i][k] U[k][j]) / U[j][j]` for
/// `j < i`, then `U[i][j] = A[i][j] - Σ_{k<i} L[i][k] U[k][j]` for `j ≥ i`.
pub fn lu_nopivot<A: Arith>(ar: &mut A, n: usize, a: &[A::V]) -> Result<Vec<A::V>, A::E> {
    let mut lu = a.to_vec();
    for i in 0..n {
        for j in 0..n {
            let depth = j.min(i);
            let pairs: Vec<_> = (0..depth)
                .map(|k| (lu[i * n + k].clone(), lu[k * n + j].clone()))
                .collect();
            let v = sub_products(ar, lu[i * n + j].clone(), pairs.into_iter())?;
            lu[i * n + j] = if j < i {
                ar.div(&v, &lu[j * n + j])?
            } else {
                v
            };
        }
    }
    Ok(lu)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct F;
    impl Arith for F {
        type V = f64;
        type E = ();
        fn sub(&mut self, a: &f64, b: &f64) -> Result<f64, ()> {
            Ok(a - b)
        }
        fn mul(&mut self, a: &f64, b: &f64) -> Result<f64, ()> {
            Ok(a * b)
        }
        fn div(&mut self, a: &f64, b: &f64) -> Result<f64, ()> {
            Ok(a / b)
        }
        fn sqrt(&mut self, a: &f64) -> Result<f64, ()> {
            Ok(a.sqrt())
        }
    }

    fn matmul(n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
            }
        }
        c
    }

    #[test]
    fn cholesky_factor_times_its_transpose_is_the_matrix() {
        let a = [4.0, 0.0, 0.0, 2.0, 5.0, 0.0, -2.0, 1.0, 6.0];
        // Only the lower triangle is read: the zeros above stand for 2, -2, 1.
        let l = cholesky(&mut F, 3, &a, 0.0).unwrap();
        let lt: Vec<f64> = (0..9).map(|k| l[(k % 3) * 3 + k / 3]).collect();
        let full = [4.0, 2.0, -2.0, 2.0, 5.0, 1.0, -2.0, 1.0, 6.0];
        for (x, y) in matmul(3, &l, &lt).iter().zip(full) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
        assert_eq!(l[1], 0.0);
    }

    #[test]
    fn lu_packs_unit_lower_and_upper_factors() {
        let a = [4.0, 3.0, 2.0, 8.0, 7.0, 9.0, 4.0, 6.0, 5.0];
        let lu = lu_nopivot(&mut F, 3, &a).unwrap();
        let l: Vec<f64> = (0..9)
            .map(|k| match (k / 3, k % 3) {
                (i, j) if i == j => 1.0,
                (i, j) if j < i => lu[k],
                _ => 0.0,
            })
            .collect();
        let u: Vec<f64> = (0..9)
            .map(|k| if k % 3 >= k / 3 { lu[k] } else { 0.0 })
            .collect();
        for (x, y) in matmul(3, &l, &u).iter().zip(a) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    #[test]
    fn solver_syntax_round_trips_and_the_interpreter_runs_it() {
        use crate::interp::{run, Array};
        use crate::{parse_program, print_program, DType};
        use std::collections::HashMap;
        let text = "func f(n: size, A: inout f64[n, n], b: f64[n], x: out f64[n]) {\n  \
                    A = lu_nopivot(A);\n  x = trisolve_upper(A, trisolve_lower_unit(A, b));\n}\n";
        let p = parse_program("f.tensir", text).unwrap();
        let printed = print_program(&p);
        assert!(
            printed.contains("trisolve_upper(A, trisolve_lower_unit(A, b))"),
            "{printed}"
        );
        assert_eq!(parse_program("f.tensir", &printed).unwrap(), p);
        // A x = b with A = [[4, 3], [8, 7]], b = A [1, 2]ᵀ = [10, 22].
        let args = HashMap::from([
            (
                "A".to_string(),
                Array::from_f64(DType::F64, vec![2, 2], vec![4.0, 3.0, 8.0, 7.0]),
            ),
            (
                "b".to_string(),
                Array::from_f64(DType::F64, vec![2], vec![10.0, 22.0]),
            ),
            (
                "x".to_string(),
                Array::from_f64(DType::F64, vec![2], vec![0.0, 0.0]),
            ),
        ]);
        let out = run(&p, &HashMap::from([("n".to_string(), 2)]), &args).unwrap();
        let x = &out.arrays["x"];
        assert_eq!((x.get_f64(0), x.get_f64(1)), (1.0, 2.0));
        let bad =
            "func g(n: size, m: size, A: f64[n, m]) -> f64 {\n  return sum(cholesky(A));\n}\n";
        let err = parse_program("g.tensir", bad).unwrap_err();
        assert!(
            format!("{err:?}").contains("square float matrix"),
            "{err:?}"
        );
    }

    #[test]
    fn trisolve_solves_lower_and_upper_systems() {
        let t = [2.0, 1.0, 3.0, 4.0];
        // Lower: [[2, 0], [3, 4]] x = [2, 11] -> x = [1, 2].
        assert_eq!(
            trisolve(&mut F, 2, 1, &t, &[2.0, 11.0], true, false).unwrap(),
            vec![1.0, 2.0]
        );
        // Upper unit: [[1, 1], [0, 1]] x = [3, 2] -> x = [1, 2].
        assert_eq!(
            trisolve(&mut F, 2, 1, &t, &[3.0, 2.0], false, true).unwrap(),
            vec![1.0, 2.0]
        );
        // Matrix right-hand side: columns solved independently.
        assert_eq!(
            trisolve(&mut F, 2, 2, &t, &[2.0, 4.0, 11.0, 22.0], true, false).unwrap(),
            vec![1.0, 2.0, 2.0, 4.0]
        );
    }
}
