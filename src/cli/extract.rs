//! `tenslift extract FILE.c`: print the loop IR (text, or JSON with `--json`).

use std::path::PathBuf;

use clap::Args;
use tenslift_frontend::{dump, extract};

use super::cflags::CFlags;

use super::{print_err, print_out, report_extract_error, EXIT_OK, EXIT_REJECTED, EXIT_USAGE};

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// The C file to read.
    pub file: PathBuf,
    /// Extract only this function (repeatable); default: every function
    /// with a loop nest, except `main`.
    #[arg(long = "function", value_name = "NAME")]
    pub functions: Vec<String>,
    #[command(flatten)]
    pub cflags: CFlags,
    /// Print the IR as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds the parse may take (exit 7 past it).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
}

pub fn run(args: ExtractArgs) -> i32 {
    let path = args.file.display().to_string();
    let options = match args
        .cflags
        .options_within(&args.file, args.functions, args.timeout)
    {
        Ok(o) => o,
        Err(e) => {
            print_err(&format!("error: {e}\n"));
            return EXIT_USAGE;
        }
    };
    match extract(&path, &options) {
        Ok(tu) => {
            if args.json {
                match serde_json::to_string_pretty(&tu) {
                    Ok(text) => print_out(&format!("{text}\n")),
                    Err(e) => {
                        print_err(&format!("error: cannot serialise the IR: {e}\n"));
                        return EXIT_REJECTED;
                    }
                }
            } else {
                print_out(&dump::translation_unit(&tu));
            }
            EXIT_OK
        }
        Err(error) => report_extract_error(&error),
    }
}
