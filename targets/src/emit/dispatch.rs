//! The dispatcher of a C function lifted by cases: it takes what the C
//! takes, runs the C's own tests on the flags (`trans == 'N'`, `!TA &&
//! TB`), and calls the program lifted for the case they pick. The cases
//! are emitted before it, each a function of its own (`sgemv_case1`);
//! every Python target calls them alike, with the caller's arguments.
//! StableHLO has no dispatcher: a module computes one case.

use super::python::guard_condition;
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

/// The dispatcher `name` over the cases of `tree`; `first` is one case's
/// program (every case takes the C's parameters, in its order) and
/// `flags` the parameters the tests read.
pub fn emit_dispatch(
    name: &str,
    first: &Program,
    tree: &Dispatch,
    flags: &[String],
    target: Target,
) -> Result<String, EmitError> {
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
    let mut out = format!(
        "\n\n# `{name}`: the C's own tests on {} pick the case.\n\n\ndef {name}({args}):\n",
        flags.join(", ")
    );
    out.push_str(&docstring(tree, &names));
    for f in flags {
        let Some(p) = first.param(f) else { continue };
        if let ParamKind::Scalar(d) = p.kind {
            let n = names.get(f);
            out.push_str(&format!("    {n} = {}\n", as_c_int(&n, d)));
        }
    }
    branch(tree, &names, &args, "    ", &mut out);
    Ok(out)
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
fn branch(tree: &Dispatch, names: &NameMap, args: &str, indent: &str, out: &mut String) {
    chain(tree, names, args, indent, "if", out)
}

fn chain(
    tree: &Dispatch,
    names: &NameMap,
    args: &str,
    indent: &str,
    keyword: &str,
    out: &mut String,
) {
    match tree {
        Dispatch::Case(f) => out.push_str(&format!("{indent}return {f}({args})\n")),
        Dispatch::Test {
            cond,
            then,
            otherwise,
        } => {
            let inner = format!("{indent}    ");
            let cond = guard_condition(cond, names);
            out.push_str(&format!("{indent}{keyword} {cond}:\n"));
            branch(then, names, args, &inner, out);
            match &**otherwise {
                Dispatch::Test { .. } => chain(otherwise, names, args, indent, "elif", out),
                case => {
                    out.push_str(&format!("{indent}else:\n"));
                    branch(case, names, args, &inner, out);
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
            &program(),
            &tree,
            &["trans".to_string()],
            Target::Numpy,
        )
        .expect("emits");
        insta::assert_snapshot!(text);
        let hlo = emit_dispatch("f", &program(), &tree, &["trans".to_string()], Target::Hlo);
        assert!(matches!(hlo, Err(EmitError::Unsupported(_))));
    }
}
