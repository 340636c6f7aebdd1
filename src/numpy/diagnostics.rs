//! Every refusal of `tenslift optimize` (`NP0xx`), in the frontend's
//! [`Code`] form and rendered by its [`Diagnostics`] like clang's errors:
//! `prog.py:line:col: error[NP007]: message`, the source line and a caret.
//! `src/numpy/DIAGNOSTICS.md` is generated from [`CODES`] (a unit test
//! keeps it current).

use std::fmt::Write as _;

use tenslift_frontend::diagnostics::{Code, Diagnostic, Diagnostics};
use tenslift_frontend::ir::Loc;

macro_rules! codes {
    ($($name:ident = $id:literal, $summary:literal, $explanation:literal, $example:literal;)+) => {
        $(pub const $name: Code = Code { id: $id, summary: $summary, explanation: $explanation, example: $example };)+
        /// Every code, in numeric order.
        pub const CODES: &[Code] = &[$($name),+];
    };
}

codes! {
    PYTHON_SYNTAX = "NP001", "Python rejected the file",
        "The file is read by the interpreter's own `ast` module; the message is Python's.",
        "def f(A):\n    return np.sum(A,, axis=0)";
    NO_FUNCTION = "NP002", "no such function",
        "`--function` must name a top-level `def` of the file, and the file must define one.",
        "# $ tenslift optimize prog.py --function g   (prog.py defines only f)";
    UNSUPPORTED_STATEMENT = "NP003", "unsupported statement",
        "The function must be straight-line: assignments to names (or unpacking a `.shape`), a docstring, and a final `return`. Loops, branches, `with`, `del`, nested definitions and imports inside the function are refused (a list comprehension inside `np.stack` stands for a loop).",
        "for i in range(n):\n    out[i] = A[i] * 2";
    UNSUPPORTED_EXPRESSION = "NP004", "unsupported expression",
        "Expressions are NumPy calls, attributes of arrays (`.T`, `.shape`), arithmetic, comparisons, subscripts, tuples and lists of those. Lambdas, generator expressions, conditional expressions, f-strings, chained comparisons and the like are refused.",
        "return np.sum(a for a in A)";
    UNKNOWN_FUNCTION = "NP005", "unknown function or method",
        "Only the NumPy functions of the STENSO grammar and a few neighbours are understood (see src/numpy/README.md): dot, matmul, tensordot, inner, outer, sum, prod, max, min, mean, diag, trace, transpose, stack, where, exp, log, sqrt, abs, tanh, power, square, maximum, minimum, add, subtract, multiply, divide, less, greater, reshape, expand_dims, full, zeros, ones.",
        "return np.linalg.inv(A)";
    UNDEFINED_NAME = "NP006", "name is not defined",
        "Every name must be a parameter, an earlier assignment, a comprehension variable, or the NumPy module (`np`, or whatever the file imports numpy as).",
        "return A + B   # B is not a parameter";
    SHAPE_MISMATCH = "NP007", "shapes do not fit",
        "Operands must broadcast (equal extents, or one of them 1), contracted axes must have equal extents, and axes must exist. Symbolic extents are compared as written: `n` and `m` are different even if they happen to be equal at run time.",
        "# tenslift: A: f64[n, m], B: f64[m, n]\ndef f(A, B):\n    return A + B";
    MISSING_SHAPE = "NP008", "parameter without a shape",
        "Every parameter needs a dtype and a shape: in a `# tenslift:` comment directly above the `def` (`# tenslift: A: f64[n, k], a: f64`), or with `--shapes A=n,k`.",
        "def f(A):\n    return A * 2";
    BAD_SIGNATURE = "NP009", "malformed shape signature",
        "A signature lists `name: dtype[dim, ...]` (or `name: dtype` for a scalar) separated by commas; a dtype is f64 or f32 (float64, float32), a dim a size name or a non-negative integer. `--shapes` takes `NAME=dim,dim[:dtype]`.",
        "# tenslift: A: double[n m]";
    UNSUPPORTED_DTYPE = "NP010", "unsupported value type",
        "Arrays and scalars are f64 or f32. Booleans (from comparisons) may only be `np.where` conditions; strings, None and integer arrays are refused.",
        "return (A > 0)";
    BAD_ARGUMENT = "NP011", "bad argument",
        "Arguments that shape the computation (axis, axes, shape, exponent of a stack position) must be constants or sizes; the number and names of arguments must be NumPy's.",
        "return np.sum(A, axis=k)   # k is an array";
    NOT_AFFINE = "NP012", "index or extent is not affine in the sizes",
        "Slice bounds, indices and extents must be affine in the size names (`n - 1`, `2*k`); a slice with a step needs a constant length, and a reshape may only add or drop axes of extent 1 (the loop IR has no subscript for a merged axis of symbolic extents).",
        "return np.reshape(A, (n * m,))";
    BAD_RETURN = "NP013", "the function must end by returning arrays",
        "The last statement returns an array, a scalar, or a tuple of them; nothing may follow it, and the function may not assign into its parameters.",
        "def f(A):\n    A[0] = 1\n    return A";
    UNSUPPORTED_SIGNATURE = "NP014", "unsupported function signature",
        "Parameters are plain positional names: no defaults, `*args`, keyword-only parameters or decorators (a jit decorator would change what runs).",
        "@jax.jit\ndef f(A, B=None): ...";
}

/// One located diagnostic.
pub fn error(code: Code, loc: Loc, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, Some(loc), message)
}

/// A file-level diagnostic (no position).
pub fn file_error(code: Code, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, None, message)
}

/// Diagnostics of one file.
pub fn of_file(file: &str, items: Vec<Diagnostic>) -> Diagnostics {
    Diagnostics {
        file: file.to_string(),
        items,
    }
}

/// The Markdown reference of every code (the contents of DIAGNOSTICS.md).
pub fn codes_markdown() -> String {
    let mut out = String::from(
        "# tenslift optimize diagnostics\n\n\
         Generated from `src/numpy/diagnostics.rs` (the `CODES` table); the unit test \
         `diagnostics_md_is_current` fails when this file is stale (regenerate with \
         `UPDATE_DIAGNOSTICS=1 cargo test --release --lib numpy::diagnostics`).\n\n\
         Every refusal is printed like clang's errors: \
         `prog.py:line:col: error[NP0xx]: message`, then the source line and a caret.\n\n",
    );
    for c in CODES {
        let _ = write!(
            out,
            "## {} — {}\n\n{}\n\nExample:\n\n```python\n{}\n```\n\n",
            c.id, c.summary, c.explanation, c.example
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/numpy/DIAGNOSTICS.md");
        let expected = codes_markdown();
        if std::env::var_os("UPDATE_DIAGNOSTICS").is_some() {
            std::fs::write(path, &expected).expect("write DIAGNOSTICS.md");
        }
        let actual = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            actual == expected,
            "src/numpy/DIAGNOSTICS.md is stale: run UPDATE_DIAGNOSTICS=1 cargo test --release --lib numpy::diagnostics"
        );
    }

    #[test]
    fn codes_are_unique_and_numbered_in_order() {
        let ids: Vec<&str> = CODES.iter().map(|c| c.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted);
    }
}
