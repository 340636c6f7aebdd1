//! The clang-style flags every subcommand that reads C accepts, and how they
//! become frontend [`Options`].

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use tenslift_frontend::{from_compile_commands, Options};

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
#[derive(Clone, Debug, Default, Args)]
pub struct CFlags {
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
}

impl CFlags {
    /// [`CFlags::options`] with the parse limited to `seconds` (the
    /// command's `--timeout`); a bad limit is a usage error.
    pub fn options_within(
        &self,
        file: &Path,
        functions: Vec<String>,
        seconds: f64,
    ) -> Result<Options, String> {
        let limit = std::time::Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or("--timeout must be a positive number of seconds")?;
        let mut options = self.options(file, functions)?;
        options.parse_timeout = limit;
        Ok(options)
    }

    /// Frontend options for `file`: the compilation database's flags first
    /// (when `-p` is given), then the ones on the command line.
    pub fn options(&self, file: &Path, functions: Vec<String>) -> Result<Options, String> {
        let mut options = match &self.build_dir {
            Some(dir) => from_compile_commands(dir, file).map_err(|e| e.to_string())?,
            None => Options::default(),
        };
        options.functions = functions;
        options
            .include_dirs
            .extend(self.include_dirs.iter().cloned());
        options.defines.extend(self.defines.iter().cloned());
        if let Some(std) = self.std {
            options.std = Some(std.flag().to_string());
        }
        Ok(options)
    }
}
