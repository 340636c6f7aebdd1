//! Which lemma instances matter for one condition. Lemmas and definitions
//! are collected for all conditions of a kernel at once; handing Z3 only
//! those connected to a condition (through the fresh constants — loop
//! counters, elements, iteration counts — they share) keeps each query
//! small. Dropping facts is always sound: it can only make a condition
//! harder to prove, never a wrong one provable.

use std::collections::HashSet;

use z3::ast::{Ast, Bool, Dynamic, Int};

/// The fresh constants (named with `!`) a term mentions.
pub(crate) fn fresh_constants(term: &Bool) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut seen: HashSet<Dynamic> = HashSet::new();
    let mut stack: Vec<Dynamic> = vec![Dynamic::from_ast(term)];
    while let Some(t) = stack.pop() {
        if !seen.insert(t.clone()) {
            continue;
        }
        if t.is_const() {
            let name = t.decl().name();
            if name.contains('!') {
                out.insert(name);
            }
            continue;
        }
        if t.is_app() {
            stack.extend(t.children());
        }
    }
    out
}

/// The facts reachable from `roots` through shared fresh constants; facts
/// with no fresh constant are always kept.
pub(crate) fn relevant<'a>(roots: &[&Bool], facts: &'a [(Bool, HashSet<String>)]) -> Vec<&'a Bool> {
    let mut reached: HashSet<String> = HashSet::new();
    for r in roots {
        reached.extend(fresh_constants(r));
    }
    let mut taken = vec![false; facts.len()];
    let mut out = Vec::new();
    loop {
        let mut grew = false;
        for (k, (fact, names)) in facts.iter().enumerate() {
            if taken[k] {
                continue;
            }
            if names.is_empty() || names.iter().any(|n| reached.contains(n)) {
                taken[k] = true;
                out.push(fact);
                reached.extend(names.iter().cloned());
                grew = true;
            }
        }
        if !grew {
            return out;
        }
    }
}

/// Every subterm of `terms` (applications and constants), for asking
/// whether a term occurs in a query.
pub(crate) fn subterms(terms: &[&Bool]) -> HashSet<Dynamic> {
    let mut seen: HashSet<Dynamic> = HashSet::new();
    let mut stack: Vec<Dynamic> = terms.iter().map(|t| Dynamic::from_ast(*t)).collect();
    while let Some(t) = stack.pop() {
        if t.is_app() && seen.insert(t.clone()) {
            stack.extend(t.children());
        }
    }
    seen
}

/// The facts that mention a range function value (or a solver element)
/// that `goal` mentions, or that such a fact mentions (two steps), read
/// after `subst`.
pub(crate) fn connected<'a>(
    goal: &Bool,
    subst: &[(Int, Int)],
    facts: &[&'a Bool],
) -> Vec<&'a Bool> {
    let pairs: Vec<(&Int, &Int)> = subst.iter().map(|(a, b)| (a, b)).collect();
    let named = |b: &Bool| b.substitute(&pairs).simplify();
    // Range functions only: an input element (`A0(i, j)`) is in too many
    // facts to tell the ones that matter.
    let apps_of = |b: &Bool| -> HashSet<Dynamic> {
        subterms(&[&named(b)])
            .into_iter()
            .filter(|t| t.num_children() > 0 && is_range_function(&t.decl().name()))
            .collect()
    };
    let fact_apps: Vec<HashSet<Dynamic>> = facts.iter().map(|f| apps_of(f)).collect();
    let mut reached = apps_of(goal);

    let mut taken = vec![false; facts.len()];
    for _ in 0..2 {
        let mut grown = Vec::new();
        for (k, apps) in fact_apps.iter().enumerate() {
            if !taken[k] && apps.iter().any(|a| reached.contains(a)) {
                taken[k] = true;
                grown.push(k);
            }
        }
        for k in grown {
            reached.extend(fact_apps[k].iter().cloned());
        }
    }
    facts
        .iter()
        .zip(&taken)
        .filter(|(_, t)| **t)
        .map(|(f, _)| *f)
        .collect()
}

/// Whether a function symbol is a range function (a reduction's or a
/// local accumulation's sum, product, maximum or minimum) or a solver
/// operation's element.
fn is_range_function(name: &str) -> bool {
    ["sum_", "prod_", "max_", "min_", "local_sum_", "solve_"]
        .iter()
        .any(|p| name.starts_with(p))
}
