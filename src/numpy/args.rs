//! Binds a call's arguments to NumPy's parameter names, positionally or
//! by keyword, and refuses what is left over (`out=`, `dtype=` where it
//! would change the result, a misspelt keyword).

use tenslift_frontend::ir::{Affine, Loc};

use super::diagnostics::{error, BAD_ARGUMENT};
use super::eval::{Evaluator, Result, Value};
use super::syntax::{Keyword, PyExpr};

/// The arguments of one call, taken one parameter at a time.
pub struct Args<'e> {
    pub func: String,
    pub loc: Loc,
    pos: &'e [PyExpr],
    kw: &'e [Keyword],
    used_pos: usize,
    used_kw: Vec<bool>,
}

impl<'e> Args<'e> {
    pub fn new(func: String, loc: Loc, pos: &'e [PyExpr], kw: &'e [Keyword]) -> Args<'e> {
        Args {
            func,
            loc,
            pos,
            kw,
            used_pos: 0,
            used_kw: vec![false; kw.len()],
        }
    }

    /// Parameter `i` (positional) or `name` (keyword).
    pub fn opt(&mut self, i: usize, name: &str) -> Option<&'e PyExpr> {
        if i < self.pos.len() {
            self.used_pos = self.used_pos.max(i + 1);
            return Some(&self.pos[i]);
        }
        let found = self.kw.iter().position(|k| k.arg == name)?;
        self.used_kw[found] = true;
        Some(&self.kw[found].value)
    }

    /// A required parameter.
    pub fn req(&mut self, i: usize, name: &str) -> Result<&'e PyExpr> {
        let func = self.func.clone();
        let loc = self.loc.clone();
        self.opt(i, name).ok_or_else(|| {
            error(
                BAD_ARGUMENT,
                loc,
                format!("{func}() needs the argument `{name}`"),
            )
        })
    }

    /// Every positional argument from `i` on (`A.transpose(1, 0)`).
    pub fn rest(&mut self, i: usize) -> &'e [PyExpr] {
        self.used_pos = self.used_pos.max(self.pos.len());
        self.pos.get(i..).unwrap_or(&[])
    }

    /// Refuses any argument no parameter took.
    pub fn finish(self) -> Result<()> {
        if let Some(extra) = self.pos.get(self.used_pos) {
            return Err(error(
                BAD_ARGUMENT,
                Loc {
                    line: extra.line,
                    col: extra.col,
                    ..self.loc
                },
                format!("{}() takes fewer positional arguments here", self.func),
            ));
        }
        if let Some(k) = self.kw.iter().zip(&self.used_kw).find(|(_, u)| !**u) {
            return Err(error(
                BAD_ARGUMENT,
                Loc {
                    line: k.0.line,
                    col: k.0.col,
                    ..self.loc
                },
                format!(
                    "{}(): the argument `{}` is not supported",
                    self.func, k.0.arg
                ),
            ));
        }
        Ok(())
    }
}

impl Evaluator<'_> {
    /// An `axis=` argument: `None` (every axis), an int or a tuple of
    /// ints, normalised to sorted distinct axes of a rank-`rank` array.
    pub fn axes(&mut self, e: Option<&PyExpr>, rank: usize) -> Result<Vec<usize>> {
        let Some(e) = e else {
            return Ok((0..rank).collect());
        };
        let loc = self.at(e);
        let items = match self.expr(e)? {
            Value::None => return Ok((0..rank).collect()),
            Value::Tuple(items) => items,
            v => vec![v],
        };
        let mut axes = Vec::new();
        for v in items {
            axes.push(self.axis_value(v, rank, &loc)?);
        }
        axes.sort_unstable();
        let before = axes.len();
        axes.dedup();
        if axes.len() != before {
            return Err(error(BAD_ARGUMENT, loc, "repeated axis"));
        }
        Ok(axes)
    }

    /// One axis of a rank-`rank` array (negative counts from the end).
    pub fn axis(&mut self, e: &PyExpr, rank: usize) -> Result<usize> {
        let loc = self.at(e);
        let v = self.expr(e)?;
        self.axis_value(v, rank, &loc)
    }

    fn axis_value(&self, v: Value, rank: usize, loc: &Loc) -> Result<usize> {
        let c = match &v {
            Value::Size(a) => a.as_constant(),
            _ => None,
        };
        match c {
            Some(c) if (-(rank as i64)..rank as i64).contains(&c) => {
                Ok(c.rem_euclid(rank.max(1) as i64) as usize)
            }
            Some(c) => Err(error(
                BAD_ARGUMENT,
                loc.clone(),
                format!("axis {c} is out of range for an array of rank {rank}"),
            )),
            None => Err(error(
                BAD_ARGUMENT,
                loc.clone(),
                "an axis must be an integer constant",
            )),
        }
    }

    /// A shape argument: a tuple of sizes (or one size).
    pub fn shape_arg(&mut self, e: &PyExpr) -> Result<Vec<Affine>> {
        let loc = self.at(e);
        let items = match self.expr(e)? {
            Value::Tuple(items) => items,
            v => vec![v],
        };
        items
            .into_iter()
            .map(|v| match v {
                Value::Size(a) => Ok(a),
                Value::Tensor(t) if t.weak && !t.dtype.is_float() => Err(error(
                    super::diagnostics::NOT_AFFINE,
                    loc.clone(),
                    "an extent that is not affine in the sizes (a product of sizes merges axes, which has no affine subscript)",
                )),
                _ => Err(error(
                    BAD_ARGUMENT,
                    loc.clone(),
                    "a shape is a tuple of integers affine in the sizes",
                )),
            })
            .collect()
    }

    /// `keepdims=` (a constant bool is written `True`/`False`, which the
    /// dumper refuses as a value, so it is read off the syntax).
    pub fn flag(&self, e: Option<&PyExpr>) -> Result<bool> {
        use super::syntax::{ConstKind, ExprKind};
        match e.map(|e| &e.kind) {
            None => Ok(false),
            Some(ExprKind::Const {
                kind: ConstKind::Bool,
                text,
            }) => Ok(text == "True"),
            Some(_) => Err(error(
                BAD_ARGUMENT,
                e.map_or(self.loc(0, 0), |e| self.at(e)),
                "expected True or False",
            )),
        }
    }
}
