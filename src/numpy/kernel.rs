//! One Python function to one loop-IR [`Kernel`]: its parameters (the
//! sizes first, then the Python parameters, then one output array per
//! returned array), and the loop nests of [`super::loops`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tenslift_frontend::diagnostics::Diagnostic;
use tenslift_frontend::ir::{
    Affine, ArrayInfo, Kernel, Loc, Origin, Param, ParamKind, Role, SourceRange, Stmt, Storage,
};

use super::diagnostics::{error, BAD_SIGNATURE, MISSING_SHAPE, UNSUPPORTED_SIGNATURE};
use super::eval::{Evaluator, Returned, Value};
use super::ir::{self, Node, T};
use super::loops::{Dest, Lowering};
use super::signature::{Declared, ParamType};
use super::syntax::Function;

/// A NumPy function read and lowered.
#[derive(Debug)]
pub struct Lowered {
    pub kernel: Kernel,
    /// The Python parameters, in order, with their declared types.
    pub inputs: Vec<(String, ParamType)>,
    /// The kernel's output arrays, in the order the function returns
    /// them (`["return"]` for a returned 0-d value).
    pub outputs: Vec<String>,
    /// Whether the function returns a tuple.
    pub returns_tuple: bool,
    /// The returned values as npir (for the input's TensIR).
    pub results: Vec<T>,
}

/// What the lowering needs beyond the function itself.
pub struct Context<'a> {
    pub file: &'a str,
    pub source: &'a str,
    /// Names bound to the numpy module.
    pub numpy_names: Vec<String>,
    /// `--shapes`, which wins over the comment.
    pub overrides: &'a [(String, ParamType)],
}

/// Lowers `f`, or every diagnostic that stops it.
pub fn lower(f: &Function, cx: &Context) -> Result<Lowered, Vec<Diagnostic>> {
    let loc = |line, col| Loc {
        file: cx.file.to_string(),
        line,
        col,
    };
    let def = loc(f.line, f.col);
    if let Some(what) = f.unsupported.first() {
        let message = format!("`{}` has {what}", f.name);
        return Err(vec![error(UNSUPPORTED_SIGNATURE, def, message)]);
    }
    let declared = declarations(f, cx)?;
    let mut sizes: Vec<String> = Vec::new();
    for (_, ty, _) in &declared {
        for d in &ty.dims {
            for v in d.terms.keys() {
                if !sizes.contains(v) {
                    sizes.push(v.clone());
                }
            }
        }
    }
    if let Some((name, _, at)) = declared.iter().find(|(n, _, _)| sizes.contains(n)) {
        let message = format!("`{name}` is both a parameter and a size");
        return Err(vec![error(BAD_SIGNATURE, at.clone(), message)]);
    }
    let mut ev = Evaluator {
        file: cx.file,
        numpy_names: cx.numpy_names.clone(),
        env: HashMap::new(),
        taken: declared
            .iter()
            .map(|(n, _, _)| n.clone())
            .chain(sizes.iter().cloned())
            .collect(),
    };
    for (name, ty, at) in &declared {
        let t = ir::node(
            Node::Input(name.clone()),
            ty.dims.clone(),
            ty.dtype,
            false,
            at,
        );
        ev.env.insert(name.clone(), Value::Tensor(t));
    }
    let returned = ev.run(&f.body, &def).map_err(|d| vec![d])?;
    let (results, tuple) = match returned {
        Returned::One(t) => (vec![t], false),
        Returned::Many(ts) => (ts, true),
    };
    Ok(assemble(f, cx, declared, sizes, ev.taken, results, tuple))
}

/// Each Python parameter with its type and where it was declared.
fn declarations(
    f: &Function,
    cx: &Context,
) -> Result<Vec<(String, ParamType, Loc)>, Vec<Diagnostic>> {
    let comment =
        super::signature::from_comment(cx.source, cx.file, f.first_line).map_err(|d| vec![d])?;
    let mut problems = Vec::new();
    for Declared { name, loc, .. } in &comment {
        if !f.params.iter().any(|p| &p.name == name) {
            problems.push(error(
                BAD_SIGNATURE,
                loc.clone(),
                format!("`{name}` is not a parameter of `{}`", f.name),
            ));
        }
    }
    let mut out = Vec::new();
    for p in &f.params {
        let at = Loc {
            file: cx.file.to_string(),
            line: p.line,
            col: p.col,
        };
        let given = cx
            .overrides
            .iter()
            .find(|(n, _)| n == &p.name)
            .map(|(_, t)| t.clone());
        let commented = comment
            .iter()
            .find(|d| d.name == p.name)
            .map(|d| d.ty.clone());
        match given.or(commented) {
            Some(ty) => out.push((p.name.clone(), ty, at)),
            None => problems.push(error(
                MISSING_SHAPE,
                at,
                format!(
                    "no shape for `{}`: declare it above the def (`# tenslift: {}: f64[n, m]`) or pass --shapes {}=n,m",
                    p.name, p.name, p.name
                ),
            )),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// The kernel: parameters, the loop nests computing every result.
fn assemble(
    f: &Function,
    cx: &Context,
    declared: Vec<(String, ParamType, Loc)>,
    sizes: Vec<String>,
    mut taken: BTreeSet<String>,
    results: Vec<T>,
    tuple: bool,
) -> Lowered {
    let def = Loc {
        file: cx.file.to_string(),
        line: f.line,
        col: f.col,
    };
    let size_param = |name: &String| Param {
        name: name.clone(),
        kind: ParamKind::Scalar {
            ty: tenslift_frontend::ir::ScalarType::I64,
            is_size: true,
        },
        role: Role::Input,
        origin: Origin::Argument,
        loc: def.clone(),
    };
    let mut params: Vec<Param> = sizes.iter().map(size_param).collect();
    for (name, ty, at) in &declared {
        let kind = if ty.dims.is_empty() {
            ParamKind::Scalar {
                ty: ty.dtype,
                is_size: false,
            }
        } else {
            ParamKind::Array(array_info(ty.dtype, &ty.dims))
        };
        params.push(Param {
            name: name.clone(),
            kind,
            role: Role::Input,
            origin: Origin::Argument,
            loc: at.clone(),
        });
    }
    let returns_scalar = !tuple && results[0].shape.is_empty();
    let outputs: Vec<String> = if returns_scalar {
        vec!["return".to_string()]
    } else {
        (0..results.len())
            .map(|i| fresh_output(&mut taken, tuple.then_some(i)))
            .collect()
    };
    let mut lowering = Lowering::new(sizes.iter().cloned().collect(), taken);
    let mut returns = None;
    for (t, name) in results.iter().zip(&outputs) {
        if returns_scalar {
            let d = lowering.materialise_value(t);
            lowering.push(Stmt::Return {
                value: d,
                loc: t.loc.clone(),
            });
            returns = Some(t.dtype);
            continue;
        }
        params.push(Param {
            name: name.clone(),
            kind: ParamKind::Array(array_info(t.dtype, &t.shape)),
            role: Role::Output,
            origin: Origin::Argument,
            loc: t.loc.clone(),
        });
        let dest = Dest {
            name: name.clone(),
            scalar: false,
            ty: t.dtype,
        };
        lowering.fill(t, &dest);
    }
    let (body, locals) = lowering.finish();
    let kernel = Kernel {
        name: f.name.clone(),
        range: SourceRange {
            file: cx.file.to_string(),
            start_line: f.first_line,
            end_line: f.end_line,
        },
        params,
        locals,
        body,
        returns,
        histograms: Vec::new(),
        assumed_set: Vec::new(),
        negative_steps: Vec::new(),
        guards: Vec::new(),
        struct_arrays: Vec::new(),
        asserted: Vec::new(),
        entered: Vec::new(),
        case: None,
    };
    Lowered {
        kernel,
        inputs: declared.into_iter().map(|(n, t, _)| (n, t)).collect(),
        outputs,
        returns_tuple: tuple,
        results,
    }
}

fn array_info(elem: tenslift_frontend::ir::ScalarType, dims: &[Affine]) -> ArrayInfo {
    ArrayInfo {
        elem,
        dims: dims.iter().cloned().map(Some).collect(),
        storage: Storage::Declared,
    }
}

/// `out` (or `out0`, `out1` for a tuple), made unique.
fn fresh_output(taken: &mut BTreeSet<String>, index: Option<usize>) -> String {
    let base = index.map_or("out".to_string(), |i| format!("out{i}"));
    let name = std::iter::once(base.clone())
        .chain((1..).map(|k| format!("{base}_{k}")))
        .find(|n| !taken.contains(n))
        .unwrap_or(base);
    taken.insert(name.clone());
    name
}

/// Every size name, with the first Python parameter and axis it is read
/// from (the generated wrapper reads each size off its argument's shape).
pub fn size_sources(inputs: &[(String, ParamType)]) -> BTreeMap<String, (String, usize)> {
    let mut out = BTreeMap::new();
    for (name, ty) in inputs {
        for (axis, d) in ty.dims.iter().enumerate() {
            if let [(size, 1)] = d
                .terms
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>()[..]
            {
                if d.constant == 0 {
                    out.entry(size.to_string()).or_insert((name.clone(), axis));
                }
            }
        }
    }
    out
}
