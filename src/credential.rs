//! Credentials: what a server checks against, and what a client proves with.
//!
//! Server side: a [`ServerCredential`] (a password or a stored SCRAM credential, with an
//! optional expiry and, for delegation tokens, an owner) is found through a
//! [`CredentialLookup`]. The lookup may answer at once (callback form) or say
//! [`Lookup::Later`], in which case the exchange stops with
//! [`ServerStep::NeedCredential`](crate::mech::ServerStep::NeedCredential) until the host
//! answers (pull form, for hosts that query a database asynchronously).
//!
//! Client side: a [`PasswordCredential`] holds a username and password for PLAIN and SCRAM
//! and caches the keys SCRAM derives from them, so re-authentication with an unchanged
//! password costs no PBKDF2.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, RwLock};

use crate::error::{Error, ErrorCode, Result};
use crate::mech::scram::{ScramCredential, ScramMechanism};
use crate::mech::{CredentialRequest, PLAIN};
use crate::random::RandomSource;
use crate::secret::Secret;

/// What a server compares the client's proof with.
#[derive(Clone, Debug)]
pub enum CredentialSecret {
    /// A clear-text password (what Kafka's PLAIN JAAS configuration holds). SCRAM can use it
    /// too: a credential is then derived for each login with a fresh salt, at the cost of
    /// one PBKDF2 run per login.
    Password(Secret),
    /// A stored SCRAM credential (salt, stored key, server key, iterations). PLAIN can use
    /// it too: the password the client sends is run through PBKDF2 and checked against it.
    Scram(ScramCredential),
}

/// A credential held by a server for one user (or one delegation token).
#[derive(Clone, Debug)]
pub struct ServerCredential {
    secret: CredentialSecret,
    expiry_ms: Option<i64>,
    token_owner: Option<String>,
}

impl ServerCredential {
    /// A clear-text password.
    pub fn password(password: impl Into<Secret>) -> Self {
        ServerCredential {
            secret: CredentialSecret::Password(password.into()),
            expiry_ms: None,
            token_owner: None,
        }
    }

    /// A stored SCRAM credential.
    pub fn scram(credential: ScramCredential) -> Self {
        ServerCredential {
            secret: CredentialSecret::Scram(credential),
            expiry_ms: None,
            token_owner: None,
        }
    }

    /// Sets an absolute expiry (ms since the epoch). It bounds the KIP-368 session lifetime.
    pub fn with_expiry_ms(mut self, expiry_ms: i64) -> Self {
        self.expiry_ms = Some(expiry_ms);
        self
    }

    /// Marks the credential as a delegation token's, owned by `owner`: a successful login
    /// authenticates `User:<owner>`, flagged token-authenticated.
    pub fn with_token_owner(mut self, owner: impl Into<String>) -> Self {
        self.token_owner = Some(owner.into());
        self
    }

    /// The secret.
    pub fn secret(&self) -> &CredentialSecret {
        &self.secret
    }

    /// The expiry, if any.
    pub fn expiry_ms(&self) -> Option<i64> {
        self.expiry_ms
    }

    /// The token owner, for delegation-token credentials.
    pub fn token_owner(&self) -> Option<&str> {
        self.token_owner.as_deref()
    }
}

/// The host's answer to a [`CredentialRequest`].
#[derive(Clone, Debug)]
pub enum CredentialAnswer {
    /// The credential of the requested user.
    Found(ServerCredential),
    /// No such user (or token): the client gets Kafka's generic failure.
    Unknown,
    /// The store could not answer (database down, ...). The reason is logged by the host and
    /// kept in the error's message, never shown to the client.
    Unavailable(String),
}

impl CredentialRequest {
    /// Parses a SCRAM credential in Kafka's text form as the answer to this request: for
    /// the requested SCRAM mechanism, or, for PLAIN (which can verify a password against
    /// either variant), as SCRAM-SHA-512 and failing that SCRAM-SHA-256.
    pub fn scram_credential(&self, kafka_text: &str) -> Result<ScramCredential> {
        match ScramMechanism::from_name(&self.mechanism) {
            Some(m) => ScramCredential::from_kafka_string(m, kafka_text),
            None => ScramCredential::from_kafka_string(ScramMechanism::Sha512, kafka_text).or_else(
                |_| ScramCredential::from_kafka_string(ScramMechanism::Sha256, kafka_text),
            ),
        }
    }
}

/// A lookup's immediate reply.
#[derive(Clone, Debug)]
pub enum Lookup {
    /// The answer, now.
    Now(CredentialAnswer),
    /// The host will answer later through `provide_credential`.
    Later,
}

/// Finds server credentials. Implementations must be cheap and must not block for long; a
/// store that needs I/O should return [`Lookup::Later`] and answer through the pull form.
pub trait CredentialLookup: Send + Sync {
    /// Looks up the credential for `request`.
    fn lookup(&self, request: &CredentialRequest) -> Lookup;
}

/// A lookup that leaves every answer to the host (the pull form): each request comes back
/// as `NeedCredential`. Useful where a lookup is required, e.g. for the users of
/// [`crate::token::UsersAndTokens`].
#[derive(Clone, Copy, Debug, Default)]
pub struct AskHost;

impl CredentialLookup for AskHost {
    fn lookup(&self, _request: &CredentialRequest) -> Lookup {
        Lookup::Later
    }
}

#[derive(Default)]
struct UserEntry {
    password: Option<Secret>,
    scram: HashMap<ScramMechanism, ScramCredential>,
    expiry_ms: Option<i64>,
}

/// An in-memory credential store for users and delegation tokens, safe to share between
/// threads. Answers every lookup at once.
#[derive(Default)]
pub struct MemoryCredentialStore {
    users: RwLock<HashMap<String, UserEntry>>,
    tokens: RwLock<HashMap<String, HashMap<ScramMechanism, ServerCredential>>>,
}

impl fmt::Debug for MemoryCredentialStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let users = self.users.read().map(|u| u.len()).unwrap_or(0);
        let tokens = self.tokens.read().map(|t| t.len()).unwrap_or(0);
        write!(
            f,
            "MemoryCredentialStore {{ users: {users}, tokens: {tokens} }}"
        )
    }
}

impl MemoryCredentialStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a user for every built-in mechanism: keeps the password for PLAIN
    /// and derives SCRAM-SHA-256 and SCRAM-SHA-512 credentials from it with fresh random
    /// salts and `iterations` (at least 4096).
    pub fn add_user(
        &self,
        username: &str,
        password: &str,
        iterations: u32,
        rng: &dyn RandomSource,
    ) -> Result<()> {
        if username.is_empty() {
            return Err(Error::misuse("username must not be empty"));
        }
        let mut entry = UserEntry {
            password: Some(Secret::from(password)),
            ..Default::default()
        };
        for mech in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            entry.scram.insert(
                mech,
                ScramCredential::generate(mech, password.as_bytes(), iterations, rng)?,
            );
        }
        self.write_users()?.insert(username.to_string(), entry);
        Ok(())
    }

    /// Sets the PLAIN password of a user (creating the user if needed).
    pub fn set_password(&self, username: &str, password: &str) -> Result<()> {
        if username.is_empty() {
            return Err(Error::misuse("username must not be empty"));
        }
        self.write_users()?
            .entry(username.to_string())
            .or_default()
            .password = Some(Secret::from(password));
        Ok(())
    }

    /// Sets the SCRAM credential of a user for the credential's mechanism (creating the user
    /// if needed).
    pub fn set_scram(&self, username: &str, credential: ScramCredential) -> Result<()> {
        if username.is_empty() {
            return Err(Error::misuse("username must not be empty"));
        }
        self.write_users()?
            .entry(username.to_string())
            .or_default()
            .scram
            .insert(credential.mechanism(), credential);
        Ok(())
    }

    /// Sets (or with `None` clears) an absolute expiry on all of a user's credentials.
    pub fn set_user_expiry(&self, username: &str, expiry_ms: Option<i64>) -> Result<()> {
        let mut users = self.write_users()?;
        let entry = users
            .get_mut(username)
            .ok_or_else(|| Error::misuse("no such user in the store"))?;
        entry.expiry_ms = expiry_ms;
        Ok(())
    }

    /// Removes a user; returns whether it existed.
    pub fn remove_user(&self, username: &str) -> Result<bool> {
        Ok(self.write_users()?.remove(username).is_some())
    }

    /// Adds or replaces the SCRAM credential of a delegation token, used when a client logs
    /// in with `tokenauth=true` and the token id as username. The credential should carry the
    /// token owner and expiry ([`ServerCredential::with_token_owner`], `with_expiry_ms`).
    pub fn set_token(
        &self,
        token_id: &str,
        mechanism: ScramMechanism,
        credential: ServerCredential,
    ) -> Result<()> {
        if credential.token_owner.is_none() {
            return Err(Error::misuse(
                "a delegation token credential needs an owner",
            ));
        }
        let mut tokens = self.tokens.write().map_err(|_| poisoned())?;
        tokens
            .entry(token_id.to_string())
            .or_default()
            .insert(mechanism, credential);
        Ok(())
    }

    /// Removes a delegation token; returns whether it existed.
    pub fn remove_token(&self, token_id: &str) -> Result<bool> {
        Ok(self
            .tokens
            .write()
            .map_err(|_| poisoned())?
            .remove(token_id)
            .is_some())
    }

    fn write_users(&self) -> Result<std::sync::RwLockWriteGuard<'_, HashMap<String, UserEntry>>> {
        self.users.write().map_err(|_| poisoned())
    }

    fn answer(&self, request: &CredentialRequest) -> CredentialAnswer {
        if request.token_auth {
            let Some(mech) = ScramMechanism::from_name(&request.mechanism) else {
                return CredentialAnswer::Unknown;
            };
            let Ok(tokens) = self.tokens.read() else {
                return CredentialAnswer::Unavailable("credential store lock poisoned".into());
            };
            return match tokens.get(&request.username).and_then(|t| t.get(&mech)) {
                Some(c) => CredentialAnswer::Found(c.clone()),
                None => CredentialAnswer::Unknown,
            };
        }
        let Ok(users) = self.users.read() else {
            return CredentialAnswer::Unavailable("credential store lock poisoned".into());
        };
        let Some(entry) = users.get(&request.username) else {
            return CredentialAnswer::Unknown;
        };
        let found = if request.mechanism == PLAIN {
            entry
                .password
                .clone()
                .map(ServerCredential::password)
                .or_else(|| {
                    // No password stored: PLAIN can verify against a SCRAM credential.
                    entry
                        .scram
                        .get(&ScramMechanism::Sha512)
                        .or_else(|| entry.scram.get(&ScramMechanism::Sha256))
                        .cloned()
                        .map(ServerCredential::scram)
                })
        } else {
            ScramMechanism::from_name(&request.mechanism)
                .and_then(|m| entry.scram.get(&m))
                .cloned()
                .map(ServerCredential::scram)
        };
        match found {
            Some(mut c) => {
                c.expiry_ms = entry.expiry_ms;
                CredentialAnswer::Found(c)
            }
            None => CredentialAnswer::Unknown,
        }
    }
}

fn poisoned() -> Error {
    Error::new(ErrorCode::Internal, "credential store lock poisoned")
}

impl CredentialLookup for MemoryCredentialStore {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        Lookup::Now(self.answer(request))
    }
}

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
    token_auth: bool,
    cache: Mutex<Vec<DerivedKeys>>,
}

impl fmt::Debug for PasswordCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordCredential")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("token_auth", &self.token_auth)
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
            token_auth: false,
            cache: Mutex::new(Vec::new()),
        })
    }

    /// A delegation token login: the token id as username, the token HMAC (base64) as
    /// password; SCRAM then sends the `tokenauth=true` extension.
    pub fn delegation_token(token_id: &str, token_hmac_base64: &str) -> Result<Self> {
        let mut c = Self::new(token_id, token_hmac_base64)?;
        c.token_auth = true;
        Ok(c)
    }

    /// The username.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// Whether this is a delegation-token credential.
    pub fn is_token(&self) -> bool {
        self.token_auth
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
}
