//! `ClientSetup`: a client of a `client.properties` (Kafka's or librdkafka's names) as the core
//! builds it (`ClientSettings::build`).

use std::collections::BTreeMap;

use ksasl::config::{self as settings, ClientLogin, ClientSettings, Properties};
use ksasl::SharedRandom;

use crate::config::ClientConfig;
use crate::glue::*;
use crate::refresh::Refresher;
use crate::registry::MechanismRegistry;

/// A client built from its properties: its `ClientConfig`, the refresher behind OAUTHBEARER
/// tokens, and what the host still has to do (`login`).
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ClientSetup {
    built: Mutex<settings::ClientSetup>,
    config: Mutex<Option<Py<ClientConfig>>>,
    refresher: Option<Py<Refresher>>,
    mechanism: String,
    security_protocol: &'static str,
    unknown: Vec<String>,
    warnings: Vec<String>,
    effective: Vec<(String, String)>,
}

impl ClientSetup {
    fn build(py: Python<'_>, props: ksasl::Result<Properties>) -> PyResult<Self> {
        let s = py
            .allow_threads(|| ClientSettings::from_properties(&props?))
            .or_raise()?;
        let built = s.build(SharedRandom::default()).or_raise()?;
        let config = match &built.config {
            Some(c) => Some(Py::new(py, ClientConfig(c.clone()))?),
            None => None,
        };
        let refresher = match &built.refresher {
            Some(r) => Some(Py::new(py, Refresher(r.clone()))?),
            None => None,
        };
        Ok(ClientSetup {
            built: Mutex::new(built),
            config: Mutex::new(config),
            refresher,
            mechanism: s.mechanism.clone(),
            security_protocol: s.security_protocol.name(),
            unknown: s.unknown.clone(),
            warnings: s.warnings.clone(),
            effective: s.effective(),
        })
    }
}

#[pymethods]
impl ClientSetup {
    #[new]
    fn new(py: Python<'_>, text: &str) -> PyResult<Self> {
        Self::build(py, Properties::parse(text))
    }

    #[staticmethod]
    fn from_dict(py: Python<'_>, properties: BTreeMap<String, String>) -> PyResult<Self> {
        let pairs = properties.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        Self::build(py, Ok(Properties::from_pairs(pairs)))
    }

    #[getter]
    fn config(&self, py: Python<'_>) -> Option<Py<ClientConfig>> {
        lock(py, &self.config).as_ref().map(|c| c.clone_ref(py))
    }

    #[getter]
    fn refresher(&self, py: Python<'_>) -> Option<Py<Refresher>> {
        self.refresher.as_ref().map(|r| r.clone_ref(py))
    }

    #[getter]
    fn login(&self, py: Python<'_>) -> &'static str {
        match lock(py, &self.built).login {
            ClientLogin::Ready => "ready",
            ClientLogin::Oidc => "oidc",
            ClientLogin::HostToken(_) => "host_token",
            ClientLogin::Kerberos { .. } => "kerberos",
        }
    }

    /// `(service_name, principal, keytab)` of a Kerberos login, else None.
    #[getter]
    fn kerberos(&self, py: Python<'_>) -> Option<(String, Option<String>, Option<String>)> {
        match &lock(py, &self.built).login {
            ClientLogin::Kerberos {
                service_name,
                principal,
                keytab,
            } => Some((service_name.clone(), principal.clone(), keytab.clone())),
            _ => None,
        }
    }

    #[getter]
    fn mechanism(&self) -> &str {
        &self.mechanism
    }

    #[getter]
    fn security_protocol(&self) -> &'static str {
        self.security_protocol
    }

    #[getter]
    fn unknown(&self) -> Vec<String> {
        self.unknown.clone()
    }

    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The effective settings, secrets as `[hidden]`, in the order the core lists them.
    #[getter]
    fn effective(&self) -> Vec<(String, String)> {
        self.effective.clone()
    }

    /// Rebuilds `config` with `registry` (a GSSAPI host adds its client first).
    fn with_registry(&self, py: Python<'_>, registry: &MechanismRegistry) -> PyResult<()> {
        let snapshot = (*registry.snapshot(py)).clone();
        let mut built = lock(py, &self.built);
        built.with_registry(snapshot, &self.mechanism).or_raise()?;
        let config = built.config.clone().map(ClientConfig);
        drop(built);
        *lock(py, &self.config) = match config {
            Some(c) => Some(Py::new(py, c)?),
            None => None,
        };
        Ok(())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ClientSetup(mechanism={:?}, security_protocol={:?}, login={:?})",
            self.mechanism,
            self.security_protocol,
            self.login(py)
        )
    }
}
