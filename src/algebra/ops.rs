//! Queries and rewrites the search needs: the symbols of an expression
//! (cached per node), substitution, and coefficient extraction.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::atom::{Atom, AtomKind, Func, Symbol};
use super::expr::{Expr, Mono, Term};
use super::AlgebraError;

fn extend_symbols(into: &mut Vec<Symbol>, more: &[Symbol]) {
    into.extend_from_slice(more);
}

/// The symbols inside one atom (arguments' sets are cached).
pub(crate) fn atom_symbols(atom: &Atom, out: &mut Vec<Symbol>) {
    match atom.kind() {
        AtomKind::Sym { .. } => {
            if let Some(s) = atom.as_symbol() {
                out.push(s);
            }
        }
        AtomKind::App { args, .. } => {
            for a in args.iter() {
                extend_symbols(out, &a.symbols());
            }
        }
        AtomKind::Recip(q) => extend_symbols(out, &q.symbols()),
    }
}

fn atom_mentions(atom: &Atom, wanted: &dyn Fn(&Symbol) -> bool) -> bool {
    match atom.kind() {
        AtomKind::Sym { .. } => atom.as_symbol().is_some_and(|s| wanted(&s)),
        AtomKind::App { args, .. } => args.iter().any(|a| a.symbols().iter().any(wanted)),
        AtomKind::Recip(q) => q.symbols().iter().any(wanted),
    }
}

impl Expr {
    /// Every symbol occurring anywhere in the expression (inputs and holes),
    /// sorted and distinct. Computed once per interned node.
    pub fn symbols(&self) -> Arc<[Symbol]> {
        self.0
            .symbols
            .get_or_init(|| {
                let mut all = Vec::new();
                for term in self.terms() {
                    for (atom, _) in term.mono.factors() {
                        atom_symbols(atom, &mut all);
                    }
                }
                all.sort();
                all.dedup();
                all.into()
            })
            .clone()
    }

    /// `var(e)`: the program inputs the expression depends on (holes excluded).
    pub fn vars(&self) -> Vec<Symbol> {
        self.symbols()
            .iter()
            .filter(|s| !s.is_hole())
            .cloned()
            .collect()
    }

    /// `|var(e)|`.
    pub fn var_count(&self) -> usize {
        self.symbols().iter().filter(|s| !s.is_hole()).count()
    }

    /// The sketch holes occurring in the expression.
    pub fn holes(&self) -> Vec<Symbol> {
        self.symbols()
            .iter()
            .filter(|s| s.is_hole())
            .cloned()
            .collect()
    }

    /// Whether the two expressions have an input symbol in common: the
    /// cheap static check that discards sketches unrelated to a spec.
    pub fn shares_var_with(&self, other: &Expr) -> bool {
        let (a, b) = (self.symbols(), other.symbols());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal if a[i].is_hole() => {
                    i += 1;
                    j += 1;
                }
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    pub fn contains_symbol(&self, symbol: &Symbol) -> bool {
        self.symbols().binary_search(symbol).is_ok()
    }

    /// Replaces symbols by expressions, simultaneously, and renormalises
    /// (folding applications whose arguments became constant).
    pub fn substitute(&self, map: &HashMap<Symbol, Expr>) -> Result<Expr, AlgebraError> {
        if map.is_empty() || !self.symbols().iter().any(|s| map.contains_key(s)) {
            return Ok(self.clone());
        }
        let mut memo = HashMap::new();
        substitute_in(self, map, &mut memo)
    }

    /// Substitutes a single symbol.
    pub fn substitute_one(&self, symbol: &Symbol, value: &Expr) -> Result<Expr, AlgebraError> {
        let mut map = HashMap::with_capacity(1);
        map.insert(symbol.clone(), value.clone());
        self.substitute(&map)
    }

    /// Coefficients of the expression as a polynomial in `wrt`: pairs of a
    /// monomial over `wrt` and its coefficient (free of `wrt`), in monomial
    /// order. Fails when a symbol of `wrt` occurs inside an application or a
    /// reciprocal, where it is not a polynomial variable.
    pub fn coefficients(&self, wrt: &[Symbol]) -> Result<Vec<(Mono, Expr)>, AlgebraError> {
        let mut wanted: Vec<Symbol> = wrt.to_vec();
        wanted.sort();
        let is_wanted = |s: &Symbol| wanted.binary_search(s).is_ok();
        let mut groups: BTreeMap<Mono, Vec<Term>> = BTreeMap::new();
        for term in self.terms() {
            let mut key = Vec::new();
            let mut rest = Vec::new();
            for (atom, exp) in term.mono.factors() {
                match atom.as_symbol() {
                    Some(s) if is_wanted(&s) => key.push((atom.clone(), *exp)),
                    _ => {
                        if atom_mentions(atom, &is_wanted) {
                            let culprit = wanted
                                .iter()
                                .find(|s| {
                                    let mut inner = Vec::new();
                                    atom_symbols(atom, &mut inner);
                                    inner.contains(s)
                                })
                                .cloned();
                            return Err(AlgebraError::NotPolynomial {
                                symbol: culprit.map(|s| s.to_string()).unwrap_or_default(),
                            });
                        }
                        rest.push((atom.clone(), *exp));
                    }
                }
            }
            groups.entry(Mono(key.into())).or_default().push(Term {
                coeff: term.coeff.clone(),
                mono: Mono(rest.into()),
            });
        }
        Ok(groups
            .into_iter()
            .map(|(m, terms)| (m, Expr::from_terms(terms)))
            .filter(|(_, c)| !c.is_zero())
            .collect())
    }

    /// The coefficient of `symbol^power` (other `wrt` symbols not separated).
    pub fn coefficient_of(&self, symbol: &Symbol, power: i32) -> Result<Expr, AlgebraError> {
        let target = if power == 0 {
            Mono::one()
        } else {
            Mono(Arc::new([(symbol.atom().clone(), power)]))
        };
        Ok(self
            .coefficients(std::slice::from_ref(symbol))?
            .into_iter()
            .find(|(m, _)| *m == target)
            .map_or_else(Expr::zero, |(_, c)| c))
    }

    /// Highest and lowest exponent of `symbol` at top level.
    pub fn degree_in(&self, symbol: &Symbol) -> (i32, i32) {
        let atom = symbol.atom();
        let exps = self.terms().iter().map(|t| t.mono.exponent(atom));
        let (lo, hi) = exps.fold((i32::MAX, i32::MIN), |(lo, hi), e| (lo.min(e), hi.max(e)));
        if self.is_zero() {
            (0, 0)
        } else {
            (hi, lo)
        }
    }

    /// Rebuilds an application from its function and (new) arguments through
    /// the normalising constructors.
    pub fn apply(func: Func, args: &[Expr]) -> Result<Expr, AlgebraError> {
        let arity_error = || AlgebraError::Arity {
            func: func.name(),
            given: args.len(),
        };
        Ok(match (func, args) {
            (Func::Sqrt, [x]) => x.sqrt(),
            (Func::Exp, [x]) => x.exp(),
            (Func::Log, [x]) => x.log(),
            (Func::Tanh, [x]) => x.tanh(),
            (Func::Round, [x]) => x.integral(Func::Round),
            (Func::Floor, [x]) => x.integral(Func::Floor),
            (Func::Ceil, [x]) => x.integral(Func::Ceil),
            (Func::Sin, [x]) => x.sin(),
            (Func::Cos, [x]) => x.cos(),
            (Func::Cosh, [x]) => x.cosh(),
            (Func::Sinh, [x]) => x.sinh(),
            (Func::Abs, [x]) => x.abs(),
            (Func::Pow, [x, y]) => x.pow_real(y),
            (Func::Max, xs) if !xs.is_empty() => Expr::max_of(xs),
            (Func::Min, xs) if !xs.is_empty() => Expr::min_of(xs),
            (Func::Select, [c, a, b]) => Expr::select(c, a, b),
            (Func::Lt0, [d]) => Expr::lt0(d),
            (Func::Eq0, [d]) => Expr::eq0(d),
            (Func::TruncDiv, [a, b]) => Expr::trunc_div(a, b),
            (Func::Rem, [a, b]) => Expr::rem(a, b),
            (Func::Trunc, [x]) => x.trunc(),
            (Func::Wrap { bits, signed }, [x]) => x.wrap(bits, signed),
            _ => return Err(arity_error()),
        })
    }
}

fn substitute_atom(
    atom: &Atom,
    map: &HashMap<Symbol, Expr>,
    memo: &mut HashMap<Atom, Expr>,
) -> Result<Expr, AlgebraError> {
    if let Some(done) = memo.get(atom) {
        return Ok(done.clone());
    }
    let result = match atom.kind() {
        AtomKind::Sym { .. } => match atom.as_symbol().and_then(|s| map.get(&s).cloned()) {
            Some(value) => value,
            None => Expr::atom(atom.clone()),
        },
        AtomKind::App { func, args } => {
            let new_args = args
                .iter()
                .map(|a| substitute_in(a, map, memo))
                .collect::<Result<Vec<_>, _>>()?;
            Expr::apply(*func, &new_args)?
        }
        AtomKind::Recip(q) => Expr::one().div(&substitute_in(q, map, memo)?)?,
    };
    memo.insert(atom.clone(), result.clone());
    Ok(result)
}

fn substitute_in(
    e: &Expr,
    map: &HashMap<Symbol, Expr>,
    memo: &mut HashMap<Atom, Expr>,
) -> Result<Expr, AlgebraError> {
    if !e.symbols().iter().any(|s| map.contains_key(s)) {
        return Ok(e.clone());
    }
    let mut untouched = Vec::new();
    let mut rebuilt = Vec::new();
    for term in e.terms() {
        let affected = term
            .mono
            .factors()
            .iter()
            .any(|(a, _)| atom_mentions(a, &|s| map.contains_key(s)));
        if !affected {
            untouched.push(term.clone());
            continue;
        }
        let mut product = Expr::constant(term.coeff.clone());
        for (atom, exp) in term.mono.factors() {
            let value = substitute_atom(atom, map, memo)?;
            product = product.mul(&value.pow(*exp)?);
        }
        rebuilt.push(product);
    }
    let base = Expr::from_terms(untouched);
    Ok(Expr::sum(std::iter::once(&base).chain(rebuilt.iter())))
}
