//! The function the user calls: the input's own signature (`f(A, B)`
//! returning its result) around the emitted program, which takes the
//! sizes and the output arrays as arguments (`f_core(n, k, A, B, out)`).
//! One template per target, as the emitters are tables.

use std::fmt::Write as _;

use tenslift_frontend::ir::ScalarType;
use tenslift_targets::Target;

use super::ir::{shape_text, Node, View, T};
use super::kernel::{size_sources, Lowered};

/// The emitted program's name for function `f`.
pub fn core_name(function: &str) -> String {
    format!("{function}_core")
}

/// What each target spells the pieces in.
struct Spelling {
    module: &'static str,
    f64: &'static str,
    f32: &'static str,
    /// The core to call, from the core's name.
    call: fn(&str) -> String,
}

fn spelling(target: Target) -> Option<Spelling> {
    match target {
        Target::Numpy => Some(Spelling {
            module: "np",
            f64: "np.float64",
            f32: "np.float32",
            call: |core| core.to_string(),
        }),
        Target::Jax => Some(Spelling {
            module: "jnp",
            f64: "jnp.float64",
            f32: "jnp.float32",
            call: |core| format!("{core}_jit"),
        }),
        Target::Pytorch => Some(Spelling {
            module: "torch",
            f64: "torch.float64",
            f32: "torch.float32",
            call: |core| core.to_string(),
        }),
        Target::Hlo => None,
    }
}

/// The wrapper's source for `target` (StableHLO: a comment, its `@main`
/// takes the arrays and returns the results already).
pub fn wrapper(l: &Lowered, target: Target) -> String {
    let f = &l.kernel.name;
    let Some(sp) = spelling(target) else {
        return format!(
            "// {f}: @main takes the arrays ({}) and returns the results ({}).\n",
            names(l),
            l.outputs.join(", ")
        );
    };
    let core = core_name(f);
    let mut out = String::new();
    if target == Target::Jax {
        out.push_str("\n\n@jax.jit\n");
    } else {
        out.push_str("\n\n");
    }
    let _ = writeln!(out, "def {f}({}):", names(l));
    match view_of_input(l, target) {
        Some(view) => {
            let _ = writeln!(
                out,
                "    \"\"\"`{f}` as the input defines it: the input returns a view of its argument, \
                 and so does this (no copy; `{core}` computes the same values into an array).\"\"\"\n    \
                 return {view}"
            );
        }
        None => out.push_str(&call_core(l, target, &sp, &core)),
    }
    if target == Target::Pytorch {
        let _ = write!(
            out,
            "\n\n_{f}_compiled = []\n\n\ndef {f}_compiled({args}):\n    \"\"\"`{f}` through torch.compile (compiled on the first call).\"\"\"\n    if not _{f}_compiled:\n        _{f}_compiled.append(torch.compile({f}))\n    return _{f}_compiled[0]({args})\n",
            args = names(l)
        );
    }
    out
}

/// The body of a wrapper that allocates the outputs and calls the core.
fn call_core(l: &Lowered, target: Target, sp: &Spelling, core: &str) -> String {
    let f = &l.kernel.name;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "    \"\"\"`{f}` as the input defines it (same arguments, same result), computed by `{core}`.\"\"\""
    );
    let first_array = l.inputs.iter().find(|(_, t)| !t.dims.is_empty());
    for (size, (param, axis)) in size_sources(&l.inputs) {
        let _ = writeln!(out, "    {size} = {param}.shape[{axis}]");
    }
    let mut call_args: Vec<String> = l
        .kernel
        .params
        .iter()
        .filter(|p| !l.outputs.contains(&p.name))
        .map(|p| p.name.clone())
        .collect();
    for (name, t) in l.outputs.iter().zip(&l.results) {
        if name == "return" {
            continue;
        }
        let dtype = if t.dtype == ScalarType::F32 {
            sp.f32
        } else {
            sp.f64
        };
        let shape = shape_text(&t.shape);
        let alloc = match (target, first_array) {
            (Target::Pytorch, Some((a, _))) => {
                format!("torch.empty({shape}, dtype={dtype}, device={a}.device)")
            }
            (Target::Jax, _) => format!("jnp.zeros({shape}, dtype={dtype})"),
            _ => format!("{}.empty({shape}, dtype={dtype})", sp.module),
        };
        let _ = writeln!(out, "    {name} = {alloc}");
        call_args.push(name.clone());
    }
    let call = format!("{}({})", (sp.call)(core), call_args.join(", "));
    out.push_str(&result_lines(l, target, &call));
    out
}

/// Where the input returns one array that is a transposed view of one of
/// its arguments (`np.transpose(np.transpose(A))`, `A.T`), that view in
/// `target`'s spelling: the cheapest program copies nothing, and copying
/// into a fresh array (what the core's `out` needs) would make the result
/// cost a memory pass the input never paid.
fn view_of_input(l: &Lowered, target: Target) -> Option<String> {
    let ([result], [name], false) = (l.results.as_slice(), l.outputs.as_slice(), l.returns_tuple)
    else {
        return None;
    };
    if name == "return" || result.shape.is_empty() {
        return None;
    }
    let (param, perm) = transposed_input(result)?;
    if perm.iter().enumerate().all(|(i, p)| i == *p) {
        return Some(param);
    }
    let axes = perm
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match target {
        Target::Numpy => Some(format!("np.transpose({param}, ({axes},))")),
        Target::Jax => Some(format!("jnp.transpose({param}, ({axes},))")),
        Target::Pytorch => Some(format!("{param}.permute({axes})")),
        Target::Hlo => None,
    }
}

/// `t` as argument `name` with its axes permuted (result axis `i` is the
/// argument's axis `perm[i]`), when it is only transposes of it.
fn transposed_input(t: &T) -> Option<(String, Vec<usize>)> {
    match &t.node {
        Node::Input(name) => Some((name.clone(), (0..t.shape.len()).collect())),
        Node::View(inner, View::Transpose(perm)) => {
            let (name, inner_perm) = transposed_input(inner)?;
            let composed = perm
                .iter()
                .map(|&p| inner_perm.get(p).copied())
                .collect::<Option<Vec<usize>>>()?;
            Some((name, composed))
        }
        _ => None,
    }
}

/// The call and the `return` of the wrapper.
fn result_lines(l: &Lowered, target: Target, call: &str) -> String {
    let arrays: Vec<&str> = l
        .outputs
        .iter()
        .filter(|n| *n != "return")
        .map(String::as_str)
        .collect();
    let returned = if arrays.len() == 1 && !l.returns_tuple {
        arrays[0].to_string()
    } else {
        format!(
            "({})",
            arrays.join(", ") + if arrays.len() == 1 { "," } else { "" }
        )
    };
    match (target, arrays.is_empty()) {
        (Target::Jax, true) => format!("    _outputs, _result = {call}\n    return _result\n"),
        (Target::Jax, false) => {
            let unpacked = arrays.join(", ") + if arrays.len() == 1 { "," } else { "" };
            format!("    ({unpacked}), _result = {call}\n    return {returned}\n")
        }
        (_, true) => format!("    return {call}\n"),
        (_, false) => format!("    {call}\n    return {returned}\n"),
    }
}

fn names(l: &Lowered) -> String {
    l.inputs
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
