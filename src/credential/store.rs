//! An in-memory credential store for users and delegation tokens.

use std::collections::HashMap;
use std::fmt;
use std::sync::RwLock;

use super::request::{
    CredentialAnswer, CredentialLookup, CredentialRequest, Lookup, ServerCredential,
};
use crate::credential::scram::{ScramCredential, ScramMechanism};
use crate::error::{Error, ErrorCode, Result};
use crate::names::PLAIN;
use crate::random::RandomSource;
use crate::secret::Secret;

#[derive(Default)]
struct UserEntry {
    password: Option<Secret>,
    scram: HashMap<ScramMechanism, ScramCredential>,
    expiry_ms: Option<i64>,
}

/// An in-memory credential store for users and delegation tokens, safe to share between
/// threads. Answers every lookup at once.
#[derive(Default)]
pub struct CredentialStore {
    users: RwLock<HashMap<String, UserEntry>>,
    tokens: RwLock<HashMap<String, HashMap<ScramMechanism, ServerCredential>>>,
}

impl fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let users = self.users.read().map(|u| u.len()).unwrap_or(0);
        let tokens = self.tokens.read().map(|t| t.len()).unwrap_or(0);
        write!(f, "CredentialStore {{ users: {users}, tokens: {tokens} }}")
    }
}

impl CredentialStore {
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
        if credential.token_owner().is_none() {
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
        if request.token_authenticated {
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
                c = c.with_expiry(entry.expiry_ms);
                CredentialAnswer::Found(c)
            }
            None => CredentialAnswer::Unknown,
        }
    }
}

fn poisoned() -> Error {
    Error::new(ErrorCode::Internal, "credential store lock poisoned")
}

impl CredentialLookup for CredentialStore {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        Lookup::Now(self.answer(request))
    }
}
