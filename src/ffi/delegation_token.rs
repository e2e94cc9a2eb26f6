//! `ksasl_delegation_token` and `ksasl_delegation_token_list`: delegation tokens (KIP-48) as
//! an authority or a broker's responses hand them out. Principals are written `TYPE:NAME`
//! (`"User:alice"`) or as a bare name meaning `User:<name>` (the core's parser).

use std::ffi::{c_char, CString};

use super::boundary::*;
use crate::error::Result;
use crate::secret::Secret;
use crate::token::DelegationToken;

/// An optional list of names: NULL with `n` 0 is no list ("every token").
pub(crate) fn opt_texts<'a>(
    p: *const *const c_char,
    n: usize,
    what: &str,
) -> Result<Option<Vec<&'a str>>> {
    (!p.is_null() || n > 0)
        .then(|| texts(p, n, what))
        .transpose()
}

/// A delegation token: id, HMAC (the secret its SCRAM password is made of), owner, requester,
/// renewers and times. Immutable; tokens borrowed from a list belong to the list.
pub struct ksasl_delegation_token {
    pub(crate) inner: DelegationToken,
    /// Id, owner and requester.
    pub(crate) names: [CString; 3],
    pub(crate) renewers: Vec<CString>,
    /// The base64 HMAC with a terminating NUL, wiped on drop.
    pub(crate) hmac_base64: Secret,
}

impl ksasl_delegation_token {
    pub(crate) fn new(t: DelegationToken) -> Self {
        let i = &t.info;
        let names =
            [&i.token_id, &i.owner.to_string(), &i.requester.to_string()].map(|n| cstring(n));
        let hmac_base64 = Secret::new([t.hmac_base64().expose(), b"\0"].concat());
        let renewers = i.renewers.iter().map(|r| cstring(&r.to_string())).collect();
        ksasl_delegation_token {
            names,
            renewers,
            hmac_base64,
            inner: t,
        }
    }
}

/// Makes a token from its parts (for example one a client persisted): id, owner, requester
/// (NULL: the owner), HMAC bytes and times. Renewers are not needed to log in: none.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_new(
    token_id: *const c_char,
    owner: *const c_char,
    requester: *const c_char,
    hmac: *const u8,
    hmac_len: usize,
    issue_ms: i64,
    expiry_ms: i64,
    max_ms: i64,
    out: *mut *mut ksasl_delegation_token,
) -> ksasl_result {
    construct(out, || {
        let names = (
            text(owner, "owner")?,
            opt_text(requester, "requester")?,
            &[] as &[&str],
        );
        let (id, h) = (
            text(token_id, "token_id")?,
            bytes(hmac, hmac_len, "hmac")?.to_vec(),
        );
        let t = DelegationToken::from_parts(id, h, names, [issue_ms, expiry_ms, max_ms])?;
        Ok(ksasl_delegation_token::new(t))
    })
}

/// The HMAC (64 bytes from an authority; a secret), borrowed from the token.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_hmac(
    t: *const ksasl_delegation_token,
    hmac: *mut *const u8,
    hmac_len: *mut usize,
) -> ksasl_result {
    with_thread(|| {
        let t = arg(t, "token")?;
        need!(hmac, hmac_len);
        Ok(put_bytes(Some(t.inner.hmac()), hmac, hmac_len))
    })
}

/// Tokens from `ksasl_token_authority_describe` or a DescribeDelegationToken response.
pub struct ksasl_delegation_token_list(pub(crate) Vec<ksasl_delegation_token>);

impl ksasl_delegation_token_list {
    pub(crate) fn new(tokens: Vec<DelegationToken>) -> Self {
        ksasl_delegation_token_list(
            tokens
                .into_iter()
                .map(ksasl_delegation_token::new)
                .collect(),
        )
    }
}
