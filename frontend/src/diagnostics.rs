//! Located diagnostics and the table of every rejection code (`TL0xx`).
//!
//! Each code has a one-line summary, an explanation and an example, in
//! [`CODES`]; `frontend/DIAGNOSTICS.md` is generated from that table (a unit
//! test keeps it in sync). Diagnostics render like clang's:
//! `file:line:col: error[TL020]: message`, the source line, and a caret.

use std::fmt::Write as _;

use crate::ir::Loc;

/// A rejection code with its documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    pub id: &'static str,
    pub summary: &'static str,
    pub explanation: &'static str,
    pub example: &'static str,
}

macro_rules! codes {
    ($($name:ident = $id:literal, $summary:literal, $explanation:literal, $example:literal;)+) => {
        $(pub const $name: Code = Code { id: $id, summary: $summary, explanation: $explanation, example: $example };)+
        /// Every code, in numeric order.
        pub const CODES: &[Code] = &[$($name),+];
    };
}

codes! {
    CLANG_ERROR = "TL001", "the C compiler rejected the file",
        "libclang reported an error (syntax error, undeclared name, bad type). The message is clang's own.",
        "void k(int n) { for (int i = 0; i < n; i++) x[i] = 0 }";
    NO_KERNEL = "TL002", "no kernel found",
        "The file defines no function other than `main` (or `--function` selected none). When some function has a `for` loop or a `#pragma scop` region, only those are kernels; a file of loop-free functions lifts every one of them.",
        "int main(void) { return 0; }";
    UNKNOWN_FUNCTION_NAME = "TL003", "--function names a function the file does not define",
        "Every name given with `--function` must be a function defined (with a body) in the file.",
        "/* $ tenslift extract gemm.c --function gemmm */";
    TOO_DEEP = "TL004", "construct nested too deeply",
        "Expressions or statements nested deeper than the frontend's limit are refused rather than risking a stack overflow.",
        "x = ((((((...1000 levels...))))));";
    SCOP_UNMATCHED = "TL005", "unmatched `#pragma scop` / `#pragma endscop`",
        "A `#pragma scop` must be followed by a `#pragma endscop` inside the same function, and the region must contain statements.",
        "#pragma scop\nfor (i = 0; i < n; i++) y[i] = 0;\n/* no endscop */";
    UNSAFE_INPUT_FILE = "TL006", "an included file is not a regular file, or is too large",
        "Before parsing, every `#include` the frontend can resolve (quoted, absolute, or found in an `-I` directory) and every `-include` file must be a regular file of at most 32 MiB: a device such as `/dev/zero`, a FIFO or a directory would make the parser read forever. Includes named through a macro cannot be checked beforehand; the parse time limit (`--timeout`) stops those.",
        "#include \"/dev/zero\"";
    WHILE_LOOP = "TL010", "`while` and `do` loops have no affine trip count",
        "Only `for` loops with affine bounds describe an iteration space the lifter can reason about; rewrite the loop as a counted `for`.",
        "while (err > tol) { ... }";
    GOTO = "TL011", "`goto` and labels are not supported",
        "Jumps make the control flow non-structured; the loop IR only has nested loops and ifs.",
        "if (A[i] < 0) goto done;";
    BREAK_CONTINUE = "TL012", "`break` and `continue` are not supported",
        "An early exit makes the trip count depend on data; the loop IR needs every iteration to run.",
        "for (i = 0; i < n; i++) { if (A[i] == key) break; }";
    UNSUPPORTED_STATEMENT = "TL013", "unsupported statement",
        "`switch`, inline assembly and other statements outside loops, ifs, assignments and declarations are not lifted.",
        "switch (mode) { case 0: ... }";
    FOR_SHAPE = "TL014", "`for` loop needs an initialiser, a condition and an increment on one integer iterator",
        "The loop must read `for (i = start; i < end; i += step)` (or `<=`, `>`, `>=`, `!=`, `i++`, `i--`, `i = i + c`...).",
        "for (;;) { ... }";
    NON_AFFINE_BOUND = "TL015", "loop bound is not affine in parameters and outer iterators",
        "Start and end must be sums of integer constants times integer parameters or enclosing iterators; bounds read from arrays or products of variables are data-dependent or non-linear.",
        "for (j = rowptr[i]; j < rowptr[i+1]; j++)";
    BAD_STEP = "TL016", "loop step must be a non-zero integer constant",
        "The increment must add or subtract a constant, so the iteration space is a regular range.",
        "for (i = 1; i < n; i *= 2)";
    LOOP_DIRECTION = "TL017", "loop condition does not match the step direction",
        "An up-counting loop needs `<`, `<=` or `!=` (with step 1); a down-counting one `>`, `>=` or `!=` (with step -1). Anything else runs zero times or forever.",
        "for (i = 0; i > n; i++)";
    ITERATOR_WRITTEN = "TL018", "loop iterator is written inside the loop body",
        "The iteration space must be fixed by the loop header.",
        "for (i = 0; i < n; i++) { if (A[i] < 0) i++; }";
    ITERATOR_TYPE = "TL019", "loop iterator must be a local integer variable",
        "Floating-point or pointer iterators do not describe an integer iteration space; a global or parameter used as the iterator would leave its final value behind, which the loop IR does not model.",
        "for (float x = 0; x < 1; x += 0.1f)";
    NON_AFFINE_SUBSCRIPT = "TL020", "array subscript is not affine",
        "Subscripts must be affine in loop iterators and integer parameters (a linearised `i*lda + k` is split into dimensions first). Divisions, products of iterators and local variables are refused.",
        "A[i*j] = 0;  B[i/2] = 1;";
    INDIRECT_SUBSCRIPT = "TL021", "indirect subscript: the index is read from memory",
        "An index loaded from an array (gather/scatter) is data-dependent; the access pattern is unknown statically.",
        "h[img[i]] += 1;";
    POINTER_ARITHMETIC = "TL022", "pointer arithmetic or pointer derived inside the kernel",
        "Subscripts of pointer and array parameters are understood, and so are pointers to scalars that walk them (`float *p = A + k; *p++`, rewritten as subscripts; see TL025-TL027). Other pointers computed in the kernel (pointers to pointers, dereferences of anything that is not a kernel array) may alias anything and are refused.",
        "double **rows = table; rows[i][0] = 0;";
    BAD_STRIDE = "TL023", "linearised subscript has a stride the loop IR cannot store",
        "A flat subscript is split into dimensions whose strides must be a constant or one integer parameter times a constant (e.g. `lda`). A loop-invariant parameter times a stride is a position in its own dimension (`head*head_size` is index `head` with stride `head_size`, told apart because `head_size` bounds a loop). Strides that are products of parameters such as `n*p`, two iterator strides competing for the same dimension, and parameter products whose position and stride cannot be told apart are refused.",
        "A[(i*n + j)*p + k] = 0;  /* stride of i is n*p */";
    PARTIAL_SUBSCRIPT = "TL024", "array used without one subscript per dimension",
        "Every use of an array must name a single element; rows (`A[i]` of a 2-D array), whole arrays and pointer-to-pointer data are not lifted.",
        "double *row = A[i];";
    POINTER_NOT_AFFINE = "TL025", "local pointer has no affine value here",
        "A pointer walked through an array (`p = x; ... *p++`) is rewritten as a subscript of that array when its value is the array plus an affine offset at every use. A pointer set from different arrays on different paths, advanced by a value read from memory or held in a variable, advanced under an `if` (so one path moves it and the other does not), advanced by an amount that depends on its own loop's iterator, or reset after use inside a loop has no such value.",
        "if (x[i] > 0) p++;  y[i] = *p;";
    POINTER_ESCAPES = "TL026", "local pointer escapes the kernel's view",
        "A walking pointer must only be dereferenced, subscripted, assigned and advanced. Passed to a function, stored, compared or subtracted, its uses are unknown.",
        "float *p = x; scale(p, n);";
    POINTER_OVERLAP = "TL027", "two pointers write the same array",
        "Two different walking pointers (or a pointer and its array's own name) that both write one array may write overlapping regions; the lifter does not prove their ranges disjoint, so the writes are refused rather than ordered by guess. Writes on the two branches of one `if`, and writes of a helper the array is passed to (each call its own scope), are not compared.",
        "float *lo = y, *hi = y + 1; for (...) { *lo++ = a; *hi++ = b; }";
    UNKNOWN_CALL = "TL030", "call to a function the lifter does not know",
        "Only the math functions sqrt, exp, log, fabs, pow, fmax, fmin, tanh (with `f` variants), abs, labs and llabs can be called, plus helpers whose whole body is `return expr;` over scalar parameters (those are inlined). Other functions, including longer ones defined in the same file, have unknown effects.",
        "y[i] = my_helper(x[i]);";
    UNSUPPORTED_OPERATOR = "TL031", "unsupported operator",
        "Bitwise operators, shifts, the comma operator, `&`, `*` (dereference) and `sizeof` have no loop-IR counterpart.",
        "y[i] = x[i] >> 2;";
    SIDE_EFFECT_IN_EXPRESSION = "TL032", "assignment or increment inside an expression",
        "Assignments, `++` and `--` must be whole statements (a chain `a = b = e;` counts as one: it becomes one assignment per target), so evaluating an expression never writes memory.",
        "y[i] = x[j++];  x = (t = y[i]) + 1;";
    MEMBER_ACCESS = "TL033", "struct field the kernel cannot use as a parameter",
        "Fields of struct parameters and globals are read as parameters of their own (`m.rows` becomes the size `m_rows`, `m.vals` the array `m_vals`), so a field must hold a scalar or a pointer to scalars (a `void *` cast to one where it is used), and scalar fields are read-only: a size the kernel changes is no size. Member access on anything but a struct parameter or global is refused too.",
        "void k(matrix *m) { for (i = 0; i < m->rows; i++) ...; m->rows = 0; }";
    UNSUPPORTED_TYPE = "TL034", "unsupported type",
        "Values must be bool, 8- to 64-bit integers, float or double; arrays and pointers of those. Pointers to pointers (up to `T ***`) are row-pointer arrays, and struct parameters are read field by field (TL033); long double, complex, function pointers and deeper pointers are refused.",
        "void k(long double *x, int n)";
    LITERAL_OVERFLOW = "TL035", "integer literal does not fit in 64 bits",
        "The loop IR stores integer literals as signed 64-bit values.",
        "x = 18446744073709551615u;";
    RECURSION = "TL036", "recursive call",
        "A kernel that calls itself has no loop-nest form.",
        "int f(int n) { return n ? f(n - 1) : 0; }";
    BAD_RETURN = "TL037", "`return` must be the last statement of the kernel",
        "An early return makes the trip count data-dependent; only a final `return expr;` (a returned scalar) is lifted. Leading guards (`if (n <= 0) return;`) are checked ahead of the program, and a top-level `if` whose branches each return always or never takes the statements after it as its `else`.",
        "for (...) { if (A[i] == x) return i; }";
    INITIALIZER_LIST = "TL038", "array initialiser lists are not supported",
        "Local arrays must be declared without an initialiser and filled by loops.",
        "double t[3] = {0, 0, 0};";
    STATIC_LOCAL = "TL039", "static or thread-local local variable",
        "A `static` local keeps its value between calls, so the kernel would not be a pure function of its parameters.",
        "static int calls = 0;";
    ITERATOR_AFTER_LOOP = "TL040", "loop iterator read after its loop",
        "The loop IR does not define an iterator's value after the loop ends; use the bound directly.",
        "for (i = 0; i < n; i++) ...; last = A[i - 1];";
    UNSUPPORTED_EXPRESSION = "TL041", "unsupported expression",
        "The expression has no loop-IR counterpart (compound literals, statement expressions, string literals, `_Generic`, ...), or it reads a scalar that was initialised above the `#pragma scop` region by something the kernel cannot evaluate (a call).",
        "y[i] = ({ int t = x[i]; t * t; });";
}

/// One located rejection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    /// `None` for file-level problems (no kernel, unknown `--function`).
    pub loc: Option<Loc>,
    pub message: String,
}

impl Diagnostic {
    pub fn new(code: Code, loc: Option<Loc>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            loc,
            message: message.into(),
        }
    }

    /// Renders like clang: header line, source line, caret line. `source`
    /// returns the contents of a file named in a location.
    pub fn render(&self, file: &str, source: &dyn Fn(&str) -> Option<String>) -> String {
        self.render_styled(file, source, Style::default())
    }

    /// [`Diagnostic::render`] with clang's colours when `style.color`.
    pub fn render_styled(
        &self,
        file: &str,
        source: &dyn Fn(&str) -> Option<String>,
        style: Style,
    ) -> String {
        let mut out = String::new();
        let (bold, red, green, reset) = if style.color {
            ("\x1b[1m", "\x1b[1;31m", "\x1b[1;32m", "\x1b[0m")
        } else {
            ("", "", "", "")
        };
        let Some(loc) = &self.loc else {
            let _ = writeln!(
                out,
                "{bold}{file}: {red}error[{}]:{reset}{bold} {}{reset}",
                self.code.id, self.message
            );
            return out;
        };
        let _ = writeln!(
            out,
            "{bold}{}:{}:{}: {red}error[{}]:{reset}{bold} {}{reset}",
            loc.file, loc.line, loc.col, self.code.id, self.message
        );
        if let Some(line) = source(&loc.file)
            .as_deref()
            .and_then(|text| text.lines().nth(loc.line.saturating_sub(1) as usize))
        {
            let gutter = loc.line.to_string();
            let pad = " ".repeat(gutter.len());
            let (shown, caret) = excerpt(line, loc.col);
            let _ = writeln!(out, " {gutter} | {shown}");
            let _ = writeln!(out, " {pad} | {green}{caret}^{reset}");
        }
        out
    }

    /// What the user can do about this refusal: a rewrite that lifts today,
    /// or the planned feature (by issue) that would lift it as written.
    pub fn next_step(&self) -> Option<&'static str> {
        let message = self.message.as_str();
        Some(match self.code.id {
            "TL001" => "pass the flags the file is compiled with: -I DIR, -D NAME=VALUE, --std, or -p BUILD_DIR for a compile_commands.json",
            "TL002" => "define the kernel as a function in this file (loops are optional); or mark a region with `#pragma scop` ... `#pragma endscop`",
            "TL004" => "split the expression into several statements through local temporaries",
            "TL010" => "when the trip count is known, write the loop as a counted `for (i = start; i < end; i++)`",
            "TL022" => "a local pointer lifts when it walks one array of the kernel by affine steps (`p = A + k; p++`); write other pointer uses as subscripts of the parameter itself, `A[k + i]`",
            "TL033" => "struct fields lift as parameters of their own when the kernel only reads them (`m.rows`, `t->dims[0]`, `(double *)t->vals`); copy a written field to a local",
            "TL034" if message.contains("**") => "`T **` row-pointer matrices lift when indexed `A[i][j]` directly; otherwise pass a flat array and its leading dimension",
            "TL034" if message.contains("struct") => "struct parameters lift when the kernel reads their scalar and array fields; pass other structs' arrays and sizes as separate parameters",
            "TL030" => "helpers whose whole body is `return expr;` over scalars are inlined, and those with statements before their only `return` are hoisted out of a plain statement calling them; give the lifter the helper's definition in that form, or leave this function out with --function",
            _ => return None,
        })
    }
}

/// How diagnostics are rendered: plain, or with clang's ANSI colours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

/// Source lines longer than this many bytes are shown as a window around
/// the column (a generated 2 MB line must not become a 2 MB diagnostic).
const EXCERPT_BYTES: usize = 160;

/// The part of `line` to show and the padding that puts a caret under
/// byte column `col` (1-based, as clang counts).
fn excerpt(line: &str, col: u32) -> (String, String) {
    let floor = |mut at: usize| {
        at = at.min(line.len());
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let cut = floor(col.saturating_sub(1) as usize);
    let (start, end) = if line.len() <= EXCERPT_BYTES {
        (0, line.len())
    } else {
        let start = floor(cut.saturating_sub(EXCERPT_BYTES / 2));
        (start, floor(start + EXCERPT_BYTES))
    };
    let (before, after) = (start > 0, end < line.len());
    let shown = format!(
        "{}{}{}",
        if before { "..." } else { "" },
        &line[start..end],
        if after { "..." } else { "" }
    );
    // Pad with one space per character so the caret lines up in UTF-8.
    let caret: String = (if before { "..." } else { "" })
        .chars()
        .chain(line[start..cut].chars())
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    (shown, caret)
}

/// Every rejection found in one file, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// The file as the user named it.
    pub file: String,
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Renders all diagnostics, reading source lines from disk.
    pub fn render(&self) -> String {
        self.render_styled(Style::default())
    }

    /// [`Diagnostics::render`] in `style`.
    pub fn render_styled(&self, style: Style) -> String {
        let read = |path: &str| {
            std::fs::read(path)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        let mut out = String::new();
        let mut notes = std::collections::HashSet::new();
        for d in &self.items {
            out.push_str(&d.render_styled(&self.file, &read, style));
            // Each next step once, after the first diagnostic it helps.
            if let Some(note) = d.next_step().filter(|n| notes.insert(*n)) {
                let (bold, reset) = if style.color {
                    ("\x1b[1m", "\x1b[0m")
                } else {
                    ("", "")
                };
                let _ = writeln!(out, "{bold}note:{reset} {note}");
            }
        }
        let n = self.items.len();
        let _ = writeln!(
            out,
            "{} error{} generated.",
            n,
            if n == 1 { "" } else { "s" }
        );
        out
    }
}

/// The Markdown reference of every code (the contents of DIAGNOSTICS.md).
pub fn codes_markdown() -> String {
    let mut out = String::from(
        "# tenslift frontend diagnostics\n\n\
         Generated from `frontend/src/diagnostics.rs` (the `CODES` table); \
         the unit test `diagnostics_md_is_current` fails when this file is stale \
         (regenerate with `UPDATE_DIAGNOSTICS=1 cargo test -p tenslift-frontend diagnostics_md`).\n\n\
         Every rejection is printed like clang's errors: \
         `file:line:col: error[TL0xx]: message`, then the source line and a caret.\n\n",
    );
    for c in CODES {
        let _ = write!(
            out,
            "## {} — {}\n\n{}\n\nExample:\n\n```c\n{}\n```\n\n",
            c.id, c.summary, c.explanation, c.example
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_sorted() {
        for pair in CODES.windows(2) {
            assert!(pair[0].id < pair[1].id, "{} !< {}", pair[0].id, pair[1].id);
        }
    }

    #[test]
    fn renders_source_line_and_caret() {
        let d = Diagnostic::new(
            GOTO,
            Some(Loc {
                file: "k.c".into(),
                line: 2,
                col: 5,
            }),
            "`goto` is not supported",
        );
        let text = d.render("k.c", &|_| Some("int x;\n\tif (a) goto out;\n".to_string()));
        assert_eq!(
            text,
            "k.c:2:5: error[TL011]: `goto` is not supported\n 2 | \tif (a) goto out;\n   | \t   ^\n"
        );
    }

    #[test]
    fn caret_counts_bytes_like_clang() {
        // "é" is two bytes: clang puts `x` at column 10.
        let d = Diagnostic::new(
            GOTO,
            Some(Loc {
                file: "k.c".into(),
                line: 1,
                col: 10,
            }),
            "m",
        );
        let text = d.render("k.c", &|_| Some("/* é */ x = 1;".to_string()));
        assert!(
            text.ends_with(" 1 | /* é */ x = 1;\n   |         ^\n"),
            "{text}"
        );
        assert_eq!(text.lines().last().map(|l| l.find('^')), Some(Some(13)));
    }

    #[test]
    fn long_lines_show_a_window_around_the_column() {
        let line = format!("x = {};", "a + ".repeat(100_000));
        let d = Diagnostic::new(
            TOO_DEEP,
            Some(Loc {
                file: "k.c".into(),
                line: 1,
                col: 200_001,
            }),
            "m",
        );
        let text = d.render("k.c", &|_| Some(line.clone()));
        assert!(text.len() < 600, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        let (shown, caret) = (lines[1], lines[2]);
        assert!(
            shown.contains(" | ...") && shown.ends_with("..."),
            "{shown}"
        );
        let at = caret.find('^').expect("a caret");
        assert_eq!(&shown[at..at + 1], &line[200_000..200_001]);
    }

    #[test]
    fn colour_wraps_the_header_and_caret() {
        let d = Diagnostic::new(GOTO, None, "m");
        let plain = d.render("k.c", &|_| None);
        let coloured = d.render_styled("k.c", &|_| None, Style { color: true });
        assert_eq!(plain, "k.c: error[TL011]: m\n");
        assert!(coloured.contains("\x1b[1;31merror[TL011]:"), "{coloured:?}");
    }

    #[test]
    fn diagnostics_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/DIAGNOSTICS.md");
        let expected = codes_markdown();
        if std::env::var_os("UPDATE_DIAGNOSTICS").is_some() {
            std::fs::write(path, &expected).expect("write DIAGNOSTICS.md");
        }
        let actual = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            actual == expected,
            "DIAGNOSTICS.md is stale: run UPDATE_DIAGNOSTICS=1 cargo test -p tenslift-frontend diagnostics_md"
        );
    }
}
