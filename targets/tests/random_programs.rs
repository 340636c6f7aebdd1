//! Differential testing on random programs built through the Rust API (the
//! way the synthesizer builds them): every program is emitted for all four
//! targets, run for real, and compared with the interpreter. The programs
//! are deterministic (fixed seeds) so a failure reproduces. Larger sweeps:
//! `TENSLIFT_RANDOM_PROGRAMS=<per element type>` and
//! `TENSLIFT_RANDOM_SEED=<name prefix>`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::{Fixture, Rng};
use tenslift_targets::interp::{self, Array, Outcome};
use tenslift_targets::runner::{python_interpreter, run_batch, Case};
use tenslift_targets::{
    parse_program, print_program, Access, BinaryOp as B, DType, Dim, EinsumSpec, Expr, Lit, Meta,
    Op, Param, ParamKind, Program, ReduceKind, SliceItem, Stmt, Target, Ty, UnaryOp as U,
};

const DEFAULT_PROGRAMS_PER_DTYPE: usize = 20;
const MAIN_DTYPES: [DType; 6] = [
    DType::F64,
    DType::F32,
    DType::I32,
    DType::I16,
    DType::U8,
    DType::I8,
];

struct Gen {
    rng: Rng,
    d: DType,
    n: Dim,
}

fn range(start: Dim, stop: Dim, step: i64) -> SliceItem {
    SliceItem::Range { start, stop, step }
}

impl Gen {
    fn mat_ty(&self, d: DType) -> Ty {
        Ty::tensor(d, vec![self.n.clone(), self.n.clone()])
    }

    fn pick(&mut self, k: usize) -> usize {
        self.rng.int(0, k as i64 - 1) as usize
    }

    fn lit(&mut self, d: DType) -> Expr {
        Expr::lit(match d {
            DType::Bool => Lit::Bool(self.pick(2) == 1),
            d if d.is_float() => Lit::float((self.rng.uniform(-2.0, 2.0) * 8.0).round() / 8.0, d),
            d => {
                let (lo, hi) = if d == DType::U8 {
                    (0, 255)
                } else {
                    (-100, 100)
                };
                Lit::int(self.rng.int(lo, hi), d)
            }
        })
    }

    fn one(&self) -> Expr {
        Expr::lit(if self.d.is_float() {
            Lit::float(1.0, self.d)
        } else {
            Lit::int(1, self.d)
        })
    }

    fn leaf(&mut self) -> Expr {
        match self.pick(5) {
            0 | 1 => Expr::var(["a", "b"][self.pick(2)], self.mat_ty(self.d)),
            2 => Expr::var("v", Ty::tensor(self.d, vec![self.n.clone()])),
            3 => Expr::var("s", Ty::scalar(self.d)),
            _ => self.lit(self.d),
        }
    }

    /// A matrix-shaped expression (broadcast if needed).
    fn matrix(&mut self, depth: u32) -> Expr {
        let e = self.expr(depth);
        let shape = vec![self.n.clone(), self.n.clone()];
        if e.shape() == shape.as_slice() {
            e
        } else {
            Expr::new(Op::Broadcast(shape), vec![e]).unwrap()
        }
    }

    fn cond(&mut self, depth: u32) -> Expr {
        let cmp = [B::Lt, B::Le, B::Gt, B::Ge, B::Eq, B::Ne][self.pick(6)];
        let c = Expr::binary(cmp, self.expr(depth), self.expr(depth)).unwrap();
        match self.pick(3) {
            0 => Expr::unary(U::Not, c).unwrap(),
            1 => {
                let other = Expr::binary(B::Gt, self.expr(depth), self.leaf()).unwrap();
                Expr::binary([B::And, B::Or][self.pick(2)], c, other).unwrap()
            }
            _ => c,
        }
    }

    fn expr(&mut self, depth: u32) -> Expr {
        if depth == 0 {
            return self.leaf();
        }
        let d = self.d;
        let sub = depth - 1;
        match self.pick(13) {
            0 | 1 => {
                let op = [B::Add, B::Sub, B::Mul, B::Maximum, B::Minimum][self.pick(5)];
                Expr::binary(op, self.expr(sub), self.expr(sub)).unwrap()
            }
            2 if d.is_float() => {
                let den = Expr::binary(
                    B::Add,
                    Expr::unary(U::Abs, self.expr(sub)).unwrap(),
                    self.one(),
                )
                .unwrap();
                Expr::binary(B::Div, self.expr(sub), den).unwrap()
            }
            2 => {
                let y = self.expr(sub);
                let zero = Expr::lit(Lit::int(0, d));
                let is_zero = Expr::binary(B::Eq, y.clone(), zero).unwrap();
                let safe = Expr::new(Op::Where, vec![is_zero, self.one(), y]).unwrap();
                let op = [B::TruncDiv, B::Rem][self.pick(2)];
                Expr::binary(op, self.expr(sub), safe).unwrap()
            }
            3 => {
                let x = self.expr(sub);
                let u = if d.is_float() {
                    [U::Neg, U::Abs, U::Tanh][self.pick(3)]
                } else {
                    [U::Neg, U::Abs][self.pick(2)]
                };
                let e = Expr::unary(u, x).unwrap();
                if d.is_float() && self.pick(2) == 0 {
                    // sqrt and log on positive arguments, exp on bounded ones.
                    let pos =
                        Expr::binary(B::Add, Expr::unary(U::Abs, e).unwrap(), self.one()).unwrap();
                    let f = [U::Sqrt, U::Log][self.pick(2)];
                    let g = Expr::unary(f, pos).unwrap();
                    Expr::unary(U::Exp, Expr::unary(U::Tanh, g).unwrap()).unwrap()
                } else {
                    e
                }
            }
            4 => {
                let c = self.cond(sub);
                Expr::new(Op::Where, vec![c, self.expr(sub), self.expr(sub)]).unwrap()
            }
            5 => {
                let kinds = [
                    ReduceKind::Sum,
                    ReduceKind::Max,
                    ReduceKind::Min,
                    ReduceKind::Prod,
                ];
                let kind = kinds[self.pick(if d.is_float() { 3 } else { 4 })];
                let m = self.matrix(sub);
                Expr::reduce(kind, m, vec![self.pick(2)]).unwrap()
            }
            6 => {
                let (x, y) = (self.matrix(sub), self.matrix(sub));
                match self.pick(3) {
                    0 => Expr::new(Op::Matmul, vec![x, y]).unwrap(),
                    1 => {
                        let spec =
                            EinsumSpec::parse(["ij,kj->ik", "ij,ij->i", "ij->j"][self.pick(3)])
                                .unwrap();
                        let args = if spec.inputs.len() == 1 {
                            vec![x]
                        } else {
                            vec![x, y]
                        };
                        Expr::new(Op::Einsum(spec), args).unwrap()
                    }
                    _ => Expr::new(
                        Op::Tensordot {
                            lhs_axes: vec![0],
                            rhs_axes: vec![1],
                        },
                        vec![x, y],
                    )
                    .unwrap(),
                }
            }
            7 => Expr::new(Op::Transpose(vec![1, 0]), vec![self.matrix(sub)]).unwrap(),
            8 => {
                let k = self.rng.int(-1, 1);
                let op = if self.pick(2) == 0 {
                    Op::Triu(k)
                } else {
                    Op::Tril(k)
                };
                Expr::new(op, vec![self.matrix(sub)]).unwrap()
            }
            9 => {
                // Rotate rows: slicing and concatenation.
                let m = self.matrix(sub);
                let one = Dim::constant(1);
                let tail = Expr::new(
                    Op::Slice(vec![range(one.clone(), self.n.clone(), 1)]),
                    vec![m.clone()],
                )
                .unwrap();
                let head =
                    Expr::new(Op::Slice(vec![range(Dim::constant(0), one, 1)]), vec![m]).unwrap();
                Expr::new(Op::Concat { axis: 0 }, vec![tail, head]).unwrap()
            }
            10 => {
                let x = self.expr(sub);
                let via = if d.is_float() {
                    // Bounded before converting to an integer (C leaves
                    // out-of-range conversions undefined).
                    let t = Expr::unary(U::Tanh, x).unwrap();
                    let scaled = Expr::binary(B::Mul, t, Expr::lit(Lit::float(100.0, d))).unwrap();
                    let i = Expr::new(Op::Cast(DType::I32), vec![scaled]).unwrap();
                    return Expr::new(Op::Cast(d), vec![i]).unwrap();
                } else {
                    [DType::U8, DType::I8, DType::I16, DType::F64, DType::I64][self.pick(5)]
                };
                let narrowed = Expr::new(Op::Cast(via), vec![x]).unwrap();
                Expr::new(Op::Cast(d), vec![narrowed]).unwrap()
            }
            11 => Expr::new(Op::Diag, vec![self.matrix(sub)]).unwrap(),
            _ => self.leaf(),
        }
    }
}

fn random_program(name: &str, d: DType) -> Program {
    let n = Dim::sym("n");
    let mut g = Gen {
        rng: Rng::new(name),
        d,
        n: n.clone(),
    };
    let mat = |access| ParamKind::Array {
        dtype: d,
        shape: vec![n.clone(), n.clone()],
        access,
    };
    let params = vec![
        Param {
            name: Arc::from("n"),
            kind: ParamKind::Size,
        },
        Param {
            name: Arc::from("a"),
            kind: mat(Access::In),
        },
        Param {
            name: Arc::from("b"),
            kind: mat(Access::In),
        },
        Param {
            name: Arc::from("v"),
            kind: ParamKind::Array {
                dtype: d,
                shape: vec![n.clone()],
                access: Access::In,
            },
        },
        Param {
            name: Arc::from("s"),
            kind: ParamKind::Scalar(d),
        },
        Param {
            name: Arc::from("c"),
            kind: mat(Access::InOut),
        },
    ];
    let t = g.matrix(3);
    let mut body = vec![Stmt::Let {
        name: Arc::from("t"),
        value: t.clone(),
    }];
    let t_var = Expr::var("t", t.ty().clone());
    let value = g.matrix(2);
    let combined = Expr::binary(B::Add, t_var.clone(), value).unwrap();
    match g.pick(3) {
        0 => body.push(Stmt::Store {
            target: Arc::from("c"),
            region: None,
            value: combined,
        }),
        _ => {
            // A strided partial write-back of rows 0, 2, 4, ...
            let rows = vec![range(Dim::constant(0), n.clone(), 2), SliceItem::Full];
            let part = Expr::new(Op::Slice(rows.clone()), vec![combined]).unwrap();
            body.push(Stmt::Store {
                target: Arc::from("c"),
                region: Some(rows),
                value: part,
            });
        }
    }
    let ret = g.pick(2) == 0;
    if ret {
        let c = Expr::var("c", g.mat_ty(d));
        let r = Expr::reduce(
            ReduceKind::Sum,
            Expr::binary(B::Mul, c, t_var).unwrap(),
            vec![0, 1],
        )
        .unwrap();
        body.push(Stmt::Return(r));
    }
    Program {
        meta: Meta::default(),
        name: Arc::from(name),
        params,
        ret: ret.then_some(d),
        body,
    }
}

/// Arrays equal up to a tolerance relative to the array's magnitude (deep
/// random float expressions cancel, so element-relative error is too strict).
fn agree(want: &Array, got: &Array) -> Result<(), String> {
    if want.dtype != got.dtype || want.shape != got.shape {
        return Err(format!(
            "type {}{:?} vs {}{:?}",
            want.dtype, want.shape, got.dtype, got.shape
        ));
    }
    let scale = (0..want.len())
        .map(|i| want.get_f64(i).abs())
        .fold(1.0, f64::max);
    let tol = match want.dtype {
        DType::F32 => 1e-4 * scale,
        DType::F64 => 1e-9 * scale,
        _ => 0.0,
    };
    for i in 0..want.len() {
        let (a, b) = (want.get_f64(i), got.get_f64(i));
        let same = if want.dtype.is_float() {
            (a - b).abs() <= tol || (a.is_nan() && b.is_nan())
        } else {
            want.get_i64(i) == got.get_i64(i)
        };
        if !same {
            return Err(format!("[{i}] expected {a}, got {b}"));
        }
    }
    Ok(())
}

fn outcomes_agree(want: &Outcome, got: &Outcome) -> Result<(), String> {
    for (name, w) in &want.arrays {
        let g = got.arrays.get(name).ok_or(format!("{name} missing"))?;
        agree(w, g).map_err(|e| format!("{name}{e}"))?;
    }
    if let (Some(w), Some(g)) = (&want.returned, &got.returned) {
        agree(w, g).map_err(|e| format!("return{e}"))?;
    }
    Ok(())
}

#[test]
fn random_programs_agree_on_every_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = python_interpreter(&root);
    assert!(
        python.exists(),
        "set TENSLIFT_PYTHON: {} not found",
        python.display()
    );
    let per_dtype = std::env::var("TENSLIFT_RANDOM_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PROGRAMS_PER_DTYPE);
    let seed = std::env::var("TENSLIFT_RANDOM_SEED").unwrap_or_else(|_| "rand".to_string());
    assert!(
        tenslift_targets::program::is_identifier(&seed),
        "seed must be an identifier"
    );
    let mut programs = Vec::new();
    for d in MAIN_DTYPES {
        for k in 0..per_dtype {
            let p = random_program(&format!("{seed}_{d}_{k}"), d);
            p.validate()
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", p.name, print_program(&p)));
            // The text syntax round-trips generated programs too.
            let again = parse_program("random.tensir", &print_program(&p))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(again, p);
            programs.push(p);
        }
    }
    let sizes: BTreeMap<String, i64> = [("n".to_string(), 5)].into_iter().collect();
    let mut cases = Vec::new();
    let mut expected = Vec::new();
    for p in &programs {
        let fixture = Fixture {
            name: p.name.to_string(),
            text: String::new(),
            program: p.clone(),
            sizes: sizes.clone(),
            positive: false,
            nonzero: false,
        };
        let args = common::random_args(&fixture);
        let interp_sizes = sizes.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let want =
            interp::run(p, &interp_sizes, &args).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        expected.push(want);
        cases.push(Case {
            id: p.name.to_string(),
            program: p,
            sizes: sizes.clone(),
            args,
        });
    }
    let mut failures = Vec::new();
    for target in Target::ALL {
        let dir = tempfile::tempdir().unwrap();
        let results = run_batch(&python, target, &cases, dir.path())
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        for ((p, want), got) in programs.iter().zip(&expected).zip(results) {
            let verdict = got.and_then(|g| outcomes_agree(want, &g));
            if let Err(e) = verdict {
                failures.push(format!("{target} {}: {e}\n{}", p.name, print_program(p)));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
