//! `ksasl_oauth_verdict` and `ksasl_oauth_validator_cb`: OAUTHBEARER tokens validated by the
//! host, through the core's `HostTokenValidator`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use super::boundary::*;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::oauthbearer::{HostTokenValidator, TokenValidator};

/// Where a validator callback writes its verdict.
pub struct ksasl_oauth_verdict(Option<Result<Option<(String, i64)>>>);

/// Accepts the token: its principal and absolute expiry (ms). An empty principal rejects it.
#[no_mangle]
pub extern "C" fn ksasl_oauth_verdict_accept(
    v: *mut ksasl_oauth_verdict,
    principal: *const c_char,
    expiry_ms: i64,
) -> ksasl_result {
    with_thread(|| {
        need_ptr(v, "verdict")?;
        let p = text(principal, "principal")?.to_string();
        put(unsafe { &mut (*v).0 }, Some(Ok(Some((p, expiry_ms)))));
        Ok(())
    })
}

/// Rejects the token; `reason` (may be NULL) stays on the server side, the client gets
/// `{"status":"invalid_token"}`.
#[no_mangle]
pub extern "C" fn ksasl_oauth_verdict_reject(
    v: *mut ksasl_oauth_verdict,
    reason: *const c_char,
) -> ksasl_result {
    with_thread(|| {
        need_ptr(v, "verdict")?;
        let r = opt_text(reason, "reason").ok().flatten();
        let e = r.map(|r| Error::new(ErrorCode::TokenRejected, r));
        put(unsafe { &mut (*v).0 }, Some(e.map_or(Ok(None), Err)));
        Ok(())
    })
}

/// A token validator: judge `token` at `now_ms` and answer with `ksasl_oauth_verdict_accept`
/// or `_reject`; return 0 (non-zero rejects the token).
pub type ksasl_oauth_validator_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        token: *const c_char,
        now_ms: i64,
        verdict: *mut ksasl_oauth_verdict,
    ) -> c_int,
>;

/// The validator that calls a C callback.
pub(crate) fn validator(
    cb: ksasl_oauth_validator_cb,
    ud: Userdata,
) -> Result<Arc<dyn TokenValidator>> {
    let cb = callback(cb)?;
    Ok(Arc::new(HostTokenValidator(move |token: &str, now_ms| {
        let (t, mut v) = (cstring(token), ksasl_oauth_verdict(None));
        match unsafe { cb(ud.ptr(), t.as_ptr(), now_ms, &mut v) } {
            0 => v.0.unwrap_or_else(|| {
                Err(Error::misuse(
                    "the token validator callback gave no verdict",
                ))
            }),
            rc => Err(Error::misuse(format!(
                "the token validator callback returned {rc}"
            ))),
        }
    })))
}
