//! The `tenslift` command line.

mod emit;

pub use emit::EmitArgs;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "tenslift",
    version,
    about = "Lifts C loop nests into verified tensor programs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Emit(emit::EmitArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match cli.command {
        Command::Emit(args) => emit::run(args),
    }
}
