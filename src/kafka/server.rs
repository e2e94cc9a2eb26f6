//! The broker side of a SASL connection: answers ApiVersions, SaslHandshake and
//! SaslAuthenticate (or legacy raw messages) byte for byte as Kafka does, computes and enforces
//! the KIP-368 session, and runs re-authentications.
//!
//! The host reads frames (see [`FrameDecoder`](super::messages::FrameDecoder)), hands each
//! one to [`ServerConnection::handle_frame`] until the connection is authenticated, acts on
//! the [`ServerAction`] and writes [`ServerConnection::poll_transmit`], and then asks
//! [`ServerConnection::gate`] about every request. Both drivers have this shape: an outbox of
//! frames and a verdict per input. Each frame is parsed once: its header when it arrives, its
//! body by the phase that expects it.

use std::sync::Arc;

use super::codec::{decode_body, encode_response, Decoder, Message, RequestHeader};
use super::messages::{
    error_code, raw_frame, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse, API_VERSIONS, MAX_SASL_AUTHENTICATE_VERSION, MAX_SASL_HANDSHAKE_VERSION,
    SASL_AUTHENTICATE, SASL_HANDSHAKE,
};
use super::refusal::{self, Refusal};
use crate::credential::{CredentialAnswer, CredentialRequest};
use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::{ExchangeState, HostTask, HostWork, MechServerStep, ServerExchange, ServerStep};
use crate::names::GSSAPI;
use crate::session::{FailedReauthPolicy, Gate};
use crate::wire::ServerActionKind;

pub use super::config::{
    ServerConfig, ServerConfigBuilder, DEFAULT_FAILED_AUTHENTICATION_DELAY_MS,
};
pub use super::refusal::RefusedRequest;
pub use crate::mech::ServerSession;

/// What the host does after handing the connection a frame.
#[derive(Debug)]
pub enum ServerAction {
    /// Write the output and keep reading authentication frames.
    Continue,
    /// Look up a credential and answer with [`ServerConnection::provide_credential`].
    NeedCredential(CredentialRequest),
    /// A host-defined mechanism answers later: finish the work and call
    /// [`ServerConnection::resume`] with the mechanism's step.
    Pending(HostWork),
    /// Write the output; the connection is authenticated (first time).
    Authenticated(ServerSession),
    /// Write the output; the connection re-authenticated.
    Reauthenticated(ServerSession),
    /// Write the output; the re-authentication failed but the connection keeps its old
    /// session ([`FailedReauthPolicy::RetryUntilExpiry`]).
    ReauthenticationFailed(Error),
    /// Authentication failed: at `deadline_ms` write the output (Kafka's error response, if
    /// any) and close (KIP-306's `connection.failed.authentication.delay.ms`). The error's
    /// [`client_text`](Error::client_text) is what the response told the client.
    FailAt {
        /// When to write and close.
        deadline_ms: i64,
        /// Why.
        error: Error,
    },
    /// Close now without writing anything.
    CloseNow(Error),
}

impl ServerAction {
    /// The action's kind, with its stable number.
    pub fn kind(&self) -> ServerActionKind {
        match self {
            ServerAction::Continue => ServerActionKind::Continue,
            ServerAction::NeedCredential(_) => ServerActionKind::NeedCredential,
            ServerAction::Pending(_) => ServerActionKind::Pending,
            ServerAction::Authenticated(_) => ServerActionKind::Authenticated,
            ServerAction::Reauthenticated(_) => ServerActionKind::Reauthenticated,
            ServerAction::ReauthenticationFailed(_) => ServerActionKind::ReauthFailed,
            ServerAction::FailAt { .. } => ServerActionKind::FailAt,
            ServerAction::CloseNow(_) => ServerActionKind::CloseNow,
        }
    }

    /// The session of an `Authenticated` or `Reauthenticated` action.
    pub fn session(&self) -> Option<&ServerSession> {
        match self {
            ServerAction::Authenticated(s) | ServerAction::Reauthenticated(s) => Some(s),
            _ => None,
        }
    }

    /// Why the connection failed, or why the re-authentication failed: the error of
    /// `ReauthenticationFailed`, `FailAt` and `CloseNow`.
    pub fn error(&self) -> Option<&Error> {
        match self {
            ServerAction::ReauthenticationFailed(e)
            | ServerAction::FailAt { error: e, .. }
            | ServerAction::CloseNow(e) => Some(e),
            _ => None,
        }
    }

    /// The deadline of `FailAt`.
    pub fn deadline_ms(&self) -> Option<i64> {
        match self {
            ServerAction::FailAt { deadline_ms, .. } => Some(*deadline_ms),
            _ => None,
        }
    }
}

/// How the client sends its SASL messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// In SaslAuthenticate requests (SaslHandshake v1).
    Wrapped,
    /// As raw length-prefixed frames (SaslHandshake v0).
    Legacy,
}

/// The client message a mechanism step answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    /// A SaslAuthenticate request: its correlation id and version.
    Authenticate { correlation_id: i32, version: i16 },
    /// A raw legacy frame (no correlation, no error channel).
    Raw,
}

enum Phase {
    /// Before anything: ApiVersions or SaslHandshake may come.
    VersionsOrHandshake,
    /// After ApiVersions: SaslHandshake must come.
    Handshake,
    /// The mechanism exchange; `waiting` is the message being answered while the host works.
    Exchange {
        auth: Box<ServerExchange>,
        mode: Mode,
        waiting: Option<Reply>,
    },
    /// Re-authentication asked for another enabled mechanism: the handshake succeeded, the
    /// next frame fails (Kafka's REAUTH_BAD_MECHANISM).
    BadMechanism { requested: String },
    /// Authenticated; no exchange in progress.
    Ready,
    /// Failed or closed.
    Done,
}

/// One server connection's SASL state.
pub struct ServerConnection {
    config: Arc<ServerConfig>,
    phase: Phase,
    session: Option<Box<ServerSession>>,
    expiry_ms: i64,
    reauth_started_ms: Option<i64>,
    reauth_capable: bool,
    reauthenticating: bool,
    outbox: Vec<u8>,
    refused: Option<Box<RefusedRequest>>,
}

impl std::fmt::Debug for ServerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConnection")
            .field("session", &self.session)
            .field("reauthenticating", &self.reauthenticating)
            .finish()
    }
}

fn unexpected(kind: &str, api_key: i16, during: &str) -> Error {
    Error::new(
        ErrorCode::IllegalSaslState,
        format!(
            "Unexpected Kafka request of type {} during SASL {during}.",
            api_name(api_key)
        ),
    )
    .with_detail("api_key", api_key.to_string())
    .with_detail("phase", kind)
}

/// Kafka's name of an API key, for messages.
pub fn api_name(api_key: i16) -> String {
    match api_key {
        0 => "PRODUCE".into(),
        1 => "FETCH".into(),
        2 => "LIST_OFFSETS".into(),
        3 => "METADATA".into(),
        8 => "OFFSET_COMMIT".into(),
        9 => "OFFSET_FETCH".into(),
        10 => "FIND_COORDINATOR".into(),
        11 => "JOIN_GROUP".into(),
        12 => "HEARTBEAT".into(),
        SASL_HANDSHAKE => "SASL_HANDSHAKE".into(),
        API_VERSIONS => "API_VERSIONS".into(),
        SASL_AUTHENTICATE => "SASL_AUTHENTICATE".into(),
        k => format!("API_KEY_{k}"),
    }
}

/// A response frame of a message ksasl builds itself (bounded sizes, so encoding succeeds).
fn respond<M: Message>(m: &M, version: i16, correlation_id: i32) -> Vec<u8> {
    encode_response(m, version, correlation_id).unwrap_or_default()
}

fn authenticate_response(reply: Reply, response: SaslAuthenticateResponse) -> Vec<u8> {
    match reply {
        Reply::Authenticate {
            correlation_id,
            version,
        } => respond(&response, version, correlation_id),
        Reply::Raw => raw_frame(&response.auth_bytes),
    }
}

/// Kafka's refusal of an authentication frame over `sasl.server.max.receive.size`.
fn invalid_receive_size() -> Error {
    Error::new(
        ErrorCode::MessageTooLarge,
        "Failing SASL authentication due to invalid receive size",
    )
}

fn ok_response(auth_bytes: Vec<u8>, session_lifetime_ms: i64) -> SaslAuthenticateResponse {
    SaslAuthenticateResponse {
        error_code: error_code::NONE,
        // Kafka 4.4 sends an empty message, not a null one (issue 17, defect 6).
        error_message: Some(String::new()),
        auth_bytes,
        session_lifetime_ms,
    }
}

/// Kafka's failed SaslAuthenticate response with `text`; legacy framing has no error channel.
fn failure_response(reply: Reply, text: &str) -> Vec<u8> {
    match reply {
        Reply::Raw => Vec::new(),
        reply => authenticate_response(
            reply,
            SaslAuthenticateResponse {
                error_code: error_code::SASL_AUTHENTICATION_FAILED,
                error_message: Some(text.to_string()),
                auth_bytes: vec![],
                session_lifetime_ms: 0,
            },
        ),
    }
}

impl ServerConnection {
    /// A new connection.
    pub fn new(config: Arc<ServerConfig>) -> Self {
        ServerConnection {
            config,
            phase: Phase::VersionsOrHandshake,
            session: None,
            expiry_ms: i64::MAX,
            reauth_started_ms: None,
            reauth_capable: false,
            reauthenticating: false,
            outbox: Vec::new(),
            refused: None,
        }
    }

    /// The current session, once authenticated.
    pub fn session(&self) -> Option<&ServerSession> {
        self.session.as_deref()
    }

    /// Whether the connection is authenticated and no exchange is in progress.
    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Ready)
    }

    /// Whether a SaslAuthenticate request of version > 0 has been seen (the client can learn
    /// its session lifetime and so re-authenticate).
    pub fn client_supports_reauthentication(&self) -> bool {
        self.reauth_capable
    }

    /// The instant after which requests are refused, if the session expires.
    pub fn session_expiry_ms(&self) -> Option<i64> {
        (self.expiry_ms != i64::MAX).then_some(self.expiry_ms)
    }

    /// The per-request gate (reference §2.4): call it with each request's API key on an
    /// authenticated connection. Allocation-free.
    #[inline]
    pub fn gate(&self, api_key: i16, now_ms: i64) -> Gate {
        match self.phase {
            Phase::Ready => {}
            Phase::Done => return Gate::Close,
            _ => return Gate::NotAuthenticated,
        }
        if api_key == SASL_HANDSHAKE && self.may_begin_reauthentication(now_ms) {
            return Gate::BeginReauthentication;
        }
        if now_ms > self.expiry_ms {
            self.config.metrics().connection_expired();
            return Gate::CloseExpired;
        }
        Gate::Process
    }

    #[inline]
    fn may_begin_reauthentication(&self, now_ms: i64) -> bool {
        // Both callers hold a `Ready` connection (the gate returns before otherwise).
        self.expiry_ms != i64::MAX
            && self
                .reauth_started_ms
                .map_or(true, |t| now_ms.saturating_sub(t) >= 1000)
    }

    /// Kafka's answer to a SaslHandshake or SaslAuthenticate that reaches the request
    /// handlers of an authenticated connection (not eligible for re-authentication):
    /// ILLEGAL_SASL_STATE. `None` for other APIs.
    pub fn illegal_state_response(frame: &[u8]) -> Option<Vec<u8>> {
        let (h, _) = RequestHeader::parse(frame).ok()?;
        match h.api_key {
            SASL_HANDSHAKE => Some(respond(
                &SaslHandshakeResponse {
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    mechanisms: vec![],
                },
                h.api_version.clamp(0, MAX_SASL_HANDSHAKE_VERSION),
                h.correlation_id,
            )),
            SASL_AUTHENTICATE if h.api_version <= MAX_SASL_AUTHENTICATE_VERSION => Some(respond(
                &SaslAuthenticateResponse {
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    error_message: Some(
                        "SaslAuthenticate request received after successful authentication".into(),
                    ),
                    auth_bytes: vec![],
                    session_lifetime_ms: 0,
                },
                h.api_version.max(0),
                h.correlation_id,
            )),
            _ => None,
        }
    }

    /// The next instant the host must act at: the session expiry (Kafka closes lazily, on
    /// the next request; a host may also close idle expired connections then).
    pub fn next_deadline(&self) -> Option<i64> {
        self.session_expiry_ms()
    }

    /// The credential request the host must answer (after [`ServerAction::NeedCredential`]).
    pub fn pending_request(&self) -> Option<&CredentialRequest> {
        match &self.phase {
            Phase::Exchange { auth, .. } => auth.pending_request(),
            _ => None,
        }
    }

    /// The work of a host mechanism whose answer is pending (after [`ServerAction::Pending`],
    /// until [`ServerConnection::resume`] or a failure).
    pub fn pending_work(&self) -> Option<&HostWork> {
        match &self.phase {
            Phase::Exchange { auth, .. } => auth.pending_work(),
            _ => None,
        }
    }

    /// What the connection waits for from the host, if anything: a credential or a
    /// mechanism's pending work. An asynchronous host awaits it, answers, and repeats until
    /// this is `None`; the frames of every step wait in the outbox ([`Self::poll_transmit`]).
    pub fn host_task(&self) -> Option<HostTask<'_>> {
        match &self.phase {
            Phase::Exchange { auth, .. } => auth.host_task(),
            _ => None,
        }
    }

    /// Queues `frames` for the host to write and returns the action.
    fn out(&mut self, frames: Vec<u8>, action: ServerAction) -> ServerAction {
        self.outbox.extend_from_slice(&frames);
        action
    }

    /// The frames to write (each with its length prefix, concatenated), if any: everything
    /// queued since the last call, across a frame and the host's answers to it. After
    /// `FailAt`, write them at the deadline.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.outbox.is_empty()).then(|| std::mem::take(&mut self.outbox))
    }

    fn fail(&mut self, frames: Vec<u8>, error: Error, now_ms: i64) -> ServerAction {
        self.config
            .metrics()
            .authentication_failed(self.reauthenticating, now_ms);
        self.phase = Phase::Done;
        let deadline_ms = now_ms.saturating_add(self.config.failed_authentication_delay_ms());
        self.out(frames, ServerAction::FailAt { deadline_ms, error })
    }

    fn close_now(&mut self, error: Error, count_failure: bool, now_ms: i64) -> ServerAction {
        if count_failure {
            self.config
                .metrics()
                .authentication_failed(self.reauthenticating, now_ms);
        }
        self.phase = Phase::Done;
        self.out(Vec::new(), ServerAction::CloseNow(error))
    }

    /// Refuses a frame that arrives when none may, changing nothing.
    fn refuse(&mut self, phase: Phase, code: ErrorCode, why: &str) -> ServerAction {
        self.phase = phase;
        self.out(Vec::new(), ServerAction::CloseNow(Error::new(code, why)))
    }

    /// Checks a frame's declared length (its 4-byte prefix) before the host reads the body, as
    /// Kafka does: while no session is live (before the first authentication completes, or in
    /// a re-authentication's exchange) at most `sasl.server.max.receive.size`, afterwards at
    /// most `socket.request.max.bytes`. Returns the body's size; on an error the host closes
    /// the connection without reading the body (a refusal during authentication counts as a
    /// failed authentication, and the gate then says `Close`).
    pub fn check_frame_size(&mut self, declared: i32, now_ms: i64) -> Result<usize> {
        let live = matches!(self.phase, Phase::Ready);
        let max = match live {
            true => self.config.max_request_size(),
            false => self.config.max_receive_size(),
        };
        let e = match usize::try_from(declared) {
            Ok(size) if size <= max => return Ok(size),
            Ok(_) if live => Error::new(
                ErrorCode::MessageTooLarge,
                format!("Invalid receive (size = {declared} larger than {max})"),
            ),
            Ok(_) => invalid_receive_size().with_detail("size", declared.to_string()),
            Err(_) => Error::new(
                ErrorCode::InvalidFrameSize,
                format!("Invalid receive (size = {declared})"),
            ),
        };
        Err(self.refuse_frame(e, now_ms))
    }

    /// A refused frame length: the connection is over (counted as a failed authentication
    /// unless it was live, or already over).
    fn refuse_frame(&mut self, e: Error, now_ms: i64) -> Error {
        if !matches!(self.phase, Phase::Ready | Phase::Done) {
            self.config
                .metrics()
                .authentication_failed(self.reauthenticating, now_ms);
        }
        self.phase = Phase::Done;
        e
    }

    /// Handles one frame received during (re-)authentication.
    pub fn handle_frame(&mut self, frame: &[u8], now_ms: i64) -> ServerAction {
        if frame.len() > self.config.max_receive_size() {
            return self.fail(Vec::new(), invalid_receive_size(), now_ms);
        }
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Exchange {
                auth,
                mode: Mode::Legacy,
                waiting: None,
            } => {
                let mut auth = auth;
                let r = auth.step(frame, now_ms);
                self.after_step(auth, Mode::Legacy, Reply::Raw, r, now_ms)
            }
            waiting @ Phase::Exchange {
                waiting: Some(_), ..
            } => self.refuse(
                waiting,
                ErrorCode::WrongState,
                "a credential or the mechanism's pending work is awaited",
            ),
            Phase::Done => self.refuse(
                Phase::Done,
                ErrorCode::StepAfterFailure,
                "the connection has failed",
            ),
            Phase::VersionsOrHandshake if self.is_legacy_gssapi_token(frame) => {
                self.legacy_gssapi(frame, now_ms)
            }
            phase => match RequestHeader::parse(frame) {
                Ok((header, body)) => self.request(phase, header, body, now_ms),
                Err(e) => self.unparsable(phase, frame.len(), e, now_ms),
            },
        }
    }

    /// Whether a first packet is a pre-0.10 client's raw GSS-API token: RFC 2743 §3.1 starts
    /// every initial context token with the tag 0x60, which as a request header's api key
    /// (0x60xx) names no Kafka API.
    fn is_legacy_gssapi_token(&self, frame: &[u8]) -> bool {
        self.config.legacy_gssapi() && frame.first() == Some(&0x60)
    }

    /// Starts a GSSAPI exchange in raw framing with the first packet as its first token.
    fn legacy_gssapi(&mut self, frame: &[u8], now_ms: i64) -> ServerAction {
        let mut auth = match self.config.registry().server(GSSAPI) {
            Ok(a) => a,
            Err(e) => return self.fail(Vec::new(), e, now_ms),
        };
        auth.set_max_receive_size(self.config.max_receive_size());
        auth.set_max_reauth_ms(self.config.max_reauth_ms(GSSAPI));
        let r = auth.step(frame, now_ms);
        self.after_step(Box::new(auth), Mode::Legacy, Reply::Raw, r, now_ms)
    }

    /// A frame whose request header does not parse (`len` bytes long).
    fn unparsable(&mut self, phase: Phase, len: usize, e: Error, now_ms: i64) -> ServerAction {
        match phase {
            // Too short for a request header's fixed part: not a Kafka request (a raw GSSAPI
            // token is handled before parsing, when enabled).
            Phase::VersionsOrHandshake if len < 8 => {
                let e = Error::new(
                    ErrorCode::UnsupportedSaslMechanism,
                    "the first packet is not a Kafka request and GSSAPI is not enabled",
                );
                self.fail(Vec::new(), e, now_ms)
            }
            Phase::Ready => {
                self.phase = Phase::Ready;
                self.close_now(e, false, now_ms)
            }
            _ => self.close_now(e, true, now_ms),
        }
    }

    /// A parsed request, routed by the phase that receives it.
    fn request(
        &mut self,
        phase: Phase,
        h: RequestHeader,
        body: Decoder<'_>,
        now_ms: i64,
    ) -> ServerAction {
        match phase {
            Phase::VersionsOrHandshake | Phase::Handshake => {
                let first = matches!(phase, Phase::VersionsOrHandshake);
                match h.api_key {
                    API_VERSIONS if first => self.api_versions(&h, body),
                    API_VERSIONS => self.close_now(
                        Error::new(
                            ErrorCode::IllegalSaslState,
                            "ApiVersions may only be the first request",
                        ),
                        true,
                        now_ms,
                    ),
                    SASL_HANDSHAKE => self.handshake(&h, body, now_ms),
                    k => self.fail(Vec::new(), unexpected("handshake", k, "handshake"), now_ms),
                }
            }
            Phase::Exchange { auth, .. } => self.authenticate(auth, &h, body, now_ms),
            Phase::BadMechanism { requested } => {
                let original = self
                    .session
                    .as_ref()
                    .map(|s| s.outcome.mechanism.clone())
                    .unwrap_or_default();
                let e = Error::new(
                    ErrorCode::MechanismChanged,
                    format!("SASL mechanism '{requested}' requested by client is not supported for re-authentication of mechanism '{original}'"),
                );
                self.fail(Vec::new(), e, now_ms)
            }
            Phase::Ready => self.ready_request(&h, body, now_ms),
            Phase::Done => self.refuse(Phase::Done, ErrorCode::StepAfterFailure, "failed"),
        }
    }

    /// A frame on an authenticated connection: only a SaslHandshake that may start a
    /// re-authentication belongs here.
    fn ready_request(&mut self, h: &RequestHeader, body: Decoder<'_>, now_ms: i64) -> ServerAction {
        self.phase = Phase::Ready;
        if h.api_key == SASL_HANDSHAKE && self.may_begin_reauthentication(now_ms) {
            self.reauth_started_ms = Some(now_ms);
            self.reauthenticating = true;
            return self.handshake(h, body, now_ms);
        }
        self.refuse(
            Phase::Ready,
            ErrorCode::WrongState,
            "authenticated: pass requests through gate() to the request handlers",
        )
    }

    fn api_versions(&mut self, h: &RequestHeader, body: Decoder<'_>) -> ServerAction {
        let (answer, ok) = self.config.api_versions_answer(h, body);
        // After a failed ApiVersions the client may try again (KIP-511).
        self.phase = if ok {
            Phase::Handshake
        } else {
            Phase::VersionsOrHandshake
        };
        self.out(answer, ServerAction::Continue)
    }

    fn handshake(&mut self, h: &RequestHeader, body: Decoder<'_>, now_ms: i64) -> ServerAction {
        if !(0..=MAX_SASL_HANDSHAKE_VERSION).contains(&h.api_version) {
            let e = Error::new(
                ErrorCode::UnsupportedVersion,
                format!("SaslHandshake v{} is not supported", h.api_version),
            );
            return self.close_now(e, true, now_ms);
        }
        let mechanism = match decode_body::<SaslHandshakeRequest>(h.api_version, body) {
            Ok(r) => r.mechanism,
            Err(e) => return self.close_now(e, true, now_ms),
        };
        let enabled = self.config.enabled_mechanisms();
        let answer = |error_code| {
            let r = SaslHandshakeResponse {
                error_code,
                mechanisms: enabled.to_vec(),
            };
            respond(&r, h.api_version, h.correlation_id)
        };
        if !enabled.contains(&mechanism) {
            let e = Error::new(
                ErrorCode::UnsupportedSaslMechanism,
                format!("Unsupported SASL mechanism {}", quote(mechanism.as_bytes())),
            )
            .with_detail("enabled", enabled.join(","));
            let frames = answer(error_code::UNSUPPORTED_SASL_MECHANISM);
            return self.fail(frames, e, now_ms);
        }
        let ok = answer(error_code::NONE);
        let original = self.session.as_ref().map(|s| &s.outcome.mechanism);
        if self.reauthenticating && original != Some(&mechanism) {
            self.phase = Phase::BadMechanism {
                requested: mechanism,
            };
            return self.out(ok, ServerAction::Continue);
        }
        let mut auth = match self.config.registry().server(&mechanism) {
            Ok(a) => a,
            Err(e) => return self.fail(Vec::new(), e, now_ms),
        };
        auth.set_max_receive_size(self.config.max_receive_size());
        auth.set_max_reauth_ms(self.config.max_reauth_ms(&mechanism));
        auth.set_unknown_user_mask(self.config.unknown_user_mask().cloned());
        let mode = if h.api_version == 0 {
            Mode::Legacy
        } else {
            Mode::Wrapped
        };
        self.phase = Phase::Exchange {
            auth: Box::new(auth),
            mode,
            waiting: None,
        };
        self.out(ok, ServerAction::Continue)
    }

    /// A request during a wrapped exchange: a SaslAuthenticate, or a failure.
    fn authenticate(
        &mut self,
        mut auth: Box<ServerExchange>,
        h: &RequestHeader,
        body: Decoder<'_>,
        now_ms: i64,
    ) -> ServerAction {
        if h.api_key != SASL_AUTHENTICATE {
            return self.unexpected_during_authentication(h, body, now_ms);
        }
        let version = h.api_version;
        if !(0..=MAX_SASL_AUTHENTICATE_VERSION).contains(&version) {
            let e = Error::new(
                ErrorCode::UnsupportedVersion,
                format!("SaslAuthenticate v{version} is not supported"),
            );
            return self.close_now(e, true, now_ms);
        }
        if version > 0 {
            self.reauth_capable = true;
        }
        let message = match decode_body::<SaslAuthenticateRequest>(version, body) {
            Ok(r) => r.auth_bytes,
            Err(e) => return self.close_now(e, true, now_ms),
        };
        let r = auth.step(&message, now_ms);
        let reply = Reply::Authenticate {
            correlation_id: h.correlation_id,
            version,
        };
        self.after_step(auth, Mode::Wrapped, reply, r, now_ms)
    }

    /// Kafka's answer to another request during the exchange: that API's error response
    /// with ILLEGAL_SASL_STATE where ksasl has the schema (the host builds it for other APIs
    /// from [`refused_request`](Self::refused_request)), then close; a request Kafka cannot
    /// read is not answered.
    fn unexpected_during_authentication(
        &mut self,
        h: &RequestHeader,
        body: Decoder<'_>,
        now_ms: i64,
    ) -> ServerAction {
        let e = unexpected("authenticate", h.api_key, "authentication")
            .with_detail("api_version", h.api_version.to_string())
            .with_detail("correlation_id", h.correlation_id.to_string());
        match refusal::during_exchange(h, body) {
            Refusal::Answer(frames) => self.fail(frames, e, now_ms),
            Refusal::Unreadable(why) => {
                let e = e.with_detail("unreadable", why.message().to_string());
                self.close_now(e, true, now_ms)
            }
            Refusal::HostAnswers => {
                self.refused = Some(Box::new(RefusedRequest {
                    api_key: h.api_key,
                    api_version: h.api_version,
                    correlation_id: h.correlation_id,
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    error_message: e.message().to_string(),
                }));
                self.fail(Vec::new(), e, now_ms)
            }
        }
    }

    /// The request that interrupted the exchange when ksasl does not have its API's schema:
    /// after the `FailAt` it caused, the host writes that API's error response (with
    /// `error_code`, ILLEGAL_SASL_STATE) at the deadline, as Kafka does, or closes without
    /// answering if it cannot read the request either. `None` otherwise.
    pub fn refused_request(&self) -> Option<&RefusedRequest> {
        self.refused.as_deref()
    }

    /// Answers a [`ServerAction::NeedCredential`]. Without a pending request nothing changes
    /// and the output says to close (`WRONG_STATE`).
    pub fn provide_credential(&mut self, answer: CredentialAnswer, now_ms: i64) -> ServerAction {
        self.continue_exchange(
            ExchangeState::WaitingForCredential,
            "no credential was requested",
            now_ms,
            |auth| auth.provide_credential(answer, now_ms),
        )
    }

    /// Continues after [`ServerAction::Pending`] with what the host-defined mechanism's work
    /// produced: its step, or the error the host code raised (which fails the exchange like
    /// any mechanism error, with Kafka's response to the client).
    pub fn resume(&mut self, result: Result<MechServerStep>, now_ms: i64) -> ServerAction {
        self.continue_exchange(
            ExchangeState::WaitingForHost,
            "no SASL mechanism work is pending",
            now_ms,
            |auth| auth.resume(result, now_ms),
        )
    }

    /// Continues an exchange stopped for the host. Called in any other state, it changes
    /// nothing and asks for the connection to be closed.
    fn continue_exchange(
        &mut self,
        expected: ExchangeState,
        misuse: &str,
        now_ms: i64,
        go: impl FnOnce(&mut ServerExchange) -> Result<ServerStep>,
    ) -> ServerAction {
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Exchange {
                mut auth,
                mode,
                waiting: Some(reply),
            } if auth.state() == expected => {
                let r = go(&mut auth);
                self.after_step(auth, mode, reply, r, now_ms)
            }
            other => self.refuse(other, ErrorCode::WrongState, misuse),
        }
    }

    fn after_step(
        &mut self,
        auth: Box<ServerExchange>,
        mode: Mode,
        reply: Reply,
        result: Result<ServerStep>,
        now_ms: i64,
    ) -> ServerAction {
        let (waiting, action) = match result {
            Ok(ServerStep::Challenge(c)) => {
                self.phase = Phase::Exchange {
                    auth,
                    mode,
                    waiting: None,
                };
                return self.out(
                    authenticate_response(reply, ok_response(c, 0)),
                    ServerAction::Continue,
                );
            }
            Ok(ServerStep::NeedCredential(req)) => (Some(reply), ServerAction::NeedCredential(req)),
            Ok(ServerStep::Pending(work)) => (Some(reply), ServerAction::Pending(work)),
            Ok(ServerStep::Done { message, .. }) => {
                return self.complete(auth, reply, message, now_ms)
            }
            Err(e) => {
                let e = e.for_client(auth.mechanism(), self.reauthenticating);
                let frames = failure_response(reply, e.client_text().unwrap_or_default());
                return self.failed(frames, e, now_ms);
            }
        };
        self.phase = Phase::Exchange {
            auth,
            mode,
            waiting,
        };
        self.out(Vec::new(), action)
    }

    /// A failure of the exchange: fatal, unless a re-authentication fails under the
    /// keep-session policy while the old session is still valid.
    fn failed(&mut self, frames: Vec<u8>, e: Error, now_ms: i64) -> ServerAction {
        if self.reauthenticating
            && matches!(
                self.config.failed_reauth_policy(),
                FailedReauthPolicy::RetryUntilExpiry { .. }
            )
            && now_ms <= self.expiry_ms
        {
            self.config.metrics().authentication_failed(true, now_ms);
            self.reauthenticating = false;
            self.phase = Phase::Ready;
            return self.out(frames, ServerAction::ReauthenticationFailed(e));
        }
        self.fail(frames, e, now_ms)
    }

    /// The refusal of a re-authentication as another principal, if it is one (KIP-368).
    fn principal_change(&self, session: &ServerSession) -> Option<Error> {
        let old = &self.session.as_ref()?.outcome.principal;
        let new = &session.outcome.principal;
        if !self.reauthenticating || old == new {
            return None;
        }
        let text = format!(
            "Cannot change principals during re-authentication from {}.{}: {}.{}",
            old.principal_type, old.name, new.principal_type, new.name
        );
        Some(Error::disclosed(ErrorCode::PrincipalChanged, text))
    }

    fn complete(
        &mut self,
        auth: Box<ServerExchange>,
        reply: Reply,
        message: Option<Vec<u8>>,
        now_ms: i64,
    ) -> ServerAction {
        let Some(session) = auth.session().cloned() else {
            let e = Error::new(
                ErrorCode::Internal,
                "an exchange completed without a session",
            );
            return self.close_now(e, true, now_ms);
        };
        if let Some(e) = self.principal_change(&session) {
            let frames = failure_response(reply, e.client_text().unwrap_or_default());
            return self.failed(frames, e, now_ms);
        }
        let frames = match reply {
            Reply::Authenticate { .. } => authenticate_response(
                reply,
                ok_response(message.unwrap_or_default(), session.lifetime_ms),
            ),
            Reply::Raw => message.map(|m| raw_frame(&m)).unwrap_or_default(),
        };
        self.expiry_ms = session.expiry_ms.unwrap_or(i64::MAX);
        self.session = Some(Box::new(session.clone()));
        self.phase = Phase::Ready;
        let metrics = self.config.metrics();
        if std::mem::take(&mut self.reauthenticating) {
            let started = self.reauth_started_ms.unwrap_or(now_ms);
            metrics.reauthentication_succeeded((now_ms - started).max(0), now_ms);
            self.out(frames, ServerAction::Reauthenticated(session))
        } else {
            metrics.authentication_succeeded(self.reauth_capable, now_ms);
            self.out(frames, ServerAction::Authenticated(session))
        }
    }
}
