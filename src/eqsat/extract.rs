//! Cost-based extraction. A node's cost depends on its operands' shapes
//! (a matrix product costs `2·n·k·m`), which the type analysis holds, so
//! each node is priced by the synthesizer's [`CostModel`] on a stand-in
//! expression with the node's operation over typed placeholders. A shared
//! subexpression is paid once, as the emitters compute it once and as
//! [`CostModel::cost_of`] counts it: each class's best choice carries the
//! set of classes it uses with their costs (greedy DAG extraction, as in
//! Numba v2's dual cost model), relaxed to a fixpoint in class order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use egg::{Id, Language};
use tenslift_targets::Expr;

use super::lang::{app_op, leaf_expr, ty_of, EGraph, TensLang};
use crate::cost::CostModel;
use crate::spec::Sizes;

/// Why no expression came out of a class.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("e-class {0} has no node whose operands all have a cost")]
    NoCost(usize),
    #[error("the cheapest choices form a cycle through e-class {0}")]
    Cycle(usize),
    #[error("e-class {0}: the chosen node does not rebuild as TensIR")]
    Rebuild(usize),
}

/// Most relaxation rounds: each round re-prices every class; the costs
/// only fall, and in practice settle within a few rounds.
const MAX_ROUNDS: usize = 64;

/// The best choice for a class: node index, total cost, classes used.
#[derive(Clone)]
struct Best {
    node: usize,
    total: f64,
    uses: Rc<BTreeMap<Id, f64>>,
}

/// The value classes reachable from `root`, in increasing id order.
fn reachable(egraph: &EGraph, root: Id) -> Vec<Id> {
    let mut seen = HashSet::new();
    let mut stack = vec![egraph.find(root)];
    while let Some(id) = stack.pop() {
        if ty_of(egraph, id).is_none() || !seen.insert(id) {
            continue;
        }
        for node in &egraph[id].nodes {
            stack.extend(node.children().iter().map(|&c| egraph.find(c)));
        }
    }
    let mut ids: Vec<Id> = seen.into_iter().collect();
    ids.sort();
    ids
}

/// The cost of one node alone at `sizes`, `None` when it cannot be
/// rebuilt (never for nodes the analysis typed).
fn node_cost(egraph: &EGraph, node: &TensLang, model: &CostModel, sizes: &Sizes) -> Option<f64> {
    let stand_in = match node {
        TensLang::Leaf(leaf) => leaf_expr(leaf.kind())?,
        TensLang::App(head, args) => {
            let (op, operands) = app_op(egraph, *head, args)?;
            let placeholders = operands
                .iter()
                .map(|&c| Some(Expr::var("_", ty_of(egraph, c)?.clone())))
                .collect::<Option<Vec<_>>>()?;
            Expr::new(op, placeholders).ok()?
        }
    };
    Some(model.node_cost(&stand_in, sizes))
}

/// The value operands of a node (attribute leaves cost nothing).
fn operands(egraph: &EGraph, node: &TensLang) -> Vec<Id> {
    node.children()
        .iter()
        .map(|&c| egraph.find(c))
        .filter(|&c| ty_of(egraph, c).is_some())
        .collect()
}

/// The best choice of `node` in `class` given the current choices.
fn candidate(
    egraph: &EGraph,
    class: Id,
    node: &TensLang,
    own: f64,
    best: &HashMap<Id, Best>,
) -> Option<(f64, BTreeMap<Id, f64>)> {
    let mut uses = BTreeMap::new();
    for c in operands(egraph, node) {
        let b = best.get(&c)?;
        if b.uses.contains_key(&class) {
            return None;
        }
        uses.extend(b.uses.iter().map(|(k, v)| (*k, *v)));
    }
    uses.insert(class, own);
    Some((uses.values().sum(), uses))
}

/// Relaxes every class's best choice until none improves.
fn relax(egraph: &EGraph, classes: &[Id], costs: &HashMap<(Id, usize), f64>) -> HashMap<Id, Best> {
    let mut best: HashMap<Id, Best> = HashMap::new();
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for &class in classes {
            for (k, node) in egraph[class].nodes.iter().enumerate() {
                let Some(&own) = costs.get(&(class, k)) else {
                    continue;
                };
                let Some((total, uses)) = candidate(egraph, class, node, own, &best) else {
                    continue;
                };
                let better = best
                    .get(&class)
                    .is_none_or(|b| total < b.total * (1.0 - 1e-12));
                if better {
                    let uses = Rc::new(uses);
                    best.insert(
                        class,
                        Best {
                            node: k,
                            total,
                            uses,
                        },
                    );
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    best
}

/// The cheapest expression of `root`'s class under `model` at `sizes`.
pub fn extract(
    egraph: &EGraph,
    root: Id,
    model: &CostModel,
    sizes: &Sizes,
) -> Result<Expr, ExtractError> {
    let classes = reachable(egraph, root);
    let mut costs = HashMap::new();
    for &class in &classes {
        for (k, node) in egraph[class].nodes.iter().enumerate() {
            if let Some(c) = node_cost(egraph, node, model, sizes) {
                costs.insert((class, k), c);
            }
        }
    }
    let best = relax(egraph, &classes, &costs);
    let mut built = HashMap::new();
    build(
        egraph,
        egraph.find(root),
        &best,
        &mut built,
        &mut HashSet::new(),
    )
}

/// The expression of the chosen nodes under `id`, shared per class.
fn build(
    egraph: &EGraph,
    id: Id,
    best: &HashMap<Id, Best>,
    built: &mut HashMap<Id, Expr>,
    path: &mut HashSet<Id>,
) -> Result<Expr, ExtractError> {
    if let Some(e) = built.get(&id) {
        return Ok(e.clone());
    }
    let b = best.get(&id).ok_or(ExtractError::NoCost(usize::from(id)))?;
    if !path.insert(id) {
        return Err(ExtractError::Cycle(usize::from(id)));
    }
    let node = &egraph[id].nodes[b.node];
    let expr = match node {
        TensLang::Leaf(leaf) => leaf_expr(leaf.kind()),
        TensLang::App(head, args) => {
            let (op, _) =
                app_op(egraph, *head, args).ok_or(ExtractError::Rebuild(usize::from(id)))?;
            let mut values = Vec::new();
            for c in operands(egraph, node) {
                values.push(build(egraph, c, best, built, path)?);
            }
            Expr::new(op, values).ok()
        }
    }
    .ok_or(ExtractError::Rebuild(usize::from(id)))?;
    path.remove(&id);
    built.insert(id, expr.clone());
    Ok(expr)
}
