//! `tenslift lift --target auto`: after the search, predicts each target's
//! time for the lifted program at the sizes the user names (else the
//! manifest's LARGE sizes for a corpus kernel, else the C's own extents,
//! else [`DEFAULT_SIZE`]) from a calibration table ([`crate::predict`]),
//! emits the fastest, and says which and why. The table is `--cost-table`,
//! else the committed results/calibration-<host>.json of this host when it
//! has per-target costs, else the built-in conservative table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tenslift_frontend::ir::Kernel;
use tenslift_targets::{emit, EmitOptions, ParamKind, Program, Target};

use super::calibrate::host_name;
use crate::predict::{choose, predict_c, AutoTable, AUTO_TARGETS};
use crate::spec::Sizes;
use crate::synth::cost::CostTable;

/// The size given to a size parameter nothing else names.
pub const DEFAULT_SIZE: i64 = 1000;

/// How [`sizes_for`] says a size is [`DEFAULT_SIZE`].
const DEFAULTED: &str = "the default";

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `--cost-table`, else this host's committed table, else the built-in one.
pub fn load_table(explicit: Option<&Path>) -> Result<AutoTable, String> {
    crate::predict::load_table(explicit, &workspace_root(), &host_name())
}

/// The sizes a program is priced at, and where they came from.
pub fn sizes_for(file: &Path, kernel: &str, program: &Program, user: &Sizes) -> (Sizes, String) {
    let wanted: Vec<String> = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Size))
        .map(|p| p.name.to_string())
        .collect();
    let mut sizes = user.clone();
    let mut from = Vec::new();
    if wanted.iter().any(|w| user.contains_key(w)) {
        from.push("--sizes".to_string());
    }
    let missing = |s: &Sizes| wanted.iter().any(|w| !s.contains_key(w));
    if missing(&sizes) {
        let entry = tenslift_verify::differential::manifest::find(&workspace_root(), file, kernel);
        if let Ok(Some(entry)) = entry {
            if let Some(large) = entry.sizes.get("LARGE") {
                let named = tenslift_verify::differential::manifest::with_macro_names(large);
                for (k, v) in named {
                    sizes.entry(k).or_insert(v);
                }
                from.push(format!("the manifest's LARGE sizes of `{}`", entry.name));
            }
        }
    }
    let extents: Vec<&String> = wanted.iter().filter(|w| !sizes.contains_key(*w)).collect();
    let mut defaulted = Vec::new();
    for name in extents {
        // The program carries each extent's declared value (`Meta::extents`).
        let declared = program.meta.extents.iter().find(|e| &e.name == name);
        match declared.map(|e| e.value) {
            Some(v) => {
                sizes.insert(name.clone(), v);
                if !from.iter().any(|f| f == "the C's extents") {
                    from.push("the C's extents".to_string());
                }
            }
            None => {
                sizes.insert(name.clone(), DEFAULT_SIZE);
                defaulted.push(name.clone());
            }
        }
    }
    if !defaulted.is_empty() {
        from.push(format!(
            "{DEFAULTED} {DEFAULT_SIZE} for {}",
            defaulted.join(", ")
        ));
    }
    if from.is_empty() {
        from.push("no size parameters".to_string());
    }
    (sizes, from.join(", then "))
}

/// What `--target auto` chose for one kernel.
pub struct AutoChoice {
    pub target: Target,
    pub predicted: BTreeMap<String, f64>,
    pub c_seconds: Option<f64>,
    pub sizes: Sizes,
    pub sizes_from: String,
    pub excluded: Vec<String>,
}

/// Chooses the target for `program`. StableHLO is a candidate only for a
/// single kernel whose sizes the user bound (its shapes are static).
pub fn decide(
    table: &CostTable,
    file: &Path,
    kernel: &Kernel,
    program: &Program,
    user: &Sizes,
    single_kernel: bool,
) -> Option<AutoChoice> {
    let (sizes, sizes_from) = sizes_for(file, &kernel.name, program, user);
    let bound = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Size))
        .all(|p| user.contains_key(&*p.name));
    let options = EmitOptions {
        sizes: user.clone(),
    };
    let mut excluded = Vec::new();
    let mut candidates = Vec::new();
    for name in AUTO_TARGETS {
        let target = Target::from_name(name)?;
        if target == Target::Hlo && !(single_kernel && bound) {
            excluded.push(
                "hlo: static shapes need every size bound with --size/--sizes and one kernel"
                    .to_string(),
            );
        } else if let Err(e) = emit(program, target, &options) {
            excluded.push(format!("{name}: {e}"));
        } else {
            candidates.push(name);
        }
    }
    let (best, predicted) = choose(table, program, &sizes, &candidates)?;
    Some(AutoChoice {
        target: Target::from_name(&best)?,
        predicted,
        c_seconds: predict_c(table, kernel, &sizes),
        sizes,
        sizes_from,
        excluded,
    })
}

/// The warning for a target the user named (`--target numpy`) when the
/// table predicts its program slower than the C, as `--target auto` warns
/// for its choice; nothing when the table cannot price it, or when some
/// size is only the default guess (a user who named the target and no
/// sizes gets no warning about sizes nobody chose).
pub fn warning_for_fixed(
    table: &CostTable,
    file: &Path,
    kernel: &Kernel,
    program: &Program,
    target: Target,
    user: &Sizes,
) -> Option<String> {
    let (sizes, sizes_from) = sizes_for(file, &kernel.name, program, user);
    if sizes_from.contains(DEFAULTED) {
        return None;
    }
    let (_, predicted) = choose(table, program, &sizes, &[target.name()])?;
    AutoChoice {
        target,
        predicted,
        c_seconds: predict_c(table, kernel, &sizes),
        sizes,
        sizes_from,
        excluded: Vec::new(),
    }
    .warning(file, &kernel.name)
}

impl AutoChoice {
    pub fn name(&self) -> &'static str {
        self.target.name()
    }

    fn chosen_seconds(&self) -> f64 {
        self.predicted.get(self.name()).copied().unwrap_or(f64::NAN)
    }

    /// Whether the chosen program is predicted slower than the C.
    pub fn slower_than_c(&self) -> bool {
        self.c_seconds.is_some_and(|c| self.chosen_seconds() > c)
    }

    fn sizes_text(&self) -> String {
        let text: Vec<String> = self.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        match text.is_empty() {
            // A kernel of fixed extents (macros, literals) has no sizes.
            true => "its fixed extents".to_string(),
            false => text.join(", "),
        }
    }

    /// The stderr line: the choice, every prediction, the sizes and table.
    pub fn line(&self, file: &Path, kernel: &str, table_from: &str) -> String {
        let others: Vec<String> = self
            .predicted
            .iter()
            .filter(|(k, _)| k.as_str() != self.name())
            .map(|(k, v)| format!("{k} {v:.3e} s"))
            .chain(self.c_seconds.map(|c| format!("C {c:.3e} s")))
            .collect();
        format!(
            "{}: {kernel}: auto: {} (predicted {:.3e} s, fastest; {}) at {} ({}); table {table_from}\n",
            file.display(),
            self.name(),
            self.chosen_seconds(),
            others.join(", "),
            self.sizes_text(),
            self.sizes_from,
        )
    }

    /// The warning when the chosen program is predicted slower than the C.
    pub fn warning(&self, file: &Path, kernel: &str) -> Option<String> {
        let c = self.c_seconds.filter(|_| self.slower_than_c())?;
        Some(format!(
            "{}: {kernel}: warning: the {} program is predicted slower than the C compiled \
             with gcc -O3 ({:.3e} s vs {c:.3e} s at {})\n",
            file.display(),
            self.name(),
            self.chosen_seconds(),
            self.sizes_text()
        ))
    }

    pub fn json(&self, table_from: &str) -> Value {
        json!({
            "chosen": self.name(),
            "predicted_s": self.predicted,
            "c_predicted_s": self.c_seconds,
            "slower_than_c": self.slower_than_c(),
            "sizes": self.sizes,
            "sizes_from": self.sizes_from,
            "excluded": self.excluded,
            "table": table_from,
        })
    }
}
