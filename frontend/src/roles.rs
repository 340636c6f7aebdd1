//! Parameter roles: whether the kernel reads an array's (or a global
//! scalar's) initial contents.
//!
//! The analysis is conservative. Walking statements in order, a write of
//! `A[idx]` makes the pattern `(A, idx)` *defined* for the rest of the
//! enclosing block (including loops nested later in it, whose iterators
//! cannot change `idx`). Writes inside one branch of an `if` do not outlive
//! it; writes of the same pattern in both branches do. A loop whose body
//! unconditionally writes `A[..i..]` for its iterator `i` (step 1 or -1,
//! bounds free of other iterators) defines the whole range
//! `A[..start..end..]` after it; a later read through an iterator whose
//! loop has the same bounds is covered (`for i: y[i] = 0;` then
//! `for j: y[j] += ...` leaves `y` an output). A read of a pattern that is
//! not defined at that point may see the initial contents, so the array is
//! `InOut`; an array whose every read is defined is `Output`; one never
//! written is `Input`.

use std::collections::{HashMap, HashSet};

use crate::ir::*;

#[derive(Default, Clone, Copy)]
struct Usage {
    written: bool,
    read_initial: bool,
}

type Pattern = (String, Vec<Affine>);

/// A set of elements written by a finished loop nest: `index` uses range
/// variables, each ranging over `[lo, hi)`.
#[derive(Clone, Debug)]
struct RangeDef {
    array: String,
    index: Vec<Affine>,
    ranges: HashMap<String, (Affine, Affine)>,
}

/// A loop around the current statement: iterator and `[lo, hi)` when it
/// runs contiguously (step 1 or -1).
type Enclosing = (String, Option<(Affine, Affine)>);

struct Walk<'a> {
    tracked: &'a HashSet<String>,
    iterators: HashSet<String>,
    usage: HashMap<String, Usage>,
    defined: Vec<Pattern>,
    ranges: Vec<RangeDef>,
    loops: Vec<Enclosing>,
    next_range: usize,
}

/// Roles for the named arrays and scalars (`tracked`), from `body`.
pub fn compute_roles(body: &[Stmt], tracked: &HashSet<String>) -> HashMap<String, Role> {
    let mut iterators = HashSet::new();
    collect_iterators(body, &mut iterators);
    let mut w = Walk {
        tracked,
        iterators,
        usage: HashMap::new(),
        defined: Vec::new(),
        ranges: Vec::new(),
        loops: Vec::new(),
        next_range: 0,
    };
    w.walk(body);
    tracked
        .iter()
        .map(|name| {
            let u = w.usage.get(name).copied().unwrap_or_default();
            let role = match (u.written, u.read_initial) {
                (false, _) => Role::Input,
                (true, false) => Role::Output,
                (true, true) => Role::InOut,
            };
            (name.clone(), role)
        })
        .collect()
}

fn collect_iterators(stmts: &[Stmt], out: &mut HashSet<String>) {
    for s in stmts {
        match s {
            Stmt::Loop(l) => {
                out.insert(l.iter.clone());
                collect_iterators(&l.body, out);
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                collect_iterators(then_body, out);
                collect_iterators(else_body, out);
            }
            _ => {}
        }
    }
}

/// The patterns the assignments directly in `stmts` write.
fn top_level_writes(stmts: &[Stmt]) -> Vec<Pattern> {
    stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Assign { target, .. } => Some(target_pattern(target)),
            _ => None,
        })
        .collect()
}

/// The patterns `stmts` write on every path through them (an `if … else`
/// chain counts where all its branches write).
fn all_path_writes(stmts: &[Stmt]) -> Vec<Pattern> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Stmt::Assign { target, .. } => out.push(target_pattern(target)),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                let mut both = all_path_writes(then_body);
                let other = all_path_writes(else_body);
                both.retain(|p| other.contains(p));
                out.extend(both);
            }
            Stmt::Loop(_) | Stmt::Return { .. } => {}
        }
    }
    out
}

fn target_pattern(target: &LValue) -> Pattern {
    match target {
        LValue::Scalar { name, .. } => (name.clone(), Vec::new()),
        LValue::Element { array, index, .. } => (array.clone(), index.clone()),
    }
}

/// `[lo, hi)` of a loop that visits every integer in it.
fn contiguous_range(l: &Loop) -> Option<(Affine, Affine)> {
    match l.step {
        1 => Some((l.start.clone(), l.end.clone())),
        -1 => {
            let mut lo = l.end.clone();
            lo.constant = lo.constant.checked_add(1)?;
            let mut hi = l.start.clone();
            hi.constant = hi.constant.checked_add(1)?;
            Some((lo, hi))
        }
        _ => None,
    }
}

/// Replaces variable `from` by `to` (coefficient-preserving).
fn rename(a: &Affine, from: &str, to: &str) -> Affine {
    let mut out = a.clone();
    if let Some(c) = out.terms.remove(from) {
        out.terms.insert(to.to_string(), c);
    }
    out
}

impl Walk<'_> {
    fn mentions_iterator(&self, a: &Affine) -> bool {
        a.terms.keys().any(|v| self.iterators.contains(v))
    }

    /// The element sets a loop nest writes unconditionally.
    fn loop_defs(&mut self, l: &Loop) -> Vec<RangeDef> {
        let mut inner: Vec<RangeDef> = Vec::new();
        for s in &l.body {
            match s {
                Stmt::Assign { target, .. } => {
                    let (array, index) = target_pattern(target);
                    inner.push(RangeDef {
                        array,
                        index,
                        ranges: HashMap::new(),
                    });
                }
                Stmt::Loop(child) => {
                    let defs = self.loop_defs(child);
                    inner.extend(defs);
                }
                _ => {}
            }
        }
        let Some((lo, hi)) = contiguous_range(l) else {
            return Vec::new();
        };
        if self.mentions_iterator(&lo) || self.mentions_iterator(&hi) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for mut def in inner {
            if !def.index.iter().any(|a| a.terms.contains_key(&l.iter)) {
                continue;
            }
            if def
                .ranges
                .values()
                .any(|(a, b)| a.terms.contains_key(&l.iter) || b.terms.contains_key(&l.iter))
            {
                continue;
            }
            let var = format!("\u{2}r{}", self.next_range);
            self.next_range += 1;
            def.index = def.index.iter().map(|a| rename(a, &l.iter, &var)).collect();
            def.ranges.insert(var, (lo.clone(), hi.clone()));
            out.push(def);
        }
        out
    }

    /// Whether reading `(array, index)` here is covered by a range def.
    fn covered_by_range(&self, array: &str, index: &[Affine]) -> bool {
        self.ranges.iter().any(|def| {
            if def.array != array || def.index.len() != index.len() {
                return false;
            }
            let mut binding: HashMap<String, String> = HashMap::new();
            for (d, read) in def.index.iter().zip(index) {
                let range_vars: Vec<(&String, &i64)> = d
                    .terms
                    .iter()
                    .filter(|(v, _)| def.ranges.contains_key(*v))
                    .collect();
                match range_vars.as_slice() {
                    [] => {
                        if d != read {
                            return false;
                        }
                    }
                    [(rv, 1)] => {
                        // read = (d - rv) + w for one iterator w.
                        let mut rest = read.clone();
                        for (v, c) in &d.terms {
                            if v != *rv {
                                let slot = rest.terms.entry(v.clone()).or_insert(0);
                                let Some(updated) = slot.checked_sub(*c) else {
                                    return false;
                                };
                                *slot = updated;
                            }
                        }
                        rest.terms.retain(|_, c| *c != 0);
                        let Some(constant) = rest.constant.checked_sub(d.constant) else {
                            return false;
                        };
                        rest.constant = constant;
                        let Some((w, 1)) = rest.terms.iter().next().map(|(w, c)| (w.clone(), *c))
                        else {
                            return false;
                        };
                        if rest.terms.len() != 1 || rest.constant != 0 {
                            return false;
                        }
                        match binding.insert(rv.to_string(), w.clone()) {
                            Some(prev) if prev != w => return false,
                            _ => {}
                        }
                    }
                    _ => return false,
                }
            }
            binding.iter().all(|(rv, w)| {
                let Some((lo, hi)) = def.ranges.get(rv) else {
                    return false;
                };
                self.loops
                    .iter()
                    .rev()
                    .find(|(it, _)| it == w)
                    .and_then(|(_, r)| r.as_ref())
                    .is_some_and(|(wlo, whi)| {
                        let within_const = match (
                            lo.as_constant(),
                            hi.as_constant(),
                            wlo.as_constant(),
                            whi.as_constant(),
                        ) {
                            (Some(a), Some(b), Some(c), Some(d)) => a <= c && d <= b,
                            _ => false,
                        };
                        (wlo == lo && whi == hi) || within_const
                    })
            })
        })
    }

    fn walk(&mut self, stmts: &[Stmt]) {
        let scope = (self.defined.len(), self.ranges.len());
        for s in stmts {
            match s {
                Stmt::Assign { target, value, .. } => {
                    self.reads(value);
                    let pattern = target_pattern(target);
                    if self.tracked.contains(&pattern.0) {
                        self.usage.entry(pattern.0.clone()).or_default().written = true;
                    }
                    self.defined.push(pattern);
                }
                Stmt::If {
                    cond,
                    kind,
                    then_body,
                    else_body,
                    ..
                } => {
                    self.reads(cond);
                    self.walk(then_body);
                    let mut then_defs = top_level_writes(then_body);
                    self.walk(else_body);
                    let else_defs = top_level_writes(else_body);
                    if *kind == IfKind::Data {
                        let (then_all, else_all) =
                            (all_path_writes(then_body), all_path_writes(else_body));
                        self.keeps_initial(&then_all, &else_all);
                        self.keeps_initial(&else_all, &then_all);
                    }
                    then_defs.retain(|p| else_defs.contains(p));
                    self.defined.extend(then_defs);
                }
                Stmt::Loop(l) => {
                    self.loops.push((l.iter.clone(), contiguous_range(l)));
                    self.walk(&l.body);
                    self.loops.pop();
                    let defs = self.loop_defs(l);
                    self.ranges.extend(defs);
                }
                Stmt::Return { value, .. } => self.reads(value),
            }
        }
        self.defined.truncate(scope.0);
        self.ranges.truncate(scope.1);
    }

    /// An element one branch of a data `if` writes and the other does not
    /// (`if (m[i]) y[i] = …;`) ends with its initial value on the other
    /// path unless something defined it before: the array is `InOut`.
    fn keeps_initial(&mut self, written: &[Pattern], other: &[Pattern]) {
        for p in written.iter().filter(|p| !other.contains(p)) {
            if self.tracked.contains(&p.0)
                && !self.defined.contains(p)
                && !self.covered_by_range(&p.0, &p.1)
            {
                self.usage.entry(p.0.clone()).or_default().read_initial = true;
            }
        }
    }

    fn reads(&mut self, e: &Expr) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            let pattern = match &e.kind {
                ExprKind::Load { array, index } => Some((array.clone(), index.clone())),
                ExprKind::Var { name, .. } => Some((name.clone(), Vec::new())),
                _ => None,
            };
            if let Some(p) = pattern {
                if self.tracked.contains(&p.0)
                    && !self.defined.contains(&p)
                    && !self.covered_by_range(&p.0, &p.1)
                {
                    self.usage.entry(p.0).or_default().read_initial = true;
                }
            }
            match &e.kind {
                ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => stack.push(arg),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Select {
                    cond,
                    then_value,
                    else_value,
                } => {
                    stack.push(cond);
                    stack.push(then_value);
                    stack.push(else_value);
                }
                ExprKind::Call { args, .. } => stack.extend(args.iter()),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(array: &str, index: &[&str]) -> Expr {
        Expr {
            ty: ScalarType::F64,
            kind: ExprKind::Load {
                array: array.into(),
                index: index.iter().map(|v| Affine::var(*v)).collect(),
            },
        }
    }
    fn assign(array: &str, index: &[&str], value: Expr) -> Stmt {
        Stmt::Assign {
            target: LValue::Element {
                array: array.into(),
                index: index.iter().map(|v| Affine::var(*v)).collect(),
                ty: ScalarType::F64,
            },
            value,
            loc: loc(),
        }
    }
    fn loc() -> Loc {
        Loc {
            file: "t.c".into(),
            line: 1,
            col: 1,
        }
    }
    fn for_n(iter: &str, body: Vec<Stmt>) -> Stmt {
        Stmt::Loop(Loop {
            iter: iter.into(),
            start: Affine::constant(0),
            end: Affine::var("n"),
            step: 1,
            body,
            loc: loc(),
        })
    }
    fn roles(body: &[Stmt]) -> Vec<(String, Role)> {
        let tracked: HashSet<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
        let mut r: Vec<_> = compute_roles(body, &tracked).into_iter().collect();
        r.sort_by(|a, b| a.0.cmp(&b.0));
        r
    }

    #[test]
    fn init_loop_then_accumulate_is_output_but_read_first_is_inout() {
        let zero = Expr {
            ty: ScalarType::F64,
            kind: ExprKind::FloatLit {
                value: 0.0,
                text: "0.0".into(),
            },
        };
        let add = |a: Expr, b: Expr| Expr {
            ty: ScalarType::F64,
            kind: ExprKind::Binary {
                op: BinaryOp::Add,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
        };
        let body = vec![
            // for i: y[i] = 0;  for j: y[j] = y[j] + x[j];  (y covered)
            for_n("i", vec![assign("y", &["i"], zero.clone())]),
            for_n(
                "j",
                vec![assign(
                    "y",
                    &["j"],
                    add(load("y", &["j"]), load("x", &["j"])),
                )],
            ),
            // for k: z[k] = z[k] + 1  (z read before any write)
            for_n("k", vec![assign("z", &["k"], add(load("z", &["k"]), zero))]),
        ];
        assert_eq!(
            roles(&body),
            vec![
                ("x".into(), Role::Input),
                ("y".into(), Role::Output),
                ("z".into(), Role::InOut),
            ]
        );
    }

    #[test]
    fn a_write_under_a_data_condition_keeps_the_initial_value_elsewhere() {
        let guarded = |array: &str, kind| Stmt::If {
            cond: load("x", &["i"]),
            kind,
            then_body: vec![assign(array, &["i"], load("x", &["i"]))],
            else_body: Vec::new(),
            loc: loc(),
        };
        // y: only where x[i] holds; z: defined first, then conditionally
        // overwritten.
        let body = vec![for_n(
            "i",
            vec![
                guarded("y", IfKind::Data),
                assign("z", &["i"], load("x", &["i"])),
                guarded("z", IfKind::Data),
            ],
        )];
        let r = roles(&body);
        assert_eq!(r[1], ("y".into(), Role::InOut));
        assert_eq!(r[2], ("z".into(), Role::Output));
    }

    #[test]
    fn a_shifted_read_is_not_covered() {
        let body = vec![
            for_n("i", vec![assign("y", &["i"], load("x", &["i"]))]),
            for_n("j", {
                let mut shifted = Affine::var("j");
                shifted.constant = -1;
                vec![assign(
                    "z",
                    &["j"],
                    Expr {
                        ty: ScalarType::F64,
                        kind: ExprKind::Load {
                            array: "y".into(),
                            index: vec![shifted],
                        },
                    },
                )]
            }),
        ];
        let r = roles(&body);
        assert_eq!(r[1], ("y".into(), Role::InOut));
        assert_eq!(r[2], ("z".into(), Role::Output));
    }
}
