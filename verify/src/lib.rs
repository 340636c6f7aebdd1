//! Verification: proves a lifted TensIR program equal to the C loop nest it
//! came from. Takes the frontend's loop IR and a TensIR program; hands on a
//! verdict per check (Z3 bounded, Z3 unbounded with loop invariants,
//! differential against compiled C) with counterexamples and reasons.
//!
//! Architecture invariant: verification never trusts the algebra core of the
//! synthesizer; it re-derives the semantics of both sides from their IRs.
