//! The tree walk shared by the Python-family targets. A target supplies a
//! [`PyTable`]: one template per operation plus the spelling of types,
//! constants and the function frame; this module does the rest once.

use std::collections::HashMap;

use super::inplace::InPlaceLowering;
use super::{header_lines, NameMap, Target};
use crate::dim::Dim;
use crate::dtype::{format_float, DType, Lit};
use crate::expr::Expr;
use crate::ops::{BinaryOp, Op, SliceItem};
use crate::program::{Param, ParamKind, Program, Stmt};

/// A target's translation table. Templates name operands `{0}` to `{4}`
/// (or `{args}` for all of them) and attributes `{axes}`, `{perm}`,
/// `{shape}`, `{slice}`, `{axis}`, `{k}`, `{spec}`, `{lhs_axes}`,
/// `{rhs_axes}`, `{value}`, `{dtype}` (the result's element type), `{init}`
/// (a max/min reduction's identity, for libraries that need it) and,
/// for a `trunc_div` by `2^k` of a non-negative dividend, `{shift}` (`k`).
pub trait PyTable {
    fn target(&self) -> Target;
    /// Import lines after the header.
    fn imports(&self) -> &'static str;
    /// Helper functions `(name, definition)`; a helper is emitted only
    /// when the generated function calls it.
    fn helpers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The spelling of an element type (`np.float32`).
    fn dtype(&self, d: DType) -> String;
    /// A typed scalar constant.
    fn lit(&self, l: Lit) -> String;
    /// A size parameter used as an `i64` value.
    fn size_value(&self, name: &str) -> String;
    /// The template of an operation whose operands have element type `operand`.
    fn rule(&self, op: &Op, operand: DType) -> &'static str;
    /// A rule that overrides [`PyTable::rule`] for one particular node
    /// (e.g. a pattern the target's optimizer mistranslates).
    fn special_rule(&self, _e: &Expr) -> Option<&'static str> {
        None
    }
    /// The element type in which the target must compute on operands of
    /// type `d`, where its library lacks kernels for `d` (results are
    /// converted back, which keeps C wrap-around). `None`: compute in `d`.
    fn compute_dtype(&self, _d: DType) -> Option<DType> {
        None
    }
    /// Template that copies a value that may be a view of a mutable array;
    /// `None` where values are immutable.
    fn copy_rule(&self) -> Option<&'static str>;
    /// Template of an element-wise operation that writes its result into
    /// an existing array `{out}` of the result's shape and element type
    /// (`np.add({0}, {1}, out={out})`). Targets with mutable arrays use it
    /// to write straight into destinations and to reuse temporaries; `None`
    /// (the default, and always for immutable targets) keeps plain
    /// expressions.
    fn out_rule(&self, _op: &Op) -> Option<&'static str> {
        None
    }
    /// Template of a product (`np.matmul`) that writes its whole result
    /// into an existing array `{out}` of its shape and element type; its
    /// operands are the node's operands. Unlike [`PyTable::out_rule`] the
    /// result is not element-wise, so only a destination that no operand
    /// reads may take it. `None` (the default): a plain expression.
    fn product_out_rule(&self, _e: &Expr) -> Option<&'static str> {
        None
    }
    /// Whether an element-wise operation (through [`PyTable::out_rule`])
    /// may take an operand of type `from` where TensIR converts it to `to`
    /// first, the library converting element by element inside the
    /// operation (no converted copy), with the same result. `other_rank`
    /// is the rank of the other operand, which has type `to`.
    fn converts_operand(&self, _from: DType, _to: DType, _other_rank: usize) -> bool {
        false
    }
    /// Bytes of one operand's block when whole-array element-wise stores
    /// run in blocks of rows ([`super::chunk`]); `None` (the default):
    /// whole arrays, one library call per operation.
    fn block_bytes(&self) -> Option<usize> {
        None
    }
    /// Assembles the function(s) from the rendered pieces.
    fn function(&self, f: &PyFunction) -> String;
}

/// The pieces of a generated function, in generated spelling.
pub struct PyFunction<'a> {
    pub program: &'a Program,
    pub names: &'a NameMap,
    /// `(generated name, parameter)` in C order.
    pub params: Vec<(String, &'a Param)>,
    /// Rendered statements.
    pub body: Vec<PyStmt>,
}

pub enum PyStmt {
    Let {
        name: String,
        value: String,
    },
    /// `region` is `None` for a whole-array store. `boxed`: the region as
    /// `((start, stop), ...)` per axis when it is a box of rank >= 2 (unit
    /// steps, no index) that the value fills, for targets that write it by
    /// a select over the whole array (JAX in compiled loops).
    Store {
        target: String,
        region: Option<String>,
        value: String,
        boxed: Option<String>,
    },
    Return(String),
    /// A call evaluated for its effect (an operation writing into `out=`).
    Call(String),
    /// `for var in range(start, stop):` over `body`.
    Loop(PyLoop),
}

/// A loop in generated spelling, with what a target needs to choose between
/// a Python loop and a compiled one.
pub struct PyLoop {
    pub var: String,
    pub start: String,
    pub stop: String,
    /// `range`'s step where it is not 1 (only blocked stores,
    /// [`super::chunk`], which no compiled loop meets).
    pub step: Option<String>,
    pub body: Vec<PyStmt>,
    /// Whether the loop variable appears in no shape, slice range or loop
    /// bound of the body (only as a scalar or a single index), so every
    /// iteration has the same shapes and the loop can be compiled as one.
    pub shapes_invariant: bool,
    /// Arrays the body stores into (generated names, parameter order): the
    /// state a functional loop carries.
    pub written: Vec<String>,
}

/// A Python literal for a constant, without any type wrapper.
pub fn py_value(l: Lit) -> String {
    match l {
        Lit::Bool(true) => "True".to_string(),
        Lit::Bool(false) => "False".to_string(),
        Lit::Int(v, _) => v.to_string(),
        Lit::Float(bits, d) => format_float(f64::from_bits(bits), d == DType::F32),
    }
}

/// The identity of a max (`largest == false`) or min reduction as a
/// Python literal every target accepts (`float("-inf")`, `-2147483648`).
fn reduce_identity(d: DType, largest: bool) -> String {
    match Lit::extreme(d, largest) {
        Lit::Float(bits, _) if f64::from_bits(bits).is_infinite() => {
            let sign = if largest { "" } else { "-" };
            format!("float(\"{sign}inf\")")
        }
        l => py_value(l),
    }
}

pub fn py_dim(d: &Dim, names: &NameMap) -> String {
    d.render(&|s| names.get(s), "//")
}

/// A Python tuple of dims: `(n, m)`, `(n,)`, `()`.
pub fn py_shape(ds: &[Dim], names: &NameMap) -> String {
    let parts: Vec<String> = ds.iter().map(|d| py_dim(d, names)).collect();
    py_tuple(&parts)
}

pub fn py_tuple(parts: &[String]) -> String {
    match parts.len() {
        1 => format!("({},)", parts[0]),
        _ => format!("({})", parts.join(", ")),
    }
}

pub fn py_slice(items: &[SliceItem], names: &NameMap) -> String {
    if items.is_empty() {
        return "...".to_string();
    }
    let parts: Vec<String> = items
        .iter()
        .map(|it| match it {
            SliceItem::Full => ":".to_string(),
            SliceItem::Index(d) => py_dim(d, names),
            SliceItem::Range { start, stop, step } => {
                let (a, b) = (py_dim(start, names), py_dim(stop, names));
                if *step == 1 {
                    format!("{a}:{b}")
                } else {
                    format!("{a}:{b}:{step}")
                }
            }
        })
        .collect();
    parts.join(", ")
}

/// Whether a store of a value of rank `value_rank` into `items` is a
/// stencil's interior of rank >= 2: unit-step ranges that each start past
/// a constant border (`1:n - 1`). Inside a compiled loop (`lax.fori_loop`,
/// `stablehlo.while`) XLA runs such a store fastest as one select over the
/// whole array (pad + where), which fuses with the value's computation
/// (jacobi-2d 1.7x, heat-3d 2.2x faster than a dynamic-update-slice); any
/// other region (one reaching an edge of the array, fdtd-2d's
/// `ey[1:nx, 0:ny]`, 1.6x slower as a select; rank 1, jacobi-1d, 1.3x
/// slower) is faster as an in-place update. The JAX and StableHLO
/// emitters both decide by this.
pub fn is_interior_box(items: &[SliceItem], value_rank: usize) -> bool {
    items.len() >= 2
        && value_rank == items.len()
        && items.iter().all(|it| {
            matches!(it, SliceItem::Range { start, step: 1, .. } if start.as_const().is_some_and(|c| c > 0))
        })
}

/// A store region as `((start, stop), ...)` when it is a stencil's
/// interior ([`is_interior_box`]).
pub fn py_box(items: &[SliceItem], value_rank: usize, names: &NameMap) -> Option<String> {
    if !is_interior_box(items, value_rank) {
        return None;
    }
    let axes: Vec<String> = items
        .iter()
        .filter_map(|it| match it {
            SliceItem::Range { start, stop, .. } => Some(format!(
                "({}, {})",
                py_dim(start, names),
                py_dim(stop, names)
            )),
            _ => None,
        })
        .collect();
    Some(format!("({})", axes.join(", ")))
}

/// Fills a template in one pass (generated operands are never rescanned).
pub(super) fn fill(template: &str, vars: &HashMap<&str, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if vars.contains_key(&after[..close]) => {
                out.push_str(&vars[&after[..close]]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn int_tuple(v: &[usize]) -> String {
    py_tuple(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>())
}

fn int_list(v: &[usize]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Renders one expression through the table; subexpressions already bound
/// to temporaries (`hoisted`) are referred to by name.
pub fn render_expr(
    e: &Expr,
    t: &dyn PyTable,
    names: &NameMap,
    sizes: &[&str],
    hoisted: &HashMap<Expr, String>,
) -> String {
    let args: Vec<String> = e
        .args()
        .iter()
        .map(|a| match hoisted.get(a) {
            Some(name) => name.clone(),
            None => render_expr(a, t, names, sizes, hoisted),
        })
        .collect();
    match e.op() {
        Op::Var(n) if sizes.contains(&&**n) => return t.size_value(&names.get(n)),
        Op::Var(n) => return names.get(n),
        Op::Lit(l) => return t.lit(*l),
        // A literal converted to another float type is the literal of that
        // type (a C `double` literal in `float` code: `f32(0.1:f64)`).
        Op::Cast(to) if to.is_float() => {
            if let Op::Lit(l @ Lit::Float(..)) = e.args()[0].op() {
                return t.lit(Lit::float(l.as_f64(), *to));
            }
        }
        // Reducing over no axes is the identity in TensIR; some libraries
        // read an empty axis list as "all axes".
        Op::Reduce { axes, .. } if axes.is_empty() => return args[0].clone(),
        _ => {}
    }
    let operand = e.args().last().map_or(e.dtype(), |a| a.dtype());
    let computes = !matches!(
        e.op(),
        Op::Full { .. }
            | Op::Slice(_)
            | Op::Transpose(_)
            | Op::Broadcast(_)
            | Op::Flip(_)
            | Op::Reshape(_)
            | Op::Window(_)
            | Op::Concat { .. }
            | Op::Cast(_)
            // Comparisons are exact in every type: nothing to widen.
            | Op::ArgExtreme { .. }
    );
    let widened = t.compute_dtype(operand).filter(|_| computes);
    let convert = |text: &str, to: DType| {
        let mut v = HashMap::new();
        v.insert("0", text.to_string());
        v.insert("dtype", t.dtype(to));
        fill(t.rule(&Op::Cast(to), to), &v)
    };
    let args: Vec<String> = match widened {
        Some(wide) => e
            .args()
            .iter()
            .zip(&args)
            .map(|(a, text)| {
                if a.dtype() == operand {
                    convert(text, wide)
                } else {
                    text.clone()
                }
            })
            .collect(),
        None => args,
    };
    let mut vars: HashMap<&str, String> = HashMap::new();
    for (i, key) in ["0", "1", "2", "3", "4"].into_iter().enumerate() {
        if let Some(a) = args.get(i) {
            vars.insert(key, a.clone());
        }
    }
    vars.insert("args", args.join(", "));
    vars.insert("dtype", t.dtype(widened.unwrap_or(e.dtype())));
    match e.op() {
        Op::Full { shape, value } => {
            vars.insert("shape", py_shape(shape, names));
            vars.insert("value", py_value(*value));
        }
        Op::Reduce { axes, kind } => {
            vars.insert("axes", int_tuple(axes));
            let largest = *kind == crate::ops::ReduceKind::Min;
            vars.insert("init", reduce_identity(e.dtype(), largest));
        }
        Op::Tensordot { lhs_axes, rhs_axes } => {
            vars.insert("lhs_axes", int_list(lhs_axes));
            vars.insert("rhs_axes", int_list(rhs_axes));
        }
        Op::Einsum(spec) => {
            vars.insert("spec", format!("\"{spec}\""));
        }
        Op::Transpose(perm) => {
            vars.insert("perm", int_tuple(perm));
        }
        Op::Broadcast(shape) | Op::Reshape(shape) | Op::Window(shape) => {
            vars.insert("shape", py_shape(shape, names));
        }
        Op::Flip(axes) => {
            vars.insert("axes", int_tuple(axes));
        }
        Op::Slice(items) => {
            vars.insert("slice", py_slice(items, names));
        }
        Op::Concat { axis } | Op::Scan { axis, .. } => {
            vars.insert("axis", axis.to_string());
        }
        Op::ArgExtreme { axis, largest, .. } => {
            vars.insert("axis", axis.to_string());
            vars.insert(
                "largest",
                if *largest { "True" } else { "False" }.to_string(),
            );
        }
        Op::Triu(k) | Op::Tril(k) => {
            vars.insert("k", k.to_string());
        }
        _ => {}
    }
    if let Some(k) = crate::narrow::shift_amount(e) {
        vars.insert("shift", k.to_string());
    }
    let rule = t.special_rule(e).unwrap_or_else(|| t.rule(e.op(), operand));
    let text = fill(rule, &vars);
    match widened {
        Some(_) if e.dtype() != DType::Bool => convert(&text, e.dtype()),
        _ => text,
    }
}

/// Nesting depth after which a subtree is bound to a temporary: Python's
/// parser rejects very deeply nested expressions.
const MAX_INLINE_DEPTH: usize = 24;

/// Subtrees to bind to temporaries, children before parents: non-leaf
/// subtrees that occur more than once in `e`, and every subtree whose
/// height is a multiple of [`MAX_INLINE_DEPTH`].
fn shared_subtrees(e: &Expr) -> Vec<Expr> {
    struct Visit {
        count: HashMap<Expr, usize>,
        height: HashMap<Expr, usize>,
        order: Vec<Expr>,
    }
    fn visit(e: &Expr, v: &mut Visit) -> usize {
        if e.args().is_empty() {
            return 0;
        }
        if let Some(n) = v.count.get_mut(e) {
            *n += 1;
            return v.height[e];
        }
        v.count.insert(e.clone(), 1);
        let h = 1 + e.args().iter().map(|a| visit(a, v)).max().unwrap_or(0);
        v.height.insert(e.clone(), h);
        v.order.push(e.clone());
        h
    }
    let mut v = Visit {
        count: HashMap::new(),
        height: HashMap::new(),
        order: Vec::new(),
    };
    let root_height = visit(e, &mut v);
    let Visit {
        count,
        height,
        mut order,
    } = v;
    order.retain(|x| {
        let h = height[x];
        count[x] > 1 || (h % MAX_INLINE_DEPTH == 0 && h != root_height)
    });
    order
}

/// Whether a value may alias a caller's array (so it must be copied
/// before the array is written).
pub(super) fn may_be_view(e: &Expr) -> bool {
    matches!(
        e.op(),
        Op::Var(_)
            | Op::Slice(_)
            | Op::Transpose(_)
            | Op::Broadcast(_)
            | Op::Diag
            | Op::Flip(_)
            | Op::Reshape(_)
            | Op::Window(_)
    ) || matches!(e.op(), Op::Reduce { axes, .. } if axes.is_empty())
}

/// Emits a whole module for a Python-family target.
pub fn emit_python(program: &Program, t: &dyn PyTable) -> String {
    let reserved = vec![
        format!("{}_compiled", program.name),
        format!("{}__compiled", program.name),
    ];
    let names = NameMap::for_program(program, &reserved);
    let sizes: Vec<&str> = program
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Size)
        .map(|p| &*p.name)
        .collect();
    let mut sizes: Vec<&str> = sizes;
    let mut lower = BlockLowering {
        program,
        table: t,
        names: &names,
        temps: 0,
        depth: 0,
    };
    let body = lower.block(&program.body, &mut sizes);
    let f = PyFunction {
        program,
        names: &names,
        params: program
            .params
            .iter()
            .map(|p| (names.get(&p.name), p))
            .collect(),
        body,
    };
    let function = t.function(&f);
    let mut out = header_lines(program, t.target(), "#");
    out.push_str(t.imports());
    for (_, definition) in used_helpers(t.helpers(), &function) {
        out.push_str("\n\n");
        out.push_str(definition);
    }
    out.push_str("\n\n");
    out.push_str(&function);
    out
}

/// The helpers `function` calls, directly or through other helpers, in
/// the table's order.
fn used_helpers<'h>(
    helpers: &'h [(&'static str, &'static str)],
    function: &str,
) -> Vec<&'h (&'static str, &'static str)> {
    let mut used = vec![false; helpers.len()];
    loop {
        let mut grew = false;
        for (k, (name, _)) in helpers.iter().enumerate() {
            let caller = |(j, (_, def)): (usize, &(&str, &str))| used[j] && calls(def, name);
            if !used[k] && (calls(function, name) || helpers.iter().enumerate().any(caller)) {
                used[k] = true;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    helpers
        .iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(h, _)| h)
        .collect()
}

/// Whether `code` calls the helper `name`: `name(` not preceded by an
/// identifier character (`kernel_syrk(` does not call `_syrk`).
fn calls(code: &str, name: &str) -> bool {
    let call = format!("{name}(");
    code.match_indices(&call).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Turns TensIR statements into [`PyStmt`]s.
struct BlockLowering<'a> {
    program: &'a Program,
    table: &'a dyn PyTable,
    names: &'a NameMap,
    /// Temporaries made so far (`_t0`, `_t1`, ...).
    temps: usize,
    /// Loops around the statements being lowered.
    depth: usize,
}

impl<'a> BlockLowering<'a> {
    /// Binds the shared subtrees of statement `s` (value `value`) before
    /// it, children first: printing them inline could grow exponentially.
    /// Each gets a temporary, except the one a store may compute in its
    /// destination ([`super::inplace::scratch_candidate`]), also returned.
    fn hoist(
        &mut self,
        s: &Stmt,
        value: &Expr,
        sizes: &[&str],
        body: &mut Vec<PyStmt>,
    ) -> (HashMap<Expr, String>, Option<Expr>) {
        let (t, names) = (self.table, self.names);
        let shared_list = shared_subtrees(value);
        let scratch = match s {
            Stmt::Store { target, region, .. }
                if t.out_rule(&Op::Binary(BinaryOp::Add)).is_some() =>
            {
                super::inplace::scratch_candidate(t, target, value, &shared_list).map(|x| {
                    let dest = match region {
                        Some(items) => format!("{}[{}]", names.get(target), py_slice(items, names)),
                        None => names.get(target),
                    };
                    (x, dest)
                })
            }
            _ => None,
        };
        let mut hoisted = HashMap::new();
        for shared in shared_list {
            if let Some((x, dest)) = scratch.as_ref().filter(|(x, _)| *x == shared) {
                let call = super::inplace::render_plain_into(t, names, sizes, &hoisted, x, dest);
                body.push(PyStmt::Call(call));
                hoisted.insert(shared, dest.clone());
                continue;
            }
            let text = render_expr(&shared, t, names, sizes, &hoisted);
            let name = format!("_t{}", self.temps);
            self.temps += 1;
            body.push(PyStmt::Let {
                name: name.clone(),
                value: text,
            });
            hoisted.insert(shared, name);
        }
        (hoisted, scratch.map(|(x, _)| x))
    }

    /// A whole-array store `s` at the top level, for a target with a block
    /// size: as a loop over blocks of rows where [`super::chunk`] blocks it,
    /// else its whole-array statements (lowered once, also to see whether
    /// they make a temporary). `None`: not such a store; the caller lowers
    /// it. Statements inside loops stay whole: a loop step's arrays are
    /// rarely large, and the block loop would add its overhead every step.
    fn top_level_store(&mut self, s: &Stmt, sizes: &[&str]) -> Option<Vec<PyStmt>> {
        use super::chunk::{blocked_store, BLOCK_END, BLOCK_START, ROWS_VAR};
        let bytes = self.table.block_bytes().filter(|_| self.depth == 0)?;
        let Stmt::Store {
            target,
            region: None,
            value,
        } = s
        else {
            return None;
        };
        let temps = self.temps;
        let mut whole = Vec::new();
        self.value_stmt(s, value, sizes, &mut whole);
        let (temps_after_whole, makes_temporary) = (
            self.temps,
            whole.iter().any(|w| matches!(w, PyStmt::Let { .. })),
        );
        // The blocked statements number their temporaries as the whole
        // ones would have.
        self.temps = temps;
        let mut fresh = || {
            self.temps += 1;
            format!("_t{}", self.temps - 1)
        };
        let Some(plan) = blocked_store(value, bytes, makes_temporary, &mut fresh) else {
            self.temps = temps_after_whole;
            return Some(whole);
        };
        let names = self.names;
        let shape = value.shape();
        let blocked = Stmt::Store {
            target: target.clone(),
            region: Some(plan.region.clone()),
            value: plan.value.clone(),
        };
        let mut out = Vec::new();
        for (sub, var) in &plan.hoisted {
            let Op::Var(name) = var.op() else {
                continue;
            };
            let once = Stmt::Let {
                name: name.clone(),
                value: sub.clone(),
            };
            self.value_stmt(&once, sub, sizes, &mut out);
        }
        out.push(PyStmt::Let {
            name: ROWS_VAR.to_string(),
            value: plan.rows_text(&shape[1..], names),
        });
        let extent = py_dim(&shape[0], names);
        let mut block_sizes = sizes.to_vec();
        block_sizes.extend([BLOCK_START, BLOCK_END, ROWS_VAR]);
        let mut inner = vec![PyStmt::Let {
            name: BLOCK_END.to_string(),
            value: format!("{BLOCK_START} + {ROWS_VAR}"),
        }];
        self.value_stmt(&blocked, &plan.value, &block_sizes, &mut inner);
        out.push(PyStmt::Loop(PyLoop {
            var: BLOCK_START.to_string(),
            start: "0".to_string(),
            stop: extent,
            step: Some(ROWS_VAR.to_string()),
            body: inner,
            shapes_invariant: false,
            written: vec![names.get(target)],
        }));
        Some(out)
    }

    /// `sizes` holds the size parameters and enclosing loop variables:
    /// names that are `i64` scalars in expressions.
    fn block(&mut self, stmts: &'a [Stmt], sizes: &mut Vec<&'a str>) -> Vec<PyStmt> {
        let (t, names) = (self.table, self.names);
        let mut body = Vec::new();
        for s in stmts {
            let value = match s {
                Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => value,
                Stmt::Var { name, ty } => {
                    // A fresh zero-filled array the stores then update in
                    // place, owned by the function (never a caller's view).
                    let zeros = Expr::new(
                        Op::Full {
                            shape: ty.shape.clone(),
                            value: Lit::zero(ty.dtype),
                        },
                        vec![],
                    );
                    if let Ok(zeros) = zeros {
                        let text = render_expr(&zeros, t, names, sizes, &HashMap::new());
                        body.push(PyStmt::Let {
                            name: names.get(name),
                            value: text,
                        });
                    }
                    continue;
                }
                Stmt::Loop {
                    var,
                    start,
                    stop,
                    body: inner,
                } => {
                    sizes.push(var);
                    self.depth += 1;
                    let lowered = self.block(inner, sizes);
                    self.depth -= 1;
                    sizes.pop();
                    let mut written = Vec::new();
                    stored_arrays(inner, &mut written);
                    let written = self
                        .program
                        .params
                        .iter()
                        .map(|p| &p.name)
                        .chain(self.program.vars().into_iter().map(|(n, _)| n))
                        .filter(|n| written.contains(&&***n))
                        .map(|n| names.get(n))
                        .collect();
                    body.push(PyStmt::Loop(PyLoop {
                        var: names.get(var),
                        start: py_dim(start, names),
                        stop: py_dim(stop, names),
                        step: None,
                        body: lowered,
                        shapes_invariant: !mentions_in_shapes(inner, var),
                        written,
                    }));
                    continue;
                }
            };
            if let Some(lowered) = self.top_level_store(s, sizes) {
                body.extend(lowered);
                continue;
            }
            self.value_stmt(s, value, sizes, &mut body);
        }
        body
    }

    /// Lowers statement `s` of value `value` (a let, store or return)
    /// onto `body`: shared subtrees first, then in place where the target
    /// writes into arrays, else one assignment.
    fn value_stmt(&mut self, s: &Stmt, value: &Expr, sizes: &[&str], body: &mut Vec<PyStmt>) {
        let (t, names) = (self.table, self.names);
        let (hoisted, scratch) = self.hoist(s, value, sizes, body);
        if t.out_rule(&Op::Binary(BinaryOp::Add)).is_some() {
            let mut lowering = InPlaceLowering {
                table: t,
                names,
                sizes,
                hoisted: &hoisted,
                uses: super::inplace::hoisted_uses(value, &hoisted),
                scratch,
                free_dest: None,
                temps: &mut self.temps,
                out: Vec::new(),
            };
            let lowered = match s {
                Stmt::Store { target, region, .. } => {
                    lowering.store(target, region.as_deref(), value);
                    true
                }
                Stmt::Let { name, .. } => {
                    lowering.bind(&names.get(name), value);
                    true
                }
                _ => false,
            };
            if lowered {
                body.append(&mut lowering.out);
                return;
            }
        }
        let text = render_expr(value, t, names, sizes, &hoisted);
        let text = match t.copy_rule() {
            Some(rule) if may_be_view(value) => rule.replace("{0}", &text),
            _ => text,
        };
        body.push(match s {
            Stmt::Let { name, .. } => PyStmt::Let {
                name: names.get(name),
                value: text,
            },
            Stmt::Store { target, region, .. } => PyStmt::Store {
                target: names.get(target),
                region: region.as_deref().map(|items| py_slice(items, names)),
                value: text,
                boxed: region
                    .as_deref()
                    .and_then(|items| py_box(items, value.shape().len(), names)),
            },
            Stmt::Return(_) | Stmt::Loop { .. } | Stmt::Var { .. } => PyStmt::Return(text),
        });
    }
}

/// Names of the arrays stored into anywhere in `stmts`.
fn stored_arrays<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a str>) {
    for s in stmts {
        match s {
            Stmt::Store { target, .. } => out.push(target),
            Stmt::Loop { body, .. } => stored_arrays(body, out),
            Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Return(_) => {}
        }
    }
}

/// Whether `var` occurs in a dim of `stmts` other than a single index: a
/// shape (`full`, `broadcast`), a slice range, or a nested loop's bounds.
pub fn mentions_in_shapes(stmts: &[Stmt], var: &str) -> bool {
    let in_dims = |ds: &[&Dim]| ds.iter().any(|d| d.symbols().any(|s| s == var));
    let in_items = |items: &[SliceItem]| {
        items.iter().any(|it| match it {
            SliceItem::Range { start, stop, .. } => in_dims(&[start, stop]),
            SliceItem::Full | SliceItem::Index(_) => false,
        })
    };
    let in_expr = |e: &Expr| {
        let mut found = false;
        e.walk_unique(&mut |node| {
            found |= match node.op() {
                Op::Full { shape, .. }
                | Op::Broadcast(shape)
                | Op::Reshape(shape)
                | Op::Window(shape) => in_dims(&shape.iter().collect::<Vec<_>>()),
                Op::Slice(items) => in_items(items),
                _ => false,
            }
        });
        found
    };
    stmts.iter().any(|s| match s {
        Stmt::Let { value, .. } | Stmt::Return(value) => in_expr(value),
        Stmt::Store { region, value, .. } => {
            region.as_deref().is_some_and(in_items) || in_expr(value)
        }
        Stmt::Loop {
            start, stop, body, ..
        } => in_dims(&[start, stop]) || mentions_in_shapes(body, var),
        Stmt::Var { .. } => false,
    })
}

/// Renders statements one per line at `indent`, loops as Python `for`
/// loops over `range` (an empty body gets `pass`); `line` spells the
/// other statements.
pub fn render_python_block(
    body: &[PyStmt],
    indent: &str,
    line: &dyn Fn(&PyStmt) -> String,
    out: &mut String,
) {
    if body.is_empty() {
        out.push_str(&format!("{indent}pass\n"));
    }
    for s in body {
        match s {
            PyStmt::Loop(l) => {
                let step = l.step.as_ref().map(|s| format!(", {s}"));
                out.push_str(&format!(
                    "{indent}for {} in range({}, {}{}):\n",
                    l.var,
                    l.start,
                    l.stop,
                    step.unwrap_or_default()
                ));
                render_python_block(&l.body, &format!("{indent}    "), line, out);
            }
            other => out.push_str(&format!("{indent}{}\n", line(other))),
        }
    }
}

/// A docstring line listing the parameters, shared by all Python targets,
/// then one section with every precondition: the size relations the
/// region needs (checked on entry) and the caller's obligations the code
/// cannot check (disjoint rows, how a C struct's fields are passed).
/// The parameter list of the entry point: every parameter in C order, the
/// trailing extent sizes (`ext_2000`, a declared extent the program takes
/// as a size) defaulting to the value the C was compiled with, so a caller
/// passes what the C function takes.
pub fn signature(f: &PyFunction) -> String {
    let declared = |name: &str| {
        f.program
            .meta
            .extents
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value)
    };
    let defaults = f
        .params
        .iter()
        .rev()
        .take_while(|(_, p)| {
            p.kind == crate::program::ParamKind::Size && declared(&p.name).is_some()
        })
        .count();
    let first_default = f.params.len() - defaults;
    f.params
        .iter()
        .enumerate()
        .map(
            |(k, (n, p))| match (declared(&p.name), extent_source(f, &p.name)) {
                (Some(_), Some(_)) if k >= first_default => format!("{n}=None"),
                (Some(v), None) if k >= first_default => format!("{n}={v}"),
                _ => n.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// The array parameter and axis a declared extent is read from, when the
/// program has that array as a parameter.
fn extent_source<'a>(f: &'a PyFunction, size: &str) -> Option<(&'a str, usize)> {
    let e = f.program.meta.extents.iter().find(|e| e.name == size)?;
    let (name, _) = f.params.iter().find(|(_, p)| {
        *p.name == *e.array && matches!(p.kind, crate::program::ParamKind::Array { .. })
    })?;
    Some((name.as_str(), e.dim))
}

/// Statements at `indent` that give each declared extent the caller left
/// out the extent of the array it was declared with: the C's arrays are
/// what the caller passes, whatever dataset the program was lifted at.
pub fn extent_defaults(f: &PyFunction, indent: &str) -> String {
    let mut out = String::new();
    for (n, p) in &f.params {
        if let Some((array, dim)) = extent_source(f, &p.name) {
            out.push_str(&format!(
                "{indent}if {n} is None:\n{indent}    {n} = {array}.shape[{dim}]\n"
            ));
        }
    }
    out
}

pub fn doc_params(f: &PyFunction) -> String {
    let mut text = doc_param_list(f);
    let relations = f.program.meta.requires.iter().map(|r| {
        format!(
            "{} <= {} (checked on entry: a violation raises ValueError naming it)",
            py_dim(&r.needed, f.names),
            py_dim(&r.declared, f.names)
        )
    });
    // Docstrings are triple-quoted: keep the sentences free of quotes and
    // backslashes so that no precondition text can end the string.
    let stated = f.program.meta.preconditions.iter().map(|pre| {
        pre.chars()
            .map(|c| {
                if matches!(c, '"' | '\\' | '\n') {
                    '\''
                } else {
                    c
                }
            })
            .collect::<String>()
    });
    let all: Vec<String> = relations.chain(stated).collect();
    if !all.is_empty() {
        text.push_str("\n\n    Preconditions (the C relies on them):");
        for entry in &all {
            text.push_str(&format!("\n    - {entry}"));
        }
    }
    text
}

/// The C's leading guards ([`crate::program::Guard`]), checked before
/// anything else: when one holds, its stores and its return. `returned`
/// spells a returned literal in the target's scalar type.
pub fn guard_prologue(
    f: &PyFunction,
    indent: &str,
    returned: &dyn Fn(&str, DType) -> String,
) -> String {
    let mut out = String::new();
    for g in &f.program.meta.guards {
        out.push_str(&format!(
            "{indent}if {}:\n",
            guard_condition(&g.cond, f.names)
        ));
        for (array, value) in &g.stores {
            out.push_str(&format!(
                "{indent}    {}[0] = {value}\n",
                f.names.get(array)
            ));
        }
        let value = match (&g.value, f.program.ret) {
            (Some(v), Some(d)) => returned(v, d),
            _ => "None".to_string(),
        };
        out.push_str(&format!("{indent}    return {value}\n"));
    }
    out
}

/// A guard's condition with each `{param}` replaced by its generated name.
pub(crate) fn guard_condition(cond: &str, names: &NameMap) -> String {
    let mut out = String::new();
    let mut rest = cond;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&names.get(&rest[open + 1..open + close]));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Python statements at `indent` that raise `ValueError` naming the first
/// violated precondition; `value` spells a size's value (`int(n)`).
pub fn precondition_checks(f: &PyFunction, indent: &str) -> String {
    let mut out = String::new();
    for (idx, bins) in scatter_index_params(&f.program.body) {
        let shown = match bins.as_const() {
            Some(_) => String::new(),
            None => format!(", {0} = {{{0}}}", py_dim(&bins, f.names)),
        };
        let (idx, bins) = (f.names.get(&idx), py_dim(&bins, f.names));
        out.push_str(&format!(
            "{indent}if 0 not in {idx}.shape and not (0 <= int({idx}.min()) and int({idx}.max()) < {bins}):\n{indent}    raise ValueError(f\"precondition violated: every bin index in `{idx}` lies in [0, {bins}) (they span {{int({idx}.min())}} .. {{int({idx}.max())}}{shown})\")\n"
        ));
    }
    for r in &f.program.meta.requires {
        let (needed, declared) = (py_dim(&r.needed, f.names), py_dim(&r.declared, f.names));
        out.push_str(&format!(
            "{indent}if not ({needed} <= {declared}):\n{indent}    raise ValueError(f\"precondition violated: {needed} <= {declared} ({needed} = {{{needed}}}, {declared} = {{{declared}}})\")\n"
        ));
    }
    out
}

/// The parameters a `scatter_add` takes its indices from, with the number
/// of bins they must stay below (checked before anything is computed).
fn scatter_index_params(stmts: &[Stmt]) -> Vec<(String, Dim)> {
    let mut out: Vec<(String, Dim)> = Vec::new();
    let mut visit = |e: &Expr| {
        e.walk_unique(&mut |x: &Expr| {
            if let (Op::ScatterAdd, [h, idx, _]) = (x.op(), x.args()) {
                // An index type whose every value is a bin needs no check.
                let type_bins = match idx.dtype() {
                    DType::Bool => Some(2),
                    DType::U8 => Some(256),
                    _ => None,
                };
                let covered =
                    matches!((type_bins, h.shape()[0].as_const()), (Some(t), Some(n)) if n >= t);
                if let (Op::Var(name), false) = (idx.op(), covered) {
                    let entry = (name.to_string(), h.shape()[0].clone());
                    if !out.contains(&entry) {
                        out.push(entry);
                    }
                }
            }
        })
    };
    let mut all = Vec::new();
    for s in stmts {
        s.preorder(&mut all);
    }
    for s in all {
        match s {
            Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
                visit(value)
            }
            Stmt::Loop { .. } | Stmt::Var { .. } => {}
        }
    }
    out
}

fn doc_param_list(f: &PyFunction) -> String {
    let parts: Vec<String> = f
        .params
        .iter()
        .map(|(n, p)| match &p.kind {
            ParamKind::Size => format!("{n}: size"),
            ParamKind::Scalar(d) => format!("{n}: {d}"),
            ParamKind::Array {
                dtype,
                shape,
                access,
            } => {
                let dims: Vec<String> = shape.iter().map(|d| py_dim(d, f.names)).collect();
                format!("{n}: {} {dtype}[{}]", access.name(), dims.join(", "))
            }
        })
        .collect();
    parts.join(", ")
}
