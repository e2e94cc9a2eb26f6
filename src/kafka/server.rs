//! The broker side of a SASL connection: answers ApiVersions, SaslHandshake and
//! SaslAuthenticate (or legacy raw tokens) byte for byte as Kafka does, computes and enforces
//! the KIP-368 session, and runs re-authentications.
//!
//! The host reads frames (see [`FrameDecoder`](super::messages::FrameDecoder)), hands each
//! one to [`ServerConnection::handle_frame`] until the connection is authenticated, writes
//! what it gets back, and then asks [`ServerConnection::gate`] about every request.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::codec::Reader;
use super::messages::{
    error_code, parse_api_versions_request_body, parse_request,
    parse_sasl_authenticate_request_body, raw_frame, ApiVersionRange, ApiVersionsResponse,
    RequestPrefix, SaslAuthenticateResponse, SaslHandshakeResponse, API_VERSIONS,
    SASL_AUTHENTICATE, SASL_HANDSHAKE,
};
use crate::credential::CredentialAnswer;
use crate::error::{Error, ErrorCode};
use crate::mech::{
    AuthOutcome, ExchangeState, MechServerStep, MechanismRegistry, ServerAuthenticator, ServerStep,
    DEFAULT_MAX_MESSAGE_SIZE,
};
use crate::session::{session_lifetime, FailedReauthPolicy, Gate, SaslMetrics};

/// Kafka's default `connection.failed.authentication.delay.ms`.
pub const DEFAULT_FAILED_AUTHENTICATION_DELAY_MS: i64 = 100;

/// The highest versions a SASL server speaks.
pub const MAX_API_VERSIONS_VERSION: i16 = 5;
/// SaslHandshake must never be advertised above v1 (KAFKA-9577).
pub const MAX_SASL_HANDSHAKE_VERSION: i16 = 1;
/// SaslAuthenticate v0-2.
pub const MAX_SASL_AUTHENTICATE_VERSION: i16 = 2;

/// Configuration shared by the connections of one listener.
pub struct ServerConfig {
    /// The server mechanisms, with their credential lookup.
    pub registry: MechanismRegistry,
    /// `sasl.enabled.mechanisms`, in the order the handshake response lists them.
    pub enabled_mechanisms: Vec<String>,
    /// `connections.max.reauth.ms` (0 or less: not set).
    pub max_reauth_ms: i64,
    /// Per-mechanism `listener.name.<l>.<mech>.connections.max.reauth.ms`.
    pub max_reauth_ms_by_mechanism: BTreeMap<String, i64>,
    /// `sasl.server.max.receive.size` (512 KiB): the largest SASL token accepted.
    pub max_receive_size: usize,
    /// `connection.failed.authentication.delay.ms` (100).
    pub failed_authentication_delay_ms: i64,
    /// What a failed re-authentication does (Kafka: close).
    pub failed_reauth_policy: FailedReauthPolicy,
    /// The API versions advertised in ApiVersions responses. The SASL entries are always
    /// present; a broker adds the rest of its APIs.
    pub api_versions: Vec<ApiVersionRange>,
    /// Metrics of every connection of this configuration.
    pub metrics: Arc<SaslMetrics>,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("enabled_mechanisms", &self.enabled_mechanisms)
            .field("max_reauth_ms", &self.max_reauth_ms)
            .field("failed_reauth_policy", &self.failed_reauth_policy)
            .finish()
    }
}

impl ServerConfig {
    /// Kafka's defaults, enabling every server mechanism of `registry`.
    pub fn new(registry: MechanismRegistry) -> Self {
        ServerConfig {
            enabled_mechanisms: registry.server_mechanisms(),
            registry,
            max_reauth_ms: 0,
            max_reauth_ms_by_mechanism: BTreeMap::new(),
            max_receive_size: DEFAULT_MAX_MESSAGE_SIZE,
            failed_authentication_delay_ms: DEFAULT_FAILED_AUTHENTICATION_DELAY_MS,
            failed_reauth_policy: FailedReauthPolicy::Close,
            api_versions: vec![
                ApiVersionRange {
                    api_key: SASL_HANDSHAKE,
                    min_version: 0,
                    max_version: MAX_SASL_HANDSHAKE_VERSION,
                },
                ApiVersionRange {
                    api_key: API_VERSIONS,
                    min_version: 0,
                    max_version: MAX_API_VERSIONS_VERSION,
                },
                ApiVersionRange {
                    api_key: SASL_AUTHENTICATE,
                    min_version: 0,
                    max_version: MAX_SASL_AUTHENTICATE_VERSION,
                },
            ],
            metrics: Arc::new(SaslMetrics::new()),
        }
    }

    /// Adds (or replaces) an API in the ApiVersions answer. The version range must be valid,
    /// and the APIs ksasl answers itself (SaslHandshake, ApiVersions, SaslAuthenticate) cannot
    /// be advertised beyond the versions ksasl speaks.
    pub fn set_api_version(
        &mut self,
        api_key: i16,
        min_version: i16,
        max_version: i16,
    ) -> crate::Result<()> {
        if api_key < 0 || min_version < 0 || max_version < min_version {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("API {api_key}: the version range {min_version}..{max_version} is invalid"),
            ));
        }
        let own = match api_key {
            SASL_HANDSHAKE => Some(MAX_SASL_HANDSHAKE_VERSION),
            API_VERSIONS => Some(MAX_API_VERSIONS_VERSION),
            SASL_AUTHENTICATE => Some(MAX_SASL_AUTHENTICATE_VERSION),
            _ => None,
        };
        if let Some(max) = own {
            if max_version > max {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("API {api_key} is answered by ksasl, which speaks versions 0..{max}"),
                ));
            }
        }
        self.api_versions.retain(|a| a.api_key != api_key);
        self.api_versions.push(ApiVersionRange {
            api_key,
            min_version,
            max_version,
        });
        Ok(())
    }

    /// The answer to an ApiVersions request `frame` (without its length prefix), framed, as
    /// the driver answers it before authentication: this listener's APIs, the KIP-511
    /// fallback (v0, error 35) for a version ksasl does not speak, or INVALID_REQUEST for bad
    /// client software fields. The flag tells whether the answer was a success. Hosts use it
    /// for ApiVersions requests after authentication, which Kafka's clients send.
    pub fn api_versions_response(&self, frame: &[u8]) -> crate::Result<(Vec<u8>, bool)> {
        let prefix = RequestPrefix::parse(frame)?;
        if prefix.api_key != API_VERSIONS {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("API {} is not ApiVersions", prefix.api_key),
            ));
        }
        let v = prefix.api_version;
        if !(0..=MAX_API_VERSIONS_VERSION).contains(&v) {
            let r = ApiVersionsResponse {
                error_code: error_code::UNSUPPORTED_VERSION,
                api_keys: vec![ApiVersionRange {
                    api_key: API_VERSIONS,
                    min_version: 0,
                    max_version: MAX_API_VERSIONS_VERSION,
                }],
                throttle_time_ms: 0,
            };
            return Ok((r.encode(0, prefix.correlation_id), false));
        }
        let body = parse_request(frame).and_then(|r| parse_api_versions_request_body(v, r.body));
        // Kafka's ApiVersionsRequest.isValid: v5's cluster and node given together or not at
        // all, v3+'s software fields well formed.
        let invalid = match &body {
            Err(_) => true,
            Ok(b) => {
                !b.target_is_consistent()
                    || b.software.as_ref().is_some_and(|(name, ver)| {
                        !valid_software_field(name) || !valid_software_field(ver)
                    })
            }
        };
        if invalid {
            let r = ApiVersionsResponse {
                error_code: error_code::INVALID_REQUEST,
                api_keys: vec![],
                throttle_time_ms: 0,
            };
            return Ok((r.encode(v, prefix.correlation_id), false));
        }
        let r = ApiVersionsResponse {
            error_code: error_code::NONE,
            api_keys: self.api_versions.clone(),
            throttle_time_ms: 0,
        };
        Ok((r.encode(v, prefix.correlation_id), true))
    }

    fn max_reauth_for(&self, mechanism: &str) -> i64 {
        self.max_reauth_ms_by_mechanism
            .get(mechanism)
            .copied()
            .unwrap_or(self.max_reauth_ms)
    }
}

/// The session of an authenticated connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// Who authenticated, with which mechanism, and the credential's expiry.
    pub outcome: AuthOutcome,
    /// The lifetime sent to the client (0: none).
    pub lifetime_ms: i64,
    /// When the server stops accepting the connection's requests, if ever.
    pub expiry_ms: Option<i64>,
}

/// What the host does after handing the driver a frame.
#[derive(Debug)]
pub enum ServerStatus {
    /// Write the output and keep reading authentication frames.
    Continue,
    /// Look up a credential and answer with [`ServerConnection::provide_credential`].
    NeedCredential(crate::mech::CredentialRequest),
    /// A host-defined mechanism answers later: finish the work and call
    /// [`ServerConnection::resume`] with the mechanism's step.
    Pending(crate::mech::HostWork),
    /// Write the output; the connection is authenticated (first time).
    Authenticated(SessionInfo),
    /// Write the output; the connection re-authenticated.
    Reauthenticated(SessionInfo),
    /// Write the output; the re-authentication failed but the connection keeps its old
    /// session ([`FailedReauthPolicy::RetryUntilExpiry`]).
    ReauthenticationFailed(Error),
    /// Authentication failed: at `deadline_ms` write the output (Kafka's error response, if
    /// any) and close (KIP-306's `connection.failed.authentication.delay.ms`).
    FailAt {
        /// When to write and close.
        deadline_ms: i64,
        /// Why.
        error: Error,
    },
    /// Close now without writing anything.
    CloseNow(Error),
}

/// What the driver produced for one frame.
#[derive(Debug)]
pub struct ServerOutput {
    /// Frames to write, each with its length prefix, concatenated.
    pub frames: Vec<u8>,
    /// What to do next.
    pub status: ServerStatus,
}

enum Mode {
    /// SaslAuthenticate requests (SaslHandshake v1).
    Wrapped,
    /// Raw length-prefixed tokens (SaslHandshake v0).
    Legacy,
}

enum Phase {
    /// Before anything: ApiVersions or SaslHandshake may come.
    VersionsOrHandshake,
    /// After ApiVersions: SaslHandshake must come.
    Handshake,
    /// The mechanism exchange.
    Exchange {
        auth: Box<ServerAuthenticator>,
        mode: Mode,
        pending: Option<(i32, i16)>,
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
    session: Option<Box<SessionInfo>>,
    expiry_ms: i64,
    reauth_started_ms: Option<i64>,
    reauth_capable: bool,
    reauthenticating: bool,
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

/// Software names and versions in ApiVersions v3+: alphanumeric, then alphanumerics, `-` and
/// `.`, ending alphanumeric.
fn valid_software_field(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'.')
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
        }
    }

    /// The current session, once authenticated.
    pub fn session(&self) -> Option<&SessionInfo> {
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
        if api_key == SASL_HANDSHAKE && self.may_begin_reauthentication(now_ms) {
            return Gate::BeginReauthentication;
        }
        if now_ms > self.expiry_ms {
            self.config.metrics.connection_expired();
            return Gate::CloseExpired;
        }
        Gate::Process
    }

    #[inline]
    fn may_begin_reauthentication(&self, now_ms: i64) -> bool {
        matches!(self.phase, Phase::Ready)
            && self.expiry_ms != i64::MAX
            && self
                .reauth_started_ms
                .map_or(true, |t| now_ms.saturating_sub(t) >= 1000)
    }

    /// Kafka's answer to a SaslHandshake or SaslAuthenticate that reaches the request
    /// handlers of an authenticated connection (not eligible for re-authentication):
    /// ILLEGAL_SASL_STATE. `None` for other APIs.
    pub fn illegal_state_response(frame: &[u8]) -> Option<Vec<u8>> {
        let req = parse_request(frame).ok()?;
        let p = req.prefix;
        match p.api_key {
            SASL_HANDSHAKE => Some(
                SaslHandshakeResponse {
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    mechanisms: vec![],
                }
                .encode(p.correlation_id),
            ),
            SASL_AUTHENTICATE if p.api_version <= MAX_SASL_AUTHENTICATE_VERSION => Some(
                SaslAuthenticateResponse {
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    error_message: Some(
                        "SaslAuthenticate request received after successful authentication".into(),
                    ),
                    auth_bytes: vec![],
                    session_lifetime_ms: 0,
                }
                .encode(p.api_version, p.correlation_id),
            ),
            _ => None,
        }
    }

    /// The next instant the host must act at: the session expiry (Kafka closes lazily, on
    /// the next request; a host may also close idle expired connections then).
    pub fn next_deadline(&self) -> Option<i64> {
        self.session_expiry_ms()
    }

    fn out(frames: Vec<u8>, status: ServerStatus) -> ServerOutput {
        ServerOutput { frames, status }
    }

    fn fail(&mut self, frames: Vec<u8>, error: Error, now_ms: i64) -> ServerOutput {
        self.config
            .metrics
            .authentication_failed(self.reauthenticating, now_ms);
        self.phase = Phase::Done;
        let deadline_ms = now_ms.saturating_add(self.config.failed_authentication_delay_ms.max(0));
        Self::out(frames, ServerStatus::FailAt { deadline_ms, error })
    }

    fn close_now(&mut self, error: Error, count_failure: bool, now_ms: i64) -> ServerOutput {
        if count_failure {
            self.config
                .metrics
                .authentication_failed(self.reauthenticating, now_ms);
        }
        self.phase = Phase::Done;
        Self::out(Vec::new(), ServerStatus::CloseNow(error))
    }

    /// Handles one frame received during (re-)authentication.
    pub fn handle_frame(&mut self, frame: &[u8], now_ms: i64) -> ServerOutput {
        if frame.len() > self.config.max_receive_size {
            let e = Error::new(
                ErrorCode::MessageTooLarge,
                "Failing SASL authentication due to invalid receive size",
            );
            return self.fail(Vec::new(), e, now_ms);
        }
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::VersionsOrHandshake => self.versions_or_handshake(frame, now_ms, true),
            Phase::Handshake => self.versions_or_handshake(frame, now_ms, false),
            Phase::Exchange {
                auth,
                mode: Mode::Legacy,
                ..
            } => self.legacy_token(auth, frame, now_ms),
            Phase::Exchange {
                auth,
                mode: Mode::Wrapped,
                pending: None,
            } => self.authenticate_request(auth, frame, now_ms),
            Phase::Exchange {
                auth,
                mode,
                pending: Some(p),
            } => {
                self.phase = Phase::Exchange {
                    auth,
                    mode,
                    pending: Some(p),
                };
                Self::out(
                    Vec::new(),
                    ServerStatus::CloseNow(Error::new(
                        ErrorCode::WrongState,
                        "a credential or the mechanism's pending work is awaited",
                    )),
                )
            }
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
            Phase::Ready => {
                let prefix = match RequestPrefix::parse(frame) {
                    Ok(p) => p,
                    Err(e) => return self.close_now(e, false, now_ms),
                };
                if prefix.api_key == SASL_HANDSHAKE && {
                    self.phase = Phase::Ready;
                    self.may_begin_reauthentication(now_ms)
                } {
                    self.reauth_started_ms = Some(now_ms);
                    self.reauthenticating = true;
                    return self.handshake(frame, now_ms);
                }
                self.phase = Phase::Ready;
                let e = Error::new(
                    ErrorCode::WrongState,
                    "authenticated: pass requests through gate() to the request handlers",
                );
                Self::out(Vec::new(), ServerStatus::CloseNow(e))
            }
            Phase::Done => Self::out(
                Vec::new(),
                ServerStatus::CloseNow(Error::new(
                    ErrorCode::StepAfterFailure,
                    "the connection has failed",
                )),
            ),
        }
    }

    fn versions_or_handshake(&mut self, frame: &[u8], now_ms: i64, first: bool) -> ServerOutput {
        let prefix = match RequestPrefix::parse(frame) {
            Ok(p) => p,
            Err(_) => {
                // Kafka would try a pre-0.10 raw GSSAPI token here; without GSSAPI it fails.
                let e = Error::new(
                    ErrorCode::UnsupportedSaslMechanism,
                    "the first packet is not a Kafka request and GSSAPI is not enabled",
                );
                return self.fail(Vec::new(), e, now_ms);
            }
        };
        match prefix.api_key {
            API_VERSIONS if first => self.api_versions(frame, now_ms),
            API_VERSIONS => self.close_now(
                Error::new(
                    ErrorCode::IllegalSaslState,
                    "ApiVersions may only be the first request",
                ),
                true,
                now_ms,
            ),
            SASL_HANDSHAKE => self.handshake(frame, now_ms),
            k => self.fail(Vec::new(), unexpected("handshake", k, "handshake"), now_ms),
        }
    }

    fn api_versions(&mut self, frame: &[u8], now_ms: i64) -> ServerOutput {
        match self.config.api_versions_response(frame) {
            Ok((answer, ok)) => {
                // After a failed ApiVersions the client may try again (KIP-511).
                self.phase = if ok {
                    Phase::Handshake
                } else {
                    Phase::VersionsOrHandshake
                };
                Self::out(answer, ServerStatus::Continue)
            }
            Err(e) => self.close_now(e, true, now_ms),
        }
    }

    fn handshake(&mut self, frame: &[u8], now_ms: i64) -> ServerOutput {
        let req = match parse_request(frame) {
            Ok(r) => r,
            Err(e) => return self.close_now(e, true, now_ms),
        };
        let p = req.prefix;
        if !(0..=MAX_SASL_HANDSHAKE_VERSION).contains(&p.api_version) {
            let e = Error::new(
                ErrorCode::UnsupportedVersion,
                format!("SaslHandshake v{} is not supported", p.api_version),
            );
            return self.close_now(e, true, now_ms);
        }
        let mut body: Reader<'_> = req.body;
        let mechanism = match body
            .string()
            .and_then(|m| body.finish("SaslHandshake request").map(|_| m))
        {
            Ok(m) => m,
            Err(e) => return self.close_now(e, true, now_ms),
        };
        let enabled = self.config.enabled_mechanisms.clone();
        let ok = SaslHandshakeResponse {
            error_code: error_code::NONE,
            mechanisms: enabled.clone(),
        };
        if !enabled.contains(&mechanism) {
            let r = SaslHandshakeResponse {
                error_code: error_code::UNSUPPORTED_SASL_MECHANISM,
                mechanisms: enabled.clone(),
            };
            let e = Error::new(
                ErrorCode::UnsupportedSaslMechanism,
                format!("Unsupported SASL mechanism {mechanism}"),
            )
            .with_detail("enabled", enabled.join(","));
            return self.fail(r.encode(p.correlation_id), e, now_ms);
        }
        if self.reauthenticating {
            let original = self
                .session
                .as_ref()
                .map(|s| s.outcome.mechanism.as_str())
                .unwrap_or("");
            if original != mechanism {
                self.phase = Phase::BadMechanism {
                    requested: mechanism,
                };
                return Self::out(ok.encode(p.correlation_id), ServerStatus::Continue);
            }
        }
        let mut auth = match self.config.registry.server(&mechanism) {
            Ok(a) => a,
            Err(e) => return self.fail(Vec::new(), e, now_ms),
        };
        auth.set_max_message_size(self.config.max_receive_size);
        let mode = if p.api_version == 0 {
            Mode::Legacy
        } else {
            Mode::Wrapped
        };
        self.phase = Phase::Exchange {
            auth: Box::new(auth),
            mode,
            pending: None,
        };
        Self::out(ok.encode(p.correlation_id), ServerStatus::Continue)
    }

    fn authenticate_request(
        &mut self,
        auth: Box<ServerAuthenticator>,
        frame: &[u8],
        now_ms: i64,
    ) -> ServerOutput {
        let prefix = match RequestPrefix::parse(frame) {
            Ok(p) => p,
            Err(e) => return self.close_now(e, true, now_ms),
        };
        if prefix.api_key != SASL_AUTHENTICATE {
            let e = unexpected("authenticate", prefix.api_key, "authentication");
            let frames = match prefix.api_key {
                SASL_HANDSHAKE => SaslHandshakeResponse {
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    mechanisms: vec![],
                }
                .encode(prefix.correlation_id),
                API_VERSIONS => ApiVersionsResponse {
                    error_code: error_code::ILLEGAL_SASL_STATE,
                    api_keys: vec![],
                    throttle_time_ms: 0,
                }
                .encode(0, prefix.correlation_id),
                // The host builds this API's error response (ILLEGAL_SASL_STATE) from the
                // error's details if it knows the schema.
                _ => Vec::new(),
            };
            return self.fail(frames, e, now_ms);
        }
        let v = prefix.api_version;
        if !(0..=MAX_SASL_AUTHENTICATE_VERSION).contains(&v) {
            let e = Error::new(
                ErrorCode::UnsupportedVersion,
                format!("SaslAuthenticate v{v} is not supported"),
            );
            return self.close_now(e, true, now_ms);
        }
        if v > 0 {
            self.reauth_capable = true;
        }
        let token = match parse_request(frame)
            .and_then(|r| parse_sasl_authenticate_request_body(v, r.body))
        {
            Ok(t) => t,
            Err(e) => return self.close_now(e, true, now_ms),
        };
        let mut auth = auth;
        let r = auth.step(token, now_ms);
        self.after_step(
            auth,
            Mode::Wrapped,
            Some((prefix.correlation_id, v)),
            r,
            now_ms,
        )
    }

    fn legacy_token(
        &mut self,
        auth: Box<ServerAuthenticator>,
        frame: &[u8],
        now_ms: i64,
    ) -> ServerOutput {
        let mut auth = auth;
        let r = auth.step(frame, now_ms);
        self.after_step(auth, Mode::Legacy, None, r, now_ms)
    }

    /// The work of a host mechanism whose answer is pending (after [`ServerStatus::Pending`],
    /// until [`ServerConnection::resume`] or a failure).
    pub fn pending_work(&self) -> Option<&crate::mech::HostWork> {
        match &self.phase {
            Phase::Exchange { auth, .. } => auth.pending_work(),
            _ => None,
        }
    }

    /// Answers a [`ServerStatus::NeedCredential`].
    pub fn provide_credential(&mut self, answer: CredentialAnswer, now_ms: i64) -> ServerOutput {
        self.continue_exchange(
            ExchangeState::WaitingForCredential,
            "no credential was requested",
            now_ms,
            |auth| auth.provide_credential(answer, now_ms),
        )
    }

    /// Continues after [`ServerStatus::Pending`] with what the host-defined mechanism's work
    /// produced: its step, or the error the host code raised (which fails the exchange like
    /// any mechanism error, with Kafka's response to the client).
    pub fn resume(
        &mut self,
        result: crate::error::Result<MechServerStep>,
        now_ms: i64,
    ) -> ServerOutput {
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
        waiting: ExchangeState,
        misuse: &str,
        now_ms: i64,
        go: impl FnOnce(&mut ServerAuthenticator) -> crate::error::Result<ServerStep>,
    ) -> ServerOutput {
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Exchange {
                mut auth,
                mode,
                pending: Some(p),
            } if auth.state() == waiting => {
                let r = go(&mut auth);
                let request = match mode {
                    Mode::Wrapped => Some(p),
                    Mode::Legacy => None,
                };
                self.after_step(auth, mode, request, r, now_ms)
            }
            other => {
                self.phase = other;
                Self::out(
                    Vec::new(),
                    ServerStatus::CloseNow(Error::new(ErrorCode::WrongState, misuse)),
                )
            }
        }
    }

    fn wait_for_host(
        &mut self,
        auth: Box<ServerAuthenticator>,
        mode: Mode,
        request: Option<(i32, i16)>,
        status: ServerStatus,
    ) -> ServerOutput {
        // Legacy mode has no request to answer; keep a marker so the phase says "waiting for
        // the host" either way.
        self.phase = Phase::Exchange {
            auth,
            mode,
            pending: Some(request.unwrap_or((0, -1))),
        };
        Self::out(Vec::new(), status)
    }

    fn respond(request: Option<(i32, i16)>, response: SaslAuthenticateResponse) -> Vec<u8> {
        match request {
            Some((corr, v)) => response.encode(v, corr),
            None => raw_frame(&response.auth_bytes),
        }
    }

    fn after_step(
        &mut self,
        auth: Box<ServerAuthenticator>,
        mode: Mode,
        request: Option<(i32, i16)>,
        result: crate::error::Result<ServerStep>,
        now_ms: i64,
    ) -> ServerOutput {
        let ok = |bytes: Vec<u8>, lifetime: i64| SaslAuthenticateResponse {
            error_code: error_code::NONE,
            error_message: None,
            auth_bytes: bytes,
            session_lifetime_ms: lifetime,
        };
        match result {
            Ok(ServerStep::Challenge(c)) => {
                self.phase = Phase::Exchange {
                    auth,
                    mode,
                    pending: None,
                };
                Self::out(Self::respond(request, ok(c, 0)), ServerStatus::Continue)
            }
            Ok(ServerStep::NeedCredential(req)) => {
                self.wait_for_host(auth, mode, request, ServerStatus::NeedCredential(req))
            }
            Ok(ServerStep::Pending(work)) => {
                self.wait_for_host(auth, mode, request, ServerStatus::Pending(work))
            }
            Ok(ServerStep::Done { message, outcome }) => {
                self.complete(mode, request, message, outcome, now_ms)
            }
            Err(e) => {
                let mech = auth.mechanism().to_string();
                let frames = match mode {
                    Mode::Wrapped => Self::respond(
                        request,
                        SaslAuthenticateResponse {
                            error_code: error_code::SASL_AUTHENTICATION_FAILED,
                            error_message: Some(e.client_message(&mech, self.reauthenticating)),
                            auth_bytes: vec![],
                            session_lifetime_ms: 0,
                        },
                    ),
                    // Legacy framing has no error channel: the connection just closes.
                    Mode::Legacy => Vec::new(),
                };
                self.failed(frames, e, now_ms)
            }
        }
    }

    /// A failure of the exchange: fatal, unless a re-authentication fails under the
    /// keep-session policy while the old session is still valid.
    fn failed(&mut self, frames: Vec<u8>, e: Error, now_ms: i64) -> ServerOutput {
        if self.reauthenticating
            && matches!(
                self.config.failed_reauth_policy,
                FailedReauthPolicy::RetryUntilExpiry { .. }
            )
            && now_ms <= self.expiry_ms
        {
            self.config.metrics.authentication_failed(true, now_ms);
            self.reauthenticating = false;
            self.phase = Phase::Ready;
            return Self::out(frames, ServerStatus::ReauthenticationFailed(e));
        }
        self.fail(frames, e, now_ms)
    }

    fn complete(
        &mut self,
        mode: Mode,
        request: Option<(i32, i16)>,
        message: Option<Vec<u8>>,
        outcome: AuthOutcome,
        now_ms: i64,
    ) -> ServerOutput {
        if self.reauthenticating {
            if let Some(old) = &self.session {
                let p = &old.outcome.principal;
                if p != &outcome.principal {
                    let text = format!(
                        "Cannot change principals during re-authentication from {}.{}: {}.{}",
                        p.principal_type,
                        p.name,
                        outcome.principal.principal_type,
                        outcome.principal.name
                    );
                    let frames = match mode {
                        Mode::Wrapped => Self::respond(
                            request,
                            SaslAuthenticateResponse {
                                error_code: error_code::SASL_AUTHENTICATION_FAILED,
                                error_message: Some(text.clone()),
                                auth_bytes: vec![],
                                session_lifetime_ms: 0,
                            },
                        ),
                        Mode::Legacy => Vec::new(),
                    };
                    return self.failed(
                        frames,
                        Error::disclosed(ErrorCode::PrincipalChanged, text),
                        now_ms,
                    );
                }
            }
        }
        let max_reauth = self.config.max_reauth_for(&outcome.mechanism);
        let life = session_lifetime(outcome.credential_expiry_ms, max_reauth, now_ms);
        let frames = match (mode, request) {
            (Mode::Wrapped, Some((corr, v))) => SaslAuthenticateResponse {
                error_code: error_code::NONE,
                error_message: None,
                auth_bytes: message.unwrap_or_default(),
                session_lifetime_ms: life.lifetime_ms,
            }
            .encode(v, corr),
            _ => message.map(|m| raw_frame(&m)).unwrap_or_default(),
        };
        self.expiry_ms = life.expiry_ms.unwrap_or(i64::MAX);
        let info = SessionInfo {
            outcome,
            lifetime_ms: life.lifetime_ms,
            expiry_ms: life.expiry_ms,
        };
        self.session = Some(Box::new(info.clone()));
        self.phase = Phase::Ready;
        if self.reauthenticating {
            self.reauthenticating = false;
            let started = self.reauth_started_ms.unwrap_or(now_ms);
            self.config
                .metrics
                .reauthentication_succeeded((now_ms - started).max(0), now_ms);
            Self::out(frames, ServerStatus::Reauthenticated(info))
        } else {
            self.config
                .metrics
                .authentication_succeeded(self.reauth_capable, now_ms);
            Self::out(frames, ServerStatus::Authenticated(info))
        }
    }
}
