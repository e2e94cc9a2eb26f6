//! OIDC: the core's token login at an identity provider (its I/O runs without the GIL).

use std::collections::BTreeMap;

use ksasl::background::BackgroundRefresher as Thread;
use ksasl::io::http::{self, HttpSettings, OidcSettings};
use ksasl::{OAuthBearerToken, SaslExtensions, Secret, SharedRandom};

use crate::glue::*;
use crate::refresh::Refresher;

/// A token login at an identity provider's token endpoint (Kafka's `sasl.oauthbearer.*`
/// names); calling it returns `(token, expiry_ms, principal, extensions)`, the shape every
/// adapter of `ksasl.adapters` takes.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct OidcLogin(Arc<http::OidcLogin>, SaslExtensions);

fn token_dict<'py>(py: Python<'py>, t: &OAuthBearerToken) -> PyResult<Dict<'py>> {
    Ok(
        dict!(py, token: t.value(), expiry_ms: t.expiry_ms(), principal: t.principal(),
        start_ms: t.start_ms(), scope: t.scope().to_vec()),
    )
}

class! { OidcLogin |py, c| shared {
    new(token_endpoint_url: String, client_id: Option<String> = None,
        client_secret: Option<String> = None, client_auth: Option<String> = None,
        grant_type: Option<String> = None, scope: Option<String> = None,
        extensions: Option<BTreeMap<String, String>> = None,
        header_urlencode: Option<bool> = None, sub_claim_name: Option<String> = None,
        scope_claim_name: Option<String> = None, assertion_private_key_pem: Option<String> = None,
        assertion_private_key_file: Option<String> = None,
        assertion_algorithm: Option<String> = None, assertion_key_id: Option<String> = None,
        assertion_issuer: Option<String> = None, assertion_subject: Option<String> = None,
        assertion_audience: Option<String> = None, assertion_exp_seconds: Option<i64> = None,
        assertion_nbf_seconds: Option<i64> = None, assertion_include_jti: Option<bool> = None,
        retry_backoff_ms: Option<i64> = None, retry_backoff_max_ms: Option<i64> = None,
        ca_file: Option<String> = None, ca_pem: Option<String> = None,
        connect_timeout_ms: Option<u64> = None, read_timeout_ms: Option<u64> = None)
        -> PyResult<Self> {
        let settings = OidcSettings {
            token_endpoint_url, client_id, client_secret: client_secret.map(Secret::from),
            client_auth, grant_type, scope, header_urlencode, sub_claim_name, scope_claim_name,
            assertion_private_key_pem: assertion_private_key_pem.map(Secret::from),
            assertion_private_key_file, assertion_algorithm, assertion_key_id, assertion_issuer,
            assertion_subject, assertion_audience, assertion_exp_seconds, assertion_nbf_seconds,
            assertion_include_jti, retry_backoff_ms, retry_backoff_max_ms,
            http: HttpSettings { ca_file, ca_pem: ca_pem.map(String::into_bytes),
                connect_timeout_ms, read_timeout_ms },
        };
        let ext = extensions.unwrap_or_default();
        let ext = SaslExtensions::from_pairs(ext.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .or_raise()?;
        let login = settings.login(SharedRandom::default()).or_raise()?;
        Ok(OidcLogin(Arc::new(login), ext))
    }
    /// Gets a token now (blocking, retried on `retry_backoff_ms`): a dict of `token`,
    /// `expiry_ms`, `principal`, `start_ms` and `scope`.
    fn fetch(now_ms: Now = None) -> PyResult<Dict<'py>> {
        let t = py.allow_threads(|| c.fetch(now(now_ms))).or_raise()?;
        token_dict(py, &t)
    }
    /// The sans-IO form, for a host with its own HTTP client: the request to send now, a dict
    /// of `method`, `url`, `headers` (a list of pairs, `Authorization` included) and `body`.
    fn request(now_ms: Now = None) -> PyResult<Dict<'py>> {
        let r = c.requester().request(now(now_ms), &ksasl::OsRandom).or_raise()?;
        let headers: Vec<(&str, String)> = r.header_pairs().into_iter()
            .map(|(k, v)| (k, String::from_utf8_lossy(v.expose()).into_owned())).collect();
        Ok(dict!(py, method: r.method, url: r.url.clone(), headers: headers,
            body: PyBytes::new(py, r.body.expose())))
    }
    /// The sans-IO form's second half: the token in the endpoint's answer (a dict as
    /// `fetch` returns), or the provider's error.
    fn token_from_response(status: u16, body: &[u8]) -> PyResult<Dict<'py>> {
        let t = c.requester().token_from_response(status, body).or_raise()?;
        token_dict(py, &t)
    }
    {
        /// `(token, expiry_ms, principal, extensions)`: a fresh token, for the adapters.
        fn __call__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
            let t = py.allow_threads(|| self.0.fetch(now(None))).or_raise()?;
            PyTuple::new(py, [t.value().into_pyobject(py)?.into_any(),
                t.expiry_ms().into_pyobject(py)?.into_any(),
                t.principal().into_pyobject(py)?.into_any(),
                self.1.map().clone().into_pyobject(py)?.into_any()])
        }
        /// Logs in now (the first token, or the error, before it returns), then refreshes
        /// `refresher` from this login on the core's background thread (no Python runs on it);
        /// returns the running thread's handle, with `stop()`.
        fn start(&self, py: Python<'_>, refresher: &Refresher) -> PyResult<OidcRefresh> {
            let (login, r, ext) = (self.0.clone(), refresher.0.clone(), self.1.clone());
            let thread = py.allow_threads(|| Thread::start_oidc(login, r, ext)).or_raise()?;
            Ok(OidcRefresh(refresher.0.clone(), Mutex::new(Some(thread))))
        }
    }
}}

/// The refresh thread of `OidcLogin.start`.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct OidcRefresh(Arc<ksasl::refresh::Refresher>, Mutex<Option<Thread>>);

#[pymethods]
impl OidcRefresh {
    fn stop(&self, py: Python<'_>) {
        if let Some(thread) = lock(py, &self.1).take() {
            py.allow_threads(|| thread.stop());
            self.0.clear_refresh_callback();
        }
    }
}

impl Drop for OidcRefresh {
    fn drop(&mut self) {
        Python::with_gil(|py| self.stop(py));
    }
}
