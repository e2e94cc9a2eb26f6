//! `ksasl_oauth_token`: OAUTHBEARER tokens (unsecured ones, as Kafka's development login makes).

use std::ffi::{c_char, CString};

use super::boundary::*;
use crate::mech::oauthbearer::{OAuthBearerToken, UnsecuredTokenBuilder};

/// An OAUTHBEARER token.
pub struct ksasl_oauth_token {
    pub(crate) inner: OAuthBearerToken,
    pub(crate) value: CString,
}

/// Builds an unsecured (`alg: none`) token as Kafka's development login does: `principal` in
/// `sub`, `lifetime_seconds`, an optional space-separated `scope` (NULL: none).
#[no_mangle]
pub extern "C" fn ksasl_oauth_token_new_unsecured(
    principal: *const c_char,
    lifetime_seconds: i64,
    scope: *const c_char,
    now_ms: i64,
    out: *mut *mut ksasl_oauth_token,
) -> ksasl_result {
    construct(out, || {
        let mut b = UnsecuredTokenBuilder::for_principal(text(principal, "principal")?);
        if let Some(s) = opt_text(scope, "scope")? {
            b = b.list_claim("scope", &s.split_whitespace().collect::<Vec<_>>())?;
        }
        let inner = b.lifetime_seconds(lifetime_seconds).build(now_ms)?;
        Ok(ksasl_oauth_token {
            value: cstring(inner.value()),
            inner,
        })
    })
}
