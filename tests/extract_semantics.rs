//! The extracted IR means what the C means: for every positive fixture
//! kernel without transcendental math, a small interpreter of the loop IR
//! (written here, independent of any later stage) and the same C compiled
//! by gcc run on identical inputs, and every output bit must agree.
//!
//! The harness `#include`s the fixture (so statics and globals are
//! reachable), fills each array with a deterministic pattern converted to
//! its element type, calls the kernel, and prints every element's bits.
//! A second test runs the interpreter twice with different initial
//! contents for every `output` parameter: nothing else may change, which
//! checks the role analysis.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use tenslift_frontend::ir::*;
use tenslift_frontend::{extract, Options};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Elements per array buffer (every fixture's accesses fit).
const BUFFER: usize = 8192;
/// Integer scalar parameters take 5, 6, 7, 5, ... by position, so a
/// layout that confuses two size parameters (`head` and `head_size`,
/// `lda` and `n`) changes the result instead of coinciding.
fn int_param(position: usize) -> i64 {
    5 + (position % 3) as i64
}
const FLOAT_PARAM: f64 = 1.25;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Int(i128),
    Float(f64),
}

fn wrap(ty: ScalarType, v: i128) -> i128 {
    match ty {
        ScalarType::Bool => i128::from(v != 0),
        ScalarType::I8 => v as i8 as i128,
        ScalarType::U8 => v as u8 as i128,
        ScalarType::I16 => v as i16 as i128,
        ScalarType::U16 => v as u16 as i128,
        ScalarType::I32 => v as i32 as i128,
        ScalarType::U32 => v as u32 as i128,
        ScalarType::I64 => v as i64 as i128,
        ScalarType::U64 => v as u64 as i128,
        ScalarType::F32 | ScalarType::F64 => v,
    }
}

/// C's conversion of `v` to `ty`.
fn convert(ty: ScalarType, v: Value) -> Value {
    match (ty, v) {
        (ScalarType::F32, Value::Float(f)) => Value::Float(f as f32 as f64),
        (ScalarType::F32, Value::Int(i)) => Value::Float(i as f32 as f64),
        (ScalarType::F64, Value::Float(f)) => Value::Float(f),
        (ScalarType::F64, Value::Int(i)) => Value::Float(i as f64),
        (ScalarType::Bool, Value::Float(f)) => Value::Int(i128::from(f != 0.0)),
        (t, Value::Float(f)) => Value::Int(wrap(t, f.trunc() as i128)),
        (t, Value::Int(i)) => Value::Int(wrap(t, i)),
    }
}

fn truthy(v: Value) -> bool {
    match v {
        Value::Int(i) => i != 0,
        Value::Float(f) => f != 0.0,
    }
}

/// Initial contents: the same formula the C harness uses.
fn initial(ty: ScalarType, array: usize, k: usize) -> Value {
    let v = ((k * 37 + array * 11) % 23) as i64 - 11;
    if ty.is_float() {
        convert(ty, Value::Float(v as f64 * 0.25))
    } else {
        convert(ty, Value::Int(v as i128))
    }
}

struct Machine<'k> {
    kernel: &'k Kernel,
    scalars: HashMap<String, Value>,
    arrays: HashMap<String, (ScalarType, Vec<Value>, Vec<i64>)>,
    /// Offsets each array had written.
    written: HashMap<String, std::collections::HashSet<usize>>,
}

impl Machine<'_> {
    fn env(&self) -> impl Fn(&str) -> Option<i64> + '_ {
        |name| match self.scalars.get(name) {
            Some(Value::Int(i)) => i64::try_from(*i).ok(),
            _ => None,
        }
    }

    fn affine(&self, a: &Affine) -> i64 {
        a.eval(&self.env())
            .expect("affine expression with bound variables")
    }

    fn offset(&self, array: &str, index: &[Affine]) -> usize {
        let (_, _, strides) = &self.arrays[array];
        let off: i64 = index
            .iter()
            .zip(strides)
            .map(|(ix, s)| self.affine(ix) * s)
            .sum();
        usize::try_from(off)
            .ok()
            .filter(|&o| o < BUFFER)
            .unwrap_or_else(|| {
                panic!(
                    "{}: {array} offset {off} out of the buffer",
                    self.kernel.name
                )
            })
    }

    fn eval(&self, e: &Expr) -> Value {
        let v = match &e.kind {
            ExprKind::IntLit { value } => Value::Int(i128::from(*value)),
            ExprKind::FloatLit { value, .. } => Value::Float(*value),
            ExprKind::Var { name, .. } => self.scalars[name],
            ExprKind::Load { array, index } => self.arrays[array].1[self.offset(array, index)],
            ExprKind::Unary { op, arg } => match (op, self.eval(arg)) {
                (UnaryOp::Neg, Value::Int(i)) => Value::Int(-i),
                (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
                (UnaryOp::Not, v) => Value::Int(i128::from(!truthy(v))),
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.eval(lhs), self.eval(rhs));
                match op {
                    BinaryOp::And => Value::Int(i128::from(truthy(a) && truthy(b))),
                    BinaryOp::Or => Value::Int(i128::from(truthy(a) || truthy(b))),
                    op if op.is_comparison() => {
                        let ord = match (a, b) {
                            (Value::Int(x), Value::Int(y)) => x.partial_cmp(&y),
                            (Value::Float(x), Value::Float(y)) => x.partial_cmp(&y),
                            other => panic!("mixed comparison {other:?}"),
                        };
                        use std::cmp::Ordering::*;
                        let r = match (op, ord) {
                            (_, None) => *op == BinaryOp::Ne,
                            (BinaryOp::Lt, Some(o)) => o == Less,
                            (BinaryOp::Le, Some(o)) => o != Greater,
                            (BinaryOp::Gt, Some(o)) => o == Greater,
                            (BinaryOp::Ge, Some(o)) => o != Less,
                            (BinaryOp::Eq, Some(o)) => o == Equal,
                            (_, Some(o)) => o != Equal,
                        };
                        Value::Int(i128::from(r))
                    }
                    _ => match (a, b) {
                        (Value::Int(x), Value::Int(y)) => Value::Int(match op {
                            BinaryOp::Add => x + y,
                            BinaryOp::Sub => x - y,
                            BinaryOp::Mul => x * y,
                            BinaryOp::Div => x / y,
                            _ => x % y,
                        }),
                        (Value::Float(x), Value::Float(y)) => Value::Float(match op {
                            BinaryOp::Add => x + y,
                            BinaryOp::Sub => x - y,
                            BinaryOp::Mul => x * y,
                            BinaryOp::Div => x / y,
                            _ => panic!("float %"),
                        }),
                        other => panic!("mixed arithmetic {other:?} in {}", self.kernel.name),
                    },
                }
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                if truthy(self.eval(cond)) {
                    self.eval(then_value)
                } else {
                    self.eval(else_value)
                }
            }
            ExprKind::Cast { arg } => self.eval(arg),
            ExprKind::Call { func, args } => {
                let vals: Vec<Value> = args.iter().map(|a| self.eval(a)).collect();
                match (func, vals.as_slice()) {
                    (MathFn::Sqrt, [Value::Float(x)]) => Value::Float(x.sqrt()),
                    (MathFn::Abs, [Value::Float(x)]) => Value::Float(x.abs()),
                    (MathFn::Abs, [Value::Int(x)]) => Value::Int(x.abs()),
                    (MathFn::Max, [Value::Float(x), Value::Float(y)]) => Value::Float(x.max(*y)),
                    (MathFn::Min, [Value::Float(x), Value::Float(y)]) => Value::Float(x.min(*y)),
                    other => panic!("uninterpreted call {other:?}"),
                }
            }
        };
        // Every node's value has the node's type (casts convert here).
        convert(e.ty, v)
    }

    fn run(&mut self, body: &[Stmt]) -> Option<Value> {
        for s in body {
            match s {
                Stmt::Assign { target, value, .. } => {
                    let v = self.eval(value);
                    match target {
                        LValue::Scalar { name, ty } => {
                            self.scalars.insert(name.clone(), convert(*ty, v));
                        }
                        LValue::Element { array, index, ty } => {
                            let off = self.offset(array, index);
                            self.arrays.get_mut(array).expect("array").1[off] = convert(*ty, v);
                            self.written.entry(array.clone()).or_default().insert(off);
                        }
                    }
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                } => {
                    let branch = if truthy(self.eval(cond)) {
                        then_body
                    } else {
                        else_body
                    };
                    if let Some(r) = self.run(branch) {
                        return Some(r);
                    }
                }
                Stmt::Loop(l) => {
                    let (start, end) = (self.affine(&l.start), self.affine(&l.end));
                    let mut i = start;
                    while (l.step > 0 && i < end) || (l.step < 0 && i > end) {
                        self.scalars
                            .insert(l.iter.clone(), Value::Int(i128::from(i)));
                        if let Some(r) = self.run(&l.body) {
                            return Some(r);
                        }
                        i += l.step;
                    }
                }
                Stmt::Return { value, .. } => return Some(self.eval(value)),
            }
        }
        None
    }
}

/// Row-major strides of a declared array.
fn declared_strides(m: &Machine<'_>, info: &ArrayInfo) -> Vec<i64> {
    let mut out = vec![1i64; info.dims.len()];
    for d in (0..info.dims.len().saturating_sub(1)).rev() {
        let extent = info.dims[d + 1]
            .as_ref()
            .map(|e| m.affine(e))
            .expect("inner extent of a declared array");
        out[d] = out[d + 1] * extent;
    }
    out
}

fn c_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "_Bool",
        ScalarType::I8 => "signed char",
        ScalarType::U8 => "unsigned char",
        ScalarType::I16 => "short",
        ScalarType::U16 => "unsigned short",
        ScalarType::I32 => "int",
        ScalarType::U32 => "unsigned",
        ScalarType::I64 => "long long",
        ScalarType::U64 => "unsigned long long",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// Text of a value the way the C harness prints it.
fn show(ty: ScalarType, v: Value) -> String {
    match (ty, v) {
        (ScalarType::F32, Value::Float(f)) => format!("{}", (f as f32).to_bits()),
        (ScalarType::F64, Value::Float(f)) => format!("{}", f.to_bits()),
        (_, Value::Int(i)) => format!("{i}"),
        other => panic!("bad value {other:?}"),
    }
}

fn printf_of(ty: ScalarType, expr: &str) -> String {
    match ty {
        ScalarType::F32 => format!(
            "{{ float v_ = {expr}; unsigned b_; memcpy(&b_, &v_, 4); printf(\"%u\\n\", b_); }}"
        ),
        ScalarType::F64 => format!(
            "{{ double v_ = {expr}; unsigned long long b_; memcpy(&b_, &v_, 8); printf(\"%llu\\n\", b_); }}"
        ),
        ScalarType::U64 => format!("printf(\"%llu\\n\", (unsigned long long)({expr}));"),
        _ => format!("printf(\"%lld\\n\", (long long)({expr}));"),
    }
}

/// Elements of a global array (its declared size).
/// A global's element count: its extents at the machine's sizes (a
/// literal extent the kernel walks is an extent size, `ext_256`, bound to
/// its declared value).
fn global_len(info: &ArrayInfo, m: &Machine) -> usize {
    info.dims
        .iter()
        .map(|d| d.as_ref().map_or(0, |a| m.affine(a)).max(0) as usize)
        .product()
}

fn uses_transcendental(body: &[Stmt]) -> bool {
    fn in_expr(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { func, args } => {
                matches!(func, MathFn::Exp | MathFn::Log | MathFn::Tanh | MathFn::Pow)
                    || args.iter().any(in_expr)
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => in_expr(arg),
            ExprKind::Binary { lhs, rhs, .. } => in_expr(lhs) || in_expr(rhs),
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => in_expr(cond) || in_expr(then_value) || in_expr(else_value),
            _ => false,
        }
    }
    body.iter().any(|s| match s {
        Stmt::Assign { value, .. } | Stmt::Return { value, .. } => in_expr(value),
        Stmt::If {
            cond,
            then_body,
            else_body,
            ..
        } => in_expr(cond) || uses_transcendental(then_body) || uses_transcendental(else_body),
        Stmt::Loop(l) => uses_transcendental(&l.body),
    })
}

fn fixture_flags(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("// tenslift-args:"))
        .map(|rest| rest.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn options_of(flags: &[String]) -> Options {
    let mut o = Options::default();
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        if f == "-I" {
            o.include_dirs.extend(it.next().map(PathBuf::from));
        } else if let Some(d) = f.strip_prefix("-D") {
            o.defines.push(d.to_string());
        }
    }
    o
}

/// Runs one kernel both ways; returns (interpreter lines, C lines).
fn both_ways(
    fixture: &Path,
    flags: &[String],
    kernel: &Kernel,
    dir: &Path,
) -> (Vec<String>, Vec<String>) {
    let mut m = Machine {
        kernel,
        scalars: HashMap::new(),
        arrays: HashMap::new(),
        written: HashMap::new(),
    };
    let mut harness = String::from("#include <stdio.h>\n#include <string.h>\n");
    // Macro sizes are compiled in, with the value the interpreter uses.
    for (position, p) in kernel.params.iter().enumerate() {
        if matches!(p.origin, Origin::Macro { .. }) {
            let value = int_param(position);
            let _ = writeln!(harness, "#undef {0}\n#define {0} {value}", p.name);
        }
    }
    let _ = writeln!(harness, "#include \"{}\"", fixture.display());
    let _ = writeln!(harness, "int main(void) {{");
    let mut call_args = Vec::new();
    let mut printed: Vec<(String, ScalarType, usize)> = Vec::new();
    // Scalars first: array strides may need their values.
    for (position, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Scalar { ty, .. } = &p.kind {
            let v = if ty.is_float() {
                convert(*ty, Value::Float(FLOAT_PARAM))
            } else if let Origin::Extent { value } = p.origin {
                // The C's arrays have the declared extent.
                convert(*ty, Value::Int(i128::from(value)))
            } else {
                convert(*ty, Value::Int(i128::from(int_param(position))))
            };
            m.scalars.insert(p.name.clone(), v);
        }
    }
    for (a, p) in kernel.params.iter().enumerate() {
        match &p.kind {
            ParamKind::Scalar { ty, .. } => {
                let literal = if ty.is_float() {
                    format!("({}){FLOAT_PARAM:?}", c_type(*ty))
                } else {
                    format!("({}){}", c_type(*ty), int_param(a))
                };
                match p.origin {
                    Origin::Argument => call_args.push(literal),
                    Origin::Pointee => {
                        let _ = writeln!(harness, "  static {} ref{a};", c_type(*ty));
                        let _ = writeln!(harness, "  ref{a} = {literal};");
                        call_args.push(format!("&ref{a}"));
                    }
                    Origin::Macro { .. } | Origin::Extent { .. } | Origin::Field(_) => {}
                    Origin::Global => {
                        let _ = writeln!(harness, "  {} = {literal};", p.name);
                        if p.role != Role::Input {
                            printed.push((p.name.clone(), *ty, 0));
                        }
                    }
                }
            }
            ParamKind::Array(info) => {
                let strides: Vec<i64> = match &info.storage {
                    Storage::Flat { strides } => strides.iter().map(|s| m.affine(s)).collect(),
                    Storage::Declared | Storage::RowPointers => declared_strides(&m, info),
                };
                let len = match p.origin {
                    Origin::Argument
                    | Origin::Pointee
                    | Origin::Macro { .. }
                    | Origin::Extent { .. }
                    | Origin::Field(_) => BUFFER,
                    Origin::Global => global_len(info, &m),
                };
                let values: Vec<Value> = (0..BUFFER).map(|k| initial(info.elem, a, k)).collect();
                m.arrays
                    .insert(p.name.clone(), (info.elem, values, strides));
                let ct = c_type(info.elem);
                let fill = if info.elem.is_float() {
                    format!("({ct})((double)((k * 37 + {a} * 11) % 23 - 11) * 0.25)")
                } else {
                    format!("({ct})((k * 37 + {a} * 11) % 23 - 11)")
                };
                match p.origin {
                    Origin::Argument
                    | Origin::Pointee
                    | Origin::Macro { .. }
                    | Origin::Extent { .. }
                    | Origin::Field(_) => {
                        let _ = writeln!(harness, "  static {ct} buf{a}[{BUFFER}];");
                        let _ = writeln!(
                            harness,
                            "  for (long k = 0; k < {BUFFER}; k++) buf{a}[k] = {fill};"
                        );
                        call_args.push(format!("(void *)buf{a}"));
                        printed.push((format!("buf{a}"), info.elem, BUFFER));
                    }
                    Origin::Global => {
                        let _ = writeln!(
                            harness,
                            "  for (long k = 0; k < {len}; k++) (({ct} *){})[k] = {fill};",
                            p.name
                        );
                        printed.push((format!("(({ct} *){})", p.name), info.elem, len));
                    }
                }
            }
        }
    }
    for l in &kernel.locals {
        if let LocalKind::Array(info) = &l.kind {
            let strides = declared_strides(&m, info);
            let zero = convert(info.elem, Value::Int(0));
            m.arrays
                .insert(l.name.clone(), (info.elem, vec![zero; BUFFER], strides));
        }
    }
    let call = format!("{}({})", kernel.name, call_args.join(", "));
    match kernel.returns {
        Some(ty) => {
            let _ = writeln!(harness, "  {}", printf_of(ty, &call));
        }
        None => {
            let _ = writeln!(harness, "  {call};");
        }
    }
    for (name, ty, len) in &printed {
        if *len == 0 {
            let _ = writeln!(harness, "  {}", printf_of(*ty, name));
        } else {
            let _ = writeln!(
                harness,
                "  for (long k = 0; k < {len}; k++) {}",
                printf_of(*ty, &format!("{name}[k]"))
            );
        }
    }
    let _ = writeln!(harness, "  return 0;\n}}");

    // The interpreter.
    let mut lines = Vec::new();
    let returned = m.run(&kernel.body);
    if let (Some(ty), Some(v)) = (kernel.returns, returned) {
        lines.push(show(ty, v));
    }
    for p in &kernel.params {
        match (&p.kind, p.origin.clone()) {
            (ParamKind::Scalar { ty, .. }, Origin::Global) if p.role != Role::Input => {
                lines.push(show(*ty, m.scalars[&p.name]));
            }
            (ParamKind::Array(info), origin) => {
                let len = if origin == Origin::Global {
                    global_len(info, &m)
                } else {
                    BUFFER
                };
                let (ty, values, _) = &m.arrays[&p.name];
                lines.extend(values[..len].iter().map(|v| show(*ty, *v)));
            }
            _ => {}
        }
    }

    // gcc.
    let source = dir.join(format!("{}_harness.c", kernel.name));
    let binary = dir.join(format!("{}_harness", kernel.name));
    std::fs::write(&source, harness).expect("write harness");
    let status = Command::new("gcc")
        .current_dir(ROOT)
        .args(["-std=gnu11", "-O0", "-fno-builtin"])
        .args(flags)
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .arg("-lm")
        .output()
        .expect("run gcc");
    assert!(
        status.status.success(),
        "gcc failed for {}:\n{}",
        kernel.name,
        String::from_utf8_lossy(&status.stderr)
    );
    let run = Command::new(&binary).output().expect("run harness");
    assert!(run.status.success(), "harness for {} failed", kernel.name);
    let c_lines = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    (lines, c_lines)
}

#[test]
fn interpreted_ir_matches_gcc_bit_for_bit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let positive = Path::new(ROOT).join("tests/fixtures/extract/positive");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&positive)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let mut checked = 0;
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        if source.contains("main(") {
            continue; // the harness brings its own main
        }
        let flags = fixture_flags(&path);
        let rel = path
            .strip_prefix(ROOT)
            .unwrap_or(&path)
            .display()
            .to_string();
        let tu = extract(&rel, &options_of(&flags)).expect("positive fixture extracts");
        for kernel in &tu.kernels {
            if uses_transcendental(&kernel.body) {
                continue; // libm's last bit is not ours to model
            }
            // This harness passes flat buffers; row pointers and struct
            // fields are driven by `tenslift verify` (tests/structs.rs).
            let flat_only = kernel.params.iter().all(|p| {
                !matches!(p.origin, Origin::Field(_))
                    && !matches!(&p.kind, ParamKind::Array(info) if info.storage == Storage::RowPointers)
            });
            if !flat_only {
                continue;
            }
            let (ours, theirs) = both_ways(&path, &flags, kernel, dir.path());
            assert_eq!(
                ours.len(),
                theirs.len(),
                "{rel}:{}: output length",
                kernel.name
            );
            if let Some(k) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
                panic!(
                    "{rel}:{}: line {k} differs: IR gives {}, gcc gives {}",
                    kernel.name, ours[k], theirs[k]
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 35, "only {checked} kernels compared");
}

/// An interpreter run where the arrays and global scalars with role
/// `output` start from a pattern shifted by `salt`.
fn interpret(kernel: &Kernel, salt: usize) -> Machine<'_> {
    let mut m = Machine {
        kernel,
        scalars: HashMap::new(),
        arrays: HashMap::new(),
        written: HashMap::new(),
    };
    for (position, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Scalar { ty, .. } = &p.kind {
            let base = if ty.is_float() {
                Value::Float(FLOAT_PARAM)
            } else {
                Value::Int(i128::from(int_param(position)))
            };
            let v = match (p.role, base) {
                (Role::Output, Value::Float(f)) => Value::Float(f + salt as f64),
                (Role::Output, Value::Int(i)) => Value::Int(i + salt as i128),
                (_, v) => v,
            };
            m.scalars.insert(p.name.clone(), convert(*ty, v));
        }
    }
    for (a, p) in kernel.params.iter().enumerate() {
        if let ParamKind::Array(info) = &p.kind {
            let strides: Vec<i64> = match &info.storage {
                Storage::Flat { strides } => strides.iter().map(|s| m.affine(s)).collect(),
                Storage::Declared | Storage::RowPointers => declared_strides(&m, info),
            };
            let shift = if p.role == Role::Output { salt } else { 0 };
            let values = (0..BUFFER)
                .map(|k| initial(info.elem, a + shift, k))
                .collect();
            m.arrays
                .insert(p.name.clone(), (info.elem, values, strides));
        }
    }
    for l in &kernel.locals {
        if let LocalKind::Array(info) = &l.kind {
            let strides = declared_strides(&m, info);
            let zero = convert(info.elem, Value::Int(0));
            m.arrays
                .insert(l.name.clone(), (info.elem, vec![zero; BUFFER], strides));
        }
    }
    m
}

#[test]
fn output_parameters_never_observe_their_initial_contents() {
    let positive = Path::new(ROOT).join("tests/fixtures/extract/positive");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&positive)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let mut outputs_checked = 0;
    for path in files {
        let flags = fixture_flags(&path);
        let rel = path
            .strip_prefix(ROOT)
            .unwrap_or(&path)
            .display()
            .to_string();
        let tu = extract(&rel, &options_of(&flags)).expect("positive fixture extracts");
        for kernel in &tu.kernels {
            if uses_transcendental(&kernel.body) {
                continue;
            }
            let mut first = interpret(kernel, 0);
            let mut second = interpret(kernel, 5);
            let (r1, r2) = (first.run(&kernel.body), second.run(&kernel.body));
            assert_eq!(
                r1, r2,
                "{rel}:{}: return value depends on outputs",
                kernel.name
            );
            for p in &kernel.params {
                match &p.kind {
                    ParamKind::Array(_) => {
                        let (a, b) = (&first.arrays[&p.name].1, &second.arrays[&p.name].1);
                        if p.role == Role::Output {
                            outputs_checked += 1;
                            let written = first.written.get(&p.name).cloned().unwrap_or_default();
                            for &k in &written {
                                assert_eq!(
                                    a[k], b[k],
                                    "{rel}:{}: output `{}`[{k}] depends on its initial contents",
                                    kernel.name, p.name
                                );
                            }
                        } else {
                            assert!(
                                a == b,
                                "{rel}:{}: `{}` depends on an output's initial contents",
                                kernel.name,
                                p.name
                            );
                        }
                    }
                    ParamKind::Scalar { .. } if p.origin == Origin::Global => {
                        assert_eq!(
                            first.scalars[&p.name], second.scalars[&p.name],
                            "{rel}:{}: `{}`",
                            kernel.name, p.name
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        outputs_checked >= 30,
        "only {outputs_checked} output arrays checked"
    );
}
