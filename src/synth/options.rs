//! What a lift takes ([`SynthOptions`]) and gives back ([`Lifted`],
//! [`SynthError`]), shared by the driver and every tactic.

use std::time::Duration;

use tenslift_targets::Program;
use thiserror::Error;

use super::budget::Limits;
use super::cost::CostModel;
use super::search::{Stats, Timings};
use crate::spec::tensir::TensirSpecError;
use crate::spec::SpecError;

/// Why a kernel could not be lifted.
#[derive(Debug, Error)]
pub enum SynthError {
    #[error("the kernel's signature has no TensIR form: {0}")]
    Signature(String),
    #[error("spec: {0}")]
    Spec(#[from] SpecError),
    /// The user's `--timeout` passed (never a search limit).
    #[error("timeout after {0:.1} s")]
    Timeout(f64),
    /// No tactic solved the output; `tried` says what each one did.
    #[error("no program found for output `{output}` ({tried})")]
    NotFound { output: String, tried: String },
    #[error("the candidate is not a valid program: {0}")]
    Invalid(String),
    #[error("the candidate does not generalise: {0}")]
    Rejected(String),
    #[error("checking the candidate: {0}")]
    Check(#[from] TensirSpecError),
}

/// How to search.
#[derive(Clone, Debug)]
pub struct SynthOptions {
    /// The user's outer safety limit (`--timeout`): passing it is an
    /// error, never a search limit. The search's limits are [`Limits`].
    pub timeout: Duration,
    /// Return the first solution instead of the cheapest one.
    pub first: bool,
    /// Depth of the top-down search (sketch nesting above the library).
    pub depth: u32,
    /// Most stubs in one library.
    pub library_limit: usize,
    /// The search's work limits.
    pub limits: Limits,
    /// Prices candidates (analytic unless a calibration file is given).
    pub model: CostModel,
}

impl Default for SynthOptions {
    fn default() -> SynthOptions {
        SynthOptions {
            timeout: Duration::from_secs(60),
            first: false,
            depth: 3,
            library_limit: 20_000,
            limits: Limits::default(),
            model: CostModel::Analytic,
        }
    }
}

/// The outcome of lifting one kernel whole.
#[derive(Debug)]
pub struct Lifted {
    pub program: Option<Program>,
    pub cost: f64,
    /// The program's asymptotic complexity (`cost::complexity_degree`).
    pub complexity: Option<u32>,
    pub stats: Stats,
    pub timings: Timings,
    pub error: Option<SynthError>,
    /// Outputs solved, of all outputs (a failure after some are solved is
    /// a partial result).
    pub solved: usize,
    pub outputs: usize,
}

impl Lifted {
    /// A failure before any output was solved.
    pub fn failed(error: SynthError, outputs: usize) -> Lifted {
        Lifted {
            program: None,
            cost: 0.0,
            complexity: None,
            stats: Stats::default(),
            timings: Timings::default(),
            error: Some(error),
            solved: 0,
            outputs,
        }
    }

    /// A whole program of this cost, every output solved.
    pub fn whole(program: Program, cost: f64, outputs: usize) -> Lifted {
        Lifted {
            complexity: super::cost::complexity_degree(&program),
            program: Some(program),
            cost,
            stats: Stats::default(),
            timings: Timings::default(),
            error: None,
            solved: outputs,
            outputs,
        }
    }
}

/// Why a kernel could not be lifted with loops kept.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    // Boxed: the wrapped errors are large and this one travels through
    // every recursive call.
    #[error("{0}")]
    Synth(Box<SynthError>),
    #[error("spec: {0}")]
    Spec(Box<SpecError>),
    #[error("checking a statement: {0}")]
    Check(Box<TensirSpecError>),
    #[error("statement storing into `{array}` has no tensor form: {reason}")]
    Statement { array: String, reason: String },
    #[error("{0}")]
    Unsupported(String),
    /// The kept loops, and what carries each one's dependency where the
    /// analysis names it (`; loop `i`: …`).
    #[error("every statement needs its loops kept ({loops}): nothing vectorises{why}")]
    NothingVectorised { loops: String, why: String },
    #[error("no loop needed keeping")]
    NothingKept,
    #[error("partial lifting not tried: no loop carries a dependency")]
    NotTried,
}

impl From<SynthError> for PartialError {
    fn from(e: SynthError) -> PartialError {
        PartialError::Synth(Box::new(e))
    }
}

impl From<SpecError> for PartialError {
    fn from(e: SpecError) -> PartialError {
        PartialError::Spec(Box::new(e))
    }
}

impl From<TensirSpecError> for PartialError {
    fn from(e: TensirSpecError) -> PartialError {
        PartialError::Check(Box::new(e))
    }
}

/// A kernel lifted with some loops kept.
#[derive(Debug)]
pub struct PartialLift {
    pub program: Program,
    pub cost: f64,
    pub stats: Stats,
    pub timings: Timings,
    /// The C iterators kept as loops, outermost first, in program order.
    pub kept_loops: Vec<String>,
    /// Whether any statement became a whole-slice (vectorised) operation;
    /// false when every kept loop nest ends in single-element stores.
    pub vectorised: bool,
}
