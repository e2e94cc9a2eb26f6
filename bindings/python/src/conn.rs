//! Kafka connection drivers, OAUTHBEARER tokens and validators, the refresher and the tracker.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ksasl::kafka::client::{
    ClientConfig as CoreClientConfig, ClientConnection as CoreClientConnection, ClientEvent,
    ClientSession,
};
use ksasl::kafka::server::{
    ServerConfig as CoreServerConfig, ServerConnection as CoreServerConnection, ServerStatus,
};
use ksasl::mech::{nothing_pending, CredentialRequest};
use ksasl::refresh::{
    RefreshConfig, Refresher as CoreRefresher, Tracker as CoreTracker, TrackerConfig,
};
use ksasl::session::{FailedReauthPolicy, Gate, ReauthTiming};
use ksasl::{
    CachingValidator, Error, ErrorCode, JwksValidator as CoreJwks, JwtValidatorConfig,
    SharedRandom, TokenRejection, TokenValidator, UnsecuredTokenBuilder, UnsecuredValidator,
    UnsecuredValidatorConfig, ValidatedToken,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::{hostmech, locked, now_or_wall, parse_answer, py_err, wrap, Pending, Registry};

fn retry(py: Python<'_>, ms: i64) -> PyResult<FailedReauthPolicy> {
    wrap(py, FailedReauthPolicy::from_initial_delay_ms(ms))
}

fn snapshot<'py>(
    py: Python<'py>,
    m: &ksasl::session::SaslMetrics,
    now_ms: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in m.snapshot(now_or_wall(now_ms)) {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// Configuration of client connections.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub struct ClientConfig {
    inner: Arc<CoreClientConfig>,
}

#[pymethods]
impl ClientConfig {
    /// `reauth_timing`: "kafka" (85-95 %), "librdkafka" (90 %), "franz-go" (95-98 %) or
    /// "disabled"; `reauth_retry_ms` > 0 keeps the session after a failed re-authentication;
    /// `known_versions` = `(handshake_version, authenticate_version or None)` skips the
    /// driver's ApiVersions when the host has already asked the broker (None: legacy framing).
    #[new]
    #[pyo3(signature = (registry, mechanism, client_id = None, reauth_timing = "kafka", api_versions_version = 0, reauth_retry_ms = 0, known_versions = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        registry: &Registry,
        mechanism: &str,
        client_id: Option<String>,
        reauth_timing: &str,
        api_versions_version: i16,
        reauth_retry_ms: i64,
        known_versions: Option<(i16, Option<i16>)>,
    ) -> PyResult<Self> {
        if !registry
            .inner
            .client_mechanisms()
            .iter()
            .any(|m| m == mechanism)
        {
            return Err(py_err(
                py,
                Error::new(
                    ErrorCode::UnknownMechanism,
                    format!("no client mechanism {mechanism} in the registry"),
                ),
            ));
        }
        let mut c = CoreClientConfig::new(registry.inner.clone(), mechanism);
        c.client_id = client_id;
        c.reauth_policy.timing = match reauth_timing {
            "kafka" => ReauthTiming::Kafka,
            "librdkafka" => ReauthTiming::Librdkafka,
            "franz-go" => ReauthTiming::FranzGo,
            "disabled" => ReauthTiming::Disabled,
            t => {
                return Err(PyValueError::new_err(format!(
                    "unknown reauth_timing {t:?}"
                )))
            }
        };
        wrap(py, c.set_api_versions_version(api_versions_version.into()))?;
        c.failed_reauth_policy = retry(py, reauth_retry_ms)?;
        if let Some((handshake, authenticate)) = known_versions {
            if !(0..=1).contains(&handshake) || !(0..=2).contains(&authenticate.unwrap_or(0)) {
                return Err(PyValueError::new_err(
                    "known_versions: SaslHandshake 0-1, SaslAuthenticate 0-2 or None",
                ));
            }
            c.known_versions = Some((handshake, authenticate));
        }
        Ok(ClientConfig { inner: Arc::new(c) })
    }

    /// Kafka's metrics of every connection of this configuration.
    #[pyo3(signature = (now_ms = None))]
    fn metrics<'py>(&self, py: Python<'py>, now_ms: Option<i64>) -> PyResult<Bound<'py, PyDict>> {
        snapshot(py, &self.inner.metrics, now_ms)
    }
}

fn session_dict<'py>(py: Python<'py>, s: &ClientSession) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("lifetime_ms", s.lifetime_ms)?;
    d.set_item("reauth_at_ms", s.reauth_at_ms)?;
    d.set_item("expiry_ms", s.expiry_ms)?;
    d.set_item("latency_ms", s.latency_ms)?;
    Ok(d)
}

/// A client connection's SASL state (Kafka framing, KIP-368).
#[pyclass(module = "ksasl._ksasl")]
pub struct ClientConnection {
    inner: Mutex<CoreClientConnection>,
}

impl ClientConnection {
    /// The event for Python; an application response is the very `bytes` object handed in.
    fn event(
        &self,
        py: Python<'_>,
        ev: ClientEvent,
        frame: Option<&Bound<'_, PyBytes>>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        Ok(match ev {
            ClientEvent::Continue => ("continue", None),
            ClientEvent::Application => ("application", frame.map(|f| f.clone().unbind())),
            ClientEvent::Authenticated(_) => ("authenticated", None),
            ClientEvent::Reauthenticated(_) => ("reauthenticated", None),
            ClientEvent::ReauthenticationFailed { .. } => ("reauth_failed", None),
            ClientEvent::Pending(_) => ("pending", None),
            ClientEvent::Failed(e) => return Err(py_err(py, e)),
        })
    }
}

#[pymethods]
impl ClientConnection {
    #[new]
    fn new(config: &ClientConfig) -> Self {
        ClientConnection {
            inner: Mutex::new(CoreClientConnection::new(config.inner.clone())),
        }
    }

    /// Starts the initial authentication.
    #[pyo3(signature = (now_ms = None))]
    fn start(&self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<()> {
        wrap(py, locked(&self.inner).start(now_or_wall(now_ms)))
    }

    /// The bytes to write (length-prefixed frames), possibly empty.
    fn transmit<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &locked(&self.inner).poll_transmit().unwrap_or_default())
    }

    /// Handles one received frame (`bytes`, without its length prefix). Returns `(event,
    /// frame)`: "continue", "application" (a response to an application request: `frame` is
    /// the very object passed in, not a copy),
    /// "authenticated", "reauthenticated", "reauth_failed", or "pending" (an `async`
    /// mechanism method is running: await `pending_work()` and pass its result to
    /// `resume`); raises when authentication fails.
    #[pyo3(signature = (frame, now_ms = None))]
    fn handle_frame(
        &self,
        py: Python<'_>,
        frame: &Bound<'_, PyBytes>,
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        let now = now_or_wall(now_ms);
        let bytes = frame.as_bytes();
        let ev = py.allow_threads(|| locked(&self.inner).handle_frame(bytes, now));
        self.event(py, ev, Some(frame))
    }

    /// After "pending": the awaitable the mechanism returned, or None.
    fn pending_work(&self, py: Python<'_>) -> Option<PyObject> {
        locked(&self.inner)
            .pending_work()
            .and_then(|w| hostmech::awaitable(py, w))
    }

    /// Continues after "pending" with the awaited result (or the exception the awaitable
    /// raised, which fails the authentication as HOST_MECHANISM_FAILED unless it is a
    /// KsaslError). Returns and raises as `handle_frame`.
    #[pyo3(signature = (result, now_ms = None))]
    fn resume(
        &self,
        py: Python<'_>,
        result: &Bound<'_, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        let work = locked(&self.inner)
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(py, nothing_pending()))?;
        let step = hostmech::resume_client(py, &work, result);
        let now = now_or_wall(now_ms);
        let ev = py.allow_threads(|| locked(&self.inner).resume(step, now));
        self.event(py, ev, None)
    }

    /// The broker closed the connection: raises the error to report.
    #[pyo3(signature = (now_ms = None))]
    fn closed(&self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<()> {
        let e = locked(&self.inner).connection_closed(now_or_wall(now_ms));
        Err(py_err(py, e))
    }

    /// When to call `handle_timeout` next (ms), or None.
    fn next_deadline(&self) -> Option<i64> {
        locked(&self.inner).next_deadline()
    }

    /// Starts a due re-authentication; returns whether it started.
    #[pyo3(signature = (now_ms = None))]
    fn handle_timeout(&self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<bool> {
        wrap(py, locked(&self.inner).handle_timeout(now_or_wall(now_ms)))
    }

    /// Whether a re-authentication is due (synchronous hosts).
    #[pyo3(signature = (now_ms = None))]
    fn reauth_pending(&self, now_ms: Option<i64>) -> bool {
        locked(&self.inner).reauth_pending(now_or_wall(now_ms))
    }

    /// Before an application request: True to send it now, False to hold it.
    #[pyo3(signature = (now_ms = None))]
    fn before_request(&self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<bool> {
        wrap(py, locked(&self.inner).before_request(now_or_wall(now_ms)))
    }

    /// Starts a re-authentication now (deferred, returning False, within a second of the last).
    #[pyo3(signature = (now_ms = None))]
    fn start_reauthentication(&self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<bool> {
        wrap(
            py,
            locked(&self.inner).start_reauthentication(now_or_wall(now_ms)),
        )
    }

    /// The session as the client sees it, or None before authentication.
    fn session<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let s = *match locked(&self.inner).session() {
            Some(s) => s,
            None => return Ok(None),
        };
        session_dict(py, &s).map(Some)
    }

    /// Whether a re-authentication is in progress.
    #[getter]
    fn reauthenticating(&self) -> bool {
        locked(&self.inner).is_reauthenticating()
    }
}

/// Configuration of one listener's server connections.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub struct ServerConfig {
    inner: Arc<CoreServerConfig>,
    pending: Pending,
}

#[pymethods]
impl ServerConfig {
    /// `max_reauth_ms` is `connections.max.reauth.ms`; `max_reauth_ms_by_mechanism` overrides it
    /// per mechanism; `api_versions` adds `(api_key, min, max)` entries to ApiVersions.
    #[new]
    #[pyo3(signature = (registry, max_reauth_ms = 0, max_reauth_ms_by_mechanism = None, failed_auth_delay_ms = 100, reauth_retry_ms = 0, api_versions = None))]
    fn new(
        py: Python<'_>,
        registry: &Registry,
        max_reauth_ms: i64,
        max_reauth_ms_by_mechanism: Option<BTreeMap<String, i64>>,
        failed_auth_delay_ms: i64,
        reauth_retry_ms: i64,
        api_versions: Option<Vec<(i16, i16, i16)>>,
    ) -> PyResult<Self> {
        let mut c = CoreServerConfig::new(registry.inner.clone());
        c.max_reauth_ms = max_reauth_ms;
        c.max_reauth_ms_by_mechanism = max_reauth_ms_by_mechanism.unwrap_or_default();
        if failed_auth_delay_ms < 0 {
            return Err(PyValueError::new_err(
                "failed_auth_delay_ms must not be negative",
            ));
        }
        c.failed_authentication_delay_ms = failed_auth_delay_ms;
        c.failed_reauth_policy = retry(py, reauth_retry_ms)?;
        for (api_key, min_version, max_version) in api_versions.unwrap_or_default() {
            wrap(py, c.set_api_version(api_key, min_version, max_version))?;
        }
        Ok(ServerConfig {
            inner: Arc::new(c),
            pending: registry.pending.clone(),
        })
    }

    /// Kafka's metrics of every connection of this listener.
    #[pyo3(signature = (now_ms = None))]
    fn metrics<'py>(&self, py: Python<'py>, now_ms: Option<i64>) -> PyResult<Bound<'py, PyDict>> {
        snapshot(py, &self.inner.metrics, now_ms)
    }

    /// The answer (framed) to an ApiVersions request frame, as before authentication: for
    /// hosts answering ApiVersions on an authenticated connection (Kafka's clients ask again).
    fn api_versions_response<'py>(
        &self,
        py: Python<'py>,
        frame: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (answer, _) = wrap(py, self.inner.api_versions_response(frame))?;
        Ok(PyBytes::new(py, &answer))
    }
}

/// A server connection's SASL state: authentication frames in, responses out; then the gate.
#[pyclass(module = "ksasl._ksasl")]
pub struct ServerConnection {
    inner: Mutex<CoreServerConnection>,
    request: Mutex<Option<CredentialRequest>>,
    pending: Pending,
}

impl ServerConnection {
    fn out(
        &self,
        py: Python<'_>,
        o: ksasl::kafka::server::ServerOutput,
    ) -> PyResult<(&'static str, Py<PyBytes>, Option<i64>)> {
        if let Some(e) = self.pending.lock().ok().and_then(|mut p| p.take()) {
            return Err(e);
        }
        let frames = PyBytes::new(py, &o.frames).unbind();
        Ok(match o.status {
            ServerStatus::Continue => ("continue", frames, None),
            ServerStatus::NeedCredential(r) => {
                *locked(&self.request) = Some(r);
                ("need_credential", frames, None)
            }
            ServerStatus::Authenticated(_) => ("authenticated", frames, None),
            ServerStatus::Reauthenticated(_) => ("reauthenticated", frames, None),
            ServerStatus::ReauthenticationFailed(_) => ("reauth_failed", frames, None),
            ServerStatus::FailAt { deadline_ms, .. } => ("fail_at", frames, Some(deadline_ms)),
            ServerStatus::CloseNow(_) => ("close_now", frames, None),
            ServerStatus::Pending(_) => ("pending", frames, None),
        })
    }
}

#[pymethods]
impl ServerConnection {
    #[new]
    fn new(config: &ServerConfig) -> Self {
        ServerConnection {
            inner: Mutex::new(CoreServerConnection::new(config.inner.clone())),
            request: Mutex::new(None),
            pending: config.pending.clone(),
        }
    }

    /// Handles one authentication frame: returns `(action, frames_to_write, deadline_ms)`
    /// with action "continue", "need_credential", "pending" (an `async` mechanism method is
    /// running: await `pending_work()` and pass its result to `resume`), "authenticated",
    /// "reauthenticated", "reauth_failed", "fail_at" (write at deadline_ms, then close) or
    /// "close_now".
    #[pyo3(signature = (frame, now_ms = None))]
    fn handle_frame(
        &self,
        py: Python<'_>,
        frame: &[u8],
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Py<PyBytes>, Option<i64>)> {
        let now = now_or_wall(now_ms);
        let o = py.allow_threads(|| locked(&self.inner).handle_frame(frame, now));
        self.out(py, o)
    }

    /// The pending credential request, or None.
    fn credential_request<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = locked(&self.request).clone() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("mechanism", &r.mechanism)?;
        d.set_item("username", &r.username)?;
        d.set_item("token_auth", r.token_auth)?;
        Ok(Some(d))
    }

    /// Answers the pending credential request (answers as for a credential callback).
    #[pyo3(signature = (answer, now_ms = None))]
    fn provide_credential(
        &self,
        py: Python<'_>,
        answer: &Bound<'_, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Py<PyBytes>, Option<i64>)> {
        let request = locked(&self.request).clone().ok_or_else(|| {
            py_err(
                py,
                Error::new(ErrorCode::WrongState, "no credential has been requested"),
            )
        })?;
        let a = parse_answer(py, &request, answer)?
            .ok_or_else(|| PyValueError::new_err("'later' is not an answer"))?;
        *locked(&self.request) = None;
        let now = now_or_wall(now_ms);
        let o = py.allow_threads(|| locked(&self.inner).provide_credential(a, now));
        self.out(py, o)
    }

    /// After "pending": the awaitable the mechanism returned, or None.
    fn pending_work(&self, py: Python<'_>) -> Option<PyObject> {
        locked(&self.inner)
            .pending_work()
            .and_then(|w| hostmech::awaitable(py, w))
    }

    /// Continues after "pending" with the awaited result (or the exception the awaitable
    /// raised, which fails the exchange as HOST_MECHANISM_FAILED unless it is a KsaslError).
    /// Returns as `handle_frame`.
    #[pyo3(signature = (result, now_ms = None))]
    fn resume(
        &self,
        py: Python<'_>,
        result: &Bound<'_, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Py<PyBytes>, Option<i64>)> {
        let work = locked(&self.inner)
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(py, nothing_pending()))?;
        let step = hostmech::resume_server(py, &work, result);
        let now = now_or_wall(now_ms);
        let o = py.allow_threads(|| locked(&self.inner).resume(step, now));
        self.out(py, o)
    }

    /// The per-request gate: "process", "begin_reauthentication" or "close_expired".
    #[pyo3(signature = (api_key, now_ms = None))]
    fn gate(&self, api_key: i16, now_ms: Option<i64>) -> &'static str {
        match locked(&self.inner).gate(api_key, now_or_wall(now_ms)) {
            Gate::Process => "process",
            Gate::BeginReauthentication => "begin_reauthentication",
            Gate::CloseExpired => "close_expired",
        }
    }

    /// Kafka's ILLEGAL_SASL_STATE answer to a SaslHandshake or SaslAuthenticate request that
    /// reaches the request handlers of an authenticated connection (None for other APIs).
    #[staticmethod]
    fn illegal_state_response<'py>(py: Python<'py>, frame: &[u8]) -> Option<Bound<'py, PyBytes>> {
        CoreServerConnection::illegal_state_response(frame).map(|b| PyBytes::new(py, &b))
    }

    /// Whether authenticated with no exchange in progress.
    #[getter]
    fn ready(&self) -> bool {
        locked(&self.inner).is_ready()
    }

    /// The session: principal, mechanism, lifetime sent, expiry (None: never), credential
    /// expiry; None before authentication.
    fn session<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let inner = locked(&self.inner);
        let Some(s) = inner.session() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("principal", s.outcome.principal.to_string())?;
        d.set_item("mechanism", &s.outcome.mechanism)?;
        d.set_item("lifetime_ms", s.lifetime_ms)?;
        d.set_item("expiry_ms", s.expiry_ms)?;
        d.set_item("credential_expiry_ms", s.outcome.credential_expiry_ms)?;
        d.set_item("extensions", s.outcome.extensions.clone())?;
        Ok(Some(d))
    }
}

/// An unsecured (`alg: none`) token as Kafka's development login makes them.
#[pyfunction]
#[pyo3(signature = (principal, lifetime_seconds = 3600, scope = None, now_ms = None))]
pub fn unsecured_token<'py>(
    py: Python<'py>,
    principal: &str,
    lifetime_seconds: i64,
    scope: Option<Vec<String>>,
    now_ms: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut b = UnsecuredTokenBuilder::for_principal(principal).lifetime_seconds(lifetime_seconds);
    if let Some(s) = scope {
        let items: Vec<&str> = s.iter().map(String::as_str).collect();
        b = wrap(py, b.list_claim("scope", &items))?;
    }
    let t = wrap(py, b.build(now_or_wall(now_ms)))?;
    let d = PyDict::new(py);
    d.set_item("token", t.value())?;
    d.set_item("expiry_ms", t.expiry_ms())?;
    d.set_item("principal", t.principal())?;
    Ok(d)
}

/// A signed-JWT validator whose JWKS the host supplies.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub struct JwksValidator {
    inner: Arc<CoreJwks>,
}

#[pymethods]
impl JwksValidator {
    #[new]
    #[pyo3(signature = (expected_issuer = None, expected_audience = None, clock_skew_ms = 30_000))]
    fn new(
        py: Python<'_>,
        expected_issuer: Option<String>,
        expected_audience: Option<String>,
        clock_skew_ms: i64,
    ) -> PyResult<Self> {
        let c = JwtValidatorConfig {
            expected_issuer,
            expected_audiences: expected_audience.into_iter().collect(),
            clock_skew_ms,
            ..Default::default()
        };
        Ok(JwksValidator {
            inner: Arc::new(wrap(py, CoreJwks::new(c))?),
        })
    }

    /// Replaces the key set; returns the number of usable keys.
    #[pyo3(signature = (jwks_json, now_ms = None))]
    fn set_jwks(&self, py: Python<'_>, jwks_json: &str, now_ms: Option<i64>) -> PyResult<usize> {
        wrap(py, self.inner.set_jwks(jwks_json, now_or_wall(now_ms)))
    }

    /// When the JWKS should be fetched next (ms).
    fn next_refresh_ms(&self) -> i64 {
        self.inner.next_refresh_ms()
    }

    /// Validates a token: returns `{"principal", "expiry_ms", "scope"}` or raises.
    #[pyo3(signature = (token, now_ms = None))]
    fn validate<'py>(
        &self,
        py: Python<'py>,
        token: &str,
        now_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let now = now_or_wall(now_ms);
        let r = py.allow_threads(|| self.inner.validate(token, now));
        validated(py, r)
    }
}

fn validated<'py>(
    py: Python<'py>,
    r: Result<ValidatedToken, TokenRejection>,
) -> PyResult<Bound<'py, PyDict>> {
    match r {
        Ok(v) => {
            let d = PyDict::new(py);
            d.set_item("principal", v.principal)?;
            d.set_item("expiry_ms", v.expiry_ms)?;
            d.set_item("scope", v.scope)?;
            Ok(d)
        }
        Err(rej) => Err(py_err(
            py,
            Error::new(rej.code, rej.reason).with_detail("status", rej.status),
        )),
    }
}

/// A validator that calls a Python callable `(token, now_ms) -> (principal, expiry_ms)` or
/// None to reject.
struct PyValidator {
    callback: PyObject,
    pending: Pending,
}

impl TokenValidator for PyValidator {
    fn validate(&self, token: &str, now_ms: i64) -> Result<ValidatedToken, TokenRejection> {
        Python::with_gil(|py| {
            let r = self
                .callback
                .call1(py, (token, now_ms))
                .and_then(|v| v.extract::<Option<(String, i64)>>(py));
            match r {
                Ok(Some((principal, expiry_ms))) => Ok(ValidatedToken {
                    principal,
                    expiry_ms,
                    start_ms: None,
                    scope: vec![],
                    valid_from_ms: None,
                    valid_until_ms: expiry_ms,
                }),
                Ok(None) => Err(TokenRejection::invalid_token(
                    ErrorCode::TokenRejected,
                    "rejected by the host's validator",
                )),
                Err(e) => {
                    if let Ok(mut p) = self.pending.lock() {
                        *p = Some(e);
                    }
                    Err(TokenRejection::invalid_token(
                        ErrorCode::TokenRejected,
                        "the validator raised an exception",
                    ))
                }
            }
        })
    }
}

/// Adds the OAUTHBEARER servers and clients to `Registry` (defined with it in lib.rs).
pub fn add_oauth(
    registry: &mut Registry,
    py: Python<'_>,
    validator: Option<&Bound<'_, PyAny>>,
    required_scope: Vec<String>,
    clock_skew_ms: i64,
) -> PyResult<()> {
    let v: Arc<dyn TokenValidator> = match validator {
        None => Arc::new(wrap(
            py,
            UnsecuredValidator::new(UnsecuredValidatorConfig {
                required_scope,
                allowable_clock_skew_ms: clock_skew_ms,
                ..Default::default()
            }),
        )?),
        Some(obj) => {
            if let Ok(j) = obj.downcast::<JwksValidator>() {
                j.get().inner.clone()
            } else if obj.is_callable() {
                Arc::new(PyValidator {
                    callback: obj.clone().unbind(),
                    pending: registry.pending.clone(),
                })
            } else {
                return Err(PyValueError::new_err(
                    "validator must be None, a JwksValidator or a callable",
                ));
            }
        }
    };
    registry
        .inner
        .register_oauthbearer_server(Arc::new(CachingValidator::new(v, 4096)));
    Ok(())
}

/// Refreshes OAUTHBEARER tokens (or passwords) on Kafka's schedule; librdkafka's shape.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub struct Refresher {
    pub(crate) inner: Arc<CoreRefresher>,
}

#[pymethods]
impl Refresher {
    #[new]
    #[pyo3(signature = (window_factor = 0.8, window_jitter = 0.05, min_period_seconds = 60, buffer_seconds = 300))]
    fn new(
        py: Python<'_>,
        window_factor: f64,
        window_jitter: f64,
        min_period_seconds: i64,
        buffer_seconds: i64,
    ) -> PyResult<Self> {
        let c = RefreshConfig {
            window_factor,
            window_jitter,
            min_period_seconds,
            buffer_seconds,
            ..Default::default()
        };
        Ok(Refresher {
            inner: Arc::new(wrap(py, CoreRefresher::new(c, SharedRandom::default()))?),
        })
    }

    /// True when a new token must be fetched now (the request is then outstanding).
    #[pyo3(signature = (now_ms = None))]
    fn poll(&self, now_ms: Option<i64>) -> bool {
        self.inner.poll(now_or_wall(now_ms))
    }

    /// Installs a token: its text, ABSOLUTE expiry in ms since the epoch, principal, extensions.
    #[pyo3(signature = (token, expiry_ms, principal, extensions = None, now_ms = None))]
    fn set_token(
        &self,
        py: Python<'_>,
        token: &str,
        expiry_ms: i64,
        principal: &str,
        extensions: Option<BTreeMap<String, String>>,
        now_ms: Option<i64>,
    ) -> PyResult<u64> {
        let ext: Vec<(String, String)> = extensions.unwrap_or_default().into_iter().collect();
        let pairs: Vec<(&str, &str)> = ext.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        wrap(
            py,
            self.inner
                .set_token(token, expiry_ms, principal, &pairs, now_or_wall(now_ms)),
        )
    }

    /// Reports a failed refresh: the old token stays while valid; retry in 10 s.
    #[pyo3(signature = (reason, now_ms = None))]
    fn set_token_failure(&self, py: Python<'_>, reason: &str, now_ms: Option<i64>) -> PyResult<()> {
        wrap(
            py,
            self.inner.set_token_failure(reason, now_or_wall(now_ms)),
        )
    }

    /// Installs a delegation token (a dict from `TokenAuthority.create` or
    /// `parse_create_token_response`) as the refresher's credential: clients made with
    /// `Registry.add_refreshing_password_clients` log in with it; a refresh is due before it
    /// expires (answer with the renewed token). Returns the generation.
    #[pyo3(signature = (token, now_ms = None))]
    fn set_delegation_token(
        &self,
        py: Python<'_>,
        token: &Bound<'_, PyDict>,
        now_ms: Option<i64>,
    ) -> PyResult<u64> {
        let t = crate::tokens::token_from_dict(py, token)?;
        wrap(py, t.install(&self.inner, now_or_wall(now_ms)))
    }

    /// When a refresh is next due (ms; None if outstanding or stopped).
    fn next_deadline(&self) -> Option<i64> {
        self.inner.next_deadline().map(|d| d.max(0))
    }

    /// The generation of the current token (0: none).
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    /// The current token: `{"token", "expiry_ms", "principal", "extensions", "generation"}`;
    /// raises CredentialError when none is valid (an expired token is never returned).
    #[pyo3(signature = (now_ms = None))]
    fn current<'py>(&self, py: Python<'py>, now_ms: Option<i64>) -> PyResult<Bound<'py, PyDict>> {
        let (t, e, g) = wrap(py, self.inner.current_token(now_or_wall(now_ms)))?;
        let d = PyDict::new(py);
        d.set_item("token", t.value())?;
        d.set_item("expiry_ms", t.expiry_ms())?;
        d.set_item("principal", t.principal())?;
        d.set_item("extensions", e.map().clone())?;
        d.set_item("generation", g)?;
        Ok(d)
    }
}

/// Tracks which connections use which token generation.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub struct Tracker {
    inner: CoreTracker,
}

#[pymethods]
impl Tracker {
    #[new]
    #[pyo3(signature = (refresher, spread_window_ms = 10_000))]
    fn new(py: Python<'_>, refresher: &Refresher, spread_window_ms: i64) -> PyResult<Self> {
        let c = TrackerConfig {
            spread_window_ms,
            ..Default::default()
        };
        Ok(Tracker {
            inner: wrap(py, CoreTracker::new(refresher.inner.clone(), c))?,
        })
    }

    /// Records that connection `id` authenticated with token `generation` and got `session`
    /// (a dict from `ClientConnection.session()`).
    fn authenticated(
        &self,
        py: Python<'_>,
        id: u64,
        generation: u64,
        session: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let get = |k: &str| -> PyResult<Option<i64>> {
            session
                .get_item(k)?
                .map(|v| v.extract())
                .transpose()
                .map(|o| o.flatten())
        };
        let s = ClientSession {
            lifetime_ms: get("lifetime_ms")?.unwrap_or(0),
            reauth_at_ms: get("reauth_at_ms")?,
            expiry_ms: get("expiry_ms")?,
            latency_ms: 0,
        };
        wrap(py, self.inner.authenticated(id, generation, &s))
    }

    /// Forgets a closed connection.
    fn forget(&self, id: u64) {
        self.inner.forget(id)
    }

    /// When to poll next (ms), or None.
    fn next_deadline(&self) -> Option<i64> {
        self.inner.next_deadline().map(|d| d.max(0))
    }

    /// `(refresh_needed, [connection ids to re-authenticate])` at now.
    #[pyo3(signature = (now_ms = None))]
    fn poll(&self, now_ms: Option<i64>) -> (bool, Vec<u64>) {
        let p = self.inner.poll(now_or_wall(now_ms));
        (p.refresh, p.reauthenticate)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ClientConfig>()?;
    m.add_class::<ClientConnection>()?;
    m.add_class::<ServerConfig>()?;
    m.add_class::<ServerConnection>()?;
    m.add_class::<JwksValidator>()?;
    m.add_class::<Refresher>()?;
    m.add_class::<Tracker>()?;
    m.add_function(wrap_pyfunction!(unsecured_token, m)?)?;
    Ok(())
}
