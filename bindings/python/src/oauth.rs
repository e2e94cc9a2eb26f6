//! OAUTHBEARER: the signed-JWT validator and its JWKS endpoint (fetched over HTTPS without the
//! GIL), Python validators, and unsecured tokens.

use ksasl::background::BackgroundRefresher as Thread;
use ksasl::io::http::{self, HttpSettings};
use ksasl::mech::oauthbearer::HostTokenValidator;
use ksasl::{JwtValidatorConfig, Secret, TokenValidator, UnsecuredTokenBuilder};
use ksasl::{UnsecuredValidator, UnsecuredValidatorConfig};

use crate::glue::*;

/// A signed-JWT validator (KIP-768) whose JWKS the host supplies; every option of the core's
/// `JwtValidatorConfig`, its defaults when not given.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct JwksValidator(pub(crate) Arc<ksasl::JwksValidator>);

class! { JwksValidator |py, c| shared {
    new(expected_issuer: Option<String> = None, expected_audiences: Option<Vec<String>> = None,
        clock_skew_ms: Option<i64> = None, subject_claim_name: Option<String> = None,
        scope_claim_name: Option<String> = None, validate_iat: Option<bool> = None,
        algorithms: Option<Vec<String>> = None, hmac_secret: Option<Vec<u8>> = None,
        max_token_size: Option<usize> = None, refresh_period_ms: Option<i64> = None,
        unknown_kid_interval_ms: Option<i64> = None) -> PyResult<Self> {
        let hmac_secret = hmac_secret.map(Secret::new);
        let mut c = JwtValidatorConfig { expected_issuer, hmac_secret, ..Default::default() };
        given!(c: expected_audiences, clock_skew_ms, subject_claim_name, scope_claim_name,
            validate_iat, max_token_size, refresh_period_ms, unknown_kid_interval_ms);
        if let Some(names) = algorithms {
            c.set_algorithm_names(&names).or_raise()?;
        }
        Ok(JwksValidator(Arc::new(ksasl::JwksValidator::new(c).or_raise()?)))
    }
    fn set_jwks(jwks_json: &str, now_ms: Now = None) -> PyResult<usize> {
        c.set_jwks(jwks_json, now(now_ms)).or_raise()
    }
    fn next_refresh_ms() -> i64 { c.next_refresh_ms() }
    {
        #[pyo3(signature = (token, now_ms = None))]
        fn validate<'py>(&self, py: Python<'py>, token: &str, now_ms: Now) -> PyResult<Dict<'py>> {
            let v = py.allow_threads(|| self.0.validate(token, now(now_ms)));
            let v = v.map_err(|r| r.into_error()).or_raise()?;
            Ok(dict!(py, principal: v.principal, expiry_ms: v.expiry_ms, scope: v.scope))
        }
    }
}}

/// Kafka's unsecured validator (None), a `JwksValidator`, or a callable whose exception
/// reaches the caller of the step unchanged.
pub(crate) fn server_validator(
    validator: Option<Any>,
    required_scope: Option<Vec<String>>,
    allowable_clock_skew_ms: Option<i64>,
) -> PyResult<Arc<dyn TokenValidator>> {
    let Some(v) = validator else {
        let mut c = UnsecuredValidatorConfig::default();
        given!(c: required_scope, allowable_clock_skew_ms);
        return Ok(Arc::new(UnsecuredValidator::new(c).or_raise()?));
    };
    if let Ok(e) = v.downcast::<JwksEndpoint>() {
        return Ok(e.get().0.clone());
    }
    match v.downcast::<JwksValidator>() {
        Ok(j) => Ok(j.get().0.clone()),
        Err(_) if v.is_callable() => {
            let f = v.unbind();
            let validate = move |token: &str, now_ms: i64| {
                Python::with_gil(|py| {
                    let r = f.call1(py, (token, now_ms)).and_then(|a| a.extract(py));
                    r.map_err(|e| keep(py, e, ErrorCode::TokenRejected))
                })
            };
            Ok(Arc::new(HostTokenValidator(validate)))
        }
        Err(e) => Err(e.into()),
    }
}

/// An unsecured (`alg: none`) token as Kafka's development login makes them.
#[pyfunction]
#[pyo3(signature = (principal, lifetime_seconds = None, scope = None, now_ms = None))]
pub(crate) fn unsecured_oauth_token<'py>(
    py: Python<'py>,
    principal: &str,
    lifetime_seconds: Option<i64>,
    scope: Option<Vec<String>>,
    now_ms: Now,
) -> PyResult<Dict<'py>> {
    let mut b = UnsecuredTokenBuilder::for_principal(principal);
    if let Some(s) = lifetime_seconds {
        b = b.lifetime_seconds(s);
    }
    if let Some(s) = scope {
        b = b
            .list_claim("scope", &s.iter().map(String::as_str).collect::<Vec<_>>())
            .or_raise()?;
    }
    let t = b.build(now(now_ms)).or_raise()?;
    Ok(dict!(py, token: t.value(), expiry_ms: t.expiry_ms(), principal: t.principal()))
}

/// A JWKS endpoint (`sasl.oauthbearer.jwks.endpoint.url`) feeding a `JwksValidator`; as a
/// server's validator it holds a token of an unknown key for one refetch.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct JwksEndpoint(pub(crate) Arc<http::JwksFetcher>, Mutex<Option<Thread>>);

class! { JwksEndpoint |py, c| shared {
    new(url: String, validator: PyRef<'_, JwksValidator>, ca_file: Option<String> = None,
        ca_pem: Option<String> = None, connect_timeout_ms: Option<u64> = None,
        read_timeout_ms: Option<u64> = None) -> PyResult<Self> {
        let settings = HttpSettings { ca_file, ca_pem: ca_pem.map(String::into_bytes),
            connect_timeout_ms, read_timeout_ms };
        let f = http::jwks_endpoint(&url, &settings, validator.0.clone()).or_raise()?;
        Ok(JwksEndpoint(Arc::new(f), Mutex::new(None)))
    }
    /// Fetches now (blocking); returns the number of usable keys.
    fn fetch(now_ms: Now = None) -> PyResult<usize> {
        py.allow_threads(|| c.fetch(now(now_ms))).or_raise()
    }
    /// Fetches if one is due; returns when to poll next (ms).
    fn poll(now_ms: Now = None) -> i64 { py.allow_threads(|| c.poll(now(now_ms))) }
    /// Validates (holding a token of an unknown key for one refetch): principal, expiry_ms, scope.
    fn validate(token: &str, now_ms: Now = None) -> PyResult<Dict<'py>> {
        let v = py.allow_threads(|| c.validate(token, now(now_ms)));
        let v = v.map_err(|r| r.into_error()).or_raise()?;
        Ok(dict!(py, principal: v.principal, expiry_ms: v.expiry_ms, scope: v.scope))
    }
    {
        /// Keeps the keys fresh on the core's background thread until `stop()`.
        fn start(&self, py: Python<'_>) -> PyResult<()> {
            let mut t = lock(py, &self.1);
            if t.is_none() {
                *t = Some(Thread::start_jwks(self.0.clone()).or_raise()?);
            }
            Ok(())
        }
        fn stop(&self, py: Python<'_>) {
            if let Some(thread) = lock(py, &self.1).take() {
                py.allow_threads(|| thread.stop());
            }
        }
    }
}}

impl JwksEndpoint {
    /// An endpoint around a fetcher that also validates for a listener.
    pub(crate) fn shared(fetcher: Arc<http::JwksFetcher>) -> Self {
        JwksEndpoint(fetcher, Mutex::new(None))
    }
}

impl Drop for JwksEndpoint {
    fn drop(&mut self) {
        Python::with_gil(|py| self.stop(py));
    }
}
