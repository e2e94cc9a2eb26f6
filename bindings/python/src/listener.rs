//! `ServerSetup`: a listener of `server.properties` as the core builds it
//! (`ServerSettings::build`); `sasl_listeners`: the core's list of a file's SASL listeners.

use ksasl::config::{
    choose_listener as choose, listener_address as address, sasl_listeners as listeners,
    Properties, ServerSettings,
};
use ksasl::io::http::{self, HttpSettings};

use crate::config::ServerConfig;
use crate::glue::*;
use crate::oauth::JwksEndpoint;
use crate::store::CredentialStore;
use crate::tokens::TokenAuthority;

/// One listener of `server.properties`: its `ServerConfig` and its JWKS endpoints.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerSetup(Built);

struct Built {
    config: Py<ServerConfig>,
    jwks: Vec<(String, Py<JwksEndpoint>)>,
    tokens: Option<Py<TokenAuthority>>,
}

class! { ServerSetup |py, c| shared {
    new(text: &str, listener: &str, scram_store: Option<PyRef<'_, CredentialStore>> = None,
        api_versions: Option<Vec<(i64, i64, i64)>> = None) -> PyResult<Self> {
        let api_versions = api_versions.unwrap_or_default();
        let scram = scram_store.map(|s| s.0.clone() as Arc<dyn ksasl::CredentialLookup>);
        let setup = py.allow_threads(|| {
            ServerSettings::from_text(text, listener)?.build_with_apis(scram, &api_versions)
        });
        let mut setup = setup.or_raise()?;
        let mut jwks = Vec::new();
        for (url, validator, settings) in std::mem::take(&mut setup.jwks) {
            let settings = HttpSettings::from_pairs(settings.iter()).or_raise()?;
            let fetcher = Arc::new(http::jwks_endpoint(&url, &settings, validator).or_raise()?);
            // The fetcher validates: a token of a key not yet fetched waits for one refetch.
            setup.with_oauthbearer_validator(fetcher.clone()).or_raise()?;
            jwks.push((url, Py::new(py, JwksEndpoint::shared(fetcher))?));
        }
        let tokens = match setup.tokens.take() {
            Some(t) => Some(Py::new(py, TokenAuthority(t))?),
            None => None,
        };
        // GSSAPI: the server its settings describe (the keytab is read now).
        py.allow_threads(|| ksasl::io::gss::finish_listener(&mut setup)).or_raise()?;
        let Some(config) = setup.config else {
            return Err(Error::new(ErrorCode::Internal, "a listener without a configuration"))
                .or_raise();
        };
        Ok(ServerSetup(Built { config: Py::new(py, ServerConfig(config))?, jwks, tokens }))
    }
    #[getter] fn config() -> Py<ServerConfig> { c.config.clone_ref(py) }
    #[getter] fn jwks() -> Vec<(String, Py<JwksEndpoint>)> {
        c.jwks.iter().map(|(u, e)| (u.clone(), e.clone_ref(py))).collect()
    }
    #[getter] fn tokens() -> Option<Py<TokenAuthority>> {
        c.tokens.as_ref().map(|t| t.clone_ref(py))
    }
}}

/// The SASL listeners of `server.properties` text, in order.
#[pyfunction]
pub(crate) fn sasl_listeners(text: &str) -> PyResult<Vec<String>> {
    listeners(&Properties::parse(text).or_raise()?).or_raise()
}

/// Where a listener of `server.properties` text listens: `(host, port)` from its `listeners`
/// entry (an empty host: every interface), or None (the core's `listener_address`).
#[pyfunction]
pub(crate) fn listener_address(text: &str, listener: &str) -> PyResult<Option<(String, u16)>> {
    address(&Properties::parse(text).or_raise()?, listener).or_raise()
}

/// The listener to serve from `server.properties` text (the core's `choose_listener`).
#[pyfunction]
#[pyo3(signature = (text, listener = None))]
pub(crate) fn choose_listener(text: &str, listener: Option<&str>) -> PyResult<String> {
    choose(&Properties::parse(text).or_raise()?, listener).or_raise()
}
