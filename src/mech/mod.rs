//! The authenticator model shared by every SASL mechanism, on both sides.
//!
//! A mechanism implements [`ClientMechanism`] or [`ServerMechanism`]: a pure step function
//! from the peer's bytes (and the current time, passed in) to what to do next. The library
//! wraps every mechanism, built-in or host-defined, in a [`ClientAuthenticator`] or
//! [`ServerAuthenticator`], which owns the state machine around it: the size limit on
//! incoming messages, "step after done" and "step after failure" errors, the pull form for
//! credentials, and the Kafka principal of a successful exchange. A mechanism therefore
//! cannot put the exchange into an undefined state, whatever it returns.
//!
//! Mechanisms are found by name in a [`MechanismRegistry`].

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::credential::{CredentialAnswer, CredentialLookup, Lookup};
use crate::error::{Error, ErrorCode, Result};

pub mod oauthbearer;
pub mod plain;
pub mod scram;

/// `PLAIN` (RFC 4616).
pub const PLAIN: &str = "PLAIN";
/// `SCRAM-SHA-256` (RFC 7677).
pub const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
/// `SCRAM-SHA-512`.
pub const SCRAM_SHA_512: &str = "SCRAM-SHA-512";
/// `OAUTHBEARER` (RFC 7628).
pub const OAUTHBEARER: &str = "OAUTHBEARER";

/// Kafka's default bound on a SASL message during authentication
/// (`sasl.server.max.receive.size`, 512 KiB). Both sides apply it to what they receive.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 512 * 1024;

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
/// (`ClientAuthenticator::resume`, `ServerAuthenticator::resume` and the connection drivers'
/// `resume`).
///
/// Two `HostWork` values are equal when they are the same object.
#[derive(Clone)]
pub struct HostWork(Arc<dyn Any + Send + Sync>);

impl HostWork {
    /// Wraps a host value.
    pub fn new<T: Any + Send + Sync>(work: T) -> Self {
        HostWork(Arc::new(work))
    }

    /// The host value, if it has type `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref::<T>()
    }
}

impl fmt::Debug for HostWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HostWork(..)")
    }
}

impl PartialEq for HostWork {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
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

/// A request for the stored credential of a user, made by a server mechanism.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialRequest {
    /// The mechanism asking (`PLAIN`, `SCRAM-SHA-256`, ...).
    pub mechanism: String,
    /// The username, unescaped; with `token_auth` this is the delegation token id.
    pub username: String,
    /// Whether the client asked for delegation-token authentication (`tokenauth=true`).
    pub token_auth: bool,
}

/// The next action for a server.
#[derive(Clone, PartialEq, Eq)]
pub enum ServerStep {
    /// Send this challenge and wait for the client's next message.
    Challenge(Vec<u8>),
    /// The mechanism needs a credential: look it up and answer with
    /// [`ServerAuthenticator::provide_credential`].
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
    /// [`ServerAuthenticator::resume`] with the mechanism's step (or the error it raised).
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

/// Runs a call into a mechanism (possibly written by the host), turning a panic into a
/// [`ErrorCode::Panic`] error so that the authenticator ends in its failed state instead of
/// unwinding through the connection driver.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> std::thread::Result<Result<T>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
}

/// The result of a [`guarded`] call, a panic becoming an error naming the mechanism.
fn unpanic<T>(r: std::thread::Result<Result<T>>, mechanism: &str) -> Result<T> {
    r.unwrap_or_else(|_| {
        Err(Error::new(
            ErrorCode::Panic,
            format!("the {mechanism} mechanism panicked"),
        ))
    })
}

/// The error a client reports when the server fails an exchange.
pub fn server_rejection(mechanism: &str, server_message: Option<&str>) -> Error {
    let e = Error::new(
        ErrorCode::ServerRejectedAuthentication,
        match server_message {
            Some(m) => format!(
                "{mechanism} authentication failed: {}",
                printable(m.as_bytes())
            ),
            None => format!("{mechanism} authentication failed"),
        },
    );
    match server_message {
        Some(m) => e.with_detail("server_message", m),
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

/// Where an authenticator is in its exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeState {
    /// Client only: `start` has not been called.
    NotStarted,
    /// Waiting for the peer's next message.
    WaitingForPeer,
    /// Server only: waiting for the host to provide a credential.
    WaitingForCredential,
    /// Waiting for the host to finish the mechanism's pending work and resume.
    WaitingForHost,
    /// Completed successfully.
    Done,
    /// Failed; the authenticator accepts no more input.
    Failed,
}

fn check_open(state: ExchangeState) -> Result<()> {
    match state {
        ExchangeState::Done => Err(Error::new(
            ErrorCode::StepAfterDone,
            "the exchange is already complete",
        )),
        ExchangeState::Failed => Err(Error::new(
            ErrorCode::StepAfterFailure,
            "the exchange has already failed",
        )),
        _ => Ok(()),
    }
}

/// The refusal of a `resume` when no mechanism work is pending (`WRONG_STATE`); the same text
/// everywhere, for the authenticators, the drivers and every binding.
pub fn nothing_pending() -> Error {
    Error::new(ErrorCode::WrongState, "no SASL mechanism work is pending")
}

fn pending_error() -> Error {
    Error::new(
        ErrorCode::WrongState,
        "the mechanism's pending work has not been resumed",
    )
}

fn check_size(len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(Error::new(
            ErrorCode::MessageTooLarge,
            format!("SASL message of {len} bytes is larger than the maximum of {max} bytes"),
        ));
    }
    Ok(())
}

/// A client exchange: one mechanism instance plus the state machine around it.
pub struct ClientAuthenticator {
    mech: Box<dyn ClientMechanism>,
    state: ExchangeState,
    max_message_size: usize,
    last_error: Option<Error>,
    /// The mechanism's work while its answer is pending.
    pending: Option<HostWork>,
}

impl fmt::Debug for ClientAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientAuthenticator")
            .field("mechanism", &self.mech.name())
            .field("state", &self.state)
            .finish()
    }
}

impl ClientAuthenticator {
    /// Wraps a mechanism.
    pub fn new(mech: Box<dyn ClientMechanism>) -> Self {
        ClientAuthenticator {
            mech,
            state: ExchangeState::NotStarted,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            last_error: None,
            pending: None,
        }
    }

    /// Sets the largest challenge accepted (default [`DEFAULT_MAX_MESSAGE_SIZE`]).
    pub fn set_max_message_size(&mut self, max: usize) {
        self.max_message_size = max;
    }

    /// The mechanism name.
    pub fn mechanism(&self) -> &str {
        self.mech.name()
    }

    /// The current state.
    pub fn state(&self) -> ExchangeState {
        self.state
    }

    /// Whether the client side has completed.
    pub fn is_complete(&self) -> bool {
        self.state == ExchangeState::Done
    }

    /// The error that failed the exchange, if it failed.
    pub fn last_error(&self) -> Option<&Error> {
        self.last_error.as_ref()
    }

    /// Produces the first message.
    pub fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::NotStarted {
            return Err(Error::new(
                ErrorCode::WrongState,
                "the exchange has already started",
            ));
        }
        let r = guarded(|| self.mech.start(now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// Continues after [`ClientStep::Pending`] with what the mechanism's work produced: the
    /// step, or the error the host code raised (which fails the exchange). A result that is
    /// `Pending` again waits once more.
    pub fn resume(&mut self, result: Result<ClientStep>) -> Result<ClientStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::WaitingForHost {
            return Err(nothing_pending());
        }
        self.after(result)
    }

    /// Records that the server failed the exchange (for example a Kafka `SaslAuthenticate`
    /// response with error 58 and its `error_message`) and returns the error to report. The
    /// exchange is then failed; calling this again returns the same error.
    pub fn server_failed(&mut self, server_message: Option<&str>) -> Error {
        if self.state == ExchangeState::Failed {
            if let Some(e) = &self.last_error {
                return e.clone();
            }
        }
        let r = guarded(|| Ok(self.mech.server_failed(server_message)));
        let e = match unpanic(r, self.mech.name()) {
            Ok(e) | Err(e) => e,
        };
        self.state = ExchangeState::Failed;
        self.last_error = Some(e.clone());
        e
    }

    /// Evaluates a server challenge.
    pub fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        check_open(self.state)?;
        if self.state == ExchangeState::NotStarted {
            return Err(Error::new(
                ErrorCode::WrongState,
                "start must be called before step",
            ));
        }
        if self.state == ExchangeState::WaitingForHost {
            return Err(pending_error());
        }
        if let Err(e) = check_size(challenge.len(), self.max_message_size) {
            return self.after(Err(e));
        }
        let r = guarded(|| self.mech.step(challenge, now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// The work of a mechanism whose answer is pending ([`ExchangeState::WaitingForHost`]).
    pub fn pending_work(&self) -> Option<&HostWork> {
        self.pending.as_ref()
    }

    fn after(&mut self, r: Result<ClientStep>) -> Result<ClientStep> {
        self.pending = match &r {
            Ok(ClientStep::Pending(w)) => Some(w.clone()),
            _ => None,
        };
        match &r {
            Ok(ClientStep::Send(_)) => self.state = ExchangeState::WaitingForPeer,
            Ok(ClientStep::Done(_)) => self.state = ExchangeState::Done,
            Ok(ClientStep::Pending(_)) => self.state = ExchangeState::WaitingForHost,
            Err(e) => {
                self.state = ExchangeState::Failed;
                self.last_error = Some(e.clone());
            }
        }
        r
    }
}

/// A server exchange: one mechanism instance plus the state machine around it.
pub struct ServerAuthenticator {
    mech: Box<dyn ServerMechanism>,
    lookup: Option<Arc<dyn CredentialLookup>>,
    state: ExchangeState,
    max_message_size: usize,
    outcome: Option<AuthOutcome>,
    last_error: Option<Error>,
    now_ms: i64,
    /// The mechanism's work while its answer is pending.
    pending: Option<HostWork>,
}

impl fmt::Debug for ServerAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerAuthenticator")
            .field("mechanism", &self.mech.name())
            .field("state", &self.state)
            .field("outcome", &self.outcome)
            .finish()
    }
}

impl ServerAuthenticator {
    /// Wraps a mechanism.
    pub fn new(mech: Box<dyn ServerMechanism>) -> Self {
        ServerAuthenticator {
            mech,
            lookup: None,
            state: ExchangeState::WaitingForPeer,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            outcome: None,
            last_error: None,
            now_ms: 0,
            pending: None,
        }
    }

    /// Sets the largest client message accepted (default [`DEFAULT_MAX_MESSAGE_SIZE`]).
    pub fn set_max_message_size(&mut self, max: usize) {
        self.max_message_size = max;
    }

    /// Sets the credential store consulted when the mechanism needs a credential. Without
    /// one, or when the store answers [`Lookup::Later`], the exchange stops with
    /// [`ServerStep::NeedCredential`] and the host answers through
    /// [`ServerAuthenticator::provide_credential`].
    pub fn set_credential_lookup(&mut self, lookup: Option<Arc<dyn CredentialLookup>>) {
        self.lookup = lookup;
    }

    /// The mechanism name.
    pub fn mechanism(&self) -> &str {
        self.mech.name()
    }

    /// The current state.
    pub fn state(&self) -> ExchangeState {
        self.state
    }

    /// Whether the client has been authenticated.
    pub fn is_complete(&self) -> bool {
        self.state == ExchangeState::Done
    }

    /// The outcome of a successful exchange.
    pub fn outcome(&self) -> Option<&AuthOutcome> {
        self.outcome.as_ref()
    }

    /// The error that failed the exchange, if it failed.
    pub fn last_error(&self) -> Option<&Error> {
        self.last_error.as_ref()
    }

    /// Evaluates one client message.
    pub fn step(&mut self, response: &[u8], now_ms: i64) -> Result<ServerStep> {
        check_open(self.state)?;
        if self.state == ExchangeState::WaitingForCredential {
            return Err(Error::new(
                ErrorCode::WrongState,
                "a credential was requested and has not been provided",
            ));
        }
        if self.state == ExchangeState::WaitingForHost {
            return Err(pending_error());
        }
        self.now_ms = now_ms;
        if let Err(e) = check_size(response.len(), self.max_message_size) {
            return self.after(Err(e));
        }
        let r = guarded(|| self.mech.step(response, now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// Answers a [`ServerStep::NeedCredential`] and continues the exchange.
    pub fn provide_credential(
        &mut self,
        answer: CredentialAnswer,
        now_ms: i64,
    ) -> Result<ServerStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::WaitingForCredential {
            return Err(Error::new(
                ErrorCode::WrongState,
                "no credential has been requested",
            ));
        }
        self.now_ms = now_ms;
        let r = guarded(|| self.mech.provide_credential(answer, now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// Continues after [`ServerStep::Pending`] with what the mechanism's work produced: its
    /// step, or the error the host code raised (which fails the exchange). The result is
    /// taken as if the mechanism had returned it from `step`: a credential request goes to
    /// the configured store, `Done` authenticates, `Pending` waits again.
    pub fn resume(&mut self, result: Result<MechServerStep>, now_ms: i64) -> Result<ServerStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::WaitingForHost {
            return Err(nothing_pending());
        }
        self.now_ms = now_ms;
        self.after(result)
    }

    /// The work of a mechanism whose answer is pending ([`ExchangeState::WaitingForHost`]).
    pub fn pending_work(&self) -> Option<&HostWork> {
        self.pending.as_ref()
    }

    fn after(&mut self, mut r: Result<MechServerStep>) -> Result<ServerStep> {
        self.pending = None;
        // Answer credential requests from the configured store for as long as it can. A
        // mechanism asks once per exchange; a bound keeps a faulty one from looping forever.
        let mut answered = 0;
        while let (Ok(MechServerStep::NeedCredential(req)), Some(lookup)) = (&r, &self.lookup) {
            if answered == 8 {
                r = Err(Error::new(
                    ErrorCode::Internal,
                    "the mechanism keeps asking for credentials",
                ));
                break;
            }
            answered += 1;
            match lookup.lookup(req) {
                Lookup::Now(answer) => {
                    let now = self.now_ms;
                    let g = guarded(|| self.mech.provide_credential(answer, now));
                    r = unpanic(g, self.mech.name())
                }
                Lookup::Later => break,
            }
        }
        match r {
            Ok(MechServerStep::Challenge(b)) => {
                self.state = ExchangeState::WaitingForPeer;
                Ok(ServerStep::Challenge(b))
            }
            Ok(MechServerStep::NeedCredential(req)) => {
                self.state = ExchangeState::WaitingForCredential;
                Ok(ServerStep::NeedCredential(req))
            }
            Ok(MechServerStep::Pending(work)) => {
                self.state = ExchangeState::WaitingForHost;
                self.pending = Some(work.clone());
                Ok(ServerStep::Pending(work))
            }
            Ok(MechServerStep::Done(message, who)) => {
                let mut principal = Principal::user(who.authorization_id);
                principal.token_authenticated = who.token_authenticated;
                let outcome = AuthOutcome {
                    principal,
                    mechanism: self.mech.name().to_string(),
                    credential_expiry_ms: who.credential_expiry_ms,
                    extensions: who.extensions,
                };
                self.state = ExchangeState::Done;
                self.outcome = Some(outcome.clone());
                Ok(ServerStep::Done { message, outcome })
            }
            Err(e) => {
                self.state = ExchangeState::Failed;
                self.last_error = Some(e.clone());
                Err(e)
            }
        }
    }
}

type ClientFactory = Arc<dyn Fn() -> Result<Box<dyn ClientMechanism>> + Send + Sync>;
type ServerFactory = Arc<dyn Fn() -> Result<Box<dyn ServerMechanism>> + Send + Sync>;

/// Mechanisms by name, for each side. Cheap to clone; shared by all connections of a host.
#[derive(Clone, Default)]
pub struct MechanismRegistry {
    clients: BTreeMap<String, ClientFactory>,
    servers: BTreeMap<String, ServerFactory>,
    lookup: Option<Arc<dyn CredentialLookup>>,
}

impl fmt::Debug for MechanismRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MechanismRegistry")
            .field("clients", &self.clients.keys().collect::<Vec<_>>())
            .field("servers", &self.servers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Checks a SASL mechanism name (RFC 4422 §3.1: 1 to 20 of `A-Z 0-9 - _`).
pub fn validate_mechanism_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 20
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "invalid SASL mechanism name {name:?}: 1 to 20 characters of A-Z, 0-9, '-' and '_'"
            ),
        ))
    }
}

impl MechanismRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the credential store given to every server exchange this registry creates.
    pub fn set_credential_lookup(&mut self, lookup: Option<Arc<dyn CredentialLookup>>) {
        self.lookup = lookup;
    }

    /// Registers (or replaces) a client mechanism.
    pub fn register_client<F>(&mut self, name: &str, factory: F) -> Result<()>
    where
        F: Fn() -> Result<Box<dyn ClientMechanism>> + Send + Sync + 'static,
    {
        validate_mechanism_name(name)?;
        self.clients.insert(name.to_string(), Arc::new(factory));
        Ok(())
    }

    /// Registers (or replaces) a server mechanism.
    pub fn register_server<F>(&mut self, name: &str, factory: F) -> Result<()>
    where
        F: Fn() -> Result<Box<dyn ServerMechanism>> + Send + Sync + 'static,
    {
        validate_mechanism_name(name)?;
        self.servers.insert(name.to_string(), Arc::new(factory));
        Ok(())
    }

    /// Adds every mechanism of `other` (replacing same-named ones); the credential lookup of
    /// `self` is kept unless it has none.
    pub fn merge(&mut self, other: MechanismRegistry) {
        self.clients.extend(other.clients);
        self.servers.extend(other.servers);
        if self.lookup.is_none() {
            self.lookup = other.lookup;
        }
    }

    /// Removes a mechanism from both sides; returns whether it was registered.
    pub fn unregister(&mut self, name: &str) -> bool {
        let a = self.clients.remove(name).is_some();
        let b = self.servers.remove(name).is_some();
        a || b
    }

    /// Names of the client mechanisms, sorted.
    pub fn client_mechanisms(&self) -> Vec<String> {
        self.clients.keys().cloned().collect()
    }

    /// Names of the server mechanisms, sorted.
    pub fn server_mechanisms(&self) -> Vec<String> {
        self.servers.keys().cloned().collect()
    }

    /// A new client exchange for the named mechanism.
    pub fn client(&self, name: &str) -> Result<ClientAuthenticator> {
        let f = self
            .clients
            .get(name)
            .ok_or_else(|| unknown(name, self.client_mechanisms()))?;
        let mech = f()?;
        check_factory_name(name, mech.name())?;
        Ok(ClientAuthenticator::new(mech))
    }

    /// A new server exchange for the named mechanism.
    pub fn server(&self, name: &str) -> Result<ServerAuthenticator> {
        let f = self
            .servers
            .get(name)
            .ok_or_else(|| unknown(name, self.server_mechanisms()))?;
        let mech = f()?;
        check_factory_name(name, mech.name())?;
        let mut server = ServerAuthenticator::new(mech);
        server.set_credential_lookup(self.lookup.clone());
        Ok(server)
    }
}

fn unknown(name: &str, known: Vec<String>) -> Error {
    Error::new(
        ErrorCode::UnknownMechanism,
        format!(
            "SASL mechanism {name:?} is not registered; registered: [{}]",
            known.join(", ")
        ),
    )
}

fn check_factory_name(asked: &str, got: &str) -> Result<()> {
    if asked != got {
        return Err(Error::new(
            ErrorCode::InvalidConfig,
            format!("the factory registered for {asked} produced a {got} mechanism"),
        ));
    }
    Ok(())
}

/// A loggable rendering of a SASL message with every secret replaced by `<redacted>`.
///
/// `from_client` tells which side wrote the message. Known mechanisms are rendered
/// field by field; anything else is shown only by its length.
pub fn redact(mechanism: &str, message: &[u8], from_client: bool) -> String {
    match mechanism {
        PLAIN if from_client => plain::redact(message),
        OAUTHBEARER => oauthbearer::redact(message),
        SCRAM_SHA_256 | SCRAM_SHA_512 => scram::redact(message),
        _ if message.is_empty() => String::new(),
        _ => format!("<{} bytes>", message.len()),
    }
}

/// Lossy text of bytes for logs, with control characters written as `\xNN`.
pub(crate) fn printable(bytes: &[u8]) -> String {
    let mut s = String::new();
    for ch in String::from_utf8_lossy(bytes).chars() {
        if (ch as u32) < 0x20 || ch as u32 == 0x7f {
            s.push_str(&format!("\\x{:02x}", ch as u32));
        } else if ch.is_control() {
            s.extend(ch.escape_default());
        } else {
            s.push(ch);
        }
    }
    s
}
