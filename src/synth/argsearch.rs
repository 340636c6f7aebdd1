//! The running-search tactic: C that finds where a vector is largest (or
//! smallest) by walking it,
//!
//! ```c
//! int best = 0; float m = key(0);
//! for (i = 1; i < n; i++) if (key(i) > m) { m = key(i); best = i; }
//! return best;            /* or *pIndex = best; *pResult = m; */
//! ```
//!
//! (llama2.c's `sample_argmax`, darknet's `max_index`, BLAS's `idamax` with
//! `key(i) = fabs(x[i])`, a DSP library's `max`/`min` with an index), lifts
//! to `argmax(key)` (`argmin` for `<`) and, where the running value is an
//! output too, `max(key)`. The spec of such a kernel is a chain of selects
//! on comparisons with the running maximum, which no sketch builds; the
//! program is read off the loop IR instead and accepted like every other,
//! by equality with the C spec at two size tuples (TensIR's `argmax` is
//! defined as that same chain). The first extreme wins, as in the C with a
//! strict comparison; with `>=` (`<=`) the last one does, `argmax(…,
//! last=true)`.

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Affine, BinaryOp, ExprKind, IfKind, Kernel, LValue};
use tenslift_frontend::ir_rewrite;
use tenslift_targets::{
    build, DType, Dim, Expr, Op, Param, ParamKind, Program, ReduceKind, SliceItem, Stmt,
};

use super::cost;
use super::options::{Lifted, SynthError};
use super::partial::expression_over;
use super::signature::{self, dtype_of, infer_unknown_extents, params_of};
use super::stencil::{dim_of, NestLoop};
use super::tactic::{KernelContext, KernelResult, KernelTactic};
use super::trace::Trace;
use crate::spec::tensir::{check_program_at_both_sizes, Comparison};
use crate::spec::{spec_at_chosen_sizes, Sizes};

/// The `running-search` kernel tactic; see the module documentation.
pub struct RunningSearch;

impl KernelTactic for RunningSearch {
    fn name(&self) -> &'static str {
        "running-search"
    }

    fn summary(&self) -> &'static str {
        "if (key(i) > m) { m = key(i); best = i; } read off the loop IR as argmax(key) (and max(key)), accepted against the spec"
    }

    fn applies(&self, kernel: &Kernel) -> Result<(), String> {
        search_of(kernel).map(|_| ())
    }

    fn run(&self, kernel: &Kernel, _: &KernelContext<'_>, _: &mut Trace) -> KernelResult {
        let Ok(search) = search_of(kernel) else {
            return KernelResult::Nothing;
        };
        match program_of(kernel, &search) {
            Ok((program, cost)) => {
                KernelResult::Whole(Lifted::whole(program, cost, search.outputs.len()))
            }
            // The general search may still find what this reading missed.
            Err(_) => KernelResult::Nothing,
        }
    }
}

/// Where the search's results go after the loop.
enum Output {
    /// `return v;` (`v` the index or the running value, maybe converted).
    Return { of_index: bool, dtype: DType },
    /// `p[0] = v;` after a search at the top, `p[b] = v;` after one in a
    /// loop over `b` (the subscripts are the enclosing loops' iterators).
    Store { array: String, of_index: bool },
}

/// The parts of a running search in the loop IR.
struct Search {
    /// Loops around the search (from 0 by 1, one search per point): a
    /// search per row of a matrix.
    outer: Vec<NestLoop>,
    /// The candidates' positions: the loop's, from the first candidate.
    walk: NestLoop,
    /// The compared value at the loop's iterator.
    key: loop_ir::Expr,
    largest: bool,
    /// The last extreme (`>=`, `<=`) rather than the first.
    last: bool,
    /// The C type of the index variable.
    index_type: DType,
    outputs: Vec<Output>,
}

/// The kernel as a running search: two initialising assignments, the loop,
/// then only stores and a return of its results.
fn search_of(kernel: &Kernel) -> Result<Search, String> {
    let mut outer = Vec::new();
    let mut block = kernel.body.as_slice();
    // A search per point of a nest of loops from 0 by 1 (`for (b = 0; b <
    // batch; b++) { best = 0; … out[b] = best; }`).
    while let [loop_ir::Stmt::Loop(l)] = block {
        let searches = matches!(l.body.first(), Some(loop_ir::Stmt::Assign { .. }));
        if !searches || l.start != Affine::constant(0) || l.step != 1 {
            break;
        }
        outer.push(NestLoop {
            iter: l.iter.clone(),
            start: l.start.clone(),
            end: l.end.clone(),
        });
        block = &l.body;
    }
    if !outer.is_empty() && kernel.returns.is_some() {
        return Err("not a running search: a search per row, and a returned value".into());
    }
    search_in(block, outer)
}

/// The running search making up `block`, inside the loops `outer`.
fn search_in(block: &[loop_ir::Stmt], outer: Vec<NestLoop>) -> Result<Search, String> {
    let not = |why: &str| Err(format!("not a running search: {why}"));
    let loop_at = block
        .iter()
        .position(|s| matches!(s, loop_ir::Stmt::Loop(_)))
        .ok_or("not a running search: no loop")?;
    let loop_ir::Stmt::Loop(l) = &block[loop_at] else {
        return not("no loop");
    };
    let l = &candidates_loop(l, &block[loop_at + 1..])?;
    let [loop_ir::Stmt::If {
        cond,
        kind: IfKind::Data,
        then_body,
        else_body,
        ..
    }] = l.body.as_slice()
    else {
        return not("the loop's body is not one `if` on the data");
    };
    if !else_body.is_empty() || l.step != 1 {
        return not("an `else` branch or a step other than 1");
    }
    let (value_var, index_var, key, index_type) = updates(then_body, &l.iter)?;
    let (largest, last) = comparison(cond, key, &value_var)?;
    let key = key.clone();
    let start = l
        .start
        .as_constant()
        .ok_or("not a running search: a variable start")?;
    // `argmax` counts positions from the first candidate: the index must
    // start at 0 on element 0 (a later start would shift every position).
    if start != 1 || index_init(&block[..loop_at], &index_var) != Some(0) {
        return not("the index does not start at position 0 with the loop at the next element");
    }
    let inits_only = block[..loop_at].iter().all(|s| {
        matches!(s, loop_ir::Stmt::Assign { target: LValue::Scalar { name, .. }, .. }
            if *name == value_var || *name == index_var)
    });
    if !inits_only || loop_at != 2 {
        return not(
            "statements other than the index's and the value's initialisation before the loop",
        );
    }
    let at: Vec<Affine> = outer.iter().map(|l| Affine::var(l.iter.clone())).collect();
    let outputs = block[loop_at + 1..]
        .iter()
        .map(|s| output(s, &value_var, &index_var, &at))
        .collect::<Option<Vec<_>>>()
        .ok_or("not a running search: the loop is followed by more than stores and a return of its results")?;
    if outputs.is_empty() {
        return not("no result leaves the kernel");
    }
    Ok(Search {
        outer,
        walk: NestLoop {
            iter: l.iter.clone(),
            start: Affine::constant(start - 1),
            end: l.end.clone(),
        },
        key,
        largest,
        last,
        index_type,
        outputs,
    })
}

/// The integer literal `var` is set to before the loop.
fn index_init(before: &[loop_ir::Stmt], var: &str) -> Option<i64> {
    before.iter().find_map(|s| match s {
        loop_ir::Stmt::Assign {
            target: LValue::Scalar { name, .. },
            value,
            ..
        } if name == var => match strip_int_casts(value).kind {
            ExprKind::IntLit { value } => Some(value),
            _ => None,
        },
        _ => None,
    })
}

/// `l` ascending, with a temporary the loop reads the candidate into
/// (`maxVal = *pSrc++; if (out < maxVal) …`) replaced by what it holds,
/// when nothing after the loop (`rest`) reads it.
fn candidates_loop(l: &loop_ir::Loop, rest: &[loop_ir::Stmt]) -> Result<loop_ir::Loop, String> {
    let mut l = match l.step {
        1 => l.clone(),
        -1 => ir_rewrite::ascending(l, std::slice::from_ref(&l.iter)),
        _ => return Err("not a running search: a loop stepping by more than one".into()),
    };
    if let [loop_ir::Stmt::Assign {
        target: LValue::Scalar { name, .. },
        value,
        ..
    }, search @ loop_ir::Stmt::If { .. }] = l.body.as_slice()
    {
        let read_after = rest.iter().any(|s| s.mentions(name));
        if read_after || value.mentions(name) {
            return Err("not a running search: a temporary of the loop is read after it".into());
        }
        let by = Inline {
            var: name,
            by: value,
        };
        l.body = vec![ir_rewrite::rewrite_stmt(search, &by)];
    }
    Ok(l)
}

/// Replaces reads of a local by an expression.
struct Inline<'a> {
    var: &'a str,
    by: &'a loop_ir::Expr,
}

impl ir_rewrite::Rewrite for Inline<'_> {
    fn expr(&self, e: &loop_ir::Expr) -> Option<loop_ir::Expr> {
        match &e.kind {
            ExprKind::Var { name, .. } if name == self.var => Some(self.by.clone()),
            _ => None,
        }
    }
}

/// `m = key(i); best = i;` in either order: (`m`, `best`, `key`, the index's
/// type).
fn updates<'k>(
    then_body: &'k [loop_ir::Stmt],
    iter: &str,
) -> Result<(String, String, &'k loop_ir::Expr, DType), String> {
    let assigns: Vec<(&str, loop_ir::ScalarType, &loop_ir::Expr)> = then_body
        .iter()
        .filter_map(|s| match s {
            loop_ir::Stmt::Assign {
                target: LValue::Scalar { name, ty },
                value,
                ..
            } => Some((name.as_str(), *ty, value)),
            _ => None,
        })
        .collect();
    let is_iter = |e: &loop_ir::Expr| position_of(e) == Some(Affine::var(iter.to_string()));
    match assigns.as_slice() {
        [a, b] if then_body.len() == 2 => {
            let (value, index) = if is_iter(b.2) { (a, b) } else { (b, a) };
            if !is_iter(index.2) || is_iter(value.2) || !is_int(index.1) {
                return Err("not a running search: the `if` does not set the index to the iterator and the value to what was compared".into());
            }
            Ok((
                value.0.to_string(),
                index.0.to_string(),
                value.2,
                dtype_of(index.1),
            ))
        }
        _ => Err("not a running search: the `if` does not make exactly two assignments".into()),
    }
}

/// `(largest, last)` when `cond` compares the key with the best so far,
/// either way round: `key > m` (the first greatest), `key >= m` (the
/// last), `key < m` and `key <= m` (the first or last least).
fn comparison(cond: &loop_ir::Expr, key: &loop_ir::Expr, m: &str) -> Result<(bool, bool), String> {
    let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
        return Err("not a running search: the `if` is not a comparison".into());
    };
    let is_m =
        |e: &loop_ir::Expr| matches!(&exact(e).kind, ExprKind::Var { name, .. } if name == m);
    let is_key = |e: &loop_ir::Expr| exact(e) == exact(key);
    let compared = matches!(
        op,
        BinaryOp::Gt | BinaryOp::Lt | BinaryOp::Ge | BinaryOp::Le
    );
    let last = matches!(op, BinaryOp::Ge | BinaryOp::Le);
    let greater = matches!(op, BinaryOp::Gt | BinaryOp::Ge);
    match () {
        _ if compared && is_key(lhs) && is_m(rhs) => Ok((greater, last)),
        _ if compared && is_m(lhs) && is_key(rhs) => Ok((!greater, last)),
        _ => Err("not a running search: the `if` does not compare the value taken with the best so far (`>`, `>=`, `<`, `<=`)".into()),
    }
}

/// An integer expression as an affine function of variables, any integer
/// type read as its value (only to recognise the form: the program is
/// accepted by the check against the spec, which models every wrap).
fn position_of(e: &loop_ir::Expr) -> Option<Affine> {
    if !is_int(e.ty) {
        return None;
    }
    match &e.kind {
        ExprKind::IntLit { value } => Some(Affine::constant(*value)),
        ExprKind::Var { name, .. } => Some(Affine::var(name.clone())),
        ExprKind::Cast { arg } => position_of(arg),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (position_of(lhs)?, position_of(rhs)?);
            match op {
                BinaryOp::Add => Some(ir_rewrite::add(&a, &b)),
                BinaryOp::Sub => Some(ir_rewrite::difference(&a, &b)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `e` under conversions that keep every value (C's promotion of a
/// `short` or `unsigned char` to `int` before a comparison, `float` to
/// `double`).
fn exact(e: &loop_ir::Expr) -> &loop_ir::Expr {
    match &e.kind {
        ExprKind::Cast { arg } if keeps_values(arg.ty, e.ty) => exact(arg),
        _ => e,
    }
}

fn keeps_values(from: loop_ir::ScalarType, to: loop_ir::ScalarType) -> bool {
    if from.is_float() || to.is_float() {
        return from.is_float() && to.is_float() && from.bits() <= to.bits();
    }
    is_int(from) && is_int(to) && to.holds_every_value_of(from)
}

fn is_int(t: loop_ir::ScalarType) -> bool {
    !t.is_float() && t != loop_ir::ScalarType::Bool
}

fn strip_int_casts(e: &loop_ir::Expr) -> &loop_ir::Expr {
    match &e.kind {
        ExprKind::Cast { arg } if is_int(arg.ty) && is_int(e.ty) => strip_int_casts(arg),
        _ => e,
    }
}

/// `return v;` or `p[0] = v;` (`p[b] = v;` at the outer loops' point
/// `at`) of the index or the value (maybe converted).
fn output(s: &loop_ir::Stmt, value_var: &str, index_var: &str, at: &[Affine]) -> Option<Output> {
    let of = |e: &loop_ir::Expr| -> Option<bool> {
        let inner = match &e.kind {
            ExprKind::Cast { arg } => arg,
            _ => e,
        };
        match &inner.kind {
            ExprKind::Var { name, .. } if name == index_var => Some(true),
            ExprKind::Var { name, .. } if name == value_var => Some(false),
            _ => None,
        }
    };
    match s {
        loop_ir::Stmt::Return { value, .. } if at.is_empty() => Some(Output::Return {
            of_index: of(value)?,
            dtype: dtype_of(value.ty),
        }),
        loop_ir::Stmt::Assign {
            target: LValue::Element { array, index, .. },
            value,
            ..
        } if index.as_slice() == at
            || at.is_empty() && index.iter().all(|a| a.as_constant() == Some(0)) =>
        {
            Some(Output::Store {
                array: array.clone(),
                of_index: of(value)?,
            })
        }
        _ => None,
    }
}

/// The program of the whole kernel, accepted at two size tuples.
fn program_of(kernel: &Kernel, search: &Search) -> Result<(Program, f64), SynthError> {
    let refuse = |why: String| SynthError::Rejected(why);
    let spec = spec_at_chosen_sizes(kernel, &Sizes::new())?;
    let params = params_of(kernel, &infer_unknown_extents(kernel, &spec.sizes)?)?;
    let mut nest = search.outer.clone();
    nest.push(search.walk.clone());
    let axis = search.outer.len();
    let keys = expression_over(&search.key, &nest, &params)
        .ok_or_else(|| refuse("the compared value is not a tensor of the loops".into()))?;
    let at = Expr::new(
        Op::ArgExtreme {
            largest: search.largest,
            last: search.last,
            axis,
            dtype: search.index_type,
        },
        vec![keys.clone()],
    )
    .map_err(|e| refuse(e.message))?;
    let kind = if search.largest {
        ReduceKind::Max
    } else {
        ReduceKind::Min
    };
    let value = Expr::reduce(kind, keys, vec![axis]).map_err(|e| refuse(e.message))?;
    let mut body = Vec::new();
    let mut ret = None;
    for out in &search.outputs {
        match out {
            Output::Return { of_index, dtype } => {
                let v = if *of_index { at.clone() } else { value.clone() };
                body.push(Stmt::Return(converted(v, *dtype)?));
                ret = Some(*dtype);
            }
            Output::Store { array, of_index } => {
                let v = if *of_index { at.clone() } else { value.clone() };
                body.insert(0, store_results(array, v, &search.outer, &params)?);
            }
        }
    }
    let exprs: Vec<&Expr> = body.iter().filter_map(stmt_value).collect();
    let cost = cost::cost_of(&exprs, &spec.sizes);
    let program = Program {
        meta: signature::program_meta(kernel)?,
        name: Arc::from(kernel.name.as_str()),
        params,
        ret,
        body,
    };
    program.validate().map_err(|e| refuse(e.to_string()))?;
    match check_program_at_both_sizes(&program, kernel)? {
        (Comparison::Equal, _) => Ok((program, cost)),
        (other, sizes) => Err(refuse(format!(
            "the running search's program differs from the C at {}: {other}",
            crate::spec::format_sizes(&sizes)
        ))),
    }
}

fn stmt_value(s: &Stmt) -> Option<&Expr> {
    match s {
        Stmt::Store { value, .. } | Stmt::Return(value) => Some(value),
        _ => None,
    }
}

fn converted(v: Expr, to: DType) -> Result<Expr, SynthError> {
    if v.dtype() == to {
        return Ok(v);
    }
    build::cast(v, to).map_err(|e| SynthError::Rejected(e.message))
}

/// `array[0] = v` as a store of the whole one-element array, or
/// `array[b…] = v` at every point of the loops `outer` as the store of
/// the region they cover.
fn store_results(
    array: &str,
    v: Expr,
    outer: &[NestLoop],
    params: &[Param],
) -> Result<Stmt, SynthError> {
    let refuse = |why: &str| SynthError::Rejected(format!("`{array}`: {why}"));
    let p = params
        .iter()
        .find(|p| &*p.name == array)
        .ok_or_else(|| refuse("not a parameter"))?;
    let ParamKind::Array { shape, dtype, .. } = &p.kind else {
        return Err(refuse("not an array"));
    };
    let v = converted(v, *dtype)?;
    if outer.is_empty() {
        if shape.as_slice() != [Dim::constant(1)] {
            return Err(refuse(
                "written as a one-element output, but its extent is not 1",
            ));
        }
        let value = build::reshape(v, shape.clone()).map_err(|e| refuse(&e.message))?;
        return Ok(Stmt::Store {
            target: Arc::from(array),
            region: None,
            value,
        });
    }
    let ends: Vec<Dim> = outer
        .iter()
        .map(|l| dim_of(&l.end))
        .collect::<Option<_>>()
        .ok_or_else(|| refuse("a loop bound that is no extent"))?;
    let whole = ends.as_slice() == shape.as_slice();
    let region = (!whole).then(|| {
        ends.into_iter()
            .map(|stop| SliceItem::Range {
                start: Dim::constant(0),
                stop,
                step: 1,
            })
            .collect()
    });
    Ok(Stmt::Store {
        target: Arc::from(array),
        region,
        value: v,
    })
}

#[cfg(test)]
mod tests {
    use tenslift_frontend::Options;
    use tenslift_targets::print_program;

    use super::*;

    fn kernel_of(source: &str) -> Kernel {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("k.c");
        std::fs::write(&path, source).expect("writes");
        let unit = tenslift_frontend::extract(&path.display().to_string(), &Options::default())
            .expect("extracts");
        unit.kernels.into_iter().next().expect("one kernel")
    }

    fn probe(stem: &str) -> Kernel {
        let path = format!(
            "{}/tests/fixtures/probe/{stem}.c",
            env!("CARGO_MANIFEST_DIR")
        );
        let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
        unit.kernels.into_iter().next().expect("one kernel")
    }

    fn lifted(kernel: &Kernel) -> String {
        let search = search_of(kernel).expect("a running search");
        let (program, _) = program_of(kernel, &search).expect("accepted against the spec");
        print_program(&program)
    }

    #[test]
    fn the_first_largest_element_is_argmax() {
        let text = lifted(&probe("argmax"));
        assert!(text.contains("argmax(v[0:n], axis=0, dtype=i32)"), "{text}");
    }

    #[test]
    fn a_descending_counter_with_a_temporary_gives_the_position_and_the_value() {
        let text = lifted(&probe("cm_max"));
        assert!(
            text.contains("argmax(pSrc[0:blockSize], axis=0, dtype=u32)"),
            "{text}"
        );
        assert!(text.contains("max(pSrc[0:blockSize], axes=[0])"), "{text}");
        let text = lifted(&probe("cm_min_q15"));
        assert!(text.contains("argmin("), "{text}");
    }

    #[test]
    fn magnitudes_are_searched_as_a_vector_of_keys() {
        let text = lifted(&probe("idamax_unit"));
        assert!(text.contains("argmax(abs(dx[0:n])"), "{text}");
    }

    /// One search per row, or per column: the walked axis is the last of
    /// the keys, the outer loops' the others.
    #[test]
    fn a_search_per_row_is_argmax_along_the_rows() {
        let text = lifted(&probe("argmax_rows"));
        assert!(
            text.contains("argmax(scores[0:batch, 0:n], axis=1, dtype=i32)"),
            "{text}"
        );
        let text = lifted(&probe("col_min_index"));
        assert!(
            text.contains("argmin(transpose(a[0:rows, 0:cols], perm=[1, 0]), axis=1"),
            "{text}"
        );
    }

    /// `>=` keeps the last extreme: `argmax(…, last=true)`, whose
    /// definition is the same chain of selects with `>=`.
    #[test]
    fn the_last_largest_element_is_argmax_from_the_end() {
        let text = lifted(&probe("argmax_ge"));
        assert!(
            text.contains("argmax(v[0:n], axis=0, dtype=i32, last=true)"),
            "{text}"
        );
    }

    /// A search whose `>=` program were read as the first extreme would
    /// differ from the C on ties: the check at two sizes refuses it.
    #[test]
    fn first_and_last_extremes_are_different_programs() {
        let kernel = probe("argmax_ge");
        let mut search = search_of(&kernel).expect("a running search");
        search.last = false;
        assert!(program_of(&kernel, &search).is_err());
    }

    #[test]
    fn a_search_not_from_position_zero_is_not_read() {
        let kernel = kernel_of(
            "int f(const float *v, int n) { int b = 1; float m = v[1];\n\
             for (int i = 2; i < n; i++) if (v[i] > m) { m = v[i]; b = i; }\n\
             return b; }\n",
        );
        let why = search_of(&kernel).err().expect("refused");
        assert!(why.contains("position 0"), "{why}");
    }

    #[test]
    fn a_value_set_to_something_else_is_not_a_search() {
        let kernel = kernel_of(
            "int f(const float *v, int n) { int b = 0; float m = v[0];\n\
             for (int i = 1; i < n; i++) if (v[i] > m) { m = 2 * v[i]; b = i; }\n\
             return b; }\n",
        );
        let searched =
            search_of(&kernel).and_then(|s| program_of(&kernel, &s).map_err(|e| e.to_string()));
        assert!(searched.is_err());
    }
}
