//! Delegation tokens: the token authority, tokens as dicts, the Kafka codec of the token APIs
//! for clients, and tokens installed in a refresher.

use std::sync::Arc;

use ksasl::kafka::tokens::{
    CreateTokenRequest, CreateTokenResponse, DescribeTokensRequest, ExpireTokenRequest,
    PrincipalName, RenewTokenRequest,
};
use ksasl::mech::Principal;
use ksasl::token::{
    expiry_from_response, principal_from_str, token_from_create_response,
    tokens_from_describe_response, DelegationToken, TokenAuthority as CoreAuthority, TokenConfig,
    TokenInfo,
};
use ksasl::{Error, ErrorCode, Secret, SharedRandom};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::{now_or_wall, py_err, wrap};

/// `User:alice`, `Group:x`, or a bare name meaning `User:<name>`.
fn principal(py: Python<'_>, s: &str) -> PyResult<Principal> {
    wrap(py, principal_from_str(s))
}

fn wire_name(p: &Principal) -> PrincipalName {
    PrincipalName::from(p)
}

/// A token as a dict: id, HMAC (bytes) and its base64 (the SCRAM password), principals as
/// `TYPE:NAME` strings, and the timestamps.
pub(crate) fn token_dict<'py>(
    py: Python<'py>,
    t: &DelegationToken,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("token_id", &t.info.token_id)?;
    d.set_item("hmac", PyBytes::new(py, t.hmac()))?;
    d.set_item(
        "hmac_base64",
        String::from_utf8_lossy(t.hmac_base64().expose()).into_owned(),
    )?;
    d.set_item("owner", t.info.owner.to_string())?;
    d.set_item("requester", t.info.requester.to_string())?;
    let renewers: Vec<String> = t.info.renewers.iter().map(|r| r.to_string()).collect();
    d.set_item("renewers", renewers)?;
    d.set_item("issue_ms", t.info.issue_ms)?;
    d.set_item("expiry_ms", t.info.expiry_ms)?;
    d.set_item("max_ms", t.info.max_ms)?;
    Ok(d)
}

/// The inverse of [`token_dict`] (renewers are not needed to log in).
pub(crate) fn token_from_dict(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<DelegationToken> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(k)?.ok_or_else(|| {
            py_err(
                py,
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("the token has no {k:?}"),
                ),
            )
        })
    };
    let owner: String = get("owner")?.extract()?;
    let requester: Option<String> = d.get_item("requester")?.map(|v| v.extract()).transpose()?;
    let owner = principal(py, &owner)?;
    let info = TokenInfo {
        token_id: get("token_id")?.extract()?,
        requester: match requester {
            Some(r) => principal(py, &r)?,
            None => owner.clone(),
        },
        owner,
        renewers: Vec::new(),
        issue_ms: get("issue_ms")?.extract()?,
        expiry_ms: get("expiry_ms")?.extract()?,
        max_ms: get("max_ms")?.extract()?,
    };
    let hmac: Vec<u8> = get("hmac")?.extract()?;
    Ok(DelegationToken::new(info, hmac))
}

/// Creates, renews, expires, describes and sweeps delegation tokens (Kafka's rules), serves
/// Kafka's token APIs, and answers `tokenauth` logins (see `Registry.add_password_servers`).
#[pyclass(module = "ksasl._ksasl", frozen)]
pub struct TokenAuthority {
    pub(crate) inner: Arc<CoreAuthority>,
}

#[pymethods]
impl TokenAuthority {
    /// `secret_key` is `delegation.token.secret.key`; the other settings are Kafka's
    /// `delegation.token.*` with its defaults.
    #[new]
    #[pyo3(signature = (secret_key, max_lifetime_ms = 604_800_000, expiry_time_ms = 86_400_000, expiry_check_interval_ms = 3_600_000))]
    fn new(
        py: Python<'_>,
        secret_key: &str,
        max_lifetime_ms: i64,
        expiry_time_ms: i64,
        expiry_check_interval_ms: i64,
    ) -> PyResult<Self> {
        let mut c = TokenConfig::new(secret_key);
        c.max_lifetime_ms = max_lifetime_ms;
        c.expiry_time_ms = expiry_time_ms;
        c.expiry_check_interval_ms = expiry_check_interval_ms;
        Ok(TokenAuthority {
            inner: Arc::new(wrap(py, CoreAuthority::new(c, SharedRandom::default()))?),
        })
    }

    /// Creates a token for `owner` (requested by `requester`, default the owner), renewable by
    /// `renewers`; `max_lifetime_ms` > 0 shortens the maximum lifetime.
    #[pyo3(signature = (owner, requester = None, renewers = Vec::new(), max_lifetime_ms = -1, now_ms = None))]
    fn create<'py>(
        &self,
        py: Python<'py>,
        owner: &str,
        requester: Option<&str>,
        renewers: Vec<String>,
        max_lifetime_ms: i64,
        now_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let owner = principal(py, owner)?;
        let requester = match requester {
            Some(r) => principal(py, r)?,
            None => owner.clone(),
        };
        let renewers = renewers
            .iter()
            .map(|r| principal(py, r))
            .collect::<PyResult<Vec<_>>>()?;
        let t = wrap(
            py,
            self.inner.create(
                &owner,
                &requester,
                &renewers,
                max_lifetime_ms,
                now_or_wall(now_ms),
            ),
        )?;
        token_dict(py, &t)
    }

    /// Renews the token with this HMAC as `caller`; returns the new expiry.
    #[pyo3(signature = (hmac, caller, period_ms = -1, now_ms = None))]
    fn renew(
        &self,
        py: Python<'_>,
        hmac: &[u8],
        caller: &str,
        period_ms: i64,
        now_ms: Option<i64>,
    ) -> PyResult<i64> {
        let caller = principal(py, caller)?;
        wrap(
            py,
            self.inner
                .renew(hmac, &caller, period_ms, now_or_wall(now_ms)),
        )
    }

    /// Expires the token with this HMAC as `caller` (a negative period: now); returns the
    /// new expiry.
    #[pyo3(signature = (hmac, caller, period_ms = -1, now_ms = None))]
    fn expire(
        &self,
        py: Python<'_>,
        hmac: &[u8],
        caller: &str,
        period_ms: i64,
        now_ms: Option<i64>,
    ) -> PyResult<i64> {
        let caller = principal(py, caller)?;
        wrap(
            py,
            self.inner
                .expire(hmac, &caller, period_ms, now_or_wall(now_ms)),
        )
    }

    /// The tokens owned by one of `owners` (all when None), with their HMACs.
    #[pyo3(signature = (owners = None))]
    fn describe<'py>(
        &self,
        py: Python<'py>,
        owners: Option<Vec<String>>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let owners = owners
            .map(|o| {
                o.iter()
                    .map(|s| principal(py, s))
                    .collect::<PyResult<Vec<_>>>()
            })
            .transpose()?;
        let tokens = wrap(py, self.inner.describe(owners.as_deref()))?;
        tokens.iter().map(|t| token_dict(py, t)).collect()
    }

    /// Removes expired tokens; returns their ids.
    #[pyo3(signature = (now_ms = None))]
    fn sweep(&self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<Vec<String>> {
        wrap(py, self.inner.sweep(now_or_wall(now_ms)))
    }

    /// When the next sweep is due (a time in the past before the first sweep).
    fn next_sweep_ms(&self) -> i64 {
        self.inner.next_sweep_ms()
    }

    /// The HMAC of a token id under the secret key.
    fn hmac<'py>(&self, py: Python<'py>, token_id: &str) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.hmac(token_id).expose())
    }

    /// Every token as a JSON array of records (no secrets), for persistence.
    fn export_records(&self, py: Python<'_>) -> PyResult<String> {
        wrap(py, self.inner.export_records())
    }

    /// Loads records written by `export_records`; returns how many.
    fn import_records(&self, py: Python<'_>, records: &str) -> PyResult<usize> {
        wrap(py, self.inner.import_records(records))
    }

    /// Serves one delegation-token request frame (api key 38-41, without its length) of a
    /// connection authenticated as `principal`; returns the framed response.
    #[pyo3(signature = (frame, principal, token_authenticated = false, now_ms = None))]
    fn handle_request<'py>(
        &self,
        py: Python<'py>,
        frame: &[u8],
        principal: &str,
        token_authenticated: bool,
        now_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut p = self::principal(py, principal)?;
        p.token_authenticated = token_authenticated;
        let out = wrap(
            py,
            self.inner.handle_request(frame, &p, now_or_wall(now_ms)),
        )?;
        Ok(PyBytes::new(py, &out))
    }
}

/// A CreateDelegationToken request frame.
#[pyfunction]
#[pyo3(signature = (version, correlation_id, renewers = Vec::new(), max_lifetime_ms = -1, owner = None, client_id = None))]
pub fn create_token_request<'py>(
    py: Python<'py>,
    version: i16,
    correlation_id: i32,
    renewers: Vec<String>,
    max_lifetime_ms: i64,
    owner: Option<&str>,
    client_id: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let r = CreateTokenRequest {
        owner: owner
            .map(|o| principal(py, o).map(|p| wire_name(&p)))
            .transpose()?,
        renewers: renewers
            .iter()
            .map(|r| principal(py, r).map(|p| wire_name(&p)))
            .collect::<PyResult<Vec<_>>>()?,
        max_lifetime_ms,
    };
    let f = wrap(py, r.encode_request(version, correlation_id, client_id))?;
    Ok(PyBytes::new(py, &f))
}

/// A RenewDelegationToken (`expire=False`) or ExpireDelegationToken request frame.
#[pyfunction]
#[pyo3(signature = (version, correlation_id, hmac, period_ms, expire = false, client_id = None))]
pub fn renew_or_expire_token_request<'py>(
    py: Python<'py>,
    version: i16,
    correlation_id: i32,
    hmac: &[u8],
    period_ms: i64,
    expire: bool,
    client_id: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let f = if expire {
        ExpireTokenRequest {
            hmac: Secret::from_slice(hmac),
            expiry_time_period_ms: period_ms,
        }
        .encode_request(version, correlation_id, client_id)
    } else {
        RenewTokenRequest {
            hmac: Secret::from_slice(hmac),
            renew_period_ms: period_ms,
        }
        .encode_request(version, correlation_id, client_id)
    };
    Ok(PyBytes::new(py, &wrap(py, f)?))
}

/// A DescribeDelegationToken request frame (`owners` None: all tokens).
#[pyfunction]
#[pyo3(signature = (version, correlation_id, owners = None, client_id = None))]
pub fn describe_tokens_request<'py>(
    py: Python<'py>,
    version: i16,
    correlation_id: i32,
    owners: Option<Vec<String>>,
    client_id: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let r = DescribeTokensRequest {
        owners: owners
            .map(|o| {
                o.iter()
                    .map(|s| principal(py, s).map(|p| wire_name(&p)))
                    .collect::<PyResult<Vec<_>>>()
            })
            .transpose()?,
    };
    Ok(PyBytes::new(
        py,
        &wrap(py, r.encode_request(version, correlation_id, client_id))?,
    ))
}

/// The token of a CreateDelegationToken response frame (without its length); raises the
/// broker's error (e.g. DELEGATION_TOKEN_REQUEST_NOT_ALLOWED) as a CredentialError.
#[pyfunction]
pub fn parse_create_token_response<'py>(
    py: Python<'py>,
    version: i16,
    frame: &[u8],
) -> PyResult<Bound<'py, PyDict>> {
    let r = wrap(py, CreateTokenResponse::parse_response(version, frame))?;
    let t = wrap(py, token_from_create_response(&r))?;
    token_dict(py, &t)
}

/// The new expiry of a Renew- or ExpireDelegationToken response frame; raises the broker's
/// error.
#[pyfunction]
pub fn parse_token_expiry_response(py: Python<'_>, version: i16, frame: &[u8]) -> PyResult<i64> {
    wrap(py, expiry_from_response(version, frame))
}

/// The tokens of a DescribeDelegationToken response frame; raises the broker's error.
#[pyfunction]
pub fn parse_describe_tokens_response<'py>(
    py: Python<'py>,
    version: i16,
    frame: &[u8],
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let tokens = wrap(py, tokens_from_describe_response(version, frame))?;
    tokens.iter().map(|t| token_dict(py, t)).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TokenAuthority>()?;
    m.add_function(wrap_pyfunction!(create_token_request, m)?)?;
    m.add_function(wrap_pyfunction!(renew_or_expire_token_request, m)?)?;
    m.add_function(wrap_pyfunction!(describe_tokens_request, m)?)?;
    m.add_function(wrap_pyfunction!(parse_create_token_response, m)?)?;
    m.add_function(wrap_pyfunction!(parse_token_expiry_response, m)?)?;
    m.add_function(wrap_pyfunction!(parse_describe_tokens_response, m)?)?;
    Ok(())
}
