//! `ksasl_server_exchange`: one server SASL exchange, outside Kafka framing.

use std::ffi::{c_char, c_int, CString};

use super::boundary::*;
use super::credential_callback::{decode, ksasl_credential_answer_kind, names};
use super::host_output::{ksasl_host_output, late};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::{nothing_requested, ServerExchange, ServerStep};
use crate::wire::ServerStepKind;

/// What a server step produced (`KSASL_SERVER_STEP_*`).
pub type ksasl_server_step_kind = u32;

/// A server exchange for one mechanism.
pub struct ksasl_server_exchange {
    pub(crate) inner: ServerExchange,
    pub(crate) out: Vec<u8>,
    /// The pending request's mechanism and username.
    pub(crate) request: (CString, CString),
    /// The outcome's principal, principal name and mechanism.
    pub(crate) outcome: [CString; 3],
    pub(crate) client_message: CString,
    err: LastError,
}
handle!(ksasl_server_exchange(
    ServerExchange,
    out,
    request,
    outcome,
    client_message
));

type StepOut = (*mut ksasl_server_step_kind, *mut *const u8, *mut usize);

/// Runs one call of the exchange and writes its step to the out-parameters.
pub(crate) fn step(
    s: *mut ksasl_server_exchange,
    (kind, out, out_len): StepOut,
    f: impl FnOnce(&mut ServerExchange) -> Result<ServerStep>,
) -> ksasl_result {
    with(s, |s| {
        need!(kind, out, out_len);
        let step = f(&mut s.inner);
        s.client_message = cstring(&s.inner.client_message().unwrap_or_default());
        let (k, message) = match step? {
            ServerStep::Challenge(m) => (ServerStepKind::Challenge, Some(m)),
            ServerStep::NeedCredential(r) => {
                s.request = names(&r);
                (ServerStepKind::NeedCredential, None)
            }
            ServerStep::Done {
                message: m,
                outcome: o,
            } => {
                let p = &o.principal;
                s.outcome = [&p.to_string(), &p.name, &o.mechanism].map(|t| cstring(t));
                (ServerStepKind::Done, m)
            }
            ServerStep::Pending(_) => (ServerStepKind::Pending, None),
        };
        put_message(&mut s.out, message, out, out_len);
        Ok(put(kind, k.as_u32()))
    })
}

/// Continues after `KSASL_SERVER_STEP_PENDING` with the mechanism's late answer (`answer` from
/// `ksasl_host_output_new(1, ...)`, its content taken; `rc` as the callback would return);
/// outputs as `ksasl_server_exchange_step`. Without pending work (`KSASL_WRONG_STATE`) or with
/// a NULL or client answer, the exchange does not change.
#[no_mangle]
pub extern "C" fn ksasl_server_exchange_resume(
    s: *mut ksasl_server_exchange,
    answer: *mut ksasl_host_output,
    rc: c_int,
    now_ms: i64,
    kind: *mut ksasl_server_step_kind,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    step(s, (kind, out, out_len), |x| {
        let (a, work) = late(answer, x.pending_work())?;
        x.resume(a.late_server_step(&work, rc.into())?, now_ms)
    })
}

/// Answers the pending credential request (`kind`: a `KSASL_CREDENTIAL_ANSWER_*` other than
/// `_LATER`; see `ksasl_credential_answer_set`) and continues; outputs as
/// `ksasl_server_exchange_step`. A refused answer leaves the request pending.
#[no_mangle]
pub extern "C" fn ksasl_server_exchange_provide_credential(
    s: *mut ksasl_server_exchange,
    kind: ksasl_credential_answer_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
    now_ms: i64,
    step_kind: *mut ksasl_server_step_kind,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    step(s, (step_kind, out, out_len), |x| {
        let r = x.pending_request().ok_or_else(nothing_requested)?;
        x.provide_credential(
            decode(r, kind, value, expiry_ms, token_owner)?.now()?,
            now_ms,
        )
    })
}

/// After `KSASL_SERVER_STEP_DONE`: the principal (`"User:alice"`), its name and the mechanism
/// (borrowed), the credential's expiry (-1: none), whether a delegation token was used, and
/// the KIP-368 session Kafka grants: its lifetime (0: none; from the credential's expiry and
/// `ksasl_server_exchange_set_max_reauth_ms`) and expiry (-1: never). Each may be NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_exchange_outcome(
    s: *const ksasl_server_exchange,
    principal: *mut *const c_char,
    principal_name: *mut *const c_char,
    mechanism: *mut *const c_char,
    credential_expiry_ms: *mut i64,
    token_authenticated: *mut c_int,
    session_lifetime_ms: *mut i64,
    session_expiry_ms: *mut i64,
) -> ksasl_result {
    with_ref(s, |s| {
        let done = || Error::new(ErrorCode::WrongState, "the exchange has not completed");
        let session = s.inner.session().ok_or_else(done)?;
        let (o, [p, n, m]) = (&session.outcome, &s.outcome);
        put_opt(principal, p.as_ptr());
        put_opt(principal_name, n.as_ptr());
        put_opt(mechanism, m.as_ptr());
        put_opt(credential_expiry_ms, o.credential_expiry_ms.unwrap_or(-1));
        put_opt(token_authenticated, as_int(o.principal.token_authenticated));
        put_opt(session_lifetime_ms, session.lifetime_ms);
        Ok(put_opt(session_expiry_ms, session.expiry_ms.unwrap_or(-1)))
    })
}
