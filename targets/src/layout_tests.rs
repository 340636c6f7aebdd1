use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::dtype::DType;
use crate::interp::{self, Array};
use crate::syntax::{parse_program, print_program};

/// adi's first sweep as partial lifting keeps it: the recurrence runs along
/// `j`, each step vectorised over the rows, so `p` and `q` are read and
/// written by columns; `u` by rows.
const SWEEP: &str = "func sweep(n: size, u: f64[n, n], p: inout f64[n, n], q: inout f64[n, n]) {
  p[1:n - 1, 0] = full([n - 2], 0.0);
  q[1:n - 1, 0] = u[0, 1:n - 1];
  for j in 1..n - 1 {
    p[1:n - 1, j] = div(-0.5, add(mul(0.25, p[1:n - 1, j - 1]), 2.0));
    q[1:n - 1, j] = sub(mul(3.0, u[j, 1:n - 1]), mul(0.25, q[1:n - 1, j - 1]));
  }
}
";

/// A column scan into a local array, then whole-array reads at the top
/// level and a block store: the copies and transposes at the edges.
const LOCAL: &str =
    "func local(w: size, h: size, x: f64[w, h], y: out f64[w, h], s: out f64[h, w]) {
  var acc: f64[w, h];
  acc[:, 0] = x[:, 0];
  for j in 1..h {
    acc[:, j] = add(x[:, j], mul(0.5, acc[:, j - 1]));
  }
  y = mul(2.0, acc);
  s = transpose(acc, perm=[1, 0]);
  acc[0:w, 0:h] = full([w, h], 1.0);
  y[0, 0:h] = add(y[0, 0:h], acc[0, 0:h]);
}
";

fn inputs(names: &[(&str, usize, usize)], seed: u64) -> HashMap<String, Array> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % 1000) as f64 / 250.0 + 0.5
    };
    names
        .iter()
        .map(|(n, r, c)| {
            let values = (0..r * c).map(|_| next()).collect();
            (
                n.to_string(),
                Array::from_f64(DType::F64, vec![*r, *c], values),
            )
        })
        .collect()
}

fn sizes(pairs: &[(&str, i64)]) -> HashMap<String, i64> {
    pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

#[test]
fn column_recurrences_run_on_transposed_copies() {
    let p = parse_program("t.tensir", SWEEP).unwrap();
    let low = lower_program(&p);
    let text = print_program(&low);
    assert!(text.contains("var p_t: f64[n, n];"), "{text}");
    assert!(text.contains("p_t[j, 1:n - 1] = "), "{text}");
    assert!(text.contains("q_t[j - 1, 1:n - 1]"), "{text}");
    // u is read by rows in the loop: it stays as it is.
    assert!(!text.contains("u_t"), "{text}");
    assert!(
        text.contains("p[:, :] = transpose(p_t, perm=[1, 0]);"),
        "{text}"
    );
}

#[test]
fn rows_or_blocks_in_a_kept_loop_keep_the_layout() {
    let rows = "func f(n: size, a: inout f64[n, n]) {
  for j in 1..n {
    a[1:n, j] = a[1:n, j - 1];
    a[j, 0:n] = mul(2.0, a[j, 0:n]);
  }
}
";
    let block = "func g(n: size, a: inout f64[n, n], b: out f64[n, n]) {
  for t in 0..n {
    a[0:n, t] = add(a[0:n, t], 1.0);
    b = a;
  }
}
";
    for text in [rows, block] {
        let p = parse_program("t.tensir", text).unwrap();
        assert_eq!(lower_program(&p), p, "{text}");
    }
}

#[test]
fn out_arrays_and_loop_free_programs_are_left_alone() {
    let out_only = "func f(n: size, x: f64[n], a: out f64[n, n]) {
  for j in 0..n {
    a[0:n, j] = mul(x, 2.0);
  }
}
";
    let flat = "func g(n: size, a: f64[n, n], b: out f64[n]) {
  b = a[0:n, 0];
}
";
    for text in [out_only, flat] {
        let p = parse_program("t.tensir", text).unwrap();
        assert_eq!(lower_program(&p), p, "{text}");
    }
}

#[test]
fn a_local_array_is_declared_transposed() {
    let p = parse_program("t.tensir", LOCAL).unwrap();
    let low = lower_program(&p);
    let text = print_program(&low);
    assert!(text.contains("var acc_t: f64[h, w];"), "{text}");
    assert!(text.contains("x_t"), "{text}");
    let args = inputs(&[("x", 5, 7)], 3);
    let want = interp::run(&p, &sizes(&[("w", 5), ("h", 7)]), &args).unwrap();
    let got = interp::run(&low, &sizes(&[("w", 5), ("h", 7)]), &args).unwrap();
    assert_eq!(got, want, "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The lowered sweep computes exactly the values of the original, bit for
    /// bit (the same operations on the same elements, stored elsewhere).
    #[test]
    fn the_lowered_sweep_agrees_with_the_original(n in 2i64..9, seed in 0u64..1000) {
        let p = parse_program("t.tensir", SWEEP).unwrap();
        let low = lower_program(&p);
        prop_assert_ne!(&low, &p);
        let k = n as usize;
        let args = inputs(&[("u", k, k), ("p", k, k), ("q", k, k)], seed);
        let want = interp::run(&p, &sizes(&[("n", n)]), &args).unwrap();
        let got = interp::run(&low, &sizes(&[("n", n)]), &args).unwrap();
        prop_assert_eq!(got, want);
    }
}

/// deriche's shape: `y1` is filled by columns in one top-level loop (a
/// recurrence along the rows, vectorised over them; the second loop runs
/// backwards), then read whole and rewritten by rows: no layout suits it
/// everywhere, each column loop gets its own transposed copy.
const FILTERS: &str = "func filters(w: size, h: size, x: f64[w, h], y1: out f64[w, h], y2: out f64[w, h], out: out f64[w, h]) {
  var prev: f64[w];
  var back: f64[w];
  prev = full([w], 0.0);
  back = full([w], 0.0);
  for j in 0..h {
    y1[0:w, j] = add(x[0:w, j], mul(0.5, prev));
    prev = y1[0:w, j];
  }
  for j_1 in 0..h {
    y2[0:w, h - j_1 - 1] = add(x[0:w, h - j_1 - 1], mul(0.25, back));
    back = mul(2.0, y2[0:w, h - j_1 - 1]);
  }
  out = add(y1, y2);
  for i in 0..w {
    y1[i, 0:h] = mul(out[i, 0:h], 3.0);
  }
}
";

#[test]
fn a_column_loop_fills_a_transposed_copy_then_stores_what_it_covered() {
    let p = parse_program("t.tensir", FILTERS).unwrap();
    let low = lower_program(&p);
    let text = print_program(&low);
    assert!(text.contains("var y1_t: f64[h, w];"), "{text}");
    assert!(
        text.contains("y1[0:w, 0:h] = transpose(y1_t[0:h, 0:w], perm=[1, 0]);"),
        "{text}"
    );
    assert!(text.contains("y2_t[h - j_1 - 1, 0:w] = "), "{text}");
    assert!(
        text.contains("y2[0:w, 0:h] = transpose(y2_t[0:h, 0:w], perm=[1, 0]);"),
        "{text}"
    );
    // The row loop keeps writing y1 itself.
    assert!(text.contains("y1[i, 0:h] = "), "{text}");
    for (w, h) in [(3, 4), (5, 2), (1, 6)] {
        let args = inputs(&[("x", w, h)], (w * 10 + h) as u64);
        let sizes = sizes(&[("w", w as i64), ("h", h as i64)]);
        let want = interp::run(&p, &sizes, &args).unwrap();
        let got = interp::run(&low, &sizes, &args).unwrap();
        assert_eq!(got, want, "{text}");
    }
}

#[test]
fn a_loop_reading_a_column_it_did_not_write_keeps_the_layout() {
    // The column of the previous iteration: `y_t` would need `y`'s values.
    let earlier = "func f(w: size, h: size, x: f64[w, h], y: out f64[w, h]) {
  y[0:w, 0] = x[0:w, 0];
  for j in 1..h {
    y[0:w, j] = mul(2.0, y[0:w, j - 1]);
  }
}
";
    // The column before this iteration stores it (a row loop keeps the
    // whole-program rule away).
    let before_store = "func g(w: size, h: size, y: inout f64[w, h]) {
  for j in 0..h {
    y[0:w, j] = mul(2.0, y[0:w, j]);
  }
  for i in 0..w {
    y[i, 0:h] = mul(3.0, y[i, 0:h]);
  }
}
";
    for text in [earlier, before_store] {
        let p = parse_program("t.tensir", text).unwrap();
        assert_eq!(lower_program(&p), p, "{text}");
    }
}
