//! Delegation tokens (KIP-48): the token authority, delegation tokens, `tokenauth` logins
//! served from an authority or made with a refresher's token, and the client side of Kafka's
//! token APIs (CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
//! DescribeDelegationToken, api keys 38-41).
//!
//! Every rule (lifetimes, who may renew, errors, HMACs, records, the wire format) is the
//! core's (`crate::token`, `crate::kafka::tokens`): this module only translates.
//!
//! Principals are written `TYPE:NAME` (`"User:alice"`), as Kafka's tools take them, or as a
//! bare name meaning `User:<name>` (the core's `principal_from_str`).

use std::ffi::{c_char, c_int, CString};
use std::sync::Arc;

use super::conn::{config_mut, ksasl_server_config};
use super::oauth::ksasl_refresher;
use super::objects::{ksasl_registry, ksasl_store};
use super::*;
use crate::credential::{AskHost, CredentialLookup};
use crate::kafka::tokens::{
    CreateTokenRequest, CreateTokenResponse, DescribeTokensRequest, ExpireTokenRequest,
    PrincipalName, RenewTokenRequest, SUPPORTED, SUPPORTED_KAFKA_4,
};
use crate::mech::{MechanismRegistry, Principal};
use crate::random::SharedRandom;
use crate::secret::Secret;
use crate::token::{
    expiry_from_response, principal_from_str, token_from_create_response,
    tokens_from_describe_response, DelegationToken, TokenAuthority, TokenConfig, TokenInfo,
    UsersAndTokens,
};

/// Kafka's default `delegation.token.max.lifetime.ms` (7 days).
pub const KSASL_TOKEN_DEFAULT_MAX_LIFETIME_MS: i64 = 604800000;
/// Kafka's default `delegation.token.expiry.time.ms` (1 day).
pub const KSASL_TOKEN_DEFAULT_EXPIRY_TIME_MS: i64 = 86400000;
/// Kafka's default `delegation.token.expiry.check.interval.ms` (1 hour).
pub const KSASL_TOKEN_DEFAULT_EXPIRY_CHECK_INTERVAL_MS: i64 = 3600000;

/// A required principal argument: `TYPE:NAME`, or a bare name meaning `User:<name>` (the
/// core's parser, shared by every binding).
fn principal_arg(p: *const c_char, what: &str) -> Result<Principal, Error> {
    principal_from_str(text(p, what)?)
        .map_err(|e| Error::new(e.code(), format!("{what}: {}", e.message())))
}

/// An array of `n` principals; NULL is allowed only when `n` is 0.
fn principals_arg(p: *const *const c_char, n: usize, what: &str) -> Result<Vec<Principal>, Error> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorCode::NullArgument,
            format!("{what} is NULL with a non-zero count"),
        ));
    }
    (0..n)
        .map(|i| principal_arg(unsafe { *p.add(i) }, what))
        .collect()
}

/// An optional list of principals: NULL (with `n` 0) is no list at all, which the callers
/// document as "every token"; a non-NULL array of 0 is the empty list.
fn opt_principals_arg(
    p: *const *const c_char,
    n: usize,
    what: &str,
) -> Result<Option<Vec<Principal>>, Error> {
    if p.is_null() && n == 0 {
        return Ok(None);
    }
    principals_arg(p, n, what).map(Some)
}

fn wire_names(ps: &[Principal]) -> Vec<PrincipalName> {
    ps.iter().map(PrincipalName::from).collect()
}

// ---------------------------------------------------------------------------------------
// Delegation tokens.

/// A delegation token: its id, its HMAC (the secret the SCRAM password is made of), owner,
/// requester, renewers and timestamps. Immutable; free it with `ksasl_delegation_token_free`
/// (tokens borrowed from a `ksasl_delegation_token_list` belong to the list).
pub struct ksasl_delegation_token {
    pub(crate) inner: DelegationToken,
    id: CString,
    owner: CString,
    requester: CString,
    renewers: Vec<CString>,
    /// The base64 HMAC with a terminating NUL, wiped on drop.
    hmac_base64: Secret,
}

impl ksasl_delegation_token {
    fn new(t: DelegationToken) -> Self {
        let mut b64 = t.hmac_base64().expose().to_vec();
        b64.push(0);
        ksasl_delegation_token {
            id: cstring(&t.info.token_id),
            owner: cstring(&t.info.owner.to_string()),
            requester: cstring(&t.info.requester.to_string()),
            renewers: t
                .info
                .renewers
                .iter()
                .map(|r| cstring(&r.to_string()))
                .collect(),
            hmac_base64: Secret::new(b64),
            inner: t,
        }
    }
}

/// Makes a token from its parts (for example a token a client persisted): id, owner
/// (`TYPE:NAME` or a bare user name), requester (NULL: the owner), HMAC bytes and
/// timestamps. Renewers are not needed to log in and are left empty.
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
        let owner = principal_arg(owner, "owner")?;
        let requester = if requester.is_null() {
            owner.clone()
        } else {
            principal_arg(requester, "requester")?
        };
        let info = TokenInfo {
            token_id: text(token_id, "token_id")?.to_string(),
            owner,
            requester,
            renewers: Vec::new(),
            issue_ms,
            expiry_ms,
            max_ms,
        };
        let h = bytes(hmac, hmac_len, "hmac")?.to_vec();
        Ok(ksasl_delegation_token::new(DelegationToken::new(info, h)))
    })
}

/// The same token with a new expiry (after a renewal), as a new token.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_renewed(
    t: *const ksasl_delegation_token,
    expiry_ms: i64,
    out: *mut *mut ksasl_delegation_token,
) -> ksasl_result {
    construct(out, || {
        let t = unsafe { t.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "token must not be NULL"))?;
        Ok(ksasl_delegation_token::new(t.inner.renewed(expiry_ms)))
    })
}

/// Frees a token (NULL is a no-op). Never free a token borrowed from a list.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_free(t: *mut ksasl_delegation_token) {
    free(t)
}

/// The token id (the SCRAM username of a `tokenauth` login); NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_id(t: *const ksasl_delegation_token) -> *const c_char {
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.id.as_ptr())
}

/// The HMAC (64 bytes from an authority; a secret), borrowed from the token.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_hmac(
    t: *const ksasl_delegation_token,
    hmac: *mut *const u8,
    hmac_len: *mut usize,
) -> ksasl_result {
    let Some(t) = (unsafe { t.as_ref() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    if hmac.is_null() || hmac_len.is_null() {
        return KSASL_NULL_ARGUMENT;
    }
    put(hmac, t.inner.hmac().as_ptr());
    put(hmac_len, t.inner.hmac().len());
    KSASL_OK
}

/// The SCRAM password of the token: standard base64 of the HMAC, with padding (a secret: do
/// not log it); NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_hmac_base64(
    t: *const ksasl_delegation_token,
) -> *const c_char {
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.hmac_base64.expose().as_ptr().cast())
}

/// The owner (`"User:alice"`): whom a login with the token authenticates as; NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_owner(t: *const ksasl_delegation_token) -> *const c_char {
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.owner.as_ptr())
}

/// Who asked for the token (the owner unless created on someone's behalf); NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_requester(
    t: *const ksasl_delegation_token,
) -> *const c_char {
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.requester.as_ptr())
}

/// How many renewers the token has (0 for NULL, and for a token from a
/// CreateDelegationToken response, which does not carry them).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_renewer_count(t: *const ksasl_delegation_token) -> usize {
    unsafe { t.as_ref() }.map_or(0, |t| t.renewers.len())
}

/// Renewer `index` (`"User:bob"`); NULL for NULL or an index out of range.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_renewer(
    t: *const ksasl_delegation_token,
    index: usize,
) -> *const c_char {
    unsafe { t.as_ref() }
        .and_then(|t| t.renewers.get(index))
        .map_or(std::ptr::null(), |r| r.as_ptr())
}

/// When the token was issued (ms since the epoch; -1 for NULL).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_issue_ms(t: *const ksasl_delegation_token) -> i64 {
    unsafe { t.as_ref() }.map_or(-1, |t| t.inner.info.issue_ms)
}

/// When the token expires unless renewed (-1 for NULL).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_expiry_ms(t: *const ksasl_delegation_token) -> i64 {
    unsafe { t.as_ref() }.map_or(-1, |t| t.inner.info.expiry_ms)
}

/// The latest expiry any renewal can reach (-1 for NULL).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_max_ms(t: *const ksasl_delegation_token) -> i64 {
    unsafe { t.as_ref() }.map_or(-1, |t| t.inner.info.max_ms)
}

/// Tokens from `ksasl_token_authority_describe` or a DescribeDelegationToken response.
pub struct ksasl_delegation_token_list {
    tokens: Vec<ksasl_delegation_token>,
}

/// The broker's error code behind a failed parse (0 when the response had none).
fn kafka_code<T>(r: &crate::Result<T>) -> i16 {
    match r {
        Ok(_) => 0,
        Err(e) => e
            .detail("kafka_error_code")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0),
    }
}

impl ksasl_delegation_token_list {
    fn new(tokens: impl IntoIterator<Item = DelegationToken>) -> Self {
        ksasl_delegation_token_list {
            tokens: tokens
                .into_iter()
                .map(ksasl_delegation_token::new)
                .collect(),
        }
    }
}

/// Frees a token list and the tokens borrowed from it (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_list_free(l: *mut ksasl_delegation_token_list) {
    free(l)
}

/// The number of tokens in the list (0 for NULL).
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_list_count(
    l: *const ksasl_delegation_token_list,
) -> usize {
    unsafe { l.as_ref() }.map_or(0, |l| l.tokens.len())
}

/// Token `index`, borrowed from the list (valid until the list is freed); NULL for NULL or an
/// index out of range.
#[no_mangle]
pub extern "C" fn ksasl_delegation_token_list_get(
    l: *const ksasl_delegation_token_list,
    index: usize,
) -> *const ksasl_delegation_token {
    unsafe { l.as_ref() }
        .and_then(|l| l.tokens.get(index))
        .map_or(std::ptr::null(), |t| t as *const _)
}

// ---------------------------------------------------------------------------------------
// The token authority.

/// Creates, renews, expires, describes and sweeps delegation tokens by Kafka's rules, serves
/// Kafka's token APIs, and answers `tokenauth` logins (see
/// `ksasl_registry_add_password_servers_with_tokens`). The authority is shared (reference
/// counted) and thread-safe; a handle's outputs and last error are per handle, so threads
/// that use an authority at the same time each take a handle from
/// `ksasl_token_authority_share`.
pub struct ksasl_token_authority {
    pub(crate) inner: Arc<TokenAuthority>,
    out: Vec<u8>,
    hmac: Secret,
    records: CString,
    swept: Vec<CString>,
    swept_ptrs: Vec<*const c_char>,
    err: LastError,
}

impl HasError for ksasl_token_authority {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

impl ksasl_token_authority {
    fn from_inner(inner: Arc<TokenAuthority>) -> Self {
        ksasl_token_authority {
            inner,
            out: Vec::new(),
            hmac: Secret::new(Vec::new()),
            records: CString::default(),
            swept: Vec::new(),
            swept_ptrs: Vec::new(),
            err: LastError::default(),
        }
    }
}

/// Creates an authority: `secret_key` is `delegation.token.secret.key` (the same on every
/// broker; must not be empty), then `delegation.token.max.lifetime.ms`,
/// `delegation.token.expiry.time.ms` and `delegation.token.expiry.check.interval.ms` (each at
/// least 1; Kafka's defaults are `KSASL_TOKEN_DEFAULT_*`). `KSASL_INVALID_CONFIG` otherwise.
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
        c.max_lifetime_ms = max_lifetime_ms;
        c.expiry_time_ms = expiry_time_ms;
        c.expiry_check_interval_ms = expiry_check_interval_ms;
        Ok(ksasl_token_authority::from_inner(Arc::new(
            TokenAuthority::new(c, SharedRandom::default())?,
        )))
    })
}

/// Another handle on the same authority (the same tokens), with its own outputs and last
/// error. The authority lives while any handle or registry uses it.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_share(
    a: *const ksasl_token_authority,
    out: *mut *mut ksasl_token_authority,
) -> ksasl_result {
    construct(out, || {
        let a = unsafe { a.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "authority must not be NULL"))?;
        Ok(ksasl_token_authority::from_inner(a.inner.clone()))
    })
}

/// Frees a handle (NULL is a no-op); registries and other handles keep the authority alive.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_free(a: *mut ksasl_token_authority) {
    free(a)
}

/// The detail of the handle's last failure.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_last_error(
    a: *const ksasl_token_authority,
) -> *const c_char {
    unsafe { a.as_ref() }.map_or(c"".as_ptr(), |a| a.err.ptr())
}

/// Creates a token for `owner` (`TYPE:NAME`, or a bare name for `User:<name>`; only `User`
/// principals may own or renew tokens: `KSASL_INVALID_PRINCIPAL_TYPE`) requested by `requester` (NULL: the owner),
/// renewable by the `n_renewers` principals of `renewers` (NULL when 0). `max_lifetime_ms` > 0
/// shortens the maximum lifetime; 0 or less takes the authority's. `*token` is a new token
/// (free it).
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
        need(token, "token")?;
        let owner = principal_arg(owner, "owner")?;
        let requester = if requester.is_null() {
            owner.clone()
        } else {
            principal_arg(requester, "requester")?
        };
        let renewers = principals_arg(renewers, n_renewers, "renewer")?;
        let t = a
            .inner
            .create(&owner, &requester, &renewers, max_lifetime_ms, now_ms)?;
        put(
            token,
            Box::into_raw(Box::new(ksasl_delegation_token::new(t))),
        );
        Ok(())
    })
}

/// Renews the token whose HMAC is `hmac` for `caller` (`TYPE:NAME`, its owner or a renewer):
/// the new expiry, written to `*expiry_ms`, is `now + period` capped by the token's maximum,
/// the period being `delegation.token.expiry.time.ms` or the smaller `period_ms` when
/// positive. Fails with `KSASL_DELEGATION_TOKEN_NOT_FOUND`, `_OWNER_MISMATCH` or `_EXPIRED`.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_renew(
    a: *mut ksasl_token_authority,
    hmac: *const u8,
    hmac_len: usize,
    caller: *const c_char,
    period_ms: i64,
    now_ms: i64,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with(a, |a| {
        need(expiry_ms, "expiry_ms")?;
        let h = bytes(hmac, hmac_len, "hmac")?;
        let caller = principal_arg(caller, "caller")?;
        put(expiry_ms, a.inner.renew(h, &caller, period_ms, now_ms)?);
        Ok(())
    })
}

/// Expires the token whose HMAC is `hmac` for `caller`: a negative `period_ms` removes it now
/// (`*expiry_ms` = `now_ms`); otherwise its expiry becomes `now + period_ms` capped by its
/// maximum. Errors as `ksasl_token_authority_renew`.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_expire(
    a: *mut ksasl_token_authority,
    hmac: *const u8,
    hmac_len: usize,
    caller: *const c_char,
    period_ms: i64,
    now_ms: i64,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with(a, |a| {
        need(expiry_ms, "expiry_ms")?;
        let h = bytes(hmac, hmac_len, "hmac")?;
        let caller = principal_arg(caller, "caller")?;
        put(expiry_ms, a.inner.expire(h, &caller, period_ms, now_ms)?);
        Ok(())
    })
}

/// The tokens owned by one of the `n_owners` principals of `owners`, with their HMACs, in
/// token-id order; `owners` NULL (with `n_owners` 0) describes every token. `*list` is a new
/// list (free it). Who may see what is the host's decision.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_describe(
    a: *mut ksasl_token_authority,
    owners: *const *const c_char,
    n_owners: usize,
    list: *mut *mut ksasl_delegation_token_list,
) -> ksasl_result {
    with(a, |a| {
        need(list, "list")?;
        let owners = opt_principals_arg(owners, n_owners, "owner")?;
        let tokens = a.inner.describe(owners.as_deref())?;
        put(
            list,
            Box::into_raw(Box::new(ksasl_delegation_token_list::new(tokens))),
        );
        Ok(())
    })
}

/// Removes every token expired at `now_ms`: `*n_removed` is how many, and `*ids` (may be
/// NULL) their ids (borrowed until the next call on this handle). Call at
/// `ksasl_token_authority_next_sweep_ms`.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_sweep(
    a: *mut ksasl_token_authority,
    now_ms: i64,
    ids: *mut *const *const c_char,
    n_removed: *mut usize,
) -> ksasl_result {
    with(a, |a| {
        need(n_removed, "n_removed")?;
        let removed = a.inner.sweep(now_ms)?;
        a.swept = removed.iter().map(|id| cstring(id)).collect();
        a.swept_ptrs = a.swept.iter().map(|s| s.as_ptr()).collect();
        put_opt(ids, a.swept_ptrs.as_ptr());
        put(n_removed, a.swept.len());
        Ok(())
    })
}

/// When the next sweep is due (ms; 0 means now, as before the first sweep; -1 for NULL).
#[no_mangle]
pub extern "C" fn ksasl_token_authority_next_sweep_ms(a: *const ksasl_token_authority) -> i64 {
    unsafe { a.as_ref() }.map_or(-1, |a| a.inner.next_sweep_ms().max(0))
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
        need(hmac, "hmac")?;
        need(hmac_len, "hmac_len")?;
        a.hmac = a.inner.hmac(text(token_id, "token_id")?);
        put(hmac, a.hmac.expose().as_ptr());
        put(hmac_len, a.hmac.len());
        Ok(())
    })
}

/// Every token as a JSON array of records, for the host to persist (no secret inside: HMACs
/// are recomputed from the secret key). Borrowed until the next call on this handle.
#[no_mangle]
pub extern "C" fn ksasl_token_authority_export_records(
    a: *mut ksasl_token_authority,
    json: *mut *const c_char,
) -> ksasl_result {
    with(a, |a| {
        need(json, "json")?;
        a.records = cstring(&a.inner.export_records()?);
        put(json, a.records.as_ptr());
        Ok(())
    })
}

/// Loads records written by `ksasl_token_authority_export_records` (replacing tokens with
/// the same id); `*loaded` (may be NULL) is how many. Nothing is loaded if any record is
/// malformed (`KSASL_INVALID_CREDENTIAL_FORMAT`).
#[no_mangle]
pub extern "C" fn ksasl_token_authority_import_records(
    a: *mut ksasl_token_authority,
    json: *const c_char,
    loaded: *mut usize,
) -> ksasl_result {
    with(a, |a| {
        let n = a.inner.import_records(text(json, "json")?)?;
        put_opt(loaded, n);
        Ok(())
    })
}

/// Serves one delegation-token request (api key 38-41; `frame` without its length prefix)
/// of a connection authenticated as `principal` (`TYPE:NAME` as `ksasl_server_conn_session`
/// gives it, or a bare user name), `token_authenticated` 1 when that connection logged in with a token
/// (`ksasl_server_conn_token_authenticated`; such connections get error 64). `*out` /
/// `*out_len` are the response frame, length prefix included (borrowed until the next call
/// on this handle); failed operations are Kafka error codes inside it. A request that cannot
/// be parsed is an error (close the connection, as Kafka does).
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
        need(out, "out")?;
        need(out_len, "out_len")?;
        let f = bytes(frame, frame_len, "frame")?;
        let mut p = principal_arg(principal, "principal")?;
        p.token_authenticated = token_authenticated != 0;
        a.out = a.inner.handle_request(f, &p, now_ms)?;
        put(out, a.out.as_ptr());
        put(out_len, a.out.len());
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Logins with tokens.

/// Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers, with delegation-token logins
/// (`tokenauth=true`) answered by `authority` and user logins from `store`; with a NULL
/// store, user logins go to the registry's credential callback (set before or after this
/// call) or, without one, to the host (the pull form). The registry keeps the authority
/// alive.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_password_servers_with_tokens(
    r: *mut ksasl_registry,
    store: *const ksasl_store,
    authority: *const ksasl_token_authority,
) -> ksasl_result {
    with(r, |r| {
        let a = unsafe { authority.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "authority must not be NULL"))?;
        r.inner.merge(MechanismRegistry::password_servers(None));
        if let Some(s) = unsafe { store.as_ref() } {
            r.users = Some(s.inner.clone() as Arc<dyn CredentialLookup>);
        }
        r.tokens = Some(a.inner.clone());
        r.apply_lookup();
        Ok(())
    })
}

impl ksasl_registry {
    /// Sets the registry's credential lookup from its user lookup and token authority.
    pub(crate) fn apply_lookup(&mut self) {
        let lookup: Option<Arc<dyn CredentialLookup>> = match (&self.users, &self.tokens) {
            (users, Some(t)) => Some(Arc::new(UsersAndTokens {
                users: users.clone().unwrap_or_else(|| Arc::new(AskHost)),
                tokens: t.clone(),
            })),
            (Some(u), None) => Some(u.clone()),
            (None, None) => None,
        };
        if lookup.is_some() {
            self.inner.set_credential_lookup(lookup);
        }
    }
}

/// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients that log in with the refresher's
/// current password credential, taken at the start of every (re-)authentication: a
/// delegation token installed with `ksasl_refresher_set_delegation_token` (SCRAM only).
#[no_mangle]
pub extern "C" fn ksasl_registry_add_refreshing_password_clients(
    reg: *mut ksasl_registry,
    refresher: *const ksasl_refresher,
) -> ksasl_result {
    with(reg, |reg| {
        let r = unsafe { refresher.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "refresher must not be NULL"))?;
        reg.inner
            .register_refreshing_password_clients(r.inner.clone());
        Ok(())
    })
}

/// Installs a delegation token in the refresher: refreshed on Kafka's schedule before its
/// expiry, never past its maximum (answer each refresh with a renewed token,
/// `ksasl_delegation_token_renewed`, or a new one). `KSASL_INVALID_CREDENTIAL_EXPIRY` for a
/// token whose expiry is not after `now_ms` or whose issue time is after its expiry.
#[no_mangle]
pub extern "C" fn ksasl_refresher_set_delegation_token(
    r: *mut ksasl_refresher,
    token: *const ksasl_delegation_token,
    now_ms: i64,
) -> ksasl_result {
    with(r, |r| {
        let t = unsafe { token.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "token must not be NULL"))?;
        t.inner.install(&r.inner, now_ms).map(|_| ())
    })
}

/// Adds the token APIs (38-41) to the listener's ApiVersions response, for a server that
/// serves them with `ksasl_token_authority_handle_request`: every version the codec speaks
/// (`kafka4` = 0), or what an Apache Kafka 4 broker advertises (`kafka4` = 1: minimum
/// version 1, KIP-896). Configure before creating connections.
#[no_mangle]
pub extern "C" fn ksasl_server_config_add_token_api_versions(
    c: *mut ksasl_server_config,
    kafka4: c_int,
) -> ksasl_result {
    with(c, |c| {
        let ranges = if kafka4 != 0 {
            SUPPORTED_KAFKA_4
        } else {
            SUPPORTED
        };
        let cfg = config_mut(&mut c.inner)?;
        for r in ranges {
            cfg.set_api_version(r.api_key, r.min_version, r.max_version)?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// The client side of the token APIs.

/// Builds delegation-token request frames and reads their responses (the client side of api
/// keys 38-41). Request frames include their length prefix; responses are given without it
/// (as `ksasl_client_conn_handle_frame` returns application frames).
pub struct ksasl_token_codec {
    out: Vec<u8>,
    kafka_error: i16,
    err: LastError,
}

impl HasError for ksasl_token_codec {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a codec.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_new(out: *mut *mut ksasl_token_codec) -> ksasl_result {
    construct(out, || {
        Ok(ksasl_token_codec {
            out: Vec::new(),
            kafka_error: 0,
            err: LastError::default(),
        })
    })
}

/// Frees a codec (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_token_codec_free(c: *mut ksasl_token_codec) {
    free(c)
}

/// The detail of the codec's last failure.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_last_error(c: *const ksasl_token_codec) -> *const c_char {
    unsafe { c.as_ref() }.map_or(c"".as_ptr(), |c| c.err.ptr())
}

/// The Kafka error code of the last response parsed (0: none; e.g. 64 for
/// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; also 0 for NULL), for the codes that share a ksasl
/// result code.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_kafka_error(c: *const ksasl_token_codec) -> i16 {
    unsafe { c.as_ref() }.map_or(0, |c| c.kafka_error)
}

fn frame_out(c: &mut ksasl_token_codec, f: Vec<u8>, out: *mut *const u8, out_len: *mut usize) {
    c.out = f;
    put(out, c.out.as_ptr());
    put(out_len, c.out.len());
}

/// A CreateDelegationToken request frame (`version` 0-3): `owner` (`TYPE:NAME`, v3+; NULL:
/// the requester), the `n_renewers` renewers, `max_lifetime_ms` (-1: the broker's default),
/// `client_id` (may be NULL). Borrowed until the next call on this codec.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_create_request(
    c: *mut ksasl_token_codec,
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
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        let owner = if owner.is_null() {
            None
        } else {
            Some(PrincipalName::from(&principal_arg(owner, "owner")?))
        };
        let r = CreateTokenRequest {
            owner,
            renewers: wire_names(&principals_arg(renewers, n_renewers, "renewer")?),
            max_lifetime_ms,
        };
        let f = r.encode_request(version, correlation_id, opt_text(client_id, "client_id")?)?;
        frame_out(c, f, out, out_len);
        Ok(())
    })
}

/// A RenewDelegationToken request frame (`version` 0-2) for the token with this HMAC;
/// `renew_period_ms` <= 0 asks for the broker's default period.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_renew_request(
    c: *mut ksasl_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    hmac: *const u8,
    hmac_len: usize,
    renew_period_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        let r = RenewTokenRequest {
            hmac: Secret::from_slice(bytes(hmac, hmac_len, "hmac")?),
            renew_period_ms,
        };
        let f = r.encode_request(version, correlation_id, opt_text(client_id, "client_id")?)?;
        frame_out(c, f, out, out_len);
        Ok(())
    })
}

/// An ExpireDelegationToken request frame (`version` 0-2) for the token with this HMAC; a
/// negative `expiry_period_ms` expires it at once.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_expire_request(
    c: *mut ksasl_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    hmac: *const u8,
    hmac_len: usize,
    expiry_period_ms: i64,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        let r = ExpireTokenRequest {
            hmac: Secret::from_slice(bytes(hmac, hmac_len, "hmac")?),
            expiry_time_period_ms: expiry_period_ms,
        };
        let f = r.encode_request(version, correlation_id, opt_text(client_id, "client_id")?)?;
        frame_out(c, f, out, out_len);
        Ok(())
    })
}

/// A DescribeDelegationToken request frame (`version` 0-3) for the tokens of the `n_owners`
/// owners; `owners` NULL (with `n_owners` 0) asks for every token the caller may see.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_describe_request(
    c: *mut ksasl_token_codec,
    version: i16,
    correlation_id: i32,
    client_id: *const c_char,
    owners: *const *const c_char,
    n_owners: usize,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(c, |c| {
        need(out, "out")?;
        need(out_len, "out_len")?;
        let r = DescribeTokensRequest {
            owners: opt_principals_arg(owners, n_owners, "owner")?.map(|o| wire_names(&o)),
        };
        let f = r.encode_request(version, correlation_id, opt_text(client_id, "client_id")?)?;
        frame_out(c, f, out, out_len);
        Ok(())
    })
}

/// Reads a CreateDelegationToken response (`version` 0-3, `frame` without its length
/// prefix): `*token` is the new token (free it). A response carrying a Kafka error is that
/// error (`KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED`, ...; `ksasl_token_codec_kafka_error`
/// has the Kafka code).
#[no_mangle]
pub extern "C" fn ksasl_token_codec_parse_create_response(
    c: *mut ksasl_token_codec,
    version: i16,
    frame: *const u8,
    frame_len: usize,
    token: *mut *mut ksasl_delegation_token,
) -> ksasl_result {
    with(c, |c| {
        need(token, "token")?;
        c.kafka_error = 0;
        let r = CreateTokenResponse::parse_response(version, bytes(frame, frame_len, "frame")?)?;
        c.kafka_error = r.error_code;
        let t = token_from_create_response(&r)?;
        put(
            token,
            Box::into_raw(Box::new(ksasl_delegation_token::new(t))),
        );
        Ok(())
    })
}

/// Reads a RenewDelegationToken or ExpireDelegationToken response (`version` 0-2; the two
/// have the same schema): `*expiry_ms` is the token's new expiry. A Kafka error is returned
/// as its ksasl code (61-67 as `KSASL_DELEGATION_TOKEN_*` / `KSASL_INVALID_PRINCIPAL_TYPE`,
/// any other as `KSASL_KAFKA_ERROR`; `ksasl_token_codec_kafka_error` has the Kafka code).
#[no_mangle]
pub extern "C" fn ksasl_token_codec_parse_expiry_response(
    c: *mut ksasl_token_codec,
    version: i16,
    frame: *const u8,
    frame_len: usize,
    expiry_ms: *mut i64,
) -> ksasl_result {
    with(c, |c| {
        need(expiry_ms, "expiry_ms")?;
        c.kafka_error = 0;
        let r = expiry_from_response(version, bytes(frame, frame_len, "frame")?);
        c.kafka_error = kafka_code(&r);
        put(expiry_ms, r?);
        Ok(())
    })
}

/// Reads a DescribeDelegationToken response (`version` 0-3): `*list` is a new list (free
/// it). A Kafka error is returned as its ksasl code.
#[no_mangle]
pub extern "C" fn ksasl_token_codec_parse_describe_response(
    c: *mut ksasl_token_codec,
    version: i16,
    frame: *const u8,
    frame_len: usize,
    list: *mut *mut ksasl_delegation_token_list,
) -> ksasl_result {
    with(c, |c| {
        need(list, "list")?;
        c.kafka_error = 0;
        let r = tokens_from_describe_response(version, bytes(frame, frame_len, "frame")?);
        c.kafka_error = kafka_code(&r);
        let l = ksasl_delegation_token_list::new(r?);
        put(list, Box::into_raw(Box::new(l)));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_constants_are_kafkas() {
        let c = TokenConfig::new("k");
        assert_eq!(c.max_lifetime_ms, KSASL_TOKEN_DEFAULT_MAX_LIFETIME_MS);
        assert_eq!(c.expiry_time_ms, KSASL_TOKEN_DEFAULT_EXPIRY_TIME_MS);
        assert_eq!(
            c.expiry_check_interval_ms,
            KSASL_TOKEN_DEFAULT_EXPIRY_CHECK_INTERVAL_MS
        );
    }
}
