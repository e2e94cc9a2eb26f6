//! `ksasl_server_connection`: a Kafka server connection's SASL state (the broker driver).

use std::ffi::{c_char, CString};

use super::boundary::*;
use super::credential_callback::names;
use crate::error::{ErrorCode, Result};
use crate::kafka::server::{ServerAction, ServerConnection};

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
