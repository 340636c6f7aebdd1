//! A C driver generated from a kernel's loop-IR signature, for any C file
//! (not only the manifest's): random inputs as `.npy`, a `main` that reads
//! them, calls the function, and writes every output back as `.npy`,
//! compiled with `gcc -O2`.
//!
//! Memory extents come from the matched interface (the program's shapes at
//! the run's sizes), so the C sees exactly the memory the program does.
//! Inputs are uniform in [-1, 1] (floats), [-8, 8] (signed), [0, 15]
//! (unsigned); arrays and scalars the kernel divides by or passes to
//! `sqrt`/`log`/`pow` get positive values ([0.5, 2], [1, 8]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use tenslift_frontend::ir::{
    self as loop_ir, BinaryOp, Expr, ExprKind, Kernel, MathFn, Origin, Passing, Stmt, Storage,
};
use tenslift_targets::interp::Array;
use tenslift_targets::{npy, DType, Program};

use super::{CReference, DifferentialError};
use crate::interface::{self, Entry};

/// How to compile the user's file.
#[derive(Clone, Debug, Default)]
pub struct CompileFlags {
    pub include_dirs: Vec<PathBuf>,
    pub defines: Vec<String>,
}

/// Where the generated driver's C comes from and where it is built.
pub struct DriverSetup<'a> {
    /// The user's C file (included by the driver).
    pub source: &'a Path,
    pub flags: &'a CompileFlags,
    /// Scratch space; each run gets its own subdirectory.
    pub workdir: &'a Path,
}

/// Builds and runs the generated driver at `sizes`; `label` names the run
/// and `seed` picks the random inputs.
pub fn run_generated(
    setup: &DriverSetup,
    kernel: &Kernel,
    program: &Program,
    sizes: &BTreeMap<String, i64>,
    seed: u64,
    label: &str,
) -> Result<CReference, DifferentialError> {
    let (source, flags, workdir) = (setup.source, setup.flags, setup.workdir);
    let iface = interface::build(kernel, program, sizes)
        .map_err(|e| DifferentialError::Interface(e.to_string()))?;
    let positive = positive_inputs(kernel);
    let dir = workdir.join(format!("c_{label}"));
    let in_dir = dir.join("in");
    let out_dir = dir.join("out");
    for d in [&in_dir, &out_dir] {
        std::fs::create_dir_all(d).map_err(|e| DifferentialError::io(d, e))?;
    }
    let mut rng = SplitMix(seed ^ 0x7465_6e73_6c69_6674);
    let mut inputs = HashMap::new();
    let mut slots = Vec::new();
    for entry in &iface.entries {
        match entry {
            Entry::Pinned { name, value } => slots.push(Slot::Size {
                name: name.clone(),
                value: *value,
            }),
            Entry::Scalar { name, dtype } | Entry::Cell { name, dtype } => {
                let a = match pinned_flag(kernel, name) {
                    // A case of a kernel split on its flags: the C must
                    // take that case, so its flags get the case's values.
                    Some(value) if !dtype.is_float() => {
                        Array::from_i64(*dtype, vec![], vec![value])
                    }
                    _ => random_array(&mut rng, *dtype, vec![], positive.contains(name)),
                };
                npy::write(&in_dir.join(format!("{name}.npy")), &a)?;
                inputs.insert(name.clone(), a);
                slots.push(Slot::Scalar {
                    name: name.clone(),
                    dtype: *dtype,
                    written: matches!(entry, Entry::Cell { .. }),
                });
            }
            Entry::Array {
                name,
                dtype,
                shape,
                compare,
                ..
            } => {
                let a = random_array(&mut rng, *dtype, shape.clone(), positive.contains(name));
                npy::write(&in_dir.join(format!("{name}.npy")), &a)?;
                inputs.insert(name.clone(), a);
                slots.push(Slot::Array {
                    name: name.clone(),
                    dtype: *dtype,
                    shape: shape.clone(),
                    written: *compare,
                });
            }
        }
    }
    let returns = match (kernel.returns, iface.returns) {
        (Some(_), Some(d)) => Some(d),
        _ => None,
    };
    let main = driver_source(source, kernel, &slots, returns)?;
    let main_path = dir.join("driver.c");
    std::fs::write(&main_path, &main).map_err(|e| DifferentialError::io(&main_path, e))?;
    let exe = dir.join("driver");
    let mut cmd = Command::new("gcc");
    cmd.args(["-O2", "-std=gnu11", "-w"]);
    // The file's own directory, as gcc searches it for `#include "…"`; a
    // bare file name has an empty parent, and a bare `-I` would take the
    // next argument (the driver itself) as its directory.
    match source.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            cmd.arg(format!("-I{}", parent.display()));
        }
        _ => {
            cmd.arg("-I.");
        }
    }
    for inc in &flags.include_dirs {
        cmd.arg(format!("-I{}", inc.display()));
    }
    for def in &flags.defines {
        cmd.arg(format!("-D{def}"));
    }
    // The program assumes the C's assertions (stated preconditions); the
    // random inputs need not satisfy them, and the C without its checks
    // computes on them what the program must.
    if !kernel.asserted.is_empty() {
        cmd.arg("-DNDEBUG");
    }
    cmd.arg(&main_path).arg("-o").arg(&exe).arg("-lm");
    let compiled = cmd
        .output()
        .map_err(|e| DifferentialError::Tool(format!("cannot run gcc: {e}")))?;
    if !compiled.status.success() {
        return Err(DifferentialError::Compile(
            String::from_utf8_lossy(&compiled.stderr).into_owned(),
        ));
    }
    let ran = Command::new(&exe)
        .arg(&in_dir)
        .arg(&out_dir)
        .output()
        .map_err(|e| DifferentialError::Tool(format!("cannot run the C driver: {e}")))?;
    if !ran.status.success() {
        return Err(DifferentialError::CRun(format!(
            "{} {}",
            ran.status,
            String::from_utf8_lossy(&ran.stderr).trim()
        )));
    }
    let mut outputs = BTreeMap::new();
    for slot in &slots {
        let name = match slot {
            Slot::Array {
                name,
                written: true,
                ..
            }
            | Slot::Scalar {
                name,
                written: true,
                ..
            } => name,
            _ => continue,
        };
        outputs.insert(
            name.clone(),
            npy::read(&out_dir.join(format!("{name}.npy")))?,
        );
    }
    if returns.is_some() {
        outputs.insert(
            "return".to_string(),
            npy::read(&out_dir.join("return.npy"))?,
        );
    }
    Ok(CReference {
        label: label.to_string(),
        sizes: sizes.clone(),
        inputs,
        outputs,
    })
}

/// One kernel parameter as the driver handles it.
enum Slot {
    Size {
        name: String,
        value: i64,
    },
    Scalar {
        name: String,
        dtype: DType,
        written: bool,
    },
    Array {
        name: String,
        dtype: DType,
        shape: Vec<usize>,
        written: bool,
    },
}

fn c_type(d: DType) -> &'static str {
    match d {
        DType::Bool => "_Bool",
        DType::I8 => "int8_t",
        DType::U8 => "uint8_t",
        DType::I16 => "int16_t",
        DType::U16 => "uint16_t",
        DType::I32 => "int32_t",
        DType::U32 => "uint32_t",
        DType::I64 => "int64_t",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

fn npy_descr(d: DType) -> &'static str {
    match d {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I16 => "<i2",
        DType::U16 => "<u2",
        DType::I32 => "<i4",
        DType::U32 => "<u4",
        DType::I64 => "<i8",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

/// Reads and writes `.npy` (version 1, little-endian, C order) and nothing
/// else; the Rust side writes the inputs, so only sizes are checked.
const NPY_HELPERS: &str = r#"
static void *tl_read(const char *dir, const char *name, size_t bytes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(3); }
    unsigned char head[10];
    if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "%s is not .npy\n", path); exit(3);
    }
    size_t skip = (size_t)head[8] | ((size_t)head[9] << 8);
    if (head[6] != 1) {
        unsigned char more[2];
        if (fread(more, 1, 2, f) != 2) { fprintf(stderr, "short %s\n", path); exit(3); }
        skip |= ((size_t)more[0] << 16) | ((size_t)more[1] << 24);
    }
    if (fseek(f, (long)skip, SEEK_CUR) != 0) { fprintf(stderr, "short %s\n", path); exit(3); }
    void *data = calloc(bytes ? bytes : 1, 1);
    if (!data) { fprintf(stderr, "out of memory\n"); exit(3); }
    if (fread(data, 1, bytes, f) != bytes) { fprintf(stderr, "short %s\n", path); exit(3); }
    fclose(f);
    return data;
}

static void tl_write(const char *dir, const char *name, const char *descr,
                     const long *shape, int rank, const void *data, size_t bytes) {
    char path[4096], dims[512] = "", dict[1024];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    for (int i = 0; i < rank; i++) {
        char one[32];
        snprintf(one, sizeof one, "%ld,%s", shape[i], (rank > 1 && i + 1 < rank) ? " " : "");
        strncat(dims, one, sizeof dims - strlen(dims) - 1);
    }
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                     descr, dims);
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "cannot write %s\n", path); exit(4); }
    unsigned short len = (unsigned short)(n + pad + 1);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
    fwrite(head, 1, 10, f);
    fwrite(dict, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    if (fwrite(data, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(4); }
    fclose(f);
}
"#;

fn c_string(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn driver_source(
    source: &Path,
    kernel: &Kernel,
    slots: &[Slot],
    returns: Option<DType>,
) -> Result<String, DifferentialError> {
    let absolute = std::fs::canonicalize(source).map_err(|e| DifferentialError::io(source, e))?;
    let mut c = String::new();
    let origin_of = |name: &str| {
        kernel
            .params
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.origin.clone())
    };
    // Macro sizes are fixed when the C is compiled: defined before the
    // file, whose `#ifndef N` then keeps this value.
    for slot in slots {
        if let Slot::Size { name, value } = slot {
            if matches!(origin_of(name), Some(Origin::Macro { .. })) {
                // `#undef` first: the command line may define it too (`-DN=384`).
                let _ = writeln!(c, "#undef {name}\n#define {name} {value}");
            }
        }
    }
    // The user's file may have its own `main`; rename it out of the way.
    let _ = writeln!(c, "#define main tenslift_user_main");
    let _ = writeln!(c, "#include {}", c_string(&absolute.to_string_lossy()));
    let _ = writeln!(c, "#undef main");
    c.push_str(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <stdint.h>\n",
    );
    c.push_str(NPY_HELPERS);
    c.push_str("int main(int argc, char **argv) {\n");
    c.push_str("    if (argc != 3) { fprintf(stderr, \"usage: driver IN OUT\\n\"); return 2; }\n");
    for slot in slots {
        match slot {
            Slot::Size { name, value } => {
                if origin_of(name) == Some(Origin::Global) {
                    let _ = writeln!(c, "    {name} = {value};");
                }
            }
            Slot::Scalar { name, dtype, .. } => {
                let t = c_type(*dtype);
                let _ = writeln!(
                    c,
                    "    {t} tl_arg_{name} = *({t} *)tl_read(argv[1], {}, sizeof({t}));",
                    c_string(name)
                );
                if origin_of(name) == Some(Origin::Global) {
                    let _ = writeln!(c, "    {name} = tl_arg_{name};");
                }
            }
            Slot::Array {
                name, dtype, shape, ..
            } => {
                let count: usize = shape.iter().product();
                let bytes = format!("(size_t){count} * sizeof({})", c_type(*dtype));
                let _ = writeln!(
                    c,
                    "    void *tl_arg_{name} = tl_read(argv[1], {}, {bytes});",
                    c_string(name)
                );
                if origin_of(name) == Some(Origin::Global) {
                    let _ = writeln!(
                        c,
                        "    if (sizeof({name}) < {bytes}) {{ fprintf(stderr, \"global {name} is smaller than its shape\\n\"); return 5; }}\n    memcpy((void *){name}, tl_arg_{name}, {bytes});"
                    );
                }
            }
        }
    }
    let call_args = call_arguments(kernel, slots, &mut c)?;
    let call = format!("{}({})", kernel.name, call_args.join(", "));
    match returns {
        Some(d) => {
            let t = c_type(d);
            let _ = writeln!(c, "    {t} tl_result = ({t}){call};");
            let _ = writeln!(
                c,
                "    tl_write(argv[2], \"return\", \"{}\", NULL, 0, &tl_result, sizeof tl_result);",
                npy_descr(d)
            );
        }
        None => {
            let _ = writeln!(c, "    {call};");
        }
    }
    for slot in slots {
        match slot {
            Slot::Array {
                name,
                dtype,
                shape,
                written: true,
            } => {
                let dims: Vec<String> = shape.iter().map(|d| format!("{d}L")).collect();
                let count: usize = shape.iter().product();
                let source_buf = if origin_of(name) == Some(Origin::Global) {
                    format!("(const void *){name}")
                } else {
                    format!("tl_arg_{name}")
                };
                let _ = writeln!(
                    c,
                    "    {{ const long tl_shape[] = {{{}0}}; tl_write(argv[2], {}, \"{}\", tl_shape, {}, {source_buf}, (size_t){count} * sizeof({})); }}",
                    dims.iter().map(|d| format!("{d}, ")).collect::<String>(),
                    c_string(name),
                    npy_descr(*dtype),
                    shape.len(),
                    c_type(*dtype)
                );
            }
            Slot::Scalar {
                name,
                dtype,
                written: true,
            } => {
                let _ = writeln!(
                    c,
                    "    {{ {t} tl_v = {name}; tl_write(argv[2], {}, \"{}\", NULL, 0, &tl_v, sizeof tl_v); }}",
                    c_string(name),
                    npy_descr(*dtype),
                    t = c_type(*dtype)
                );
            }
            _ => {}
        }
    }
    c.push_str("    return 0;\n}\n");
    Ok(c)
}

/// The arguments of the kernel call, in C order, after the statements
/// (appended to `c`) that build row pointers and fill struct parameters:
/// a struct's fields are stored into `tl_struct_{root}` (or the global
/// itself), and the struct is passed, by value or by address, where its
/// first field parameter stands.
fn call_arguments(
    kernel: &Kernel,
    slots: &[Slot],
    c: &mut String,
) -> Result<Vec<String>, DifferentialError> {
    let mut args = Vec::new();
    let mut passed_roots: Vec<String> = Vec::new();
    for p in &kernel.params {
        if !matches!(
            p.origin,
            Origin::Argument | Origin::Pointee | Origin::Field(_)
        ) {
            continue;
        }
        let slot = slots.iter().find(|s| match s {
            Slot::Size { name, .. } | Slot::Scalar { name, .. } | Slot::Array { name, .. } => {
                name == &p.name
            }
        });
        let value = match (slot, &p.kind) {
            (Some(Slot::Size { value, .. }), _) => value.to_string(),
            (Some(Slot::Scalar { name, .. }), _) => format!("tl_arg_{name}"),
            (
                Some(Slot::Array {
                    name, dtype, shape, ..
                }),
                loop_ir::ParamKind::Array(info),
            ) if info.storage == Storage::RowPointers => {
                c.push_str(&row_pointer_levels(name, *dtype, shape));
                format!("(void *)tl_rows_{name}")
            }
            (Some(Slot::Array { name, .. }), _) => format!("(void *)tl_arg_{name}"),
            (None, loop_ir::ParamKind::Scalar { .. }) => "0".to_string(),
            (None, loop_ir::ParamKind::Array(_)) => {
                return Err(DifferentialError::Interface(format!(
                    "the array argument `{}` has no extent at these sizes",
                    p.name
                )))
            }
        };
        match &p.origin {
            Origin::Argument => args.push(value),
            Origin::Pointee => args.push(by_reference(&p.name, &p.kind, &value, c)?),
            Origin::Field(path) => {
                let object = match path.passing {
                    Passing::Global => path.root.clone(),
                    _ => format!("tl_struct_{}", path.root),
                };
                if !passed_roots.contains(&path.root) {
                    passed_roots.push(path.root.clone());
                    if path.passing != Passing::Global {
                        let _ = writeln!(c, "    static {} {object};", path.struct_type);
                        args.push(match path.passing {
                            Passing::ByPointer => format!("&{object}"),
                            _ => object.clone(),
                        });
                    }
                }
                // A pointer field the path goes through gets memory first.
                for pointer in path.pointer_prefixes(&object) {
                    let _ = writeln!(
                        c,
                        "    if (!{pointer}) {pointer} = calloc(16, sizeof *{pointer});"
                    );
                }
                let field = path.c_lvalue(&object);
                if path.ends_in_inline_array(&p.kind) {
                    // `float m[4][4]` inside the struct: its elements are copied in.
                    let _ = writeln!(c, "    memcpy({field}, {value}, sizeof {field});");
                } else {
                    let _ = writeln!(c, "    {field} = {value};");
                }
            }
            _ => {}
        }
    }
    Ok(args)
}

/// The address of a copy of `value` for a scalar the C reads through a
/// pointer (`integer *n`), declared in `c` at the parameter's own type.
fn by_reference(
    name: &str,
    kind: &loop_ir::ParamKind,
    value: &str,
    c: &mut String,
) -> Result<String, DifferentialError> {
    let loop_ir::ParamKind::Scalar { ty, .. } = kind else {
        return Err(DifferentialError::Interface(format!(
            "`{name}` is passed by reference but is no scalar"
        )));
    };
    let Some(dtype) = crate::concrete::dtype_of(*ty) else {
        return Err(DifferentialError::Interface(format!(
            "`{name}` has no element type a driver can pass"
        )));
    };
    let _ = writeln!(c, "    static {} tl_ref_{name};", c_type(dtype));
    let _ = writeln!(c, "    tl_ref_{name} = {value};");
    Ok(format!("&tl_ref_{name}"))
}

/// C statements that build `tl_rows_{name}`, the row pointers (and, for
/// three dimensions, the plane pointers) of a row-pointer array over its
/// contiguous buffer `tl_arg_{name}`: row `r` starts at `r * shape[-1]`, so
/// rows never overlap, as the lifted program assumes.
fn row_pointer_levels(name: &str, dtype: DType, shape: &[usize]) -> String {
    let t = c_type(dtype);
    match shape {
        [rows, cols] => format!(
            "    {t} **tl_rows_{name} = malloc(sizeof({t} *) * {n});\n    for (long r = 0; r < {rows}L; r++) tl_rows_{name}[r] = ({t} *)tl_arg_{name} + r * {cols}L;\n",
            n = (*rows).max(1)
        ),
        [planes, rows, cols] => format!(
            "    {t} ***tl_rows_{name} = malloc(sizeof({t} **) * {np});\n    for (long z = 0; z < {planes}L; z++) {{\n        tl_rows_{name}[z] = malloc(sizeof({t} *) * {nr});\n        for (long r = 0; r < {rows}L; r++) tl_rows_{name}[z][r] = ({t} *)tl_arg_{name} + (z * {rows}L + r) * {cols}L;\n    }}\n",
            np = (*planes).max(1),
            nr = (*rows).max(1)
        ),
        _ => format!("    void *tl_rows_{name} = tl_arg_{name};\n"),
    }
}

/// Parameters that reach a divisor or the argument of `sqrt`/`log`/`pow`.
fn positive_inputs(kernel: &Kernel) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    fn loads(e: &Expr, out: &mut BTreeSet<String>) {
        match &e.kind {
            ExprKind::Load { array, .. } => {
                out.insert(array.clone());
            }
            ExprKind::Var { name, .. } => {
                out.insert(name.clone());
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => loads(arg, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                loads(lhs, out);
                loads(rhs, out);
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                loads(cond, out);
                loads(then_value, out);
                loads(else_value, out);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|a| loads(a, out)),
            _ => {}
        }
    }
    fn visit(e: &Expr, out: &mut BTreeSet<String>) {
        match &e.kind {
            ExprKind::Binary { op, lhs, rhs } => {
                if matches!(op, BinaryOp::Div | BinaryOp::Rem) {
                    loads(rhs, out);
                }
                visit(lhs, out);
                visit(rhs, out);
            }
            ExprKind::Call { func, args } => {
                if matches!(func, MathFn::Sqrt | MathFn::Log | MathFn::Pow) {
                    args.iter().for_each(|a| loads(a, out));
                }
                args.iter().for_each(|a| visit(a, out));
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => visit(arg, out),
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                visit(cond, out);
                visit(then_value, out);
                visit(else_value, out);
            }
            _ => {}
        }
    }
    fn stmts(body: &[Stmt], out: &mut BTreeSet<String>) {
        for s in body {
            match s {
                Stmt::Loop(l) => stmts(&l.body, out),
                Stmt::Assign { value, .. } | Stmt::Return { value, .. } => visit(value, out),
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                } => {
                    visit(cond, out);
                    stmts(then_body, out);
                    stmts(else_body, out);
                }
            }
        }
    }
    stmts(&kernel.body, &mut names);
    names
}

/// The value a case of a kernel split on its flags gives the flag `name`.
fn pinned_flag(kernel: &Kernel, name: &str) -> Option<i64> {
    let case = kernel.case.as_ref()?;
    case.pins.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// A small deterministic generator (SplitMix64), so runs are repeatable.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + (self.next() % span) as i64
    }
}

fn random_array(rng: &mut SplitMix, dtype: DType, shape: Vec<usize>, positive: bool) -> Array {
    let count: usize = shape.iter().product();
    if dtype.is_float() {
        let (lo, hi) = if positive { (0.5, 2.0) } else { (-1.0, 1.0) };
        let values = (0..count).map(|_| lo + (hi - lo) * rng.unit()).collect();
        // Array::from_f64 rounds to the element type, as the C will see it.
        Array::from_f64(dtype, shape, values)
    } else {
        let (lo, hi) = match (dtype, positive) {
            (DType::Bool, _) => (0, 1),
            (_, true) => (1, 8),
            (DType::U8 | DType::U16 | DType::U32, false) => (0, 15),
            _ => (-8, 8),
        };
        let values = (0..count).map(|_| rng.int_in(lo, hi)).collect();
        Array::from_i64(dtype, shape, values)
    }
}
