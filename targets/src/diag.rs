//! Located diagnostics rendered like clang's:
//! `file:line:col: error: message`, the source line, and a caret.

use std::fmt;

/// A position in a source text (1-based line and column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// An error located in a TensIR source file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Diagnostic {
    pub file: String,
    pub pos: Pos,
    pub message: String,
    /// The text of the offending line, for the caret display.
    pub source_line: String,
}

impl Diagnostic {
    pub fn new(file: &str, text: &str, pos: Pos, message: impl Into<String>) -> Diagnostic {
        let source_line = text
            .lines()
            .nth(pos.line.saturating_sub(1) as usize)
            .unwrap_or("")
            .to_string();
        Diagnostic {
            file: file.to_string(),
            pos,
            message: message.into(),
            source_line,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.pos.line, self.pos.col, self.message
        )?;
        // Tabs keep their width so the caret lines up under the column.
        let pad: String = self
            .source_line
            .chars()
            .take(self.pos.col.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        writeln!(f, "{}", self.source_line)?;
        write!(f, "{pad}^")
    }
}
