//! The lattice of partial symmetries of one value: partitions of its axes
//! into groups of interchangeable axes (Patel et al.'s partial symmetry,
//! Arya and Gandhi's lattice).
//!
//! A value `T` of rank `r` has symmetry `Π` when permuting the indices of
//! any group among themselves leaves every element unchanged. Every value
//! has the discrete partition (no claim); `{0, 1}` on a matrix says it is
//! symmetric.
//!
//! Orientation: the paper puts the fully symmetric partition on top and
//! combines with a meet. We use the dual order, the usual one for a
//! forward analysis solved by iterating up from the bottom: [`Symmetry::full`]
//! (every axis with every other, the optimistic start of a loop's
//! fixpoint) is the bottom, [`Symmetry::none`] (discrete, no claim) is the
//! top, and [`Symmetry::join`] (axes stay together only where both
//! partitions keep them together — the paper's meet) combines the values
//! reaching a point on different paths. Claims only shrink going up.

use std::fmt;

/// A partition of axes `0..rank`, stored canonically: `first[i]` is the
/// smallest axis in axis `i`'s group, so equal partitions are equal values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry {
    first: Vec<usize>,
}

impl Symmetry {
    /// The top element: no two axes are claimed interchangeable.
    pub fn none(rank: usize) -> Symmetry {
        Symmetry {
            first: (0..rank).collect(),
        }
    }

    /// The bottom element: every axis interchangeable with every other.
    pub fn full(rank: usize) -> Symmetry {
        Symmetry {
            first: vec![0; rank],
        }
    }

    /// The partition with these groups; axes in no group are alone.
    pub fn from_groups(rank: usize, groups: &[Vec<usize>]) -> Symmetry {
        let mut s = Symmetry::none(rank);
        for g in groups {
            for w in g.windows(2) {
                s = s.merge(w[0], w[1]);
            }
        }
        s
    }

    pub fn rank(&self) -> usize {
        self.first.len()
    }

    /// Whether axes `i` and `j` are in one group.
    pub fn same(&self, i: usize, j: usize) -> bool {
        self.first[i] == self.first[j]
    }

    /// Whether some two axes are interchangeable.
    pub fn is_symmetric(&self) -> bool {
        self.first.iter().enumerate().any(|(i, f)| *f != i)
    }

    /// The partition with the groups of `i` and `j` made one.
    pub fn merge(&self, i: usize, j: usize) -> Symmetry {
        let (a, b) = (
            self.first[i].min(self.first[j]),
            self.first[i].max(self.first[j]),
        );
        Symmetry {
            first: self
                .first
                .iter()
                .map(|&f| if f == b { a } else { f })
                .collect(),
        }
    }

    /// Least upper bound: two axes stay together only where both keep them
    /// together. Both operands must have one rank (the caller's values are
    /// of one type); a shorter operand's missing axes are read as alone.
    pub fn join(&self, other: &Symmetry) -> Symmetry {
        debug_assert_eq!(self.rank(), other.rank(), "join of different ranks");
        let rank = self.rank().min(other.rank());
        let first = (0..rank)
            .map(|i| {
                (0..=i)
                    .find(|&j| self.same(i, j) && other.same(i, j))
                    .unwrap_or(i)
            })
            .collect();
        Symmetry { first }
    }

    /// The lattice order: `self` claims at least what `other` claims.
    pub fn leq(&self, other: &Symmetry) -> bool {
        self.join(other) == *other
    }

    /// The partition of the axes `axes` (result axis `t` is axis
    /// `axes[t]` of this value): a transpose's or a reduction's result.
    pub fn restrict(&self, axes: &[usize]) -> Symmetry {
        let mut s = Symmetry::none(axes.len());
        for (t, &a) in axes.iter().enumerate() {
            if let Some(u) = (0..t).find(|&u| self.same(axes[u], a)) {
                s = s.merge(u, t);
            }
        }
        s
    }

    /// The groups, each sorted, in the order of their smallest axis
    /// (singletons included).
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut out: Vec<Vec<usize>> = Vec::new();
        for (i, &f) in self.first.iter().enumerate() {
            match out.iter_mut().find(|g| g[0] == f) {
                Some(g) => g.push(i),
                None => out.push(vec![i]),
            }
        }
        out
    }
}

impl fmt::Display for Symmetry {
    /// `{0, 2}{1}`; a rank-0 value prints `{}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rank() == 0 {
            return write!(f, "{{}}");
        }
        for g in self.groups() {
            let axes: Vec<String> = g.iter().map(|a| a.to_string()).collect();
            write!(f, "{{{}}}", axes.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Partitions of up to 5 axes, from arbitrary merges.
    fn partition(rank: usize) -> impl Strategy<Value = Symmetry> {
        proptest::collection::vec((0..rank, 0..rank), 0..rank * 2).prop_map(move |pairs| {
            pairs
                .into_iter()
                .fold(Symmetry::none(rank), |s, (i, j)| s.merge(i, j))
        })
    }

    fn three_of_one_rank() -> impl Strategy<Value = (Symmetry, Symmetry, Symmetry)> {
        (1usize..6).prop_flat_map(|r| (partition(r), partition(r), partition(r)))
    }

    proptest! {
        #[test]
        fn join_is_commutative_associative_idempotent((a, b, c) in three_of_one_rank()) {
            prop_assert_eq!(a.join(&b), b.join(&a));
            prop_assert_eq!(a.join(&b).join(&c), a.join(&b.join(&c)));
            prop_assert_eq!(a.join(&a), a.clone());
        }

        #[test]
        fn full_is_bottom_and_none_is_top((a, _b, _c) in three_of_one_rank()) {
            let r = a.rank();
            prop_assert_eq!(Symmetry::full(r).join(&a), a.clone());
            prop_assert_eq!(Symmetry::none(r).join(&a), Symmetry::none(r));
            prop_assert!(Symmetry::full(r).leq(&a) && a.leq(&Symmetry::none(r)));
        }

        #[test]
        fn join_is_the_least_upper_bound((a, b, c) in three_of_one_rank()) {
            let j = a.join(&b);
            prop_assert!(a.leq(&j) && b.leq(&j));
            if a.leq(&c) && b.leq(&c) {
                prop_assert!(j.leq(&c));
            }
        }

        #[test]
        fn restriction_is_monotone((a, b, _c) in three_of_one_rank(), seed in 0usize..120) {
            // Restriction to a permutation of the axes: what transposes do.
            let r = a.rank();
            let mut axes: Vec<usize> = (0..r).collect();
            axes.rotate_left(seed % r);
            let j = a.join(&b);
            prop_assert!(a.restrict(&axes).leq(&j.restrict(&axes)));
        }
    }

    #[test]
    fn canonical_form_prints_groups() {
        let s = Symmetry::from_groups(4, &[vec![2, 0], vec![3, 1]]);
        assert_eq!(s.to_string(), "{0, 2}{1, 3}");
        assert_eq!(s, Symmetry::none(4).merge(1, 3).merge(2, 0));
        assert_eq!(s.restrict(&[2, 3, 0]).to_string(), "{0, 2}{1}");
        let t = Symmetry::from_groups(4, &[vec![0, 1, 2]]);
        assert_eq!(s.join(&t).to_string(), "{0, 2}{1}{3}");
        assert_eq!(Symmetry::none(0).to_string(), "{}");
    }
}
