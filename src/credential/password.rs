//! A client's username and password, with the SCRAM keys derived from it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::credential::scram::ScramMechanism;
use crate::error::{Error, Result};
use crate::secret::Secret;

/// Keys a SCRAM client derived from its password for one (mechanism, salt, iterations).
#[derive(Clone)]
pub(crate) struct DerivedKeys {
    pub(crate) mechanism: ScramMechanism,
    pub(crate) salt: Vec<u8>,
    pub(crate) iterations: u32,
    pub(crate) client_key: Secret,
    pub(crate) server_key: Secret,
}

/// A client's username and password for PLAIN and SCRAM, shared by all the connections that
/// use it (wrap it in an `Arc`).
///
/// For SCRAM it remembers the keys derived for the last (salt, iterations) of each
/// mechanism, so a re-authentication against the same stored credential costs no PBKDF2.
/// A password change means a new `PasswordCredential`: the cache never outlives the
/// password it was derived from.
pub struct PasswordCredential {
    username: String,
    password: Secret,
    token_authenticated: bool,
    cache: Mutex<Vec<DerivedKeys>>,
    derivations: AtomicU64,
}

impl fmt::Debug for PasswordCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordCredential")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("token_authenticated", &self.token_authenticated)
            .finish()
    }
}

impl PasswordCredential {
    /// A username and password. The username must be non-empty and free of NUL.
    pub fn new(username: &str, password: &str) -> Result<Self> {
        if username.is_empty() {
            return Err(Error::misuse("username must not be empty"));
        }
        if username.contains('\0') || password.contains('\0') {
            return Err(Error::misuse("username and password must not contain NUL"));
        }
        Ok(PasswordCredential {
            username: username.to_string(),
            password: Secret::from(password),
            token_authenticated: false,
            cache: Mutex::new(Vec::new()),
            derivations: AtomicU64::new(0),
        })
    }

    /// A delegation token login: the token id as username, the token HMAC (base64) as
    /// password; SCRAM then sends the `tokenauth=true` extension.
    pub fn delegation_token(token_id: &str, token_hmac_base64: &str) -> Result<Self> {
        let mut c = Self::new(token_id, token_hmac_base64)?;
        c.token_authenticated = true;
        Ok(c)
    }

    /// The username.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// Whether this is a delegation-token credential (SCRAM sends `tokenauth=true`).
    pub fn token_authenticated(&self) -> bool {
        self.token_authenticated
    }

    pub(crate) fn password(&self) -> &Secret {
        &self.password
    }

    /// The cached keys for these parameters, or `derive`d ones (stored for next time).
    pub(crate) fn keys(
        &self,
        mechanism: ScramMechanism,
        salt: &[u8],
        iterations: u32,
    ) -> DerivedKeys {
        if let Ok(cache) = self.cache.lock() {
            if let Some(k) = cache
                .iter()
                .find(|k| k.mechanism == mechanism && k.iterations == iterations && k.salt == salt)
            {
                return k.clone();
            }
        }
        // Derive outside the lock: PBKDF2 is slow and other connections may be waiting.
        self.derivations.fetch_add(1, Ordering::Relaxed);
        let (client_key, server_key) =
            mechanism.client_and_server_keys(self.password.expose(), salt, iterations);
        let keys = DerivedKeys {
            mechanism,
            salt: salt.to_vec(),
            iterations,
            client_key,
            server_key,
        };
        if let Ok(mut cache) = self.cache.lock() {
            cache.retain(|k| k.mechanism != mechanism);
            cache.push(keys.clone());
        }
        keys
    }

    /// How many derived key sets are cached (for tests and metrics).
    pub fn cached_key_sets(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }

    /// How many times PBKDF2 ran for this credential (each run derives the keys of one
    /// salt and iteration count): what the key cache saves shows here.
    pub fn derivations(&self) -> u64 {
        self.derivations.load(Ordering::Relaxed)
    }
}

/// Where a client mechanism gets its password credential when an exchange starts: a fixed
/// credential, or the newest one a [`Refresher`](crate::refresh::Refresher) holds (a rotated
/// password, a renewed delegation token).
pub trait PasswordSource: Send + Sync {
    /// The credential to present now.
    fn password(&self) -> Result<Arc<PasswordCredential>>;
}

impl PasswordSource for Arc<PasswordCredential> {
    fn password(&self) -> Result<Arc<PasswordCredential>> {
        Ok(self.clone())
    }
}
