//! Destination passing for targets whose arrays are mutable (NumPy,
//! PyTorch). A store's last element-wise operation writes straight into the
//! destination (`np.add(arr, 1, out=arr)`) instead of building a temporary
//! and copying it; element-wise chains below it run in temporaries the
//! generated code owns and reuses (`_t0 = a * b; np.add(_t0, c, out=_t0)`).
//! Large arrays make each fresh temporary cost page faults and a memory
//! pass, which dominated memory-bound kernels. A subtree shared within a
//! statement is hoisted into a temporary first; the operation that makes
//! its last read (counted as operations are emitted, [`hoisted_uses`])
//! may write into it (`_t0 = A * A; np.multiply(_t0, _t0, out=_t0)`).
//!
//! Semantics are kept by construction: a temporary is reused only for a
//! result of its own element type and shape, and an operation writes into
//! the destination only when none of its operands may be a view of the
//! destination array other than the destination region itself (same index
//! map, so each element is read before it is written, by the same element).

use std::collections::{HashMap, HashSet};

use super::python::{fill, may_be_view, py_slice, render_expr, PyStmt, PyTable};
use super::NameMap;
use crate::dtype::Lit;
use crate::expr::Expr;
use crate::ops::{Op, SliceItem};

/// Lowers statements of one target, numbering temporaries after the ones
/// the caller already made.
pub(super) struct InPlaceLowering<'a> {
    pub table: &'a dyn PyTable,
    pub names: &'a NameMap,
    /// Names that are `i64` scalars in expressions.
    pub sizes: &'a [&'a str],
    /// Shared subtrees already bound to temporaries (never reused: later
    /// code may read them again).
    pub hoisted: &'a HashMap<Expr, String>,
    /// Reads of each hoisted temporary still to come in the statement
    /// ([`hoisted_uses`]): at its last read a fresh one is free to be
    /// overwritten (`np.multiply(_t0, _t0, out=_t0)` for `x⁴` from `x²`).
    pub uses: HashMap<Expr, usize>,
    /// The hoisted subtree computed in the store's destination itself
    /// ([`scratch_candidate`]): a product must not write the destination
    /// while reading it.
    pub scratch: Option<Expr>,
    /// The destination of the store being lowered while it may still hold
    /// the store's first element-wise temporary of its own shape and type
    /// ([`holds_temporary`]; not when a hoisted subtree holds it already);
    /// taken by that temporary.
    pub free_dest: Option<FreeDest>,
    /// The temporary counter of the function (`_t0`, `_t1`, ...).
    pub temps: &'a mut usize,
    /// Statements made so far, in order.
    pub out: Vec<PyStmt>,
}

/// A destination free to hold a temporary: its text, shape and type.
#[derive(Clone)]
pub(super) struct FreeDest {
    text: String,
    like: Expr,
}

/// A rendered operand: its text and whether it is a fresh array the
/// generated code owns (free to be overwritten once consumed).
struct Operand {
    text: String,
    owned: bool,
}

impl InPlaceLowering<'_> {
    /// Whether the target can run `e` as an element-wise operation writing
    /// into an array of `e`'s shape and type.
    fn writes_into(&self, e: &Expr) -> bool {
        elementwise_into(self.table, e)
    }

    /// Whether `e` is a conversion that always makes a fresh array.
    fn is_fresh_cast(e: &Expr) -> bool {
        matches!(e.op(), Op::Cast(to) if e.args()[0].dtype() != *to) && !e.shape().is_empty()
    }

    /// The free destination, taken for element-wise `e` of its shape and
    /// type.
    fn take_free_dest(&mut self, e: &Expr) -> Option<String> {
        let fits = self.free_dest.as_ref().is_some_and(|d| {
            d.like.shape() == e.shape() && d.like.dtype() == e.dtype() && self.writes_into(e)
        });
        if !fits {
            return None;
        }
        self.free_dest.take().map(|d| d.text)
    }

    /// The free destination with the target's rule for product `e` (an
    /// outer product, a matrix product) of its shape and type: the store's
    /// value reads nothing of the destination ([`holds_temporary`]), so the
    /// product may write there before the operation that consumes it
    /// (`np.multiply.outer(A, _t0, out=out)`, then `np.add(y, out, out=out)`).
    fn take_free_dest_for_product(&mut self, e: &Expr) -> Option<(String, &'static str)> {
        let rule = self.table.product_out_rule(e)?;
        let fits = self
            .free_dest
            .as_ref()
            .is_some_and(|d| d.like.shape() == e.shape() && d.like.dtype() == e.dtype())
            && e.args().iter().all(|a| self.unconverted(a, e));
        if !fits {
            return None;
        }
        self.free_dest.take().map(|d| (d.text, rule))
    }

    /// Whether operand `a` reaches library operation `e` as it is: same
    /// type, no conversion left to the library.
    fn unconverted(&self, a: &Expr, e: &Expr) -> bool {
        a.dtype() == e.dtype() && self.table.compute_dtype(a.dtype()).is_none()
    }

    fn new_temp(&mut self) -> String {
        let name = format!("_t{}", *self.temps);
        *self.temps += 1;
        name
    }

    /// `e` through the target's plain rule, its operands already rendered.
    fn render_node(&self, e: &Expr, operands: &[Operand]) -> String {
        let bound: HashMap<Expr, String> = e
            .args()
            .iter()
            .zip(operands)
            .map(|(a, o)| (a.clone(), o.text.clone()))
            .collect();
        render_expr(e, self.table, self.names, self.sizes, &bound)
    }

    /// `e` through the target's into-rule, writing into `out`.
    fn render_into(&self, e: &Expr, operands: &[Operand], out: &str) -> String {
        let template = self.table.out_rule(e.op()).unwrap_or("");
        fill_into(template, operands.iter().map(|o| o.text.clone()), out)
    }

    fn operands(&mut self, e: &Expr) -> Vec<Operand> {
        e.args().iter().map(|a| self.value(a)).collect()
    }

    /// The operands of an element-wise operation that writes into an
    /// array: a conversion of one operand is left to the operation when the
    /// target converts operands exactly (`np.multiply(_t0, active, out=_t0)`
    /// with `_t0` int32 and `active` uint8), saving the converted copy.
    fn operands_converted_inside(&mut self, e: &Expr) -> Vec<Operand> {
        let args = e.args();
        let fused = (args.len() == 2)
            .then(|| {
                (0..2).rev().find(|&j| {
                    let other = &args[1 - j];
                    Self::is_fresh_cast(&args[j])
                        && !matches!(other.op(), Op::Lit(Lit::Float(..)))
                        && !self.hoisted.contains_key(&args[j])
                        && self.table.converts_operand(
                            args[j].args()[0].dtype(),
                            e.dtype(),
                            other.shape().len(),
                        )
                })
            })
            .flatten();
        args.iter()
            .enumerate()
            .map(|(i, a)| match fused {
                Some(j) if i == j => {
                    let inner = self.value(&a.args()[0]);
                    Operand {
                        text: inner.text,
                        owned: false,
                    }
                }
                _ => self.value(a),
            })
            .collect()
    }

    /// Renders `e`, computing its element-wise parts into temporaries.
    fn value(&mut self, e: &Expr) -> Operand {
        if let Some(name) = self.hoisted.get(e) {
            // Read when its consumer runs, not now: see `mark_read`.
            return Operand {
                text: name.clone(),
                owned: false,
            };
        }
        if e.args().is_empty() {
            return Operand {
                text: self.render_node(e, &[]),
                owned: false,
            };
        }
        let operands = if self.writes_into(e) {
            self.operands_converted_inside(e)
        } else {
            self.operands(e)
        };
        if self.writes_into(e) {
            let last_reads = self.mark_read(e);
            let reusable = e
                .args()
                .iter()
                .zip(&operands)
                .enumerate()
                .position(|(i, (a, o))| {
                    (o.owned || last_reads.contains(&i))
                        && a.dtype() == e.dtype()
                        && a.shape() == e.shape()
                        && Self::only_read_here(e.args(), i)
                });
            if let Some(i) = reusable {
                let out = operands[i].text.clone();
                let call = self.render_into(e, &operands, &out);
                self.out.push(PyStmt::Call(call));
                return Operand {
                    text: out,
                    owned: true,
                };
            }
        }
        if let Some(dest) = self.take_free_dest(e) {
            self.mark_read(e);
            let call = self.render_into(e, &operands, &dest);
            self.out.push(PyStmt::Call(call));
            return Operand {
                text: dest,
                owned: true,
            };
        }
        if let Some((dest, rule)) = self.take_free_dest_for_product(e) {
            self.mark_read(e);
            let call = fill_into(rule, operands.iter().map(|o| o.text.clone()), &dest);
            self.out.push(PyStmt::Call(call));
            return Operand {
                text: dest,
                owned: true,
            };
        }
        let text = self.render_node(e, &operands);
        if self.writes_into(e) || (!e.shape().is_empty() && self.makes_new_array(e)) {
            if !self.writes_into(e) {
                // Computed here, into a temporary: its reads happen now.
                self.mark_read(e);
            }
            let name = self.new_temp();
            self.out.push(PyStmt::Let {
                name: name.clone(),
                value: text,
            });
            return Operand {
                text: name,
                owned: true,
            };
        }
        Operand { text, owned: false }
    }

    /// Lowers `let name = value` (a value that may be a view is copied, as
    /// arrays may be written later).
    pub fn bind(&mut self, name: &str, value: &Expr) {
        let lowered = self.value(value);
        let text = match self.table.copy_rule() {
            Some(rule) if !lowered.owned && may_be_view(value) => {
                rule.replace("{0}", &lowered.text)
            }
            _ => lowered.text,
        };
        self.out.push(PyStmt::Let {
            name: name.to_string(),
            value: text,
        });
    }

    /// Lowers `target[region] = value`.
    pub fn store(&mut self, target: &str, region: Option<&[SliceItem]>, value: &Expr) {
        let dest_name = self.names.get(target);
        let dest = match region {
            Some(items) => format!("{dest_name}[{}]", py_slice(items, self.names)),
            None => dest_name.clone(),
        };
        let plain_store = |value: String| PyStmt::Store {
            target: dest_name.clone(),
            region: region.map(|items| py_slice(items, self.names)),
            value,
            boxed: None,
        };
        self.free_dest =
            (self.scratch.is_none() && holds_temporary(target, value)).then(|| FreeDest {
                text: dest.clone(),
                like: value.clone(),
            });
        if self.writes_into(value)
            && value
                .args()
                .iter()
                .all(|a| self.safe_operand(a, target, region))
        {
            let operands = self.operands_converted_inside(value);
            let call = self.render_into(value, &operands, &dest);
            self.out.push(PyStmt::Call(call));
            return;
        }
        if let Some(rule) = self.product_into(value, target) {
            // A product reads whole operands: none may be the destination.
            self.free_dest = None;
            let operands = self.operands(value);
            self.mark_read(value);
            let call = fill_into(rule, operands.into_iter().map(|o| o.text), &dest);
            self.out.push(PyStmt::Call(call));
            return;
        }
        // Assigning into an array converts like the cast would, without
        // building the converted copy first.
        if Self::is_fresh_cast(value) {
            let inner = self.value(&value.args()[0]);
            if inner.owned || !may_be_view(&value.args()[0]) {
                self.out.push(plain_store(inner.text));
                return;
            }
        }
        let lowered = self.value(value);
        if lowered.owned && lowered.text == dest {
            // Computed in the destination itself.
            return;
        }
        // The assignment copies a view of another array element by element
        // (a second, fresh copy only costs page faults and a memory pass);
        // a view of the destination array itself may overlap the region it
        // overwrites, which PyTorch refuses, so that one is copied first.
        let overlaps = || reads(value, target, &mut HashSet::new());
        let text = match self.table.copy_rule() {
            Some(rule) if !lowered.owned && may_be_view(value) && overlaps() => {
                rule.replace("{0}", &lowered.text)
            }
            _ => lowered.text,
        };
        self.out.push(plain_store(text));
    }

    /// The target's rule for product `value` writing into the destination,
    /// where that is safe: the product is not element-wise, so none of its
    /// operands may read `target` at all, and no conversion may be left to
    /// the library.
    fn product_into(&self, value: &Expr, target: &str) -> Option<&'static str> {
        let rule = self.table.product_out_rule(value)?;
        let plain = value.args().iter().all(|a| {
            self.unconverted(a, value)
                && !reads(a, target, &mut HashSet::new())
                && !self
                    .scratch
                    .as_ref()
                    .is_some_and(|x| contains(a, x, &mut HashSet::new()))
        });
        plain.then_some(rule)
    }

    /// Whether operand `a` of an operation writing into `target[region]`
    /// cannot see that write before it is read: it does not read `target`,
    /// it is the destination region itself, or it is a fresh array.
    fn safe_operand(&self, a: &Expr, target: &str, region: Option<&[SliceItem]>) -> bool {
        if let Op::Cast(_) = a.op() {
            // The conversion may be left to the operation: judge its source.
            return self.safe_operand(&a.args()[0], target, region);
        }
        if !reads(a, target, &mut HashSet::new()) {
            return true;
        }
        let is_target = |e: &Expr| matches!(e.op(), Op::Var(n) if &**n == target);
        let is_destination = match (a.op(), region) {
            (Op::Var(_), None) => is_target(a),
            (Op::Slice(items), Some(region)) => items == region && is_target(&a.args()[0]),
            _ => false,
        };
        is_destination || Self::is_fresh(a)
    }

    /// Counts the reads `e`'s operation makes of hoisted temporaries that
    /// are its direct operands, as it is emitted (its operands are already
    /// computed), and returns the operand positions whose read was the
    /// temporary's last in the statement and which hold arrays of their own.
    /// A temporary read inside an operand rendered inline (`_t0.T`) is never
    /// counted down, so it is never overwritten: conservative, not wrong.
    fn mark_read(&mut self, e: &Expr) -> Vec<usize> {
        let mut last = Vec::new();
        for (i, a) in e.args().iter().enumerate() {
            if !self.hoisted.contains_key(a) {
                continue;
            }
            // `mul(_t0, _t0)`: the second position's count-down is the last.
            if let Some(n) = self.uses.get_mut(a) {
                *n = n.saturating_sub(1);
                if *n == 0 && self.fresh_hoisted(a) {
                    last.push(i);
                }
            }
        }
        last
    }

    /// Whether a hoisted temporary holds an array of its own: `_t = a * b`
    /// does, `_t = x.T` does not (writing it would write `x`).
    fn fresh_hoisted(&self, e: &Expr) -> bool {
        !e.shape().is_empty() && (self.writes_into(e) || self.makes_new_array(e))
    }

    /// Whether operand `i` may be overwritten by the operation: no other
    /// operand reads it except as the very same element-wise value (a view
    /// of it, `op(x.T, x)`, would see the writes).
    fn only_read_here(args: &[Expr], i: usize) -> bool {
        let own = &args[i];
        args.iter()
            .enumerate()
            .all(|(j, a)| j == i || a == own || !contains(a, own, &mut HashSet::new()))
    }

    /// Whether the target's rendering of `e` is a new array of its own,
    /// one the generated code may overwrite: a conversion or a result that
    /// is not element-wise (a matrix product, a reduction, ...).
    fn makes_new_array(&self, e: &Expr) -> bool {
        // Views (even of new arrays) are left out: a broadcast repeats
        // elements, and writing through it would clobber them.
        match e.op() {
            Op::Reduce { axes, .. } => !axes.is_empty(),
            Op::Where
            | Op::Matmul
            | Op::Tensordot { .. }
            | Op::Outer
            | Op::Concat { .. }
            | Op::Full { .. }
            | Op::Triu(_)
            | Op::Tril(_)
            | Op::ArgExtreme { .. }
            | Op::Scan { .. }
            | Op::ScatterAdd => true,
            Op::Cast(_) => Self::is_fresh_cast(e),
            _ => false,
        }
    }

    /// Whether the target's rendering of `a` never shares memory with an
    /// array that exists before it is evaluated (a view of a new array
    /// counts as new).
    fn is_fresh(a: &Expr) -> bool {
        match a.op() {
            Op::Reduce { axes, .. } if axes.is_empty() => Self::is_fresh(&a.args()[0]),
            Op::Reduce { .. } | Op::ArgExtreme { .. } | Op::Scan { .. } => true,
            Op::Transpose(_)
            | Op::Broadcast(_)
            | Op::Slice(_)
            | Op::Diag
            | Op::Flip(_)
            | Op::Reshape(_)
            | Op::Window(_) => Self::is_fresh(&a.args()[0]),
            Op::Unary(_)
            | Op::Binary(_)
            | Op::Where
            | Op::Matmul
            | Op::Tensordot { .. }
            | Op::Outer
            | Op::Concat { .. }
            | Op::Full { .. }
            | Op::Triu(_)
            | Op::Tril(_)
            // The library calls and helpers return new arrays.
            | Op::Cholesky
            | Op::TriSolve { .. }
            | Op::LuNoPivot
            | Op::ScatterAdd
            | Op::Syrk
            | Op::Syr2k
            | Op::MirrorLower => true,
            Op::Cast(_) => Self::is_fresh_cast(a),
            Op::Var(_) | Op::Lit(_) | Op::Einsum(_) => false,
        }
    }
}

/// Whether `table` runs `e` as an element-wise operation writing into an
/// array of `e`'s shape and type.
fn elementwise_into(table: &dyn PyTable, e: &Expr) -> bool {
    !e.shape().is_empty()
        && table.out_rule(e.op()).is_some()
        && table.special_rule(e).is_none()
        && e.args()
            .iter()
            .all(|a| a.dtype() == e.dtype() && table.compute_dtype(a.dtype()).is_none())
}

/// Whether store `target = value` may keep a temporary in its
/// destination: the value does not read the destination's old contents,
/// and everything it reads through a view is an argument (a view of
/// something computed in the destination, read by the operation that
/// writes the destination, would see the write). The temporary is a
/// hoisted shared subtree ([`scratch_candidate`]) or else the first
/// element-wise temporary of the destination's shape and type
/// (`np.log(A, out=out)`, `np.subtract(out, _t0, out=out)`,
/// `np.exp(out, out=out)`): one fresh buffer less, which on large arrays is
/// a round of page faults and a memory pass (NumPy's own temporary elision
/// saves the input the same).
pub(super) fn holds_temporary(target: &str, value: &Expr) -> bool {
    let of_argument = |n: &Expr| {
        let mut base = n;
        while may_be_view(base) && !base.args().is_empty() {
            base = &base.args()[0];
        }
        base.args().is_empty()
    };
    !value.shape().is_empty()
        && !reads(value, target, &mut HashSet::new())
        && !any_node(
            value,
            &|n| may_be_view(n) && !of_argument(n),
            &mut HashSet::new(),
        )
}

/// The shared subtree of store `target = value` computed in the
/// destination ([`holds_temporary`]; `x⁵ = x·(x²)²`: `np.multiply(x, x,
/// out=out)`, squared in place, then multiplied by `x` into `out`): the
/// first element-wise one of the value's shape and type in hoisting order,
/// so later subtrees may read it.
pub(super) fn scratch_candidate(
    table: &dyn PyTable,
    target: &str,
    value: &Expr,
    shared: &[Expr],
) -> Option<Expr> {
    if !holds_temporary(target, value) {
        return None;
    }
    shared
        .iter()
        .find(|x| {
            x.shape() == value.shape() && x.dtype() == value.dtype() && elementwise_into(table, x)
        })
        .cloned()
}

/// `template` with operands `{0}`, `{1}`, ... and destination `{out}`.
fn fill_into(template: &str, operands: impl Iterator<Item = String>, out: &str) -> String {
    let mut vars: HashMap<&str, String> = ["0", "1", "2"].into_iter().zip(operands).collect();
    vars.insert("out", out.to_string());
    fill(template, &vars)
}

/// `e` through `table`'s into-rule, writing into `out`, its operands
/// rendered plainly (hoisted subtrees by name).
pub(super) fn render_plain_into(
    table: &dyn PyTable,
    names: &NameMap,
    sizes: &[&str],
    hoisted: &HashMap<Expr, String>,
    e: &Expr,
    out: &str,
) -> String {
    let operands = e
        .args()
        .iter()
        .map(|a| render_expr(a, table, names, sizes, hoisted));
    fill_into(table.out_rule(e.op()).unwrap_or(""), operands, out)
}

/// Whether `part` occurs in `e`.
fn contains(e: &Expr, part: &Expr, seen: &mut HashSet<Expr>) -> bool {
    any_node(e, &|n| n == part, seen)
}

/// How many times the lowering of `value` reads each hoisted temporary:
/// once per occurrence below a node that is not itself hoisted, as
/// [`InPlaceLowering::value`] renders it.
///
/// A hoisted view of a hoisted temporary (`_t1 = np.transpose(_t0)`)
/// adds a read of the temporary that is never counted down: writing the
/// temporary would change the view.
pub(super) fn hoisted_uses(value: &Expr, hoisted: &HashMap<Expr, String>) -> HashMap<Expr, usize> {
    let mut uses = HashMap::new();
    let mut stack = vec![value];
    while let Some(e) = stack.pop() {
        if hoisted.contains_key(e) {
            *uses.entry(e.clone()).or_insert(0) += 1;
            continue;
        }
        stack.extend(e.args());
    }
    for view in hoisted.keys().filter(|h| may_be_view(h)) {
        for x in hoisted.keys().filter(|x| *x != view) {
            if contains(view, x, &mut HashSet::new()) {
                *uses.entry(x.clone()).or_insert(0) += 1;
            }
        }
    }
    uses
}

/// Whether `e` reads the array `name`; shared subtrees are visited once
/// (a tree walk of a DAG can be exponential).
fn reads(e: &Expr, name: &str, seen: &mut HashSet<Expr>) -> bool {
    any_node(e, &|n| matches!(n.op(), Op::Var(v) if &**v == name), seen)
}

/// Whether some node of `e` satisfies `test`; shared subtrees are visited
/// once (a tree walk of a DAG can be exponential).
fn any_node(e: &Expr, test: &dyn Fn(&Expr) -> bool, seen: &mut HashSet<Expr>) -> bool {
    if test(e) {
        return true;
    }
    if !seen.insert(e.clone()) {
        return false;
    }
    e.args().iter().any(|a| any_node(a, test, seen))
}

#[cfg(test)]
mod tests {
    use crate::{emit, parse_program, EmitOptions, Target};

    /// Programs whose text asserts whole-array statements have constant
    /// shapes of a few elements: NumPy leaves those unblocked
    /// ([`super::super::chunk`]; blocked stores are tested in
    /// tests/blocked.rs).
    fn numpy_and_torch(text: &str) -> (String, String) {
        let p = parse_program("t.tensir", text).unwrap();
        let opts = EmitOptions::default();
        (
            emit(&p, Target::Numpy, &opts).unwrap(),
            emit(&p, Target::Pytorch, &opts).unwrap(),
        )
    }

    #[test]
    fn element_wise_results_are_written_into_the_destination() {
        let (np, torch) =
            numpy_and_torch("func inc(n: size, arr: inout i32[n]) {\n  arr = add(1i32, arr);\n}\n");
        assert!(np.contains("np.add(np.int32(1), arr, out=arr)"), "{np}");
        assert!(torch.contains(", arr, out=arr)"), "{torch}");
        assert!(!np.contains("arr[...] ="), "{np}");
    }

    #[test]
    fn a_shared_square_is_reused_at_its_last_read() {
        // x⁵ = x · (x²)²: the hoisted x² is squared in place, one buffer
        // (the destination's, see the scratch test below).
        let (np, torch) = numpy_and_torch(
            "func p5(x: f64[8], r: out f64[8]) {\n  r = mul(x, mul(mul(x, x), mul(x, x)));\n}\n",
        );
        assert!(np.contains("np.multiply(r, r, out=r)"), "{np}");
        assert!(torch.contains("torch.mul(r, r, out=r)"), "{torch}");
        // Read again later in the statement: not overwritten before that.
        let (np, _) = numpy_and_torch(
            "func q(x: f64[8], r: out f64[8]) {\n  r = add(mul(mul(x, x), mul(x, x)), mul(x, x));\n}\n",
        );
        assert!(!np.contains("np.multiply(r, r, out=r)"), "{np}");
        // Read by the outer operation, which runs after its sibling: the
        // sibling must not overwrite it (fuzz_differential's fz51).
        let (np, _) = numpy_and_torch(
            "func s(x: f64[8], r: out f64[8]) {\n  r = mul(add(x, x), sub(1.0, add(x, x)));\n}\n",
        );
        assert!(!np.contains("out=_t0)"), "{np}");
        assert!(!np.contains("np.subtract(1.0, r, out=r)"), "{np}");
        // A transpose of it is read by the same operation: no write into it.
        let (np, _) = numpy_and_torch(
            "func t(x: f64[8, 8], r: out f64[8, 8]) {\n  r = mul(sub(transpose(add(x, x), perm=[1, 0]), add(x, x)), 2.0);\n}\n",
        );
        assert!(!np.contains("out=_t0)"), "{np}");
    }

    #[test]
    fn a_shared_subtree_is_computed_in_the_destination() {
        let (np, torch) = numpy_and_torch(
            "func p5(x: f64[8], r: out f64[8]) {\n  r = mul(x, mul(mul(x, x), mul(x, x)));\n}\n",
        );
        let body = "np.multiply(x, x, out=r)\n        np.multiply(r, r, out=r)\n        \
                    np.multiply(x, r, out=r)\n";
        assert!(np.contains(body), "{np}");
        assert!(torch.contains("torch.mul(x, x, out=r)"), "{torch}");
        // Read through a view: the destination would be written while the
        // view is read, so the subtree gets its own temporary.
        let (np, _) = numpy_and_torch(
            "func t(x: f64[8, 8], r: out f64[8, 8]) {\n  r = add(transpose(add(x, x), perm=[1, 0]), add(x, x));\n}\n",
        );
        assert!(np.contains("_t0 = (x + x)"), "{np}");
        assert!(
            np.contains("np.add(np.transpose(_t0, (1, 0)), _t0, out=r)"),
            "{np}"
        );
        // The value reads the destination's old contents: no scratch.
        let (np, _) = numpy_and_torch(
            "func u(x: f64[8], r: inout f64[8]) {\n  r = mul(add(x, x), add(r, add(x, x)));\n}\n",
        );
        assert!(!np.contains("out=r)\n        _t"), "{np}");
        assert!(np.contains("_t0 = (x + x)"), "{np}");
        // A hoisted view of a hoisted temporary keeps the temporary from
        // being overwritten while the view is still to be read.
        let (np, _) = numpy_and_torch(
            "func v(x: f64[8, 8], r: out f64[8, 8]) {\n  r = add(add(mul(mul(x, x), mul(x, x)), transpose(mul(x, x), perm=[1, 0])), transpose(mul(x, x), perm=[1, 0]));\n}\n",
        );
        assert!(!np.contains("np.multiply(_t0, _t0, out=_t0)"), "{np}");
    }

    #[test]
    fn the_first_temporary_is_computed_in_the_destination() {
        // exp(log a - log b): log a in `r`, then updated there.
        let (np, torch) = numpy_and_torch(
            "func q(a: f64[8], b: f64[8], r: out f64[8]) {\n  r = exp(sub(log(a), log(b)));\n}\n",
        );
        let body = "np.log(a, out=r)\n        _t0 = np.log(b)\n        \
                    np.subtract(r, _t0, out=r)\n        np.exp(r, out=r)\n";
        assert!(np.contains(body), "{np}");
        assert!(!np.contains("r[...] ="), "{np}");
        assert!(torch.contains("torch.log(a, out=r)"), "{torch}");
        // A computed value read through a view: no temporary in `r`.
        let (np, _) = numpy_and_torch(
            "func t(a: f64[8, 8], r: out f64[8, 8]) {\n  r = mul(transpose(add(a, 1.0), perm=[1, 0]), 2.0);\n}\n",
        );
        assert!(!np.contains("out=r)\n        np.multiply"), "{np}");
        // The destination's old contents are read: no temporary in it.
        let (np, _) = numpy_and_torch(
            "func u(a: f64[8], r: inout f64[8]) {\n  r = mul(add(a, 1.0), add(r, 2.0));\n}\n",
        );
        assert!(!np.contains("np.add(a, 1.0, out=r)"), "{np}");
        // A product reads whole operands: none computed in its destination.
        let (np, _) = numpy_and_torch(
            "func p(a: f64[8, 8], r: out f64[8, 8]) {\n  r = matmul(add(a, 1.0), a);\n}\n",
        );
        assert!(np.contains("np.matmul(_t0, a, out=r)"), "{np}");
    }

    #[test]
    fn a_product_inside_a_chain_is_computed_in_the_destination() {
        // vec_lerp after factoring: the outer product lands in `r`, the
        // broadcast add then runs in place.
        let (np, _) = numpy_and_torch(
            "func l(a: f64[8], x: f64[6], y: f64[6], r: out f64[8, 6]) {\n  r = add(y, einsum(\"b,a->ab\", sub(x, y), a));\n}\n",
        );
        assert!(np.contains("np.multiply.outer(a, _t0, out=r)"), "{np}");
        assert!(np.contains("np.add(y, r, out=r)"), "{np}");
        // A store that reads its destination keeps the product apart.
        let (np, _) = numpy_and_torch(
            "func q(n: size, a: f64[n, n], r: inout f64[n, n]) {\n  r = add(r, matmul(a, a));\n}\n",
        );
        assert!(!np.contains("out=r)\n        np.add(r"), "{np}");
        assert!(!np.contains("np.matmul(a, a, out=r)"), "{np}");
    }

    #[test]
    fn a_shifted_read_of_the_destination_is_not_overwritten() {
        let (np, torch) = numpy_and_torch(
            "func shift(n: size, x: inout i32[n], y: i32[n]) {\n  x[1:n] = add(x[0:n - 1], y[1:n]);\n}\n",
        );
        for code in [&np, &torch] {
            assert!(!code.contains("out=x["), "{code}");
            assert!(code.contains("x[1:n] = "), "{code}");
        }
    }

    #[test]
    fn a_view_of_another_array_is_assigned_without_a_second_copy() {
        let (np, torch) =
            numpy_and_torch("func copy(n: size, x: f32[n], r: out f32[n]) {\n  r = x;\n}\n");
        assert!(np.contains("r[...] = x\n"), "{np}");
        assert!(torch.contains("r[...] = x\n"), "{torch}");
        // A view of the destination itself may overlap the region written.
        let (np, torch) =
            numpy_and_torch("func shift(n: size, x: inout f32[n]) {\n  x[1:n] = x[0:n - 1];\n}\n");
        assert!(np.contains("x[1:n] = np.copy(x[0:n - 1])"), "{np}");
        assert!(torch.contains("x[1:n] = x[0:n - 1].clone()"), "{torch}");
    }

    #[test]
    fn chains_reuse_their_own_temporaries_and_convert_inside_operations() {
        let (np, _) = numpy_and_torch(
            "func blend(a: u8[8], b: u8[8], out: out u8[8]) {\n  out = cast(maximum(add(cast(a, i32), cast(b, i32)), 255i32), u8);\n}\n",
        );
        // The narrow lowering computes the pixel sum in 16 bits.
        assert!(np.contains("_t0 = np.asarray(a).astype(np.int16)"), "{np}");
        assert!(np.contains("np.add(_t0, b, out=_t0)"), "{np}");
        assert!(
            np.contains("np.maximum(_t0, np.int16(255), out=_t0)"),
            "{np}"
        );
        assert!(np.contains("out[...] = _t0"), "{np}");
        assert!(!np.contains("_t1"), "{np}");
    }
}
