//! Renames TensIR identifiers that would clash in generated Python: Python
//! keywords, builtins, the module aliases the generated code imports, and
//! names reserved for helpers. Renaming is consistent within a program.

use std::collections::{HashMap, HashSet};

use crate::program::{Program, Stmt};

const PYTHON_RESERVED: &[&str] = &[
    // keywords and soft keywords
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "match",
    "case",
    "type",
    // builtins a kernel might plausibly be named after
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "dict",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "hash",
    "id",
    "input",
    "int",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "open",
    "pow",
    "print",
    "range",
    "repr",
    "round",
    "set",
    "slice",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
    "complex",
    "super",
    "vars",
    "globals",
    "locals",
    "compile",
    // modules the generated code imports
    "np",
    "numpy",
    "jnp",
    "jax",
    "lax",
    "torch",
    "functools",
    "math",
];

/// The target-language spelling of every name in a program.
#[derive(Clone, Debug)]
pub struct NameMap {
    map: HashMap<String, String>,
}

impl NameMap {
    /// Builds the renaming for `program`; `extra_reserved` lists names the
    /// emitter itself defines (e.g. `gemm_jit`).
    pub fn for_program(program: &Program, extra_reserved: &[String]) -> NameMap {
        let mut taken: HashSet<String> = PYTHON_RESERVED.iter().map(|s| s.to_string()).collect();
        taken.extend(extra_reserved.iter().cloned());
        let mut names: Vec<&str> = vec![&program.name];
        names.extend(program.params.iter().map(|p| &*p.name));
        names.extend(program.statements().into_iter().filter_map(|s| match s {
            Stmt::Let { name, .. } | Stmt::Var { name, .. } | Stmt::Loop { var: name, .. } => {
                Some(&**name)
            }
            Stmt::Store { .. } | Stmt::Return(_) => None,
        }));
        // Names that need no renaming keep their spelling first, so a
        // renamed one never takes an existing name.
        let mut map = HashMap::new();
        for n in &names {
            let clashes = taken.contains(*n) || n.starts_with('_');
            if !clashes {
                map.insert(n.to_string(), n.to_string());
            }
        }
        taken.extend(map.values().cloned());
        for n in names {
            if map.contains_key(n) {
                continue;
            }
            let base = if n.starts_with('_') {
                format!("v{n}")
            } else {
                n.to_string()
            };
            let mut candidate = format!("{base}_");
            while taken.contains(&candidate) {
                candidate.push('_');
            }
            taken.insert(candidate.clone());
            map.insert(n.to_string(), candidate);
        }
        NameMap { map }
    }

    /// The generated spelling of `name` (names not in the program pass
    /// through; they were validated as identifiers).
    pub fn get(&self, name: &str) -> String {
        self.map
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }
}
