//! Hash-consing: one shared node per distinct value, from every thread.
//!
//! Nodes live in `Arc`s; the interner keeps only `Weak` references, so a node
//! is freed when the last expression using it is dropped (and takes its
//! table entry with it), and the search does not leak memory over millions
//! of candidate expressions. The table is split
//! into shards by hash, each behind its own short-held mutex, so rayon
//! threads building expressions at once rarely wait on each other.
//!
//! Hashes are computed by [`Fx`], a fixed multiply-rotate hasher: the same
//! value gets the same hash in every run, which keeps printing and ordering
//! deterministic.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, Weak};

/// A fast deterministic hasher for node contents.
#[derive(Default, Clone, Copy)]
pub struct Fx(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        // Final avalanche so that low bits (used for shard choice) mix well.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(FX_SEED);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    fn write_i32(&mut self, n: i32) {
        self.write_u64(n as u32 as u64);
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// Passes an already computed hash through unchanged (keys of the shard maps).
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The nodes sharing one hash: almost always exactly one, kept inline so
/// that creating a node allocates no list.
struct Bucket<T> {
    first: Weak<T>,
    rest: Vec<Weak<T>>,
}

impl<T> Bucket<T> {
    fn new(node: Weak<T>) -> Self {
        Bucket {
            first: node,
            rest: Vec::new(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Weak<T>> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }

    /// Drops dead references; false when none is left.
    fn retain_live(&mut self) -> bool {
        self.rest.retain(|w| w.strong_count() > 0);
        if self.first.strong_count() == 0 {
            match self.rest.pop() {
                Some(w) => self.first = w,
                None => return false,
            }
        }
        true
    }

    fn len(&self) -> usize {
        1 + self.rest.len()
    }
}

struct Shard<T> {
    buckets: HashMap<u64, Bucket<T>, BuildHasherDefault<Identity>>,
    /// Entries added since dead references were last swept out.
    inserted: usize,
    /// Entries that survived the last sweep.
    survivors: usize,
}

const SHARDS: usize = 64;

/// A concurrent hash-consing table for values of type `T`.
pub struct Interner<T> {
    shards: Box<[Mutex<Shard<T>>]>,
}

impl<T: PartialEq> Interner<T> {
    pub fn new() -> Self {
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    buckets: HashMap::default(),
                    inserted: 0,
                    survivors: 0,
                })
            })
            .collect();
        Interner { shards }
    }

    /// Returns the shared node equal to `value`, creating it when absent.
    /// `hash` must be a function of `value`'s contents alone.
    pub fn intern(&self, hash: u64, value: T) -> Arc<T> {
        let slot = std::cell::RefCell::new(Some(value));
        self.intern_with(
            hash,
            |existing| slot.borrow().as_ref().is_some_and(|v| v == existing),
            || slot.borrow_mut().take(),
        )
        .unwrap_or_else(|| unreachable!("a fresh value is always available"))
    }

    /// Like [`Interner::intern`], but looks the value up by `matches` (on
    /// borrowed parts) and only builds it with `make` when absent, so hits
    /// allocate nothing. `None` only when `make` returns `None`.
    pub fn intern_with(
        &self,
        hash: u64,
        matches: impl Fn(&T) -> bool,
        make: impl FnOnce() -> Option<T>,
    ) -> Option<Arc<T>> {
        let shard_index = (hash as usize) % SHARDS;
        // A poisoned shard only means another thread panicked mid-insert; the
        // map itself is still consistent (insertions are single pushes).
        let mut shard = match self.shards[shard_index].lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(bucket) = shard.buckets.get(&hash) {
            for weak in bucket.iter() {
                if let Some(existing) = weak.upgrade() {
                    if matches(&existing) {
                        return Some(existing);
                    }
                }
            }
        }
        let node = Arc::new(make()?);
        let weak = Arc::downgrade(&node);
        match shard.buckets.get_mut(&hash) {
            // Values rebuilt after being dropped hash to the same bucket
            // again: drop dead references so hot buckets stay short.
            Some(bucket) => {
                if bucket.retain_live() {
                    bucket.rest.push(weak);
                } else {
                    *bucket = Bucket::new(weak);
                }
            }
            None => {
                shard.buckets.insert(hash, Bucket::new(weak));
            }
        }
        shard.inserted += 1;
        // Nodes remove their own entries when dropped (see `release`); a
        // sweep only catches entries whose release found the shard busy.
        if shard.inserted > (4 * shard.survivors).max(4096) {
            shard.buckets.retain(|_, bucket| bucket.retain_live());
            shard.survivors = shard.buckets.values().map(Bucket::len).sum();
            shard.inserted = 0;
        }
        Some(node)
    }

    /// Drops the table's dead references under `hash`; called from a node's
    /// `Drop`, so it only tries the lock (a thread already holding this
    /// shard may be the one dropping the node) and otherwise leaves the
    /// entry to the next sweep.
    pub fn release(&self, hash: u64) {
        let shard_index = (hash as usize) % SHARDS;
        let Ok(mut shard) = self.shards[shard_index].try_lock() else {
            return;
        };
        if let Some(bucket) = shard.buckets.get_mut(&hash) {
            if !bucket.retain_live() {
                shard.buckets.remove(&hash);
            }
        }
    }

    /// Number of live nodes (for tests and statistics).
    pub fn live_count(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let guard = match s.lock() {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                guard
                    .buckets
                    .values()
                    .flat_map(Bucket::iter)
                    .filter(|w| w.strong_count() > 0)
                    .count()
            })
            .sum()
    }
}

impl<T: PartialEq> Default for Interner<T> {
    fn default() -> Self {
        Self::new()
    }
}
