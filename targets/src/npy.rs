//! Reading and writing NumPy `.npy` files (format versions 1–3, C order,
//! little-endian), so tests and tools can exchange arrays with Python.

use std::io::{Read, Write};
use std::path::Path;

use crate::dtype::DType;
use crate::interp::{Array, Data};

#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a .npy file ({reason})")]
    Format { path: String, reason: String },
}

fn descr(d: DType) -> &'static str {
    match d {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

fn dtype_of_descr(s: &str) -> Option<DType> {
    let s = s.replace('=', "<");
    DType::ALL.into_iter().find(|d| {
        let want = descr(*d);
        want == s || (want.starts_with('|') && s.len() == 3 && s[1..] == want[1..])
    })
}

/// Encodes an array as `.npy` bytes.
pub fn to_bytes(a: &Array) -> Vec<u8> {
    let shape = match a.shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", a.shape[0]),
        _ => format!(
            "({})",
            a.shape
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr(a.dtype)
    );
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for i in 0..a.len() {
        match a.dtype {
            DType::F64 => out.extend_from_slice(&a.get_f64(i).to_le_bytes()),
            DType::F32 => out.extend_from_slice(&(a.get_f64(i) as f32).to_le_bytes()),
            d => {
                let v = a.get_i64(i);
                let bytes = v.to_le_bytes();
                out.extend_from_slice(&bytes[..d.byte_size()]);
            }
        }
    }
    out
}

/// Decodes `.npy` bytes; `path` only names the source in errors.
pub fn from_bytes(bytes: &[u8], path: &str) -> Result<Array, NpyError> {
    let bad = |reason: &str| NpyError::Format {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("missing magic"));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(bad("unsupported version")),
    };
    let header = bytes
        .get(start..start + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| bad("truncated header"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[at..].trim_start())
    };
    let descr_text = field("descr")
        .and_then(|s| s.strip_prefix('\''))
        .and_then(|s| s.split('\'').next())
        .ok_or_else(|| bad("no descr"))?;
    let dtype = dtype_of_descr(descr_text)
        .ok_or_else(|| bad(&format!("unsupported dtype {descr_text}")))?;
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad("Fortran order is not supported"));
    }
    let shape_text = field("shape")
        .and_then(|s| s.strip_prefix('('))
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad("malformed shape"))?;
    let n: usize = shape.iter().product();
    let size = dtype.byte_size();
    let body = &bytes[start + header_len..];
    if body.len() < n * size {
        return Err(bad("truncated data"));
    }
    let chunk = |i: usize| &body[i * size..(i + 1) * size];
    let data = match dtype {
        DType::F64 => Data::Float(
            (0..n)
                .map(|i| f64::from_le_bytes(chunk(i).try_into().unwrap_or([0; 8])))
                .collect(),
        ),
        DType::F32 => Data::Float(
            (0..n)
                .map(|i| f32::from_le_bytes(chunk(i).try_into().unwrap_or([0; 4])) as f64)
                .collect(),
        ),
        d => Data::Int(
            (0..n)
                .map(|i| {
                    let c = chunk(i);
                    let mut raw = [0u8; 8];
                    raw[..size].copy_from_slice(c);
                    d.wrap_int(i128::from(i64::from_le_bytes(raw)))
                })
                .collect(),
        ),
    };
    Ok(Array { dtype, shape, data })
}

pub fn write(path: &Path, a: &Array) -> Result<(), NpyError> {
    let io = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut f = std::fs::File::create(path).map_err(io)?;
    f.write_all(&to_bytes(a)).map_err(io)
}

pub fn read(path: &Path) -> Result<Array, NpyError> {
    let io = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(io)?;
    from_bytes(&bytes, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_dtype() {
        for d in DType::ALL {
            let a = Array::from_i64(d, vec![2, 3], vec![0, 1, -1, 7, 100, 1]);
            let back = from_bytes(&to_bytes(&a), "mem").unwrap();
            assert_eq!(back, a, "{d}");
        }
        let s = Array::from_f64(DType::F64, vec![], vec![2.5]);
        assert_eq!(from_bytes(&to_bytes(&s), "mem").unwrap(), s);
    }

    #[test]
    fn rejects_garbage() {
        assert!(from_bytes(b"hello", "x.npy").is_err());
    }
}
