//! `ksasl_host_output`: where a host mechanism's callback (or a late answer) writes its answer;
//! the core's `HostOutput` checks every use and turns the answer into the mechanism's step.

use std::ffi::{c_char, c_int, c_void, CStr};

use super::boundary::*;
use crate::error::{ErrorCode, Result};
use crate::mech::{nothing_pending, HostOutput, HostWork};

/// Where a host mechanism's callback writes its answer; valid during the callback only.
///
/// A client callback sets a message (`ksasl_host_output_set_message`) and/or says the client
/// side is complete (`ksasl_host_output_set_done`); a server callback sets a challenge, or
/// authenticates the client (`ksasl_host_output_set_authenticated`, after an optional last
/// message). A failure is `ksasl_host_output_set_error` and a non-zero return. Nothing may be
/// set after completing or failing. Instead, a callback may say the answer comes later
/// (`ksasl_host_output_set_pending`); the host then writes it into an output of its own
/// (`ksasl_host_output_new`) and hands that to the connection's or exchange's `resume`.
pub struct ksasl_host_output(pub(crate) HostOutput);

/// The host's work pointer of a pending step, as the core keeps it.
pub(crate) struct CWork(pub(crate) usize);

/// The host's pointer of a pending step (NULL when none, or when the host gave NULL).
pub(crate) fn work_pointer(work: Option<&HostWork>) -> *mut c_void {
    let w = work.and_then(|w| w.downcast_ref::<CWork>());
    w.map_or(std::ptr::null_mut(), |w| w.0 as *mut c_void)
}

/// Calls a host callback with an output standing for `out`.
pub(crate) fn call(out: &mut HostOutput, f: impl FnOnce(*mut ksasl_host_output) -> c_int) -> i64 {
    let empty = HostOutput::new(out.is_server());
    let mut o = ksasl_host_output(std::mem::replace(out, empty));
    let rc = f(&mut o);
    *out = o.0;
    rc.into()
}

/// Takes the late answer in `answer` (leaving it empty for reuse) for the pending `work`; an
/// error is a misuse, and nothing changes.
pub(crate) fn late(
    a: *mut ksasl_host_output,
    work: Option<&HostWork>,
) -> Result<(HostOutput, HostWork)> {
    let work = work.cloned().ok_or_else(nothing_pending)?;
    let a = &mut unsafe { a.as_mut() }.ok_or_else(|| arg_null("answer"))?.0;
    let empty = HostOutput::new(a.is_server());
    Ok((std::mem::replace(a, empty), work))
}

/// Runs a setter; a wrong use also fails the step (`KSASL_HOST_MECHANISM_FAILED`).
pub(crate) fn set(
    out: *mut ksasl_host_output,
    f: impl FnOnce(&mut HostOutput) -> Result<()>,
) -> ksasl_result {
    let r = unsafe { out.as_mut() }.map_or(Err(ErrorCode::NullArgument), |o| {
        f(&mut o.0).map_err(|e| e.code())
    });
    r.map_or_else(ErrorCode::as_u32, |()| 0)
}

/// A C string given to a setter, refused (and recorded) when NULL.
fn setter_text<'a>(o: &mut HostOutput, p: *const c_char, what: &str) -> Result<&'a CStr> {
    match p.is_null() {
        true => Err(o.refuse(ErrorCode::NullArgument, format!("gave a NULL {what}"))),
        false => Ok(unsafe { CStr::from_ptr(p) }),
    }
}

/// Sets the message to send: the client's next message, or the server's challenge (or last
/// message before `ksasl_host_output_set_authenticated`). NULL is allowed when `len` is 0.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_message(
    out: *mut ksasl_host_output,
    message: *const u8,
    len: usize,
) -> ksasl_result {
    set(out, |o| match bytes(message, len, "message") {
        Ok(m) => o.set_message(m),
        Err(_) => Err(o.refuse(ErrorCode::NullArgument, "gave a NULL message with a length")),
    })
}

/// Server mechanisms only: the client is authenticated as `authorization_id` (UTF-8, not
/// empty; the principal is `User:<authorization_id>`); `credential_expiry_ms` is the absolute
/// expiry of the credential used, bounding the KIP-368 session (< 0: none).
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_authenticated(
    out: *mut ksasl_host_output,
    authorization_id: *const c_char,
    credential_expiry_ms: i64,
) -> ksasl_result {
    set(out, |o| {
        match setter_text(o, authorization_id, "authorization id")?.to_str() {
            Ok(id) => o.set_authenticated(id, opt_ms(credential_expiry_ms)),
            Err(_) => Err(o.refuse(
                ErrorCode::HostMechanismFailed,
                "gave a non-UTF-8 authorization id",
            )),
        }
    })
}

/// Fails the step with `message` (kept in the error the library reports; the client is sent
/// only Kafka's generic sentence), reported as `code`, one of the library's codes (say
/// `KSASL_UNKNOWN_USER`), or 0 for `KSASL_HOST_MECHANISM_FAILED`. The first failure is kept.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_error(
    out: *mut ksasl_host_output,
    code: ksasl_result,
    message: *const c_char,
) -> ksasl_result {
    set(out, |o| {
        let m = setter_text(o, message, "error message")?.to_string_lossy();
        match code {
            0 => Ok(o.set_error(None, &m)),
            c => o.set_error_code(c, &m),
        }
    })
}
