//! The loop IR: what the frontend understood of one C kernel.
//!
//! A [`Kernel`] is a function (or a `#pragma scop` region of one) whose body
//! is a tree of affine loops, guarded blocks and assignments. Every array
//! access is already in multi-dimensional form: linearised pointer subscripts
//! such as `A[i*lda + k]` arrive here as `A[i][k]` with the array's
//! [`Storage::Flat`] recording the strides, so later stages never re-derive
//! layout. Every expression node carries the C type it has after the usual
//! arithmetic conversions, and conversions that C performs silently appear as
//! explicit [`ExprKind::Cast`] nodes: `u8 + u8` is `int` arithmetic on two
//! promoted operands, and storing it back into a `uint8_t` is a cast to `U8`
//! that wraps modulo 256.
//!
//! The IR is plain data (serde in both directions), so `tenslift extract
//! --json` output can be read back by any later stage or external tool.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Everything extracted from one C file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslationUnit {
    /// The file as the user named it.
    pub file: String,
    pub kernels: Vec<Kernel>,
    /// With [`crate::Options::keep_going`], the functions that could not
    /// be lowered, each with its located diagnostics.
    #[serde(skip)]
    pub refused: Vec<RefusedFunction>,
}

/// A function of the file refused for reasons of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct RefusedFunction {
    pub name: String,
    pub diagnostics: crate::diagnostics::Diagnostics,
}

/// One lifted function or `#pragma scop` region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// The C function's name.
    pub name: String,
    /// Lines of the function, or of the scop region when there is one.
    pub range: SourceRange,
    /// Parameters in C declaration order, then the globals the kernel touches.
    pub params: Vec<Param>,
    /// Local scalars and fixed-size local arrays (temporaries).
    pub locals: Vec<Local>,
    pub body: Vec<Stmt>,
    /// The type of a returned scalar; the value is an output named `return`.
    pub returns: Option<ScalarType>,
    /// Histogram writes (`h[x[i]] += v`) the body holds as loops over
    /// their bins, with the range of each one's index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histograms: Vec<Histogram>,
    /// Pointer parameters the C tests against `NULL`, read as set (see
    /// `nonnull`), with where each is first tested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumed_set: Vec<(String, Loc)>,
    /// Integer parameters whose negative values the C handles by starting
    /// a walk at the far end (`if (incx < 0) ix = (-n + 1) * incx;`), with
    /// where each test is: the kernel is the walk for positive ones (each
    /// is an array's stride, which the program checks is at least 1; see
    /// `lower::increments`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub negative_steps: Vec<(String, Loc)>,
    /// Leading `if (cond) return …;` guards that change what the kernel
    /// does, in order: the body is the rest of the kernel, and a program
    /// for it runs only when no guard's condition holds (see
    /// `lower::guards`). Empty when the C has none or they change nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<KernelGuard>,
    /// Pointer parameters to an array of structs read as the flat array of
    /// their fields' type (see `lower::aos`): `(parameter, struct type,
    /// elements a record)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub struct_arrays: Vec<(String, String, i64)>,
    /// The C's `assert(…)` conditions, as written, with where each is:
    /// an assertion computes nothing when it holds and aborts the C when
    /// it does not, so the program assumes each (a stated precondition)
    /// and the differential check compiles the C with `-DNDEBUG`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asserted: Vec<(String, Loc)>,
    /// The conditions of the C's `do … while` loops, which the program runs
    /// as `while` loops: they agree when the condition holds on entry (a
    /// stated precondition).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entered: Vec<(String, Loc)>,
    /// Set on one case of a kernel that picks its whole computation by
    /// testing integer flags it is passed (`if (trans == 'N') { … } else {
    /// … }`): the body is that case's statements. The root crate's
    /// `synth::cases` splits a kernel into its cases; the frontend sets it
    /// on the kernels of a function that tests parameters it also steps or
    /// bounds its loops by (`lower::increments`: one kernel per case, in
    /// order, pins left empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<KernelCase>,
}

/// Which case of its function a kernel is: the tests on the way to it,
/// each with the branch taken, and flag values under which the C takes it
/// (what a differential run passes the C, so that it runs this case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelCase {
    /// 1-based, in the C's order of the branches.
    pub number: usize,
    pub count: usize,
    pub path: Vec<(Expr, bool)>,
    pub pins: Vec<(String, i64)>,
}

/// `if (cond) { p[0] = v; …; return value; }` at the start of the kernel:
/// `cond` reads scalar parameters and literals only, each store writes a
/// literal into the first element of a pointer parameter, `value` is the
/// literal returned (`None` for a bare `return;`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelGuard {
    pub cond: Expr,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<(String, Expr)>,
    pub value: Option<f64>,
    pub loc: Loc,
}

/// A histogram write `h[x[i]] += v` (or `h[x[i]]++`): its subscript is read
/// from memory, so the body holds it as `for (bin = 0; bin < bins; bin++)
/// if (x[i] == bin) h[bin] += v;`, which is the C statement exactly when
/// the index lies in `[0, bins)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// The array of bins (`h`).
    pub target: String,
    /// The iterator of the loop over the bins that stands for the write.
    pub bin_iter: String,
    /// The index as the C spells it (`bin[i]`).
    pub index: String,
    /// How many bins: the index lies in `[0, bins)`.
    pub bins: Affine,
    /// Whether that range is the caller's to guarantee (taken from the
    /// declared extent of `h`), rather than the index type's own range
    /// (`unsigned char`).
    pub precondition: bool,
    pub loc: Loc,
}

impl Kernel {
    /// `self` with each extent size (`Origin::Extent`) the caller names
    /// fixed at the value this compilation declares: its parameter removed
    /// and every use (extents, loop bounds, subscripts, values) replaced by
    /// the literal. A program written for the literal shapes (`f32[64, 32]`
    /// where the frontend traced `ext_64`) is then compared with the kernel
    /// it means, not with the kernel at every extent.
    pub fn with_fixed_extents(&self, names: &[&str]) -> Kernel {
        let values: BTreeMap<String, i64> = self
            .params
            .iter()
            .filter(|p| names.contains(&p.name.as_str()))
            .filter_map(|p| match p.origin {
                Origin::Extent { value } => Some((p.name.clone(), value)),
                _ => None,
            })
            .collect();
        let mut k = self.clone();
        if values.is_empty() {
            return k;
        }
        k.params.retain(|p| !values.contains_key(&p.name));
        let fix = |a: &mut Affine| {
            for (name, v) in &values {
                if let Some(c) = a.terms.remove(name) {
                    a.constant = a.constant.saturating_add(c.saturating_mul(*v));
                }
            }
        };
        let fix_info = |info: &mut ArrayInfo| {
            info.dims.iter_mut().flatten().for_each(fix);
            if let Storage::Flat { strides } = &mut info.storage {
                strides.iter_mut().for_each(fix);
            }
        };
        for p in &mut k.params {
            if let ParamKind::Array(info) = &mut p.kind {
                fix_info(info);
            }
        }
        for l in &mut k.locals {
            if let LocalKind::Array(info) = &mut l.kind {
                fix_info(info);
            }
        }
        for h in &mut k.histograms {
            fix(&mut h.bins);
        }
        fix_stmts(&mut k.body, &values, &fix);
        k
    }

    /// Whether `self` and `other` are the same kernel once the values this
    /// compilation gave its macro and extent sizes are set aside: `-DN=32`
    /// and `-DN=4096` read the same kernel, sized by `N` (and PolyBench's
    /// `-DMINI_DATASET` and `-DLARGE_DATASET` one sized by `ext_…`).
    pub fn same_for_every_macro_value(&self, other: &Kernel) -> bool {
        let forget = |k: &Kernel| {
            let mut k = k.clone();
            for p in &mut k.params {
                if let Origin::Macro { value } | Origin::Extent { value } = &mut p.origin {
                    *value = 0;
                }
            }
            k
        };
        forget(self) == forget(other)
    }

    /// How a caller holding the C structs passes them: one sentence per
    /// struct parameter or global, naming the argument of each used field
    /// (`m_rows = m.rows, m_vals = m.vals`).
    fn struct_calling_notes(&self) -> Vec<String> {
        let mut roots: Vec<(&FieldPath, Vec<String>)> = Vec::new();
        for p in &self.params {
            let Origin::Field(path) = &p.origin else {
                continue;
            };
            let shown = match &p.kind {
                ParamKind::Array(info) if info.storage == Storage::RowPointers => format!(
                    "{} = {} (its rows stacked into one {}-D array)",
                    p.name,
                    path.c_source(),
                    info.dims.len()
                ),
                ParamKind::Array(_) => format!("{} = {} (as an array)", p.name, path.c_source()),
                ParamKind::Scalar { .. } => format!("{} = {}", p.name, path.c_source()),
            };
            match roots.iter_mut().find(|(r, _)| r.root == path.root) {
                Some((_, fields)) => fields.push(shown),
                None => roots.push((path, vec![shown])),
            }
        }
        roots
            .into_iter()
            .map(|(path, fields)| {
                let how = match path.passing {
                    Passing::ByValue => "passed by value",
                    Passing::ByPointer => "passed by pointer",
                    Passing::Global => "a global",
                };
                format!(
                    "the C struct `{}` ({}, {how}) arrives field by field: {}; its other fields are not used",
                    path.root,
                    path.struct_type,
                    fields.join(", ")
                )
            })
            .collect()
    }

    /// What a lifted program of this kernel assumes of its caller beyond
    /// the shapes, one sentence each: the rows of a row-pointer array are
    /// disjoint buffers, wide enough for the iterated columns.
    pub fn preconditions(&self) -> Vec<String> {
        let extent = |d: &Option<Affine>| d.as_ref().map_or("?".to_string(), |a| a.to_string());
        let mut out = self.struct_calling_notes();
        let by_reference: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.origin == Origin::Pointee)
            .map(|p| format!("`{}`", p.name))
            .collect();
        if !by_reference.is_empty() {
            out.push(format!(
                "{} arrive by value: the C receives each by pointer (Fortran's by-reference arguments, as f2c writes them) and reads it as one value, so no store of the kernel may reach it",
                by_reference.join(", ")
            ));
        }
        for h in self.histograms.iter().filter(|h| h.precondition) {
            out.push(format!(
                "every bin index `{}` of the histogram `{}` lies in [0, {}) (C would write outside `{}` otherwise); the NumPy, JAX and PyTorch code checks it and raises ValueError, StableHLO does not (its scatter drops an update outside the bins)",
                h.index, h.target, h.bins, h.target
            ));
        }
        for (name, record, per_record) in &self.struct_arrays {
            out.push(format!(
                "`{name}` is the memory of the C's `{record}` array, passed as the flat array of the fields it uses ({per_record} elements a record; from NumPy, a structured array's `.view()` of that type)"
            ));
        }
        for (cond, at) in &self.asserted {
            out.push(format!(
                "`{cond}` holds: the C asserts it ({}:{}:{}) and aborts otherwise; the program assumes it and checks nothing",
                at.file, at.line, at.col
            ));
        }
        for (cond, at) in &self.entered {
            out.push(format!(
                "`{cond}` holds when the `do … while` loop at {}:{}:{} is reached: the C runs its body once before testing it, the program as a `while` (it tests first)",
                at.file, at.line, at.col
            ));
        }
        for (name, at) in &self.negative_steps {
            out.push(format!(
                "`{name}` is positive: the C's start for a negative `{name}` ({}:{}:{}) is not lifted; `{name}` is an array's stride, and the NumPy, JAX and PyTorch code checks it is at least 1 on entry (raising ValueError otherwise)",
                at.file, at.line, at.col
            ));
        }
        for (name, at) in &self.assumed_set {
            out.push(format!(
                "`{name}` is not NULL: the C tests it ({}:{}:{}) and this program is the case where it is set (the NULL case is not lifted)",
                at.file, at.line, at.col
            ));
        }
        for p in &self.params {
            let ParamKind::Array(info) = &p.kind else {
                continue;
            };
            if info.storage != Storage::RowPointers || info.dims.len() < 2 {
                continue;
            }
            let (outer, last) = info.dims.split_at(info.dims.len() - 1);
            let rows: Vec<String> = outer.iter().map(extent).collect();
            out.push(format!(
                "`{}` is passed as row pointers: its {} rows are disjoint buffers of at least {} {} each, overlapping no other array",
                p.name,
                rows.join(" x "),
                extent(&last[0]),
                info.elem
            ));
        }
        out
    }
}

/// A span of whole lines in one file, 1-based and inclusive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRange {
    pub file: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// A point in a file, 1-based, as clang prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loc {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

/// C arithmetic types, after typedefs are resolved (`DATA_TYPE`, `uint8_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl ScalarType {
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        ) || self.is_float()
    }

    /// Whether every value of the integer (or `bool`) type `from` is a
    /// value of this integer type: a conversion to it changes nothing.
    pub fn holds_every_value_of(self, from: ScalarType) -> bool {
        if from == ScalarType::Bool {
            return true;
        }
        match (from.is_signed(), self.is_signed()) {
            (true, true) | (false, false) => self.bits() >= from.bits(),
            (false, true) => self.bits() > from.bits(),
            (true, false) => false,
        }
    }

    /// Width in bits (`Bool` counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            ScalarType::I8 | ScalarType::U8 => 8,
            ScalarType::I16 | ScalarType::U16 => 16,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 32,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 64,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An integer-affine expression `constant + Σ coeff·var` over loop iterators
/// and integer scalar parameters. Used for loop bounds, guards, subscripts and
/// array extents. Terms with a zero coefficient are never stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Affine {
    pub terms: BTreeMap<String, i64>,
    pub constant: i64,
}

impl Affine {
    pub fn constant(c: i64) -> Self {
        Affine {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    pub fn var(name: impl Into<String>) -> Self {
        let mut terms = BTreeMap::new();
        terms.insert(name.into(), 1);
        Affine { terms, constant: 0 }
    }

    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// Evaluates with every variable bound; `None` names a missing binding.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        self.terms.iter().try_fold(self.constant, |acc, (v, c)| {
            acc.checked_add(c.checked_mul(env(v)?)?)
        })
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (var, &c) in &self.terms {
            let (sign, mag) = if c < 0 {
                ("-", c.unsigned_abs())
            } else {
                ("+", c.unsigned_abs())
            };
            match (first, sign) {
                (true, "-") => f.write_str("-")?,
                (true, _) => {}
                (false, s) => write!(f, " {s} ")?,
            }
            if mag == 1 {
                write!(f, "{var}")?;
            } else {
                write!(f, "{mag}*{var}")?;
            }
            first = false;
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant > 0 {
            write!(f, " + {}", self.constant)
        } else if self.constant < 0 {
            write!(f, " - {}", self.constant.unsigned_abs())
        } else {
            Ok(())
        }
    }
}

/// A kernel parameter: a function argument or a global the kernel uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub role: Role,
    pub origin: Origin,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// A scalar passed by value. `is_size` marks integer scalars that appear
    /// in a loop bound, a guard, a subscript stride or an array extent.
    /// Only integer parameters of at least 32 bits that the kernel never
    /// assigns can be sizes (appear in an [`Affine`]).
    Scalar {
        ty: ScalarType,
        is_size: bool,
    },
    Array(ArrayInfo),
}

/// Shape and layout of an array parameter or local array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayInfo {
    pub elem: ScalarType,
    /// Logical extents, outermost first. `None` where C does not say and no
    /// loop bound pins it (the outer extent of a bare pointer).
    pub dims: Vec<Option<Affine>>,
    pub storage: Storage,
}

/// How the logical dimensions map to memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "storage", rename_all = "snake_case")]
pub enum Storage {
    /// `double A[N][M]`, a C99 VLA `double A[n][m]`, or `POLYBENCH_2D(...)`.
    Declared,
    /// A pointer `float *A` accessed as `A[i*lda + k]`: element `[i][k]`
    /// lives at flat offset `Σ index[d] * strides[d]`. This is a general
    /// strided view: the innermost stride is 1, the others are a constant
    /// or one parameter times a constant (the leading dimensions, kept even
    /// when they exceed the row length the loops touch), and a stride need
    /// not be the product of the inner extents — `key_cache[t*kv_dim +
    /// head*head_size + i]` has strides `kv_dim, head_size, 1` and the
    /// middle extent `None` (kv_dim / head_size is not known). Indices may
    /// contain integer parameters (`head`).
    Flat { strides: Vec<Affine> },
    /// `double **A` (or `double *A[]`, `double ***A`) indexed `A[i][j]`:
    /// an array of row pointers, each row a separate buffer. Logically a
    /// dense array with every extent taken from the loop bounds; its
    /// lifting rests on the precondition that no two rows overlap (nor
    /// overlap another array) and every row holds at least the iterated
    /// width. Drivers build the pointer levels over contiguous storage.
    RowPointers,
}

/// What a kernel does with a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Only read.
    Input,
    /// Written before any read of the same element could observe the old
    /// value, on every path: the initial contents do not matter.
    Output,
    /// Read (possibly) before written: the result depends on initial contents.
    InOut,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Argument,
    Global,
    /// An overridable macro (`-DN=384`, `#ifndef N`) that sizes a loop or
    /// an array: an integer size that is not passed to the C function but
    /// fixed when the C is compiled (`-DN=value`). `value` is the one this
    /// compilation gave it; the kernel is lowered for every value.
    Macro {
        value: i64,
    },
    /// A constant array extent (`double C[NI + PAD][NJ + PAD]` with `NI`
    /// 1000 in this build) that the loops do not run to (they stop at the
    /// parameter `ni`): a size of its own, so later stages trace the kernel
    /// at small extents just larger than the region, and the region the
    /// loops touch is a sub-box of the declared array. Not passed to the C
    /// function; `value` is the declared extent. Every axis declared with
    /// the same value shares one extent size (`ext_1000`).
    Extent {
        value: i64,
    },
    /// A scalar the C function receives by pointer and only reads (`integer
    /// *n`, `real *sa` in f2c's C of Fortran): the kernel reads its value,
    /// and drivers pass the address of a copy.
    Pointee,
    /// A field of a struct parameter or global (`m.rows`, `t->dims[0]`,
    /// `(double *)t->vals`): the kernel reads it as a parameter of its own,
    /// named after the path (`m_rows`, `t_dims_0`, `t_vals`); drivers
    /// rebuild the struct from the path.
    Field(FieldPath),
}

/// Where a struct-field parameter lives in its C struct.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldPath {
    /// The C name of the struct parameter or global.
    pub root: String,
    /// The C spelling of its struct type (`matrix`, `struct tensor`).
    pub struct_type: String,
    pub passing: Passing,
    /// From the root down, e.g. `dims`, `[0]`.
    pub steps: Vec<FieldStep>,
}

/// How the C function receives a struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Passing {
    ByValue,
    ByPointer,
    Global,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum FieldStep {
    /// `.name` (or `->name` below a pointer); `pointer` says the field
    /// itself holds a pointer, which a following index goes through.
    Field { name: String, pointer: bool },
    /// `[index]`, a constant subscript (`t->dims[0]`).
    Index { index: i64 },
}

impl FieldPath {
    /// The path in C, from an expression `object` of the struct type
    /// itself (not a pointer to it): `object.shape.dims[1]`.
    pub fn c_lvalue(&self, object: &str) -> String {
        let mut out = object.to_string();
        let mut below_pointer = false;
        for step in &self.steps {
            match step {
                FieldStep::Field { name, pointer } => {
                    out.push_str(if below_pointer { "->" } else { "." });
                    out.push_str(name);
                    below_pointer = *pointer;
                }
                FieldStep::Index { index } => {
                    out.push_str(&format!("[{index}]"));
                    below_pointer = false;
                }
            }
        }
        out
    }

    /// Whether the path ends at an array stored in the struct itself
    /// (`M->m` of a `float m[4][4]` field), which a driver fills by
    /// copying elements; a pointer field is assigned.
    pub fn ends_in_inline_array(&self, kind: &ParamKind) -> bool {
        matches!(kind, ParamKind::Array(_))
            && matches!(
                self.steps.last(),
                Some(FieldStep::Field { pointer: false, .. })
            )
    }

    /// The path as the C source spells it: `m.rows`, `t->dims[0]`.
    pub fn c_source(&self) -> String {
        let object = self.c_lvalue("");
        let sep = if self.passing == Passing::ByPointer {
            "->"
        } else {
            "."
        };
        format!("{}{sep}{}", self.root, object.trim_start_matches('.'))
    }

    /// The prefixes of the path that are pointer fields followed by an
    /// index or a field: memory a driver must allocate before storing.
    pub fn pointer_prefixes(&self, object: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (k, step) in self.steps.iter().enumerate() {
            if matches!(step, FieldStep::Field { pointer: true, .. }) && k + 1 < self.steps.len() {
                let prefix = FieldPath {
                    steps: self.steps[..=k].to_vec(),
                    ..self.clone()
                };
                out.push(prefix.c_lvalue(object));
            }
        }
        out
    }
}

/// A local variable of the kernel; its lifetime is the whole kernel body
/// (block scoping is resolved by renaming shadowed names apart).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Local {
    pub name: String,
    pub kind: LocalKind,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LocalKind {
    Scalar { ty: ScalarType },
    Array(ArrayInfo),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stmt", rename_all = "snake_case")]
pub enum Stmt {
    Loop(Loop),
    /// `target = value`. Compound assignments and `++`/`--` are desugared
    /// (`x += e` becomes `x = (T)(x + e)` with C's conversions explicit).
    Assign {
        target: LValue,
        value: Expr,
        loc: Loc,
    },
    /// An `if` whose condition is affine in iterators and size parameters
    /// (an iteration-space guard), or depends on data (a per-element select).
    /// `cond` is any scalar expression, true when non-zero (as in C).
    If {
        cond: Expr,
        kind: IfKind,
        then_body: Vec<Stmt>,
        else_body: Vec<Stmt>,
        loc: Loc,
    },
    /// `return value;` as the kernel's last statement.
    Return {
        value: Expr,
        loc: Loc,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IfKind {
    Guard,
    Data,
}

/// `for (iter = start; iter < end; iter += step)` after normalisation:
/// the iterator takes `start, start+step, …` while it is strictly before
/// `end` in the direction of `step` (`< end` for step > 0, `> end` for
/// step < 0). `<=` bounds arrive here as `end = bound + 1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    /// Unique within the kernel. An iterator keeps its C name unless the
    /// name is already taken in the kernel (a parameter, a local, or any
    /// earlier loop's iterator, sibling loops included); then it becomes
    /// the first free `name_1`, `name_2`, ... in source order.
    pub iter: String,
    pub start: Affine,
    pub end: Affine,
    pub step: i64,
    pub body: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "lvalue", rename_all = "snake_case")]
pub enum LValue {
    /// A local scalar (or a scalar parameter the kernel overwrites).
    Scalar { name: String, ty: ScalarType },
    /// An array element with affine subscripts, one per logical dimension.
    Element {
        array: String,
        index: Vec<Affine>,
        ty: ScalarType,
    },
}

/// A typed expression. `ty` is the C type of the value after the usual
/// arithmetic conversions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub ty: ScalarType,
    #[serde(flatten)]
    pub kind: ExprKind,
}

impl Expr {
    /// Whether the expression reads the scalar `name` (a parameter, local
    /// or iterator), as a value or in a subscript.
    pub fn mentions(&self, name: &str) -> bool {
        match &self.kind {
            ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } => false,
            ExprKind::Var { name: v, .. } => v == name,
            ExprKind::Load { index, .. } => index.iter().any(|a| a.terms.contains_key(name)),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => arg.mentions(name),
            ExprKind::Binary { lhs, rhs, .. } => lhs.mentions(name) || rhs.mentions(name),
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => cond.mentions(name) || then_value.mentions(name) || else_value.mentions(name),
            ExprKind::Call { args, .. } => args.iter().any(|a| a.mentions(name)),
        }
    }
}

impl Stmt {
    /// Whether the statement reads the scalar `name` anywhere: values,
    /// conditions, subscripts, loop bounds.
    pub fn mentions(&self, name: &str) -> bool {
        let in_affine = |a: &Affine| a.terms.contains_key(name);
        match self {
            Stmt::Loop(l) => {
                in_affine(&l.start) || in_affine(&l.end) || l.body.iter().any(|s| s.mentions(name))
            }
            Stmt::Assign { target, value, .. } => {
                value.mentions(name)
                    || matches!(target, LValue::Element { index, .. } if index.iter().any(in_affine))
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => cond.mentions(name) || then_body.iter().chain(else_body).any(|s| s.mentions(name)),
            Stmt::Return { value, .. } => value.mentions(name),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "expr", rename_all = "snake_case")]
pub enum ExprKind {
    IntLit {
        value: i64,
    },
    /// `text` is the literal as written (`0.1f`), so an exact rational can be
    /// recovered; `value` is what the C compiler rounds it to.
    FloatLit {
        value: f64,
        text: String,
    },
    /// A scalar parameter, a local scalar, or a loop iterator used as a value.
    Var {
        name: String,
        class: VarClass,
    },
    Load {
        array: String,
        index: Vec<Affine>,
    },
    Unary {
        op: UnaryOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? then : else`, and what data-dependent branches become when a
    /// later stage flattens them.
    Select {
        cond: Box<Expr>,
        then_value: Box<Expr>,
        else_value: Box<Expr>,
    },
    /// A value-changing conversion, explicit or implicit in the C.
    Cast {
        arg: Box<Expr>,
    },
    Call {
        func: MathFn,
        args: Vec<Expr>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VarClass {
    Param,
    Local,
    Iter,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    Neg,
    /// Logical `!`.
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// `/`: real division on floats, truncation toward zero on integers
    /// (the operand type `ty` of the node decides).
    Div,
    /// `%`: C remainder, sign of the dividend.
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        )
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

/// The C math functions the frontend accepts. The precision (`sqrtf`,
/// `sqrt`, `sqrtl`) is the call node's `ty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MathFn {
    Sqrt,
    Exp,
    Log,
    /// `fabs` for floats, `abs`/`labs` for integers.
    Abs,
    Pow,
    Max,
    Min,
    Tanh,
    /// `round`: to the nearest integer, halves away from zero.
    Round,
    Floor,
    Ceil,
    Sin,
    Cos,
    /// `cosh`, `sinh` (llm.c's GELU backward takes a `sech` through `coshf`).
    Cosh,
    Sinh,
}

impl MathFn {
    pub fn arity(self) -> usize {
        match self {
            MathFn::Pow | MathFn::Max | MathFn::Min => 2,
            _ => 1,
        }
    }
}

fn fix_stmts(body: &mut [Stmt], values: &BTreeMap<String, i64>, fix: &dyn Fn(&mut Affine)) {
    for s in body {
        match s {
            Stmt::Loop(l) => {
                fix(&mut l.start);
                fix(&mut l.end);
                fix_stmts(&mut l.body, values, fix);
            }
            Stmt::Assign { target, value, .. } => {
                if let LValue::Element { index, .. } = target {
                    index.iter_mut().for_each(fix);
                }
                fix_expr(value, values, fix);
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                fix_expr(cond, values, fix);
                fix_stmts(then_body, values, fix);
                fix_stmts(else_body, values, fix);
            }
            Stmt::Return { value, .. } => fix_expr(value, values, fix),
        }
    }
}

fn fix_expr(e: &mut Expr, values: &BTreeMap<String, i64>, fix: &dyn Fn(&mut Affine)) {
    match &mut e.kind {
        ExprKind::Var { name, .. } => {
            if let Some(v) = values.get(name.as_str()) {
                e.kind = ExprKind::IntLit { value: *v };
            }
        }
        ExprKind::Load { index, .. } => index.iter_mut().for_each(fix),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => fix_expr(arg, values, fix),
        ExprKind::Binary { lhs, rhs, .. } => {
            fix_expr(lhs, values, fix);
            fix_expr(rhs, values, fix);
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            fix_expr(cond, values, fix);
            fix_expr(then_value, values, fix);
            fix_expr(else_value, values, fix);
        }
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| fix_expr(a, values, fix)),
        ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } => {}
    }
}
