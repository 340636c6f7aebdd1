//! Symbolic tensors: a shape and a row-major vector of normal forms, plus the
//! TENSORIZE measures on them (`var`, density, the Simp score).

use std::fmt;

use super::atom::Symbol;
use super::expr::Expr;
use super::AlgebraError;

/// A dense tensor of expressions. Shape `[]` is a scalar with one element.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Tensor {
    shape: Vec<usize>,
    elems: Vec<Expr>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, elems: Vec<Expr>) -> Result<Tensor, AlgebraError> {
        let expected: usize = shape.iter().product();
        if expected != elems.len() {
            return Err(AlgebraError::ShapeMismatch {
                shape,
                elements: elems.len(),
            });
        }
        Ok(Tensor { shape, elems })
    }

    pub fn scalar(value: Expr) -> Tensor {
        Tensor {
            shape: Vec::new(),
            elems: vec![value],
        }
    }

    /// Builds each element from its multi-index.
    pub fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> Expr) -> Tensor {
        let total: usize = shape.iter().product();
        let mut elems = Vec::with_capacity(total);
        let mut index = vec![0usize; shape.len()];
        for _ in 0..total {
            elems.push(f(&index));
            for d in (0..shape.len()).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Tensor {
            shape: shape.to_vec(),
            elems,
        }
    }

    /// A tensor of fresh symbols `name[i,j,…]` (input or hole).
    pub fn of_symbols(name: &str, shape: &[usize], hole: bool) -> Tensor {
        Tensor::from_fn(shape, |idx| {
            let index: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
            let s = if hole {
                Symbol::hole(name, &index)
            } else {
                Symbol::element(name, &index)
            };
            s.to_expr()
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn elems(&self) -> &[Expr] {
        &self.elems
    }

    pub fn len(&self) -> usize {
        self.elems.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }

    /// Row-major position of a multi-index, when in bounds.
    pub fn offset(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut offset = 0;
        for (&i, &n) in index.iter().zip(&self.shape) {
            if i >= n {
                return None;
            }
            offset = offset * n + i;
        }
        Some(offset)
    }

    pub fn get(&self, index: &[usize]) -> Option<&Expr> {
        self.offset(index).map(|o| &self.elems[o])
    }

    /// The multi-index of a row-major position.
    pub fn index_of(&self, mut offset: usize) -> Vec<usize> {
        let mut index = vec![0; self.shape.len()];
        for d in (0..self.shape.len()).rev() {
            index[d] = offset % self.shape[d].max(1);
            offset /= self.shape[d].max(1);
        }
        index
    }

    pub fn map(&self, f: impl FnMut(&Expr) -> Expr) -> Tensor {
        Tensor {
            shape: self.shape.clone(),
            elems: self.elems.iter().map(f).collect(),
        }
    }

    /// Combines two tensors of the same shape element by element.
    pub fn zip_with(
        &self,
        other: &Tensor,
        mut f: impl FnMut(&Expr, &Expr) -> Expr,
    ) -> Result<Tensor, AlgebraError> {
        if self.shape != other.shape {
            return Err(AlgebraError::ShapeMismatch {
                shape: other.shape.clone(),
                elements: self.elems.len(),
            });
        }
        Ok(Tensor {
            shape: self.shape.clone(),
            elems: self
                .elems
                .iter()
                .zip(&other.elems)
                .map(|(a, b)| f(a, b))
                .collect(),
        })
    }

    /// Share of elements whose normal form is not zero (1 for an empty tensor).
    pub fn density(&self) -> f64 {
        if self.elems.is_empty() {
            return 1.0;
        }
        let nonzero = self.elems.iter().filter(|e| !e.is_zero()).count();
        nonzero as f64 / self.elems.len() as f64
    }

    /// `var(T)`: the distinct program inputs of all elements.
    pub fn vars(&self) -> Vec<Symbol> {
        let mut all: Vec<Symbol> = self.elems.iter().flat_map(|e| e.vars()).collect();
        all.sort();
        all.dedup();
        all
    }

    /// `|var(T)| · density(T)`: the complexity TENSORIZE minimises.
    pub fn complexity(&self) -> f64 {
        self.vars().len() as f64 * self.density()
    }

    /// Whether every element is equal (same normal form) to `other`'s.
    pub fn same_values(&self, other: &Tensor) -> bool {
        self == other
    }
}

/// `Simp(e₁…eₙ) = (1/n) Σ |var(eᵢ)|·density(eᵢ)` over the hole solutions
/// of a sketch (0 for no tensors).
pub fn simp_score(tensors: &[Tensor]) -> f64 {
    if tensors.is_empty() {
        return 0.0;
    }
    tensors.iter().map(Tensor::complexity).sum::<f64>() / tensors.len() as f64
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor{:?}[", self.shape)?;
        for (i, e) in self.elems.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{e}")?;
        }
        f.write_str("]")
    }
}
