//! Delegation tokens: `TokenAuthority`, tokens as dicts, and the codec of Kafka's token APIs.

use ksasl::token::{self, DelegationToken, TokenConfig};
use ksasl::SharedRandom;

use crate::glue::*;

/// A token as a dict: id, HMAC, its base64 (the SCRAM password), principals, timestamps.
fn token_dict<'py>(py: Python<'py>, t: &DelegationToken) -> PyResult<Dict<'py>> {
    let i = &t.info;
    let renewers: Vec<String> = i.renewers.iter().map(|r| r.to_string()).collect();
    Ok(
        dict!(py, token_id: &i.token_id, hmac: PyBytes::new(py, t.hmac()),
        hmac_base64: String::from_utf8_lossy(t.hmac_base64().expose()),
        owner: i.owner.to_string(), requester: i.requester.to_string(), renewers: renewers,
        issue_ms: i.issue_ms, expiry_ms: i.expiry_ms, max_ms: i.max_ms),
    )
}

fn tokens<'py>(
    py: Python<'py>,
    ts: ksasl::Result<Vec<DelegationToken>>,
) -> PyResult<Vec<Dict<'py>>> {
    ts.or_raise()?.iter().map(|t| token_dict(py, t)).collect()
}

/// The inverse of [`token_dict`] (renewers are not needed to log in).
pub(crate) fn token_from_dict(dict: &Dict) -> PyResult<DelegationToken> {
    let d = dict.as_any();
    let text = |k: &str| d.get_item(k)?.extract::<String>();
    let (owner, requester) = (text("owner")?, text("requester")?);
    let times = ["issue_ms", "expiry_ms", "max_ms"].map(|k| d.get_item(k)?.extract::<i64>());
    let [issue, expiry, max] = times;
    let (id, hmac) = (text("token_id")?, d.get_item("hmac")?.extract()?);
    let names = (owner.as_str(), Some(requester.as_str()), &[] as &[&str]);
    DelegationToken::from_parts(&id, hmac, names, [issue?, expiry?, max?]).or_raise()
}

/// Delegation tokens with Kafka's rules and `delegation.token.*` defaults; serves Kafka's token
/// APIs and answers `tokenauth` logins.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct TokenAuthority(pub(crate) Arc<token::TokenAuthority>);

class! { TokenAuthority |py, c| shared {
    new(secret_key: &str, max_lifetime_ms: Option<i64> = None, expiry_time_ms: Option<i64> = None,
        expiry_check_interval_ms: Option<i64> = None) -> PyResult<Self> {
        let given = [max_lifetime_ms, expiry_time_ms, expiry_check_interval_ms];
        let c = TokenConfig::with_settings(secret_key, given);
        let a = token::TokenAuthority::new(c, SharedRandom::default()).or_raise()?;
        Ok(TokenAuthority(Arc::new(a)))
    }
    fn create(owner: &str, requester: Option<String> = None, renewers: Vec<String> = {Vec::new()},
        max_lifetime_ms: i64 = {-1}, now_ms: Now = None) -> PyResult<Dict<'py>> {
        let r = requester.as_deref();
        let t = c.create_by_name(owner, r, &renewers, max_lifetime_ms, now(now_ms));
        token_dict(py, &t.or_raise()?)
    }
    fn renew(hmac: &[u8], caller: &str, period_ms: i64 = {-1}, now_ms: Now = None) -> PyResult<i64> {
        c.change_by_name(false, hmac, caller, period_ms, now(now_ms)).or_raise()
    }
    fn expire(hmac: &[u8], caller: &str, period_ms: i64 = {-1}, now_ms: Now = None) -> PyResult<i64> {
        c.change_by_name(true, hmac, caller, period_ms, now(now_ms)).or_raise()
    }
    fn describe(owners: Option<Vec<String>> = None) -> PyResult<Vec<Dict<'py>>> {
        tokens(py, c.describe_by_name(owners.as_deref()))
    }
    fn sweep(now_ms: Now = None) -> PyResult<Vec<String>> { c.sweep(now(now_ms)).or_raise() }
    fn next_sweep_ms() -> i64 { c.next_sweep_ms() }
    fn hmac(token_id: &str) -> Bytes { c.hmac(token_id).expose().to_vec().into() }
    fn export_records() -> PyResult<String> { c.export_records().or_raise() }
    fn import_records(records: &str) -> PyResult<usize> { c.import_records(records).or_raise() }
    fn handle_request(frame: &[u8], principal: &str, token_authenticated: bool = false,
        now_ms: Now = None) -> PyResult<Bytes> {
        let r = c.handle_request_by_name(frame, principal, token_authenticated, now(now_ms));
        Ok(r.or_raise()?.into())
    }
}}

/// A CreateDelegationToken request frame.
#[pyfunction]
#[pyo3(signature = (version, correlation_id, renewers = Vec::new(), max_lifetime_ms = -1,
    owner = None, client_id = None))]
pub(crate) fn create_token_request(
    version: i16,
    correlation_id: i32,
    renewers: Vec<String>,
    max_lifetime_ms: i64,
    owner: Option<String>,
    client_id: Option<&str>,
) -> PyResult<Bytes> {
    let header = (version, correlation_id, client_id);
    let r = token::create_token_request(header, owner.as_deref(), &renewers, max_lifetime_ms);
    Ok(r.or_raise()?.into())
}

/// A RenewDelegationToken (`expire=False`) or ExpireDelegationToken request frame.
#[pyfunction]
#[pyo3(signature = (version, correlation_id, hmac, period_ms, expire = false, client_id = None))]
pub(crate) fn renew_or_expire_token_request(
    version: i16,
    correlation_id: i32,
    hmac: &[u8],
    period_ms: i64,
    expire: bool,
    client_id: Option<&str>,
) -> PyResult<Bytes> {
    let header = (version, correlation_id, client_id);
    let f = token::change_token_request(header, expire, hmac, period_ms);
    Ok(f.or_raise()?.into())
}

/// A DescribeDelegationToken request frame (`owners` None: all tokens).
#[pyfunction]
#[pyo3(signature = (version, correlation_id, owners = None, client_id = None))]
pub(crate) fn describe_tokens_request(
    version: i16,
    correlation_id: i32,
    owners: Option<Vec<String>>,
    client_id: Option<&str>,
) -> PyResult<Bytes> {
    let header = (version, correlation_id, client_id);
    let r = token::describe_tokens_request(header, owners.as_deref());
    Ok(r.or_raise()?.into())
}

/// The token of a CreateDelegationToken response frame; raises the broker's error.
#[pyfunction]
pub(crate) fn parse_create_token_response<'py>(
    py: Python<'py>,
    version: i16,
    frame: &[u8],
) -> PyResult<Dict<'py>> {
    token_dict(
        py,
        &token::token_from_create_frame(version, frame).or_raise()?,
    )
}

/// The new expiry of a Renew- or ExpireDelegationToken response frame; raises its error.
#[pyfunction]
pub(crate) fn parse_token_expiry_response(version: i16, frame: &[u8]) -> PyResult<i64> {
    token::expiry_from_response(version, frame).or_raise()
}

/// The tokens of a DescribeDelegationToken response frame; raises its error.
#[pyfunction]
pub(crate) fn parse_describe_tokens_response<'py>(
    py: Python<'py>,
    version: i16,
    frame: &[u8],
) -> PyResult<Vec<Dict<'py>>> {
    tokens(py, token::tokens_from_describe_response(version, frame))
}
