//! The TensIR text syntax: a lexer, a parser that builds checked programs
//! (every expression is typed as it is parsed, errors are located), and a
//! printer whose output the parser reads back to an equal program.

mod lexer;
mod parser;
mod printer;

pub use parser::parse_program;
pub use printer::{print_expr, print_program, print_slice, quote_string};
