//! Why a check could not be carried out at all (as opposed to a verdict).

/// A problem with the question asked, not with the answer: the kernel and
/// the program do not describe the same interface, a size is missing, or one
/// side cannot run at the requested sizes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A size parameter (of the kernel or of the program) has no value.
    #[error("size parameter `{0}` has no value; pass it in the sizes")]
    MissingSize(String),
    /// The kernel's and the program's parameters do not correspond.
    #[error("the program does not match the kernel's interface: {0}")]
    Interface(String),
    /// The C kernel cannot run at these sizes (an access outside the
    /// program's declared array, an unknown extent, a loop that never ends).
    #[error("the C kernel cannot be evaluated at these sizes: {0}")]
    Kernel(String),
    /// The TensIR program cannot run at these sizes (a slice out of bounds,
    /// a max over an empty set).
    #[error("the program cannot be evaluated at these sizes: {0}")]
    Program(String),
    /// The unrolled problem is larger than the bounded check allows.
    #[error("the problem is too large for a bounded check: {0}")]
    TooLarge(String),
}

/// How an evaluation stops early (internal): a hard error, a construct the
/// encoding does not support (the check answers Unknown and names it), or a
/// concrete run reaching behaviour C leaves undefined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Abort {
    Error(VerifyError),
    Unsupported(String),
    Undefined(String),
}

impl From<VerifyError> for Abort {
    fn from(e: VerifyError) -> Abort {
        Abort::Error(e)
    }
}
