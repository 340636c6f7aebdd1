//! Symbolic execution of a TensIR program into the spec representation.
//!
//! A candidate tensor program is accepted when it computes, at concrete
//! sizes, exactly the expressions the C kernel's [`Spec`] holds. [`execute`]
//! runs a [`Program`] over the same fresh symbols the C spec uses (an array
//! parameter `A` becomes `A[i,j]`, a scalar `alpha` the symbol `alpha`, a size
//! parameter its value), so the two compare element by element with
//! [`equal_to_spec`]. Semantics follow the C spec's conventions: arithmetic is
//! exact over the reals (f32 rounding is not modelled), integers of at least
//! 32 bits never overflow, narrower integers wrap at every operation (as
//! their C counterparts wrap at the conversion back), `trunc_div`/`rem`/`cast`
//! keep their C meaning. Every node is evaluated once per execution: results
//! are memoised on the (Arc-shared, hash-cached) TensIR node, and an
//! [`Executor`] keeps the values of parameter-only subexpressions across the
//! candidates of a search.
//!
//! ```
//! use tenslift::spec::tensir::execute;
//! use tenslift_targets::parse_program;
//! let text = "func axpy(n: size, a: f64, x: f64[n], y: inout f64[n]) {\n  y = add(mul(a, x), y);\n}\n";
//! let program = parse_program("axpy.tensir", text).unwrap();
//! let sizes = [("n".to_string(), 2)].into_iter().collect();
//! let spec = execute(&program, &sizes).unwrap();
//! let y = &spec.output("y").unwrap().value;
//! assert_eq!(y.elems()[1].to_string(), "a*x[1] + y[1]");
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{self as tensir, Access, DType, ParamKind, Program, Stmt};
use thiserror::Error;

use super::{choose_second_sizes, choose_sizes, spec_of_kernel, Sizes, Spec, SpecError};
use crate::algebra::{Symbol, Tensor, Value};
use layout::{broadcast_to, checked_len, slice_offsets, tensor};
use machine::Machine;

mod extrema;
mod layout;
mod machine;
mod semantics;

pub use extrema::canonical_extrema;
pub use semantics::float_literal_value;

/// Why a TensIR program could not be executed symbolically.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TensirSpecError {
    #[error("no value for size parameter `{name}`")]
    MissingSize { name: String },
    #[error("dimension `{dim}` cannot be evaluated at sizes {sizes}: {reason}")]
    BadDim {
        dim: String,
        sizes: String,
        reason: String,
    },
    #[error("`{name}` is not bound (not a parameter or an earlier `let`)")]
    Unbound { name: String },
    #[error("`{name}` is not an array parameter the program may write")]
    NotWritable { name: String },
    #[error("division by the constant zero in `{op}`")]
    DivisionByZero { op: String },
    #[error("slice {start}:{stop}:{step} is out of bounds for an axis of length {len}")]
    SliceOutOfBounds {
        start: i64,
        stop: i64,
        step: i64,
        len: usize,
    },
    #[error("index {index} is out of bounds for an axis of length {len}")]
    IndexOutOfBounds { index: i64, len: usize },
    #[error("`{op}` produces {elements} elements, over the limit of {limit}")]
    TooManyElements {
        op: String,
        elements: usize,
        limit: usize,
    },
    #[error("`{op}` has operands of shapes {shapes:?} that do not fit at these sizes")]
    ShapeMismatch { op: String, shapes: Vec<Vec<usize>> },
    #[error("`{op}` over an empty set of elements")]
    EmptyReduction { op: String },
    #[error("the C kernel's spec: {0}")]
    CSpec(#[from] SpecError),
    #[error("the program is malformed: {0}")]
    Malformed(String),
    #[error("the program's loops run more than {limit} statements at these sizes")]
    TooManyStatements { limit: usize },
    #[error("`{op}` would expand {terms} term pairs, over the limit of {limit}")]
    ExpressionTooLarge {
        op: String,
        terms: usize,
        limit: usize,
    },
}

type Result<T> = std::result::Result<T, TensirSpecError>;

/// One output of a program: an array it may write (final values), or
/// `return`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramOutput {
    pub name: String,
    pub dtype: DType,
    pub value: Tensor,
}

/// What a TensIR program computes at one size tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramSpec {
    pub program: String,
    pub sizes: Sizes,
    /// `out`/`inout` arrays in parameter order, then `return`.
    pub outputs: Vec<ProgramOutput>,
}

impl ProgramSpec {
    pub fn output(&self, name: &str) -> Option<&ProgramOutput> {
        self.outputs.iter().find(|o| o.name == name)
    }
}

/// The outcome of comparing a program's spec with a C spec.
#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    Equal,
    /// The first output element (row-major, outputs in C order) that differs.
    Differs {
        output: String,
        index: Vec<usize>,
        program: Value,
        c: Value,
    },
    ShapeMismatch {
        output: String,
        program: Vec<usize>,
        c: Vec<usize>,
    },
    /// The C kernel changes this output; the program does not produce it.
    MissingOutput {
        output: String,
    },
    /// The program changes an array the C kernel leaves alone.
    UnexpectedOutput {
        output: String,
    },
}

impl Comparison {
    pub fn is_equal(&self) -> bool {
        matches!(self, Comparison::Equal)
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Comparison::Equal => write!(f, "equal"),
            Comparison::Differs {
                output,
                index,
                program,
                c,
            } => {
                let idx: Vec<String> = index.iter().map(usize::to_string).collect();
                let element = if idx.is_empty() {
                    output.clone()
                } else {
                    format!("{output}[{}]", idx.join(","))
                };
                write!(
                    f,
                    "{element} differs: program computes {program}, C computes {c}"
                )
            }
            Comparison::ShapeMismatch { output, program, c } => write!(
                f,
                "{output} has shape {program:?} in the program but {c:?} in C"
            ),
            Comparison::MissingOutput { output } => {
                write!(f, "the C kernel writes `{output}`; the program does not")
            }
            Comparison::UnexpectedOutput { output } => {
                write!(f, "the program changes `{output}`; the C kernel does not")
            }
        }
    }
}

/// The initial contents of an array parameter: the symbols the C spec gives
/// it. A rank-0 array is C's `s[0]` (the frontend refuses `*s`).
fn initial_symbols(name: &str, shape: &[usize]) -> Tensor {
    if shape.is_empty() {
        Tensor::scalar(Symbol::element(name, &[0]).to_expr())
    } else {
        Tensor::of_symbols(name, shape, false)
    }
}

/// The elements of `value` a slice selects, its bounds evaluated at
/// `sizes` (the TensIR slice semantics: a store through `items` writes
/// exactly these elements).
pub fn slice_at(value: &Tensor, items: &[SliceItem], sizes: &Sizes) -> Result<Tensor> {
    let eval = |d: &tenslift_targets::Dim| -> Result<i64> {
        d.eval(&|s| sizes.get(s).copied())
            .map_err(|e| TensirSpecError::BadDim {
                dim: d.to_string(),
                sizes: super::format_sizes(sizes),
                reason: e.to_string(),
            })
    };
    let (offsets, shape) = slice_offsets(value.shape(), items, &eval)?;
    let elems = offsets.iter().map(|&o| value.elems()[o].clone()).collect();
    tensor(shape, elems)
}

/// Most node values an [`Executor`] keeps between executions before it
/// starts afresh (bounds its memory over a long search).
const SHARED_CACHE_LIMIT: usize = 200_000;

/// Executes many programs at one size tuple, sharing work between them: a
/// subexpression that reads only unmodified parameters (`matmul(A, B)`,
/// `transpose(A)`) has the same value in every program, so it is computed
/// once for all candidates of a search.
pub struct Executor {
    sizes: Sizes,
    shared: HashMap<tensir::Expr, Tensor>,
    initial: HashMap<(Arc<str>, Vec<usize>), Tensor>,
}

impl Executor {
    pub fn new(sizes: Sizes) -> Executor {
        Executor {
            sizes,
            shared: HashMap::new(),
            initial: HashMap::new(),
        }
    }

    pub fn sizes(&self) -> &Sizes {
        &self.sizes
    }

    /// Executes `program` symbolically at this executor's sizes.
    pub fn execute(&mut self, program: &Program) -> Result<ProgramSpec> {
        if self.shared.len() > SHARED_CACHE_LIMIT {
            self.shared.clear();
        }
        let shared = std::mem::take(&mut self.shared);
        let initial = std::mem::take(&mut self.initial);
        let mut machine = Machine::new(&self.sizes, shared, initial);
        let outcome = run(&mut machine, program);
        self.shared = std::mem::take(&mut machine.shared);
        self.initial = std::mem::take(&mut machine.initial);
        outcome
    }
}

/// Executes `program` symbolically at `sizes` (every size parameter bound).
pub fn execute(program: &Program, sizes: &Sizes) -> Result<ProgramSpec> {
    Executor::new(sizes.clone()).execute(program)
}

fn run<'p>(machine: &mut Machine<'p>, program: &'p Program) -> Result<ProgramSpec> {
    let sizes = machine.sizes;
    for p in &program.params {
        let value = match &p.kind {
            ParamKind::Size => {
                let n = sizes
                    .get(&*p.name)
                    .ok_or_else(|| TensirSpecError::MissingSize {
                        name: p.name.to_string(),
                    })?;
                Tensor::scalar(Value::int(*n))
            }
            // An integer the C spec treats as a size is its value there too.
            ParamKind::Scalar(_) => Tensor::scalar(match sizes.get(&*p.name) {
                Some(n) => Value::int(*n),
                None => Symbol::scalar(&p.name).to_expr(),
            }),
            ParamKind::Array { shape, .. } => {
                let shape = machine.shape(shape)?;
                checked_len(&p.name, &shape)?;
                let key = (Arc::clone(&p.name), shape);
                match machine.initial.get(&key) {
                    Some(t) => t.clone(),
                    None => {
                        let t = initial_symbols(&key.0, &key.1);
                        machine.initial.insert(key, t.clone());
                        t
                    }
                }
            }
        };
        // A rank-0 array and a scalar of one name and type have different
        // symbols (`s[0]`, `s`): their nodes are never shared.
        if !matches!(&p.kind, ParamKind::Array { shape, .. } if shape.is_empty()) {
            machine.pristine.insert(&p.name);
        }
        machine.env.insert(&p.name, value);
    }
    for stmt in program.statements() {
        if let Stmt::Loop { var, .. } = stmt {
            machine.loop_vars.insert(var);
        }
    }
    let mut returned = None;
    let mut budget = MAX_EXECUTED_STATEMENTS;
    exec_block(machine, program, &program.body, &mut returned, &mut budget)?;
    let mut outputs = Vec::new();
    for p in &program.params {
        if let ParamKind::Array { dtype, access, .. } = &p.kind {
            if access.is_written() {
                let value =
                    machine
                        .env
                        .get(&*p.name)
                        .cloned()
                        .ok_or_else(|| TensirSpecError::Unbound {
                            name: p.name.to_string(),
                        })?;
                outputs.push(ProgramOutput {
                    name: p.name.to_string(),
                    dtype: *dtype,
                    value,
                });
            }
        }
    }
    if let Some((dtype, value)) = returned {
        outputs.push(ProgramOutput {
            name: "return".into(),
            dtype,
            value,
        });
    }
    Ok(ProgramSpec {
        program: program.name.to_string(),
        sizes: sizes.clone(),
        outputs,
    })
}

/// Most statements one symbolic execution runs (loops unrolled); beyond it
/// the execution is refused rather than left to run for minutes.
const MAX_EXECUTED_STATEMENTS: usize = 100_000;

/// Executes statements in order; a loop runs its body once per value of its
/// variable (an `i64` value and a dim symbol inside the body).
fn exec_block<'p>(
    machine: &mut Machine<'p>,
    program: &'p Program,
    stmts: &'p [Stmt],
    returned: &mut Option<(DType, Tensor)>,
    budget: &mut usize,
) -> Result<()> {
    for stmt in stmts {
        *budget = budget
            .checked_sub(1)
            .ok_or(TensirSpecError::TooManyStatements {
                limit: MAX_EXECUTED_STATEMENTS,
            })?;
        match stmt {
            Stmt::Let { name, value } => {
                let v = machine.eval(value)?;
                machine.bind(name, v);
            }
            Stmt::Var { name, ty } => {
                let shape = machine.shape(&ty.shape)?;
                let len = checked_len(name, &shape)?;
                let zeros = tensor(shape, vec![Value::zero(); len])?;
                machine.rebind(name, zeros);
            }
            Stmt::Store {
                target,
                region,
                value,
            } => {
                let v = machine.eval(value)?;
                store(machine, program, target, region.as_deref(), v)?;
            }
            Stmt::Return(value) => {
                let v = machine.eval(value)?;
                *returned = Some((value.dtype(), v));
            }
            Stmt::Loop {
                var,
                start,
                stop,
                body,
            } => {
                let (first, end) = (machine.dim(start)?, machine.dim(stop)?);
                for t in first..end {
                    machine.loop_values.insert(var, t);
                    machine.bind(var, Tensor::scalar(Value::int(t)));
                    // Values memoised in the last iteration read the old
                    // value of the variable or its slices.
                    machine.memo.clear();
                    exec_block(machine, program, body, returned, budget)?;
                }
                machine.loop_values.remove(&**var);
                machine.env.remove(&**var);
                machine.memo.clear();
            }
        }
    }
    Ok(())
}

/// Writes `value` into the whole of array `target` or into a region of it.
fn store<'p>(
    machine: &mut Machine<'p>,
    program: &'p Program,
    target: &str,
    region: Option<&[SliceItem]>,
    value: Tensor,
) -> Result<()> {
    let not_writable = || TensirSpecError::NotWritable {
        name: target.to_string(),
    };
    // A written array parameter, or a `var` (not one of the parameters).
    let name: &'p str = match program.param(target) {
        Some(p) if p.access().is_some_and(|a| a != Access::In) => &p.name,
        Some(_) => return Err(not_writable()),
        None => program
            .vars()
            .into_iter()
            .find(|(n, _)| &***n == target)
            .map(|(n, _)| &**n)
            .ok_or_else(not_writable)?,
    };
    let current = machine.env.get(target).cloned().ok_or_else(not_writable)?;
    let Some(items) = region else {
        let value = broadcast_to(&value, current.shape(), "store")?;
        machine.rebind(name, value);
        return Ok(());
    };
    let (offsets, shape) = slice_offsets(current.shape(), items, &|d| machine.dim(d))?;
    let value = broadcast_to(&value, &shape, "store")?;
    let mut elems = current.elems().to_vec();
    for (&o, v) in offsets.iter().zip(value.elems()) {
        elems[o] = v.clone();
    }
    let updated = tensor(current.shape().to_vec(), elems)?;
    machine.rebind(name, updated);
    Ok(())
}

/// Compares a program's spec with the C kernel's spec at the same sizes:
/// every output the C kernel has must be produced with equal elements, and
/// the program may change no other array.
pub fn equal_to_spec(program_spec: &ProgramSpec, c_spec: &Spec) -> Comparison {
    for c_out in &c_spec.outputs {
        let Some(p_out) = program_spec.output(&c_out.name) else {
            // An output the C kernel leaves at its initial values needs no
            // write in the program.
            let untouched = initial_symbols(&c_out.name, c_out.value.shape());
            if c_out.value == untouched {
                continue;
            }
            return Comparison::MissingOutput {
                output: c_out.name.clone(),
            };
        };
        if p_out.value.shape() != c_out.value.shape() {
            // A rank-0 array is C's one-element array `s[0]`.
            let both_single = p_out.value.len() == 1 && c_out.value.len() == 1;
            if !both_single {
                return Comparison::ShapeMismatch {
                    output: c_out.name.clone(),
                    program: p_out.value.shape().to_vec(),
                    c: c_out.value.shape().to_vec(),
                };
            }
        }
        for (offset, (p, c)) in p_out
            .value
            .elems()
            .iter()
            .zip(c_out.value.elems())
            .enumerate()
        {
            if p != c && canonical_extrema(p) != canonical_extrema(c) {
                return Comparison::Differs {
                    output: c_out.name.clone(),
                    index: c_out.value.index_of(offset),
                    program: p.clone(),
                    c: c.clone(),
                };
            }
        }
    }
    for p_out in &program_spec.outputs {
        if c_spec.output(&p_out.name).is_none() {
            let untouched = initial_symbols(&p_out.name, p_out.value.shape());
            if p_out.value != untouched {
                return Comparison::UnexpectedOutput {
                    output: p_out.name.clone(),
                };
            }
        }
    }
    Comparison::Equal
}

/// Computes both specs at `sizes` and compares them.
pub fn check_program_against_kernel(
    program: &Program,
    kernel: &Kernel,
    sizes: &Sizes,
) -> Result<Comparison> {
    let c_spec = spec_of_kernel(kernel, sizes)?;
    let program_spec = execute(program, sizes)?;
    Ok(equal_to_spec(&program_spec, &c_spec))
}

/// The acceptance test of a synthesized candidate: equal to the C spec at
/// the chosen sizes, at the second size tuple (so that a program fitted to
/// one size tuple is not accepted) and, where its spec can be built, at a
/// third tuple off every line through the first two (so that a size
/// expression fitted through both is not either; see
/// [`super::sizes::choose_third_sizes`]). Returns the first comparison that
/// is not [`Comparison::Equal`], with the sizes it was made at.
pub fn check_program_at_both_sizes(
    program: &Program,
    kernel: &Kernel,
) -> Result<(Comparison, Sizes)> {
    let first = choose_sizes(kernel, &Sizes::new())?;
    let second = choose_second_sizes(kernel, &first)?;
    let third = super::sizes::choose_third_sizes(kernel, &first, &second);
    let mut last = first.clone();
    for sizes in [first, second] {
        let outcome = check_program_against_kernel(program, kernel, &sizes)?;
        if !outcome.is_equal() {
            return Ok((outcome, sizes));
        }
        last = sizes;
    }
    // The third tuple refutes sizes fitted through the first two; where its
    // spec cannot be built (too large), the two checks stand.
    if let Some(third) = third {
        if let Ok(outcome) = check_program_against_kernel(program, kernel, &third) {
            if !outcome.is_equal() {
                return Ok((outcome, third));
            }
        }
    }
    Ok((Comparison::Equal, last))
}

/// [`check_program_at_both_sizes`], except that where the C spec is too
/// large to build at those tuples (a division and square-root recurrence
/// such as gramschmidt's grows exponentially in the normal form), the
/// program is compared at the smaller tuples the whole-kernel search falls
/// back to ([`super::spec_at_chosen_sizes`], [`super::spec_at_second_sizes`]).
pub fn check_program_at_acceptance_sizes(
    program: &Program,
    kernel: &Kernel,
) -> Result<(Comparison, Sizes)> {
    match check_program_at_both_sizes(program, kernel) {
        Err(TensirSpecError::CSpec(e)) if super::is_too_large(&e) => {
            let first = super::spec_at_chosen_sizes(kernel, &Sizes::new())?;
            let second = super::spec_at_second_sizes(kernel, &first.sizes)?;
            let mut last = Sizes::new();
            for spec in [first, second] {
                let comparison = equal_to_spec(&execute(program, &spec.sizes)?, &spec);
                if !comparison.is_equal() {
                    return Ok((comparison, spec.sizes));
                }
                last = spec.sizes;
            }
            Ok((Comparison::Equal, last))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests;
