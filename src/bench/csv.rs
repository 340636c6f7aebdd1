//! Minimal CSV tables (RFC 4180 quoting) for lift.csv and runtime.csv: a
//! header and rows of strings, read back by column name.

use std::path::Path;

use super::{read_text, write_text, BenchError};

/// A CSV file in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// The index of a column.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The cell of `row` in column `name` ("" when the column is missing).
    pub fn get<'a>(&self, row: &'a [String], name: &str) -> &'a str {
        self.column(name)
            .and_then(|i| row.get(i))
            .map(String::as_str)
            .unwrap_or("")
    }

    pub fn to_csv(&self) -> String {
        let mut text = String::new();
        for line in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = line.iter().map(|c| quote(c)).collect();
            text.push_str(&cells.join(","));
            text.push('\n');
        }
        text
    }

    pub fn write(&self, path: &Path) -> Result<(), BenchError> {
        write_text(path, &self.to_csv())
    }

    pub fn read(path: &Path) -> Result<Table, BenchError> {
        parse(&read_text(path)?).map_err(|message| BenchError::Csv {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Rows of `other` reordered to this table's columns (missing ones empty),
    /// so tables written by different versions still combine.
    pub fn append(&mut self, other: &Table) {
        for row in &other.rows {
            let mapped = self
                .header
                .iter()
                .map(|h| other.get(row, h).to_string())
                .collect();
            self.rows.push(mapped);
        }
    }
}

fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// Parses CSV text; every row must have the header's number of cells.
pub fn parse(text: &str) -> Result<Table, String> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => {
                if c == '\n' {
                    line += 1;
                }
                cell.push(c)
            }
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
                line += 1;
            }
            (false, c) => cell.push(c),
        }
    }
    if quoted {
        return Err(format!("line {line}: unterminated quote"));
    }
    if !cell.is_empty() || !record.is_empty() {
        record.push(cell);
        records.push(record);
    }
    let mut records = records.into_iter();
    let header = records.next().ok_or("empty file")?;
    let mut rows = Vec::new();
    for (i, row) in records.enumerate() {
        if row.len() != header.len() {
            return Err(format!(
                "row {} has {} cells, the header {}",
                i + 2,
                row.len(),
                header.len()
            ));
        }
        rows.push(row);
    }
    Ok(Table { header, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_with_commas_quotes_and_newlines_round_trip() {
        let mut table = Table::new(&["kernel", "note"]);
        table.rows.push(vec!["gemm".into(), "plain".into()]);
        table
            .rows
            .push(vec!["a,b".into(), "said \"no\"\nthen left".into()]);
        table.rows.push(vec!["".into(), "".into()]);
        let text = table.to_csv();
        assert!(text.starts_with("kernel,note\ngemm,plain\n\"a,b\",\"said \"\"no\"\""));
        assert_eq!(parse(&text), Ok(table));
    }

    #[test]
    fn ragged_rows_and_open_quotes_are_errors() {
        assert!(parse("a,b\n1\n").is_err());
        assert!(parse("a,b\n\"1,2\n").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn append_maps_columns_by_name() {
        let mut mine = Table::new(&["kernel", "variant", "median_s"]);
        let theirs = parse("variant,kernel,extra\nnumpy,dot,x\n").unwrap();
        mine.append(&theirs);
        assert_eq!(mine.rows, vec![vec!["dot", "numpy", ""]]);
    }
}
