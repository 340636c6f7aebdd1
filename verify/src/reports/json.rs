//! The JSON form of a kernel's verification (also what `tenslift verify
//! --json` prints, one object per line).

use serde_json::{json, Value};

use super::KernelVerification;

pub fn render_json(k: &KernelVerification) -> Value {
    let bounded: Vec<Value> = k
        .bounded
        .iter()
        .map(|b| {
            json!({
                "sizes": b.sizes, "status": b.status.name(),
                "detail": b.detail, "elapsed_ms": b.elapsed_ms,
            })
        })
        .collect();
    json!({
        "file": k.file,
        "function": k.function,
        "bounded": k.bounded_status().name(),
        "unbounded": k.unbounded_status(),
        "differential": k.differential.verdict.name(),
        "verified": k.verified(),
        "status": k.header_status(),
        "reason": k.reason,
        "details": {
            "source": {
                "file": k.source_range.0, "start_line": k.source_range.1,
                "end_line": k.source_range.2, "text": k.source_text,
            },
            "program": k.program_text,
            "program_origin": k.program_origin,
            "sizes_checked": k.bounded.iter().map(|b| &b.sizes).collect::<Vec<_>>(),
            "bounded": bounded,
            "unbounded": {
                "status": k.unbounded.status, "invariants": k.unbounded.invariants,
                "conditions": k.unbounded.conditions, "arithmetic": k.unbounded.arithmetic,
                "detail": k.unbounded.detail,
            },
            "differential": k.differential,
            "arithmetic": k.arithmetic,
        },
    })
}
