//! One SASL exchange on either side, outside Kafka framing.

use std::ffi::{c_char, c_int, c_void, CString};

use super::hostmech::{late_client_step, late_server_step, work_pointer};
use super::objects::{ksasl_credential_kind, ksasl_registry, take_answer};
use super::*;
use crate::mech::{
    nothing_pending, AuthOutcome, ClientExchange, ClientStep, CredentialRequest, ServerExchange,
    ServerStep,
};

/// A client exchange for one mechanism.
pub struct ksasl_client {
    inner: ClientExchange,
    out: Vec<u8>,
    err: LastError,
}

impl HasError for ksasl_client {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a client exchange for `mechanism` from the registry's client mechanisms.
#[no_mangle]
pub extern "C" fn ksasl_client_new(
    registry: *const ksasl_registry,
    mechanism: *const c_char,
    out: *mut *mut ksasl_client,
) -> ksasl_result {
    construct(out, || {
        let r = unsafe { registry.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "registry must not be NULL"))?;
        let inner = r.inner.client(text(mechanism, "mechanism")?)?;
        Ok(ksasl_client {
            inner,
            out: Vec::new(),
            err: LastError::default(),
        })
    })
}

/// Frees a client exchange (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_client_free(c: *mut ksasl_client) {
    free(c)
}

/// The detail of the client's last failure.
#[no_mangle]
pub extern "C" fn ksasl_client_last_error(c: *const ksasl_client) -> *const c_char {
    unsafe { c.as_ref() }.map_or(c"".as_ptr(), |c| c.err.ptr())
}

fn client_out(
    c: &mut ksasl_client,
    step: ClientStep,
    out: *mut *const u8,
    out_len: *mut usize,
    done: *mut c_int,
) -> Result<(), Error> {
    let (bytes, is_done) = match step {
        ClientStep::Send(b) => (Some(b), false),
        ClientStep::Done(b) => (b, true),
        ClientStep::Pending(_) => (None, false),
    };
    match bytes {
        Some(b) => {
            c.out = b;
            put(out, c.out.as_ptr());
            put(out_len, c.out.len());
        }
        None => {
            put(out, std::ptr::null());
            put(out_len, 0);
        }
    }
    put(done, as_int(is_done));
    Ok(())
}

/// Produces the first message. `*out`/`*out_len` receive the bytes to send (borrowed until
/// the next call on `c`; `*out` is NULL when there is nothing to send); `*done` is 1 when the
/// client side is complete (the server's verdict is still to come). No message with `*done` 0
/// means a host mechanism answers later: see `ksasl_client_pending_work`.
#[no_mangle]
pub extern "C" fn ksasl_client_start(
    c: *mut ksasl_client,
    now_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
    done: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        need(done, "done")?;
        let step = c.inner.start(now_ms)?;
        client_out(c, step, out, out_len, done)
    })
}

/// Evaluates a server challenge; outputs as `ksasl_client_start`.
#[no_mangle]
pub extern "C" fn ksasl_client_step(
    c: *mut ksasl_client,
    challenge: *const u8,
    challenge_len: usize,
    now_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
    done: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        need(done, "done")?;
        let ch = bytes(challenge, challenge_len, "challenge")?;
        let step = c.inner.step(ch, now_ms)?;
        client_out(c, step, out, out_len, done)
    })
}

/// After a start or step that gave no message and `*done` 0: the mechanism answers later
/// (`ksasl_host_output_set_pending`), and this is the work pointer it gave (NULL if it gave
/// NULL, or when nothing is pending).
#[no_mangle]
pub extern "C" fn ksasl_client_pending_work(c: *const ksasl_client) -> *mut c_void {
    unsafe { c.as_ref() }.map_or(std::ptr::null_mut(), |c| {
        work_pointer(c.inner.pending_work())
    })
}

/// Continues a pending start or step with the mechanism's late answer (`answer` from
/// `ksasl_host_output_new(0, ...)`, its content taken; `rc` as the callback would have
/// returned); outputs as `ksasl_client_start`. Without pending work (`KSASL_WRONG_STATE`), with
/// a NULL or server answer, nothing changes.
#[no_mangle]
pub extern "C" fn ksasl_client_resume(
    c: *mut ksasl_client,
    answer: *mut ksasl_host_output,
    rc: c_int,
    out: *mut *const u8,
    out_len: *mut usize,
    done: *mut c_int,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        need(done, "done")?;
        let work = c
            .inner
            .pending_work()
            .cloned()
            .ok_or_else(nothing_pending)?;
        let step = late_client_step(answer, rc, &work)?;
        let step = c.inner.resume(step)?;
        client_out(c, step, out, out_len, done)
    })
}

/// Reports that the server failed the exchange (with its message, or NULL). Returns the
/// resulting error code; the detail is in `ksasl_client_last_error`.
#[no_mangle]
pub extern "C" fn ksasl_client_server_failed(
    c: *mut ksasl_client,
    server_message: *const c_char,
) -> ksasl_result {
    with(c, |c| {
        let m = opt_text(server_message, "server_message")?;
        Err(c.inner.server_failed(m))
    })
}

/// What a server step produced.
pub type ksasl_server_status = u32;
/// Send the output as a challenge and wait for the client.
pub const KSASL_SERVER_CHALLENGE: ksasl_server_status = 1;
/// A credential is needed: see `ksasl_server_credential_request`, answer with
/// `ksasl_server_provide_credential`.
pub const KSASL_SERVER_NEED_CREDENTIAL: ksasl_server_status = 2;
/// The client is authenticated; send the output (if any) as the last message.
pub const KSASL_SERVER_DONE: ksasl_server_status = 3;
/// A host mechanism answers later: see `ksasl_server_pending_work`, continue with
/// `ksasl_server_resume`.
pub const KSASL_SERVER_PENDING: ksasl_server_status = 4;

/// A server exchange for one mechanism.
pub struct ksasl_server {
    inner: ServerExchange,
    out: Vec<u8>,
    request: Option<(CredentialRequest, CString, CString)>,
    outcome: Option<(AuthOutcome, CString, CString, CString)>,
    client_text: CString,
    err: LastError,
}

impl HasError for ksasl_server {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a server exchange for `mechanism` from the registry's server mechanisms (with the
/// registry's store or credential callback).
#[no_mangle]
pub extern "C" fn ksasl_server_new(
    registry: *const ksasl_registry,
    mechanism: *const c_char,
    out: *mut *mut ksasl_server,
) -> ksasl_result {
    construct(out, || {
        let r = unsafe { registry.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "registry must not be NULL"))?;
        let inner = r.inner.server(text(mechanism, "mechanism")?)?;
        Ok(ksasl_server {
            inner,
            out: Vec::new(),
            request: None,
            outcome: None,
            client_text: CString::default(),
            err: LastError::default(),
        })
    })
}

/// Frees a server exchange (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_server_free(s: *mut ksasl_server) {
    free(s)
}

/// The detail of the server's last failure.
#[no_mangle]
pub extern "C" fn ksasl_server_last_error(s: *const ksasl_server) -> *const c_char {
    unsafe { s.as_ref() }.map_or(c"".as_ptr(), |s| s.err.ptr())
}

/// After a failed step: the text a Kafka broker sends the client (Kafka's generic sentence
/// unless the mechanism discloses a specific one).
#[no_mangle]
pub extern "C" fn ksasl_server_client_message(s: *const ksasl_server) -> *const c_char {
    unsafe { s.as_ref() }.map_or(c"".as_ptr(), |s| s.client_text.as_ptr())
}

fn server_out(
    s: &mut ksasl_server,
    r: crate::Result<ServerStep>,
    status: *mut ksasl_server_status,
    out: *mut *const u8,
    out_len: *mut usize,
) -> Result<(), Error> {
    let step = match r {
        Ok(step) => step,
        Err(e) => {
            s.client_text = cstring(&e.client_message(s.inner.mechanism(), false));
            return Err(e);
        }
    };
    let (st, bytes) = match step {
        ServerStep::Challenge(b) => (KSASL_SERVER_CHALLENGE, Some(b)),
        ServerStep::NeedCredential(req) => {
            let (m, u) = (cstring(&req.mechanism), cstring(&req.username));
            s.request = Some((req, m, u));
            (KSASL_SERVER_NEED_CREDENTIAL, None)
        }
        ServerStep::Done { message, outcome } => {
            let p = cstring(&outcome.principal.to_string());
            let n = cstring(&outcome.principal.name);
            let m = cstring(&outcome.mechanism);
            s.outcome = Some((outcome, p, n, m));
            (KSASL_SERVER_DONE, message)
        }
        ServerStep::Pending(_) => (KSASL_SERVER_PENDING, None),
    };
    match bytes {
        Some(b) => {
            s.out = b;
            put(out, s.out.as_ptr());
            put(out_len, s.out.len());
        }
        None => {
            put(out, std::ptr::null());
            put(out_len, 0);
        }
    }
    put(status, st);
    Ok(())
}

/// Evaluates one client message: `*status` is one of `KSASL_SERVER_*`, `*out`/`*out_len` the
/// bytes to send (borrowed; NULL when none).
#[no_mangle]
pub extern "C" fn ksasl_server_step(
    s: *mut ksasl_server,
    response: *const u8,
    response_len: usize,
    now_ms: i64,
    status: *mut ksasl_server_status,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(s, |s| {
        need(status, "status")?;
        need(out, "out")?;
        need(out_len, "out_len")?;
        let msg = bytes(response, response_len, "response")?;
        let r = s.inner.step(msg, now_ms);
        server_out(s, r, status, out, out_len)
    })
}

/// After `KSASL_SERVER_PENDING`: the work pointer the mechanism gave
/// `ksasl_host_output_set_pending` (NULL if it gave NULL, or when nothing is pending).
#[no_mangle]
pub extern "C" fn ksasl_server_pending_work(s: *const ksasl_server) -> *mut c_void {
    unsafe { s.as_ref() }.map_or(std::ptr::null_mut(), |s| {
        work_pointer(s.inner.pending_work())
    })
}

/// Continues after `KSASL_SERVER_PENDING` with the mechanism's late answer (`answer` from
/// `ksasl_host_output_new(1, ...)`, its content taken; `rc` as the step callback would have
/// returned); outputs as `ksasl_server_step`. Without pending work (`KSASL_WRONG_STATE`), with
/// a NULL or client answer, nothing changes.
#[no_mangle]
pub extern "C" fn ksasl_server_resume(
    s: *mut ksasl_server,
    answer: *mut ksasl_host_output,
    rc: c_int,
    now_ms: i64,
    status: *mut ksasl_server_status,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(s, |s| {
        need(status, "status")?;
        need(out, "out")?;
        need(out_len, "out_len")?;
        let work = s
            .inner
            .pending_work()
            .cloned()
            .ok_or_else(nothing_pending)?;
        let step = late_server_step(answer, rc, &work)?;
        let r = s.inner.resume(step, now_ms);
        server_out(s, r, status, out, out_len)
    })
}

/// The pending credential request (after `KSASL_SERVER_NEED_CREDENTIAL`): mechanism,
/// username (borrowed) and whether it is a delegation-token login.
#[no_mangle]
pub extern "C" fn ksasl_server_credential_request(
    s: *mut ksasl_server,
    mechanism: *mut *const c_char,
    username: *mut *const c_char,
    token_authenticated: *mut c_int,
) -> ksasl_result {
    with(s, |s| {
        put_request(s.request.as_ref(), mechanism, username, token_authenticated)
    })
}

/// Answers the pending credential request (`kind`: `KSASL_CREDENTIAL_PASSWORD`, `_SCRAM`,
/// `_UNKNOWN` or `_UNAVAILABLE`; see `ksasl_credential_answer_set`) and continues; outputs as
/// `ksasl_server_step`.
#[no_mangle]
pub extern "C" fn ksasl_server_provide_credential(
    s: *mut ksasl_server,
    kind: ksasl_credential_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
    now_ms: i64,
    status: *mut ksasl_server_status,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(s, |s| {
        need(status, "status")?;
        need(out, "out")?;
        need(out_len, "out_len")?;
        let a = take_answer(&mut s.request, kind, value, expiry_ms, token_owner)?;
        let r = s.inner.provide_credential(a, now_ms);
        server_out(s, r, status, out, out_len)
    })
}

/// After `KSASL_SERVER_DONE`: the principal (`"User:alice"`), its name, the mechanism
/// (borrowed), the credential expiry (-1: none) and whether a delegation token was used.
#[no_mangle]
pub extern "C" fn ksasl_server_outcome(
    s: *mut ksasl_server,
    principal: *mut *const c_char,
    principal_name: *mut *const c_char,
    mechanism: *mut *const c_char,
    credential_expiry_ms: *mut i64,
    token_authenticated: *mut c_int,
) -> ksasl_result {
    with(s, |s| {
        let (o, p, n, m) = s
            .outcome
            .as_ref()
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "the exchange has not completed"))?;
        put_opt(principal, p.as_ptr());
        put_opt(principal_name, n.as_ptr());
        put_opt(mechanism, m.as_ptr());
        put_opt(credential_expiry_ms, o.credential_expiry_ms.unwrap_or(-1));
        put_opt(token_authenticated, as_int(o.principal.token_authenticated));
        Ok(())
    })
}
