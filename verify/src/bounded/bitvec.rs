//! Integer-only bounded queries re-posed over bit-vectors.
//!
//! The bounded check builds its formulas over Z3's mathematical integers,
//! with C's wrap-around as `mod 2^k` and truncating division as `div`. When
//! a kernel multiplies two unknowns (cubes, blends with a variable opacity)
//! that is nonlinear integer arithmetic with `mod`, which Z3 may give up
//! on. At bounded sizes every integer in the formula is bounded (inputs by
//! their C type, everything else by interval arithmetic over the terms), so
//! the same formula can be evaluated exactly in two's-complement
//! bit-vectors wide enough that no value, intermediate ones included, can
//! overflow: the translation is an equivalence, not an approximation, and
//! bit-blasting decides it.
//!
//! Only what the bounded check produces is translated: `+ - *`, unary
//! minus, `div`/`mod` by non-zero numerals, comparisons, `ite` and the
//! Boolean connectives over integer input constants and numerals. Anything
//! else (reals, uninterpreted functions, division by an unknown) leaves
//! the query to the integer solver.

use std::collections::HashMap;

use z3::ast::{Ast, Bool, Dynamic, Int, BV};
use z3::{AstKind, SortKind};

/// Widest bit-vector the translation uses; wider ranges stay integers.
pub(crate) const MAX_WIDTH: u32 = 256;

/// An integer input constant of the query and the range its C type allows.
pub(crate) struct IntInput {
    pub term: Int,
    pub range: (i128, i128),
}

/// A query over bit-vectors of one width, equisatisfiable with the integer
/// one, plus each integer input's bit-vector twin (to read models back).
pub(crate) struct BvQuery {
    pub formula: Bool,
    pub width: u32,
    pub inputs: Vec<(Int, BV)>,
    /// Whether the integer formula multiplies two non-constant terms.
    pub nonlinear: bool,
}

/// What one translated node became.
#[derive(Clone)]
enum Node {
    Bool(Bool),
    Int { bv: BV },
}

/// Translates `formulas` (their conjunction) or says why it cannot.
pub(crate) fn translate(formulas: &[Bool], inputs: &[IntInput]) -> Result<BvQuery, String> {
    let roots: Vec<Dynamic> = formulas.iter().map(|f| Dynamic::from_ast(f)).collect();
    let order = postorder(&roots)?;
    let known: HashMap<Dynamic, (i128, i128)> = inputs
        .iter()
        .map(|i| (Dynamic::from_ast(&i.term), i.range))
        .collect();

    // Pass 1: the range of every integer node and whether any product is
    // nonlinear; this fixes the width.
    let mut ranges: HashMap<Dynamic, (i128, i128)> = HashMap::new();
    let mut nonlinear = false;
    let mut widest = 1u32;
    for node in &order {
        if node.sort_kind() != SortKind::Int {
            continue;
        }
        let range = int_range(node, &known, &ranges, &mut nonlinear)?;
        widest = widest.max(signed_bits(range.0).max(signed_bits(range.1)));
        ranges.insert(node.clone(), range);
    }
    // One spare bit; whole bytes keep the encoding readable.
    let width = (widest + 1).div_ceil(8) * 8;
    if width > MAX_WIDTH {
        return Err(format!(
            "values need {width} bits, more than the {MAX_WIDTH} the bit-vector encoding allows"
        ));
    }

    // Pass 2: build the bit-vector formula bottom-up.
    let mut twins = Vec::new();
    let mut done: HashMap<Dynamic, Node> = HashMap::new();
    for input in inputs {
        let key = Dynamic::from_ast(&input.term);
        if ranges.contains_key(&key) {
            let name = format!("bv!{}", input.term);
            let bv = BV::new_const(name, width);
            twins.push((input.term.clone(), bv.clone()));
            done.insert(key, Node::Int { bv });
        }
    }
    for node in &order {
        if done.contains_key(node) {
            continue;
        }
        let built = build(node, &done, width)?;
        done.insert(node.clone(), built);
    }
    let mut parts = Vec::new();
    // Every input stays within its C type, as in the integer query.
    for (int, bv) in &twins {
        if let Some((lo, hi)) = ranges.get(&Dynamic::from_ast(int)) {
            parts.push(bv.bvsge(numeral(*lo, width)) & bv.bvsle(numeral(*hi, width)));
        }
    }
    for root in &roots {
        match done.get(root) {
            Some(Node::Bool(b)) => parts.push(b.clone()),
            _ => return Err("a query is not a formula".to_string()),
        }
    }
    Ok(BvQuery {
        formula: Bool::and(&parts),
        width,
        inputs: twins,
        nonlinear,
    })
}

/// Bits of a two's-complement number holding `v`.
fn signed_bits(v: i128) -> u32 {
    let magnitude = if v < 0 { !v } else { v };
    129 - magnitude.leading_zeros().min(128)
}

fn numeral(v: i128, width: u32) -> BV {
    let magnitude = BV::from_str(width, &v.unsigned_abs().to_string())
        .unwrap_or_else(|| BV::from_i64(0, width));
    if v < 0 {
        magnitude.bvneg()
    } else {
        magnitude
    }
}

/// Children before parents, each node once (an explicit stack: unrolled
/// kernels make deep terms).
fn postorder(roots: &[Dynamic]) -> Result<Vec<Dynamic>, String> {
    let mut order = Vec::new();
    let mut seen: HashMap<Dynamic, bool> = HashMap::new();
    let mut stack: Vec<(Dynamic, bool)> = roots.iter().rev().map(|r| (r.clone(), false)).collect();
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            order.push(node);
            continue;
        }
        if seen.contains_key(&node) {
            continue;
        }
        if !node.is_app() {
            return Err(format!("cannot translate `{node}` (not an application)"));
        }
        seen.insert(node.clone(), true);
        stack.push((node.clone(), true));
        for child in node.children().into_iter().rev() {
            if !seen.contains_key(&child) {
                stack.push((child, false));
            }
        }
    }
    Ok(order)
}

fn numeral_value(node: &Dynamic) -> Option<i128> {
    if node.kind() != AstKind::Numeral || node.sort_kind() != SortKind::Int {
        return None;
    }
    node.as_int()?.as_i128()
}

/// The operator's SMT-LIB name (`+`, `div`, `ite`, …). Names, not
/// `DeclKind`s: the z3 crate's `DeclKind` numbering is newer than the
/// Debian Z3 4.8 it links, so some kinds would be misread.
fn operator(node: &Dynamic) -> String {
    node.decl().name()
}

fn range_of(
    node: &Dynamic,
    ranges: &HashMap<Dynamic, (i128, i128)>,
) -> Result<(i128, i128), String> {
    ranges
        .get(node)
        .copied()
        .ok_or_else(|| format!("no range for `{node}`"))
}

fn overflow() -> String {
    "a value range exceeds 128 bits".to_string()
}

fn int_range(
    node: &Dynamic,
    known: &HashMap<Dynamic, (i128, i128)>,
    ranges: &HashMap<Dynamic, (i128, i128)>,
    nonlinear: &mut bool,
) -> Result<(i128, i128), String> {
    let args = node.children();
    let arg_ranges = || -> Result<Vec<(i128, i128)>, String> {
        args.iter().map(|a| range_of(a, ranges)).collect()
    };
    if node.kind() == AstKind::Numeral {
        let v = numeral_value(node).ok_or_else(overflow)?;
        return Ok((v, v));
    }
    if args.is_empty() {
        return known
            .get(node)
            .copied()
            .ok_or_else(|| format!("`{node}` is not an input of known range"));
    }
    let op = operator(node);
    Ok(match op.as_str() {
        "+" => arg_ranges()?
            .into_iter()
            .try_fold((0i128, 0i128), |(lo, hi), (a, b)| {
                Some((lo.checked_add(a)?, hi.checked_add(b)?))
            })
            .ok_or_else(overflow)?,
        "-" if args.len() == 1 => {
            let (lo, hi) = range_of(&args[0], ranges)?;
            (
                hi.checked_neg().ok_or_else(overflow)?,
                lo.checked_neg().ok_or_else(overflow)?,
            )
        }
        "-" => {
            let r = arg_ranges()?;
            let (first, rest) = r.split_first().ok_or_else(overflow)?;
            rest.iter()
                .try_fold(*first, |(lo, hi), (a, b)| {
                    Some((lo.checked_sub(*b)?, hi.checked_sub(*a)?))
                })
                .ok_or_else(overflow)?
        }
        "*" => {
            let unknowns = args.iter().filter(|a| numeral_value(a).is_none()).count();
            *nonlinear |= unknowns >= 2;
            arg_ranges()?
                .into_iter()
                .try_fold((1i128, 1i128), |(lo, hi), (a, b)| {
                    let p = [
                        lo.checked_mul(a)?,
                        lo.checked_mul(b)?,
                        hi.checked_mul(a)?,
                        hi.checked_mul(b)?,
                    ];
                    Some((*p.iter().min()?, *p.iter().max()?))
                })
                .ok_or_else(overflow)?
        }
        "div" | "mod" => {
            let [a, d] = args.as_slice() else {
                return Err(format!("`{node}` does not have two arguments"));
            };
            let divisor = numeral_value(d)
                .filter(|d| *d != 0)
                .ok_or_else(|| format!("division by the non-numeral `{d}`"))?;
            let (lo, hi) = range_of(a, ranges)?;
            if op == "mod" {
                (0, divisor.unsigned_abs() as i128 - 1)
            } else {
                // Euclidean quotients lie within one of a / d's range.
                let (p, q) = (lo / divisor, hi / divisor);
                (p.min(q) - 1, p.max(q) + 1)
            }
        }
        "if" | "ite" => {
            let r = args
                .get(1..3)
                .ok_or_else(|| format!("`{node}` is a malformed ite"))?;
            let (a, b) = (range_of(&r[0], ranges)?, range_of(&r[1], ranges)?);
            (a.0.min(b.0), a.1.max(b.1))
        }
        other => return Err(format!("the integer operation `{other}` is not translated")),
    })
}

/// `k` when `v` is `2^k` (k ≥ 1).
fn power_of_two(v: i128) -> Option<u32> {
    (v > 1 && v.count_ones() == 1).then(|| v.trailing_zeros())
}

/// C's signed wrap-around as the symbolic domain writes it,
/// `((a + 2^(k-1)) mod 2^k) - 2^(k-1)`, as the sign extension of `a`'s low
/// k bits: the same value, in the form bit-blasting handles well (the
/// products inside stay recognisably the same).
fn signed_wrap(
    node: &Dynamic,
    args: &[Dynamic],
    done: &HashMap<Dynamic, Node>,
) -> Result<Option<BV>, String> {
    let [modded, half] = args else {
        return Ok(None);
    };
    if operator(node) != "-" || modded.kind() == AstKind::Numeral {
        return Ok(None);
    }
    let Some(h) = numeral_value(half) else {
        return Ok(None);
    };
    let Some(k) = power_of_two(h).map(|k| k + 1) else {
        return Ok(None);
    };
    if operator(modded) != "mod" {
        return Ok(None);
    }
    let inner = modded.children();
    let [sum, modulus] = inner.as_slice() else {
        return Ok(None);
    };
    if numeral_value(modulus) != Some(h * 2) || operator(sum) != "+" {
        return Ok(None);
    }
    let terms = sum.children();
    let [p, q] = terms.as_slice() else {
        return Ok(None);
    };
    let value = match (numeral_value(p), numeral_value(q)) {
        (_, Some(c)) if c == h => p,
        (Some(c), _) if c == h => q,
        _ => return Ok(None),
    };
    let a = bv_arg(done, value)?;
    let width = a.get_size();
    if k >= width {
        return Ok(None);
    }
    Ok(Some(a.extract(k - 1, 0).sign_ext(width - k)))
}

fn bv_arg(done: &HashMap<Dynamic, Node>, a: &Dynamic) -> Result<BV, String> {
    match done.get(a) {
        Some(Node::Int { bv }) => Ok(bv.clone()),
        _ => Err(format!("`{a}` is not an integer")),
    }
}

fn bool_arg(done: &HashMap<Dynamic, Node>, a: &Dynamic) -> Result<Bool, String> {
    match done.get(a) {
        Some(Node::Bool(b)) => Ok(b.clone()),
        _ => Err(format!("`{a}` is not a formula")),
    }
}

fn build(node: &Dynamic, done: &HashMap<Dynamic, Node>, width: u32) -> Result<Node, String> {
    let args = node.children();
    let op = operator(node);
    let numeral_node = node.kind() == AstKind::Numeral;
    match node.sort_kind() {
        SortKind::Int => {
            let bvs =
                || -> Result<Vec<BV>, String> { args.iter().map(|a| bv_arg(done, a)).collect() };
            if numeral_node {
                let bv = numeral(numeral_value(node).ok_or_else(overflow)?, width);
                return Ok(Node::Int { bv });
            }
            if let Some(bv) = signed_wrap(node, &args, done)? {
                return Ok(Node::Int { bv });
            }
            let bv = match op.as_str() {
                "-" if args.len() == 1 => bv_arg(done, &args[0])?.bvneg(),
                "+" | "-" | "*" => {
                    let v = bvs()?;
                    let (first, rest) = v
                        .split_first()
                        .ok_or_else(|| format!("`{node}` has no arguments"))?;
                    rest.iter().fold(first.clone(), |acc, x| match op.as_str() {
                        "+" => acc.bvadd(x),
                        "-" => acc.bvsub(x),
                        _ => acc.bvmul(x),
                    })
                }
                "div" | "mod" => {
                    let (a, d) = (bv_arg(done, &args[0])?, &args[1]);
                    let divisor = numeral_value(d).ok_or_else(overflow)?;
                    // Z3's integer `mod` is Euclidean: in [0, |d|). bvsmod
                    // takes the divisor's sign, so with |d| it is the same;
                    // the quotient is then an exact division.
                    if op == "mod" {
                        // `mod 2^k` (an unsigned wrap) is the low k bits.
                        if let Some(k) = power_of_two(divisor).filter(|k| *k < width) {
                            return Ok(Node::Int {
                                bv: a.extract(k - 1, 0).zero_ext(width - k),
                            });
                        }
                    }
                    let remainder = a.bvsmod(numeral(divisor.abs(), width));
                    if op == "mod" {
                        remainder
                    } else {
                        a.bvsub(&remainder).bvsdiv(numeral(divisor, width))
                    }
                }
                "if" | "ite" => {
                    let c = bool_arg(done, &args[0])?;
                    c.ite(&bv_arg(done, &args[1])?, &bv_arg(done, &args[2])?)
                }
                other => return Err(format!("the integer operation `{other}` is not translated")),
            };
            Ok(Node::Int { bv })
        }
        SortKind::Bool => {
            let bools = || -> Result<Vec<Bool>, String> {
                args.iter().map(|a| bool_arg(done, a)).collect()
            };
            let compare = |f: fn(&BV, &BV) -> Bool| -> Result<Bool, String> {
                Ok(f(&bv_arg(done, &args[0])?, &bv_arg(done, &args[1])?))
            };
            if args.is_empty() && !matches!(op.as_str(), "true" | "false") {
                return Err(format!("the Boolean constant `{node}` is not translated"));
            }
            let b = match op.as_str() {
                "true" => Bool::from_bool(true),
                "false" => Bool::from_bool(false),
                "and" => Bool::and(&bools()?),
                "or" => Bool::or(&bools()?),
                "not" => bool_arg(done, &args[0])?.not(),
                "=>" | "implies" => bool_arg(done, &args[0])?.implies(bool_arg(done, &args[1])?),
                "iff" => bool_arg(done, &args[0])?.iff(bool_arg(done, &args[1])?),
                "xor" => bool_arg(done, &args[0])?.xor(bool_arg(done, &args[1])?),
                "<=" => compare(|a, b| a.bvsle(b))?,
                ">=" => compare(|a, b| a.bvsge(b))?,
                "<" => compare(|a, b| a.bvslt(b))?,
                ">" => compare(|a, b| a.bvsgt(b))?,
                "if" | "ite" => {
                    let c = bool_arg(done, &args[0])?;
                    c.ite(&bool_arg(done, &args[1])?, &bool_arg(done, &args[2])?)
                }
                "=" | "distinct" => {
                    let first = args
                        .first()
                        .ok_or_else(|| format!("`{node}` has no arguments"))?;
                    let all_bool = first.sort_kind() == SortKind::Bool;
                    let pairs = |i: usize, j: usize| -> Result<Bool, String> {
                        if all_bool {
                            Ok(bool_arg(done, &args[i])?.iff(bool_arg(done, &args[j])?))
                        } else {
                            Ok(bv_arg(done, &args[i])?.eq(bv_arg(done, &args[j])?))
                        }
                    };
                    let mut parts = Vec::new();
                    for i in 0..args.len() {
                        for j in i + 1..args.len() {
                            let same = pairs(i, j)?;
                            parts.push(if op == "=" { same } else { same.not() });
                        }
                    }
                    Bool::and(&parts)
                }
                other => return Err(format!("the Boolean operation `{other}` is not translated")),
            };
            Ok(Node::Bool(b))
        }
        other => Err(format!("terms of sort {other:?} are not translated")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::{SatResult, Solver};

    fn i32_input(name: &str) -> IntInput {
        IntInput {
            term: Int::new_const(name),
            range: (i128::from(i32::MIN), i128::from(i32::MAX)),
        }
    }

    fn wrap32(x: &Int) -> Int {
        let half = Int::from_i64(1 << 31);
        (x.clone() + half.clone()).modulo(Int::from_i64(1 << 32)) - half
    }

    #[test]
    fn a_cube_that_fits_equals_its_wrapped_self_and_a_wrong_one_differs() {
        let x = i32_input("x");
        let t = &x.term;
        let cube = t.clone() * t.clone() * t.clone();
        let other = t.clone() * (t.clone() * t.clone());
        let fits = |v: &Int| {
            v.ge(Int::from_i64(i64::from(i32::MIN))) & v.le(Int::from_i64(i64::from(i32::MAX)))
        };
        let premise = fits(&(t.clone() * t.clone())) & fits(&cube);
        let same = wrap32(&other).eq(&cube).not();
        let q = translate(&[premise.clone(), same], std::slice::from_ref(&x))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(q.nonlinear);
        assert!(q.width >= 96 && q.width <= 104, "width {}", q.width);
        let solver = Solver::new();
        solver.assert(&q.formula);
        assert_eq!(solver.check(), SatResult::Unsat);

        // cube + 1 differs: the bit-vector query finds an input.
        let wrong = wrap32(&(other + Int::from_i64(1))).eq(&cube).not();
        let q = translate(&[premise, wrong], std::slice::from_ref(&x))
            .unwrap_or_else(|e| panic!("{e}"));
        let solver = Solver::new();
        solver.assert(&q.formula);
        assert_eq!(solver.check(), SatResult::Sat);
    }

    #[test]
    fn truncating_division_and_euclidean_mod_keep_their_integer_meaning() {
        let x = i32_input("x");
        let t = &x.term;
        for (v, d) in [
            (-7i64, 2i64),
            (7, 2),
            (-7, -2),
            (7, -2),
            (-255 * 3 - 1, 255),
        ] {
            let q = t.div(Int::from_i64(d));
            let r = t.modulo(Int::from_i64(d));
            let expect = t.eq(Int::from_i64(v))
                & q.eq(Int::from_i64(v.div_euclid(d)))
                & r.eq(Int::from_i64(v.rem_euclid(d)));
            let bv =
                translate(&[expect], std::slice::from_ref(&x)).unwrap_or_else(|e| panic!("{e}"));
            let solver = Solver::new();
            solver.assert(&bv.formula);
            assert_eq!(solver.check(), SatResult::Sat, "{v} div/mod {d}");
        }
    }

    #[test]
    fn reals_and_unknown_divisors_are_left_to_the_integer_solver() {
        let x = i32_input("x");
        let y = Int::new_const("y");
        let by_unknown = x.term.div(&y).eq(Int::from_i64(1));
        assert!(translate(&[by_unknown], std::slice::from_ref(&x)).is_err());
    }
}
