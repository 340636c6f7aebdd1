//! Which lemma instances matter for one condition. Lemmas and definitions
//! are collected for all conditions of a kernel at once; handing Z3 only
//! those connected to a condition (through the fresh constants — loop
//! counters, elements, iteration counts — they share) keeps each query
//! small. Dropping facts is always sound: it can only make a condition
//! harder to prove, never a wrong one provable.

use std::collections::HashSet;

use z3::ast::{Ast, Bool, Dynamic};

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
