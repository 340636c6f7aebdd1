//! Narrow integer arithmetic: a range analysis over TensIR integer
//! expressions and the emitter-side lowering built on it.
//!
//! TensIR keeps C's semantics: an 8-bit blend reads `u8` pixels, promotes
//! them to `i32` and divides with C's truncating `/`. A target computes
//! faster on narrower lanes and without integer division, so before code
//! generation [`lower_program`] rewrites each expression into one that
//! yields the same values, bit for bit:
//!
//! - every integer node whose exact value range (from the input dtypes and
//!   constants, through `+ - * / %`, min/max, select and casts) fits a
//!   narrower type the target computes well in is computed in that type,
//!   and converted back where a wider consumer reads it;
//! - a division by a constant `c > 0` of a dividend proven in `[0, X]`
//!   becomes `(x * m) >> s` with the round-up magic numbers of
//!   [`div_magic`], where the product provably fits the chosen type.
//!
//! The rewrite is an emitter lowering: the program the synthesizer found and
//! the verifier proves is unchanged; the lowered program is valid TensIR with
//! the same meaning (the interpreter checks it, see the tests), so every
//! emitter renders it as it would any program. The shift appears as a
//! `trunc_div` by a power of two of a dividend proven non-negative;
//! [`shift_amount`] tells emitters when they may spell it `>>`.

use std::collections::HashMap;

use crate::dtype::{DType, Lit};
use crate::emit::Target;
use crate::expr::Expr;
use crate::ops::{BinaryOp as B, Op, ReduceKind, UnaryOp as U};
use crate::program::{Program, Stmt};

/// A closed interval of integers (`lo <= hi`), wide enough that no interval
/// operation on 64-bit bounds overflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub lo: i128,
    pub hi: i128,
}

impl Interval {
    pub fn new(lo: i128, hi: i128) -> Interval {
        Interval {
            lo: lo.min(hi),
            hi: hi.max(lo),
        }
    }

    pub fn point(v: i128) -> Interval {
        Interval { lo: v, hi: v }
    }

    /// Every value of an integer or bool type; `None` for floats.
    pub fn of_dtype(d: DType) -> Option<Interval> {
        let (lo, hi): (i128, i128) = match d {
            DType::Bool => (0, 1),
            DType::I8 => (i8::MIN.into(), i8::MAX.into()),
            DType::I16 => (i16::MIN.into(), i16::MAX.into()),
            DType::I32 => (i32::MIN.into(), i32::MAX.into()),
            DType::I64 => (i64::MIN.into(), i64::MAX.into()),
            DType::U8 => (0, u8::MAX.into()),
            DType::U16 => (0, u16::MAX.into()),
            DType::U32 => (0, u32::MAX.into()),
            DType::F32 | DType::F64 => return None,
        };
        Some(Interval { lo, hi })
    }

    pub fn fits(self, d: DType) -> bool {
        Interval::of_dtype(d).is_some_and(|r| r.lo <= self.lo && self.hi <= r.hi)
    }

    pub fn hull(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }

    fn corners(vals: [i128; 4]) -> Interval {
        let lo = vals.iter().copied().min().unwrap_or(0);
        let hi = vals.iter().copied().max().unwrap_or(0);
        Interval::new(lo, hi)
    }

    /// The exact interval of `op` applied to operands in `a` and `b`
    /// (integer arithmetic, no wrap-around); `None` where the analysis has
    /// no rule (the caller falls back to the type's range).
    pub fn binary(op: B, a: Interval, b: Interval) -> Option<Interval> {
        let c = |f: fn(i128, i128) -> i128| {
            Interval::corners([f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)])
        };
        match op {
            B::Add => Some(Interval::new(a.lo + b.lo, a.hi + b.hi)),
            B::Sub => Some(Interval::new(a.lo - b.hi, a.hi - b.lo)),
            B::Mul => Some(c(|x, y| x * y)),
            B::Maximum => Some(Interval::new(a.lo.max(b.lo), a.hi.max(b.hi))),
            B::Minimum => Some(Interval::new(a.lo.min(b.lo), a.hi.min(b.hi))),
            // Truncating division is monotone in each operand on a divisor
            // range of one sign, so the corners bound it.
            B::TruncDiv if b.lo > 0 || b.hi < 0 => Some(c(|x, y| x / y)),
            B::Rem if b.lo > 0 || b.hi < 0 => {
                let m = b.lo.abs().max(b.hi.abs()) - 1;
                let lo = if a.lo >= 0 { 0 } else { (-m).max(a.lo) };
                let hi = if a.hi <= 0 { 0 } else { m.min(a.hi) };
                Some(Interval::new(lo, hi))
            }
            op if op.is_comparison() || matches!(op, B::And | B::Or) => Some(Interval::new(0, 1)),
            _ => None,
        }
    }
}

/// Memoised value ranges of the integer nodes of expressions: a sound
/// enclosure of every value a node takes under TensIR semantics (wrap-around
/// included: a node whose exact range leaves its type gets the type's range).
#[derive(Default)]
pub struct Ranges {
    memo: HashMap<Expr, Option<Interval>>,
}

impl Ranges {
    pub fn new() -> Ranges {
        Ranges::default()
    }

    /// The range of `e`'s values; `None` for float nodes.
    pub fn interval(&mut self, e: &Expr) -> Option<Interval> {
        if let Some(r) = self.memo.get(e) {
            return *r;
        }
        let r = self.compute(e);
        self.memo.insert(e.clone(), r);
        r
    }

    /// The exact range of `e` before wrap-around into its type (`None` for
    /// floats and for operations the analysis does not model).
    pub fn exact(&mut self, e: &Expr) -> Option<Interval> {
        Interval::of_dtype(e.dtype())?;
        let arg = |s: &mut Ranges, i: usize| s.interval(&e.args()[i]);
        match e.op() {
            Op::Lit(Lit::Int(v, _))
            | Op::Full {
                value: Lit::Int(v, _),
                ..
            } => Some(Interval::point((*v).into())),
            Op::Cast(_) if e.args()[0].dtype() == DType::Bool => Some(Interval::new(0, 1)),
            Op::Cast(_)
            | Op::Slice(_)
            | Op::Transpose(_)
            | Op::Broadcast(_)
            | Op::Flip(_)
            | Op::Reshape(_)
            | Op::Window(_)
            | Op::Reduce {
                kind: ReduceKind::Max | ReduceKind::Min,
                ..
            }
            | Op::Scan {
                kind: ReduceKind::Max | ReduceKind::Min,
                ..
            } => arg(self, 0),
            Op::Unary(U::Neg) => arg(self, 0).map(|a| Interval::new(-a.hi, -a.lo)),
            Op::Unary(U::Abs) => arg(self, 0).map(|a| {
                let m = a.lo.abs().max(a.hi.abs());
                let lo = if a.lo <= 0 && a.hi >= 0 {
                    0
                } else {
                    a.lo.abs().min(a.hi.abs())
                };
                Interval::new(lo, m)
            }),
            Op::Binary(op) => Interval::binary(*op, arg(self, 0)?, arg(self, 1)?),
            Op::Where => Some(self.selected(e)?.hull(arg(self, 2)?)),
            _ => None,
        }
    }

    /// The range of `where(c, x, y)`'s first branch `x` where the
    /// condition excludes zero from it: `where(x != 0, x, 1)`, the guard C
    /// code puts on a divisor (`a == 0 ? 255 : b / a`), and `x > 0`.
    fn selected(&mut self, e: &Expr) -> Option<Interval> {
        let (c, x) = (&e.args()[0], &e.args()[1]);
        let r = self.interval(x)?;
        let Op::Binary(op) = c.op() else {
            return Some(r);
        };
        let is_zero = |z: &Expr| matches!(z.op(), Op::Lit(Lit::Int(0, _)));
        let (l, rhs) = (&c.args()[0], &c.args()[1]);
        let tests_x = |a: &Expr, b: &Expr| a == x && is_zero(b);
        let positive = (*op == B::Gt && tests_x(l, rhs)) || (*op == B::Lt && tests_x(rhs, l));
        let nonzero = *op == B::Ne && (tests_x(l, rhs) || tests_x(rhs, l));
        Some(match () {
            _ if positive || (nonzero && r.lo == 0) => Interval::new(r.lo.max(1), r.hi.max(1)),
            _ if nonzero && r.hi == 0 => Interval::new(r.lo, -1),
            _ => r,
        })
    }

    fn compute(&mut self, e: &Expr) -> Option<Interval> {
        let full = Interval::of_dtype(e.dtype())?;
        match self.exact(e) {
            Some(r) if r.fits(e.dtype()) => Some(r),
            _ => Some(full),
        }
    }
}

/// `k` when `e` is `trunc_div(x, 2^k)` (`k >= 1`) with `x` proven
/// non-negative, so that a target may spell it `x >> k`.
pub fn shift_amount(e: &Expr) -> Option<u32> {
    if !matches!(e.op(), Op::Binary(B::TruncDiv)) {
        return None;
    }
    let Op::Lit(Lit::Int(c, _)) = e.args()[1].op() else {
        return None;
    };
    if *c < 2 || c.count_ones() != 1 {
        return None;
    }
    let nonneg = Ranges::new()
        .interval(&e.args()[0])
        .is_some_and(|r| r.lo >= 0);
    nonneg.then_some(c.trailing_zeros())
}

/// Whether `e` is an integer division whose dividend is proven non-negative
/// and whose divisor is proven positive (a constant, or a guarded value
/// such as `where(a != 0, a, 1)` of an unsigned `a`): floor and truncation
/// agree.
pub fn nonneg_by_positive(e: &Expr) -> bool {
    let mut ranges = Ranges::new();
    matches!(e.op(), Op::Binary(B::TruncDiv))
        && ranges.interval(&e.args()[1]).is_some_and(|r| r.lo >= 1)
        && ranges.interval(&e.args()[0]).is_some_and(|r| r.lo >= 0)
}

/// The largest dividend for which [`div_magic`] checks every value instead
/// of relying on the bound.
const EXHAUSTIVE_LIMIT: i128 = 1 << 20;

/// Magic numbers `(m, s)` with `floor(x * m / 2^s) == floor(x / c)` for every
/// `x` in `[0, max]`, by the round-up method: `m = ceil(2^s / c)` with the
/// error `e = m*c - 2^s`; writing `x = q*c + r`, `x*m / 2^s = q + (r + x*e/2^s)/c`,
/// so the quotient is exact when `x * e < 2^s` for every `x`, i.e.
/// `max * e < 2^s`. The smallest such `s` is taken (the smallest product);
/// for small ranges a smaller `s` that is exact on every value of the range
/// (checked exhaustively) is preferred. `None` for `c <= 1` or when `s`
/// would pass 62.
pub fn div_magic(c: i64, max: i64) -> Option<(i64, u32)> {
    if c <= 1 || max < 0 {
        return None;
    }
    let (c, max) = (i128::from(c), i128::from(max));
    for s in 0..=62u32 {
        let p = 1i128 << s;
        let m = (p + c - 1) / c;
        let e = m * c - p;
        let by_bound = max * e < p;
        let exact =
            by_bound || (max <= EXHAUSTIVE_LIMIT && (0..=max).all(|x| (x * m) >> s == x / c));
        if exact {
            return Some((i64::try_from(m).ok()?, s));
        }
    }
    None
}

/// What a target computes fast in: the narrowest integer width worth using,
/// whether unsigned types are usable, and whether constant division should
/// become a multiply and a shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub min_bits: u32,
    pub unsigned: bool,
    pub magic_div: bool,
}

impl Policy {
    /// Measured on the 8-bit blends (results/blend-narrow-2026-11-25.md):
    /// NumPy divides by a scalar with libdivide, fastest on `u16` lanes, so
    /// it narrows fully and keeps `//`; XLA and Inductor vectorise 32-bit
    /// lanes best and have slow vector division, so they keep `i32` and
    /// use multiply-shift. PyTorch lacks kernels for uint16/uint32.
    pub fn for_target(t: Target) -> Policy {
        match t {
            Target::Numpy => Policy {
                min_bits: 8,
                unsigned: true,
                magic_div: false,
            },
            Target::Pytorch => Policy {
                min_bits: 32,
                unsigned: false,
                magic_div: true,
            },
            Target::Jax | Target::Hlo => Policy {
                min_bits: 32,
                unsigned: true,
                magic_div: true,
            },
        }
    }

    /// The narrowest type of this policy that holds `r`, signed preferred
    /// at equal width.
    pub fn dtype_for(&self, r: Interval) -> Option<DType> {
        use DType::*;
        [I8, U8, I16, U16, I32, U32, I64]
            .into_iter()
            .filter(|d| d.bits() >= self.min_bits && (self.unsigned || d.is_signed_int()))
            .find(|d| r.fits(*d))
    }
}

/// The program with every statement's expressions lowered under `policy`.
pub fn lower_program(p: &Program, policy: Policy) -> Program {
    let mut l = Lowering::new(policy);
    Program {
        body: l.block(&p.body),
        ..p.clone()
    }
}

struct Lowering {
    policy: Policy,
    ranges: Ranges,
    memo: HashMap<Expr, Expr>,
    narrow_leaf: HashMap<Expr, u32>,
}

impl Lowering {
    fn new(policy: Policy) -> Lowering {
        Lowering {
            policy,
            ranges: Ranges::new(),
            memo: HashMap::new(),
            narrow_leaf: HashMap::new(),
        }
    }

    fn block(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        crate::program::map_values(stmts, &mut |value| self.keep(value))
    }

    /// `e` lowered, converted back to `e`'s own type.
    fn keep(&mut self, e: &Expr) -> Expr {
        let d = e.dtype();
        let low = self.lower(e);
        self.convert(low, e, d)
    }

    /// `low` (the lowering of `orig`, same values) in type `d`: a literal is
    /// retyped, anything else cast. Falls back to `orig`'s own node when a
    /// cast cannot be built (never, for integer types).
    fn convert(&mut self, low: Expr, orig: &Expr, d: DType) -> Expr {
        if low.dtype() == d {
            return low;
        }
        if let Op::Lit(Lit::Int(v, _)) = low.op() {
            let lit = Lit::Int(*v, d);
            if lit.in_range() {
                return Expr::lit(lit);
            }
        }
        Expr::new(Op::Cast(d), vec![low]).unwrap_or_else(|_| orig.clone())
    }

    /// An expression with the same values as `e`, possibly of another type.
    fn lower(&mut self, e: &Expr) -> Expr {
        if let Some(l) = self.memo.get(e) {
            return l.clone();
        }
        let l = self.lower_node(e).unwrap_or_else(|| e.clone());
        self.memo.insert(e.clone(), l.clone());
        l
    }

    /// The smallest bit width of an integer variable under `e`
    /// (`u32::MAX` where none).
    fn narrowest_leaf(&mut self, e: &Expr) -> u32 {
        if let Some(b) = self.narrow_leaf.get(e) {
            return *b;
        }
        let own = match e.op() {
            Op::Var(_) if e.dtype().is_int() => e.dtype().bits(),
            _ => u32::MAX,
        };
        let b = e
            .args()
            .iter()
            .map(|a| self.narrowest_leaf(a))
            .fold(own, u32::min);
        self.narrow_leaf.insert(e.clone(), b);
        b
    }

    /// The type to compute `e` in: narrower than its own where its exact
    /// range and its operands' fit one, it reads narrow data, and the policy
    /// allows; `None` to keep its type.
    fn compute_type(&mut self, e: &Expr) -> Option<DType> {
        let mut r = self.ranges.exact(e)?;
        let own = Interval::of_dtype(e.dtype())?;
        if !r.fits(e.dtype()) || self.narrowest_leaf(e) >= e.dtype().bits() {
            return None;
        }
        if !matches!(e.op(), Op::Cast(_)) {
            for a in e.args() {
                if a.dtype() == e.dtype() {
                    r = r.hull(self.ranges.interval(a).unwrap_or(own));
                }
            }
        }
        let d = self.policy.dtype_for(r)?;
        (d.bits() < e.dtype().bits()).then_some(d)
    }

    fn lower_node(&mut self, e: &Expr) -> Option<Expr> {
        let int = e.dtype().is_int();
        match e.op() {
            Op::Var(_) | Op::Lit(_) | Op::Full { .. } => None,
            // A value-preserving conversion between integer types: the
            // lowered operand already holds the value.
            Op::Cast(d) if int && e.args()[0].dtype().is_int() => {
                let r = self.ranges.interval(&e.args()[0])?;
                let low = self.lower(&e.args()[0]);
                if r.fits(*d) {
                    return Some(low);
                }
                Some(self.convert(low, &e.args()[0], *d))
            }
            Op::Binary(B::TruncDiv) if int && self.policy.magic_div => self
                .magic(e)
                .or_else(|| self.scaled_magic(e))
                .or_else(|| self.rebuild(e)),
            Op::Binary(_) | Op::Unary(U::Neg | U::Abs) | Op::Where if int => self.rebuild(e),
            Op::Binary(b) if b.is_comparison() && e.args()[0].dtype().is_int() => {
                self.rebuild_comparison(e)
            }
            _ => self.rebuild_keeping(e),
        }
    }

    /// `e` with operands (of `e`'s type) computed in the narrower type
    /// [`Self::compute_type`] picks, or in `e`'s type with lowered operands.
    fn rebuild(&mut self, e: &Expr) -> Option<Expr> {
        let Some(d) = self.compute_type(e) else {
            return self.rebuild_keeping(e);
        };
        let args: Vec<Expr> = e
            .args()
            .iter()
            .map(|a| {
                let low = self.lower(a);
                if a.dtype() == e.dtype() {
                    self.convert(low, a, d)
                } else {
                    self.convert(low, a, a.dtype())
                }
            })
            .collect();
        Expr::new(e.op().clone(), args).ok()
    }

    /// A comparison of integers, compared in the narrowest type holding both.
    fn rebuild_comparison(&mut self, e: &Expr) -> Option<Expr> {
        let own = e.args()[0].dtype();
        let (a, b) = (&e.args()[0], &e.args()[1]);
        let r = self.ranges.interval(a)?.hull(self.ranges.interval(b)?);
        let narrow = self.narrowest_leaf(e) < own.bits();
        let d = match self.policy.dtype_for(r) {
            Some(d) if narrow && d.bits() < own.bits() => d,
            _ => own,
        };
        let (la, lb) = (self.lower(a), self.lower(b));
        let args = vec![self.convert(la, a, d), self.convert(lb, b, d)];
        Expr::new(e.op().clone(), args).ok()
    }

    /// `e` with each operand lowered and converted back to its own type;
    /// `e` itself when nothing changed.
    fn rebuild_keeping(&mut self, e: &Expr) -> Option<Expr> {
        let args: Vec<Expr> = e.args().iter().map(|a| self.keep(a)).collect();
        if args.iter().zip(e.args()).all(|(x, y)| x == y) {
            return None;
        }
        Expr::new(e.op().clone(), args).ok()
    }

    /// `x / c` for a constant `c > 1` that is not a power of two and `x`
    /// proven in `[0, X]`: `(x * m) / 2^s` in the narrowest policy type that
    /// holds `X * m` (the division by `2^s` is emitted as a shift).
    fn magic(&mut self, e: &Expr) -> Option<Expr> {
        let c = positive_lit(&e.args()[1])?;
        let (q, _) = self.magic_quotient(&e.args()[0], c, e.dtype())?;
        Some(q)
    }

    /// The magic quotient `x / c` (see [`Self::magic`]) and its type.
    fn magic_quotient(&mut self, x: &Expr, c: i64, own: DType) -> Option<(Expr, DType)> {
        let r = self.ranges.interval(x)?;
        if r.lo < 0 || c <= 1 || c.count_ones() == 1 {
            return None;
        }
        let (m, s) = div_magic(c, i64::try_from(r.hi).ok()?)?;
        let product = Interval::new(0, r.hi * i128::from(m));
        let d = self.policy.dtype_for(product)?;
        let pow = Lit::Int(1i64.checked_shl(s)?, d);
        let mult = Lit::Int(m, d);
        if !pow.in_range() || !mult.in_range() || d.bits() > own.bits().max(32) {
            return None;
        }
        let low = self.lower(x);
        let xd = self.convert(low, x, d);
        let prod = Expr::binary(B::Mul, xd, Expr::lit(mult)).ok()?;
        Some((Expr::binary(B::TruncDiv, prod, Expr::lit(pow)).ok()?, d))
    }

    /// `(k * x) / c` for small constants `k` whose product `k * X` is too
    /// wide for [`Self::magic`]: with `q = x / c` (magic) and
    /// `r = x - q*c` in `[0, c-1]`, `(k*x)/c = k*q + (k*r)/c`, and
    /// `(k*r)/c >= j` exactly when `r >= ceil(j*c/k)`, so the last term is
    /// `k - 1` comparisons (8-bit overlay: `2*b*a/255`).
    fn scaled_magic(&mut self, e: &Expr) -> Option<Expr> {
        let c = positive_lit(&e.args()[1])?;
        let kx = &e.args()[0];
        if !matches!(kx.op(), Op::Binary(B::Mul)) {
            return None;
        }
        let (k, x) = match (positive_lit(&kx.args()[0]), positive_lit(&kx.args()[1])) {
            (Some(k), _) => (k, &kx.args()[1]),
            (None, Some(k)) => (k, &kx.args()[0]),
            _ => return None,
        };
        let exact = self.ranges.exact(kx)?;
        if !(2..=4).contains(&k) || !exact.fits(kx.dtype()) {
            return None;
        }
        let (q, d) = self.magic_quotient(x, c, e.dtype())?;
        let lit = |v: i64| Lit::Int(v, d).in_range().then(|| Expr::lit(Lit::Int(v, d)));
        let low = self.lower(x);
        let xd = self.convert(low, x, d);
        let r = Expr::binary(B::Sub, xd, Expr::binary(B::Mul, q.clone(), lit(c)?).ok()?).ok()?;
        let mut out = Expr::binary(B::Mul, q, lit(k)?).ok()?;
        for j in 1..k {
            let bound = (j * c + k - 1) / k;
            let ge = Expr::binary(B::Ge, r.clone(), lit(bound)?).ok()?;
            let one = Expr::new(Op::Cast(d), vec![ge]).ok()?;
            out = Expr::binary(B::Add, out, one).ok()?;
        }
        Some(out)
    }
}

/// The value of a positive integer literal.
fn positive_lit(e: &Expr) -> Option<i64> {
    match e.op() {
        Op::Lit(Lit::Int(v, _)) if *v > 0 => Some(*v),
        _ => None,
    }
}

#[cfg(test)]
#[path = "narrow_tests.rs"]
mod tests;
