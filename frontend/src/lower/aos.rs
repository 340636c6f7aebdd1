//! Arrays of structs as flat arrays of their fields' type.
//!
//! Points, complex samples and pixels are often structs in an array:
//!
//! ```c
//! typedef struct { float re, im; } cpx;
//! void cpx_mul(const cpx *a, const cpx *b, cpx *c, int n) {
//!     for (int i = 0; i < n; i++) c[i].re = a[i].re*b[i].re - a[i].im*b[i].im; …
//! ```
//!
//! When every field the kernel reads or writes through a pointer parameter
//! has one scalar type `T`, each at an offset that is a multiple of
//! `sizeof(T)` in a record whose size is one too, the array is the same
//! memory as a flat array of `T` with `k = sizeof(record) / sizeof(T)`
//! elements a record, and `a[e].f` is element `e*k + j` of it (`j` the
//! field's offset in `T`s): exactly the interleaved-channel subscripts the
//! rest of the lowering reads (`x[2*i + 1]`). The parameter becomes a `T *`
//! (a caller passes the struct array's memory: `arr.view(np.float32)`);
//! the fields nobody names are never read or written. Applied only where
//! every use of the parameter is such a subscripted member access and at
//! least one subscript varies, so a descriptor passed by pointer
//! (`t->dims[0]`) stays with [`super::fields`].

use crate::ir::ScalarType;
use crate::syntax::{CBinOp, CExpr, CExprKind, CFunction, CType, DeclRef, IntValue};

/// `func` with each array-of-structs parameter read as a flat array, and
/// those parameters as `(name, struct type, elements a record)`; `None`
/// when it has none.
pub(super) type Unpacked = (CFunction, Vec<(String, String, i64)>);

pub(super) fn flatten_arrays(func: &CFunction) -> Option<Unpacked> {
    let mut out = func.clone();
    let mut unpacked = Vec::new();
    for (at, p) in func.params.iter().enumerate() {
        let CType::Pointer { pointee, restrict } = &p.ty else {
            continue;
        };
        let CType::Struct(record) = &**pointee else {
            continue;
        };
        let Some(plan) = plan(func, &p.key, record) else {
            continue;
        };
        let flat = CType::Pointer {
            pointee: Box::new(CType::Scalar(plan.elem)),
            restrict: *restrict,
        };
        out.body = out
            .body
            .iter()
            .map(|s| s.map_exprs(&mut |e| rewritten(e, &p.key, &plan, &flat)))
            .collect();
        out.params[at].ty = flat;
        unpacked.push((p.name.clone(), record.clone(), plan.per_record));
    }
    (!unpacked.is_empty()).then_some((out, unpacked))
}

/// How one parameter's records read as a flat array.
struct Plan {
    elem: ScalarType,
    /// `T`s a record.
    per_record: i64,
    /// Each named field's index within its record, in `T`s.
    fields: Vec<(String, i64)>,
}

/// The plan for parameter `key` of struct type `record`, when every use
/// of it is `key[e].field` over fields of one scalar type laid out in
/// whole `T`s, and some subscript is not a constant.
fn plan(func: &CFunction, key: &str, record: &str) -> Option<Plan> {
    let mut uses = Uses::default();
    let mut total = 0usize;
    for s in &func.body {
        s.any_expr(&mut |e| {
            uses.visit(e, key);
            total += e.count_refs(key);
            false
        });
    }
    if uses.accesses == 0 || uses.accesses != total || !uses.varying || uses.mixed {
        return None;
    }
    let elem = uses.elem?;
    let size = i64::from(elem.bits() / 8);
    let mut fields = Vec::new();
    let mut record_size = None;
    for name in &uses.fields {
        let layout = func
            .field_layouts
            .get(&(record.to_string(), name.clone()))?;
        if layout.offset % size != 0 || layout.record_size % size != 0 {
            return None;
        }
        record_size = Some(layout.record_size);
        fields.push((name.clone(), layout.offset / size));
    }
    Some(Plan {
        elem,
        per_record: record_size? / size,
        fields,
    })
}

/// What the walk over a body saw of one parameter.
#[derive(Default)]
struct Uses {
    accesses: usize,
    varying: bool,
    /// A field of another type than the first, or not a scalar.
    mixed: bool,
    elem: Option<ScalarType>,
    fields: Vec<String>,
}

impl Uses {
    fn visit(&mut self, e: &CExpr, key: &str) {
        if let Some((_, index, field)) = member_of(e, key) {
            self.accesses += 1;
            self.varying |= index.int_constant().is_none();
            match (e.ty.scalar(), self.elem) {
                (Some(t), None) => self.elem = Some(t),
                (Some(t), Some(u)) if t == u => {}
                _ => self.mixed = true,
            }
            if !self.fields.iter().any(|f| f == field) {
                self.fields.push(field.to_string());
            }
        }
        for c in e.children() {
            self.visit(c, key);
        }
    }
}

/// `(base, index, field)` of `key[index].field`.
fn member_of<'e>(e: &'e CExpr, key: &str) -> Option<(&'e CExpr, &'e CExpr, &'e str)> {
    let CExprKind::Member { base, field } = &e.kind else {
        return None;
    };
    let CExprKind::Subscript { base: array, index } = &base.stripped().kind else {
        return None;
    };
    (array.ref_key() == Some(key)).then_some((array, index, field))
}

/// `e` with every `key[index].field` as the flat element `key[(index) *
/// k + j]` (the parameter now of type `flat`).
fn rewritten(e: &CExpr, key: &str, plan: &Plan, flat: &CType) -> CExpr {
    if let Some((array, index, field)) = member_of(e, key) {
        let j = plan
            .fields
            .iter()
            .find(|(f, _)| f == field)
            .map_or(0, |f| f.1);
        let index = rewritten(index, key, plan, flat);
        let at = |kind| CExpr {
            kind,
            ty: index.ty.clone(),
            loc: index.loc.clone(),
        };
        let int = |v| at(CExprKind::Int(IntValue::Fits(v)));
        let paren = at(CExprKind::Paren(Box::new(index.clone())));
        let scaled = at(CExprKind::Binary {
            op: CBinOp::Mul,
            lhs: Box::new(paren),
            rhs: Box::new(int(plan.per_record)),
        });
        let element = at(CExprKind::Binary {
            op: CBinOp::Add,
            lhs: Box::new(scaled),
            rhs: Box::new(int(j)),
        });
        let base = CExpr {
            kind: CExprKind::Ref(DeclRef {
                name: ref_name(array),
                key: key.to_string(),
                target: crate::syntax::RefTarget::Param,
            }),
            ty: flat.clone(),
            loc: array.loc.clone(),
        };
        return CExpr {
            kind: CExprKind::Subscript {
                base: Box::new(base),
                index: Box::new(element),
            },
            ty: e.ty.clone(),
            loc: e.loc.clone(),
        };
    }
    let mut out = e.clone();
    out.map_children(&mut |c| rewritten(c, key, plan, flat));
    out
}

fn ref_name(e: &CExpr) -> String {
    match &e.stripped().kind {
        CExprKind::Ref(r) => r.name.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn an_array_of_structs_reads_as_its_interleaved_fields() {
        let aos = "typedef struct { float re, im; } cpx;
            void f(const cpx *a, cpx *c, int n) {
                for (int i = 0; i < n; i++) { c[i].re = a[i].im; c[i].im = a[i].re; }
            }";
        let flat = "void f(const float *a, float *c, int n) {
                for (int i = 0; i < n; i++) { c[i*2 + 0] = a[i*2 + 1]; c[i*2 + 1] = a[i*2 + 0]; }
            }";
        assert_eq!(lowered(aos), lowered(flat));
    }

    #[test]
    fn fields_of_two_types_stay_refused() {
        let mixed = "typedef struct { float v; int idx; } item;
            void f(const item *a, float *y, int n) {
                for (int i = 0; i < n; i++) y[i] = a[i].v * a[i].idx;
            }";
        assert!(lowered(mixed).is_err());
    }

    #[test]
    fn bit_fields_stay_refused() {
        // `lo` is the low 4 bits of the record's first int, not that int.
        let packed = "typedef struct { int lo : 4; int pad : 28; int v; } nib;
            void f(const nib *a, int *y, int n) {
                for (int i = 0; i < n; i++) y[i] = a[i].lo + a[i].v;
            }";
        assert!(lowered(packed).is_err());
    }

    #[test]
    fn unnamed_fields_of_another_type_are_skipped_over() {
        // `idx` is never read: the floats sit at 0 and 8 in a 16-byte record.
        let aos = "typedef struct { float x; int idx; float y; float pad; } pt;
            void f(const pt *p, float *y, int n) {
                for (int i = 0; i < n; i++) y[i] = p[i].x + p[i].y;
            }";
        let flat = "void f(const float *p, float *y, int n) {
                for (int i = 0; i < n; i++) y[i] = p[i*4 + 0] + p[i*4 + 2];
            }";
        assert_eq!(lowered(aos), lowered(flat));
    }
}
