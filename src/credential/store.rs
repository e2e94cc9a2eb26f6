//! An in-memory credential store for users and delegation tokens.

use std::collections::HashMap;
use std::fmt;

use super::request::{
    CredentialAnswer, CredentialLookup, CredentialRequest, Lookup, ServerCredential,
};
use crate::credential::scram::{ScramCredential, ScramMechanism};
use crate::error::{Error, ErrorCode, Result};
use crate::names::PLAIN;
use crate::random::RandomSource;
use crate::secret::Secret;
use crate::sync::{ReadMostly, WriteGuard};

#[derive(Default)]
struct UserEntry {
    password: Option<Secret>,
    scram: HashMap<ScramMechanism, ScramCredential>,
    /// When the user last went from no SCRAM credential to one (the store's counter): the
    /// order Kafka's metadata image keeps users in, which its describe answers reflect.
    scram_seq: u64,
    expiry_ms: Option<i64>,
}

/// An in-memory credential store for users and delegation tokens, safe to share between
/// threads. Answers every lookup at once; lookups from different threads write no common
/// memory (each reads under a lock of its own), changes lock out every reader.
#[derive(Default)]
pub struct CredentialStore {
    users: ReadMostly<HashMap<String, UserEntry>>,
    scram_seq: std::sync::atomic::AtomicU64,
    tokens: ReadMostly<HashMap<String, HashMap<ScramMechanism, ServerCredential>>>,
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
        let mut users = self.write_users()?;
        entry.scram_seq = match users.get(username) {
            Some(old) if !old.scram.is_empty() => old.scram_seq,
            _ => self.next_scram_seq(),
        };
        users.insert(username.to_string(), entry);
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
        self.users_for_admin()?.put_scram(username, credential);
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

    /// The users under the write lock, for the KIP-554 admin operations (one lock for a
    /// whole request, so its changes apply together).
    pub(crate) fn users_for_admin(&self) -> Result<AdminView<'_>> {
        Ok(AdminView(self.write_users()?, &self.scram_seq))
    }

    fn next_scram_seq(&self) -> u64 {
        self.scram_seq
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    fn write_users(&self) -> Result<WriteGuard<'_, HashMap<String, UserEntry>>> {
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

/// The users of a store under its write lock, as the KIP-554 operations see them: only the
/// SCRAM credentials (a PLAIN password is not a SCRAM credential, as in Kafka, where PLAIN
/// users live in the JAAS configuration).
pub(crate) struct AdminView<'a>(
    WriteGuard<'a, HashMap<String, UserEntry>>,
    &'a std::sync::atomic::AtomicU64,
);

impl AdminView<'_> {
    pub(crate) fn has_scram(&self, user: &str, mechanism: ScramMechanism) -> bool {
        self.0
            .get(user)
            .is_some_and(|e| e.scram.contains_key(&mechanism))
    }

    pub(crate) fn scram_iterations(&self, user: &str, mechanism: ScramMechanism) -> Option<u32> {
        self.0
            .get(user)?
            .scram
            .get(&mechanism)
            .map(|c| c.iterations())
    }

    /// Users with at least one SCRAM credential, in the order they got their first one.
    pub(crate) fn scram_users(&self) -> Vec<String> {
        let mut v: Vec<(u64, &String)> = self
            .0
            .iter()
            .filter(|(_, e)| !e.scram.is_empty())
            .map(|(k, e)| (e.scram_seq, k))
            .collect();
        v.sort();
        v.into_iter().map(|(_, k)| k.clone()).collect()
    }

    pub(crate) fn put_scram(&mut self, user: &str, credential: ScramCredential) {
        let e = self.0.entry(user.to_string()).or_default();
        if e.scram.is_empty() {
            e.scram_seq = self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        e.scram.insert(credential.mechanism(), credential);
    }

    /// Removes one SCRAM credential, and the user once nothing is left of it.
    pub(crate) fn delete_scram(&mut self, user: &str, mechanism: ScramMechanism) {
        if let Some(e) = self.0.get_mut(user) {
            e.scram.remove(&mechanism);
            if e.scram.is_empty() && e.password.is_none() {
                self.0.remove(user);
            }
        }
    }
}
