//! Shared by the fuzzing tests (`tests/fuzz.rs`, `tests/fuzz_differential.rs`):
//! a seeded random source, a grammar of valid C kernels with shrinking, the
//! child-process runner that classifies panics, signals and hangs, and the
//! whole-pipeline differential check.

// Each test crate uses its own subset.
#![allow(dead_code)]

pub mod campaign;
pub mod diff;
pub mod kernel;
pub mod mutate;
pub mod proc;
pub mod rng;
