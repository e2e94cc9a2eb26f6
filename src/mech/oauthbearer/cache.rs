//! A cache of validated tokens. librdkafka (and most clients) present the same token on every
//! re-authentication until they refresh it, so the verdict is kept: keyed by SHA-256 of the
//! token, bounded in size, never used outside the token's validity window, and dropped when
//! the inner validator's generation changes (for example a new JWKS).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::validator::{TokenRejection, TokenValidator, ValidatedToken};

struct Entry {
    generation: u64,
    token: ValidatedToken,
}

/// Wraps a validator with a bounded cache of its positive verdicts. Rejections are never
/// cached.
pub struct CachingValidator {
    inner: Arc<dyn TokenValidator>,
    capacity: usize,
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

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
        CachingValidator {
            inner,
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// How many verdicts are cached.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached verdict.
    pub fn clear(&self) {
        if let Ok(mut e) = self.entries.lock() {
            e.clear();
        }
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
        if let Ok(mut entries) = self.entries.lock() {
            match entries.get(&key) {
                Some(e) if e.generation == generation && holds(&e.token, now_ms) => {
                    return Ok(e.token.clone())
                }
                Some(_) => {
                    entries.remove(&key);
                }
                None => {}
            }
        }
        let verdict = self.inner.validate(token, now_ms)?;
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= self.capacity {
                // Drop what can no longer be used, then, if still full, what expires first.
                entries
                    .retain(|_, e| e.generation == generation && e.token.valid_until_ms > now_ms);
                if entries.len() >= self.capacity {
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
