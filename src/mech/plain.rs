//! PLAIN (RFC 4616) with Kafka's server rules.
//!
//! The message is `[authzid] NUL username NUL password` in UTF-8. Kafka's Java client sends
//! an empty authzid, kafka-python sends the username; both are accepted. The server checks,
//! in Kafka's order: three fields, a username, a password, the credential, then the authzid.

use std::sync::Arc;

use crate::credential::{
    CredentialAnswer, CredentialRequest, CredentialSecret, PasswordCredential,
};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{
    Authenticated, ClientMechanism, ClientStep, MechServerStep, ServerMechanism,
};
use crate::names::PLAIN;
use crate::secret::Secret;

/// The PLAIN client: one message, then the server's verdict.
#[derive(Debug)]
pub struct PlainClient {
    credential: Arc<PasswordCredential>,
    authzid: Option<String>,
}

impl PlainClient {
    /// A client that sends an empty authzid (as Kafka's Java client and librdkafka do).
    pub fn new(credential: Arc<PasswordCredential>) -> Self {
        PlainClient {
            credential,
            authzid: None,
        }
    }

    /// Sends `authzid` as the authorization id (kafka-python sends the username). Kafka
    /// accepts only an empty one or the username itself.
    pub fn with_authzid(mut self, authzid: &str) -> Result<Self> {
        if authzid.contains('\0') {
            return Err(Error::misuse("the authorization id must not contain NUL"));
        }
        self.authzid = Some(authzid.to_string());
        Ok(self)
    }
}

impl ClientMechanism for PlainClient {
    fn name(&self) -> &str {
        PLAIN
    }

    fn start(&mut self, _now_ms: i64) -> Result<ClientStep> {
        let authzid = self.authzid.as_deref().unwrap_or("");
        let user = self.credential.username();
        let password = self.credential.password().expose();
        let mut message = Vec::with_capacity(authzid.len() + user.len() + password.len() + 2);
        message.extend_from_slice(authzid.as_bytes());
        message.push(0);
        message.extend_from_slice(user.as_bytes());
        message.push(0);
        message.extend_from_slice(password);
        Ok(ClientStep::Done(Some(message)))
    }

    fn step(&mut self, _challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        // The wrapper refuses steps once the client is done, and PLAIN is done at start.
        Err(Error::new(
            ErrorCode::StepAfterDone,
            "PLAIN has no challenge to answer",
        ))
    }
}

struct Pending {
    authzid: String,
    username: String,
    password: Secret,
}

/// The PLAIN server. It asks for the user's credential with a [`CredentialRequest`]; a
/// password is compared in constant time, a SCRAM credential is checked by deriving it.
#[derive(Default)]
pub struct PlainServer {
    pending: Option<Pending>,
}

impl PlainServer {
    /// A new exchange.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ServerMechanism for PlainServer {
    fn name(&self) -> &str {
        PLAIN
    }

    fn step(&mut self, response: &[u8], _now_ms: i64) -> Result<MechServerStep> {
        if self.pending.is_some() {
            return Err(Error::new(
                ErrorCode::WrongState,
                "PLAIN server stepped out of order",
            ));
        }
        // Split on NUL into at most four parts: anything but three is an error.
        let fields: Vec<&[u8]> = response.splitn(4, |&b| b == 0).collect();
        if fields.len() != 3 {
            // Kafka sends these three texts to the client (SaslAuthenticationException).
            return Err(Error::disclosed(
                ErrorCode::InvalidPlainMessage,
                format!(
                    "Invalid SASL/PLAIN response: expected 3 tokens, got {}",
                    fields.len()
                ),
            ));
        }
        let text = |b: &[u8], what: &str| {
            std::str::from_utf8(b).map(str::to_string).map_err(|_| {
                Error::new(
                    ErrorCode::InvalidEncoding,
                    format!("the PLAIN {what} is not valid UTF-8"),
                )
            })
        };
        let authzid = text(fields[0], "authorization id")?;
        let username = text(fields[1], "username")?;
        if std::str::from_utf8(fields[2]).is_err() {
            return Err(Error::new(
                ErrorCode::InvalidEncoding,
                "the PLAIN password is not valid UTF-8",
            ));
        }
        if username.is_empty() {
            return Err(Error::disclosed(
                ErrorCode::UsernameNotSpecified,
                "Authentication failed: username not specified",
            ));
        }
        if fields[2].is_empty() {
            return Err(Error::disclosed(
                ErrorCode::PasswordNotSpecified,
                "Authentication failed: password not specified",
            ));
        }
        let request = CredentialRequest {
            mechanism: PLAIN.to_string(),
            username: username.clone(),
            token_authenticated: false,
        };
        self.pending = Some(Pending {
            authzid,
            username,
            password: Secret::from_slice(fields[2]),
        });
        Ok(MechServerStep::NeedCredential(request))
    }

    fn provide_credential(
        &mut self,
        answer: CredentialAnswer,
        _now_ms: i64,
    ) -> Result<MechServerStep> {
        let p = self
            .pending
            .take()
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "no credential was requested"))?;
        let invalid = || {
            Error::disclosed(
                ErrorCode::InvalidCredentials,
                "Authentication failed: Invalid username or password",
            )
        };
        let credential = match answer {
            CredentialAnswer::Found(c) => c,
            // The same text as a wrong password, so the client cannot tell users apart.
            CredentialAnswer::Unknown => {
                return Err(Error::disclosed(
                    ErrorCode::UnknownUser,
                    "Authentication failed: Invalid username or password",
                ))
            }
            CredentialAnswer::Unavailable(why) => {
                return Err(Error::new(
                    ErrorCode::CredentialLookupFailed,
                    format!("credential lookup failed: {why}"),
                )
                .with_client_text(
                    "Authentication failed: credentials for user could not be verified",
                ))
            }
        };
        if credential.token_owner().is_some() {
            return Err(invalid());
        }
        let ok = match credential.secret() {
            CredentialSecret::Password(stored) => stored.ct_eq(p.password.expose()),
            CredentialSecret::Scram(scram) => scram.verify_password(p.password.expose()),
        };
        if !ok {
            return Err(invalid());
        }
        if !p.authzid.is_empty() && p.authzid != p.username {
            return Err(Error::disclosed(
                ErrorCode::AuthzidMismatch,
                "Authentication failed: Client requested an authorization id that is different from username",
            ));
        }
        let mut who = Authenticated::new(p.username);
        who.credential_expiry_ms = credential.expiry_ms();
        Ok(MechServerStep::Done(Some(Vec::new()), who))
    }
}

/// A PLAIN client message with the password replaced by `<redacted>`.
pub(crate) fn redact(message: &[u8]) -> String {
    let fields: Vec<&[u8]> = message.splitn(3, |&b| b == 0).collect();
    match fields.as_slice() {
        [authzid, user, _password] => {
            format!(
                "{}\\0{}\\0<redacted>",
                crate::mech::mechanism::quote(authzid),
                crate::mech::mechanism::quote(user)
            )
        }
        _ => format!("<{} bytes>", message.len()),
    }
}
