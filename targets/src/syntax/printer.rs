//! Prints programs and expressions in the TensIR syntax.

use crate::dim::Dim;
use crate::expr::Expr;
use crate::ops::{Op, SliceItem};
use crate::program::{Access, ParamKind, Program, Stmt};

/// Quotes a string for TensIR, Python and MLIR alike: `"` and `\` are
/// escaped, control characters become escapes, nothing else changes.
pub fn quote_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn dims(ds: &[Dim]) -> String {
    ds.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn list<T: ToString>(v: &[T]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Prints slice components (`0:n`, `1:n:2`, `:`, `i`).
pub fn print_slice(items: &[SliceItem]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|it| match it {
            SliceItem::Full => ":".to_string(),
            SliceItem::Index(d) => d.to_string(),
            SliceItem::Range {
                start,
                stop,
                step: 1,
            } => format!("{start}:{stop}"),
            SliceItem::Range { start, stop, step } => format!("{start}:{stop}:{step}"),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// Prints an expression in call syntax.
pub fn print_expr(e: &Expr) -> String {
    let args: Vec<String> = e.args().iter().map(print_expr).collect();
    let joined = args.join(", ");
    let name = e.op().name();
    match e.op() {
        Op::Var(n) => n.to_string(),
        Op::Lit(l) => l.to_string(),
        Op::Full { shape, value } => format!("full([{}], {value})", dims(shape)),
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Where
        | Op::Matmul
        | Op::Outer
        | Op::Diag
        | Op::Cholesky
        | Op::TriSolve { .. }
        | Op::LuNoPivot
        | Op::ScatterAdd
        | Op::Syrk
        | Op::Syr2k
        | Op::MirrorLower => {
            format!("{name}({joined})")
        }
        Op::Reduce { axes, .. } => format!("{name}({joined}, axes={})", list(axes)),
        Op::Scan { axis, .. } => format!("{name}({joined}, axis={axis})"),
        Op::ArgExtreme {
            axis, dtype, last, ..
        } => {
            let last = if *last { ", last=true" } else { "" };
            format!("{name}({joined}, axis={axis}, dtype={dtype}{last})")
        }
        Op::Tensordot { lhs_axes, rhs_axes } => format!(
            "tensordot({joined}, axes=[{}, {}])",
            list(lhs_axes),
            list(rhs_axes)
        ),
        Op::Einsum(spec) => format!("einsum(\"{spec}\", {joined})"),
        Op::Transpose(perm) => format!("transpose({joined}, perm={})", list(perm)),
        Op::Broadcast(shape) => format!("broadcast({joined}, [{}])", dims(shape)),
        Op::Slice(items) => {
            let inner = &e.args()[0];
            // A slice binds tighter than nothing else in the syntax, so
            // the operand never needs parentheses.
            format!("{}{}", print_expr(inner), print_slice(items))
        }
        Op::Flip(axes) => format!("flip({joined}, axes={})", list(axes)),
        Op::Reshape(shape) => format!("reshape({joined}, [{}])", dims(shape)),
        Op::Window(sizes) => format!("window({joined}, [{}])", dims(sizes)),
        Op::Concat { axis } => format!("concat([{joined}], axis={axis})"),
        Op::Triu(k) | Op::Tril(k) => format!("{name}({joined}, k={k})"),
        Op::Cast(d) => format!("cast({joined}, {d})"),
    }
}

/// Prints a whole program; `parse_program` reads it back to an equal one.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    if let Some(file) = &p.meta.source_file {
        out.push_str(&format!("source {}", quote_string(file)));
        if let Some((a, b)) = p.meta.lines {
            out.push_str(&format!(" {a}-{b}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("status {}\n", quote_string(&p.meta.status)));
    for r in &p.meta.requires {
        out.push_str(&format!("requires {r}\n"));
    }
    for pre in &p.meta.preconditions {
        out.push_str(&format!("precondition {}\n", quote_string(pre)));
    }
    for e in &p.meta.extents {
        out.push_str(&format!("extent {e}\n"));
    }
    for g in &p.meta.guards {
        out.push_str(&format!("guard {}", quote_string(&g.cond)));
        for (array, value) in &g.stores {
            out.push_str(&format!(
                " store {} {}",
                quote_string(array),
                quote_string(value)
            ));
        }
        if let Some(v) = &g.value {
            out.push_str(&format!(" return {}", quote_string(v)));
        }
        out.push('\n');
    }
    let params: Vec<String> = p
        .params
        .iter()
        .map(|prm| match &prm.kind {
            ParamKind::Size => format!("{}: size", prm.name),
            ParamKind::Scalar(d) => format!("{}: {d}", prm.name),
            ParamKind::Array {
                dtype,
                shape,
                access,
            } => {
                let mode = match access {
                    Access::In => String::new(),
                    a => format!("{} ", a.name()),
                };
                format!("{}: {mode}{dtype}[{}]", prm.name, dims(shape))
            }
        })
        .collect();
    out.push_str(&format!("func {}({})", p.name, params.join(", ")));
    if let Some(r) = p.ret {
        out.push_str(&format!(" -> {r}"));
    }
    out.push_str(" {\n");
    print_block(&p.body, 1, &mut out);
    out.push_str("}\n");
    out
}

/// Prints statements indented `depth` levels (two spaces each).
fn print_block(stmts: &[Stmt], depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    for s in stmts {
        let line = match s {
            Stmt::Let { name, value } => format!("let {name} = {};", print_expr(value)),
            Stmt::Var { name, ty } => format!("var {name}: {}[{}];", ty.dtype, dims(&ty.shape)),
            Stmt::Store {
                target,
                region,
                value,
            } => {
                let r = region.as_deref().map(print_slice).unwrap_or_default();
                format!("{target}{r} = {};", print_expr(value))
            }
            Stmt::Return(v) => format!("return {};", print_expr(v)),
            Stmt::Loop {
                var,
                start,
                stop,
                body,
            } => {
                out.push_str(&format!("{indent}for {var} in {start}..{stop} {{\n"));
                print_block(body, depth + 1, out);
                out.push_str(&format!("{indent}}}\n"));
                continue;
            }
        };
        out.push_str(&format!("{indent}{line}\n"));
    }
}
