//! What every SASL mechanism shares: the steps a mechanism returns on each side, the traits a
//! mechanism implements, the Kafka principal and outcome of an exchange, and the host's pending
//! work.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::credential::{CredentialAnswer, CredentialRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::wire::ServerStepKind;

/// A Kafka principal: a type and a name. Kafka's SASL principals always have type `User`.
///
/// Two principals are equal when type and name are equal; whether the principal came from a
/// delegation token is not part of equality (Kafka's rule, which the KIP-368 same-principal
/// check relies on).
#[derive(Clone, Debug, Eq)]
pub struct Principal {
    /// Principal type, `User` for SASL.
    pub principal_type: String,
    /// Principal name: the SASL authorization id.
    pub name: String,
    /// Whether the principal authenticated with a delegation token.
    pub token_authenticated: bool,
}

impl Principal {
    /// `User:<name>`.
    pub fn user(name: impl Into<String>) -> Self {
        Principal {
            principal_type: "User".to_string(),
            name: name.into(),
            token_authenticated: false,
        }
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.principal_type == other.principal_type && self.name == other.name
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

/// What a mechanism tells the server when a client has proved who it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// The SASL authorization id (the username, the token owner, the token's subject, ...).
    pub authorization_id: String,
    /// Absolute expiry of the credential used, in ms since the epoch, if it has one
    /// (a delegation token or an OAuth token). It bounds the KIP-368 session.
    pub credential_expiry_ms: Option<i64>,
    /// The SASL extensions the mechanism accepted (for SCRAM, `tokenauth`).
    pub extensions: BTreeMap<String, String>,
    /// Whether a delegation token was used.
    pub token_authenticated: bool,
}

impl Authenticated {
    /// An identity with no expiry and no extensions.
    pub fn new(authorization_id: impl Into<String>) -> Self {
        Authenticated {
            authorization_id: authorization_id.into(),
            credential_expiry_ms: None,
            extensions: BTreeMap::new(),
            token_authenticated: false,
        }
    }
}

/// The result of a successful server exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthOutcome {
    /// The Kafka principal, `User:<authorization id>`.
    pub principal: Principal,
    /// The mechanism that authenticated the client.
    pub mechanism: String,
    /// Absolute credential expiry in ms since the epoch, if the credential has one.
    pub credential_expiry_ms: Option<i64>,
    /// The negotiated SASL extensions.
    pub extensions: BTreeMap<String, String>,
}

/// Work a host-defined mechanism has started and the host finishes outside ksasl: an
/// asynchronous call in the host's language (a coroutine in Python, say), a request to a
/// remote signer. ksasl never looks inside; it hands the value back to the host with the
/// `Pending` step or status, and the host resumes the exchange with the mechanism's answer
/// (`ClientExchange::resume`, `ServerExchange::resume` and the connection drivers'
/// `resume`).
///
/// Two `HostWork` values are equal when they are the same object.
#[derive(Clone)]
pub struct HostWork {
    work: Arc<dyn Any + Send + Sync>,
    mechanism: Arc<str>,
}

impl HostWork {
    /// Wraps a host value (for a mechanism written in Rust; the name in messages is `host`).
    pub fn new<T: Any + Send + Sync>(work: T) -> Self {
        Self::from_host("host", Arc::new(work))
    }

    /// Wraps the value a host mechanism named `mechanism` handed out.
    pub(crate) fn from_host(mechanism: &str, work: Arc<dyn Any + Send + Sync>) -> Self {
        HostWork {
            work,
            mechanism: Arc::from(mechanism),
        }
    }

    /// The host value, if it has type `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.work.downcast_ref::<T>()
    }

    /// The mechanism whose work this is, for messages about its late answer.
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }
}

impl fmt::Debug for HostWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HostWork(..)")
    }
}

impl PartialEq for HostWork {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.work, &other.work)
    }
}

impl Eq for HostWork {}

/// The next action for a client.
#[derive(Clone, PartialEq, Eq)]
pub enum ClientStep {
    /// Send these bytes and wait for the server's next challenge.
    Send(Vec<u8>),
    /// The client side is complete. If bytes are given, send them; either way the server's
    /// last response (success or error) is still to be read by the framing layer.
    Done(Option<Vec<u8>>),
    /// The mechanism answers later: the host finishes the work and calls `resume` with the
    /// step the mechanism produced (or the error it raised).
    Pending(HostWork),
}

impl fmt::Debug for ClientStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Client messages can hold passwords (PLAIN) or proofs (SCRAM): show only sizes.
        match self {
            ClientStep::Send(b) => write!(f, "Send(<{} bytes>)", b.len()),
            ClientStep::Done(Some(b)) => write!(f, "Done(Some(<{} bytes>))", b.len()),
            ClientStep::Done(None) => f.write_str("Done(None)"),
            ClientStep::Pending(_) => f.write_str("Pending"),
        }
    }
}

/// The next action for a server.
#[derive(Clone, PartialEq, Eq)]
pub enum ServerStep {
    /// Send this challenge and wait for the client's next message.
    Challenge(Vec<u8>),
    /// The mechanism needs a credential: look it up and answer with
    /// [`ServerExchange::provide_credential`].
    NeedCredential(CredentialRequest),
    /// The client is authenticated. Send `message` if given (Kafka sends it in the final
    /// `SaslAuthenticate` response).
    Done {
        /// The last challenge (SCRAM's server-final, an empty one for PLAIN).
        message: Option<Vec<u8>>,
        /// Who authenticated, how, and until when.
        outcome: AuthOutcome,
    },
    /// The mechanism answers later: the host finishes the work and calls
    /// [`ServerExchange::resume`] with the mechanism's step (or the error it raised).
    Pending(HostWork),
}

impl fmt::Debug for ServerStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerStep::Challenge(b) => write!(f, "Challenge(<{} bytes>)", b.len()),
            ServerStep::NeedCredential(r) => f.debug_tuple("NeedCredential").field(r).finish(),
            ServerStep::Done { message, outcome } => f
                .debug_struct("Done")
                .field(
                    "message",
                    &message.as_ref().map(|m| format!("<{} bytes>", m.len())),
                )
                .field("outcome", outcome)
                .finish(),
            ServerStep::Pending(_) => f.write_str("Pending"),
        }
    }
}

impl ServerStep {
    /// The step's kind, with its stable number and name.
    pub fn kind(&self) -> ServerStepKind {
        match self {
            ServerStep::Challenge(_) => ServerStepKind::Challenge,
            ServerStep::NeedCredential(_) => ServerStepKind::NeedCredential,
            ServerStep::Done { .. } => ServerStepKind::Done,
            ServerStep::Pending(_) => ServerStepKind::Pending,
        }
    }
}

/// What a server mechanism returns from one step.
#[derive(Debug)]
pub enum MechServerStep {
    /// Send this challenge, wait for the client.
    Challenge(Vec<u8>),
    /// Ask the host for a credential.
    NeedCredential(CredentialRequest),
    /// Authenticated.
    Done(Option<Vec<u8>>, Authenticated),
    /// The answer comes later, from the host (see [`HostWork`]).
    Pending(HostWork),
}

/// The client half of a mechanism.
pub trait ClientMechanism: Send {
    /// The mechanism name, as sent in `SaslHandshake`.
    fn name(&self) -> &str;
    /// The first message (Kafka always starts with a client message; a mechanism without an
    /// initial response returns `Send(vec![])`).
    fn start(&mut self, now_ms: i64) -> Result<ClientStep>;
    /// Evaluates one server challenge. Called only after `start` and before `Done`.
    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep>;
    /// The error to report when the server fails the exchange (Kafka's
    /// `SaslAuthenticate` error 58, with the server's text if it sent one). A mechanism
    /// that learnt more from the server during the exchange adds it here.
    fn server_failed(&mut self, server_message: Option<&str>) -> Error {
        server_rejection(self.name(), server_message)
    }
}

/// The error a client reports when the server fails an exchange.
pub fn server_rejection(mechanism: &str, server_message: Option<&str>) -> Error {
    let e = Error::new(
        ErrorCode::ServerRejectedAuthentication,
        match server_message {
            Some(m) => format!(
                "{mechanism} authentication failed: {}",
                quote_at_most(m.as_bytes(), SERVER_TEXT_LIMIT)
            ),
            None => format!("{mechanism} authentication failed"),
        },
    );
    match server_message {
        Some(m) => e.with_detail(
            "server_message",
            quote_at_most(m.as_bytes(), SERVER_TEXT_LIMIT),
        ),
        None => e,
    }
}

/// The server half of a mechanism.
pub trait ServerMechanism: Send {
    /// The mechanism name.
    fn name(&self) -> &str;
    /// Evaluates one client message.
    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep>;
    /// Continues after [`MechServerStep::NeedCredential`] with the host's answer.
    fn provide_credential(
        &mut self,
        answer: CredentialAnswer,
        now_ms: i64,
    ) -> Result<MechServerStep> {
        let _ = (answer, now_ms);
        Err(Error::new(
            ErrorCode::WrongState,
            "this mechanism never asks for a credential",
        ))
    }
}

pub(crate) use crate::error::{printable, quote};
use crate::error::{quote_at_most, SERVER_TEXT_LIMIT};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_steps_have_their_wire_kind() {
        assert_eq!(ServerStep::Challenge(vec![]).kind().name(), "challenge");
        let req = CredentialRequest {
            mechanism: "PLAIN".into(),
            username: "u".into(),
            token_authenticated: false,
        };
        assert_eq!(
            ServerStep::NeedCredential(req).kind(),
            ServerStepKind::NeedCredential
        );
        assert_eq!(ServerStep::Pending(HostWork::new(1u8)).kind().as_u32(), 4);
    }
}
