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
