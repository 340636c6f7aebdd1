//! `tenslift spec FILE [--function F] [--sizes n=4,m=5] [--second] [--json]
//! [--eval DIR [--out DIR2]]`: prints what a kernel computes, one exact
//! expression per output element. With `--eval`, evaluates the spec
//! numerically on the `.npy` inputs in DIR (as `scripts/cref.py inputs`
//! writes them, at the spec's sizes) and writes one `<output>.npy` per output
//! into DIR2 (default `DIR/spec-outputs`), shaped like the C driver's.
//!
//! FILE is C source (through the frontend) or loop IR as JSON (the output of
//! `tenslift extract --json`, a serialised `TranslationUnit`).
//!
//! Exit codes: 0 success; 2 the input cannot be read or parsed; 3 no such
//! kernel, or several and no `--function`; 4 the spec cannot be computed at
//! the requested sizes (bounds, bad size list, …) or evaluated on the given
//! inputs (missing file, buffer too small, …).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tenslift_frontend::ir::{Kernel, TranslationUnit};
use tenslift_frontend::ExtractError;

use crate::spec::{self, Spec, SpecError};

#[derive(clap::Args, Debug, Clone)]
pub struct SpecArgs {
    /// A C file, or loop IR as JSON (`tenslift extract --json`).
    pub file: PathBuf,
    /// The kernel to use when the file holds several.
    #[arg(long)]
    pub function: Option<String>,
    /// Size parameter values, e.g. `n=4,m=5`; the others are chosen.
    #[arg(long)]
    pub sizes: Option<String>,
    /// Use the second size tuple (every size different from the first),
    /// as the synthesizer does to check generalisation.
    #[arg(long)]
    pub second: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Evaluate the spec on the `.npy` inputs in this directory.
    #[arg(long, value_name = "DIR")]
    pub eval: Option<PathBuf>,
    /// Where `--eval` writes `<output>.npy` (default `DIR/spec-outputs`).
    #[arg(long, value_name = "DIR2", requires = "eval")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
}

/// A failure with the exit code it maps to and its rendered message.
#[derive(Debug, PartialEq)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

use super::cflags::CFlags;
use super::{
    print_err, print_out, EXIT_NO_KERNEL as EXIT_KERNEL, EXIT_REJECTED, EXIT_SPEC,
    EXIT_USAGE as EXIT_INPUT,
};

fn spec_failure(e: SpecError) -> Failure {
    let text = e.to_string();
    Failure {
        code: EXIT_SPEC,
        // Located errors already read `file:line:col: error: …`.
        message: if text.contains(": error: ") {
            text
        } else {
            format!("error: {text}")
        },
    }
}

/// Parses a C file with the frontend; a refusal keeps the frontend's
/// located diagnostics and exit code.
fn kernels_from_c(
    path: &Path,
    function: Option<&str>,
    cflags: &CFlags,
) -> Result<Vec<Kernel>, Failure> {
    // A case (`sgemv_case2`) is read out of its function.
    let c_name = function.map(|f| match f.rsplit_once("_case") {
        Some((base, k)) if !base.is_empty() && k.parse::<usize>().is_ok() => base,
        _ => f,
    });
    let options = cflags
        .options(path, c_name.into_iter().map(str::to_string).collect())
        .map_err(|message| Failure {
            code: EXIT_INPUT,
            message: format!("error: {message}"),
        })?;
    match tenslift_frontend::extract(&path.to_string_lossy(), &options) {
        Ok(unit) => Ok(crate::synth::cases::each_case(&unit.kernels)),
        Err(ExtractError::Rejected(diagnostics)) => Err(Failure {
            code: EXIT_REJECTED,
            message: super::render_diagnostics(&diagnostics)
                .trim_end()
                .to_string(),
        }),
        Err(timeout @ ExtractError::Timeout { .. }) => Err(Failure {
            code: super::EXIT_TIMEOUT,
            message: format!("error: {timeout} (the parse is limited to 60 s)"),
        }),
        Err(other) => Err(Failure {
            code: EXIT_INPUT,
            message: format!("error: {other}"),
        }),
    }
}

fn kernels_from_json(path: &Path, text: &str) -> Result<Vec<Kernel>, Failure> {
    let unit: TranslationUnit = serde_json::from_str(text).map_err(|e| Failure {
        code: EXIT_INPUT,
        message: format!(
            "{}:{}:{}: error: not loop IR JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        ),
    })?;
    Ok(unit.kernels)
}

fn load_kernels(args: &SpecArgs) -> Result<Vec<Kernel>, Failure> {
    let path = args.file.as_path();
    let is_json = path.extension().is_some_and(|e| e == "json");
    if !is_json {
        return kernels_from_c(path, args.function.as_deref(), &args.cflags);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Failure {
        code: EXIT_INPUT,
        message: format!("{}: error: cannot read: {e}", path.display()),
    })?;
    kernels_from_json(path, &text)
}

fn select_kernel(
    path: &Path,
    kernels: Vec<Kernel>,
    wanted: Option<&str>,
) -> Result<Kernel, Failure> {
    let names = || {
        kernels
            .iter()
            .map(crate::synth::cases::label)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fail = |message: String| Failure {
        code: EXIT_KERNEL,
        message,
    };
    match wanted {
        Some(name) => match kernels
            .iter()
            .position(|k| crate::synth::cases::label(k) == name)
            .or_else(|| kernels.iter().position(|k| k.name == name))
        {
            Some(i) => Ok(kernels[i].clone()),
            None => Err(fail(format!(
                "{}: error: no kernel `{name}` (kernels: {})",
                path.display(),
                names()
            ))),
        },
        None if kernels.len() == 1 => Ok(kernels[0].clone()),
        None if kernels.is_empty() => {
            Err(fail(format!("{}: error: no kernel found", path.display())))
        }
        None => Err(fail(format!(
            "{}: error: several kernels ({}); choose one with --function",
            path.display(),
            names()
        ))),
    }
}

/// The spec as JSON: sizes, inputs, and every output element with its index.
pub fn spec_json(spec: &Spec) -> Value {
    let inputs: Vec<Value> = spec
        .inputs
        .iter()
        .map(|i| json!({"name": i.name, "elem": i.elem.name(), "shape": i.shape}))
        .collect();
    let outputs: Vec<Value> = spec
        .outputs
        .iter()
        .map(|o| {
            let elements: Vec<Value> = o
                .value
                .elems()
                .iter()
                .enumerate()
                .map(|(offset, e)| json!({"index": o.value.index_of(offset), "expr": e.to_string()}))
                .collect();
            json!({"name": o.name, "elem": o.elem.name(), "shape": o.value.shape(), "elements": elements})
        })
        .collect();
    json!({
        "kernel": spec.kernel,
        "sizes": spec.sizes,
        "semantics": "exact over the reals; C integer division, remainder and narrowing conversions modelled",
        "inputs": inputs,
        "outputs": outputs,
    })
}

/// `--eval`: writes the outputs and returns the text to print (the output
/// directory, then one line per file written).
fn evaluate_to_files(
    kernel: &Kernel,
    result: &Spec,
    dir: &Path,
    out: Option<&Path>,
) -> Result<String, Failure> {
    let fail = |e: spec::numeric::NumericError| Failure {
        code: EXIT_SPEC,
        message: format!("error: {e}"),
    };
    let outputs = spec::numeric::evaluate(kernel, result, dir).map_err(fail)?;
    let out_dir = out.map_or_else(|| dir.join("spec-outputs"), Path::to_path_buf);
    spec::numeric::write_outputs(&out_dir, &outputs).map_err(fail)?;
    let mut text = format!("{}\n", out_dir.display());
    for o in &outputs {
        text.push_str(&format!("{}.npy\n", o.name));
    }
    Ok(text)
}

/// Computes the text `run` prints, or the failure it reports.
pub fn render(args: &SpecArgs) -> Result<String, Failure> {
    let kernels = load_kernels(args)?;
    let kernel = select_kernel(&args.file, kernels, args.function.as_deref())?;
    let fixed = match &args.sizes {
        Some(text) => spec::parse_sizes(text).map_err(spec_failure)?,
        None => spec::Sizes::new(),
    };
    let mut result = spec::spec_at_chosen_sizes(&kernel, &fixed).map_err(spec_failure)?;
    if args.second {
        result = spec::spec_at_second_sizes(&kernel, &result.sizes).map_err(spec_failure)?;
    }
    if let Some(dir) = &args.eval {
        return evaluate_to_files(&kernel, &result, dir, args.out.as_deref());
    }
    if args.json {
        serde_json::to_string_pretty(&spec_json(&result))
            .map(|s| s + "\n")
            .map_err(|e| Failure {
                code: EXIT_SPEC,
                message: format!("error: cannot render JSON: {e}"),
            })
    } else {
        Ok(result.to_string())
    }
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: SpecArgs) -> i32 {
    match render(&args) {
        Ok(text) => {
            print_out(&text);
            0
        }
        Err(f) => {
            print_err(&format!("{}\n", f.message));
            f.code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::build::*;
    use tenslift_frontend::ir::{Role, ScalarType::F64};

    fn write_unit(dir: &tempfile::TempDir, kernels: Vec<Kernel>) -> PathBuf {
        let path = dir.path().join("unit.json");
        let unit = TranslationUnit {
            file: "k.c".into(),
            kernels,
            refused: Vec::new(),
        };
        std::fs::write(&path, serde_json::to_string(&unit).unwrap()).unwrap();
        path
    }

    fn axpy(name: &str) -> Kernel {
        KernelBuilder::new(name)
            .size("n")
            .scalar("a", F64)
            .array("x", F64, &["n"], Role::Input)
            .array("y", F64, &["n"], Role::InOut)
            .body(vec![for_(
                "i",
                "0",
                "n",
                vec![assign(
                    el("y", &["i"], F64),
                    add(
                        load("y", &["i"], F64),
                        mul(param("a", F64), load("x", &["i"], F64)),
                    ),
                )],
            )])
            .build()
    }

    fn args(file: PathBuf) -> SpecArgs {
        SpecArgs {
            file,
            function: None,
            sizes: None,
            second: false,
            json: false,
            eval: None,
            out: None,
            cflags: CFlags::default(),
        }
    }

    #[test]
    fn prints_one_line_per_output_element() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_unit(&dir, vec![axpy("axpy")]);
        let out = render(&args(path)).unwrap();
        assert_eq!(
            out,
            "// spec of axpy at n=3\ny[0] = a*x[0] + y[0]\ny[1] = a*x[1] + y[1]\ny[2] = a*x[2] + y[2]\n"
        );
    }

    #[test]
    fn json_lists_sizes_inputs_and_indexed_elements() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_unit(&dir, vec![axpy("axpy")]);
        let mut a = args(path);
        a.json = true;
        a.sizes = Some("n=2".into());
        let v: Value = serde_json::from_str(&render(&a).unwrap()).unwrap();
        assert_eq!(v["sizes"]["n"], 2);
        assert_eq!(v["outputs"][0]["elements"][1]["index"], json!([1]));
        assert_eq!(v["outputs"][0]["elements"][1]["expr"], "a*x[1] + y[1]");
        assert_eq!(v["inputs"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn second_size_tuple_differs() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_unit(&dir, vec![axpy("axpy")]);
        let mut a = args(path);
        a.second = true;
        assert!(render(&a).unwrap().starts_with("// spec of axpy at n=4\n"));
    }

    #[test]
    fn kernel_choice_and_bad_input_have_distinct_exit_codes() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_unit(&dir, vec![axpy("one"), axpy("two")]);
        let err = render(&args(path.clone())).unwrap_err();
        assert_eq!(err.code, EXIT_KERNEL);
        assert!(err.message.contains("several kernels (one, two)"));
        let mut a = args(path.clone());
        a.function = Some("two".into());
        assert!(render(&a).is_ok());
        a.function = Some("three".into());
        assert_eq!(render(&a).unwrap_err().code, EXIT_KERNEL);
        let mut b = args(path);
        b.function = Some("one".into());
        b.sizes = Some("n=x".into());
        assert_eq!(render(&b).unwrap_err().code, EXIT_SPEC);
        let garbage = dir.path().join("bad.json");
        std::fs::write(&garbage, "{not json").unwrap();
        let err = render(&args(garbage)).unwrap_err();
        assert_eq!(err.code, EXIT_INPUT);
        assert!(
            err.message
                .contains("bad.json:1:2: error: not loop IR JSON"),
            "{}",
            err.message
        );
    }
}
