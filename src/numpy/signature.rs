//! Parameter types of a NumPy function: a `# tenslift:` comment directly
//! above its `def` (`# tenslift: A: f64[n, k], B: f64[k, n], a: f64`), or
//! `--shapes A=n,k` on the command line (which wins). A dim is a size name
//! or a non-negative integer; sizes become the kernel's size parameters.

use tenslift_frontend::diagnostics::Diagnostic;
use tenslift_frontend::ir::{Affine, Loc, ScalarType};

use super::diagnostics::{error, BAD_SIGNATURE};

/// The declared type of one parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamType {
    pub dtype: ScalarType,
    /// Empty for a scalar.
    pub dims: Vec<Affine>,
}

/// One declared parameter and where it was declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Declared {
    pub name: String,
    pub ty: ParamType,
    pub loc: Loc,
}

const MARKER: &str = "tenslift:";

/// The declarations of the `# tenslift:` lines in the comment block that
/// ends just above line `first_line` of `source`.
pub fn from_comment(
    source: &str,
    file: &str,
    first_line: u32,
) -> Result<Vec<Declared>, Diagnostic> {
    let lines: Vec<&str> = source.lines().collect();
    let mut at = first_line.saturating_sub(1) as usize;
    let mut block = Vec::new();
    while at > 0
        && lines
            .get(at - 1)
            .is_some_and(|l| l.trim_start().starts_with('#'))
    {
        at -= 1;
        block.push(at);
    }
    block.reverse();
    let mut out = Vec::new();
    for index in block {
        let line = lines[index];
        let hash = line.find('#').unwrap_or(0);
        let body = line[hash + 1..].trim_start();
        let Some(rest) = body.strip_prefix(MARKER) else {
            continue;
        };
        let start = line.len() - rest.len();
        let loc = |offset: usize| Loc {
            file: file.to_string(),
            line: index as u32 + 1,
            col: (start + offset) as u32 + 1,
        };
        out.extend(parse_list(rest, &loc)?);
    }
    Ok(out)
}

/// Parses `A: f64[n, k], a: f64`; `loc(offset)` locates a byte of `text`.
fn parse_list(text: &str, loc: &dyn Fn(usize) -> Loc) -> Result<Vec<Declared>, Diagnostic> {
    let mut out = Vec::new();
    for (offset, item) in split_top_level(text) {
        let trimmed = item.trim_start();
        if trimmed.trim().is_empty() {
            continue;
        }
        let offset = offset + item.len() - trimmed.len();
        let bad = |why: &str| error(BAD_SIGNATURE, loc(offset), why.to_string());
        let (name, ty) = trimmed
            .split_once(':')
            .ok_or_else(|| bad("expected `name: dtype[dims]`"))?;
        let name = name.trim();
        if !is_name(name) {
            return Err(bad(&format!("`{name}` is not a parameter name")));
        }
        let ty = parse_type(ty.trim()).map_err(|why| bad(&format!("`{name}`: {why}")))?;
        out.push(Declared {
            name: name.to_string(),
            ty,
            loc: loc(offset),
        });
    }
    Ok(out)
}

/// `(offset, item)` for each comma-separated item outside brackets.
fn split_top_level(text: &str) -> Vec<(usize, &str)> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push((start, &text[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push((start, &text[start..]));
    items
}

/// `f64[n, k]`, `f32`, `float64[3]`.
pub fn parse_type(text: &str) -> Result<ParamType, String> {
    let (dtype, dims) = match text.split_once('[') {
        Some((d, rest)) => {
            let inner = rest
                .trim_end()
                .strip_suffix(']')
                .ok_or_else(|| "missing `]`".to_string())?;
            (d.trim(), Some(inner))
        }
        None => (text.trim(), None),
    };
    let dtype = parse_dtype(dtype)?;
    let dims = match dims {
        None => Vec::new(),
        Some(inner) if inner.trim().is_empty() => Vec::new(),
        Some(inner) => inner
            .split(',')
            .map(|d| parse_dim(d.trim()))
            .collect::<Result<_, _>>()?,
    };
    Ok(ParamType { dtype, dims })
}

fn parse_dtype(text: &str) -> Result<ScalarType, String> {
    match text {
        "f64" | "float64" | "float" | "double" => Ok(ScalarType::F64),
        "f32" | "float32" => Ok(ScalarType::F32),
        other => Err(format!(
            "unsupported dtype `{other}` (f64 or f32; integer arrays are not supported)"
        )),
    }
}

fn parse_dim(text: &str) -> Result<Affine, String> {
    if let Ok(value) = text.parse::<i64>() {
        if value >= 0 {
            return Ok(Affine::constant(value));
        }
    }
    if is_name(text) {
        return Ok(Affine::var(text));
    }
    Err(format!(
        "`{text}` is not a dim (a size name or a non-negative integer)"
    ))
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `--shapes NAME=dim,dim[:dtype]` (`NAME=` or `NAME=:f32` for a scalar).
pub fn parse_shapes_flag(text: &str) -> Result<(String, ParamType), String> {
    let (name, rest) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=dim,dim[:dtype]"))?;
    let name = name.trim();
    if !is_name(name) {
        return Err(format!("`{name}` is not a parameter name"));
    }
    let (dims, dtype) = match rest.rsplit_once(':') {
        Some((dims, dtype)) => (dims, parse_dtype(dtype.trim())?),
        None => (rest, ScalarType::F64),
    };
    let dims = if dims.trim().is_empty() {
        Vec::new()
    } else {
        dims.split(',')
            .map(|d| parse_dim(d.trim()))
            .collect::<Result<_, _>>()?
    };
    Ok((name.to_string(), ParamType { dtype, dims }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_above_def_declares_every_parameter() {
        let src = "import numpy as np\n\n# a helper\n# tenslift: A: f64[n, k],\n#   tenslift: B: f32[k, 3], a: f64\ndef f(A, B, a):\n    return A\n";
        let d = from_comment(src, "p.py", 6).expect("parses");
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "a"]);
        assert_eq!(d[1].ty.dtype, ScalarType::F32);
        assert_eq!(d[1].ty.dims, vec![Affine::var("k"), Affine::constant(3)]);
        assert!(d[2].ty.dims.is_empty());
        assert_eq!((d[0].loc.line, d[0].loc.col), (4, 13));
    }

    #[test]
    fn a_bad_dim_is_located() {
        let src = "# tenslift: A: f64[n m]\ndef f(A):\n    return A\n";
        let e = from_comment(src, "p.py", 2).expect_err("refused");
        assert_eq!(e.code.id, "NP009");
        assert!(e.message.contains("n m"), "{}", e.message);
    }

    #[test]
    fn shapes_flag_forms() {
        let (n, t) = parse_shapes_flag("A=n,k").expect("ok");
        assert_eq!(
            (n.as_str(), t.dims.len(), t.dtype),
            ("A", 2, ScalarType::F64)
        );
        let (_, t) = parse_shapes_flag("x=m:f32").expect("ok");
        assert_eq!((t.dims.len(), t.dtype), (1, ScalarType::F32));
        let (_, t) = parse_shapes_flag("a=").expect("ok");
        assert!(t.dims.is_empty());
        assert!(parse_shapes_flag("A").is_err());
        assert!(parse_shapes_flag("A=n:i32").is_err());
    }
}
