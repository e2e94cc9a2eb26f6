//! `ksasl_token_authority`: creates, renews, expires, describes and sweeps delegation tokens
//! by Kafka's rules, serves Kafka's token APIs and answers `tokenauth` logins.

use std::ffi::{c_char, CString};
use std::sync::Arc;

use super::boundary::*;
use crate::secret::Secret;
use crate::token::TokenAuthority;

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
