//! `ksasl_credential_request` and `ksasl_credential_answer`: the credential callback's view of
//! a lookup, and the decoding of the host's answers (also for the pull form).

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use super::boundary::*;
use crate::credential::{
    CredentialAnswer, CredentialAnswerKind, CredentialLookup, CredentialRequest, HostLookup, Lookup,
};
use crate::error::{Error, Result};

/// How a host answers a credential request (`KSASL_CREDENTIAL_ANSWER_*`).
pub type ksasl_credential_answer_kind = u32;

/// Decodes a C answer to `request` (`expiry_ms` < 0: none; `token_owner` NULL: a user).
pub(crate) fn decode(
    request: &CredentialRequest,
    kind: ksasl_credential_answer_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
) -> Result<Lookup> {
    let kind = CredentialAnswerKind::try_from_u32(kind)?;
    let (value, owner) = (
        opt_text(value, "value")?,
        opt_text(token_owner, "token_owner")?,
    );
    CredentialAnswer::decode(request, kind, value, opt_ms(expiry_ms), owner)
}

/// Writes a pending request's mechanism and username (borrowed from `names`) and
/// delegation-token flag.
pub(crate) fn put_request(
    request: Option<&CredentialRequest>,
    (m, u): &(CString, CString),
    (mechanism, username, token_authenticated): (
        *mut *const c_char,
        *mut *const c_char,
        *mut c_int,
    ),
) -> Result<()> {
    need!(mechanism, username, token_authenticated);
    let r = request.ok_or_else(crate::mech::nothing_requested)?;
    put(mechanism, m.as_ptr());
    put(username, u.as_ptr());
    Ok(put(token_authenticated, as_int(r.token_authenticated)))
}

/// The C strings of a request's mechanism and username.
pub(crate) fn names(r: &CredentialRequest) -> (CString, CString) {
    (cstring(&r.mechanism), cstring(&r.username))
}

/// A credential request, as a credential callback sees it.
pub struct ksasl_credential_request {
    pub(crate) inner: CredentialRequest,
    pub(crate) names: (CString, CString),
}

/// Where a credential callback writes its answer.
pub struct ksasl_credential_answer {
    pub(crate) request: CredentialRequest,
    pub(crate) answer: Option<Result<Lookup>>,
}

/// Answers a credential request from inside the callback (the last answer counts): `kind` is
/// a `KSASL_CREDENTIAL_ANSWER_*`; `value` the password, Kafka's SCRAM text or the reason;
/// `expiry_ms` < 0 means none; `token_owner` (NULL for users) marks a delegation token.
#[no_mangle]
pub extern "C" fn ksasl_credential_answer_set(
    a: *mut ksasl_credential_answer,
    kind: ksasl_credential_answer_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
) -> ksasl_result {
    with_thread(|| {
        need_ptr(a, "answer")?;
        let a = unsafe { &mut *a };
        let r = decode(&a.request, kind, value, expiry_ms, token_owner);
        let failed = r.as_ref().err().cloned();
        a.answer = Some(r);
        failed.map_or(Ok(()), Err)
    })
}

/// A credential callback: look `request` up and answer with `ksasl_credential_answer_set`;
/// return 0, or non-zero when the lookup failed (the login then fails as "credentials could
/// not be verified"). It may be called from any thread that steps a server.
pub type ksasl_credential_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        request: *const ksasl_credential_request,
        answer: *mut ksasl_credential_answer,
    ) -> c_int,
>;

/// The credential lookup that calls a C callback.
pub(crate) fn lookup(cb: ksasl_credential_cb, ud: Userdata) -> Result<Arc<dyn CredentialLookup>> {
    let cb = callback(cb)?;
    Ok(Arc::new(HostLookup(move |req: &CredentialRequest| {
        let request = ksasl_credential_request {
            inner: req.clone(),
            names: names(req),
        };
        let mut answer = ksasl_credential_answer {
            request: req.clone(),
            answer: None,
        };
        match unsafe { cb(ud.ptr(), &request, &mut answer) } {
            0 => answer
                .answer
                .unwrap_or_else(|| Err(Error::misuse("the credential callback gave no answer"))),
            rc => Err(Error::misuse(format!(
                "the credential callback returned {rc}"
            ))),
        }
    })))
}
