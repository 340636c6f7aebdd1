//! Splits TensIR text into tokens with positions.

use crate::diag::Pos;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// Number text including any type suffix (`2.5f32`, `255u8`, `1e-7`).
    Number(String),
    Str(String),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

const PUNCTS: [&str; 17] = [
    "->", "..", "<=", "(", ")", "[", "]", "{", "}", ",", ":", ";", "=", "+", "-", "*", "/",
];

/// Tokenizes `text`; on failure returns the position and a message.
pub fn lex(text: &str) -> Result<Vec<Token>, (Pos, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, col };
        let start = i;
        if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else if c.is_ascii_digit() {
            while i < chars.len() {
                let d = chars[i];
                let exp_sign = (d == '-' || d == '+')
                    && matches!(chars[i - 1], 'e' | 'E')
                    && chars[start..i]
                        .iter()
                        .all(|x| x.is_ascii_digit() || *x == '.' || *x == 'e' || *x == 'E');
                // `0..n` is a loop range, not a malformed number.
                let range_dots = d == '.' && chars.get(i + 1) == Some(&'.');
                if range_dots {
                    break;
                }
                if d.is_ascii_alphanumeric() || d == '.' || d == '_' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Number(chars[start..i].iter().collect())
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => return Err((pos, "unterminated string".to_string())),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let esc = match chars.get(i + 1) {
                            Some('n') => '\n',
                            Some('t') => '\t',
                            Some('r') => '\r',
                            Some('\\') => '\\',
                            Some('"') => '"',
                            _ => {
                                return Err((
                                    Pos {
                                        line,
                                        col: col + (i - start) as u32,
                                    },
                                    "unknown escape in string".to_string(),
                                ))
                            }
                        };
                        s.push(esc);
                        i += 2;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            Tok::Str(s)
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
                Some(p) => {
                    i += p.len();
                    Tok::Punct(p)
                }
                None => return Err((pos, format!("unexpected character `{c}`"))),
            }
        };
        col += (i - start) as u32;
        tokens.push(Token { tok, pos });
    }
    tokens.push(Token {
        tok: Tok::Eof,
        pos: Pos { line, col },
    });
    Ok(tokens)
}
