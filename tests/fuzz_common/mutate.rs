//! Inputs for the crash-finding targets: mutations of the seed corpus (every
//! `.c` under `benchmarks/` and `tests/fixtures`, every `.tensir` fixture),
//! structural bombs, and generated TensIR programs. Each returns a short
//! description (for the findings log) and the bytes.

use std::path::{Path, PathBuf};

use super::proc::ROOT;
use super::rng::Rng;

/// Files ending in `.ext` under the seed directories, sorted (so a seed
/// means the same inputs on every checkout).
pub fn corpus(ext: &str) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for dir in ["benchmarks", "tests/fixtures"] {
        walk(&Path::new(ROOT).join(dir), ext, &mut files);
    }
    files.sort();
    files
        .into_iter()
        // The fuzz fixtures are findings, not seeds.
        .filter(|p| !p.to_string_lossy().contains("fixtures/fuzz"))
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let name = p.strip_prefix(ROOT).unwrap_or(&p).display().to_string();
            Some((name, bytes))
        })
        .collect()
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

const C_OPERATORS: [&str; 14] = [
    "+", "-", "*", "/", "%", "<", "<=", ">", "!=", "==", "++", "--", "+=", "&&",
];
const C_BOUNDS: [&str; 10] = [
    "0",
    "-1",
    "3*n",
    "n",
    "2147483647",
    "99999999999999999999999",
    "1e308",
    "n*n*n",
    "(n-1)",
    "-n",
];
const HOSTILE_NAMES: [&str; 10] = [
    "lambda",
    "None",
    "np",
    "__import__",
    "exec",
    "def",
    "jnp",
    "torch",
    "_t0",
    "self",
];

/// One to three mutations of a corpus file, or splices of two.
pub fn mutate_c(rng: &mut Rng, corpus: &[(String, Vec<u8>)]) -> (String, Vec<u8>) {
    let (name, seed) = rng.pick(corpus);
    let mut bytes = seed.clone();
    let mut what = vec![name.clone()];
    for _ in 0..1 + rng.below(3) {
        let step = match rng.below(7) {
            0 => truncate(rng, &mut bytes),
            1 => flip(rng, &mut bytes),
            2 => swap_token(rng, &mut bytes, &C_OPERATORS, &C_OPERATORS),
            3 => swap_token(rng, &mut bytes, &["0", "1", "n", "m", "N"], &C_BOUNDS),
            4 => {
                let (other, tail) = rng.pick(corpus);
                let cut = rng.below(bytes.len() + 1);
                let from = rng.below(tail.len() + 1);
                bytes.truncate(cut);
                bytes.extend_from_slice(&tail[from..]);
                format!("splice {other}@{from} at {cut}")
            }
            5 => rename(rng, &mut bytes),
            _ => duplicate_line(rng, &mut bytes),
        };
        what.push(step);
    }
    (what.join(" | "), bytes)
}

fn truncate(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let at = rng.below(bytes.len() + 1);
    bytes.truncate(at);
    format!("truncate {at}")
}

fn flip(rng: &mut Rng, bytes: &mut [u8]) -> String {
    if bytes.is_empty() {
        return "flip (empty)".into();
    }
    let at = rng.below(bytes.len());
    let mask = 1u8 << rng.below(8);
    bytes[at] ^= mask;
    format!("flip {at}^{mask}")
}

/// Replaces one occurrence of a token from `from` with one from `to`.
fn swap_token(rng: &mut Rng, bytes: &mut Vec<u8>, from: &[&str], to: &[&str]) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let hits: Vec<(usize, &str)> = from
        .iter()
        .flat_map(|t| text.match_indices(t).map(|(i, _)| (i, *t)))
        .collect();
    if hits.is_empty() {
        return "swap (none)".into();
    }
    let (at, old) = *rng.pick(&hits);
    let new = *rng.pick(to);
    *bytes = format!("{}{new}{}", &text[..at], &text[at + old.len()..]).into_bytes();
    format!("swap {old:?}->{new:?} at {at}")
}

/// Renames every occurrence of one short identifier to a Python keyword
/// or builtin.
fn rename(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let old = *rng.pick(&["i", "j", "n", "m", "x", "y", "A", "B", "sum", "out"]);
    let new = *rng.pick(&HOSTILE_NAMES);
    let mut out = String::new();
    let mut word = String::new();
    for ch in text.chars().chain(std::iter::once('\0')) {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            word.push(ch);
            continue;
        }
        out.push_str(if word == old { new } else { &word });
        word.clear();
        if ch != '\0' {
            out.push(ch);
        }
    }
    *bytes = out.into_bytes();
    format!("rename {old}->{new}")
}

fn duplicate_line(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return "dup (empty)".into();
    }
    let at = rng.below(lines.len());
    let line = lines[at];
    lines.insert(at, line);
    *bytes = (lines.join("\n") + "\n").into_bytes();
    format!("dup line {at}")
}

/// A structural bomb: deep nesting, long sums, huge literals, deep loop
/// nests, many kernels; with `heavy`, also the classes known to crash or
/// hang the parser (a 200 000-term sum, exponential macros, device files),
/// kept out of the CI campaign while they are open (see
/// `tests/fixtures/fuzz/open.txt`).
pub fn bomb(rng: &mut Rng, heavy: bool) -> (String, Vec<u8>) {
    let head = "void f(int n, float *a, const float *b) {\n";
    let kinds = if heavy { 9 } else { 6 };
    let (what, text) = match rng.below(kinds) {
        0 => {
            let d = rng.range(100, 20_000) as usize;
            let e = format!("{}b[i]{}", "(".repeat(d), ")".repeat(d));
            (
                format!("parens {d}"),
                format!("{head} for (int i = 0; i < n; i++) a[i] = {e};\n}}\n"),
            )
        }
        1 => {
            let d = rng.range(100, 5_000) as usize;
            let body = format!("{} a[i] = b[i]; {}", "{".repeat(d), "}".repeat(d));
            (
                format!("blocks {d}"),
                format!("{head} for (int i = 0; i < n; i++) {body}\n}}\n"),
            )
        }
        2 => long_sum(rng.range(1_000, 30_000) as usize),
        3 => {
            let digits = rng.range(30, 5_000) as usize;
            let lit = "9".repeat(digits);
            (
                format!("literal {digits}"),
                format!("{head} for (int i = 0; i < n; i++) a[i] = b[i] * {lit};\n}}\n"),
            )
        }
        4 => {
            let d = rng.range(8, 120) as usize;
            let mut s = String::from(head);
            for l in 0..d {
                s.push_str(&format!("for (int i{l} = 0; i{l} < n; i{l}++)\n"));
            }
            s.push_str(&format!("a[i{}] += b[i0];\n}}\n", d - 1));
            (format!("loop nest {d}"), s)
        }
        5 => {
            let k = rng.range(50, 2_000) as usize;
            let s: String = (0..k)
                .map(|i| format!("void f{i}(int n, float *a, const float *b) {{ for (int i = 0; i < n; i++) a[i] = b[i] + {i}.0f; }}\n"))
                .collect();
            (format!("{k} kernels"), s)
        }
        6 => long_sum(rng.range(100_000, 200_000) as usize),
        7 => {
            let d = rng.range(20, 30);
            let mut s: String = (0..d)
                .map(|l| format!("#define M{l} M{} M{}\n", l + 1, l + 1))
                .collect();
            s.push_str(&format!("#define M{d} 1\nint x = M0;\n{head} for (int i = 0; i < n; i++) a[i] = b[i];\n}}\n"));
            (format!("exponential macro {d}"), s)
        }
        _ => {
            let dev = *rng.pick(&["/dev/zero", "/dev/urandom", "/dev/stdin"]);
            (
                format!("include {dev}"),
                format!("#include \"{dev}\"\n{head}}}\n"),
            )
        }
    };
    (format!("bomb: {what}"), text.into_bytes())
}

fn long_sum(terms: usize) -> (String, String) {
    let sum: Vec<String> = (0..terms).map(|t| format!("b[{}]", t % 64)).collect();
    let s = format!(
        "void f(int n, float *a, const float *b) {{\n for (int i = 0; i < n; i++) a[i] = {};\n}}\n",
        sum.join(" + ")
    );
    (format!("sum of {terms} terms"), s)
}

const DTYPES: [&str; 3] = ["f32", "f64", "i32"];

/// A typed TensIR program over `n`, `m`: element-wise operations,
/// reductions, `matmul`, `transpose`, `outer`, `where`, slices; most are
/// valid, so that the checker and the emitters see real programs.
pub fn gen_tensir(rng: &mut Rng) -> String {
    let t = *rng.pick(&DTYPES);
    let shapes = ["[n]", "[m]", "[n, m]", "[m, n]"];
    let out_shape = *rng.pick(&shapes);
    let mut body = String::new();
    let e = tensir_expr(rng, t, out_shape, 3);
    if rng.chance(30) {
        body.push_str(&format!("  let t0 = {e};\n  y = add(t0, t0);\n"));
    } else {
        body.push_str(&format!("  y = {e};\n"));
    }
    format!(
        "func g(n: size, m: size, alpha: {t}, a: {t}[n, m], b: {t}[m], c: {t}[n], d: {t}[m, n], y: out {t}{out_shape}) {{\n{body}}}\n"
    )
}

/// An expression of shape `shape` over the parameters of [`gen_tensir`].
fn tensir_expr(rng: &mut Rng, t: &str, shape: &str, budget: u32) -> String {
    let leaf = match shape {
        "[n]" => "c",
        "[m]" => "b",
        "[n, m]" => "a",
        _ => "d",
    };
    if budget == 0 || rng.chance(25) {
        return if rng.chance(80) {
            leaf.to_string()
        } else {
            format!("mul(alpha, {leaf})")
        };
    }
    let sub = |rng: &mut Rng, s: &str| tensir_expr(rng, t, s, budget - 1);
    let div = if t == "i32" { "trunc_div" } else { "div" };
    match (rng.below(8), shape) {
        (0, _) => format!("add({}, {})", sub(rng, shape), sub(rng, shape)),
        (1, _) => format!("sub({}, {})", sub(rng, shape), sub(rng, shape)),
        (2, _) => format!("mul({}, {})", sub(rng, shape), sub(rng, shape)),
        (3, _) => format!("{div}({}, {})", sub(rng, shape), leaf),
        (4, _) => format!(
            "where(gt({}, {leaf}), {}, {})",
            sub(rng, shape),
            sub(rng, shape),
            sub(rng, shape)
        ),
        (5, "[n]") => format!("matmul({}, {})", sub(rng, "[n, m]"), sub(rng, "[m]")),
        (5, "[m]") => format!("sum({}, axes=[1])", sub(rng, "[m, n]")),
        (5, "[n, m]") => format!("outer({}, {})", sub(rng, "[n]"), sub(rng, "[m]")),
        (5, _) => format!("transpose({}, perm=[1, 0])", sub(rng, "[n, m]")),
        (6, "[n]") => format!("maximum({}, {})", sub(rng, shape), sub(rng, shape)),
        (6, "[m]") => format!("add({}[0:m], {})", leaf, sub(rng, shape)),
        (6, _) => format!("neg({})", sub(rng, shape)),
        _ => format!("abs({})", sub(rng, shape)),
    }
}

const TENSIR_TOKENS: [&str; 18] = [
    "add",
    "mul",
    "matmul",
    "sum",
    "transpose",
    "f32",
    "f64",
    "i32",
    "n",
    "m",
    "[",
    "]",
    "(",
    ")",
    ",",
    "=",
    "out",
    ";",
];

/// A generated or fixture program, then one to three text mutations.
pub fn mutate_tensir(rng: &mut Rng, corpus: &[(String, Vec<u8>)]) -> (String, Vec<u8>) {
    let (mut what, mut bytes) = if rng.chance(50) || corpus.is_empty() {
        ("generated".to_string(), gen_tensir(rng).into_bytes())
    } else {
        let (name, b) = rng.pick(corpus);
        (name.clone(), b.clone())
    };
    // Most inputs stay close to valid, so the checker and the emitters see
    // programs and not only the lexer.
    let steps = match rng.below(100) {
        0..=39 => 0,
        40..=84 => 1,
        _ => 2,
    };
    for _ in 0..steps {
        let step = match rng.below(6) {
            0 => truncate(rng, &mut bytes),
            1 => flip(rng, &mut bytes),
            2 | 3 => swap_token(rng, &mut bytes, &TENSIR_TOKENS, &TENSIR_TOKENS),
            4 => swap_token(
                rng,
                &mut bytes,
                &["n", "m", "0", "1"],
                &["0", "-1", "n - 1", "99999999999999999999", "n * m"],
            ),
            _ => duplicate_line(rng, &mut bytes),
        };
        what.push_str(" | ");
        what.push_str(&step);
    }
    if rng.chance(3) {
        let d = rng.range(100, 5_000) as usize;
        bytes = format!(
            "func g(n: size, a: f32[n], y: out f32[n]) {{\n  y = {}a{};\n}}\n",
            "neg(".repeat(d),
            ")".repeat(d)
        )
        .into_bytes();
        what = format!("bomb: neg nesting {d}");
    }
    (what, bytes)
}
