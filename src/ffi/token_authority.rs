//! `ksasl_token_authority`: creates, renews, expires, describes and sweeps delegation tokens
//! by Kafka's rules, serves Kafka's token APIs and answers `tokenauth` logins.

use std::ffi::{c_char, c_int, CString};
use std::sync::Arc;

use super::boundary::*;
use super::delegation_token::*;
use crate::secret::Secret;
use crate::token::{TokenAuthority, TokenConfig};

/// A handle on a token authority. The authority is shared (reference counted) and
/// thread-safe; each handle has its own outputs and last error, so threads using one
/// authority at the same time each take a handle from `ksasl_token_authority_share`.
pub struct ksasl_token_authority {
    pub(crate) inner: Arc<TokenAuthority>,
    pub(crate) out: Vec<u8>,
    pub(crate) hmac: Secret,
    pub(crate) records: CString,
    pub(crate) swept: (Vec<CString>, Vec<*const c_char>),
    err: LastError,
}
handle!(ksasl_token_authority(Arc<TokenAuthority>, out, hmac, records, swept));

/// Creates an authority: `secret_key` is `delegation.token.secret.key` (the same on every
/// broker; not empty), then `delegation.token.max.lifetime.ms`, `.expiry.time.ms` and
/// `.expiry.check.interval.ms` (each at least 1; a negative value takes Kafka's default: 7
/// days, 1 day, 1 hour). `KSASL_INVALID_CONFIG` otherwise.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_new(
    secret_key: *const c_char,
    max_lifetime_ms: i64,
    expiry_time_ms: i64,
    expiry_check_interval_ms: i64,
    out: *mut *mut ksasl_token_authority,
) -> ksasl_result {
    construct(out, || {
        let mut c = TokenConfig::new(text(secret_key, "secret_key")?);
        let given = [max_lifetime_ms, expiry_time_ms, expiry_check_interval_ms].map(opt_ms);
        let fields = [
            &mut c.max_lifetime_ms,
            &mut c.expiry_time_ms,
            &mut c.expiry_check_interval_ms,
        ];
        fields
            .into_iter()
            .zip(given)
            .for_each(|(f, v)| *f = v.unwrap_or(*f));
        let a = TokenAuthority::new(c, Default::default())?;
        Ok(ksasl_token_authority::new(Arc::new(a)))
    })
}

/// Creates a token for `owner` (only `User` principals may own or renew tokens:
/// `KSASL_INVALID_PRINCIPAL_TYPE`), requested by `requester` (NULL: the owner), renewable by
/// the `n_renewers` principals of `renewers`. `max_lifetime_ms` > 0 shortens the maximum
/// lifetime; 0 or less takes the authority's. `*token` is a new token (free it).
#[no_mangle]
pub extern "C" fn ksasl_token_authority_create(
    a: *mut ksasl_token_authority,
    owner: *const c_char,
    requester: *const c_char,
    renewers: *const *const c_char,
    n_renewers: usize,
    max_lifetime_ms: i64,
    now_ms: i64,
    token: *mut *mut ksasl_delegation_token,
) -> ksasl_result {
    with(a, |a| {
        need!(token);
        let (o, r) = (text(owner, "owner")?, opt_text(requester, "requester")?);
        let renewers = texts(renewers, n_renewers, "renewer")?;
        let t = a
            .inner
            .create_by_name(o, r, &renewers, max_lifetime_ms, now_ms)?;
        Ok(put_new(token, ksasl_delegation_token::new(t)))
    })
}

/// Renews or (`expire`) expires the token whose HMAC is given for a caller, writing its new
/// expiry.
pub(crate) fn change(
    a: *mut ksasl_token_authority,
    (hmac, hmac_len, caller): (*const u8, usize, *const c_char),
    (period_ms, now_ms): (i64, i64),
    expiry_ms: *mut i64,
    expire: bool,
) -> ksasl_result {
    with(a, |a| {
        need!(expiry_ms);
        let (h, caller) = (bytes(hmac, hmac_len, "hmac")?, text(caller, "caller")?);
        Ok(put(
            expiry_ms,
            a.inner
                .change_by_name(expire, h, caller, period_ms, now_ms)?,
        ))
    })
}

/// The tokens owned by one of the `n_owners` principals of `owners` (NULL with 0: every
/// token), with their HMACs, in token-id order: `*list` is a new list (free it). Who may see
/// what is the host's decision.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_describe(
    a: *mut ksasl_token_authority,
    owners: *const *const c_char,
    n_owners: usize,
    list: *mut *mut ksasl_delegation_token_list,
) -> ksasl_result {
    with(a, |a| {
        need!(list);
        let tokens = a
            .inner
            .describe_by_name(opt_texts(owners, n_owners, "owner")?.as_deref())?;
        Ok(put_new(list, ksasl_delegation_token_list::new(tokens)))
    })
}

/// Removes every token expired at `now_ms`: `*n_removed` is how many and `*ids` (may be NULL)
/// their ids, borrowed until the next call on this handle. Call at
/// `ksasl_token_authority_next_sweep_ms`.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_sweep(
    a: *mut ksasl_token_authority,
    now_ms: i64,
    ids: *mut *const *const c_char,
    n_removed: *mut usize,
) -> ksasl_result {
    with(a, |a| {
        need!(n_removed);
        let removed: Vec<CString> = a
            .inner
            .sweep(now_ms)?
            .iter()
            .map(|id| cstring(id))
            .collect();
        let ptrs = removed.iter().map(|s| s.as_ptr()).collect();
        a.swept = (removed, ptrs);
        put_opt(ids, a.swept.1.as_ptr());
        Ok(put(n_removed, a.swept.0.len()))
    })
}

/// The HMAC of `token_id` under the authority's secret key (HMAC-SHA512; a secret), borrowed
/// until the next call on this handle.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_hmac(
    a: *mut ksasl_token_authority,
    token_id: *const c_char,
    hmac: *mut *const u8,
    hmac_len: *mut usize,
) -> ksasl_result {
    with(a, |a| {
        need!(hmac, hmac_len);
        a.hmac = a.inner.hmac(text(token_id, "token_id")?);
        Ok(put_bytes(Some(a.hmac.expose()), hmac, hmac_len))
    })
}

/// Every token as a JSON array of records for the host to persist (no secret inside: HMACs
/// are recomputed from the secret key), borrowed until the next call on this handle.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_export_records(
    a: *mut ksasl_token_authority,
    json: *mut *const c_char,
) -> ksasl_result {
    with(a, |a| {
        need!(json);
        a.records = cstring(&a.inner.export_records()?);
        Ok(put(json, a.records.as_ptr()))
    })
}

/// Serves one delegation-token request (api key 38-41; `frame` without its length prefix) of
/// a connection authenticated as `principal` (`TYPE:NAME`, as `ksasl_server_connection_session`
/// gives it, or a bare user name), with a delegation token or not (`token_authenticated`; such
/// connections get error 64). `*out`/`*out_len` are the response frame with its length prefix
/// (borrowed until the next call on this handle); failed operations are Kafka error codes
/// inside it. A request that cannot be parsed is an error (close, as Kafka does).
#[no_mangle]
pub extern "C" fn ksasl_token_authority_handle_request(
    a: *mut ksasl_token_authority,
    frame: *const u8,
    frame_len: usize,
    principal: *const c_char,
    token_authenticated: c_int,
    now_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(a, |a| {
        need!(out, out_len);
        let (f, p) = (
            bytes(frame, frame_len, "frame")?,
            text(principal, "principal")?,
        );
        let response = a
            .inner
            .handle_request_by_name(f, p, token_authenticated != 0, now_ms)?;
        Ok(put_message(&mut a.out, Some(response), out, out_len))
    })
}
