//! TensIR: the tensor language that tenslift lifts C into. Owns the IR, its
//! textual syntax, the shape and type checker, a reference interpreter and
//! the emitters for NumPy, JAX, PyTorch and StableHLO. Takes TensIR programs
//! (built by the synthesizer or parsed from text); hands on checked programs
//! and the source text of each target.
//!
//! Architecture invariant: this crate knows nothing of C or libclang, and
//! does no I/O except in [`npy`] (`.npy` files) and [`runner`] (running
//! generated code in Python).
//!
//! ```
//! use tenslift_targets::{parse_program, emit, Target, interp};
//! let text = "func axpy(n: size, a: f64, x: f64[n], y: inout f64[n]) {\n  y = add(mul(a, x), y);\n}\n";
//! let program = parse_program("axpy.tensir", text).unwrap();
//! let numpy = emit(&program, Target::Numpy, &Default::default()).unwrap();
//! assert!(numpy.contains("def axpy(n, a, x, y):"));
//! ```

pub mod build;
pub mod c_semantics;
pub mod diag;
pub mod dim;
pub mod dtype;
pub mod emit;
pub mod expr;
pub mod interp;
pub mod layout;
pub mod narrow;
pub mod npy;
pub mod ops;
pub mod program;
pub mod runner;
pub mod solvers;
pub mod symmetry;
pub mod syntax;

pub use diag::{Diagnostic, Pos};
pub use dim::{Dim, DimError};
pub use dtype::{DType, Lit};
pub use emit::{emit, emit_dispatch, Dispatch, EmitError, EmitOptions, Target};
pub use expr::{Expr, Ty, TypeError};
pub use ops::{BinaryOp, EinsumLayout, EinsumSpec, Op, ReduceKind, SliceItem, UnaryOp};
pub use program::{
    map_values, Access, DeclaredExtent, Meta, Param, ParamKind, Program, ProgramError, Requirement,
    Stmt,
};
pub use symmetry::{apply_symmetry, SymmetryReport};
pub use syntax::{parse_program, print_expr, print_program, print_slice};

/// The tenslift version written into generated code headers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
