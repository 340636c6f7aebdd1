//! `tenslift extract FILE.c`: print the loop IR (text, or JSON with `--json`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use tenslift_frontend::{dump, extract, from_compile_commands, ExtractError, Options};

use super::{print_err, print_out, EXIT_OK, EXIT_REJECTED, EXIT_USAGE};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CStd {
    C99,
    C11,
    Gnu11,
}

impl CStd {
    fn flag(self) -> &'static str {
        match self {
            CStd::C99 => "c99",
            CStd::C11 => "c11",
            CStd::Gnu11 => "gnu11",
        }
    }
}

/// Flags mirror clang's: `-I dir` or `-Idir`, `-D X` or `-DX=1`.
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// The C file to read.
    pub file: PathBuf,
    /// Extract only this function (repeatable); default: every function
    /// with a loop nest, except `main`.
    #[arg(long = "function", value_name = "NAME")]
    pub functions: Vec<String>,
    /// Add a directory to the include search path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Define a macro (`NAME` or `NAME=VALUE`).
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    pub defines: Vec<String>,
    /// C language standard.
    #[arg(long = "std", value_enum, value_name = "STD")]
    pub std: Option<CStd>,
    /// Read flags for FILE from BUILD_DIR/compile_commands.json.
    #[arg(short = 'p', value_name = "BUILD_DIR")]
    pub build_dir: Option<PathBuf>,
    /// Print the IR as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ExtractArgs) -> i32 {
    let path = args.file.display().to_string();
    let mut options = match &args.build_dir {
        Some(dir) => match from_compile_commands(dir, &args.file) {
            Ok(o) => o,
            Err(e) => {
                print_err(&format!("error: {e}\n"));
                return EXIT_USAGE;
            }
        },
        None => Options::default(),
    };
    options.functions = args.functions;
    options.include_dirs.extend(args.include_dirs);
    options.defines.extend(args.defines);
    if let Some(std) = args.std {
        options.std = Some(std.flag().to_string());
    }
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
        Err(ExtractError::Rejected(diagnostics)) => {
            print_err(&diagnostics.render());
            EXIT_REJECTED
        }
        Err(other) => {
            print_err(&format!("error: {other}\n"));
            EXIT_USAGE
        }
    }
}
