//! TensIR: the tensor language that tenslift lifts C into. Owns the IR, its
//! textual syntax, the shape and type checker, a reference interpreter and
//! the emitters for NumPy, JAX, PyTorch and StableHLO. Takes TensIR programs
//! (built by the synthesizer or parsed from text); hands on checked programs
//! and the source text of each target.
//!
//! Architecture invariant: this crate knows nothing of C or libclang.
