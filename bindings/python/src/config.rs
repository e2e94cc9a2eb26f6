//! `ClientConfig` and `ServerConfig`: the arguments given, checked by the core's builders.

use std::collections::BTreeMap;

use ksasl::kafka::config;
use ksasl::session::ReauthTiming;

use crate::glue::*;
use crate::registry::MechanismRegistry;

/// Configuration of client connections.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ClientConfig(pub(crate) Arc<config::ClientConfig>);

#[pymethods]
impl ClientConfig {
    #[new]
    #[pyo3(signature = (registry, mechanism, client_id = None, reauth_timing = None,
        api_versions_version = None, reauth_retry_ms = None, reauth_min_delay_ms = None,
        max_receive_size = None, known_versions = None, software = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        registry: &MechanismRegistry,
        mechanism: &str,
        client_id: Option<&str>,
        reauth_timing: Option<&str>,
        api_versions_version: Option<i64>,
        reauth_retry_ms: Option<i64>,
        reauth_min_delay_ms: Option<i64>,
        max_receive_size: Option<i64>,
        known_versions: Option<(i64, Option<i64>)>,
        software: Option<(String, String)>,
    ) -> PyResult<Self> {
        let mut b = config::ClientConfig::builder((*registry.snapshot(py)).clone(), mechanism);
        let reauth_timing = reauth_timing
            .map(ReauthTiming::from_name)
            .transpose()
            .or_raise()?;
        let client_id = client_id.map(Some);
        set_given!(b: set_client_id(client_id), set_reauth_timing(reauth_timing),
            set_api_versions_version(api_versions_version), set_reauth_retry_ms(reauth_retry_ms),
            set_reauth_min_delay_ms(reauth_min_delay_ms), set_max_receive_size(max_receive_size));
        known_versions
            .map(|(handshake, authenticate)| b.set_known_versions(handshake, authenticate));
        software.map(|(name, version)| b.set_software(&name, &version));
        Ok(ClientConfig(b.build().or_raise()?))
    }

    #[pyo3(signature = (now_ms = None))]
    fn metrics(&self, now_ms: Option<i64>) -> BTreeMap<&'static str, f64> {
        self.0.metrics().snapshot(now(now_ms))
    }
}

/// Configuration of one listener's server connections.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerConfig(pub(crate) Arc<config::ServerConfig>);

#[pymethods]
impl ServerConfig {
    #[new]
    #[pyo3(signature = (registry, enabled_mechanisms = None, max_reauth_ms = None,
        max_reauth_ms_for = None, max_receive_size = None, failed_authentication_delay_ms = None,
        reauth_retry_ms = None, api_versions = None, max_request_size = None,
        unknown_user_mask = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        registry: &MechanismRegistry,
        enabled_mechanisms: Option<Vec<String>>,
        max_reauth_ms: Option<i64>,
        max_reauth_ms_for: Option<BTreeMap<String, i64>>,
        max_receive_size: Option<i64>,
        failed_authentication_delay_ms: Option<i64>,
        reauth_retry_ms: Option<i64>,
        api_versions: Option<Vec<(i64, i64, i64)>>,
        max_request_size: Option<i64>,
        unknown_user_mask: Option<(Vec<u8>, i64)>,
    ) -> PyResult<Self> {
        let mut b = config::ServerConfig::builder((*registry.snapshot(py)).clone());
        set_given!(b: set_enabled_mechanisms(enabled_mechanisms),
            set_max_reauth_ms(max_reauth_ms), set_max_receive_size(max_receive_size),
            set_reauth_retry_ms(reauth_retry_ms), set_max_request_size(max_request_size),
            set_failed_authentication_delay_ms(failed_authentication_delay_ms));
        for (mechanism, ms) in max_reauth_ms_for.unwrap_or_default() {
            b.set_max_reauth_ms_for(&mechanism, ms);
        }
        for (api_key, min, max) in api_versions.unwrap_or_default() {
            b.set_api_version(api_key, min, max);
        }
        if let Some((secret, iterations)) = unknown_user_mask {
            b.set_unknown_user_mask(&secret, iterations);
        }
        Ok(ServerConfig(b.build().or_raise()?))
    }

    #[pyo3(signature = (now_ms = None))]
    fn metrics(&self, now_ms: Option<i64>) -> BTreeMap<&'static str, f64> {
        self.0.metrics().snapshot(now(now_ms))
    }

    /// The answer to ApiVersions, which Kafka's clients ask again once authenticated.
    fn api_versions_response(&self, frame: &[u8]) -> PyResult<Bytes> {
        Ok(self.0.api_versions_response(frame).or_raise()?.0.into())
    }
}
