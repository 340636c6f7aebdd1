//! The Markdown report of one kernel, and the index over all kernels.

use std::fmt::Write as _;

use super::{KernelVerification, Status};
use crate::report::sizes_text;

fn fence(out: &mut String, lang: &str, text: &str) {
    // A fence longer than any backtick run inside the text.
    let longest = text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0)
        .max(2);
    let ticks = "`".repeat(longest + 1);
    let _ = writeln!(out, "{ticks}{lang}\n{}\n{ticks}\n", text.trim_end());
}

pub fn render_markdown(k: &KernelVerification) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Verification of `{}` ({})\n", k.function, k.file);
    let _ = writeln!(out, "| check | result |\n|---|---|");
    let _ = writeln!(out, "| bounded (Z3) | {} |", k.bounded_status().name());
    let _ = writeln!(
        out,
        "| unbounded (Z3, invariants) | {} |",
        k.unbounded_status()
    );
    let _ = writeln!(
        out,
        "| differential (gcc vs generated code) | {} |",
        k.differential.verdict.name()
    );
    let _ = writeln!(out, "| header status | {} |\n", k.header_status());
    if !k.reason.is_empty() {
        let _ = writeln!(out, "Reason: {}\n", k.reason);
    }
    let (file, start, end) = &k.source_range;
    let _ = writeln!(out, "## C source ({file}:{start}-{end})\n");
    fence(&mut out, "c", &k.source_text);
    let _ = writeln!(out, "## Program ({})\n", k.program_origin);
    match &k.program_text {
        Some(p) => fence(&mut out, "", p),
        None => out.push_str("No program.\n\n"),
    }
    let _ = writeln!(out, "## Arithmetic model\n\n{}\n", k.arithmetic);
    let _ = writeln!(out, "## Bounded check\n");
    if k.bounded.is_empty() {
        out.push_str("Not run.\n\n");
    }
    for b in &k.bounded {
        let _ = writeln!(
            out,
            "### sizes {}: {}\n",
            sizes_text(&b.sizes),
            b.status.name()
        );
        if b.status != Status::Pass || !b.detail.is_empty() {
            fence(&mut out, "", &b.detail);
        }
    }
    let _ = writeln!(out, "## Unbounded proof: {}\n", k.unbounded.status);
    if !k.unbounded.detail.is_empty() {
        let _ = writeln!(out, "{}\n", k.unbounded.detail);
    }
    if !k.unbounded.arithmetic.is_empty() {
        let _ = writeln!(
            out,
            "Arithmetic: {}; {} verification conditions.\n",
            k.unbounded.arithmetic, k.unbounded.conditions
        );
    }
    if !k.unbounded.invariants.is_empty() {
        out.push_str("Invariants:\n\n");
        fence(&mut out, "", &k.unbounded.invariants.join("\n"));
    }
    let d = &k.differential;
    let _ = writeln!(
        out,
        "## Differential runs: {}\n\n{}\n",
        d.verdict.name(),
        d.reason
    );
    if !d.runs.is_empty() {
        let _ = writeln!(
            out,
            "| target | inputs | sizes | output | max abs error | max rel error | tolerance | result |\n|---|---|---|---|---|---|---|---|"
        );
        for r in &d.runs {
            if r.outputs.is_empty() {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | | | | | {}: {} |",
                    r.target,
                    r.reference,
                    sizes_text(&r.sizes),
                    r.verdict.name(),
                    r.reason.replace('|', "\\|").replace('\n', " ")
                );
            }
            for o in &r.outputs {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} ({}) | {:.3e} | {:.3e} | {} | {} |",
                    r.target,
                    r.reference,
                    sizes_text(&r.sizes),
                    o.name,
                    o.dtype,
                    o.max_abs,
                    o.max_rel,
                    if o.tolerance == 0.0 {
                        "exact".to_string()
                    } else {
                        format!("{:.2e}", o.tolerance)
                    },
                    if o.mismatches == 0 {
                        "pass".to_string()
                    } else {
                        format!("fail ({} of {})", o.mismatches, o.elements)
                    }
                );
            }
        }
        out.push('\n');
    }
    out
}

pub fn render_markdown_index(kernels: &[KernelVerification]) -> String {
    let mut out = String::from("# Verification reports\n\n");
    let _ = writeln!(
        out,
        "| kernel | file | bounded | unbounded | differential | status |\n|---|---|---|---|---|---|"
    );
    for k in kernels {
        let _ = writeln!(
            out,
            "| [{}]({}.md) | {} | {} | {} | {} | {} |",
            k.function,
            k.stem(),
            k.file,
            k.bounded_status().name(),
            k.unbounded_status(),
            k.differential.verdict.name(),
            k.header_status().replace('|', "\\|")
        );
    }
    out
}
