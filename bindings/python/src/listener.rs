//! `ServerSetup`: a listener of `server.properties` as the core builds it
//! (`ServerSettings::build`); `sasl_listeners`: the core's list of a file's SASL listeners.

use ksasl::config::{
    choose_listener as choose, listener_address as address, sasl_listeners as listeners,
    Properties, ServerSettings,
};
use ksasl::io::listener::{build_listener, Listener};

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
        // The listener as the core builds it for every binding: GSSAPI finished (its keytab
        // read now), JWKS validation through the endpoints.
        let built = py.allow_threads(|| {
            build_listener(&ServerSettings::from_text(text, listener)?, scram, &api_versions)
        });
        let Listener { mut setup, jwks: endpoints } = built.or_raise()?;
        let mut jwks = Vec::new();
        for (url, fetcher) in endpoints {
            jwks.push((url, Py::new(py, JwksEndpoint::shared(fetcher))?));
        }
        let tokens = match setup.tokens.take() {
            Some(t) => Some(Py::new(py, TokenAuthority(t))?),
            None => None,
        };
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
