//! The client side of a SASL connection: sends ApiVersions, SaslHandshake and the
//! mechanism's tokens (wrapped in SaslAuthenticate, or raw after SaslHandshake v0), learns the
//! session lifetime, and re-authenticates on schedule while application requests stay in
//! flight.
//!
//! Two kinds of host drive it. An event loop writes [`ClientConnection::poll_transmit`],
//! feeds every received frame to [`ClientConnection::handle_frame`] and calls
//! [`ClientConnection::handle_timeout`] at [`ClientConnection::next_deadline`]. A synchronous
//! client asks [`ClientConnection::reauth_pending`] in its run loop (or
//! [`ClientConnection::before_request`] before each request) and pumps the exchange.

use std::sync::Arc;

use super::codec::{decode_response, encode_request, Message};
pub use super::config::{ClientConfig, ClientConfigBuilder};
use super::messages::{
    error_code, raw_frame, response_correlation_id, ApiVersionsRequest, ApiVersionsResponse,
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
    SASL_AUTHENTICATE, SASL_HANDSHAKE,
};
use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::{nothing_pending, ClientExchange, ClientStep, HostWork};
pub use crate::session::ClientSession;
use crate::session::ONE_YEAR_MS;
use crate::wire::ClientEventKind;

/// The first correlation id of the range Kafka's client reserves for SASL requests.
pub const SASL_CORRELATION_ID_MIN: i32 = i32::MAX - 7;

/// Whether a correlation id is in the reserved SASL range; hosts must not use these ids for
/// their own requests.
pub fn is_sasl_correlation_id(id: i32) -> bool {
    id >= SASL_CORRELATION_ID_MIN
}

/// What a received frame meant.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientEvent {
    /// A SASL response was consumed; write [`ClientConnection::poll_transmit`] if any.
    Continue,
    /// The frame is a response to an application request: process it as it is (ksasl does not
    /// copy or keep it). Frames are reported in arrival order, also during a re-authentication.
    Application,
    /// Authenticated for the first time.
    Authenticated(ClientSession),
    /// Re-authenticated; held requests may be sent again.
    Reauthenticated(ClientSession),
    /// The re-authentication failed but the old session still holds; retry at `retry_at_ms`.
    ReauthenticationFailed {
        /// Why.
        error: Error,
        /// When the next attempt is due.
        retry_at_ms: Option<i64>,
    },
    /// Authentication failed: close the connection.
    Failed(Error),
    /// A host-defined mechanism answers later: finish the work and call
    /// [`ClientConnection::resume`] with the mechanism's step.
    Pending(HostWork),
}

impl ClientEvent {
    /// The event's kind, with its stable number.
    pub fn kind(&self) -> ClientEventKind {
        match self {
            ClientEvent::Continue => ClientEventKind::Continue,
            ClientEvent::Application => ClientEventKind::Application,
            ClientEvent::Authenticated(_) => ClientEventKind::Authenticated,
            ClientEvent::Reauthenticated(_) => ClientEventKind::Reauthenticated,
            ClientEvent::ReauthenticationFailed { .. } => ClientEventKind::ReauthFailed,
            ClientEvent::Failed(_) => ClientEventKind::Failed,
            ClientEvent::Pending(_) => ClientEventKind::Pending,
        }
    }
}

/// A request frame of a SASL message ksasl builds itself (bounded sizes: encoding succeeds).
fn request<M: Message>(m: &M, version: i16, corr: i32, client_id: Option<&str>) -> Vec<u8> {
    encode_request(m, version, corr, client_id).unwrap_or_default()
}

enum Await {
    ApiVersions {
        corr: i32,
        version: i16,
    },
    Handshake {
        corr: i32,
    },
    Message {
        corr: Option<i32>,
    },
    /// The mechanism's work is with the host; `after_start` tells whether it was the
    /// mechanism's first message.
    Host {
        after_start: bool,
    },
}

enum State {
    New,
    Waiting(Await, Option<Box<ClientExchange>>),
    Ready,
    Failed,
}

/// One client connection's SASL state.
pub struct ClientConnection {
    config: Arc<ClientConfig>,
    state: State,
    versions: Option<(i16, Option<i16>)>,
    next_corr: i32,
    outbox: Vec<u8>,
    session: Option<ClientSession>,
    started_ms: i64,
    lifetime_seen: i64,
    reauthenticating: bool,
    retries: u32,
    last_reauth_start_ms: Option<i64>,
}

/// Brokers allow a re-authentication to start only one second after the previous one started
/// (measured on their clock); the client keeps a margin.
const MIN_REAUTH_SPACING_MS: i64 = 1_100;

impl std::fmt::Debug for ClientConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConnection")
            .field("session", &self.session)
            .field("reauthenticating", &self.reauthenticating)
            .finish()
    }
}

impl ClientConnection {
    /// A connection that has not started.
    pub fn new(config: Arc<ClientConfig>) -> Self {
        ClientConnection {
            versions: config.known_versions(),
            config,
            state: State::New,
            next_corr: SASL_CORRELATION_ID_MIN,
            outbox: Vec::new(),
            session: None,
            started_ms: 0,
            lifetime_seen: 0,
            reauthenticating: false,
            retries: 0,
            last_reauth_start_ms: None,
        }
    }

    fn corr(&mut self) -> i32 {
        let c = self.next_corr;
        self.next_corr = if c == i32::MAX {
            SASL_CORRELATION_ID_MIN
        } else {
            c + 1
        };
        c
    }

    /// Starts the initial authentication.
    pub fn start(&mut self, now_ms: i64) -> Result<()> {
        if !matches!(self.state, State::New) {
            return Err(Error::new(
                ErrorCode::WrongState,
                "the connection has already started",
            ));
        }
        self.started_ms = now_ms;
        match self.versions {
            Some(_) => self.send_handshake(),
            None => self.send_api_versions(self.config.api_versions_version()),
        }
        Ok(())
    }

    fn send_api_versions(&mut self, version: i16) {
        let (name, ver) = self.config.software();
        let body = ApiVersionsRequest {
            software: (version >= 3).then(|| (name.to_string(), ver.to_string())),
            ..ApiVersionsRequest::default()
        };
        let corr = self.corr();
        let frame = request(&body, version, corr, self.config.client_id());
        self.outbox.extend(frame);
        self.state = State::Waiting(Await::ApiVersions { corr, version }, None);
    }

    fn send_handshake(&mut self) {
        let (hv, _) = self.versions.unwrap_or((1, Some(1)));
        let corr = self.corr();
        let body = SaslHandshakeRequest {
            mechanism: self.config.mechanism().to_string(),
        };
        let frame = request(&body, hv, corr, self.config.client_id());
        self.outbox.extend(frame);
        self.state = State::Waiting(Await::Handshake { corr }, None);
    }

    /// Frames to write (each with its length prefix, concatenated), if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.outbox.is_empty()).then(|| std::mem::take(&mut self.outbox))
    }

    /// The work of a host mechanism whose answer is pending (after [`ClientEvent::Pending`],
    /// until [`ClientConnection::resume`] or a failure).
    pub fn pending_work(&self) -> Option<&HostWork> {
        match &self.state {
            State::Waiting(Await::Host { .. }, Some(auth)) => auth.pending_work(),
            _ => None,
        }
    }

    /// The session, once authenticated.
    pub fn session(&self) -> Option<&ClientSession> {
        self.session.as_ref()
    }

    /// Whether the connection is authenticated and not re-authenticating: requests may be
    /// sent. While it is, [`ClientConnection::handle_frame`] answers
    /// [`ClientEvent::Application`] for every frame without reading it, so a binding may skip
    /// handing the frame's bytes over (the JNI binding does, for large Fetch responses).
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready)
    }

    /// Whether a re-authentication is in progress (new requests must be held).
    pub fn is_reauthenticating(&self) -> bool {
        self.reauthenticating
    }

    /// The instant at which the host must call [`ClientConnection::handle_timeout`]: the
    /// re-authentication time (or retry time) of a ready connection.
    pub fn next_deadline(&self) -> Option<i64> {
        match self.state {
            State::Ready => self.session.and_then(|s| s.reauth_at_ms),
            _ => None,
        }
    }

    /// For synchronous hosts: is a re-authentication due at `now_ms`?
    pub fn reauth_pending(&self, now_ms: i64) -> bool {
        self.next_deadline().is_some_and(|t| now_ms >= t)
    }

    /// Starts a re-authentication if one is due; returns whether it started.
    pub fn handle_timeout(&mut self, now_ms: i64) -> Result<bool> {
        if self.reauth_pending(now_ms) {
            return self.start_reauthentication(now_ms);
        }
        Ok(false)
    }

    /// Call before sending an application request: `true` means send it now; `false` means
    /// hold it until [`ClientEvent::Reauthenticated`] (a due re-authentication is started
    /// here, as Kafka's client does when it has a request to write).
    pub fn before_request(&mut self, now_ms: i64) -> Result<bool> {
        match self.state {
            State::Ready if self.reauth_pending(now_ms) => {
                Ok(!self.start_reauthentication(now_ms)?)
            }
            State::Ready => Ok(true),
            State::Failed => Err(Error::new(
                ErrorCode::StepAfterFailure,
                "the connection has failed",
            )),
            _ => Ok(false),
        }
    }

    /// Starts a re-authentication now (the session must be ready). The ApiVersions of the
    /// original authentication are reused. A broker refuses a re-authentication that starts
    /// less than one second after the previous one, so one asked for sooner (say, by a
    /// tracker right after a scheduled re-authentication) is deferred to 1.1 s after the
    /// previous start and `Ok(false)` is returned; it then comes due through
    /// [`ClientConnection::next_deadline`].
    pub fn start_reauthentication(&mut self, now_ms: i64) -> Result<bool> {
        if !matches!(self.state, State::Ready) {
            return Err(Error::new(
                ErrorCode::WrongState,
                "re-authentication needs an authenticated, idle SASL state",
            ));
        }
        if self.versions.is_some_and(|(_, a)| a.is_none()) {
            return Err(Error::new(
                ErrorCode::WrongState,
                "legacy (SaslHandshake v0) connections cannot re-authenticate",
            ));
        }
        if let Some(last) = self.last_reauth_start_ms {
            let earliest = last.saturating_add(MIN_REAUTH_SPACING_MS);
            if now_ms < earliest {
                if let Some(s) = self.session.as_mut() {
                    s.reauth_at_ms = Some(earliest);
                }
                return Ok(false);
            }
        }
        self.last_reauth_start_ms = Some(now_ms);
        self.reauthenticating = true;
        self.started_ms = now_ms;
        self.lifetime_seen = 0;
        self.send_handshake();
        Ok(true)
    }

    /// The peer closed the connection: returns the error to report (and fails the state).
    pub fn connection_closed(&mut self, now_ms: i64) -> Error {
        let in_exchange = matches!(self.state, State::Waiting(..));
        let e = Error::new(
            ErrorCode::ConnectionClosed,
            "the broker closed the connection during SASL authentication",
        );
        if in_exchange {
            self.config
                .metrics()
                .authentication_failed(self.reauthenticating, now_ms);
        }
        self.state = State::Failed;
        e
    }

    fn fail(&mut self, e: Error, now_ms: i64) -> ClientEvent {
        self.config
            .metrics()
            .authentication_failed(self.reauthenticating, now_ms);
        if self.reauthenticating {
            if let (Some(delay), Some(s)) = (
                self.config
                    .failed_reauth_policy()
                    .retry_delay_ms(self.retries),
                self.session,
            ) {
                if s.expiry_ms.map_or(true, |x| now_ms < x) {
                    self.retries += 1;
                    let retry = now_ms.saturating_add(delay);
                    let retry_at_ms = match s.expiry_ms {
                        Some(x) if retry >= x => None,
                        _ => Some(retry),
                    };
                    self.session = Some(ClientSession {
                        reauth_at_ms: retry_at_ms,
                        ..s
                    });
                    self.reauthenticating = false;
                    self.state = State::Ready;
                    return ClientEvent::ReauthenticationFailed {
                        error: e,
                        retry_at_ms,
                    };
                }
            }
        }
        self.state = State::Failed;
        self.reauthenticating = false;
        ClientEvent::Failed(e)
    }

    /// Handles one received frame (its body, without the length prefix).
    pub fn handle_frame(&mut self, frame: &[u8], now_ms: i64) -> ClientEvent {
        let (waiting, auth) = match std::mem::replace(&mut self.state, State::Failed) {
            State::Waiting(w, a) => (w, a),
            other => return self.outside_exchange(other),
        };
        match self.route(&waiting, frame) {
            Ok(true) => {}
            Ok(false) => {
                // A response to a request sent before the re-authentication began.
                self.state = State::Waiting(waiting, auth);
                return ClientEvent::Application;
            }
            Err(e) => return self.fail(e, now_ms),
        }
        if frame.len() > self.config.max_receive_size() {
            let e = Error::new(
                ErrorCode::MessageTooLarge,
                "SASL response larger than the maximum",
            );
            return self.fail(e, now_ms);
        }
        let r = match (waiting, auth) {
            (Await::ApiVersions { version, .. }, _) => self.on_api_versions(frame, version),
            (Await::Handshake { .. }, _) => self.on_handshake(frame, now_ms),
            (Await::Message { corr }, Some(a)) => self.on_message(a, corr.is_some(), frame, now_ms),
            // `route` refuses frames while the host works; a message always has its exchange.
            _ => Err(Error::new(ErrorCode::Internal, "no frame is awaited")),
        };
        r.unwrap_or_else(|e| self.fail(e, now_ms))
    }

    /// A frame outside an exchange: an application response when ready, a misuse otherwise.
    fn outside_exchange(&mut self, state: State) -> ClientEvent {
        let e = match state {
            State::Ready => {
                self.state = State::Ready;
                return ClientEvent::Application;
            }
            State::New => {
                self.state = State::New;
                Error::new(ErrorCode::WrongState, "start() has not been called")
            }
            _ => Error::new(ErrorCode::StepAfterFailure, "the connection has failed"),
        };
        ClientEvent::Failed(e)
    }

    /// Whether a frame received during an exchange is the awaited SASL response (`true`), a
    /// response to an application request sent before a re-authentication (`false`), or a
    /// protocol violation.
    fn route(&self, waiting: &Await, frame: &[u8]) -> Result<bool> {
        let got = response_correlation_id(frame);
        let earlier = |c: i32| self.reauthenticating && !is_sasl_correlation_id(c);
        let expected = match waiting {
            Await::ApiVersions { corr, .. }
            | Await::Handshake { corr }
            | Await::Message { corr: Some(corr) } => *corr,
            // Legacy framing has no correlation ids.
            Await::Message { corr: None } => return Ok(true),
            // The server has nothing to say while the client's mechanism is working, except
            // answers to requests sent before a re-authentication began.
            Await::Host { .. } => {
                return match got {
                    Some(c) if earlier(c) => Ok(false),
                    _ => Err(Error::new(
                        ErrorCode::CorrelationMismatch,
                        "the broker sent a response while the client's SASL mechanism was still working",
                    )),
                }
            }
        };
        match got {
            Some(c) if c == expected => Ok(true),
            Some(c) if earlier(c) => Ok(false),
            _ => Err(Error::new(
                ErrorCode::CorrelationMismatch,
                "Invalid SASL mechanism response, server may be expecting a different protocol",
            )),
        }
    }

    fn on_api_versions(&mut self, frame: &[u8], version: i16) -> Result<ClientEvent> {
        // KIP-511: a broker that does not know the version answers error 35 as v0; the
        // client falls back to v0. The error code is the first field after the header.
        let code = frame.get(4..6).map(|c| i16::from_be_bytes([c[0], c[1]]));
        if code == Some(error_code::UNSUPPORTED_VERSION) && version > 0 {
            self.send_api_versions(0);
            return Ok(ClientEvent::Continue);
        }
        let (_, r) = decode_response::<ApiVersionsResponse>(version, frame)?;
        if r.error_code != error_code::NONE {
            return Err(kafka_error(r.error_code, "ApiVersions failed"));
        }
        let hv = r.max_version(SASL_HANDSHAKE).map_or(0, |m| m.clamp(0, 1));
        let av = r.max_version(SASL_AUTHENTICATE).map(|m| m.clamp(0, 2));
        self.versions = Some((hv, if hv == 0 { None } else { av }));
        self.send_handshake();
        Ok(ClientEvent::Continue)
    }

    fn on_handshake(&mut self, frame: &[u8], now_ms: i64) -> Result<ClientEvent> {
        let version = self.versions.map_or(1, |(h, _)| h);
        let (_, r) = decode_response::<SaslHandshakeResponse>(version, frame)?;
        let mech = self.config.mechanism();
        match r.error_code {
            error_code::NONE => {}
            error_code::UNSUPPORTED_SASL_MECHANISM => {
                return Err(Error::new(
                    ErrorCode::UnsupportedSaslMechanism,
                    format!("Client SASL mechanism '{mech}' not enabled in the server, enabled mechanisms are [{}]", quote(r.mechanisms.join(", ").as_bytes())),
                )
                .with_detail("enabled", quote(r.mechanisms.join(",").as_bytes())))
            }
            error_code::ILLEGAL_SASL_STATE => {
                return Err(Error::new(
                    ErrorCode::IllegalSaslState,
                    format!("Unexpected handshake request with client mechanism {mech}, enabled mechanisms are [{}]", quote(r.mechanisms.join(", ").as_bytes())),
                ))
            }
            c => return Err(kafka_error(c, "SaslHandshake failed")),
        }
        let mut auth = self.config.registry().client(mech)?;
        auth.set_max_receive_size(self.config.max_receive_size());
        let step = auth.start(now_ms)?;
        self.send_message(Box::new(auth), step, true)
    }

    /// Continues after [`ClientEvent::Pending`] with what the host-defined mechanism's work
    /// produced: its step, or the error the host code raised (which fails the
    /// authentication like any mechanism error). Called at another time, it changes nothing
    /// and returns a `WRONG_STATE` failure.
    pub fn resume(&mut self, result: Result<ClientStep>, now_ms: i64) -> ClientEvent {
        let (after_start, mut auth) = match std::mem::replace(&mut self.state, State::Failed) {
            State::Waiting(Await::Host { after_start }, Some(auth)) => (after_start, auth),
            other => {
                self.state = other;
                return ClientEvent::Failed(nothing_pending());
            }
        };
        let r = match auth.resume(result) {
            Ok(ClientStep::Done(None)) if !after_start => self.complete(now_ms),
            Ok(ClientStep::Pending(work)) => {
                self.state = State::Waiting(Await::Host { after_start }, Some(auth));
                Ok(ClientEvent::Pending(work))
            }
            Ok(step) => self.send_message(auth, step, after_start),
            Err(e) => Err(e),
        };
        match r {
            Ok(ev) => ev,
            Err(e) => self.fail(e, now_ms),
        }
    }

    fn send_message(
        &mut self,
        auth: Box<ClientExchange>,
        step: ClientStep,
        first: bool,
    ) -> Result<ClientEvent> {
        let bytes = match step {
            ClientStep::Send(b) | ClientStep::Done(Some(b)) => b,
            // Done without a message right after start cannot happen with Kafka mechanisms;
            // an empty token still asks the server for its verdict.
            ClientStep::Done(None) => Vec::new(),
            ClientStep::Pending(work) => {
                self.state = State::Waiting(Await::Host { after_start: first }, Some(auth));
                return Ok(ClientEvent::Pending(work));
            }
        };
        let auth_version = self.versions.and_then(|(_, a)| a);
        let corr = match auth_version {
            Some(v) => {
                let corr = self.corr();
                let body = SaslAuthenticateRequest { auth_bytes: bytes };
                let frame = request(&body, v, corr, self.config.client_id());
                self.outbox.extend(frame);
                Some(corr)
            }
            None => {
                self.outbox.extend(raw_frame(&bytes));
                None
            }
        };
        self.state = State::Waiting(Await::Message { corr }, Some(auth));
        Ok(ClientEvent::Continue)
    }

    fn on_message(
        &mut self,
        mut auth: Box<ClientExchange>,
        wrapped: bool,
        frame: &[u8],
        now_ms: i64,
    ) -> Result<ClientEvent> {
        let challenge = if wrapped {
            let v = self.versions.and_then(|(_, a)| a).unwrap_or(1);
            let (_, r) = decode_response::<SaslAuthenticateResponse>(v, frame)?;
            if r.error_code != error_code::NONE {
                return Err(match r.error_code {
                    error_code::SASL_AUTHENTICATION_FAILED => {
                        auth.server_failed(r.error_message.as_deref())
                    }
                    error_code::ILLEGAL_SASL_STATE => Error::new(
                        ErrorCode::IllegalSaslState,
                        r.error_message.unwrap_or_default(),
                    ),
                    c => kafka_error(
                        c,
                        r.error_message
                            .as_deref()
                            .unwrap_or("SaslAuthenticate failed"),
                    ),
                });
            }
            if r.session_lifetime_ms > 0 {
                self.lifetime_seen = r.session_lifetime_ms;
            }
            r.auth_bytes
        } else {
            frame.to_vec()
        };
        if !auth.is_complete() {
            match auth.step(&challenge, now_ms)? {
                ClientStep::Done(None) => {}
                // Raw framing has no final response: a mechanism that completes by sending
                // (GSSAPI's security-layer choice) is done once that message is out, as
                // Kafka's client decides in legacy mode.
                step @ ClientStep::Done(Some(_)) if !wrapped => {
                    self.send_message(auth, step, false)?;
                }
                step => return self.send_message(auth, step, false),
            }
        }
        self.complete(now_ms)
    }

    fn complete(&mut self, now_ms: i64) -> Result<ClientEvent> {
        let lifetime = self.lifetime_seen.min(ONE_YEAR_MS);
        let latency = (now_ms - self.started_ms).max(0);
        let delay = self.config.reauth_policy().delay_ms(
            lifetime,
            latency,
            self.config.random().0.as_ref(),
        )?;
        let session = ClientSession {
            lifetime_ms: lifetime,
            reauth_at_ms: delay.map(|d| now_ms.saturating_add(d)),
            expiry_ms: (lifetime > 0).then(|| now_ms.saturating_add(lifetime)),
            latency_ms: latency,
        };
        self.session = Some(session);
        self.state = State::Ready;
        self.retries = 0;
        if self.reauthenticating {
            self.reauthenticating = false;
            self.config
                .metrics()
                .reauthentication_succeeded(latency, now_ms);
            Ok(ClientEvent::Reauthenticated(session))
        } else {
            self.config
                .metrics()
                .authentication_succeeded(lifetime > 0, now_ms);
            Ok(ClientEvent::Authenticated(session))
        }
    }
}

fn kafka_error(code: i16, what: &str) -> Error {
    let e = match code {
        error_code::UNSUPPORTED_VERSION => Error::new(
            ErrorCode::UnsupportedVersion,
            format!("{what}: UNSUPPORTED_VERSION"),
        ),
        error_code::INVALID_REQUEST => Error::new(
            ErrorCode::InvalidRequest,
            format!("{what}: INVALID_REQUEST"),
        ),
        c => Error::new(
            ErrorCode::KafkaError,
            format!("{what}: Unknown error code {c}"),
        ),
    };
    e.with_detail("kafka_error_code", code.to_string())
}
