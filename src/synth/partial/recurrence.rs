//! A loop whose one statement is a linear recurrence along the loop
//! (Gauss-Seidel: `A[i][j]` reads the `A[i][j-1]` the previous iteration
//! stored) keeps the loop only for the recurrent terms: the terms that read
//! elements no earlier iteration wrote are computed for every iteration at
//! once into a `let` before the loop.

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Affine, Loop};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Expr, Param, Stmt, Ty};

use super::dependence::{difference, reads_an_earlier_iteration, Scope};
use super::statement::{bind_scope, statement_kernel, store_value, Pick};
use super::Driver;
use crate::algebra::{Rat, Tensor};
use crate::spec::{spec_of_kernel, Sizes};
use crate::synth::library::Evaluator;
use crate::synth::signature::dtype_of;
use crate::synth::stencil::{self, Access, LinearStencil, NestLoop};

/// A loop's one statement read as a linear recurrence.
struct Recurrence<'l> {
    l: &'l Loop,
    array: String,
    region: Vec<SliceItem>,
    reads: Vec<Access>,
    /// Per read, whether it reads what an earlier iteration stored.
    recurrent: Vec<bool>,
}

/// `l`'s one assignment when some of its reads are recurrent and some not.
fn recurrence(l: &Loop) -> Option<Recurrence<'_>> {
    let [stmt @ loop_ir::Stmt::Assign { .. }] = l.body.as_slice() else {
        return None;
    };
    let accesses = stencil::accesses(stmt).ok()?;
    let (array, region) = stencil::store_region(&accesses).ok()?;
    let store = accesses.iter().find(|a| a.is_store)?;
    let reads: Vec<Access> = accesses.iter().filter(|a| !a.is_store).cloned().collect();
    let recurrent = reads
        .iter()
        .map(|r| reads_an_earlier_iteration(store, r, &l.iter))
        .collect::<Option<Vec<bool>>>()?;
    if !recurrent.iter().any(|&r| r) || recurrent.iter().all(|&r| r) {
        return None;
    }
    Some(Recurrence {
        l,
        array,
        region,
        reads,
        recurrent,
    })
}

/// A read as a slice of its parameter.
fn slice_leaf(a: &Access, params: &[Param]) -> Option<Expr> {
    let p = params.iter().find(|p| *p.name == *a.array)?;
    build::slice(Expr::var(&p.name, p.ty()), stencil::slice_of(a)?).ok()
}

impl Driver<'_> {
    /// The loop kept for its recurrent terms only; see the module
    /// documentation.
    pub(super) fn lift_recurrence(&mut self, l: &Loop, scope: &Scope) -> Option<Vec<Stmt>> {
        let rec = recurrence(l)?;
        let this = NestLoop {
            iter: l.iter.clone(),
            start: l.start.clone(),
            end: l.end.clone(),
        };
        let mut inner_scope = scope.clone();
        inner_scope.push(this.clone());
        let sizes = bind_scope(&inner_scope, &self.second, Pick::Middle)?;
        let (linear, scalar_leaves, dtype) = self.linear_terms(&rec, &inner_scope, &sizes)?;
        // The hoisted reads run over the whole loop range at once.
        let written = vec![rec.array.clone()];
        let outer_params = self.statement_params(scope, &written);
        let vector_leaves: Vec<Expr> = rec
            .reads
            .iter()
            .map(|r| {
                let mut swept = r.clone();
                swept.loops.push(this.clone());
                slice_leaf(&swept, &outer_params)
            })
            .collect::<Option<_>>()?;
        let leaves = (scalar_leaves.as_slice(), vector_leaves.as_slice());
        let body = rec.split_body(&linear, leaves, dtype)?;
        let stmt = loop_ir::Stmt::Loop(l.clone());
        let loop_kernel = statement_kernel(&self.kernel, scope, &stmt, &written);
        self.check_statement(body.clone(), &loop_kernel, outer_params, scope)
            .ok()?;
        for s in &body {
            self.cost += crate::synth::cost::cost_of(&[&store_value(s)], &sizes);
        }
        self.vectorised = true;
        Some(body)
    }

    /// The statement's value as a linear stencil of its reads (each read
    /// one element, the loop's variable bound), with the reads as scalar
    /// leaves and the element type.
    fn linear_terms(
        &self,
        rec: &Recurrence<'_>,
        inner_scope: &Scope,
        sizes: &Sizes,
    ) -> Option<(LinearStencil, Vec<Expr>, DType)> {
        let [stmt] = rec.l.body.as_slice() else {
            return None;
        };
        let written = vec![rec.array.clone()];
        let inner_kernel = statement_kernel(&self.kernel, inner_scope, stmt, &written);
        let inner_params = self.statement_params(inner_scope, &written);
        let spec = spec_of_kernel(&inner_kernel, sizes).ok()?;
        let output = spec.output(&rec.array)?;
        let target = stencil::region_value(&output.value, &rec.region, sizes)?;
        let scalar_leaves: Vec<Expr> = rec
            .reads
            .iter()
            .map(|r| slice_leaf(r, &inner_params))
            .collect::<Option<_>>()?;
        let mut evaluator = Evaluator::new(sizes.clone(), inner_params, Vec::new());
        let values: Vec<Tensor> = scalar_leaves
            .iter()
            .map(|e| evaluator.value(e))
            .collect::<Option<_>>()?;
        let linear = stencil::derive_linear_stencil(&target, &values)?;
        Some((linear, scalar_leaves, dtype_of(output.elem)))
    }
}

impl Recurrence<'_> {
    /// `let terms = <non-recurrent terms over the whole range>; for i { A[..]
    /// = <recurrent terms> + terms[i - start] }`; `leaves` are the reads as
    /// scalars (inside the loop) and as vectors (over the whole range).
    fn split_body(
        &self,
        linear: &LinearStencil,
        leaves: (&[Expr], &[Expr]),
        dtype: DType,
    ) -> Option<Vec<Stmt>> {
        let (scalar_leaves, vector_leaves) = leaves;
        let (rec_terms, rest_terms): (Vec<_>, Vec<_>) = linear
            .terms
            .iter()
            .cloned()
            .partition(|(k, _)| self.recurrent[*k]);
        let rest = LinearStencil {
            terms: rest_terms,
            constant: linear.constant.clone(),
        };
        let rest = stencil::linear_combination(&rest, vector_leaves, dtype)?;
        let recurrent = LinearStencil {
            terms: rec_terms,
            constant: Rat::int(0),
        };
        let recurrence = stencil::linear_combination(&recurrent, scalar_leaves, dtype)?;
        let l = self.l;
        let name = format!("{}_{}_terms", self.array, l.iter);
        let hoisted = Expr::var(&name, Ty::tensor(dtype, rest.shape().to_vec()));
        let offset = stencil::dim_of(&difference(&Affine::var(l.iter.clone()), &l.start))?;
        let element = build::slice(hoisted, vec![SliceItem::Index(offset)]).ok()?;
        let value = Expr::binary(BinaryOp::Add, recurrence, element).ok()?;
        let store = Stmt::Store {
            target: Arc::from(self.array.as_str()),
            region: Some(self.region.clone()),
            value,
        };
        Some(vec![
            Stmt::Let {
                name: Arc::from(name.as_str()),
                value: rest,
            },
            Stmt::Loop {
                var: Arc::from(l.iter.as_str()),
                start: stencil::dim_of(&l.start)?,
                stop: stencil::dim_of(&l.end)?,
                body: vec![store],
            },
        ])
    }
}
