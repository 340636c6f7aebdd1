//! The forward substitution `trisolve_lower` element by element. An
//! element of a solver's result is defined by a recurrence over earlier
//! elements (`targets::solvers` is the reference), which no
//! closed form states; here the result is an uninterpreted function `F`
//! of the element's indices, pinned down where it is used by one unfolding
//! of its definition:
//!
//! - `trisolve_lower(T, B)`: `F(x, c) = (B[x][c] - Σ_{k<x} T[x][k] F(k,c)) /
//!   T[x][x]` (no division when `unit`).
//!
//! Each inner sum is a range function with its unfold lemmas, shared with
//! the other reductions (and so with the extensionality lemmas that relate
//! it to the C's own accumulation). The definition is an identity of the
//! recurrence the operation computes, so asserting it at any indices is
//! sound; one unfolding per use is what an inductive proof over the C's
//! loops needs, since each loop step finishes one element from finished
//! ones. `trisolve_upper` (back substitution, a descending recurrence) is
//! not encoded, nor are `cholesky` and `lu_nopivot`: their definitions
//! unfolded at every element the invariants name made queries that took
//! minutes to print (cholesky-dist, lu-dist), and proved nothing.

use std::rc::Rc;

use tenslift_targets::{Expr, Op, ReduceKind};
use z3::ast::{Ast, Int};
use z3::{FuncDecl, Sort};

use super::{Env, Lifted};
use crate::domain::value::{self, real_num, V};
use crate::unbounded::Unsupported;

impl Lifted<'_> {
    /// Element `idx` of the solver operation `e`.
    pub(super) fn solver_elem(&self, e: &Expr, idx: &[Int], env: &Env) -> Result<V, Unsupported> {
        let f = self.solver_function(e, env, idx.len())?;
        let at = |args: &[&Int]| -> V {
            let args: Vec<&dyn Ast> = args.iter().map(|a| *a as &dyn Ast).collect();
            V::R(f.apply(&args).as_real().unwrap_or_else(|| real_num(0)))
        };
        let refs: Vec<&Int> = idx.iter().collect();
        let value = at(&refs);
        let key = format!("def|{}|{:?}", f.name(), idx);
        if self.unfolded.borrow_mut().insert(key) {
            let definition = self.solver_definition(e, idx, env, &at)?;
            self.lemmas.borrow_mut().push(value.equal(&definition));
        }
        Ok(value)
    }

    /// The uninterpreted function of solver node `e` (one per node and
    /// meaning of the names it reads).
    fn solver_function(
        &self,
        e: &Expr,
        env: &Env,
        arity: usize,
    ) -> Result<Rc<FuncDecl>, Unsupported> {
        if !e.dtype().is_float() {
            return Err(Unsupported(format!("{} over integers", e.op().name())));
        }
        let key = format!("{}|{}", self.node_key(e, 0, env), e.op().name());
        let mut fs = self.functions.borrow_mut();
        let n = fs.len();
        Ok(fs
            .entry(key)
            .or_insert_with(|| {
                let int = Sort::int();
                let domain: Vec<&Sort> = (0..arity).map(|_| &int).collect();
                Rc::new(FuncDecl::new(format!("solve_{n}"), &domain, &Sort::real()))
            })
            .clone())
    }

    /// One unfolding of the definition of `e` at `idx`, with `at` the
    /// operation's own elements.
    fn solver_definition(
        &self,
        e: &Expr,
        idx: &[Int],
        env: &Env,
        at: &dyn Fn(&[&Int]) -> V,
    ) -> Result<V, Unsupported> {
        let args = e.args();
        let operand = |k: usize, sub: &[Int]| -> Result<V, Unsupported> {
            let a = args
                .get(k)
                .ok_or_else(|| Unsupported("missing operand".into()))?;
            self.elem(a, sub, &Default::default(), env)
        };
        match (e.op(), idx) {
            (Op::TriSolve { lower: true, unit }, [x, rest @ ..]) => {
                let point = |k: &Int| -> Vec<Int> {
                    std::iter::once(k.clone())
                        .chain(rest.iter().cloned())
                        .collect()
                };
                let mut key_args: Vec<&Int> = vec![x];
                key_args.extend(rest.iter());
                let sum = self.inner_sum(e, env, &key_args, x, &|k| {
                    let p = point(k);
                    let refs: Vec<&Int> = p.iter().collect();
                    Ok(value::mul(
                        &operand(0, &[x.clone(), k.clone()])?,
                        &at(&refs),
                    ))
                })?;
                let residual = value::sub(&operand(1, idx)?, &sum);
                Ok(if *unit {
                    residual
                } else {
                    V::R(residual.as_real() / operand(0, &[x.clone(), x.clone()])?.as_real())
                })
            }
            _ => Err(Unsupported(format!(
                "{}: no element definition for this operation (back substitution runs \
                 in descending order)",
                e.op().name()
            ))),
        }
    }

    /// `Σ_{k < hi} body(k)`, the inner sum of solver node `e` at `args`.
    fn inner_sum(
        &self,
        e: &Expr,
        env: &Env,
        args: &[&Int],
        hi: &Int,
        body: &dyn Fn(&Int) -> Result<V, Unsupported>,
    ) -> Result<V, Unsupported> {
        let idx: Vec<Int> = args.iter().map(|a| (*a).clone()).collect();
        let level = |rs: &[Int]| body(&rs[0]);
        self.reduce(
            ReduceKind::Sum,
            true,
            e,
            &idx,
            env,
            std::slice::from_ref(hi),
            &[],
            &level,
        )
    }
}
