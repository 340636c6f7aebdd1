//! Differential tests: a plain concrete interpreter of the loop IR (f64
//! values, C integer semantics, real branches) against numeric evaluation
//! of the spec at the same random inputs.

use std::collections::HashMap;

use tenslift_frontend::ir::{
    BinaryOp, ExprKind, Kernel, LValue, LocalKind, MathFn, ParamKind, ScalarType, Stmt, UnaryOp,
    VarClass,
};

use super::sizes::{check_sizes, eval_affine, loop_values};
use super::{spec_at_chosen_sizes, Sizes};
use crate::algebra::Symbol;

struct Interp<'a> {
    sizes: &'a Sizes,
    iters: HashMap<String, i64>,
    scalars: HashMap<String, f64>,
    arrays: HashMap<String, (Vec<usize>, Vec<f64>)>,
    returned: Option<f64>,
}

fn to_type(v: f64, ty: ScalarType) -> f64 {
    if ty.is_float() {
        return v;
    }
    if ty == ScalarType::Bool {
        return (v != 0.0) as i32 as f64;
    }
    let modulus = 2f64.powi(ty.bits() as i32);
    let mut r = v.trunc().rem_euclid(modulus);
    if ty.is_signed() && r >= modulus / 2.0 {
        r -= modulus;
    }
    r
}

impl Interp<'_> {
    fn offset(&self, array: &str, index: &[tenslift_frontend::ir::Affine]) -> usize {
        let (shape, _) = &self.arrays[array];
        let loc = tenslift_frontend::ir::Loc {
            file: String::new(),
            line: 0,
            col: 0,
        };
        index.iter().zip(shape).fold(0, |acc, (a, &n)| {
            let i = eval_affine(a, &self.iters, self.sizes, &loc).unwrap() as usize;
            assert!(i < n);
            acc * n + i
        })
    }

    fn value(&self, e: &tenslift_frontend::ir::Expr) -> f64 {
        match &e.kind {
            ExprKind::IntLit { value } => *value as f64,
            ExprKind::FloatLit { value, .. } => *value,
            ExprKind::Var { name, class } => match class {
                VarClass::Iter => self.iters[name] as f64,
                _ => self.scalars[name],
            },
            ExprKind::Load { array, index } => self.arrays[array].1[self.offset(array, index)],
            ExprKind::Unary { op, arg } => match op {
                UnaryOp::Neg => -self.value(arg),
                UnaryOp::Not => (self.value(arg) == 0.0) as i32 as f64,
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.value(lhs), self.value(rhs));
                let int = !lhs.ty.is_float() && !rhs.ty.is_float();
                match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    BinaryOp::Div if int => (a / b).trunc(),
                    BinaryOp::Div => a / b,
                    BinaryOp::Rem => a % b,
                    BinaryOp::Lt => (a < b) as i32 as f64,
                    BinaryOp::Le => (a <= b) as i32 as f64,
                    BinaryOp::Gt => (a > b) as i32 as f64,
                    BinaryOp::Ge => (a >= b) as i32 as f64,
                    BinaryOp::Eq => (a == b) as i32 as f64,
                    BinaryOp::Ne => (a != b) as i32 as f64,
                    BinaryOp::And => (a != 0.0 && b != 0.0) as i32 as f64,
                    BinaryOp::Or => (a != 0.0 || b != 0.0) as i32 as f64,
                }
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                if self.value(cond) != 0.0 {
                    self.value(then_value)
                } else {
                    self.value(else_value)
                }
            }
            ExprKind::Cast { arg } => to_type(self.value(arg), e.ty),
            ExprKind::Call { func, args } => {
                let v: Vec<f64> = args.iter().map(|a| self.value(a)).collect();
                match func {
                    MathFn::Sqrt => v[0].sqrt(),
                    MathFn::Exp => v[0].exp(),
                    MathFn::Log => v[0].ln(),
                    MathFn::Abs => v[0].abs(),
                    MathFn::Tanh => v[0].tanh(),
                    MathFn::Round => v[0].round(),
                    MathFn::Floor => v[0].floor(),
                    MathFn::Ceil => v[0].ceil(),
                    MathFn::Sin => v[0].sin(),
                    MathFn::Cos => v[0].cos(),
                    MathFn::Cosh => v[0].cosh(),
                    MathFn::Sinh => v[0].sinh(),
                    MathFn::Pow => v[0].powf(v[1]),
                    MathFn::Max => v[0].max(v[1]),
                    MathFn::Min => v[0].min(v[1]),
                }
            }
        }
    }

    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::Loop(l) => {
                    let start = eval_affine(&l.start, &self.iters, self.sizes, &l.loc).unwrap();
                    let end = eval_affine(&l.end, &self.iters, self.sizes, &l.loc).unwrap();
                    for v in loop_values(l, start, end).unwrap() {
                        self.iters.insert(l.iter.clone(), v);
                        self.block(&l.body);
                    }
                    self.iters.remove(&l.iter);
                }
                Stmt::Assign { target, value, .. } => {
                    let v = self.value(value);
                    match target {
                        LValue::Scalar { name, .. } => {
                            self.scalars.insert(name.clone(), v);
                        }
                        LValue::Element { array, index, .. } => {
                            let o = self.offset(array, index);
                            if let Some((_, data)) = self.arrays.get_mut(array) {
                                data[o] = v;
                            }
                        }
                    }
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                } => {
                    if self.value(cond) != 0.0 {
                        self.block(then_body)
                    } else {
                        self.block(else_body)
                    }
                }
                Stmt::Return { value, .. } => self.returned = Some(self.value(value)),
            }
        }
    }
}

/// A deterministic pseudo-random input value suited to the element type.
fn input_value(seed: &mut u64, ty: ScalarType) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let r = (*seed >> 33) as f64 / (1u64 << 31) as f64;
    match ty {
        ScalarType::U8 => (r * 256.0).floor(),
        t if !t.is_float() => (r * 41.0).floor() - 20.0,
        _ => (r * 4.0 - 2.0) * 1.25,
    }
}

/// Runs the kernel concretely and through its spec on the same inputs.
fn check_kernel(kernel: &Kernel, fixed: &Sizes, seeds: u64) {
    let spec = spec_at_chosen_sizes(kernel, fixed).unwrap();
    let layout = check_sizes(kernel, &spec.sizes).unwrap();
    for seed0 in 0..seeds {
        let mut seed = seed0 * 7919 + 1;
        let mut inputs: HashMap<Symbol, f64> = HashMap::new();
        let mut interp = Interp {
            sizes: &spec.sizes,
            iters: HashMap::new(),
            scalars: HashMap::new(),
            arrays: HashMap::new(),
            returned: None,
        };
        for p in &kernel.params {
            match &p.kind {
                ParamKind::Scalar { ty, .. } => {
                    let v = match spec.sizes.get(&p.name) {
                        Some(n) => *n as f64,
                        None => input_value(&mut seed, *ty),
                    };
                    inputs.insert(Symbol::scalar(&p.name), v);
                    interp.scalars.insert(p.name.clone(), v);
                }
                ParamKind::Array(info) => {
                    let shape = layout.extents[&p.name].clone();
                    let n: usize = shape.iter().product();
                    let mut data = Vec::with_capacity(n);
                    for offset in 0..n {
                        let v = input_value(&mut seed, info.elem);
                        let mut idx = Vec::new();
                        let mut rest = offset;
                        for d in shape.iter().rev() {
                            idx.push((rest % d) as u32);
                            rest /= d;
                        }
                        idx.reverse();
                        inputs.insert(Symbol::element(&p.name, &idx), v);
                        data.push(v);
                    }
                    interp.arrays.insert(p.name.clone(), (shape, data));
                }
            }
        }
        for l in &kernel.locals {
            if let LocalKind::Array(_) = &l.kind {
                let shape = layout.extents[&l.name].clone();
                let n = shape.iter().product();
                interp
                    .arrays
                    .insert(l.name.clone(), (shape, vec![f64::NAN; n]));
            }
        }
        interp.block(&kernel.body);
        let env = |s: &Symbol| inputs.get(s).copied();
        for out in &spec.outputs {
            for (offset, e) in out.value.elems().iter().enumerate() {
                let expected = if out.name == "return" {
                    interp.returned.unwrap()
                } else {
                    interp.arrays[&out.name].1[offset]
                };
                let got = e.eval(&env).unwrap();
                assert!(
                    (got - expected).abs() <= 1e-9 * (1.0 + expected.abs()),
                    "{}: {}[{offset}] spec {got} vs interpreter {expected} for {e}",
                    kernel.name,
                    out.name
                );
            }
        }
    }
}

#[test]
fn specs_agree_with_a_concrete_interpreter_on_reference_kernels() {
    use super::examples::*;
    check_kernel(&gemm(), &Sizes::new(), 5);
    check_kernel(&covariance(), &Sizes::new(), 5);
    check_kernel(&three_mm(), &Sizes::new(), 3);
}

#[test]
fn specs_agree_with_a_concrete_interpreter_on_branchy_integer_kernels() {
    use super::build::*;
    use tenslift_frontend::ir::{IfKind, Role, ScalarType::*};
    let widen = |e| cast(I32, e);
    // Saturating u8 add with a data-dependent clamp, a running max, and a
    // histogram-like remainder.
    let k = KernelBuilder::new("u8mix")
        .size("n")
        .flat_array("a", U8, &["n"], &["1"], Role::Input)
        .flat_array("b", U8, &["n"], &["1"], Role::Input)
        .flat_array("out", U8, &["n"], &["1"], Role::Output)
        .local_scalar("best", I32)
        .local_scalar("t", I32)
        .returns(I32)
        .body(vec![
            assign(sc("best", I32), lit(0)),
            for_(
                "i",
                "0",
                "n",
                vec![
                    assign(
                        sc("t", I32),
                        add(widen(load("a", &["i"], U8)), widen(load("b", &["i"], U8))),
                    ),
                    if_(
                        IfKind::Data,
                        binary(BinaryOp::Gt, local("t", I32), lit(255)),
                        vec![assign(sc("t", I32), lit(255))],
                        vec![],
                    ),
                    assign(
                        el("out", &["i"], U8),
                        cast(
                            U8,
                            sub(
                                local("t", I32),
                                binary(BinaryOp::Rem, local("t", I32), lit(7)),
                            ),
                        ),
                    ),
                    if_(
                        IfKind::Data,
                        binary(BinaryOp::Gt, local("t", I32), local("best", I32)),
                        vec![assign(sc("best", I32), local("t", I32))],
                        vec![],
                    ),
                ],
            ),
            ret(div(local("best", I32), lit(3))),
        ])
        .build();
    check_kernel(&k, &Sizes::new(), 40);
}
