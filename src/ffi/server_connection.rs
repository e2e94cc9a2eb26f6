//! `ksasl_server_connection`: a Kafka server connection's SASL state (the broker driver).

use std::ffi::{c_char, c_int, CString};

use super::boundary::*;
use super::client_connection::not_authenticated;
use super::credential_callback::{decode, ksasl_credential_answer_kind, names};
use super::host_output::{ksasl_host_output, late};
use crate::error::{ErrorCode, Result};
use crate::kafka::server::{ServerAction, ServerConnection};
use crate::mech::nothing_requested;

/// What the host does after a server frame (`KSASL_SERVER_ACTION_*`).
pub type ksasl_server_action = u32;
/// The per-request gate's verdict (`KSASL_GATE_*`).
pub type ksasl_gate = u32;

/// A server connection's SASL state.
pub struct ksasl_server_connection {
    pub(crate) inner: ServerConnection,
    pub(crate) out: Vec<u8>,
    /// The pending request's mechanism and username.
    pub(crate) request: (CString, CString),
    /// The session's principal and mechanism.
    pub(crate) session: (CString, CString),
    /// The last action's error: code, message and the text sent to the client.
    pub(crate) reason: (u32, CString, CString),
    /// The last action's error's details (key, value).
    details: Vec<(CString, CString)>,
    err: LastError,
}
handle!(ksasl_server_connection(
    ServerConnection,
    out,
    request,
    session,
    reason,
    details
));

/// Runs `f` and reports its action, the frames the connection queued, and the deadline.
pub(crate) fn output(
    c: *mut ksasl_server_connection,
    (action, out, out_len, deadline_ms): (*mut u32, *mut *const u8, *mut usize, *mut i64),
    f: impl FnOnce(&mut ServerConnection) -> Result<ServerAction>,
) -> ksasl_result {
    with(c, |c| {
        need!(action, out, out_len);
        let a = f(&mut c.inner)?;
        if let ServerAction::NeedCredential(r) = &a {
            c.request = names(r);
        }
        if let Some(s) = a.session() {
            c.session = (
                cstring(&s.outcome.principal.to_string()),
                cstring(&s.outcome.mechanism),
            );
        }
        c.reason = Default::default();
        c.details.clear();
        if let Some(e) = a.error() {
            c.err.set(e);
            let text = cstring(e.client_text().unwrap_or_default());
            c.reason = (e.code().as_u32(), cstring(e.message()), text);
            let detail = |(k, v): &(String, String)| (cstring(k), cstring(v));
            c.details = e.details().iter().map(detail).collect();
        }
        let frames = c.inner.poll_transmit().unwrap_or_default();
        put_message(&mut c.out, Some(frames), out, out_len);
        put(action, a.kind().as_u32());
        Ok(put_opt(deadline_ms, a.deadline_ms().unwrap_or(-1)))
    })
}

/// Continues after `KSASL_SERVER_ACTION_PENDING` with the mechanism's late answer (`answer`
/// from `ksasl_host_output_new(1, ...)`, its content taken; `rc` as the callback would
/// return); outputs as `ksasl_server_connection_handle_frame` (a failed answer fails the
/// exchange with Kafka's response). Without pending work (`KSASL_WRONG_STATE`) or with a NULL
/// or client answer, an error is returned and nothing changes.
#[no_mangle]
pub extern "C" fn ksasl_server_connection_resume(
    c: *mut ksasl_server_connection,
    answer: *mut ksasl_host_output,
    rc: c_int,
    now_ms: i64,
    action: *mut ksasl_server_action,
    out: *mut *const u8,
    out_len: *mut usize,
    deadline_ms: *mut i64,
) -> ksasl_result {
    output(c, (action, out, out_len, deadline_ms), |x| {
        let (a, work) = late(answer, x.pending_work())?;
        Ok(x.resume(a.late_server_step(&work, rc.into())?, now_ms))
    })
}

/// Answers the pending credential request and continues; outputs as
/// `ksasl_server_connection_handle_frame`. A refused answer leaves the request pending.
#[no_mangle]
pub extern "C" fn ksasl_server_connection_provide_credential(
    c: *mut ksasl_server_connection,
    kind: ksasl_credential_answer_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
    now_ms: i64,
    action: *mut ksasl_server_action,
    out: *mut *const u8,
    out_len: *mut usize,
    deadline_ms: *mut i64,
) -> ksasl_result {
    output(c, (action, out, out_len, deadline_ms), |x| {
        let r = x.pending_request().ok_or_else(nothing_requested)?;
        Ok(x.provide_credential(
            decode(r, kind, value, expiry_ms, token_owner)?.now()?,
            now_ms,
        ))
    })
}

/// The authenticated session: principal (`"User:alice"`) and mechanism (borrowed), 1 when it
/// logged in with a delegation token (`tokenauth`), the lifetime sent to the client and the
/// session's expiry (-1: never). Each may be NULL; `KSASL_WRONG_STATE` before authentication.
#[no_mangle]
pub extern "C" fn ksasl_server_connection_session(
    c: *const ksasl_server_connection,
    principal: *mut *const c_char,
    mechanism: *mut *const c_char,
    token_authenticated: *mut c_int,
    lifetime_ms: *mut i64,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with_ref(c, |c| {
        let s = c.inner.session().ok_or_else(not_authenticated)?;
        put_opt(principal, c.session.0.as_ptr());
        put_opt(mechanism, c.session.1.as_ptr());
        put_opt(
            token_authenticated,
            as_int(s.outcome.principal.token_authenticated),
        );
        put_opt(lifetime_ms, s.lifetime_ms);
        Ok(put_opt(expiry_ms, s.expiry_ms.unwrap_or(-1)))
    })
}

/// One structured detail of the last action's error (see `ksasl_server_connection_error`),
/// for example `unknown_user` ("true" when enumeration resistance answered an unknown user),
/// or `api_key` of a request refused during the exchange: borrowed until the next call on the
/// connection; NULL when the error has no such detail, when there is no error, and for NULL
/// arguments.
#[no_mangle]
pub extern "C" fn ksasl_server_connection_error_detail(
    c: *const ksasl_server_connection,
    key: *const c_char,
) -> *const c_char {
    get(c, std::ptr::null(), |c| {
        let Ok(key) = text(key, "key") else {
            return std::ptr::null();
        };
        c.details
            .iter()
            .find(|(k, _)| k.as_bytes() == key.as_bytes())
            .map_or(std::ptr::null(), |(_, v)| v.as_ptr())
    })
}

/// Why the last action ends or fails something (`KSASL_SERVER_ACTION_FAIL_AT`, `_CLOSE_NOW`,
/// `_REAUTH_FAILED`): returns its code (`KSASL_OK` when it had none) and writes its message and
/// the text Kafka sent the client ("" when none), borrowed until the next call on the
/// connection. Both out-parameters may be NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_connection_error(
    c: *const ksasl_server_connection,
    message: *mut *const c_char,
    client_text: *mut *const c_char,
) -> ksasl_result {
    get(c, ErrorCode::NullArgument.as_u32(), |c| {
        put_opt(message, c.reason.1.as_ptr());
        put_opt(client_text, c.reason.2.as_ptr());
        c.reason.0
    })
}
