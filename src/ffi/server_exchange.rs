//! `ksasl_server_exchange`: one server SASL exchange, outside Kafka framing.

use std::ffi::CString;

use super::boundary::*;
use super::credential_callback::names;
use crate::error::Result;
use crate::mech::{ServerExchange, ServerStep};
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
