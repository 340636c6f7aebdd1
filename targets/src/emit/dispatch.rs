//! The dispatcher of a C function lifted by cases: it takes what the C
//! takes, runs the C's own tests on the flags (`trans == 'N'`, `!TA &&
//! TB`), and calls the program lifted for the case they pick. The cases
//! are emitted before it, each a function of its own (`sgemv_case1`);
//! every Python target calls them alike, with the caller's arguments.
//! StableHLO has no dispatcher: a module computes one case.

use super::python::{guard_condition, py_shape};
use super::{EmitError, NameMap, Target};
use crate::program::{ParamKind, Program};
use crate::DType;

/// The tests that pick a case: each condition a Python expression over
/// the flags written `{name}` (as [`crate::program::Guard`] spells them),
/// each leaf the name of a case's function.
#[derive(Clone, Debug, PartialEq)]
pub enum Dispatch {
    Case(String),
    Test {
        cond: String,
        then: Box<Dispatch>,
        otherwise: Box<Dispatch>,
    },
}

/// The dispatcher `name` over the cases of `tree`; `programs` are the
/// cases' programs (every case takes the C's parameters, in its order;
/// the first names them) and `flags` the parameters the tests read.
///
/// Where the cases take an array in different shapes (the unit-increment
/// case `x: f64[n]`, the general one `x: f64[n, incx]`), each call passes
/// the caller's array reshaped to its case's shape when the two differ:
/// the same elements (`(n, 1)` is `(n,)` at `incx == 1`), a view of them
/// where NumPy and PyTorch can make one, so that updates in place reach
/// the caller.
pub fn emit_dispatch(
    name: &str,
    programs: &[Program],
    tree: &Dispatch,
    flags: &[String],
    target: Target,
) -> Result<String, EmitError> {
    let Some(first) = programs.first() else {
        return Err(EmitError::Unsupported(format!("`{name}` has no case")));
    };
    if target == Target::Hlo {
        return Err(EmitError::Unsupported(format!(
            "`{name}` picks its computation by testing {}; a StableHLO module computes one \
             case (lift to numpy, jax or pytorch for the dispatcher)",
            flags.join(", ")
        )));
    }
    let names = NameMap::for_program(first, &[name.to_string()]);
    let args: Vec<String> = first.params.iter().map(|p| names.get(&p.name)).collect();
    let args = args.join(", ");
    let calls = CaseCalls {
        programs,
        names: &names,
        args: args.clone(),
    };
    let mut out = format!(
        "\n\n# `{name}`: the C's own tests on {} pick the case.\n",
        flags.join(", ")
    );
    if calls.reshapes() {
        out.push_str(CASE_VIEW_DEF);
    }
    out.push_str(&format!("\n\ndef {name}({args}):\n"));
    out.push_str(&docstring(tree, &names));
    for f in flags {
        let Some(p) = first.param(f) else { continue };
        if let ParamKind::Scalar(d) = p.kind {
            let n = names.get(f);
            out.push_str(&format!("    {n} = {}\n", as_c_int(&n, d)));
        }
    }
    branch(tree, &calls, "    ", &mut out);
    Ok(out)
}

/// The helper that gives a case its arrays in its own shapes.
const CASE_VIEW: &str = "_tenslift_case_view";

/// Its definition: the caller's array when it has the case's shape, else
/// its leading elements in that shape (what the C reads of the buffer: the
/// unit-increment case's `(n,)` of a `(n, 1)` array, nothing of it at `n =
/// 0`), a view where the library makes one.
const CASE_VIEW_DEF: &str = "\n\ndef _tenslift_case_view(x, shape):
    \"\"\"`x` in the shape a case's program takes: itself when it has that
    shape, else its leading elements in that shape (a view where the
    library makes one, so that updates in place reach the caller).\"\"\"
    shape = tuple(int(d) for d in shape)
    if tuple(x.shape) == shape:
        return x
    count = 1
    for d in shape:
        count *= d
    return x.reshape(-1)[:count].reshape(shape)
";

/// How the dispatcher calls each case: the caller's arguments, an array
/// reshaped where the cases take it in different shapes.
struct CaseCalls<'a> {
    programs: &'a [Program],
    names: &'a NameMap,
    /// The caller's arguments, in the C's order.
    args: String,
}

impl CaseCalls<'_> {
    fn call(&self, case: &str) -> String {
        // A case without its program here takes the caller's arguments.
        let Some(program) = self.programs.iter().find(|p| &*p.name == case) else {
            return format!("{case}({})", self.args);
        };
        let args: Vec<String> = program
            .params
            .iter()
            .map(|p| {
                let n = self.names.get(&p.name);
                match &p.kind {
                    ParamKind::Array { shape, .. } if !self.same_everywhere(&p.name, shape) => {
                        format!("{CASE_VIEW}({n}, {})", py_shape(shape, self.names))
                    }
                    _ => n,
                }
            })
            .collect();
        format!("{case}({})", args.join(", "))
    }

    /// Whether some case takes an array in a shape another does not.
    fn reshapes(&self) -> bool {
        self.programs
            .iter()
            .flat_map(|p| &p.params)
            .any(|q| match &q.kind {
                ParamKind::Array { shape, .. } => !self.same_everywhere(&q.name, shape),
                _ => false,
            })
    }

    /// Whether every case takes the array `name` in the shape `shape`.
    fn same_everywhere(&self, name: &str, shape: &[crate::Dim]) -> bool {
        self.programs
            .iter()
            .all(|p| match p.param(name).map(|q| &q.kind) {
                Some(ParamKind::Array { shape: other, .. }) => other.as_slice() == shape,
                _ => true,
            })
    }
}

/// What the dispatcher says of itself: each case and its conditions.
fn docstring(tree: &Dispatch, names: &NameMap) -> String {
    let mut cases = Vec::new();
    list_cases(tree, &mut Vec::new(), names, &mut cases);
    let mut text = format!(
        "    \"\"\"The C computes one of {} cases, picked by its own tests on its flags;\n    \
         each case is lifted and verified as its own function:\n",
        cases.len()
    );
    for (f, conds) in cases {
        text.push_str(&format!("\n    - `{f}` when {}", conds.join(" and ")));
    }
    text.push_str(
        "\n\n    A flag given as a one-character string is its character code, as C reads a `char`.\n    \"\"\"\n",
    );
    text
}

fn list_cases(
    tree: &Dispatch,
    path: &mut Vec<String>,
    names: &NameMap,
    out: &mut Vec<(String, Vec<String>)>,
) {
    match tree {
        Dispatch::Case(f) => out.push((f.clone(), path.clone())),
        Dispatch::Test {
            cond,
            then,
            otherwise,
        } => {
            let c = guard_condition(cond, names);
            path.push(c.clone());
            list_cases(then, path, names, out);
            path.pop();
            path.push(format!("not {c}"));
            list_cases(otherwise, path, names, out);
            path.pop();
        }
    }
}

/// The tests of `tree` as `if`/`elif`/`else` (`keyword` opens a test).
fn branch(tree: &Dispatch, calls: &CaseCalls<'_>, indent: &str, out: &mut String) {
    chain(tree, calls, indent, "if", out)
}

fn chain(tree: &Dispatch, calls: &CaseCalls<'_>, indent: &str, keyword: &str, out: &mut String) {
    match tree {
        Dispatch::Case(f) => out.push_str(&format!("{indent}return {}\n", calls.call(f))),
        Dispatch::Test {
            cond,
            then,
            otherwise,
        } => {
            let inner = format!("{indent}    ");
            let cond = guard_condition(cond, calls.names);
            out.push_str(&format!("{indent}{keyword} {cond}:\n"));
            branch(then, calls, &inner, out);
            match &**otherwise {
                Dispatch::Test { .. } => chain(otherwise, calls, indent, "elif", out),
                case => {
                    out.push_str(&format!("{indent}else:\n"));
                    branch(case, calls, &inner, out);
                }
            }
        }
    }
}

/// The flag `n` as the C's integer of type `d` (a one-character string as
/// its code; a value out of range wraps, as C's conversion does).
fn as_c_int(n: &str, d: DType) -> String {
    let value = format!("(ord({n}) if isinstance({n}, str) else int({n}))");
    let bits = d.bits();
    if d == DType::Bool {
        return format!("int({value} != 0)");
    }
    match d.is_signed_int() {
        true => format!(
            "({value} + {h}) % {m} - {h}",
            h = 1u128 << (bits - 1),
            m = 1u128 << bits
        ),
        false => format!("{value} % {}", 1u128 << bits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_program;

    fn program() -> Program {
        let text = "func f_case1(trans: i8, n: size, x: f32[n], y: out f32[n]) {\n  y = x;\n}\n";
        parse_program("t.tensir", text).unwrap_or_else(|d| panic!("{d}"))
    }

    /// Two cases on a `char`: the flag read as C reads it, the C's test,
    /// each case called with the caller's arguments.
    #[test]
    fn a_dispatcher_runs_the_tests_and_calls_the_case() {
        let tree = Dispatch::Test {
            cond: "({trans} == 78)".to_string(),
            then: Box::new(Dispatch::Case("f_case1".to_string())),
            otherwise: Box::new(Dispatch::Case("f_case2".to_string())),
        };
        let text = emit_dispatch(
            "f",
            &[program()],
            &tree,
            &["trans".to_string()],
            Target::Numpy,
        )
        .expect("emits");
        insta::assert_snapshot!(text);
        let hlo = emit_dispatch(
            "f",
            &[program()],
            &tree,
            &["trans".to_string()],
            Target::Hlo,
        );
        assert!(matches!(hlo, Err(EmitError::Unsupported(_))));
    }
}
