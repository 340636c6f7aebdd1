//! `--shard K/N`: a deterministic split of the kernel list so that a job
//! array can spread one run over N nodes and `--merge` joins the parts.

use super::BenchError;

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = BenchError;

    fn from_str(text: &str) -> Result<Shard, BenchError> {
        let bad = || BenchError::Usage(format!("--shard `{text}` is not K/N with 1 <= K <= N"));
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The names of this shard: the sorted list, round-robin, so every shard
    /// gets a mix of suites (and of slow and fast kernels) whatever order
    /// the manifest has.
    pub fn select<T: Clone>(&self, items: &[T], name: impl Fn(&T) -> &str) -> Vec<T> {
        let mut sorted: Vec<&T> = items.iter().collect();
        sorted.sort_by(|a, b| name(a).cmp(name(b)));
        sorted
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count == self.index - 1)
            .map(|(_, item)| item.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_list_whatever_its_order() {
        let names: Vec<String> = (0..23).map(|i| format!("k{i:02}")).collect();
        let mut reversed = names.clone();
        reversed.reverse();
        let mut seen = Vec::new();
        for index in 1..=4 {
            let shard = Shard { index, count: 4 };
            let part = shard.select(&names, |s| s);
            assert_eq!(part, shard.select(&reversed, |s| s), "order-independent");
            assert!(part.len() == 5 || part.len() == 6);
            seen.extend(part);
        }
        seen.sort();
        assert_eq!(seen, names, "every kernel in exactly one shard");
    }

    #[test]
    fn shard_syntax_is_checked() {
        assert_eq!(
            "2/3".parse::<Shard>().ok(),
            Some(Shard { index: 2, count: 3 })
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
