//! What a server mechanism asks the host for, and what the host answers: credential requests,
//! server credentials, answers (with their stable wire numbering for the bindings) and the
//! lookup that finds them.

use std::sync::Arc;

use crate::credential::scram::{ScramCredential, ScramMechanism};
use crate::error::{Error, ErrorCode, Result};
use crate::secret::Secret;
use crate::sync::Padded;
pub use crate::wire::CredentialAnswerKind;

/// A request for the stored credential of a user, made by a server mechanism.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialRequest {
    /// The mechanism asking (`PLAIN`, `SCRAM-SHA-256`, ...).
    pub mechanism: String,
    /// The username, unescaped; with `token_authenticated` this is the delegation token id.
    pub username: String,
    /// Whether the client asked for delegation-token authentication (`tokenauth=true`).
    pub token_authenticated: bool,
}

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

    /// Sets or clears the absolute expiry.
    pub fn with_expiry(mut self, expiry_ms: Option<i64>) -> Self {
        self.expiry_ms = expiry_ms;
        self
    }

    /// The secret.
    pub fn secret(&self) -> &CredentialSecret {
        &self.secret
    }

    /// The secret, taken out of the credential.
    pub(crate) fn into_secret(self) -> CredentialSecret {
        self.secret
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
// The answer is the common case, and a SCRAM credential keeps its keys inline so that a
// login's copy costs no allocation for them: boxing it would bring one back.
#[allow(clippy::large_enum_variant)]
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

/// A handle of a [`Striped`](crate::sync::Striped) set on a lookup.
impl CredentialLookup for Padded<Arc<dyn CredentialLookup>> {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        self.0.lookup(request)
    }
}

/// A lookup that leaves every answer to the host (the pull form): each request comes back
/// as `NeedCredential`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AskHost;

impl CredentialLookup for AskHost {
    fn lookup(&self, _request: &CredentialRequest) -> Lookup {
        Lookup::Later
    }
}

impl CredentialAnswer {
    /// Reads a host's answer to `request` in the form every binding passes it: a kind, a value
    /// (the password, the SCRAM credential in Kafka's text form, or the reason a store is
    /// unavailable), an optional absolute expiry (ms since the epoch) and, for a delegation
    /// token, its owner. `Later` gives [`Lookup::Later`]. A password or SCRAM answer without a
    /// value, or a SCRAM credential that does not parse, is an error, and nothing is answered.
    pub fn decode(
        request: &CredentialRequest,
        kind: CredentialAnswerKind,
        value: Option<&str>,
        expiry_ms: Option<i64>,
        token_owner: Option<&str>,
    ) -> Result<Lookup> {
        let value_of = |what: &str| {
            value.ok_or_else(|| {
                Error::new(
                    ErrorCode::NullArgument,
                    format!("a {what} answer needs a value"),
                )
            })
        };
        let found = |c: ServerCredential| {
            let c = match expiry_ms {
                Some(e) => c.with_expiry_ms(e),
                None => c,
            };
            CredentialAnswer::Found(match token_owner {
                Some(o) => c.with_token_owner(o),
                None => c,
            })
        };
        Ok(Lookup::Now(match kind {
            CredentialAnswerKind::Password => {
                found(ServerCredential::password(value_of("password")?))
            }
            CredentialAnswerKind::Scram => found(ServerCredential::scram(
                request.scram_credential(value_of("scram")?)?,
            )),
            CredentialAnswerKind::Unknown => CredentialAnswer::Unknown,
            CredentialAnswerKind::Unavailable => {
                CredentialAnswer::Unavailable(value.unwrap_or("unavailable").to_string())
            }
            CredentialAnswerKind::Later => return Ok(Lookup::Later),
        }))
    }
}

impl Lookup {
    /// The answer of a lookup that must answer now (the pull form's reply to a pending
    /// request): `Later` is an `INVALID_ARGUMENT` error there.
    pub fn now(self) -> Result<CredentialAnswer> {
        match self {
            Lookup::Now(a) => Ok(a),
            Lookup::Later => Err(Error::new(
                ErrorCode::InvalidArgument,
                "\"later\" is not an answer to a pending credential request",
            )),
        }
    }
}

/// A lookup written by the host in another language: a function from the request to the
/// host's answer (usually through [`CredentialAnswer::decode`]). A failure of the host's code
/// (an exception, an invalid answer) answers `Unavailable` with its message, so the client is
/// refused without learning why.
pub struct HostLookup<F>(pub F);

impl<F> std::fmt::Debug for HostLookup<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostLookup(..)")
    }
}

impl<F> CredentialLookup for HostLookup<F>
where
    F: Fn(&CredentialRequest) -> Result<Lookup> + Send + Sync,
{
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        match (self.0)(request) {
            Ok(l) => l,
            // The mechanism says "credential lookup failed"; the host's reason follows it.
            Err(e) => Lookup::Now(CredentialAnswer::Unavailable(e.message().to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_host_lookup_answers_unavailable_with_the_host_reason_alone() {
        let host = HostLookup(|_: &CredentialRequest| -> Result<Lookup> {
            Err(Error::new(
                ErrorCode::InvalidArgument,
                "the callback returned 7",
            ))
        });
        let request = CredentialRequest {
            mechanism: "PLAIN".into(),
            username: "alice".into(),
            token_authenticated: false,
        };
        match host.lookup(&request) {
            Lookup::Now(CredentialAnswer::Unavailable(why)) => {
                assert_eq!(why, "the callback returned 7")
            }
            _ => panic!("expected an unavailable answer"),
        }
    }
}
