//! A thin, safe layer over the raw libclang C API (crate `clang-sys`).
//!
//! We call clang-sys directly rather than through the `clang` crate because
//! we need the raw cursor for the clang 17+ operator-kind queries, and
//! because the `clang` crate allows only one `Clang` per process. Here the
//! shared library is loaded once per process ([`load`]) and installed into
//! the thread-local slot clang-sys uses on whatever thread parses
//! ([`install_on_this_thread`]); each parse owns its own index and
//! translation unit, so parses on different threads never share state.

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::{c_char, c_uint, c_void};
use std::ptr;
use std::sync::{Arc, OnceLock};

use clang_sys as sys;

/// The process-wide loaded libclang, or why it could not be loaded.
static LIBRARY: OnceLock<Result<Arc<sys::SharedLibrary>, String>> = OnceLock::new();

/// Loads libclang once for the whole process (honours `LIBCLANG_PATH`).
pub fn load() -> Result<Arc<sys::SharedLibrary>, String> {
    LIBRARY
        .get_or_init(|| {
            // libclang parses on a thread of its own with an 8 MiB stack
            // unless this is set, and a 200 000-term expression overflows
            // that stack (SIGSEGV, no diagnostic). Set, it parses on our
            // parsing thread, whose stack is large (see `extract`). Set once,
            // before any parse can read the environment.
            if std::env::var_os("LIBCLANG_NOTHREADS").is_none() {
                std::env::set_var("LIBCLANG_NOTHREADS", "1");
            }
            let library = sys::load_manually()?;
            Ok(Arc::new(library))
        })
        .clone()
}

/// Makes the loaded libclang usable from the calling thread and checks it
/// offers every function we call (libclang 17 or newer).
pub fn install_on_this_thread() -> Result<(), String> {
    let library = load()?;
    sys::set_library(Some(library));
    let required = [
        sys::clang_getCursorBinaryOperatorKind::is_loaded(),
        sys::clang_getCursorUnaryOperatorKind::is_loaded(),
        sys::clang_parseTranslationUnit2::is_loaded(),
        sys::clang_Cursor_Evaluate::is_loaded(),
    ];
    if required.iter().all(|&ok| ok) {
        Ok(())
    } else {
        Err("the loaded libclang is too old: libclang 17 or newer is required".to_string())
    }
}

fn take_string(s: sys::CXString) -> String {
    // SAFETY: a CXString returned by libclang is valid until disposed; we
    // copy it out and dispose it exactly once.
    unsafe {
        let c = sys::clang_getCString(s);
        let out = if c.is_null() {
            String::new()
        } else {
            CStr::from_ptr(c).to_string_lossy().into_owned()
        };
        sys::clang_disposeString(s);
        out
    }
}

/// An index: the owner of translation units.
pub struct Index {
    raw: sys::CXIndex,
}

impl Index {
    pub fn new() -> Index {
        // SAFETY: plain constructor; disposed in Drop.
        let raw = unsafe { sys::clang_createIndex(0, 0) };
        Index { raw }
    }

    /// Parses `path` with `args` (compiler flags, without the file name).
    pub fn parse(&self, path: &str, args: &[String]) -> Result<TranslationUnit<'_>, String> {
        let c_path = CString::new(path).map_err(|_| "file name contains a NUL byte".to_string())?;
        let c_args: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| "a compiler flag contains a NUL byte".to_string())?;
        let arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
        let mut tu: sys::CXTranslationUnit = ptr::null_mut();
        let options =
            sys::CXTranslationUnit_DetailedPreprocessingRecord | sys::CXTranslationUnit_KeepGoing;
        // SAFETY: all pointers outlive the call; `tu` is written on success.
        let code = unsafe {
            sys::clang_parseTranslationUnit2(
                self.raw,
                c_path.as_ptr(),
                arg_ptrs.as_ptr(),
                arg_ptrs.len() as i32,
                ptr::null_mut(),
                0,
                options,
                &mut tu,
            )
        };
        if code != sys::CXError_Success || tu.is_null() {
            return Err(format!(
                "libclang could not parse the file (error code {code})"
            ));
        }
        Ok(TranslationUnit {
            raw: tu,
            _index: PhantomData,
        })
    }
}

impl Default for Index {
    fn default() -> Self {
        Index::new()
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        // SAFETY: created by clang_createIndex, disposed once; every
        // translation unit borrows the index so it is already gone.
        unsafe { sys::clang_disposeIndex(self.raw) }
    }
}

/// A parsed file.
pub struct TranslationUnit<'i> {
    raw: sys::CXTranslationUnit,
    _index: PhantomData<&'i Index>,
}

/// One diagnostic libclang reported.
#[derive(Clone, Debug)]
pub struct ClangDiagnostic {
    pub is_error: bool,
    pub message: String,
    pub location: Option<Position>,
}

/// A resolved source position (expansion location: where a macro was used).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub in_main_file: bool,
}

impl<'i> TranslationUnit<'i> {
    pub fn root(&self) -> Cursor<'_> {
        // SAFETY: the TU is alive for the returned cursor's lifetime.
        Cursor {
            raw: unsafe { sys::clang_getTranslationUnitCursor(self.raw) },
            tu: self.raw,
            _tu: PhantomData,
        }
    }

    pub fn diagnostics(&self) -> Vec<ClangDiagnostic> {
        let mut out = Vec::new();
        // SAFETY: indices are in range; each diagnostic is disposed.
        unsafe {
            let n = sys::clang_getNumDiagnostics(self.raw);
            for i in 0..n {
                let d = sys::clang_getDiagnostic(self.raw, i);
                let severity = sys::clang_getDiagnosticSeverity(d);
                let message = take_string(sys::clang_getDiagnosticSpelling(d));
                let location = position_of(sys::clang_getDiagnosticLocation(d));
                out.push(ClangDiagnostic {
                    is_error: severity >= sys::CXDiagnostic_Error,
                    message,
                    location,
                });
                sys::clang_disposeDiagnostic(d);
            }
        }
        out
    }
}

impl Drop for TranslationUnit<'_> {
    fn drop(&mut self) {
        // SAFETY: created by clang_parseTranslationUnit2, disposed once.
        unsafe { sys::clang_disposeTranslationUnit(self.raw) }
    }
}

fn position_of(loc: sys::CXSourceLocation) -> Option<Position> {
    let mut file: sys::CXFile = ptr::null_mut();
    let (mut line, mut col, mut offset): (c_uint, c_uint, c_uint) = (0, 0, 0);
    // SAFETY: out-pointers are valid locals.
    unsafe {
        sys::clang_getExpansionLocation(loc, &mut file, &mut line, &mut col, &mut offset);
        if file.is_null() {
            return None;
        }
        let name = take_string(sys::clang_getFileName(file));
        let in_main_file = sys::clang_Location_isFromMainFile(loc) != 0;
        Some(Position {
            file: name,
            line,
            col,
            in_main_file,
        })
    }
}

/// A node of the clang AST, valid while its translation unit lives.
#[derive(Clone, Copy)]
pub struct Cursor<'tu> {
    raw: sys::CXCursor,
    tu: sys::CXTranslationUnit,
    _tu: PhantomData<&'tu ()>,
}

extern "C" fn collect_child(
    child: sys::CXCursor,
    _parent: sys::CXCursor,
    data: sys::CXClientData,
) -> sys::CXChildVisitResult {
    // SAFETY: `data` is the &mut Vec passed by `children` below.
    let children = unsafe { &mut *(data as *mut Vec<sys::CXCursor>) };
    children.push(child);
    sys::CXChildVisit_Continue
}

impl<'tu> Cursor<'tu> {
    fn wrap(&self, raw: sys::CXCursor) -> Cursor<'tu> {
        Cursor {
            raw,
            tu: self.tu,
            _tu: PhantomData,
        }
    }

    /// `raw` as a cursor, `None` when it is libclang's null cursor.
    fn non_null(&self, raw: sys::CXCursor) -> Option<Cursor<'tu>> {
        // SAFETY: reading a cursor of a live TU.
        (unsafe { sys::clang_Cursor_isNull(raw) } == 0).then(|| self.wrap(raw))
    }

    pub fn kind(&self) -> sys::CXCursorKind {
        // SAFETY: reading a cursor of a live TU.
        unsafe { sys::clang_getCursorKind(self.raw) }
    }

    pub fn kind_name(&self) -> String {
        // SAFETY: as above.
        take_string(unsafe { sys::clang_getCursorKindSpelling(self.kind()) })
    }

    /// The direct children, in source order.
    pub fn children(&self) -> Vec<Cursor<'tu>> {
        let mut raw: Vec<sys::CXCursor> = Vec::new();
        // SAFETY: the callback only pushes into `raw`, which outlives the call.
        unsafe {
            sys::clang_visitChildren(
                self.raw,
                collect_child,
                &mut raw as *mut Vec<sys::CXCursor> as *mut c_void,
            );
        }
        raw.into_iter().map(|c| self.wrap(c)).collect()
    }

    pub fn spelling(&self) -> String {
        // SAFETY: reading a cursor of a live TU.
        take_string(unsafe { sys::clang_getCursorSpelling(self.raw) })
    }

    pub fn ty(&self) -> Type<'tu> {
        // SAFETY: as above.
        Type {
            raw: unsafe { sys::clang_getCursorType(self.raw) },
            _tu: PhantomData,
        }
    }

    pub fn result_type(&self) -> Type<'tu> {
        // SAFETY: as above.
        Type {
            raw: unsafe { sys::clang_getCursorResultType(self.raw) },
            _tu: PhantomData,
        }
    }

    pub fn position(&self) -> Option<Position> {
        // SAFETY: as above.
        position_of(unsafe { sys::clang_getCursorLocation(self.raw) })
    }

    /// First and last line of the cursor's extent (expansion locations).
    pub fn line_span(&self) -> Option<(u32, u32)> {
        // SAFETY: as above.
        unsafe {
            let extent = sys::clang_getCursorExtent(self.raw);
            let start = position_of(sys::clang_getRangeStart(extent))?;
            let end = position_of(sys::clang_getRangeEnd(extent))?;
            Some((start.line, end.line))
        }
    }

    /// The declaration a reference or call names.
    pub fn referenced(&self) -> Option<Cursor<'tu>> {
        // SAFETY: as above.
        self.non_null(unsafe { sys::clang_getCursorReferenced(self.raw) })
    }

    /// A field declaration's offset in its record, in bytes (`None` for
    /// a bit-field off a byte boundary, or when libclang cannot say).
    pub fn field_offset_bytes(&self) -> Option<i64> {
        // SAFETY: as above; a negative result is libclang's error code.
        let bits = unsafe { sys::clang_Cursor_getOffsetOfField(self.raw) };
        (bits >= 0 && bits % 8 == 0).then_some(bits / 8)
    }

    /// Whether this field declaration is a bit-field.
    pub fn is_bit_field(&self) -> bool {
        // SAFETY: as above.
        unsafe { sys::clang_Cursor_isBitField(self.raw) != 0 }
    }

    /// The entity that declares this one (a field's record).
    pub fn semantic_parent(&self) -> Option<Cursor<'tu>> {
        // SAFETY: as above.
        self.non_null(unsafe { sys::clang_getCursorSemanticParent(self.raw) })
    }

    /// The definition of a declared entity (a function's body), if any.
    pub fn definition(&self) -> Option<Cursor<'tu>> {
        // SAFETY: as above.
        self.non_null(unsafe { sys::clang_getCursorDefinition(self.raw) })
    }

    /// The initialiser of a variable declaration.
    pub fn var_initializer(&self) -> Option<Cursor<'tu>> {
        // SAFETY: as above; a null cursor means "none".
        unsafe {
            let r = sys::clang_Cursor_getVarDeclInitializer(self.raw);
            if sys::clang_Cursor_isNull(r) != 0 {
                None
            } else {
                Some(self.wrap(r))
            }
        }
    }

    pub fn same_as(&self, other: &Cursor<'tu>) -> bool {
        // SAFETY: as above.
        unsafe { sys::clang_equalCursors(self.raw, other.raw) != 0 }
    }

    pub fn is_expression(&self) -> bool {
        // SAFETY: pure query on a kind.
        unsafe { sys::clang_isExpression(self.kind()) != 0 }
    }

    /// Whether a macro definition takes arguments (`#define SQ(x) ...`).
    pub fn is_macro_function_like(&self) -> bool {
        // SAFETY: as above.
        unsafe { sys::clang_Cursor_isMacroFunctionLike(self.raw) != 0 }
    }

    pub fn is_definition(&self) -> bool {
        // SAFETY: as above.
        unsafe { sys::clang_isCursorDefinition(self.raw) != 0 }
    }

    /// Whether a variable has global storage (file scope or `static`).
    pub fn has_global_storage(&self) -> bool {
        // SAFETY: as above.
        let linked = unsafe { sys::clang_getCursorLinkage(self.raw) != sys::CXLinkage_NoLinkage };
        linked || self.storage_class() == sys::CX_SC_Static
    }

    pub fn storage_class(&self) -> sys::CX_StorageClass {
        // SAFETY: as above.
        unsafe { sys::clang_Cursor_getStorageClass(self.raw) }
    }

    pub fn binary_operator(&self) -> sys::CXBinaryOperatorKind {
        // SAFETY: as above (clang 17+ checked at install time).
        unsafe { sys::clang_getCursorBinaryOperatorKind(self.raw) }
    }

    pub fn unary_operator(&self) -> sys::CXUnaryOperatorKind {
        // SAFETY: as above.
        unsafe { sys::clang_getCursorUnaryOperatorKind(self.raw) }
    }

    /// Evaluates a constant expression (literals) to an integer.
    pub fn evaluate_int(&self) -> Option<EvaluatedInt> {
        // SAFETY: the result is disposed before returning.
        unsafe {
            let result = sys::clang_Cursor_Evaluate(self.raw);
            if result.is_null() {
                return None;
            }
            let out = if sys::clang_EvalResult_getKind(result) == sys::CXEval_Int {
                if sys::clang_EvalResult_isUnsignedInt(result) != 0 {
                    Some(EvaluatedInt::Unsigned(sys::clang_EvalResult_getAsUnsigned(
                        result,
                    )))
                } else {
                    Some(EvaluatedInt::Signed(sys::clang_EvalResult_getAsLongLong(
                        result,
                    )))
                }
            } else {
                None
            };
            sys::clang_EvalResult_dispose(result);
            out
        }
    }

    /// Evaluates a floating literal.
    pub fn evaluate_float(&self) -> Option<f64> {
        // SAFETY: the result is disposed before returning.
        unsafe {
            let result = sys::clang_Cursor_Evaluate(self.raw);
            if result.is_null() {
                return None;
            }
            let out = (sys::clang_EvalResult_getKind(result) == sys::CXEval_Float)
                .then(|| sys::clang_EvalResult_getAsDouble(result));
            sys::clang_EvalResult_dispose(result);
            out
        }
    }

    /// The spellings of the tokens the cursor covers (at their spelling
    /// location, so a literal inside a macro body yields the literal).
    pub fn tokens(&self) -> Vec<String> {
        let mut out = Vec::new();
        // SAFETY: the token buffer is disposed after copying the spellings.
        unsafe {
            let extent = sys::clang_getCursorExtent(self.raw);
            let mut tokens: *mut sys::CXToken = ptr::null_mut();
            let mut count: c_uint = 0;
            sys::clang_tokenize(self.tu, extent, &mut tokens, &mut count);
            if tokens.is_null() {
                return out;
            }
            for i in 0..count as usize {
                out.push(take_string(sys::clang_getTokenSpelling(
                    self.tu,
                    *tokens.add(i),
                )));
            }
            sys::clang_disposeTokens(self.tu, tokens, count);
        }
        out
    }
}

/// An integer constant as libclang evaluated it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvaluatedInt {
    Signed(i64),
    Unsigned(u64),
}

/// A C type, valid while its translation unit lives.
#[derive(Clone, Copy)]
pub struct Type<'tu> {
    raw: sys::CXType,
    _tu: PhantomData<&'tu ()>,
}

impl<'tu> Type<'tu> {
    fn wrap(raw: sys::CXType) -> Type<'tu> {
        Type {
            raw,
            _tu: PhantomData,
        }
    }

    pub fn kind(&self) -> sys::CXTypeKind {
        self.raw.kind
    }

    pub fn canonical(&self) -> Type<'tu> {
        // SAFETY: type queries on a live TU.
        Type::wrap(unsafe { sys::clang_getCanonicalType(self.raw) })
    }

    pub fn pointee(&self) -> Type<'tu> {
        // SAFETY: as above.
        Type::wrap(unsafe { sys::clang_getPointeeType(self.raw) })
    }

    pub fn element(&self) -> Type<'tu> {
        // SAFETY: as above.
        Type::wrap(unsafe { sys::clang_getArrayElementType(self.raw) })
    }

    /// Size of a constant array, `None` otherwise.
    pub fn array_size(&self) -> Option<i64> {
        // SAFETY: as above.
        let n = unsafe { sys::clang_getArraySize(self.raw) };
        (n >= 0).then_some(n)
    }

    /// `sizeof` the type in bytes (`None` for an incomplete type).
    pub fn size_of(&self) -> Option<i64> {
        // SAFETY: as above; a negative result is libclang's error code.
        let n = unsafe { sys::clang_Type_getSizeOf(self.raw) };
        (n >= 0).then_some(n)
    }

    pub fn is_restrict(&self) -> bool {
        // SAFETY: as above.
        unsafe { sys::clang_isRestrictQualifiedType(self.raw) != 0 }
    }

    pub fn spelling(&self) -> String {
        // SAFETY: as above.
        take_string(unsafe { sys::clang_getTypeSpelling(self.raw) })
    }
}
