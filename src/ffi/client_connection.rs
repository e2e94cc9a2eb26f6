//! `ksasl_client_connection`: a Kafka client connection's SASL state (the client driver).

use std::ffi::c_int;

use super::boundary::*;
use super::host_output::{ksasl_host_output, late};
use crate::error::{Error, ErrorCode, Result};
use crate::kafka::client::{ClientConnection, ClientEvent};

/// What a received frame meant (`KSASL_CLIENT_EVENT_*`).
pub type ksasl_client_event = u32;

/// A client connection's SASL state.
pub struct ksasl_client_connection {
    pub(crate) inner: ClientConnection,
    pub(crate) out: Vec<u8>,
    err: LastError,
}
handle!(ksasl_client_connection(ClientConnection, out));

/// The bytes to write to the socket (length-prefixed frames, borrowed; `*len` 0 when none).
#[no_mangle]
pub extern "C" fn ksasl_client_connection_transmit(
    c: *mut ksasl_client_connection,
    out: *mut *const u8,
    len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need!(out, len);
        Ok(put_message(
            &mut c.out,
            Some(c.inner.poll_transmit().unwrap_or_default()),
            out,
            len,
        ))
    })
}

/// Runs `f` and reports its event; an application response is `frame` itself (not copied).
pub(crate) fn event(
    c: *mut ksasl_client_connection,
    frame: (*const u8, usize),
    (event, app_frame, app_len): (*mut ksasl_client_event, *mut *const u8, *mut usize),
    f: impl FnOnce(&mut ClientConnection) -> Result<ClientEvent>,
) -> ksasl_result {
    with(c, |c| {
        need!(event);
        let ev = f(&mut c.inner)?;
        match &ev {
            ClientEvent::Application => {
                need!(app_frame, app_len);
                put(app_frame, frame.0);
                put(app_len, frame.1);
            }
            ClientEvent::ReauthenticationFailed { error, .. } => c.err.set(error),
            ClientEvent::Failed(e) => return Err(e.clone()),
            _ => {}
        }
        Ok(put(event, ev.kind().as_u32()))
    })
}

/// Continues after `KSASL_CLIENT_EVENT_PENDING` with the mechanism's late answer (`answer`
/// from `ksasl_host_output_new(0, ...)`, its content taken; `rc` as the callback would
/// return); outputs and errors as `ksasl_client_connection_handle_frame`, then write
/// `ksasl_client_connection_transmit`. Without pending work (`KSASL_WRONG_STATE`) or with a
/// NULL or server answer, nothing changes.
#[no_mangle]
pub extern "C" fn ksasl_client_connection_resume(
    c: *mut ksasl_client_connection,
    answer: *mut ksasl_host_output,
    rc: c_int,
    now_ms: i64,
    event_kind: *mut ksasl_client_event,
    app_frame: *mut *const u8,
    app_len: *mut usize,
) -> ksasl_result {
    event(
        c,
        (std::ptr::null(), 0),
        (event_kind, app_frame, app_len),
        |x| {
            let (a, work) = late(answer, x.pending_work())?;
            Ok(x.resume(a.late_client_step(&work, rc.into())?, now_ms))
        },
    )
}

/// Call before sending an application request: `*send_now` 1 sends it, 0 holds it until the
/// re-authentication completes (a due one starts here).
#[no_mangle]
pub extern "C" fn ksasl_client_connection_before_request(
    c: *mut ksasl_client_connection,
    now_ms: i64,
    send_now: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        need!(send_now);
        Ok(put(send_now, as_int(c.inner.before_request(now_ms)?)))
    })
}

/// The session: the lifetime the broker granted (0: none), and when this client
/// re-authenticates and the broker stops accepting it (-1: never). Each may be NULL;
/// `KSASL_WRONG_STATE` before authentication.
#[no_mangle]
pub extern "C" fn ksasl_client_connection_session(
    c: *const ksasl_client_connection,
    lifetime_ms: *mut i64,
    reauth_at_ms: *mut i64,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with_ref(c, |c| {
        let s = c.inner.session().ok_or_else(not_authenticated)?;
        put_opt(lifetime_ms, s.lifetime_ms);
        put_opt(reauth_at_ms, s.reauth_at_ms.unwrap_or(-1));
        Ok(put_opt(expiry_ms, s.expiry_ms.unwrap_or(-1)))
    })
}

pub(crate) fn not_authenticated() -> Error {
    Error::new(ErrorCode::WrongState, "not authenticated")
}
