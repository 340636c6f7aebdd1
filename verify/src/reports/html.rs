//! One self-contained HTML page per kernel (inline style, no scripts, no
//! external resources): the Markdown report's content as HTML.

use std::fmt::Write as _;

use super::{KernelVerification, Status};
use crate::report::sizes_text;

const STYLE: &str = "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}\
pre{background:#f4f4f4;padding:.6em;overflow:auto}table{border-collapse:collapse}\
td,th{border:1px solid #bbb;padding:.2em .5em}.pass,.proved{color:#070}.fail{color:#b00}\
.unknown,.skipped{color:#a60}";

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

fn badge(status: &str) -> String {
    let class = status.split_whitespace().next().unwrap_or("unknown");
    format!(
        "<span class=\"{}\">{}</span>",
        escape(class),
        escape(status)
    )
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        escape(title)
    )
}

pub fn render_html(k: &KernelVerification) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>Verification of <code>{}</code> ({})</h1>",
        escape(&k.function),
        escape(&k.file)
    );
    let _ = writeln!(b, "<table><tr><th>check</th><th>result</th></tr>");
    let _ = writeln!(
        b,
        "<tr><td>bounded (Z3)</td><td>{}</td></tr>",
        badge(k.bounded_status().name())
    );
    let _ = writeln!(
        b,
        "<tr><td>unbounded (Z3, invariants)</td><td>{}</td></tr>",
        badge(k.unbounded_status())
    );
    let _ = writeln!(
        b,
        "<tr><td>differential</td><td>{}</td></tr>",
        badge(k.differential.verdict.name())
    );
    let _ = writeln!(
        b,
        "<tr><td>header status</td><td>{}</td></tr></table>",
        escape(&k.header_status())
    );
    if !k.reason.is_empty() {
        let _ = writeln!(b, "<p>Reason: {}</p>", escape(&k.reason));
    }
    let (file, start, end) = &k.source_range;
    let _ = writeln!(
        b,
        "<h2>C source ({}:{start}-{end})</h2><pre>{}</pre>",
        escape(file),
        escape(&k.source_text)
    );
    let _ = writeln!(
        b,
        "<h2>Program ({})</h2><pre>{}</pre>",
        escape(&k.program_origin),
        escape(k.program_text.as_deref().unwrap_or("No program."))
    );
    let _ = writeln!(
        b,
        "<h2>Arithmetic model</h2><p>{}</p>",
        escape(&k.arithmetic)
    );
    let _ = writeln!(b, "<h2>Bounded check</h2>");
    for run in &k.bounded {
        let _ = writeln!(
            b,
            "<h3>sizes {}: {}</h3>",
            escape(&sizes_text(&run.sizes)),
            badge(run.status.name())
        );
        if run.status != Status::Pass || !run.detail.is_empty() {
            let _ = writeln!(b, "<pre>{}</pre>", escape(&run.detail));
        }
    }
    let _ = writeln!(
        b,
        "<h2>Unbounded proof: {}</h2>",
        badge(&k.unbounded.status)
    );
    if !k.unbounded.detail.is_empty() {
        let _ = writeln!(b, "<p>{}</p>", escape(&k.unbounded.detail));
    }
    if !k.unbounded.arithmetic.is_empty() {
        let _ = writeln!(
            b,
            "<p>Arithmetic: {}; {} verification conditions.</p>",
            escape(&k.unbounded.arithmetic),
            k.unbounded.conditions
        );
    }
    if !k.unbounded.invariants.is_empty() {
        let _ = writeln!(
            b,
            "<pre>{}</pre>",
            escape(&k.unbounded.invariants.join("\n"))
        );
    }
    let d = &k.differential;
    let _ = writeln!(
        b,
        "<h2>Differential runs: {}</h2><p>{}</p>",
        badge(d.verdict.name()),
        escape(&d.reason)
    );
    if !d.runs.is_empty() {
        b.push_str("<table><tr><th>target</th><th>inputs</th><th>sizes</th><th>output</th><th>max abs</th><th>max rel</th><th>tolerance</th><th>result</th></tr>\n");
        for r in &d.runs {
            if r.outputs.is_empty() {
                let _ = writeln!(
                    b,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td colspan=\"4\"></td><td>{}: {}</td></tr>",
                    escape(&r.target), escape(&r.reference), escape(&sizes_text(&r.sizes)),
                    badge(r.verdict.name()), escape(&r.reason)
                );
            }
            for o in &r.outputs {
                let _ = writeln!(
                    b,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{:.3e}</td><td>{:.3e}</td><td>{}</td><td>{}</td></tr>",
                    escape(&r.target), escape(&r.reference), escape(&sizes_text(&r.sizes)),
                    escape(&o.name), escape(&o.dtype), o.max_abs, o.max_rel,
                    if o.tolerance == 0.0 { "exact".to_string() } else { format!("{:.2e}", o.tolerance) },
                    if o.mismatches == 0 { badge("pass") } else { badge(&format!("fail ({} of {})", o.mismatches, o.elements)) }
                );
            }
        }
        b.push_str("</table>\n");
    }
    page(&format!("tenslift verify: {}", k.function), &b)
}

pub fn render_html_index(kernels: &[KernelVerification]) -> String {
    let mut b = String::from("<h1>Verification reports</h1>\n<table><tr><th>kernel</th><th>file</th><th>bounded</th><th>unbounded</th><th>differential</th><th>status</th></tr>\n");
    for k in kernels {
        let _ = writeln!(
            b,
            "<tr><td><a href=\"{}.html\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&k.stem()), escape(&k.function), escape(&k.file),
            badge(k.bounded_status().name()), badge(k.unbounded_status()),
            badge(k.differential.verdict.name()), escape(&k.header_status())
        );
    }
    b.push_str("</table>\n");
    page("tenslift verification reports", &b)
}
