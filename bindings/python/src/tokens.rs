//! Delegation tokens: `TokenAuthority`, tokens as dicts, and the codec of Kafka's token APIs.

use ksasl::kafka::delegation_tokens as codec;
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

#[pymethods]
impl TokenAuthority {
    #[new]
    #[pyo3(signature = (secret_key, max_lifetime_ms = None, expiry_time_ms = None,
        expiry_check_interval_ms = None))]
    fn new(
        secret_key: &str,
        max_lifetime_ms: Option<i64>,
        expiry_time_ms: Option<i64>,
        expiry_check_interval_ms: Option<i64>,
    ) -> PyResult<Self> {
        let mut c = TokenConfig::new(secret_key);
        given!(c: max_lifetime_ms, expiry_time_ms, expiry_check_interval_ms);
        let a = token::TokenAuthority::new(c, SharedRandom::default()).or_raise()?;
        Ok(TokenAuthority(Arc::new(a)))
    }

    #[pyo3(signature = (owner, requester = None, renewers = Vec::new(), max_lifetime_ms = -1,
        now_ms = None))]
    fn create<'py>(
        &self,
        py: Python<'py>,
        owner: &str,
        requester: Option<&str>,
        renewers: Vec<String>,
        max_lifetime_ms: i64,
        now_ms: Now,
    ) -> PyResult<Dict<'py>> {
        let t = self
            .0
            .create_by_name(owner, requester, &renewers, max_lifetime_ms, now(now_ms));
        token_dict(py, &t.or_raise()?)
    }

    #[pyo3(signature = (hmac, caller, period_ms = -1, now_ms = None))]
    fn renew(&self, hmac: &[u8], caller: &str, period_ms: i64, now_ms: Now) -> PyResult<i64> {
        self.0
            .change_by_name(false, hmac, caller, period_ms, now(now_ms))
            .or_raise()
    }

    #[pyo3(signature = (hmac, caller, period_ms = -1, now_ms = None))]
    fn expire(&self, hmac: &[u8], caller: &str, period_ms: i64, now_ms: Now) -> PyResult<i64> {
        self.0
            .change_by_name(true, hmac, caller, period_ms, now(now_ms))
            .or_raise()
    }

    #[pyo3(signature = (owners = None))]
    fn describe<'py>(
        &self,
        py: Python<'py>,
        owners: Option<Vec<String>>,
    ) -> PyResult<Vec<Dict<'py>>> {
        tokens(py, self.0.describe_by_name(owners.as_deref()))
    }

    #[pyo3(signature = (now_ms = None))]
    fn sweep(&self, now_ms: Now) -> PyResult<Vec<String>> {
        self.0.sweep(now(now_ms)).or_raise()
    }

    fn next_sweep_ms(&self) -> i64 {
        self.0.next_sweep_ms()
    }

    fn hmac(&self, token_id: &str) -> Bytes {
        self.0.hmac(token_id).expose().to_vec().into()
    }

    fn export_records(&self) -> PyResult<String> {
        self.0.export_records().or_raise()
    }

    fn import_records(&self, records: &str) -> PyResult<usize> {
        self.0.import_records(records).or_raise()
    }

    #[pyo3(signature = (frame, principal, token_authenticated = false, now_ms = None))]
    fn handle_request(
        &self,
        frame: &[u8],
        principal: &str,
        token_authenticated: bool,
        now_ms: Now,
    ) -> PyResult<Bytes> {
        let r = self
            .0
            .handle_request_by_name(frame, principal, token_authenticated, now(now_ms));
        Ok(r.or_raise()?.into())
    }
}

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
    let r = codec::CreateTokenResponse::parse_response(version, frame).or_raise()?;
    token_dict(py, &token::token_from_create_response(&r).or_raise()?)
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
