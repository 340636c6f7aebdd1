//! The bounded check: at concrete sizes, is every output of the lifted
//! TensIR program equal to the C kernel's, for all inputs?
//!
//! Both sides are interpreted over Z3 terms from the same input constants
//! (`kernel_eval` with C semantics, `program_eval` with TensIR semantics).
//! Floats are exact reals, integers exact with C's truncating division,
//! wrap-around conversions and undefined behaviour as preconditions;
//! `sqrt`/`exp`/`log`/`tanh`/`pow`/`sin`/`cos`/`round`/`floor`/`ceil` are
//! uninterpreted functions shared by
//! both sides (with `assume_in_domain`, the C's `log` and `sqrt` arguments
//! are assumed positive and the real functions' facts there are given:
//! `symbolic::SymDomain::domain_facts`). Then, element by element in
//! output order, Z3 is asked for inputs that satisfy the C's preconditions and make the element differ.
//! Unsatisfiable everywhere is a pass; a model is a counterexample, which
//! is replayed concretely and, when uninterpreted functions are involved,
//! only reported as a failure if the replay confirms it.
//!
//! Integer-only queries that multiply unknowns (nonlinear arithmetic, where
//! Z3's integer solver may give up) are re-posed exactly over bit-vectors
//! wide enough that nothing overflows ([`bitvec`]) and decided by
//! bit-blasting; the pass summary names the width. Every solver call is
//! bounded by Z3's resource limit (`rlimit`, derived from the timeout) so a
//! verdict does not depend on how loaded the machine is; the wall clock
//! only backs it up.
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! use tenslift_frontend::{extract, Options};
//! use tenslift_verify::bounded::{check, BoundedOptions};
//!
//! let tu = extract("benchmarks/polybench/gemm.c", &Options::default()).unwrap();
//! let text = std::fs::read_to_string("gemm.tensir").unwrap();
//! let program = tenslift_targets::parse_program("gemm.tensir", &text).unwrap();
//! let sizes = BTreeMap::from([("ni".into(), 3), ("nj".into(), 4), ("nk".into(), 5)]);
//! let result = check(&tu.kernels[0], &program, &sizes, &BoundedOptions::default()).unwrap();
//! println!("{result}");
//! ```

mod bitvec;
mod linear;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use tenslift_frontend::ir::Kernel;
use tenslift_targets::{DType, Program};
use z3::ast::Bool;
use z3::{Model, SatResult, Solver};

use crate::domain::{Domain, ElemKind};
use crate::error::{Abort, VerifyError};
use crate::interface::{self, Entry, Interface};
use crate::kernel_eval::{self, UNINITIALISED_PREFIX};
use crate::program_eval::{self, Tensor};
use crate::replay::replay;
use crate::report::{
    sizes_text, ArrayValue, BoundedResult, Counterexample, Difference, Stats, Value,
};
use crate::symbolic::{SymDomain, SymVal, Term};

/// How hard to try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundedOptions {
    /// The solver effort of the whole check, as time on an unloaded
    /// machine: Z3's resource limit is [`RLIMIT_PER_MS`] units per
    /// millisecond of it. The wall clock stops the check at
    /// [`WALL_CLOCK_FACTOR`] times this (only a loaded machine gets there). Building the terms is not
    /// counted (it is linear in the unrolled size).
    pub timeout_ms: u64,
    /// The user's `--assume-in-domain`: every `log` and `sqrt` argument of
    /// the C (or NumPy input) is assumed positive, and the facts of the real
    /// functions there are given to Z3 (`sqrt(u)² = u`, `sqrt(u) >= 0`,
    /// `exp(log u) = u`, `exp(Σ cᵢ·log uᵢ + r) = Π uᵢ^cᵢ · exp(r)`).
    pub assume_in_domain: bool,
    /// Decide every query over the reals in a `z3` child process first,
    /// killed on time: Z3 4.8.12 ignores both its interrupt and its
    /// resource limit in some nonlinear real searches (a wrong
    /// gramschmidt program's query ran for minutes past both), which in
    /// this process would hang the check. A process per query costs about
    /// 30-150 ms, so it is for programs that may well be wrong: a user's
    /// `--program`, the check after an unbounded refutation.
    pub isolated: bool,
}

/// Z3 resource units per millisecond of `timeout_ms`: Z3 4.8 spends a few
/// thousand units per millisecond of CPU on the bounded queries (about
/// 4 700 on a 96-bit cube query), so the limit binds near the nominal time.
pub const RLIMIT_PER_MS: u64 = 2_000;

/// The wall-clock back-stop of a check, in multiples of `timeout_ms`.
pub const WALL_CLOCK_FACTOR: u32 = 1;

impl Default for BoundedOptions {
    fn default() -> BoundedOptions {
        BoundedOptions {
            timeout_ms: 10_000,
            assume_in_domain: false,
            isolated: false,
        }
    }
}

/// Checks `program` against `kernel` at `sizes` (every size parameter of
/// either side; any other integer scalar named here is pinned too).
///
/// `Err` means the question could not be posed: the interfaces do not
/// match, a size is missing, or a side cannot run at these sizes (an access
/// outside the program's declared shape, a slice out of bounds).
pub fn check(
    kernel: &Kernel,
    program: &Program,
    sizes: &BTreeMap<String, i64>,
    opts: &BoundedOptions,
) -> Result<BoundedResult, VerifyError> {
    let fitted = interface::kernel_for_program(kernel, program);
    let kernel = &fitted;
    let iface = interface::build(kernel, program, sizes)?;
    // The C is only defined where its regions fit its arrays.
    let size = |n: &str| sizes.get(n).copied();
    if let Some(r) = tenslift_targets::Requirement::first_violated(&program.meta.requires, &size) {
        return Err(VerifyError::Interface(format!(
            "the precondition `{r}` does not hold at sizes {}",
            sizes_text(sizes)
        )));
    }
    let _turn = crate::z3_turn::take();
    let mut cfg = z3::Config::new();
    cfg.set_model_generation(true);
    // One resource budget for every solver call of the check: Z3 counts
    // its own work, so the verdict does not depend on the machine's load.
    let rlimit = opts.timeout_ms.saturating_mul(RLIMIT_PER_MS);
    cfg.set_param_value("rlimit", &rlimit.to_string());
    z3::with_z3_config(&cfg, || {
        Checker {
            kernel,
            program,
            sizes,
            iface: &iface,
            started: Instant::now(),
            budget: Duration::from_millis(opts.timeout_ms) * WALL_CLOCK_FACTOR,
            stats: Stats::default(),
            bitvec_width: None,
            assume_in_domain: opts.assume_in_domain,
            isolated: opts
                .isolated
                .then(|| u32::try_from(rlimit).unwrap_or(u32::MAX)),
        }
        .run()
    })
}

/// One output position both sides define.
struct Compared {
    what: Place,
    dtype: DType,
    c: SymVal,
    program: SymVal,
}

#[derive(Clone)]
enum Place {
    Element { array: String, index: Vec<usize> },
    Scalar(String),
    Returned,
}

/// The inputs created for one parameter, for reading a model back.
struct Recorded {
    name: String,
    dtype: DType,
    shape: Vec<usize>,
    values: Vec<SymVal>,
}

struct Checker<'a> {
    kernel: &'a Kernel,
    program: &'a Program,
    sizes: &'a BTreeMap<String, i64>,
    iface: &'a Interface,
    started: Instant,
    /// Wall-clock back-stop of the whole check.
    budget: Duration,
    /// `Some(rlimit)` when real queries are decided in a `z3` child first
    /// ([`BoundedOptions::isolated`]), with that resource limit.
    isolated: Option<u32>,
    stats: Stats,
    /// The widest bit-vector encoding a query was decided with.
    bitvec_width: Option<u32>,
    assume_in_domain: bool,
}

/// The summary's mention of elements proved by linear normal form (none:
/// nothing, so summaries of kernels it does not help read as before).
fn normalised_text(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(", {n} equal by linear normal form"),
    }
}

fn element_name(name: &str, shape: &[usize], flat: usize) -> String {
    if shape.is_empty() {
        return name.to_string();
    }
    let mut idx = vec![0; shape.len()];
    let mut k = flat;
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            idx[i] = k % shape[i];
            k /= shape[i];
        }
    }
    let parts: Vec<String> = idx.iter().map(usize::to_string).collect();
    format!("{name}[{}]", parts.join(","))
}

fn unravel(mut k: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            idx[i] = k % shape[i];
            k /= shape[i];
        }
    }
    idx
}

impl Checker<'_> {
    fn finish(&mut self, result: impl FnOnce(Stats) -> BoundedResult) -> BoundedResult {
        self.stats.elapsed = self.started.elapsed();
        result(self.stats.clone())
    }

    fn unknown(&mut self, reason: String, candidate: Option<Box<Counterexample>>) -> BoundedResult {
        self.finish(|stats| BoundedResult::Unknown {
            reason,
            candidate,
            stats,
        })
    }

    fn run(mut self) -> Result<BoundedResult, VerifyError> {
        let mut dom = SymDomain::new();
        dom.assume_in_domain(self.assume_in_domain);
        let (compared, recorded) = match self.encode(&mut dom) {
            Ok(x) => x,
            Err(Abort::Error(e)) => return Err(e),
            Err(Abort::Unsupported(what)) | Err(Abort::Undefined(what)) => {
                return Ok(self.unknown(format!("not supported: {what}"), None))
            }
        };
        self.stats.compared = compared.len();

        // A program that cannot run where the C is defined fails outright.
        let obligations: Vec<(Bool, String)> = dom.obligations().to_vec();
        let mut candidate: Option<Box<Counterexample>> = None;
        for (ok, what) in obligations {
            match self.solve(&dom, &ok.not())? {
                Outcome::Unsat => {}
                Outcome::Unknown(reason) => {
                    return Ok(self.unknown(
                        format!(
                            "Z3 could not decide whether the program can fail ({what}): {reason}"
                        ),
                        None,
                    ))
                }
                Outcome::Sat(model) => {
                    let difference = Difference::ProgramError {
                        message: what.clone(),
                    };
                    let cex = self.counterexample(&dom, &model, &recorded, difference)?;
                    return Ok(self.finish(|stats| BoundedResult::Fail {
                        counterexample: cex,
                        stats,
                    }));
                }
            }
        }

        let mut forms = linear::LinearForms::new();
        for item in &compared {
            if dom.same(&item.c, &item.program) {
                self.stats.identical += 1;
                continue;
            }
            let (c, p) = dom.comparable(&item.c, &item.program);
            if forms.equal(&c, &p) {
                self.stats.normalised += 1;
                continue;
            }
            match self.solve(&dom, &dom.differ(&item.c, &item.program))? {
                Outcome::Unsat => {}
                Outcome::Unknown(reason) => {
                    let where_ = self.place_text(&item.what);
                    return Ok(self.unknown(
                        format!("Z3 could not decide whether {where_} can differ: {reason}"),
                        candidate,
                    ));
                }
                Outcome::Sat(model) => {
                    let difference = self.difference(&model, item)?;
                    let cex = self.counterexample(&dom, &model, &recorded, difference)?;
                    let opaque = item.c.opaque || item.program.opaque;
                    let confirmed = cex.replay.as_ref().is_some_and(|r| r.differs);
                    if !opaque || confirmed {
                        return Ok(self.finish(|stats| BoundedResult::Fail {
                            counterexample: cex,
                            stats,
                        }));
                    }
                    // The model may only exploit the freedom of an
                    // uninterpreted function; keep looking for a real one.
                    if candidate.is_none() {
                        candidate = Some(cex);
                    }
                }
            }
        }
        if let Some(c) = candidate {
            let reason = format!(
                "Z3 found inputs where {} differs only through uninterpreted math functions ({}), and the concrete replay does not confirm the difference",
                describe_difference(&c.difference),
                self.opaque_names()
            );
            return Ok(self.unknown(reason, Some(c)));
        }
        let (how, model) = if self.iface.uses_floats {
            (
                "over the reals",
                "floats as exact reals, sqrt/exp/log/tanh/pow/sin/cos/round/floor/ceil uninterpreted, integers exact"
                    .to_string(),
            )
        } else if let Some(width) = self.bitvec_width {
            (
                "with C integer semantics",
                format!("integers exact; nonlinear queries as {width}-bit two's-complement bit-vectors, wide enough that no value overflows, decided by bit-blasting"),
            )
        } else {
            ("with C integer semantics", "integers exact".to_string())
        };
        let assumed: String = self
            .program
            .meta
            .requires
            .iter()
            .map(|r| format!("; precondition {r} holds"))
            .collect();
        let summary = format!(
            "equal {how} at sizes {} ({model}; for all inputs on which the C has no undefined behaviour and divides by no zero{assumed}; {} output elements, {} identical by construction{})",
            sizes_text(self.sizes),
            self.stats.compared,
            self.stats.identical,
            normalised_text(self.stats.normalised)
        );
        Ok(self.finish(|stats| BoundedResult::Pass { summary, stats }))
    }

    fn opaque_names(&self) -> &'static str {
        "sqrt, exp, log, tanh, pow, sin, cos, round, floor, ceil"
    }

    fn place_text(&self, p: &Place) -> String {
        match p {
            Place::Element { array, index } => {
                let parts: Vec<String> = index.iter().map(usize::to_string).collect();
                format!("{array}[{}]", parts.join(", "))
            }
            Place::Scalar(name) => name.clone(),
            Place::Returned => "the returned value".to_string(),
        }
    }

    /// Builds both sides over shared inputs; returns what to compare.
    fn encode(&self, dom: &mut SymDomain) -> Result<(Vec<Compared>, Vec<Recorded>), Abort> {
        let mut c_scalars = HashMap::new();
        let mut c_arrays = HashMap::new();
        let mut p_values = HashMap::new();
        let mut recorded = Vec::new();
        for e in &self.iface.entries {
            match e {
                Entry::Pinned { name, value } => {
                    let v = dom.int(i128::from(*value));
                    c_scalars.insert(name.clone(), v.clone());
                    p_values.insert(name.clone(), Tensor::scalar(v));
                }
                Entry::Scalar { name, dtype } | Entry::Cell { name, dtype } => {
                    let v = dom.input(name, ElemKind::of_tensir(*dtype))?;
                    c_scalars.insert(name.clone(), v.clone());
                    p_values.insert(name.clone(), Tensor::scalar(v.clone()));
                    recorded.push(Recorded {
                        name: name.clone(),
                        dtype: *dtype,
                        shape: Vec::new(),
                        values: vec![v],
                    });
                }
                Entry::Array {
                    name,
                    dtype,
                    shape,
                    in_program,
                    ..
                } => {
                    let n: usize = shape.iter().product();
                    let values = (0..n)
                        .map(|k| {
                            dom.input(&element_name(name, shape, k), ElemKind::of_tensir(*dtype))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    c_arrays.insert(name.clone(), values.clone());
                    if *in_program {
                        p_values.insert(
                            name.clone(),
                            Tensor {
                                shape: shape.clone(),
                                data: values.clone(),
                            },
                        );
                    }
                    recorded.push(Recorded {
                        name: name.clone(),
                        dtype: *dtype,
                        shape: shape.clone(),
                        values,
                    });
                }
            }
        }
        let initial_program: HashMap<String, Tensor<SymVal>> = p_values.clone();
        // The domain assumption is the C's (the input's): only its calls
        // of `log` and `sqrt` are assumed to get positive arguments.
        dom.set_in_kernel(true);
        let c_out = kernel_eval::run(dom, self.kernel, self.sizes, c_scalars, c_arrays);
        dom.set_in_kernel(false);
        let c_out = c_out?;
        let p_out = program_eval::run(dom, self.program, self.sizes, p_values)?;

        let mut compared = Vec::new();
        for e in &self.iface.entries {
            match e {
                Entry::Array {
                    name,
                    dtype,
                    shape,
                    compare: true,
                    ..
                } => {
                    let c_vals = c_out.arrays.get(name).ok_or_else(|| {
                        Abort::Error(VerifyError::Kernel(format!("`{name}` vanished")))
                    })?;
                    let p_vals = p_out
                        .arrays
                        .get(name)
                        .or_else(|| initial_program.get(name))
                        .ok_or_else(|| {
                            Abort::Error(VerifyError::Program(format!("`{name}` vanished")))
                        })?;
                    for (k, (c, p)) in c_vals.iter().zip(&p_vals.data).enumerate() {
                        compared.push(Compared {
                            what: Place::Element {
                                array: name.clone(),
                                index: unravel(k, shape),
                            },
                            dtype: *dtype,
                            c: c.clone(),
                            program: p.clone(),
                        });
                    }
                }
                Entry::Cell { name, dtype } => {
                    let c = c_out.scalars.get(name).cloned().ok_or_else(|| {
                        Abort::Error(VerifyError::Kernel(format!("`{name}` vanished")))
                    })?;
                    let p = p_out
                        .arrays
                        .get(name)
                        .or_else(|| initial_program.get(name))
                        .and_then(|t| t.data.first().cloned())
                        .ok_or_else(|| {
                            Abort::Error(VerifyError::Program(format!("`{name}` vanished")))
                        })?;
                    compared.push(Compared {
                        what: Place::Scalar(name.clone()),
                        dtype: *dtype,
                        c,
                        program: p,
                    });
                }
                _ => {}
            }
        }
        if let Some(dtype) = self.iface.returns {
            let c = c_out.returned.ok_or_else(|| {
                Abort::Error(VerifyError::Kernel(
                    "the C declares a result but never returns".to_string(),
                ))
            })?;
            let p = p_out.returned.ok_or_else(|| {
                Abort::Error(VerifyError::Program(
                    "the program never returns".to_string(),
                ))
            })?;
            compared.push(Compared {
                what: Place::Returned,
                dtype,
                c,
                program: p,
            });
        }
        Ok((compared, recorded))
    }

    /// Asks whether `query` is satisfiable together with the premises,
    /// within the resource limit and what is left of the wall clock.
    fn solve(&mut self, dom: &SymDomain, query: &Bool) -> Result<Outcome, VerifyError> {
        let left = self.budget.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Ok(Outcome::Unknown(format!(
                "the wall-clock back-stop of {} ms is spent",
                self.budget.as_millis()
            )));
        }
        // Integer-only queries go to the integer solver first (it settles
        // most of them, linear or not); if it gives up within half the time
        // left, the exact bit-vector encoding gets the rest.
        let integer_only = !self.iface.uses_floats;
        let solver = Solver::new();
        for premise in dom.premises() {
            solver.assert(premise);
        }
        solver.assert(query);
        self.stats.solver_calls += 1;
        let outcome = self.outcome(&solver, if integer_only { left / 2 } else { left });
        if let (true, Outcome::Unknown(reason)) = (integer_only, &outcome) {
            let left = self.budget.saturating_sub(self.started.elapsed());
            if let Some(decided) = self.solve_bitvec(dom, query, left)? {
                return Ok(match decided {
                    Outcome::Unknown(bv_reason) => {
                        Outcome::Unknown(format!("{reason}; {bv_reason}"))
                    }
                    other => other,
                });
            }
        }
        Ok(outcome)
    }

    /// Checks `solver`, stopped after `left` of wall clock (the context's
    /// resource limit bounds it too).
    fn outcome(&self, solver: &Solver, left: Duration) -> Outcome {
        let left = left.max(Duration::from_millis(1));
        if let (Some(rlimit), true) = (self.isolated, self.iface.uses_floats) {
            // Only a satisfiable query is asked again here, for the model.
            let first = crate::z3_turn::check_text(&solver.to_string(), rlimit, left);
            match first.result {
                SatResult::Unsat => return Outcome::Unsat,
                SatResult::Unknown => {
                    return Outcome::Unknown(
                        first
                            .reason
                            .unwrap_or_else(|| "no reason given".to_string()),
                    )
                }
                SatResult::Sat => {}
            }
        }
        match crate::z3_turn::check_within(solver, left) {
            SatResult::Unsat => Outcome::Unsat,
            SatResult::Unknown => Outcome::Unknown(
                solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "no reason given".to_string()),
            ),
            SatResult::Sat => match solver.get_model() {
                Some(m) => Outcome::Sat(m),
                None => Outcome::Unknown("Z3 answered sat without a model".to_string()),
            },
        }
    }

    /// The query over bit-vectors when it is integer-only and nonlinear
    /// (`None`: leave it to the integer solver). A model is read back by
    /// pinning the integer inputs to its values and asking the integer
    /// solver again (a ground question), so counterexamples stay integers.
    fn solve_bitvec(
        &mut self,
        dom: &SymDomain,
        query: &Bool,
        left: Duration,
    ) -> Result<Option<Outcome>, VerifyError> {
        let inputs: Vec<bitvec::IntInput> = dom
            .inputs()
            .iter()
            .filter_map(|i| match (&i.term, i.kind) {
                (Term::Int(term), ElemKind::Int(ty)) => Some(bitvec::IntInput {
                    term: term.clone(),
                    range: (ty.min(), ty.max()),
                }),
                _ => None,
            })
            .collect();
        let mut formulas: Vec<Bool> = dom.premises().cloned().collect();
        formulas.push(query.clone());
        let Ok(translated) = bitvec::translate(&formulas, &inputs) else {
            return Ok(None);
        };
        if !translated.nonlinear {
            return Ok(None);
        }
        self.bitvec_width = Some(self.bitvec_width.unwrap_or(0).max(translated.width));
        let solver = Solver::new();
        solver.assert(&translated.formula);
        self.stats.solver_calls += 1;
        let model = match self.outcome(&solver, left) {
            Outcome::Sat(model) => model,
            Outcome::Unsat => return Ok(Some(Outcome::Unsat)),
            Outcome::Unknown(reason) => {
                return Ok(Some(Outcome::Unknown(format!(
                    "{reason} (as {}-bit vectors)",
                    translated.width
                ))))
            }
        };
        let pinned = Solver::new();
        for premise in dom.premises() {
            pinned.assert(premise);
        }
        pinned.assert(query);
        for (int, bv) in &translated.inputs {
            let low = model
                .eval(&bv.extract(63, 0), true)
                .and_then(|v| v.as_u64())
                .ok_or_else(|| no_value("a bit-vector input"))?;
            let signed = inputs
                .iter()
                .find(|i| i.term == *int)
                .is_some_and(|i| i.range.0 < 0);
            let value = if signed {
                i128::from(low as i64)
            } else {
                i128::from(low)
            };
            pinned.assert(int.eq(z3::ast::Int::from_i128(value)));
        }
        self.stats.solver_calls += 1;
        let left = self.budget.saturating_sub(self.started.elapsed());
        Ok(Some(match self.outcome(&pinned, left) {
            Outcome::Sat(m) => Outcome::Sat(m),
            Outcome::Unsat => Outcome::Unknown(format!(
                "the {}-bit vector model does not hold over the integers",
                translated.width
            )),
            Outcome::Unknown(reason) => Outcome::Unknown(reason),
        }))
    }

    fn difference(&self, model: &Model, item: &Compared) -> Result<Difference, VerifyError> {
        let c_value = model_value(model, &item.c, item.dtype)?;
        let program_value = model_value(model, &item.program, item.dtype)?;
        Ok(match &item.what {
            Place::Element { array, index } => Difference::Element {
                array: array.clone(),
                index: index.clone(),
                c_value,
                program_value,
            },
            Place::Scalar(name) => Difference::Scalar {
                name: name.clone(),
                c_value,
                program_value,
            },
            Place::Returned => Difference::Returned {
                c_value,
                program_value,
            },
        })
    }

    fn counterexample(
        &self,
        dom: &SymDomain,
        model: &Model,
        recorded: &[Recorded],
        difference: Difference,
    ) -> Result<Box<Counterexample>, VerifyError> {
        let mut inputs = BTreeMap::new();
        for r in recorded {
            let values = r
                .values
                .iter()
                .map(|v| model_value(model, v, r.dtype))
                .collect::<Result<Vec<_>, _>>()?;
            inputs.insert(
                r.name.clone(),
                ArrayValue {
                    dtype: r.dtype,
                    shape: r.shape.clone(),
                    values,
                },
            );
        }
        let mut uninitialised = BTreeMap::new();
        for input in dom.inputs() {
            if let Some(local) = input.name.strip_prefix(UNINITIALISED_PREFIX) {
                let v = match (&input.term, input.kind) {
                    (Term::Int(i), _) => int_value(model, i)?,
                    (Term::Real(r), _) => real_value(model, r)?,
                };
                uninitialised.insert(local.to_string(), v);
            }
        }
        let unread = self
            .iface
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Array {
                    name,
                    initial_read: false,
                    ..
                } => Some(name.clone()),
                _ => None,
            })
            .collect();
        let mut cex = Counterexample {
            sizes: self.sizes.clone(),
            inputs,
            unread,
            uninitialised,
            difference,
            replay: None,
        };
        cex.replay = Some(replay(self.kernel, self.program, self.iface, &cex));
        Ok(Box::new(cex))
    }
}

enum Outcome {
    Unsat,
    Sat(Model),
    Unknown(String),
}

fn describe_difference(d: &Difference) -> String {
    match d {
        Difference::Element { array, index, .. } => {
            let parts: Vec<String> = index.iter().map(usize::to_string).collect();
            format!("{array}[{}]", parts.join(", "))
        }
        Difference::Scalar { name, .. } => name.clone(),
        Difference::Returned { .. } => "the returned value".to_string(),
        Difference::ProgramError { message } => message.clone(),
    }
}

fn no_value(what: &str) -> VerifyError {
    VerifyError::Program(format!("Z3's model gives no value for {what}"))
}

fn int_value(model: &Model, i: &z3::ast::Int) -> Result<Value, VerifyError> {
    model
        .eval(i, true)
        .and_then(|v| v.as_i128())
        .map(Value::Int)
        .ok_or_else(|| no_value("an integer"))
}

fn real_value(model: &Model, r: &z3::ast::Real) -> Result<Value, VerifyError> {
    let v = model.eval(r, true).ok_or_else(|| no_value("a real"))?;
    if let Some((num, den)) = v.as_rational() {
        let exact = if den == 1 {
            num.to_string()
        } else {
            format!("{num}/{den}")
        };
        return Ok(Value::Real {
            exact,
            approx: num as f64 / den as f64,
        });
    }
    let text = v.approx(20);
    let approx = text.parse::<f64>().map_err(|_| no_value("a real"))?;
    Ok(Value::Real {
        exact: text,
        approx,
    })
}

fn model_value(model: &Model, v: &SymVal, dtype: DType) -> Result<Value, VerifyError> {
    match &v.term {
        Term::Int(i) => {
            let value = int_value(model, i)?;
            Ok(match value {
                Value::Int(k) if dtype.is_float() => Value::from_f64(k as f64),
                other => other,
            })
        }
        Term::Real(r) => real_value(model, r),
    }
}
