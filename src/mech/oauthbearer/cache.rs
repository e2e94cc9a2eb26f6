//! A cache of validated tokens. librdkafka (and most clients) present the same token on every
//! re-authentication until they refresh it, so the verdict is kept: keyed by SHA-256 of the
//! token, bounded in size, never used outside the token's validity window, and dropped when
//! the inner validator's generation changes (for example a new JWKS).

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::validator::{TokenRejection, TokenValidator, ValidatedToken};
use super::verdicts::{Verdict, Verdicts};
use crate::sync::{Padded, ReadMostly};

/// Wraps a validator with a bounded cache of its positive verdicts. Rejections are never
/// cached.
///
/// The cache is split into shards by the token's hash. A hit reads its shard under a lock
/// of the calling thread's own (each shard is a crossbeam `ShardedLock`) and copies the
/// verdict out, so hits on different threads write no common memory, even for the same
/// token; an insert locks out the shard's readers for the map update only, never across a
/// validation. What a hit reads (this value, the shards, the tables, the verdicts) lies on
/// cache lines of its own, which no other allocation shares and therefore no other work
/// writes.
#[repr(align(128))]
pub struct CachingValidator {
    inner: Arc<dyn TokenValidator>,
    capacity: usize,
    /// Verdicts per shard at most: `capacity` split evenly.
    shard_capacity: usize,
    shards: Box<[Padded<Shard>]>,
}

/// Verdicts by the SHA-256 of their token.
type Shard = ReadMostly<Verdicts>;

/// Shards of a cache with room for at least 64 verdicts; a smaller cache has one shard, so
/// its bound and eviction order are exact.
const SHARDS: usize = 16;

impl std::fmt::Debug for CachingValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingValidator")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

impl CachingValidator {
    /// A cache of at most `capacity` verdicts (at least one) in front of `inner`.
    pub fn new(inner: Arc<dyn TokenValidator>, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let shards = if capacity >= 4 * SHARDS { SHARDS } else { 1 };
        CachingValidator {
            inner,
            capacity,
            shard_capacity: capacity / shards,
            shards: (0..shards)
                .map(|_| Padded(Shard::new(Verdicts::new())))
                .collect(),
        }
    }

    /// How many verdicts are cached.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.0.read().map(|e| e.len()).unwrap_or(0))
            .sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached verdict.
    pub fn clear(&self) {
        for shard in self.shards.iter() {
            if let Ok(mut e) = shard.0.write() {
                e.clear();
            }
        }
    }

    fn shard(&self, key: &[u8; 32]) -> &Shard {
        &self.shards[usize::from(key[0]) % self.shards.len()].0
    }
}

impl TokenValidator for CachingValidator {
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    fn validate(&self, token: &str, now_ms: i64) -> Result<ValidatedToken, TokenRejection> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let generation = self.inner.generation();
        let shard = self.shard(&key);
        let usable = |v: &Verdict| v.generation == generation && v.holds(now_ms);
        let stale = match shard.read() {
            Ok(entries) => match entries.get(&key) {
                Some(v) if usable(v) => match v.token() {
                    Some(token) => return Ok(token),
                    None => true,
                },
                found => found.is_some(),
            },
            Err(_) => false,
        };
        if stale {
            // Out of its window or of an older generation: dropped now, whatever the inner
            // validator says next (unless another thread has put a usable verdict there).
            if let Ok(mut entries) = shard.write() {
                if entries.get(&key).is_some_and(|v| !usable(v)) {
                    entries.remove(&key);
                }
            }
        }
        let verdict = self.inner.validate(token, now_ms)?;
        let Some(cached) = Verdict::new(&verdict, generation) else {
            return Ok(verdict);
        };
        if let Ok(mut entries) = shard.write() {
            if entries.get(&key).is_none() && entries.len() >= self.shard_capacity {
                // Drop what can no longer be used, then, if still full, what expires first.
                entries.retain(|v| v.generation == generation && v.valid_until_ms > now_ms);
                if entries.len() >= self.shard_capacity {
                    if let Some(k) = entries.first_to_end() {
                        entries.remove(&k);
                    }
                }
            }
            entries.insert(key, cached);
        }
        Ok(verdict)
    }
}
