//! A grammar of small, valid C kernels (1-3 nested loops over 1-3 input
//! arrays, affine subscripts with offsets, element-wise operations,
//! reductions, conditionals, `int`/`float`/`double`, scalar parameters),
//! its C printer, and the shrinks used to minimise a failing kernel.
//!
//! Every generated kernel is well-defined C at the sizes it carries: each
//! subscript stays inside its array (a loop over `v` runs over
//! `lo..extent - hi` and offsets on `v` lie in `-lo..=hi`), integer values
//! stay far from overflow, and floats divide only by scalars or arrays the
//! differential driver fills with positive values.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::rng::Rng;

pub const VARS: [&str; 3] = ["i", "j", "k"];
pub const SIZES: [&str; 3] = ["n", "m", "p"];
const INPUTS: [&str; 3] = ["a", "b", "c"];
const SCALARS: [&str; 2] = ["alpha", "beta"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Float,
    Double,
    Int,
    /// `unsigned char`: stores wrap modulo 256 (blend kernels).
    U8,
}

impl Ty {
    fn c_name(self) -> &'static str {
        match self {
            Ty::Float => "float",
            Ty::Double => "double",
            Ty::Int => "int",
            Ty::U8 => "unsigned char",
        }
    }

    fn literal(self, v: i64) -> String {
        match self {
            Ty::Float => format!("{v}.0f"),
            Ty::Double => format!("{v}.0"),
            Ty::Int | Ty::U8 => format!("{v}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    /// Index into [`SIZES`]: the extent this loop runs to.
    pub size: usize,
    pub lo: i64,
    pub hi: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    /// Floats: by a positive scalar or array; ints: by a constant.
    Div,
    /// Ints: C `%` by a constant (the sign of the dividend).
    Rem,
    /// Floats: `fmaxf`/`fmax`, `fminf`/`fmin`.
    Max,
    Min,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `array` indexes `Kernel::inputs`; `None` reads the output.
    Read {
        array: Option<usize>,
        offsets: Vec<i64>,
    },
    Scalar(usize),
    Const(i64),
    /// A loop variable's value (int kernels).
    Var(usize),
    Bin(Op, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    /// `lhs > rhs ? then : other`.
    Select(Box<[Expr; 4]>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// `out[dims] = value` (or `+=`) in the innermost loop.
    Map { accumulate: bool, value: Expr },
    /// The output keeps the first `keep` loops; the inner ones are summed,
    /// through a local accumulator or straight into the output.
    Reduce {
        keep: usize,
        local: bool,
        value: Expr,
    },
    /// `if (lhs > rhs) out = then; [else out = other;]`.
    Cond {
        lhs: Expr,
        rhs: Expr,
        then: Expr,
        other: Option<Expr>,
    },
    /// A scalar sum over every loop, returned.
    Return { value: Expr },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    pub ty: Ty,
    /// The output's, accumulator's and returned value's type: `ty`, or a
    /// float for integer data (int data with a float accumulator).
    pub out_ty: Ty,
    /// C99 array parameters (`float a[n][m]`) instead of flat pointers.
    pub vla: bool,
    pub loops: Vec<Loop>,
    /// Per input array: the loops that index it, outermost dimension first.
    pub inputs: Vec<Vec<usize>>,
    pub scalars: usize,
    /// The loops that index the output (`Map`/`Cond`: every loop, possibly
    /// permuted; `Reduce`: the kept ones; `Return`: none).
    pub out_dims: Vec<usize>,
    pub body: Body,
}

/// Draws one kernel; `name` becomes the C function's name.
pub fn generate(rng: &mut Rng, name: &str) -> Kernel {
    let ty = *rng.pick(&[Ty::Float, Ty::Float, Ty::Double, Ty::Int, Ty::Int, Ty::U8]);
    let out_ty = match ty {
        Ty::Int | Ty::U8 if rng.chance(25) => *rng.pick(&[Ty::Float, Ty::Double]),
        _ => ty,
    };
    let depth = 1 + rng.below(3);
    let distinct_sizes = 1 + rng.below(depth);
    let loops: Vec<Loop> = (0..depth)
        .map(|l| Loop {
            size: if rng.chance(70) {
                l.min(distinct_sizes - 1)
            } else {
                rng.below(distinct_sizes)
            },
            lo: if rng.chance(80) { 0 } else { rng.range(1, 2) },
            hi: if rng.chance(80) { 0 } else { rng.range(1, 2) },
        })
        .collect();
    let inputs = (0..1 + rng.below(3))
        .map(|_| input_dims(rng, depth))
        .collect();
    let mut kernel = Kernel {
        name: name.to_string(),
        ty,
        out_ty,
        vla: rng.chance(25),
        loops,
        inputs,
        scalars: rng.below(3),
        out_dims: Vec::new(),
        body: Body::Return {
            value: Expr::Const(0),
        },
    };
    kernel.body = generate_body(rng, &mut kernel);
    kernel
}

/// The loops indexing one input: a subset of the nest in order, sometimes
/// transposed.
fn input_dims(rng: &mut Rng, depth: usize) -> Vec<usize> {
    let mut dims: Vec<usize> = (0..depth).filter(|_| rng.chance(60)).collect();
    if dims.is_empty() {
        dims.push(rng.below(depth));
    }
    if dims.len() >= 2 && rng.chance(25) {
        dims.swap(0, 1);
    }
    dims
}

fn generate_body(rng: &mut Rng, k: &mut Kernel) -> Body {
    let depth = k.loops.len();
    let all: Vec<usize> = (0..depth).collect();
    match rng.below(100) {
        0..=34 => {
            k.out_dims = permuted(rng, all);
            let accumulate = rng.chance(15);
            Body::Map {
                accumulate,
                value: gen_expr(rng, k, 2, !accumulate),
            }
        }
        35..=64 if depth >= 2 => {
            let keep = 1 + rng.below(depth - 1);
            k.out_dims = (0..keep).collect();
            Body::Reduce {
                keep,
                local: rng.chance(60),
                value: gen_expr(rng, k, 2, false),
            }
        }
        65..=84 => {
            k.out_dims = permuted(rng, all);
            Body::Cond {
                lhs: gen_expr(rng, k, 1, false),
                rhs: gen_expr(rng, k, 0, false),
                then: gen_expr(rng, k, 1, false),
                other: rng.chance(70).then(|| gen_expr(rng, k, 1, false)),
            }
        }
        _ => Body::Return {
            value: gen_expr(rng, k, 2, false),
        },
    }
}

fn permuted(rng: &mut Rng, mut dims: Vec<usize>) -> Vec<usize> {
    if dims.len() >= 2 && rng.chance(15) {
        let last = dims.len() - 1;
        dims.swap(0, last);
    }
    dims
}

/// An expression of at most `budget` more levels; `read_out` allows reading
/// the output (an in-place update).
fn gen_expr(rng: &mut Rng, k: &Kernel, budget: u32, read_out: bool) -> Expr {
    if budget == 0 || rng.chance(30) {
        return gen_leaf(rng, k, read_out);
    }
    let sub = |rng: &mut Rng| Box::new(gen_expr(rng, k, budget - 1, read_out));
    match rng.below(100) {
        0..=29 => Expr::Bin(Op::Add, sub(rng), sub(rng)),
        30..=49 => Expr::Bin(Op::Sub, sub(rng), sub(rng)),
        50..=74 => Expr::Bin(Op::Mul, sub(rng), sub(rng)),
        75..=78 if k.is_int() => Expr::Bin(Op::Rem, sub(rng), Box::new(divisor(rng, k))),
        75..=78 => Expr::Bin(*rng.pick(&[Op::Max, Op::Min]), sub(rng), sub(rng)),
        79..=82 => Expr::Bin(Op::Div, sub(rng), Box::new(divisor(rng, k))),
        83..=88 => Expr::Neg(sub(rng)),
        _ => Expr::Select(Box::new([
            *sub(rng),
            gen_leaf(rng, k, false),
            *sub(rng),
            *sub(rng),
        ])),
    }
}

/// Floats divide by a scalar or an input element (the driver makes both
/// positive) or a constant; ints by a positive constant (C truncation).
fn divisor(rng: &mut Rng, k: &Kernel) -> Expr {
    if k.is_int() || rng.chance(30) {
        return Expr::Const(rng.range(2, 4));
    }
    if k.scalars > 0 && rng.chance(50) {
        return Expr::Scalar(rng.below(k.scalars));
    }
    let array = rng.below(k.inputs.len());
    read(rng, k, Some(array))
}

fn gen_leaf(rng: &mut Rng, k: &Kernel, read_out: bool) -> Expr {
    match rng.below(100) {
        0..=64 => {
            let array = rng.below(k.inputs.len());
            read(rng, k, Some(array))
        }
        65..=74 if read_out => read(rng, k, None),
        75..=84 if k.scalars > 0 => Expr::Scalar(rng.below(k.scalars)),
        85..=87 if k.is_int() || rng.chance(20) => Expr::Var(rng.below(k.loops.len())),
        _ => Expr::Const(rng.range(-3, 3)),
    }
}

/// A read with offsets that keep it in bounds (mostly zero; the output is
/// read only where it is written).
fn read(rng: &mut Rng, k: &Kernel, array: Option<usize>) -> Expr {
    let dims = match array {
        Some(a) => k.inputs[a].clone(),
        None => {
            return Expr::Read {
                array,
                offsets: vec![0; k.out_dims.len()],
            }
        }
    };
    let offsets = dims
        .iter()
        .map(|&l| {
            let lp = &k.loops[l];
            if rng.chance(60) {
                0
            } else {
                rng.range(-lp.lo, lp.hi)
            }
        })
        .collect();
    Expr::Read { array, offsets }
}

impl Kernel {
    fn is_int(&self) -> bool {
        matches!(self.ty, Ty::Int | Ty::U8)
    }

    fn extent(&self, l: usize) -> &'static str {
        SIZES[self.loops[l].size]
    }

    /// Size parameters, inputs and scalars the kernel actually uses (the
    /// printer declares only these).
    fn used(&self) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
        let mut sizes: Vec<usize> = self.loops.iter().map(|l| l.size).collect();
        sizes.sort();
        sizes.dedup();
        let (mut inputs, mut scalars) = (Vec::new(), Vec::new());
        self.each_expr(&mut |e| collect_uses(e, &mut inputs, &mut scalars));
        inputs.sort();
        inputs.dedup();
        scalars.sort();
        scalars.dedup();
        (sizes, inputs, scalars)
    }

    fn each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        match &self.body {
            Body::Map { value, .. } | Body::Reduce { value, .. } | Body::Return { value } => {
                f(value)
            }
            Body::Cond {
                lhs,
                rhs,
                then,
                other,
            } => {
                for e in [lhs, rhs, then].into_iter().chain(other.as_ref()) {
                    f(e);
                }
            }
        }
    }

    /// One size value per used size parameter: distinct, large enough for
    /// every loop to run at least once.
    pub fn sizes(&self) -> BTreeMap<String, i64> {
        let (used, _, _) = self.used();
        used.iter()
            .enumerate()
            .map(|(rank, &s)| (SIZES[s].to_string(), 5 + rank as i64 * 2))
            .collect()
    }

    pub fn returns(&self) -> bool {
        matches!(self.body, Body::Return { .. })
    }

    /// The kernel as a C function.
    pub fn to_c(&self) -> String {
        let t = self.ty.c_name();
        let (sizes, inputs, scalars) = self.used();
        let mut params: Vec<String> = sizes.iter().map(|&s| format!("int {}", SIZES[s])).collect();
        params.extend(scalars.iter().map(|&s| format!("{t} {}", SCALARS[s])));
        if !self.returns() {
            params.push(self.array_param("out", &self.out_dims, false, self.out_ty));
        }
        params.extend(
            inputs
                .iter()
                .map(|&a| self.array_param(INPUTS[a], &self.inputs[a], true, self.ty)),
        );
        let ret = if self.returns() { t } else { "void" };
        let mut c = format!("{ret} {}({}) {{\n", self.name, params.join(", "));
        self.print_body(&mut c);
        c.push_str("}\n");
        c
    }

    fn array_param(&self, name: &str, dims: &[usize], input: bool, ty: Ty) -> String {
        let konst = if input { "const " } else { "" };
        let t = ty.c_name();
        if self.vla {
            let ext: String = dims
                .iter()
                .map(|&l| format!("[{}]", self.extent(l)))
                .collect();
            format!("{konst}{t} {name}{ext}")
        } else {
            format!("{konst}{t} *{name}")
        }
    }

    /// `name[...]` at the loop variables of `dims` shifted by `offsets`.
    fn subscript(&self, name: &str, dims: &[usize], offsets: &[i64]) -> String {
        let idx: Vec<String> = dims
            .iter()
            .zip(offsets)
            .map(|(&l, &o)| match o {
                0 => VARS[l].to_string(),
                o if o > 0 => format!("{} + {o}", VARS[l]),
                o => format!("{} - {}", VARS[l], -o),
            })
            .collect();
        if self.vla || idx.is_empty() {
            let idx = if idx.is_empty() {
                vec!["0".to_string()]
            } else {
                idx
            };
            return format!("{name}[{}]", idx.join("]["));
        }
        let mut flat = if offsets[0] == 0 {
            idx[0].clone()
        } else {
            format!("({})", idx[0])
        };
        for (d, i) in idx.iter().enumerate().skip(1) {
            flat = format!("{flat} * {} + {i}", self.extent(dims[d]));
            if d + 1 < idx.len() {
                flat = format!("({flat})");
            }
        }
        format!("{name}[{flat}]")
    }

    fn open_loop(&self, c: &mut String, l: usize) {
        let lp = &self.loops[l];
        let v = VARS[l];
        let end = match lp.hi {
            0 => self.extent(l).to_string(),
            h => format!("{} - {h}", self.extent(l)),
        };
        let pad = "  ".repeat(l + 1);
        let _ = writeln!(c, "{pad}for (int {v} = {}; {v} < {end}; {v}++) {{", lp.lo);
    }

    fn close_loops(&self, c: &mut String, from: usize, to: usize) {
        for l in (from..to).rev() {
            let _ = writeln!(c, "{}}}", "  ".repeat(l + 1));
        }
    }

    fn out_ref(&self) -> String {
        self.subscript("out", &self.out_dims, &vec![0; self.out_dims.len()])
    }

    fn print_body(&self, c: &mut String) {
        let depth = self.loops.len();
        let t = self.out_ty.c_name();
        let inner = "  ".repeat(depth + 1);
        let zero = self.out_ty.literal(0);
        match &self.body {
            Body::Map { accumulate, value } => {
                (0..depth).for_each(|l| self.open_loop(c, l));
                let op = if *accumulate { "+=" } else { "=" };
                let _ = writeln!(c, "{inner}{} {op} {};", self.out_ref(), self.expr(value));
                self.close_loops(c, 0, depth);
            }
            Body::Reduce { keep, local, value } => {
                (0..*keep).for_each(|l| self.open_loop(c, l));
                let pad = "  ".repeat(keep + 1);
                let acc = if *local {
                    "acc".to_string()
                } else {
                    self.out_ref()
                };
                let decl = if *local {
                    format!("{t} ")
                } else {
                    String::new()
                };
                let _ = writeln!(c, "{pad}{decl}{acc} = {zero};");
                (*keep..depth).for_each(|l| self.open_loop(c, l));
                let _ = writeln!(c, "{inner}{acc} += {};", self.expr(value));
                self.close_loops(c, *keep, depth);
                if *local {
                    let _ = writeln!(c, "{pad}{} = acc;", self.out_ref());
                }
                self.close_loops(c, 0, *keep);
            }
            Body::Cond {
                lhs,
                rhs,
                then,
                other,
            } => {
                (0..depth).for_each(|l| self.open_loop(c, l));
                let out = self.out_ref();
                let (l, r, th) = (self.expr(lhs), self.expr(rhs), self.expr(then));
                let _ = writeln!(c, "{inner}if ({l} > {r})\n{inner}  {out} = {th};");
                if let Some(o) = other {
                    let _ = writeln!(c, "{inner}else\n{inner}  {out} = {};", self.expr(o));
                }
                self.close_loops(c, 0, depth);
            }
            Body::Return { value } => {
                let _ = writeln!(c, "  {t} s = {zero};");
                (0..depth).for_each(|l| self.open_loop(c, l));
                let _ = writeln!(c, "{inner}s += {};", self.expr(value));
                self.close_loops(c, 0, depth);
                c.push_str("  return s;\n");
            }
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Read {
                array: Some(a),
                offsets,
            } => self.subscript(INPUTS[*a], &self.inputs[*a], offsets),
            Expr::Read {
                array: None,
                offsets,
            } => self.subscript("out", &self.out_dims, offsets),
            Expr::Scalar(s) => SCALARS[*s].to_string(),
            Expr::Const(v) if *v < 0 => format!("({})", self.ty.literal(*v)),
            Expr::Const(v) => self.ty.literal(*v),
            Expr::Var(l) => VARS[*l].to_string(),
            Expr::Bin(op @ (Op::Max | Op::Min), a, b) => {
                let f = if *op == Op::Max { "fmax" } else { "fmin" };
                let f = if self.ty == Ty::Float {
                    format!("{f}f")
                } else {
                    f.to_string()
                };
                format!("{f}({}, {})", self.expr(a), self.expr(b))
            }
            Expr::Bin(op, a, b) => {
                let sym = match op {
                    Op::Add => "+",
                    Op::Sub => "-",
                    Op::Mul => "*",
                    Op::Div => "/",
                    Op::Rem | Op::Max | Op::Min => "%",
                };
                format!("({} {sym} {})", self.expr(a), self.expr(b))
            }
            Expr::Neg(a) => format!("(-{})", self.expr(a)),
            Expr::Select(s) => {
                let [l, r, t, f] = &**s;
                let (l, r, t, f) = (self.expr(l), self.expr(r), self.expr(t), self.expr(f));
                format!("({l} > {r} ? {t} : {f})")
            }
        }
    }
}

fn collect_uses(e: &Expr, inputs: &mut Vec<usize>, scalars: &mut Vec<usize>) {
    match e {
        Expr::Read { array: Some(a), .. } => inputs.push(*a),
        Expr::Scalar(s) => scalars.push(*s),
        Expr::Bin(_, a, b) => {
            collect_uses(a, inputs, scalars);
            collect_uses(b, inputs, scalars);
        }
        Expr::Neg(a) => collect_uses(a, inputs, scalars),
        Expr::Select(s) => s.iter().for_each(|x| collect_uses(x, inputs, scalars)),
        Expr::Read { array: None, .. } | Expr::Const(_) | Expr::Var(_) => {}
    }
}

/// Strictly smaller variants of `k` that are still valid kernels, most
/// aggressive first: the body's simpler forms, each sub-expression replaced
/// by a child or a constant, offsets and loop bounds set to zero, flat
/// pointers instead of C99 arrays, an unpermuted output.
pub fn shrinks(k: &Kernel) -> Vec<Kernel> {
    let mut out = Vec::new();
    let with_body = |body: Body| Kernel { body, ..k.clone() };
    match &k.body {
        Body::Cond {
            then,
            other,
            lhs,
            rhs,
        } => {
            out.push(with_body(Body::Map {
                accumulate: false,
                value: then.clone(),
            }));
            if other.is_some() {
                out.push(with_body(Body::Cond {
                    lhs: lhs.clone(),
                    rhs: rhs.clone(),
                    then: then.clone(),
                    other: None,
                }));
            }
        }
        Body::Map {
            accumulate: true,
            value,
        } => {
            out.push(with_body(Body::Map {
                accumulate: false,
                value: value.clone(),
            }));
        }
        Body::Reduce {
            keep,
            local: true,
            value,
        } => out.push(with_body(Body::Reduce {
            keep: *keep,
            local: false,
            value: value.clone(),
        })),
        _ => {}
    }
    for (slot, e) in expr_slots(k).into_iter().enumerate() {
        for smaller in shrink_expr(&e) {
            out.push(replace_slot(k, slot, smaller));
        }
    }
    for l in 0..k.loops.len() {
        for (lo, hi) in [(0, k.loops[l].hi), (k.loops[l].lo, 0)] {
            if (lo, hi) != (k.loops[l].lo, k.loops[l].hi) {
                let mut s = k.clone();
                s.loops[l] = Loop {
                    size: s.loops[l].size,
                    lo,
                    hi,
                };
                out.push(s);
            }
        }
    }
    if k.vla {
        out.push(Kernel {
            vla: false,
            ..k.clone()
        });
    }
    let mut sorted = k.out_dims.clone();
    sorted.sort();
    if !matches!(k.body, Body::Reduce { .. }) && sorted != k.out_dims {
        out.push(Kernel {
            out_dims: sorted,
            ..k.clone()
        });
    }
    out.retain(|s| s != k && in_bounds(s));
    out
}

fn expr_slots(k: &Kernel) -> Vec<Expr> {
    let mut slots = Vec::new();
    k.each_expr(&mut |e| slots.push(e.clone()));
    slots
}

fn replace_slot(k: &Kernel, slot: usize, e: Expr) -> Kernel {
    let mut s = k.clone();
    let mut i = 0;
    let mut put = |x: &mut Expr| {
        if i == slot {
            *x = e.clone();
        }
        i += 1;
    };
    match &mut s.body {
        Body::Map { value, .. } | Body::Reduce { value, .. } | Body::Return { value } => put(value),
        Body::Cond {
            lhs,
            rhs,
            then,
            other,
        } => {
            put(lhs);
            put(rhs);
            put(then);
            if let Some(o) = other {
                put(o);
            }
        }
    }
    s
}

/// `e` replaced by one of its children or by a constant, zero offsets, or
/// one child shrunk in place.
fn shrink_expr(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    match e {
        Expr::Read { array, offsets } => {
            for (d, &o) in offsets.iter().enumerate() {
                if o != 0 {
                    let mut z = offsets.clone();
                    z[d] = 0;
                    out.push(Expr::Read {
                        array: *array,
                        offsets: z,
                    });
                }
            }
            out.push(Expr::Const(1));
        }
        Expr::Scalar(_) | Expr::Var(_) => out.push(Expr::Const(1)),
        Expr::Const(v) if *v != 1 => out.push(Expr::Const(1)),
        Expr::Const(_) => {}
        Expr::Neg(a) => {
            out.push((**a).clone());
            out.extend(shrink_expr(a).into_iter().map(|x| Expr::Neg(Box::new(x))));
        }
        Expr::Bin(op, a, b) => {
            out.push((**a).clone());
            if !matches!(op, Op::Div | Op::Rem) {
                out.push((**b).clone());
            }
            out.extend(
                shrink_expr(a)
                    .into_iter()
                    .map(|x| Expr::Bin(*op, Box::new(x), b.clone())),
            );
            if !matches!(op, Op::Div | Op::Rem) {
                out.extend(
                    shrink_expr(b)
                        .into_iter()
                        .map(|x| Expr::Bin(*op, a.clone(), Box::new(x))),
                );
            }
        }
        Expr::Select(s) => {
            out.push(s[2].clone());
            out.push(s[3].clone());
            for i in 0..4 {
                for x in shrink_expr(&s[i]) {
                    let mut t = s.clone();
                    t[i] = x;
                    out.push(Expr::Select(t));
                }
            }
        }
    }
    out
}

/// Every read offset lies within its loop's margins.
fn in_bounds(k: &Kernel) -> bool {
    let mut ok = true;
    k.each_expr(&mut |e| ok &= expr_in_bounds(k, e));
    ok
}

fn expr_in_bounds(k: &Kernel, e: &Expr) -> bool {
    match e {
        Expr::Read { array, offsets } => {
            let dims = match array {
                Some(a) => &k.inputs[*a],
                None => &k.out_dims,
            };
            dims.iter()
                .zip(offsets)
                .all(|(&l, &o)| -k.loops[l].lo <= o && o <= k.loops[l].hi)
        }
        Expr::Bin(_, a, b) => expr_in_bounds(k, a) && expr_in_bounds(k, b),
        Expr::Neg(a) => expr_in_bounds(k, a),
        Expr::Select(s) => s.iter().all(|x| expr_in_bounds(k, x)),
        _ => true,
    }
}

/// Greedy minimisation: repeatedly takes the first shrink that still
/// `fails`, up to `budget` attempts.
pub fn minimise(k: &Kernel, budget: usize, fails: &mut dyn FnMut(&Kernel) -> bool) -> Kernel {
    let mut best = k.clone();
    let mut tries = 0;
    'outer: loop {
        for candidate in shrinks(&best) {
            if tries >= budget {
                break 'outer;
            }
            tries += 1;
            if fails(&candidate) {
                best = candidate;
                continue 'outer;
            }
        }
        break;
    }
    best
}
