//! Turns a lifted program (TensIR text from `lift --json`) into what the
//! runtime runner loads: one module per target and `call.json`, which says
//! how to call the function (sizes at the dataset, which arrays it writes,
//! the order of the StableHLO results, the name the Python modules give the
//! function, and how far a float output may be from the C's).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;
use tenslift_targets::runner::python_function_name;
use tenslift_targets::{
    emit, parse_program, DType, EmitOptions, Expr, ParamKind, Program, Stmt, Target,
};
use tenslift_verify::differential::manifest::with_macro_names;
use tenslift_verify::differential::tolerance::{
    program_reduction_length, relative_factor, working_dtype,
};

use super::manifest::ManifestKernel;
use super::{write_text, BenchError};

/// The file each target's module is written to (the runner reads the same names).
pub fn module_file(target: Target) -> &'static str {
    match target {
        Target::Numpy => "numpy.py",
        Target::Jax => "jax.py",
        Target::Pytorch => "pytorch.py",
        Target::Hlo => "hlo.mlir",
    }
}

/// Number of operations (non-leaf expression nodes) in a program: the
/// "program length" of TENSORIZE's Figure 10.
pub fn program_ops(program: &Program) -> usize {
    fn count(e: &Expr) -> usize {
        let args = e.args();
        if args.is_empty() {
            0
        } else {
            1 + args.iter().map(count).sum::<usize>()
        }
    }
    // A kept loop counts as one operation besides its body's.
    program
        .statements()
        .into_iter()
        .map(|s| match s {
            Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
                count(value)
            }
            Stmt::Loop { .. } | Stmt::Var { .. } => 1,
        })
        .sum()
}

pub fn parse(kernel: &str, text: &str) -> Result<Program, BenchError> {
    parse_program(kernel, text).map_err(|d| BenchError::Runner(format!("{kernel}: {d}")))
}

/// The sizes `program` runs at in `dataset`: the manifest's, under their
/// macro names too, and the declared extents.
pub fn dataset_sizes(
    program: &Program,
    kernel: &ManifestKernel,
    dataset: &str,
) -> BTreeMap<String, i64> {
    // Macro-sized kernels (`-DN=...`) name their sizes in upper case.
    let mut sizes: BTreeMap<String, i64> = kernel
        .sizes
        .get(dataset)
        .map(with_macro_names)
        .unwrap_or_default();
    // Extent sizes are fixed by the build, not by the manifest: the program
    // carries the values its C declared. StableHLO's static shapes need
    // them like any other size.
    for e in &program.meta.extents {
        sizes.entry(e.name.clone()).or_insert(e.value);
    }
    sizes
}

/// Writes the modules of `targets` and call.json into `dir`. Returns the
/// targets that could not be emitted, with why (StableHLO needs every size).
pub fn write_modules(
    program: &Program,
    kernel: &ManifestKernel,
    dataset: &str,
    targets: &[Target],
    dir: &Path,
) -> Result<Vec<(Target, String)>, BenchError> {
    let sizes = dataset_sizes(program, kernel, dataset);
    let mut params = Vec::new();
    let mut hlo_results = Vec::new();
    for p in &program.params {
        let name = p.name.to_string();
        let written = p.access().is_some_and(|a| a.is_written());
        match &p.kind {
            ParamKind::Size => {
                let value = sizes.get(&name).copied();
                let value = value.ok_or_else(|| {
                    BenchError::Usage(format!(
                        "kernel {}: size `{name}` has no value at {dataset} in the manifest",
                        kernel.name
                    ))
                })?;
                params.push(json!({"name": name, "kind": "size", "value": value}));
            }
            ParamKind::Scalar(_) => params.push(json!({"name": name, "kind": "scalar"})),
            ParamKind::Array { .. } => {
                if written {
                    hlo_results.push(name.clone());
                }
                params.push(json!({"name": name, "kind": "array", "written": written}));
            }
        }
    }
    if program.ret.is_some() {
        hlo_results.push("__return__".to_string());
    }
    // The runner applies verify's differential tolerance (see
    // `tenslift_verify::differential::tolerance`): per float type, the
    // relative factor for the program's longest reduction at these sizes.
    let reduction_length = program_reduction_length(program, &sizes);
    // A double output computed from float inputs (a double accumulator
    // over float products) is only as exact as the C's float arithmetic.
    let single_inputs = program.params.iter().any(|p| match &p.kind {
        ParamKind::Array { dtype, .. } | ParamKind::Scalar(dtype) => *dtype == DType::F32,
        ParamKind::Size => false,
    });
    let working = |dtype: DType| working_dtype(dtype, single_inputs);
    let factors: serde_json::Map<String, serde_json::Value> =
        [("float32", DType::F32), ("float64", DType::F64)]
            .into_iter()
            .filter_map(|(name, dtype)| {
                relative_factor(working(dtype), reduction_length)
                    .map(|f| (name.to_string(), json!(f)))
            })
            .collect();
    // torch.compile traces Python loops by unrolling them: a program that
    // keeps C loops would spend the runner's whole timeout compiling.
    let keeps_loops = program.has_loops();
    let call = json!({
        // The Python modules rename names that clash with Python (`len`
        // becomes `len_`): the runner looks the function up by this name.
        "function": python_function_name(program),
        "c_function": program.name.to_string(),
        "outputs": kernel.outputs,
        "params": params,
        "hlo_results": hlo_results,
        "keeps_loops": keeps_loops,
        "tolerance": {
            "reduction_length": reduction_length,
            "relative_factor": factors,
        },
    });
    write_text(&dir.join("call.json"), &format!("{call:#}\n"))?;
    let options = EmitOptions { sizes };
    let mut failed = Vec::new();
    for &target in targets {
        match emit(program, target, &options) {
            Ok(code) => write_text(&dir.join(module_file(target)), &code)?,
            Err(e) => failed.push((target, e.to_string())),
        }
    }
    Ok(failed)
}
