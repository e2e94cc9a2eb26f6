//! `ksasl_client_exchange`: one client SASL exchange, outside Kafka framing.

use std::ffi::c_int;

use super::boundary::*;
use super::host_output::{ksasl_host_output, late};
use crate::error::Result;
use crate::mech::{ClientExchange, ClientStep};

/// A client exchange for one mechanism.
pub struct ksasl_client_exchange {
    pub(crate) inner: ClientExchange,
    pub(crate) out: Vec<u8>,
    err: LastError,
}
handle!(ksasl_client_exchange(ClientExchange, out));

type StepOut = (*mut *const u8, *mut usize, *mut c_int);

/// Runs one call of the exchange and writes its step: the message (NULL when none) and
/// whether the client side is done.
pub(crate) fn step(
    c: *mut ksasl_client_exchange,
    (out, out_len, done): StepOut,
    f: impl FnOnce(&mut ClientExchange) -> Result<ClientStep>,
) -> ksasl_result {
    with(c, |c| {
        need!(out, out_len, done);
        let (message, is_done) = match f(&mut c.inner)? {
            ClientStep::Send(m) => (Some(m), false),
            ClientStep::Done(m) => (m, true),
            ClientStep::Pending(_) => (None, false),
        };
        let some = message.is_some();
        c.out = message.unwrap_or_default();
        put_bytes(some.then_some(&c.out), out, out_len);
        Ok(put(done, as_int(is_done)))
    })
}

/// Continues a pending start or step with the mechanism's late answer (`answer` from
/// `ksasl_host_output_new(0, ...)`, its content taken; `rc` as the callback would return);
/// outputs as `ksasl_client_exchange_start`. Without pending work (`KSASL_WRONG_STATE`) or
/// with a NULL or server answer, the exchange does not change.
#[no_mangle]
pub extern "C" fn ksasl_client_exchange_resume(
    c: *mut ksasl_client_exchange,
    answer: *mut ksasl_host_output,
    rc: c_int,
    out: *mut *const u8,
    out_len: *mut usize,
    done: *mut c_int,
) -> ksasl_result {
    step(c, (out, out_len, done), |x| {
        let (a, work) = late(answer, x.pending_work())?;
        x.resume(a.late_client_step(&work, rc.into())?)
    })
}
