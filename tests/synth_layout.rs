//! The synthesizer's source stays navigable (issue 15): every function of
//! `src/synth` fits on a screen, and its modules import one another without
//! a cycle, so that following one kernel through the code goes one way.
//!
//! Both checks read the source text. Test code (`tests.rs` files and
//! `#[cfg(test)]` modules) is left out; `mod` declarations and `pub use`
//! re-exports of a `mod.rs` are the module tree's facade, not dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest function allowed, in lines (signature to closing brace).
const MAX_FUNCTION_LINES: usize = 80;

const SYNTH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/synth");

/// Every non-test `.rs` file under `src/synth`, with its module path
/// (`synth::sketch::select`).
fn modules() -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect(Path::new(SYNTH), &mut out);
    out.sort();
    out.into_iter()
        .map(|path| {
            let rel = path.strip_prefix(SYNTH).expect("under synth");
            let mut parts: Vec<String> = vec!["synth".into()];
            for c in rel.components() {
                let name = c
                    .as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string();
                if name != "mod" {
                    parts.push(name);
                }
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            (parts.join("::"), strip_tests(&text))
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("synth dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The text before the first `#[cfg(test)]` (test modules close files).
fn strip_tests(text: &str) -> String {
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// Each function's name and length in lines, brace-matched (strings and
/// comments stripped first).
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<String> = text.lines().map(code_of).collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let mut depth = 0i32;
        let mut opened = false;
        for (j, l) in lines.iter().enumerate().skip(i) {
            if !opened && depth == 0 && l.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
            for ch in l.chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth == 0 {
                out.push((name.clone(), j - i + 1));
                break;
            }
        }
    }
    out
}

/// A line's code: without its comment and the contents of string and char
/// literals.
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '/' if !in_string && chars.peek() == Some(&'/') => break,
            '\'' if !in_string => {
                // A char literal ('{') or a lifetime ('a): skip a literal.
                let rest: String = chars.clone().take(3).collect();
                if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                } else if rest.starts_with('\\') {
                    for d in chars.by_ref() {
                        if d == '\'' {
                            break;
                        }
                    }
                }
            }
            _ if in_string => {}
            _ => out.push(c),
        }
    }
    out
}

fn fn_name(line: &str) -> Option<String> {
    let at = line.find("fn ")?;
    let before = line[..at].trim();
    let allowed = [
        "",
        "pub",
        "pub(crate)",
        "pub(super)",
        "const",
        "pub const",
        "unsafe",
    ];
    if !allowed.contains(&before) {
        return None;
    }
    let rest = &line[at + 3..];
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn every_function_of_synth_fits_on_a_screen() {
    let mut long = Vec::new();
    for (module, text) in modules() {
        for (name, lines) in function_lengths(&text) {
            if lines > MAX_FUNCTION_LINES {
                long.push(format!("{module}::{name}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The synth modules `text` (of `module`) imports, resolved to the deepest
/// existing module named by each path.
fn imports(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let is_mod_rs = known.iter().any(|k| k.starts_with(&format!("{module}::")));
    let mut out = BTreeSet::new();
    for line in text.lines().map(code_of) {
        let line = line.trim();
        if line.starts_with("mod ") || line.starts_with("pub mod ") {
            continue;
        }
        if is_mod_rs && line.starts_with("pub use ") {
            continue; // the facade of a directory module
        }
        for path in paths_in(line) {
            if let Some(target) = resolve(module, &path, known) {
                if target != module {
                    out.insert(target);
                }
            }
        }
    }
    out
}

/// The `super::a::b` and `crate::synth::a::b` paths of a line (the first
/// segments of a `use` group included).
fn paths_in(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for start in ["crate::synth::", "super::"] {
        let mut rest = line;
        while let Some(at) = rest.find(start) {
            let tail = &rest[at..];
            let path: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            );
            rest = &tail[path.len().max(1)..];
        }
    }
    out
}

/// The module a path names (its longest prefix that is a known module);
/// each `super` climbs one level from `module`.
fn resolve(module: &str, path: &[String], known: &BTreeSet<String>) -> Option<String> {
    let mut base: Vec<&str> = module.split("::").collect();
    let mut segments = path.iter().map(String::as_str).peekable();
    if segments.peek() == Some(&"crate") {
        base.clear();
        segments.next();
    }
    while segments.peek() == Some(&"super") {
        segments.next();
        base.pop();
    }
    let mut current = base.join("::");
    let mut best = known.contains(&current).then(|| current.clone());
    for s in segments {
        current = if current.is_empty() {
            s.to_string()
        } else {
            format!("{current}::{s}")
        };
        if !known.contains(&current) {
            break;
        }
        best = Some(current.clone());
    }
    best
}

#[test]
fn synth_modules_import_one_another_without_a_cycle() {
    let modules = modules();
    let known: BTreeSet<String> = modules.iter().map(|(m, _)| m.clone()).collect();
    let graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|(m, text)| (m.clone(), imports(m, text, &known)))
        .collect();
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle in src/synth: {}", cycle.join(" -> "));
    }
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let at = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = stack[at..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn the_cycle_finder_sees_a_cycle_and_the_resolver_climbs_supers() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), ["b".to_string()].into()),
        ("b".to_string(), ["a".to_string()].into()),
    ]
    .into();
    assert!(find_cycle(&graph).is_some());
    let known: BTreeSet<String> = [
        "synth",
        "synth::search",
        "synth::sketch",
        "synth::sketch::select",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let path = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    // In synth/sketch/select.rs, `super::x` is synth::sketch, `crate::synth::search::Found` is search.
    assert_eq!(
        resolve("synth::sketch::select", &path("super::literal"), &known).as_deref(),
        Some("synth::sketch")
    );
    assert_eq!(
        resolve(
            "synth::sketch::select",
            &path("crate::synth::search::Found"),
            &known
        )
        .as_deref(),
        Some("synth::search")
    );
    // In synth/sketch/mod.rs, `super::search` is synth::search.
    assert_eq!(
        resolve("synth::sketch", &path("super::search::Search"), &known).as_deref(),
        Some("synth::search")
    );
    assert_eq!(
        function_lengths("fn f() {\n    let s = \"}\";\n}\n"),
        vec![("f".to_string(), 3)]
    );
}
