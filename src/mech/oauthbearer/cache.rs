//! A cache of validated tokens. librdkafka (and most clients) present the same token on every
//! re-authentication until they refresh it, so the verdict is kept: keyed by SHA-256 of the
//! token, bounded in size, never used outside the token's validity window, and dropped when
//! the inner validator's generation changes (for example a new JWKS).

use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::validator::{TokenRejection, TokenValidator, ValidatedToken};
use crate::sync::ReadMostly;

struct Entry {
    generation: u64,
    token: ValidatedToken,
}

/// Wraps a validator with a bounded cache of its positive verdicts. Rejections are never
/// cached.
///
/// The cache is split into shards by the token's hash. A hit reads its shard under a lock
/// of the calling thread's own (each shard is a crossbeam `ShardedLock`) and copies the
/// verdict out,
/// so hits on different threads write no common memory, even for the same token; an insert
/// locks out the shard's readers for the map update only, never across a validation.
pub struct CachingValidator {
    inner: Arc<dyn TokenValidator>,
    capacity: usize,
    /// Verdicts per shard at most: `capacity` split evenly.
    shard_capacity: usize,
    shards: Box<[Shard]>,
}

/// Verdicts by the SHA-256 of their token.
type Shard = ReadMostly<HashMap<[u8; 32], Entry>>;

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
            shards: (0..shards).map(|_| Shard::new(HashMap::new())).collect(),
        }
    }

    /// How many verdicts are cached.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().map(|e| e.len()).unwrap_or(0))
            .sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached verdict.
    pub fn clear(&self) {
        for shard in self.shards.iter() {
            if let Ok(mut e) = shard.write() {
                e.clear();
            }
        }
    }

    fn shard(&self, key: &[u8; 32]) -> &Shard {
        &self.shards[usize::from(key[0]) % self.shards.len()]
    }
}

fn holds(t: &ValidatedToken, now_ms: i64) -> bool {
    now_ms < t.valid_until_ms && t.valid_from_ms.map_or(true, |f| now_ms >= f)
}

impl TokenValidator for CachingValidator {
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    fn validate(&self, token: &str, now_ms: i64) -> Result<ValidatedToken, TokenRejection> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let generation = self.inner.generation();
        let shard = self.shard(&key);
        let usable = |e: &Entry| e.generation == generation && holds(&e.token, now_ms);
        let stale = match shard.read() {
            Ok(entries) => match entries.get(&key) {
                Some(e) if usable(e) => return Ok(e.token.clone()),
                found => found.is_some(),
            },
            Err(_) => false,
        };
        if stale {
            // Out of its window or of an older generation: dropped now, whatever the inner
            // validator says next (unless another thread has put a usable verdict there).
            if let Ok(mut entries) = shard.write() {
                if entries.get(&key).is_some_and(|e| !usable(e)) {
                    entries.remove(&key);
                }
            }
        }
        let verdict = self.inner.validate(token, now_ms)?;
        if let Ok(mut entries) = shard.write() {
            if entries.len() >= self.shard_capacity {
                // Drop what can no longer be used, then, if still full, what expires first.
                entries
                    .retain(|_, e| e.generation == generation && e.token.valid_until_ms > now_ms);
                if entries.len() >= self.shard_capacity {
                    if let Some(k) = entries
                        .iter()
                        .min_by_key(|(_, e)| e.token.valid_until_ms)
                        .map(|(k, _)| *k)
                    {
                        entries.remove(&k);
                    }
                }
            }
            entries.insert(
                key,
                Entry {
                    generation,
                    token: verdict.clone(),
                },
            );
        }
        Ok(verdict)
    }
}
