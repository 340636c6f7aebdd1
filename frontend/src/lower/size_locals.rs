//! Integer locals that only name a size: `uint16_t numRows = m->numRows;`
//! or `nincx = n * incx;` set once at the top of the function. Each read
//! of such a local is replaced by its definition (converted to the local's
//! type, as the assignment did), so a loop to `numRows` is a loop to the
//! size it stands for, and a narrow field read there is a size like any
//! parameter a `for` condition reads.
//!
//! Exact when the definition's value cannot change between the definition
//! and the reads: the local is set once, by a declaration with an
//! initialiser or by one assignment at the top level before any loop, or,
//! declared without a value, by assignments anywhere that all store the
//! same definition (f2c's `i__2 = *m;` before each inner loop: a read
//! before the first would read an indeterminate value); it is never
//! written otherwise nor has its address taken; its definition reads only
//! integer parameters and globals the function never writes (struct fields
//! are parameters by now), earlier such locals, literals and enumerators,
//! without side effects. A definition that is all that but not a
//! polynomial (`int oh = h / 2;`) is kept as a local, and a bound or
//! subscript through it is refused naming the local and its definition.

use std::collections::{HashMap, HashSet};

use super::macro_sizes::{walk_expr, walk_stmts};
use super::strip;
use crate::affine::{poly_of, AffineName, NotAffine};
use crate::syntax::*;

/// The function with its size locals replaced, and the locals left in
/// place because their definition is not a polynomial: key → why.
pub(super) struct SizeLocals {
    pub func: Option<CFunction>,
    pub not_affine: HashMap<String, NotAffine>,
}

/// Keys written anywhere (assigned, stepped, or a `for` iterator) and keys
/// whose address is taken, with how often each is written.
struct Uses {
    writes: HashMap<String, usize>,
    address_taken: HashSet<String>,
}

fn uses(body: &[CStmt]) -> Uses {
    let mut u = Uses {
        writes: HashMap::new(),
        address_taken: HashSet::new(),
    };
    let mut note = |e: &CExpr| {
        walk_expr(e, &mut |n| {
            let (target, write) = match &n.kind {
                CExprKind::Binary {
                    op: CBinOp::Assign | CBinOp::CompoundAssign(_),
                    lhs,
                    ..
                } => (lhs, true),
                CExprKind::Unary {
                    op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                    arg,
                } => (arg, true),
                CExprKind::Unary {
                    op: CUnOp::Unsupported("&"),
                    arg,
                } => (arg, false),
                _ => return,
            };
            if let CExprKind::Ref(r) = &strip(target).kind {
                if write {
                    *u.writes.entry(r.key.clone()).or_insert(0) += 1;
                } else {
                    u.address_taken.insert(r.key.clone());
                }
            }
        })
    };
    walk_stmts(body, &mut |s| match s {
        CStmt::Decl(vars, _) => vars
            .iter()
            .filter_map(|v| v.init.as_ref())
            .for_each(&mut note),
        CStmt::Expr(e) => note(e),
        CStmt::If { cond, .. } => note(cond),
        CStmt::For { cond, inc, .. } => {
            note(cond);
            note(inc);
        }
        CStmt::Return(Some(e), _) => note(e),
        _ => {}
    });
    u
}

struct Pass {
    uses: Uses,
    /// Accepted locals: key → the expression a read stands for.
    defs: HashMap<String, CExpr>,
    /// Integer locals declared at the top level without an initialiser.
    declared: HashMap<String, CType>,
    not_affine: HashMap<String, NotAffine>,
    /// Whether any local was defined (a branch's go out of `defs` after it).
    defined: bool,
}

/// Replaces reads of size locals in `func`; `func: None` when it has none.
pub(super) fn substitute(func: &CFunction) -> SizeLocals {
    let mut p = Pass {
        uses: uses(&func.body),
        defs: HashMap::new(),
        declared: HashMap::new(),
        not_affine: HashMap::new(),
        defined: false,
    };
    p.restated(&func.body);
    let body = p.block(&func.body);
    let func = p.defined.then(|| CFunction {
        body,
        ..func.clone()
    });
    SizeLocals {
        func,
        not_affine: p.not_affine,
    }
}

impl Pass {
    /// `s` with the reads of known size locals replaced, noting the size
    /// locals it defines.
    fn top_level(&mut self, s: &CStmt, loop_seen: bool) -> CStmt {
        match s {
            CStmt::Decl(vars, loc) => {
                let mut out = Vec::with_capacity(vars.len());
                for v in vars {
                    let v = CVarDecl {
                        init: v.init.as_ref().map(|e| self.replaced(e)),
                        ..v.clone()
                    };
                    match &v.init {
                        Some(def) if self.settled(&v.key, 0) && !v.is_static => {
                            self.define(&v.name, &v.key, &v.ty, def);
                        }
                        None if v.ty.is_integer() => {
                            self.declared.insert(v.key.clone(), v.ty.clone());
                        }
                        _ => {}
                    }
                    out.push(v);
                }
                CStmt::Decl(out, loc.clone())
            }
            CStmt::Expr(e) => {
                let e = self.replaced(e);
                if let Some((r, value)) = e.assigned_variable() {
                    let ty = self.declared.get(&r.key).cloned();
                    if let Some(ty) = ty.filter(|_| !loop_seen && self.settled(&r.key, 1)) {
                        self.define(&r.name, &r.key, &ty, value);
                    }
                }
                CStmt::Expr(e)
            }
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => CStmt::If {
                cond: self.replaced(cond),
                then_branch: Box::new(self.branch(then_branch)),
                else_branch: else_branch.as_deref().map(|b| Box::new(self.branch(b))),
                loc: loc.clone(),
            },
            other => other.map_exprs(&mut |e| self.replaced(e)),
        }
    }

    /// A branch of a top-level `if` read like the top level (a function
    /// whose branches return, folded by `branch_returns`, sets its index
    /// variables in the branch that loops with them); what it defines
    /// is read as the definition inside it only, the only place it holds.
    fn branch(&mut self, s: &CStmt) -> CStmt {
        let CStmt::Compound(items, loc) = s else {
            return s.map_exprs(&mut |e| self.replaced(e));
        };
        let outer: HashSet<String> = self.defs.keys().cloned().collect();
        let out = self.block(items);
        self.defs.retain(|k, _| outer.contains(k));
        CStmt::Compound(out, loc.clone())
    }

    /// The statements of the function's body (or of a branch of one of
    /// its `if`s) in order, each knowing whether a loop came before it.
    fn block(&mut self, items: &[CStmt]) -> Vec<CStmt> {
        let mut loop_seen = false;
        let mut out = Vec::with_capacity(items.len());
        for s in items {
            let s = self.top_level(s, loop_seen);
            walk_stmts(std::slice::from_ref(&s), &mut |x| {
                loop_seen |= matches!(x, CStmt::For { .. })
            });
            out.push(s);
        }
        out
    }

    /// Integer locals declared without a value and set, wherever they are
    /// set, to one size expression: f2c writes `i__2 = *m;` before every
    /// inner loop. A read sees that value, or before any assignment an
    /// indeterminate one, which C leaves undefined; so every read stands
    /// for the expression.
    fn restated(&mut self, body: &[CStmt]) {
        let mut declared: HashMap<String, (String, CType)> = HashMap::new();
        let mut sets: HashMap<String, Vec<CExpr>> = HashMap::new();
        walk_stmts(body, &mut |s| match s {
            CStmt::Decl(vars, _) => {
                for v in vars.iter().filter(|v| v.init.is_none() && !v.is_static) {
                    declared.insert(v.key.clone(), (v.name.clone(), v.ty.clone()));
                }
            }
            CStmt::Expr(e) => {
                if let Some((r, value)) = e.assigned_variable() {
                    sets.entry(r.key.clone()).or_default().push(value.clone());
                }
            }
            _ => {}
        });
        let mut keys: Vec<&String> = sets.keys().collect();
        keys.sort();
        for key in keys {
            let (Some((name, ty)), Some(values)) = (declared.get(key), sets.get(key)) else {
                continue;
            };
            let first = spelled(&values[0]);
            let same = values.iter().all(|v| spelled(v) == first) && !first.contains('…');
            if same && self.settled(key, values.len()) {
                self.define(name, key, ty, &values[0]);
            }
        }
    }

    /// Whether `key` is written exactly `writes` times and never has its
    /// address taken.
    fn settled(&self, key: &str, writes: usize) -> bool {
        self.uses.writes.get(key).copied().unwrap_or(0) == writes
            && !self.uses.address_taken.contains(key)
    }

    /// Records the integer local `name` (`key`) of type `ty` set to `def`
    /// (its earlier size locals already replaced) when `def` qualifies.
    fn define(&mut self, name: &str, key: &str, ty: &CType, def: &CExpr) {
        if !ty.is_integer() || !self.only_sizes(def) {
            return;
        }
        let classify = |r: &DeclRef| AffineName::Var(r.key.clone());
        if let Err(why) = poly_of(def, &classify) {
            let refused = NotAffine::Definition {
                name: name.to_string(),
                definition: spelled(def),
                why: Box::new(why),
            };
            self.not_affine.insert(key.to_string(), refused);
            return;
        }
        let paren = CExpr {
            kind: CExprKind::Paren(Box::new(def.clone())),
            ..def.clone()
        };
        let read = CExpr {
            kind: CExprKind::Implicit(Box::new(paren)),
            ty: ty.clone(),
            loc: def.loc.clone(),
        };
        self.defs.insert(key.to_string(), read);
        self.defined = true;
    }

    /// Whether `def` reads only unwritten integer parameters and globals,
    /// literals and enumerators, through arithmetic.
    fn only_sizes(&self, def: &CExpr) -> bool {
        let mut ok = true;
        walk_expr(def, &mut |n| {
            ok &= match &n.kind {
                CExprKind::Ref(r) => match r.target {
                    RefTarget::Param | RefTarget::Global => {
                        n.ty.is_integer() && self.settled(&r.key, 0)
                    }
                    RefTarget::EnumConstant(_) => true,
                    _ => false,
                },
                CExprKind::Binary { op, .. } => matches!(
                    op,
                    CBinOp::Add | CBinOp::Sub | CBinOp::Mul | CBinOp::Div | CBinOp::Rem
                ),
                CExprKind::Unary { op, .. } => matches!(op, CUnOp::Minus | CUnOp::Plus),
                CExprKind::Int(_)
                | CExprKind::MacroInt { .. }
                | CExprKind::Paren(_)
                | CExprKind::Implicit(_)
                | CExprKind::Cast(_) => n.ty.is_integer(),
                _ => false,
            }
        });
        ok
    }

    /// `e` with every read of an accepted size local replaced.
    fn replaced(&self, e: &CExpr) -> CExpr {
        match &e.kind {
            CExprKind::Ref(r) => {
                if let Some(def) = self.defs.get(&r.key) {
                    return CExpr {
                        loc: e.loc.clone(),
                        ..def.clone()
                    };
                }
            }
            // A restated definition (`i__2 = *m;` in a loop) stays a store
            // to the local, not to what it stands for.
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                rhs,
            } if matches!(&strip(lhs).kind, CExprKind::Ref(r) if self.defs.contains_key(&r.key)) => {
                let mut out = e.clone();
                if let CExprKind::Binary { rhs: r, .. } = &mut out.kind {
                    **r = self.replaced(rhs);
                }
                return out;
            }
            _ => {}
        }
        let mut out = e.clone();
        out.map_children(&mut |c| self.replaced(c));
        out
    }
}

/// `e` as C, for messages (conversions left out; `…` for what a size
/// definition cannot contain).
fn spelled(e: &CExpr) -> String {
    match &e.kind {
        CExprKind::Int(IntValue::Fits(v)) => v.to_string(),
        CExprKind::MacroInt { name, .. } => name.clone(),
        CExprKind::Ref(r) => r.name.clone(),
        CExprKind::Paren(inner) => format!("({})", spelled(inner)),
        CExprKind::Implicit(inner) | CExprKind::Cast(inner) => spelled(inner),
        CExprKind::Unary {
            op: CUnOp::Minus,
            arg,
        } => format!("-{}", spelled(arg)),
        CExprKind::Binary { op, lhs, rhs } => {
            let symbol = match op {
                CBinOp::Add => "+",
                CBinOp::Sub => "-",
                CBinOp::Mul => "*",
                CBinOp::Div => "/",
                CBinOp::Rem => "%",
                _ => "?",
            };
            format!("{} {symbol} {}", spelled(lhs), spelled(rhs))
        }
        _ => "…".into(),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_local_restated_to_one_size_before_each_loop_stands_for_it() {
        // f2c's form: the inner bound copied to `i__2` in the outer loop.
        let restated = lowered(
            "void k(int m, int n, float *a) {
               int i, j, i__2;
               for (j = 0; j < n; j++) {
                 i__2 = m;
                 for (i = 0; i < i__2; i++) a[j*m + i] = 0.0f;
               }
             }",
        );
        let plain = lowered(
            "void k(int m, int n, float *a) {
               int i, j;
               for (j = 0; j < n; j++)
                 for (i = 0; i < m; i++) a[j*m + i] = 0.0f;
             }",
        );
        assert!(plain.is_ok(), "{plain:?}");
        assert_eq!(restated, plain);
        // Set to two different sizes, it stands for neither.
        let two = lowered(
            "void k(int m, int n, float *a) {
               int i, j, b;
               for (j = 0; j < n; j++) {
                 b = m;
                 if (j > 2) b = n;
                 for (i = 0; i < b; i++) a[j*m + i] = 0.0f;
               }
             }",
        );
        assert!(two.is_err(), "{two:?}");
    }

    #[test]
    fn a_local_set_once_to_a_size_stands_for_it() {
        let body = lowered(
            "#include <stdint.h>
             typedef struct { uint16_t rows; float *data; } mat;
             void k(const mat *a, float *y, int n) {
               uint16_t r = a->rows;
               int m, total;
               m = n - 1;
               total = m * 2;
               for (uint16_t i = 0; i < r; i++) y[i] = a->data[i];
               for (int j = 0; j < total; j++) y[j] += 1;
             }",
        )
        .expect("lifts");
        assert!(body.starts_with("for i in 0..a_rows step 1"), "{body}");
        assert!(body.contains("for j in 0..2*n - 2 step 1"), "{body}");
    }

    #[test]
    fn a_local_written_in_its_loop_or_set_to_two_sizes_is_left_alone() {
        // Written in the loop: still TL015 on its bound.
        let written = "void k(float *y, int n) { int m = n; for (int i = 0; i < m; i++) { y[i] = 0; m = m + 0; } }";
        assert!(lowered(written).is_err());
        // Set to two sizes, one after a loop: neither.
        let twice = "void k(float *y, int n) { int m; m = n; for (int i = 0; i < m; i++) y[i] = 0; m = n - 1; for (int j = 0; j < m; j++) y[j] = 1; }";
        assert_eq!(lowered(twice), Err(vec!["TL015", "TL015"]));
        // Set once, after a loop that does not read it: that size (a read
        // before any store would read an indeterminate value).
        let late = "void k(float *y, int n) { int m; for (int i = 0; i < n; i++) y[i] = 0; m = n; for (int j = 0; j < m; j++) y[j] = 1; }";
        let plain = "void k(float *y, int n) { for (int i = 0; i < n; i++) y[i] = 0; for (int j = 0; j < n; j++) y[j] = 1; }";
        assert_eq!(lowered(late), lowered(plain));
    }

    #[test]
    fn a_division_names_the_local_and_its_definition() {
        let d = crate::test_util::diagnostics(
            "void k(float *y, int h) { int oh = h / 2; for (int i = 0; i < oh; i++) y[i] = 0; }",
        );
        assert!(
            d.contains("`oh` is set to `h / 2`, which is not affine: division by 2 is not linear"),
            "{d}"
        );
    }
}
