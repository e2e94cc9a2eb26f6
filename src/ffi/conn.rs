//! Kafka connection drivers and their configurations.

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use super::hostmech::{late_client_step, late_server_step, work_pointer};
use super::objects::{ksasl_credential_kind, ksasl_registry, take_answer};
use super::*;
use crate::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use crate::kafka::server::{ServerAction, ServerConfig, ServerConnection, ServerOutput};
use crate::mech::{nothing_pending, CredentialRequest};
use crate::session::{FailedReauthPolicy, Gate, ReauthTiming};

/// Configuration of client connections (shared by the connections made from it).
pub struct ksasl_client_config {
    inner: Arc<ClientConfig>,
    err: LastError,
}

impl HasError for ksasl_client_config {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

pub(crate) fn config_mut<T>(a: &mut Arc<T>) -> Result<&mut T, Error> {
    Arc::get_mut(a).ok_or_else(|| {
        Error::new(
            ErrorCode::WrongState,
            "configure before creating connections from this configuration",
        )
    })
}

/// Creates a client configuration using `mechanism` from the registry's client mechanisms.
#[no_mangle]
pub extern "C" fn ksasl_client_config_new(
    registry: *const ksasl_registry,
    mechanism: *const c_char,
    out: *mut *mut ksasl_client_config,
) -> ksasl_result {
    construct(out, || {
        let r = unsafe { registry.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "registry must not be NULL"))?;
        let m = text(mechanism, "mechanism")?;
        if !r.inner.client_mechanisms().iter().any(|x| x == m) {
            return Err(Error::new(
                ErrorCode::UnknownMechanism,
                format!("no client mechanism {m} in the registry"),
            ));
        }
        Ok(ksasl_client_config {
            inner: Arc::new(ClientConfig::new(r.inner.clone(), m)),
            err: LastError::default(),
        })
    })
}

/// Frees a client configuration (connections keep what they need).
#[no_mangle]
pub extern "C" fn ksasl_client_config_free(c: *mut ksasl_client_config) {
    free(c)
}

/// The detail of the configuration's last failure.
#[no_mangle]
pub extern "C" fn ksasl_client_config_last_error(c: *const ksasl_client_config) -> *const c_char {
    unsafe { c.as_ref() }.map_or(c"".as_ptr(), |c| c.err.ptr())
}

/// Sets `client.id` (NULL: none).
#[no_mangle]
pub extern "C" fn ksasl_client_config_set_client_id(
    c: *mut ksasl_client_config,
    client_id: *const c_char,
) -> ksasl_result {
    with(c, |c| {
        let id = opt_text(client_id, "client_id")?.map(str::to_string);
        config_mut(&mut c.inner)?.client_id = id;
        Ok(())
    })
}

/// Re-authentication timing.
pub type ksasl_reauth_timing = u32;
/// Kafka's Java client: random 85-95 % of the session.
pub const KSASL_REAUTH_KAFKA: ksasl_reauth_timing = 0;
/// librdkafka: 90 %.
pub const KSASL_REAUTH_LIBRDKAFKA: ksasl_reauth_timing = 1;
/// franz-go: random 95-98 %, at least 1 s before the end.
pub const KSASL_REAUTH_FRANZ_GO: ksasl_reauth_timing = 2;
/// Never re-authenticate.
pub const KSASL_REAUTH_DISABLED: ksasl_reauth_timing = 3;

/// Chooses when connections re-authenticate.
#[no_mangle]
pub extern "C" fn ksasl_client_config_set_reauth_timing(
    c: *mut ksasl_client_config,
    timing: ksasl_reauth_timing,
) -> ksasl_result {
    with(c, |c| {
        let t = match timing {
            KSASL_REAUTH_KAFKA => ReauthTiming::Kafka,
            KSASL_REAUTH_LIBRDKAFKA => ReauthTiming::Librdkafka,
            KSASL_REAUTH_FRANZ_GO => ReauthTiming::FranzGo,
            KSASL_REAUTH_DISABLED => ReauthTiming::Disabled,
            t => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("unknown re-authentication timing {t}"),
                ))
            }
        };
        config_mut(&mut c.inner)?.reauth_policy.timing = t;
        Ok(())
    })
}

/// The ApiVersions version sent first (0 to 5; librdkafka sends 3).
#[no_mangle]
pub extern "C" fn ksasl_client_config_set_api_versions_version(
    c: *mut ksasl_client_config,
    version: i16,
) -> ksasl_result {
    with(c, |c| {
        config_mut(&mut c.inner)?.set_api_versions_version(version.into())
    })
}

/// After a failed re-authentication: 0 closes (Kafka); a positive delay keeps the old session
/// and retries after that delay, then twice it, then four times it.
#[no_mangle]
pub extern "C" fn ksasl_client_config_set_reauth_retry(
    c: *mut ksasl_client_config,
    initial_delay_ms: i64,
) -> ksasl_result {
    with(c, |c| {
        config_mut(&mut c.inner)?.failed_reauth_policy =
            FailedReauthPolicy::from_initial_delay_ms(initial_delay_ms)?;
        Ok(())
    })
}

/// A metric of every connection of this client configuration, by Kafka name
/// (`"successful-reauthentication-total"`, `"reauthentication-latency-avg"`, ...).
#[no_mangle]
pub extern "C" fn ksasl_client_config_metric(
    c: *mut ksasl_client_config,
    name: *const c_char,
    now_ms: i64,
    value: *mut f64,
) -> ksasl_result {
    with(c, |c| metric(&c.inner.metrics, name, now_ms, value))
}

/// A client connection's SASL state.
pub struct ksasl_client_conn {
    inner: ClientConnection,
    out: Vec<u8>,
    err: LastError,
}

impl HasError for ksasl_client_conn {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a client connection from a configuration.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_new(
    config: *const ksasl_client_config,
    out: *mut *mut ksasl_client_conn,
) -> ksasl_result {
    construct(out, || {
        let c = unsafe { config.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "config must not be NULL"))?;
        Ok(ksasl_client_conn {
            inner: ClientConnection::new(c.inner.clone()),
            out: Vec::new(),
            err: LastError::default(),
        })
    })
}

/// Frees a client connection (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_free(c: *mut ksasl_client_conn) {
    free(c)
}

/// The detail of the connection's last failure.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_last_error(c: *const ksasl_client_conn) -> *const c_char {
    unsafe { c.as_ref() }.map_or(c"".as_ptr(), |c| c.err.ptr())
}

/// Starts the initial authentication.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_start(c: *mut ksasl_client_conn, now_ms: i64) -> ksasl_result {
    with(c, |c| c.inner.start(now_ms))
}

/// The bytes to write to the socket (length-prefixed frames; borrowed; `*len` 0 if none).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_transmit(
    c: *mut ksasl_client_conn,
    out: *mut *const u8,
    len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(len, "len")?;
        c.out = c.inner.poll_transmit().unwrap_or_default();
        put(out, c.out.as_ptr());
        put(len, c.out.len());
        Ok(())
    })
}

/// What a received frame meant.
pub type ksasl_client_event = u32;
/// A SASL response was consumed.
pub const KSASL_CLIENT_CONTINUE: ksasl_client_event = 0;
/// A response to an application request: `*app_frame` holds it.
pub const KSASL_CLIENT_APPLICATION: ksasl_client_event = 1;
/// Authenticated for the first time.
pub const KSASL_CLIENT_AUTHENTICATED: ksasl_client_event = 2;
/// Re-authenticated.
pub const KSASL_CLIENT_REAUTHENTICATED: ksasl_client_event = 3;
/// A re-authentication failed; the old session holds (retry policy).
pub const KSASL_CLIENT_REAUTH_FAILED: ksasl_client_event = 4;
/// A host mechanism answers later (`ksasl_host_output_set_pending`): finish its work
/// (`ksasl_client_conn_pending_work`) and continue with `ksasl_client_conn_resume`.
pub const KSASL_CLIENT_PENDING: ksasl_client_event = 5;

/// Reports a client event through the out-parameters; `frame` is the frame handled (an
/// application response is reported as that very frame, not copied).
fn client_event(
    c: &mut ksasl_client_conn,
    ev: ClientEvent,
    frame: (*const u8, usize),
    event: *mut ksasl_client_event,
    app_frame: *mut *const u8,
    app_len: *mut usize,
) -> Result<(), Error> {
    let ev = match ev {
        ClientEvent::Continue => KSASL_CLIENT_CONTINUE,
        ClientEvent::Application => {
            need(app_frame, "app_frame")?;
            need(app_len, "app_len")?;
            put(app_frame, frame.0);
            put(app_len, frame.1);
            KSASL_CLIENT_APPLICATION
        }
        ClientEvent::Authenticated(_) => KSASL_CLIENT_AUTHENTICATED,
        ClientEvent::Reauthenticated(_) => KSASL_CLIENT_REAUTHENTICATED,
        ClientEvent::ReauthenticationFailed { error, .. } => {
            c.err.set(&error);
            KSASL_CLIENT_REAUTH_FAILED
        }
        ClientEvent::Pending(_) => KSASL_CLIENT_PENDING,
        ClientEvent::Failed(e) => return Err(e),
    };
    put(event, ev);
    Ok(())
}

/// Handles one received frame (without its length prefix). On success `*event` says what it
/// was; for `KSASL_CLIENT_APPLICATION`, `*app_frame`/`*app_len` are `frame`/`frame_len`
/// themselves (the library neither copies nor keeps application responses). A fatal
/// authentication failure is returned as the error code (close the connection).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_handle_frame(
    c: *mut ksasl_client_conn,
    frame: *const u8,
    frame_len: usize,
    now_ms: i64,
    event: *mut ksasl_client_event,
    app_frame: *mut *const u8,
    app_len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need(event, "event")?;
        let f = bytes(frame, frame_len, "frame")?;
        let ev = c.inner.handle_frame(f, now_ms);
        client_event(c, ev, (frame, frame_len), event, app_frame, app_len)
    })
}

/// After `KSASL_CLIENT_PENDING`: the work pointer the mechanism gave
/// `ksasl_host_output_set_pending` (NULL when nothing is pending, or if it gave NULL).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_pending_work(c: *const ksasl_client_conn) -> *mut c_void {
    unsafe { c.as_ref() }.map_or(std::ptr::null_mut(), |c| {
        work_pointer(c.inner.pending_work())
    })
}

/// Continues after `KSASL_CLIENT_PENDING` with the mechanism's late answer: `answer` (from
/// `ksasl_host_output_new(0, ...)`) holds what its callback would have set, and `rc` what it
/// would have returned (0, or non-zero with `ksasl_host_output_set_error` for a failure). The
/// answer's content is taken. Outputs and errors as `ksasl_client_conn_handle_frame`; write
/// `ksasl_client_conn_transmit` afterwards. Without pending work (`KSASL_WRONG_STATE`), with a
/// NULL or server answer, nothing changes.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_resume(
    c: *mut ksasl_client_conn,
    answer: *mut ksasl_host_output,
    rc: c_int,
    now_ms: i64,
    event: *mut ksasl_client_event,
    app_frame: *mut *const u8,
    app_len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need(event, "event")?;
        let work = c
            .inner
            .pending_work()
            .cloned()
            .ok_or_else(nothing_pending)?;
        let step = late_client_step(answer, rc, &work)?;
        let ev = c.inner.resume(step, now_ms);
        // A resumption never reports an application frame: there is no frame.
        client_event(c, ev, (std::ptr::null(), 0), event, app_frame, app_len)
    })
}

/// Reports that the broker closed the connection; returns the error to report.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_closed(c: *mut ksasl_client_conn, now_ms: i64) -> ksasl_result {
    with(c, |c| Err(c.inner.connection_closed(now_ms)))
}

/// The next instant to call `ksasl_client_conn_handle_timeout` (-1: none).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_next_deadline(c: *const ksasl_client_conn) -> i64 {
    unsafe { c.as_ref() }
        .and_then(|c| c.inner.next_deadline())
        .unwrap_or(-1)
}

/// Starts a re-authentication if one is due; `*started` (if not NULL) tells whether it did.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_handle_timeout(
    c: *mut ksasl_client_conn,
    now_ms: i64,
    started: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        let s = c.inner.handle_timeout(now_ms)?;
        put_opt(started, as_int(s));
        Ok(())
    })
}

/// Starts a re-authentication now (for example when a tracker asks for one after a
/// credential refresh). The connection must be authenticated and idle. Brokers refuse a
/// re-authentication less than a second after the previous one: then `*started` (may be
/// NULL) is 0 and the re-authentication is scheduled for 1.1 s after the previous start
/// (see `ksasl_client_conn_next_deadline`).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_start_reauthentication(
    c: *mut ksasl_client_conn,
    now_ms: i64,
    started: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        let s = c.inner.start_reauthentication(now_ms)?;
        put_opt(started, as_int(s));
        Ok(())
    })
}

/// 1 if a re-authentication is due at `now_ms` (for synchronous clients).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_reauth_pending(
    c: *const ksasl_client_conn,
    now_ms: i64,
) -> c_int {
    unsafe { c.as_ref() }.map_or(0, |c| as_int(c.inner.reauth_pending(now_ms)))
}

/// Call before sending an application request: `*send_now` is 1 to send it, 0 to hold it
/// until re-authentication completes (a due re-authentication starts here).
#[no_mangle]
pub extern "C" fn ksasl_client_conn_before_request(
    c: *mut ksasl_client_conn,
    now_ms: i64,
    send_now: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        need(send_now, "send_now")?;
        let s = c.inner.before_request(now_ms)?;
        put(send_now, as_int(s));
        Ok(())
    })
}

/// The session: lifetime granted by the broker (0: none), re-authentication time and expiry
/// as the client sees them (-1: none). `KSASL_WRONG_STATE`-class error before authentication.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_session(
    c: *mut ksasl_client_conn,
    lifetime_ms: *mut i64,
    reauth_at_ms: *mut i64,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with(c, |c| {
        let s = *c
            .inner
            .session()
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "not authenticated"))?;
        put_opt(lifetime_ms, s.lifetime_ms);
        put_opt(reauth_at_ms, s.reauth_at_ms.unwrap_or(-1));
        put_opt(expiry_ms, s.expiry_ms.unwrap_or(-1));
        Ok(())
    })
}

/// 1 while a re-authentication is in progress.
#[no_mangle]
pub extern "C" fn ksasl_client_conn_is_reauthenticating(c: *const ksasl_client_conn) -> c_int {
    unsafe { c.as_ref() }.map_or(0, |c| as_int(c.inner.is_reauthenticating()))
}

/// Configuration of server connections (one listener).
pub struct ksasl_server_config {
    pub(crate) inner: Arc<ServerConfig>,
    err: LastError,
}

impl HasError for ksasl_server_config {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a listener configuration enabling every server mechanism of the registry.
#[no_mangle]
pub extern "C" fn ksasl_server_config_new(
    registry: *const ksasl_registry,
    out: *mut *mut ksasl_server_config,
) -> ksasl_result {
    construct(out, || {
        let r = unsafe { registry.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "registry must not be NULL"))?;
        Ok(ksasl_server_config {
            inner: Arc::new(ServerConfig::new(r.inner.clone())),
            err: LastError::default(),
        })
    })
}

/// Frees a listener configuration (connections keep what they need).
#[no_mangle]
pub extern "C" fn ksasl_server_config_free(c: *mut ksasl_server_config) {
    free(c)
}

/// The detail of the configuration's last failure.
#[no_mangle]
pub extern "C" fn ksasl_server_config_last_error(c: *const ksasl_server_config) -> *const c_char {
    unsafe { c.as_ref() }.map_or(c"".as_ptr(), |c| c.err.ptr())
}

/// `connections.max.reauth.ms`, for all mechanisms (`mechanism` NULL) or one.
#[no_mangle]
pub extern "C" fn ksasl_server_config_set_max_reauth_ms(
    c: *mut ksasl_server_config,
    mechanism: *const c_char,
    ms: i64,
) -> ksasl_result {
    with(c, |c| {
        let m = opt_text(mechanism, "mechanism")?.map(str::to_string);
        let cfg = config_mut(&mut c.inner)?;
        match m {
            None => cfg.max_reauth_ms = ms,
            Some(m) => {
                cfg.max_reauth_ms_by_mechanism.insert(m, ms);
            }
        }
        Ok(())
    })
}

/// `connection.failed.authentication.delay.ms` (default 100).
#[no_mangle]
pub extern "C" fn ksasl_server_config_set_failed_auth_delay_ms(
    c: *mut ksasl_server_config,
    ms: i64,
) -> ksasl_result {
    with(c, |c| {
        if ms < 0 {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the delay must not be negative",
            ));
        }
        config_mut(&mut c.inner)?.failed_authentication_delay_ms = ms;
        Ok(())
    })
}

/// After a failed re-authentication: 0 closes (Kafka); a positive delay keeps the session.
#[no_mangle]
pub extern "C" fn ksasl_server_config_set_reauth_retry(
    c: *mut ksasl_server_config,
    initial_delay_ms: i64,
) -> ksasl_result {
    with(c, |c| {
        config_mut(&mut c.inner)?.failed_reauth_policy =
            FailedReauthPolicy::from_initial_delay_ms(initial_delay_ms)?;
        Ok(())
    })
}

/// Adds an API to the ApiVersions response (a broker lists all of its APIs).
#[no_mangle]
pub extern "C" fn ksasl_server_config_add_api_version(
    c: *mut ksasl_server_config,
    api_key: i16,
    min_version: i16,
    max_version: i16,
) -> ksasl_result {
    with(c, |c| {
        config_mut(&mut c.inner)?.set_api_version(api_key, min_version, max_version)
    })
}

/// A metric of every connection of this configuration, by Kafka name
/// (`"successful-reauthentication-total"`, ...), as of `now_ms`.
#[no_mangle]
pub extern "C" fn ksasl_server_config_metric(
    c: *mut ksasl_server_config,
    name: *const c_char,
    now_ms: i64,
    value: *mut f64,
) -> ksasl_result {
    with(c, |c| metric(&c.inner.metrics, name, now_ms, value))
}

/// What the host does after a server frame.
pub type ksasl_server_action = u32;
/// Write the output; keep reading authentication frames.
pub const KSASL_SERVER_ACTION_CONTINUE: ksasl_server_action = 0;
/// Look up a credential (`ksasl_server_conn_credential_request`) and answer it.
pub const KSASL_SERVER_ACTION_NEED_CREDENTIAL: ksasl_server_action = 1;
/// Write the output; the connection is authenticated.
pub const KSASL_SERVER_ACTION_AUTHENTICATED: ksasl_server_action = 2;
/// Write the output; the connection re-authenticated.
pub const KSASL_SERVER_ACTION_REAUTHENTICATED: ksasl_server_action = 3;
/// Write the output; the re-authentication failed but the session holds.
pub const KSASL_SERVER_ACTION_REAUTH_FAILED: ksasl_server_action = 4;
/// At `*deadline_ms` write the output, then close (KIP-306 delay).
pub const KSASL_SERVER_ACTION_FAIL_AT: ksasl_server_action = 5;
/// Close now, writing nothing.
pub const KSASL_SERVER_ACTION_CLOSE_NOW: ksasl_server_action = 6;
/// A host mechanism answers later (`ksasl_host_output_set_pending`): finish its work
/// (`ksasl_server_conn_pending_work`) and continue with `ksasl_server_conn_resume`.
pub const KSASL_SERVER_ACTION_PENDING: ksasl_server_action = 7;

/// The per-request gate's verdicts.
pub type ksasl_gate = u32;
/// Process the request.
pub const KSASL_GATE_PROCESS: ksasl_gate = 0;
/// A SaslHandshake that starts re-authentication: pass the frame to the driver.
pub const KSASL_GATE_BEGIN_REAUTH: ksasl_gate = 1;
/// The session expired: close without a response.
pub const KSASL_GATE_CLOSE_EXPIRED: ksasl_gate = 2;

/// A server connection's SASL state.
pub struct ksasl_server_conn {
    inner: ServerConnection,
    out: Vec<u8>,
    request: Option<(CredentialRequest, CString, CString)>,
    principal: CString,
    mechanism: CString,
    err: LastError,
}

impl HasError for ksasl_server_conn {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a server connection for a listener configuration.
#[no_mangle]
pub extern "C" fn ksasl_server_conn_new(
    config: *const ksasl_server_config,
    out: *mut *mut ksasl_server_conn,
) -> ksasl_result {
    construct(out, || {
        let c = unsafe { config.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "config must not be NULL"))?;
        Ok(ksasl_server_conn {
            inner: ServerConnection::new(c.inner.clone()),
            out: Vec::new(),
            request: None,
            principal: CString::default(),
            mechanism: CString::default(),
            err: LastError::default(),
        })
    })
}

/// Frees a server connection (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_server_conn_free(c: *mut ksasl_server_conn) {
    free(c)
}

/// The detail of the connection's last failure (also set for FAIL_AT and CLOSE_NOW).
#[no_mangle]
pub extern "C" fn ksasl_server_conn_last_error(c: *const ksasl_server_conn) -> *const c_char {
    unsafe { c.as_ref() }.map_or(c"".as_ptr(), |c| c.err.ptr())
}

fn server_output(
    c: &mut ksasl_server_conn,
    o: ServerOutput,
    action: *mut ksasl_server_action,
    out: *mut *const u8,
    out_len: *mut usize,
    deadline_ms: *mut i64,
) {
    c.out = o.frames;
    let (a, deadline) = match o.status {
        ServerAction::Continue => (KSASL_SERVER_ACTION_CONTINUE, -1),
        ServerAction::NeedCredential(req) => {
            let (m, u) = (cstring(&req.mechanism), cstring(&req.username));
            c.request = Some((req, m, u));
            (KSASL_SERVER_ACTION_NEED_CREDENTIAL, -1)
        }
        ServerAction::Authenticated(s) => {
            c.principal = cstring(&s.outcome.principal.to_string());
            c.mechanism = cstring(&s.outcome.mechanism);
            (KSASL_SERVER_ACTION_AUTHENTICATED, -1)
        }
        ServerAction::Reauthenticated(s) => {
            c.principal = cstring(&s.outcome.principal.to_string());
            (KSASL_SERVER_ACTION_REAUTHENTICATED, -1)
        }
        ServerAction::ReauthenticationFailed(e) => {
            c.err.set(&e);
            (KSASL_SERVER_ACTION_REAUTH_FAILED, -1)
        }
        ServerAction::FailAt { deadline_ms, error } => {
            c.err.set(&error);
            (KSASL_SERVER_ACTION_FAIL_AT, deadline_ms)
        }
        ServerAction::CloseNow(e) => {
            c.err.set(&e);
            (KSASL_SERVER_ACTION_CLOSE_NOW, -1)
        }
        ServerAction::Pending(_) => (KSASL_SERVER_ACTION_PENDING, -1),
    };
    put(action, a);
    put(out, c.out.as_ptr());
    put(out_len, c.out.len());
    put_opt(deadline_ms, deadline);
}

/// Handles one authentication frame (without its length prefix). `*action` says what to do;
/// `*out`/`*out_len` are the frames to write (borrowed); `*deadline_ms` (may be NULL) is set
/// for `KSASL_SERVER_ACTION_FAIL_AT`.
#[no_mangle]
pub extern "C" fn ksasl_server_conn_handle_frame(
    c: *mut ksasl_server_conn,
    frame: *const u8,
    frame_len: usize,
    now_ms: i64,
    action: *mut ksasl_server_action,
    out: *mut *const u8,
    out_len: *mut usize,
    deadline_ms: *mut i64,
) -> ksasl_result {
    with(c, |c| {
        need(action, "action")?;
        need(out, "out")?;
        need(out_len, "out_len")?;
        let f = bytes(frame, frame_len, "frame")?;
        let o = c.inner.handle_frame(f, now_ms);
        server_output(c, o, action, out, out_len, deadline_ms);
        Ok(())
    })
}

/// After `KSASL_SERVER_ACTION_PENDING`: the work pointer the mechanism gave
/// `ksasl_host_output_set_pending` (NULL when nothing is pending, or if it gave NULL).
#[no_mangle]
pub extern "C" fn ksasl_server_conn_pending_work(c: *const ksasl_server_conn) -> *mut c_void {
    unsafe { c.as_ref() }.map_or(std::ptr::null_mut(), |c| {
        work_pointer(c.inner.pending_work())
    })
}

/// Continues after `KSASL_SERVER_ACTION_PENDING` with the mechanism's late answer: `answer`
/// (from `ksasl_host_output_new(1, ...)`) holds what its step callback would have set, and
/// `rc` what it would have returned. The answer's content is taken. Outputs as
/// `ksasl_server_conn_handle_frame`: a failed answer fails the exchange as a failed callback
/// does (`KSASL_SERVER_ACTION_FAIL_AT` with Kafka's response). Without pending work
/// (`KSASL_WRONG_STATE`), with a NULL or client answer, an error is returned and nothing
/// changes.
#[no_mangle]
pub extern "C" fn ksasl_server_conn_resume(
    c: *mut ksasl_server_conn,
    answer: *mut ksasl_host_output,
    rc: c_int,
    now_ms: i64,
    action: *mut ksasl_server_action,
    out: *mut *const u8,
    out_len: *mut usize,
    deadline_ms: *mut i64,
) -> ksasl_result {
    with(c, |c| {
        need(action, "action")?;
        need(out, "out")?;
        need(out_len, "out_len")?;
        let work = c
            .inner
            .pending_work()
            .cloned()
            .ok_or_else(nothing_pending)?;
        let step = late_server_step(answer, rc, &work)?;
        let o = c.inner.resume(step, now_ms);
        server_output(c, o, action, out, out_len, deadline_ms);
        Ok(())
    })
}

/// The pending credential request (after `KSASL_SERVER_ACTION_NEED_CREDENTIAL`).
#[no_mangle]
pub extern "C" fn ksasl_server_conn_credential_request(
    c: *mut ksasl_server_conn,
    mechanism: *mut *const c_char,
    username: *mut *const c_char,
    token_authenticated: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        put_request(c.request.as_ref(), mechanism, username, token_authenticated)
    })
}

/// Answers the pending credential request and continues; outputs as `handle_frame`.
#[no_mangle]
pub extern "C" fn ksasl_server_conn_provide_credential(
    c: *mut ksasl_server_conn,
    kind: ksasl_credential_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
    now_ms: i64,
    action: *mut ksasl_server_action,
    out: *mut *const u8,
    out_len: *mut usize,
    deadline_ms: *mut i64,
) -> ksasl_result {
    with(c, |c| {
        need(action, "action")?;
        need(out, "out")?;
        need(out_len, "out_len")?;
        let a = take_answer(&mut c.request, kind, value, expiry_ms, token_owner)?;
        let o = c.inner.provide_credential(a, now_ms);
        server_output(c, o, action, out, out_len, deadline_ms);
        Ok(())
    })
}

/// The per-request gate of an authenticated connection (`KSASL_GATE_*`). Allocation-free.
#[no_mangle]
pub extern "C" fn ksasl_server_conn_gate(
    c: *const ksasl_server_conn,
    api_key: i16,
    now_ms: i64,
) -> ksasl_gate {
    let Some(c) = (unsafe { c.as_ref() }) else {
        return KSASL_GATE_CLOSE_EXPIRED;
    };
    match c.inner.gate(api_key, now_ms) {
        Gate::Process => KSASL_GATE_PROCESS,
        Gate::BeginReauthentication => KSASL_GATE_BEGIN_REAUTH,
        Gate::CloseExpired => KSASL_GATE_CLOSE_EXPIRED,
    }
}

/// 1 when authenticated and no exchange is in progress (requests go through the gate).
#[no_mangle]
pub extern "C" fn ksasl_server_conn_is_ready(c: *const ksasl_server_conn) -> c_int {
    unsafe { c.as_ref() }.map_or(0, |c| as_int(c.inner.is_ready()))
}

/// The authenticated session: principal (`"User:alice"`, borrowed), lifetime sent to the
/// client, and session expiry (-1: never).
#[no_mangle]
pub extern "C" fn ksasl_server_conn_session(
    c: *mut ksasl_server_conn,
    principal: *mut *const c_char,
    lifetime_ms: *mut i64,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with(c, |c| {
        let s = c
            .inner
            .session()
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "not authenticated"))?;
        let (l, e) = (s.lifetime_ms, s.expiry_ms.unwrap_or(-1));
        put_opt(principal, c.principal.as_ptr());
        put_opt(lifetime_ms, l);
        put_opt(expiry_ms, e);
        Ok(())
    })
}

/// 1 when the connection's session logged in with a delegation token (`tokenauth`), which
/// `ksasl_token_authority_handle_request` needs to know; 0 otherwise, before authentication
/// and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_conn_token_authenticated(c: *const ksasl_server_conn) -> c_int {
    unsafe { c.as_ref() }
        .and_then(|c| c.inner.session())
        .map_or(0, |s| as_int(s.outcome.principal.token_authenticated))
}
