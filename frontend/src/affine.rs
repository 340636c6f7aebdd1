//! Integer polynomials over iterators and size parameters, and their
//! extraction from C expressions.
//!
//! Subscripts and bounds are first read as polynomials ([`Poly`]) so that a
//! linearised `i*lda + k` (degree 2) can still be split into dimensions by
//! [`crate::delinearize`]; loop bounds, guards and declared subscripts then
//! require degree at most one and become [`Affine`]. Arithmetic is checked:
//! an overflow is an error, never a wrap.

use std::collections::BTreeMap;

use crate::ir::Affine;
use crate::syntax::{CBinOp, CExpr, CExprKind, CUnOp, DeclRef, IntValue, RefTarget};

/// Most monomials and highest degree we track before calling an
/// expression non-affine (keeps `(i+j)*(i+j)*...` from exploding).
const MAX_TERMS: usize = 64;
const MAX_DEGREE: usize = 8;

/// A product of variables, sorted (repeats allowed); empty = the constant 1.
pub type Monomial = Vec<String>;

/// `Σ coeff · monomial` with non-zero coefficients only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly {
    pub terms: BTreeMap<Monomial, i64>,
}

/// Why an expression is not a polynomial over iterators and sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAffine {
    /// Reads an array element (an indirect, data-dependent value).
    Indirect,
    /// Uses a variable that is neither an iterator nor an integer parameter.
    Variable(String),
    /// Non-linear (products of variables where not allowed, division, `%`).
    NonLinear(String),
    /// A checked operation overflowed 64 bits.
    Overflow,
    /// A loop iterator used after (outside) its loop.
    StaleIterator(String),
    /// `++`, `--` or an assignment inside the expression.
    SideEffect,
    /// Not an integer expression (floats, calls, ...).
    Other(String),
    /// A local set from memory (`int ix = targets[b*T + t];`): an index
    /// taken from data, a gather.
    Loaded { name: String, definition: String },
    /// A local set once to a size expression that is not affine
    /// (`int oh = h / 2;`).
    Definition {
        name: String,
        definition: String,
        why: Box<NotAffine>,
    },
}

impl std::fmt::Display for NotAffine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAffine::Indirect => f.write_str("it reads an array element"),
            NotAffine::Variable(v) => write!(
                f,
                "`{v}` is not a loop iterator or an integer parameter the kernel leaves unchanged"
            ),
            NotAffine::NonLinear(what) => write!(f, "{what} is not linear"),
            NotAffine::Overflow => f.write_str("its constant arithmetic overflows 64 bits"),
            NotAffine::StaleIterator(v) => {
                write!(f, "`{v}` is a loop iterator used outside its loop")
            }
            NotAffine::SideEffect => f.write_str("it assigns or increments a variable"),
            NotAffine::Other(what) => write!(f, "it contains {what}"),
            NotAffine::Loaded { name, definition } => write!(
                f,
                "`{name}` is set to `{definition}`, an index read from memory (a gather by \
                 data, which tenslift does not lift)"
            ),
            NotAffine::Definition {
                name,
                definition,
                why,
            } => write!(
                f,
                "`{name}` is set to `{definition}`, which is not affine: {why}"
            ),
        }
    }
}

/// How a name is seen by affine extraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AffineName {
    /// A loop iterator or integer size parameter, by its IR name.
    Var(String),
    /// A known integer constant (an enumerator).
    Constant(i64),
    /// A name that stands for a polynomial (an unmodified local
    /// initialised with an integer polynomial: `int m = n - 1;`, `int at = i * n + j;`).
    Poly(Poly),
    /// Anything else (the C name, for the message).
    Opaque(String),
    /// A loop iterator outside its loop.
    StaleIterator(String),
    /// A name refused for a reason of its own.
    Refused(NotAffine),
}

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    pub fn var(name: &str) -> Poly {
        let mut p = Poly::default();
        p.terms.insert(vec![name.to_string()], 1);
        p
    }

    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    pub fn degree(&self) -> usize {
        self.terms.keys().map(Vec::len).max().unwrap_or(0)
    }

    fn add_term(&mut self, m: Monomial, c: i64) -> Result<(), NotAffine> {
        let entry = self.terms.entry(m).or_insert(0);
        *entry = entry.checked_add(c).ok_or(NotAffine::Overflow)?;
        let zero: Vec<Monomial> = self
            .terms
            .iter()
            .filter(|(_, &v)| v == 0)
            .map(|(k, _)| k.clone())
            .collect();
        for k in zero {
            self.terms.remove(&k);
        }
        if self.terms.len() > MAX_TERMS {
            return Err(NotAffine::NonLinear("an expression this large".into()));
        }
        Ok(())
    }

    pub fn add(&self, other: &Poly) -> Result<Poly, NotAffine> {
        let mut out = self.clone();
        for (m, &c) in &other.terms {
            out.add_term(m.clone(), c)?;
        }
        Ok(out)
    }

    pub fn scale(&self, k: i64) -> Result<Poly, NotAffine> {
        let mut out = Poly::default();
        for (m, &c) in &self.terms {
            out.add_term(m.clone(), c.checked_mul(k).ok_or(NotAffine::Overflow)?)?;
        }
        Ok(out)
    }

    pub fn sub(&self, other: &Poly) -> Result<Poly, NotAffine> {
        self.add(&other.scale(-1)?)
    }

    pub fn mul(&self, other: &Poly) -> Result<Poly, NotAffine> {
        let mut out = Poly::default();
        for (ma, &ca) in &self.terms {
            for (mb, &cb) in &other.terms {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                m.sort();
                if m.len() > MAX_DEGREE {
                    return Err(NotAffine::NonLinear("a product this deep".into()));
                }
                out.add_term(m, ca.checked_mul(cb).ok_or(NotAffine::Overflow)?)?;
            }
        }
        Ok(out)
    }

    /// Exact division by a constant (every coefficient divisible).
    pub fn div_exact(&self, k: i64) -> Option<Poly> {
        if k == 0 {
            return None;
        }
        let mut out = Poly::default();
        for (m, &c) in &self.terms {
            if c.checked_rem(k)? != 0 {
                return None;
            }
            out.terms.insert(m.clone(), c.checked_div(k)?);
        }
        Some(out)
    }

    /// The affine form, when the degree is at most one.
    pub fn to_affine(&self) -> Option<Affine> {
        let mut a = Affine::constant(0);
        for (m, &c) in &self.terms {
            match m.as_slice() {
                [] => a.constant = c,
                [v] => {
                    a.terms.insert(v.clone(), c);
                }
                _ => return None,
            }
        }
        Some(a)
    }

    pub fn from_affine(a: &Affine) -> Poly {
        let mut p = Poly::constant(a.constant);
        for (v, &c) in &a.terms {
            p.terms.insert(vec![v.clone()], c);
        }
        p
    }

    /// Variables that occur anywhere.
    pub fn vars(&self) -> impl Iterator<Item = &String> {
        self.terms.keys().flatten()
    }
}

/// Reads an integer expression as a polynomial. `name` classifies each
/// referenced declaration (enumerators are constants already).
pub fn poly_of(e: &CExpr, name: &dyn Fn(&DeclRef) -> AffineName) -> Result<Poly, NotAffine> {
    match &e.kind {
        CExprKind::Int(IntValue::Fits(v)) | CExprKind::MacroInt { value: v, .. } => {
            Ok(Poly::constant(*v))
        }
        CExprKind::Int(IntValue::TooLarge) => Err(NotAffine::Overflow),
        CExprKind::Ref(DeclRef {
            target: RefTarget::EnumConstant(v),
            ..
        }) => Ok(Poly::constant(*v)),
        CExprKind::Ref(r) => match name(r) {
            AffineName::Var(v) => Ok(Poly::var(&v)),
            AffineName::Constant(c) => Ok(Poly::constant(c)),
            AffineName::Poly(p) => Ok(p),
            AffineName::Opaque(n) => Err(NotAffine::Variable(n)),
            AffineName::StaleIterator(n) => Err(NotAffine::StaleIterator(n)),
            AffineName::Refused(why) => Err(why),
        },
        CExprKind::Paren(inner) => poly_of(inner, name),
        CExprKind::Implicit(inner) | CExprKind::Cast(inner) => {
            // Integer-to-integer conversions are transparent: index
            // arithmetic is assumed not to overflow (as in C with `int` loops).
            if e.ty.is_integer() && inner.ty.is_integer() {
                poly_of(inner, name)
            } else {
                Err(NotAffine::Other("a non-integer value".into()))
            }
        }
        CExprKind::Unary { op, arg } => match op {
            CUnOp::Minus => poly_of(arg, name)?.scale(-1),
            CUnOp::Plus => poly_of(arg, name),
            CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec => {
                Err(NotAffine::SideEffect)
            }
            _ => Err(NotAffine::Other("an unsupported operator".into())),
        },
        CExprKind::Binary {
            op: CBinOp::Assign | CBinOp::CompoundAssign(_),
            ..
        } => Err(NotAffine::SideEffect),
        CExprKind::Binary { op, lhs, rhs } => {
            let a = poly_of(lhs, name)?;
            let b = poly_of(rhs, name)?;
            match op {
                CBinOp::Add => a.add(&b),
                CBinOp::Sub => a.sub(&b),
                CBinOp::Mul => a.mul(&b),
                CBinOp::Div => match b.as_constant() {
                    Some(k) if k != 0 => a
                        .div_exact(k)
                        .ok_or_else(|| NotAffine::NonLinear(format!("division by {k}"))),
                    _ => Err(NotAffine::NonLinear("division".into())),
                },
                CBinOp::Rem => Err(NotAffine::NonLinear("`%`".into())),
                // `i << 1` in a subscript is `2 * i`.
                CBinOp::Shl => match b.as_constant() {
                    Some(k @ 0..=32) => a.mul(&Poly::constant(1i64 << k)),
                    _ => Err(NotAffine::NonLinear("a shift by a variable".into())),
                },
                CBinOp::Shr => Err(NotAffine::NonLinear("`>>`".into())),
                _ => Err(NotAffine::Other("a non-arithmetic operator".into())),
            }
        }
        CExprKind::Subscript { .. } => Err(NotAffine::Indirect),
        CExprKind::Call { .. } => Err(NotAffine::Other("a call".into())),
        _ => Err(NotAffine::Other("an unsupported expression".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Loc;
    use crate::ir::ScalarType;
    use crate::syntax::CType;

    fn loc() -> Loc {
        Loc {
            file: "t.c".into(),
            line: 1,
            col: 1,
        }
    }
    fn int(v: i64) -> CExpr {
        CExpr {
            kind: CExprKind::Int(IntValue::Fits(v)),
            ty: CType::Scalar(ScalarType::I32),
            loc: loc(),
        }
    }
    fn var(n: &str) -> CExpr {
        CExpr {
            kind: CExprKind::Ref(DeclRef {
                name: n.into(),
                key: n.into(),
                target: RefTarget::Local,
            }),
            ty: CType::Scalar(ScalarType::I32),
            loc: loc(),
        }
    }
    fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
        CExpr {
            kind: CExprKind::Binary {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            ty: CType::Scalar(ScalarType::I32),
            loc: loc(),
        }
    }
    fn names(r: &DeclRef) -> AffineName {
        match r.key.as_str() {
            "tmp" => AffineName::Opaque("tmp".into()),
            "K" => AffineName::Constant(7),
            other => AffineName::Var(other.into()),
        }
    }

    #[test]
    fn affine_sum_with_constants_and_enumerators() {
        // 2*i + (j - 3) + K
        let e = bin(
            CBinOp::Add,
            bin(
                CBinOp::Add,
                bin(CBinOp::Mul, int(2), var("i")),
                bin(CBinOp::Sub, var("j"), int(3)),
            ),
            var("K"),
        );
        let a = poly_of(&e, &names).unwrap().to_affine().unwrap();
        assert_eq!(a.to_string(), "2*i + j + 4");
    }

    #[test]
    fn exact_division_by_constant_folds() {
        let e = bin(CBinOp::Div, bin(CBinOp::Mul, int(4), var("n")), int(2));
        assert_eq!(
            poly_of(&e, &names)
                .unwrap()
                .to_affine()
                .unwrap()
                .to_string(),
            "2*n"
        );
        let inexact = bin(CBinOp::Div, var("n"), int(2));
        assert!(matches!(
            poly_of(&inexact, &names),
            Err(NotAffine::NonLinear(_))
        ));
    }

    #[test]
    fn products_are_polynomials_not_affine() {
        let e = bin(
            CBinOp::Add,
            bin(CBinOp::Mul, var("i"), var("lda")),
            var("k"),
        );
        let p = poly_of(&e, &names).unwrap();
        assert_eq!(p.degree(), 2);
        assert!(p.to_affine().is_none());
    }

    #[test]
    fn locals_and_overflow_are_refused() {
        assert_eq!(
            poly_of(&var("tmp"), &names),
            Err(NotAffine::Variable("tmp".into()))
        );
        let big = bin(CBinOp::Mul, int(i64::MAX), int(2));
        assert_eq!(poly_of(&big, &names), Err(NotAffine::Overflow));
    }
}
