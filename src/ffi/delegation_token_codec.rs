//! `ksasl_delegation_token_codec`: the client side of Kafka's delegation-token APIs
//! (CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
//! DescribeDelegationToken, api keys 38-41).

use std::ffi::c_char;

use super::boundary::*;
use super::delegation_token::*;
use crate::error::Result;
use crate::token::{change_token_request, create_token_request, describe_tokens_request};
use crate::token::{token_from_create_frame, tokens_from_describe_response, RequestHeader};

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
fn request(
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

/// A CreateDelegationToken request frame (`version` 0-3): `owner` (v3+; NULL: the
/// requester), the `n_renewers` renewers, `max_lifetime_ms` (-1: the broker's default) and
/// `client_id` (may be NULL).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_codec_create_request(
    c: *mut ksasl_delegation_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    owner: *const c_char,
    renewers: *const *const c_char,
    n_renewers: usize,
    max_lifetime_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    request(
        c,
        (version, correlation_id, client_id),
        (out, out_len),
        |h| {
            let (o, r) = (
                opt_text(owner, "owner")?,
                texts(renewers, n_renewers, "renewer")?,
            );
            create_token_request(h, o, &r, max_lifetime_ms)
        },
    )
}

/// A RenewDelegationToken request frame (`version` 0-2) for the token with this HMAC;
/// `renew_period_ms` <= 0 asks for the broker's default period.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_codec_renew_request(
    c: *mut ksasl_delegation_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    hmac: *const u8,
    hmac_len: usize,
    renew_period_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    request(
        c,
        (version, correlation_id, client_id),
        (out, out_len),
        |h| change_token_request(h, false, bytes(hmac, hmac_len, "hmac")?, renew_period_ms),
    )
}

/// An ExpireDelegationToken request frame (`version` 0-2) for the token with this HMAC; a
/// negative `expiry_period_ms` expires it at once.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_codec_expire_request(
    c: *mut ksasl_delegation_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    hmac: *const u8,
    hmac_len: usize,
    expiry_period_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    request(
        c,
        (version, correlation_id, client_id),
        (out, out_len),
        |h| change_token_request(h, true, bytes(hmac, hmac_len, "hmac")?, expiry_period_ms),
    )
}

/// A DescribeDelegationToken request frame (`version` 0-3) for the tokens of the `n_owners`
/// owners; `owners` NULL (with `n_owners` 0) asks for every token the caller may see.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_codec_describe_request(
    c: *mut ksasl_delegation_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    owners: *const *const c_char,
    n_owners: usize,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    request(
        c,
        (version, correlation_id, client_id),
        (out, out_len),
        |h| describe_tokens_request(h, opt_texts(owners, n_owners, "owner")?.as_deref()),
    )
}

/// Reads a CreateDelegationToken response (`version` 0-3, `frame` without its length prefix):
/// `*token` is the new token (free it). A response with a Kafka error is that error
/// (`ksasl_delegation_token_codec_kafka_error` has Kafka's code).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_codec_parse_create_response(
    c: *mut ksasl_delegation_token_codec,
    version: i16,
    frame: *const u8,
    frame_len: usize,
    token: *mut *mut ksasl_delegation_token,
) -> ksasl_result {
    response(c, token, "token", || {
        let t = token_from_create_frame(version, bytes(frame, frame_len, "frame")?)?;
        let t = ksasl_delegation_token::new(t);
        Ok(Box::into_raw(Box::new(t)))
    })
}

/// Reads a DescribeDelegationToken response (`version` 0-3): `*list` is a new list (free it).
/// A Kafka error is returned as its ksasl code.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_codec_parse_describe_response(
    c: *mut ksasl_delegation_token_codec,
    version: i16,
    frame: *const u8,
    frame_len: usize,
    list: *mut *mut ksasl_delegation_token_list,
) -> ksasl_result {
    response(c, list, "list", || {
        let tokens = tokens_from_describe_response(version, bytes(frame, frame_len, "frame")?)?;
        Ok(Box::into_raw(Box::new(ksasl_delegation_token_list::new(
            tokens,
        ))))
    })
}
