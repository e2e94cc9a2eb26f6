//! `ksasl_delegation_token_codec`: the client side of Kafka's delegation-token APIs
//! (CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
//! DescribeDelegationToken, api keys 38-41).

use std::ffi::c_char;

use super::boundary::*;
use crate::error::Result;
use crate::token::RequestHeader;

/// Builds delegation-token request frames (with their length prefix) and reads responses
/// (without it, as `ksasl_client_connection_handle_frame` returns them).
pub struct ksasl_delegation_token_codec {
    /// The Kafka error code of the last response read.
    pub(crate) inner: i16,
    pub(crate) out: Vec<u8>,
    err: LastError,
}
handle!(ksasl_delegation_token_codec(i16, out));

type RequestArgs = (i16, i32, *const c_char);

/// Encodes a request and writes the frame (borrowed until the next call on the codec).
pub(crate) fn request(
    c: *mut ksasl_delegation_token_codec,
    (version, correlation_id, client_id): RequestArgs,
    (out, out_len): (*mut *const u8, *mut usize),
    f: impl FnOnce(RequestHeader) -> Result<Vec<u8>>,
) -> ksasl_result {
    with(c, |c| {
        need!(out, out_len);
        c.out = f((version, correlation_id, opt_text(client_id, "client_id")?))?;
        Ok(put_bytes(Some(&c.out), out, out_len))
    })
}

/// Reads a response into `out`, keeping its Kafka error code.
pub(crate) fn response<T>(
    c: *mut ksasl_delegation_token_codec,
    out: *mut T,
    what: &str,
    f: impl FnOnce() -> Result<T>,
) -> ksasl_result {
    with(c, |c| {
        need_ptr(out, what)?;
        let r = f();
        let kafka = r.as_ref().err().and_then(|e| e.detail("kafka_error_code"));
        c.inner = kafka.and_then(|k| k.parse().ok()).unwrap_or(0);
        Ok(put(out, r?))
    })
}
