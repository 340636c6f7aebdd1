//! The C frontend: parses a C file with libclang 19 and extracts each kernel
//! (a function containing a loop nest, or a `#pragma scop` region) into the
//! loop IR of [`ir`]. Takes a path plus clang-style flags (`-I`, `-D`,
//! `-std`, or a compile_commands.json); hands on a [`ir::TranslationUnit`],
//! or a list of located diagnostics explaining every construct it refused.
//!
//! Architecture invariant: this crate knows nothing of tensors, specs or
//! targets; it only says what the C does, with C's types and semantics.

pub mod affine;
pub mod delinearize;
pub mod diagnostics;
pub mod ir;
pub mod libclang;
pub mod reader;
pub mod syntax;
