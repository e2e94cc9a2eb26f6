//! `ClientConfig` and `ServerConfig`: the arguments given, checked by the core's builders;
//! `check_config`: the core's reading of `.properties` text.

use std::collections::BTreeMap;

use ksasl::config::ConfigReport as Report;
use ksasl::kafka::config;
use ksasl::session::ReauthTiming;

use crate::glue::*;
use crate::registry::MechanismRegistry;

type Metrics = BTreeMap<&'static str, f64>;

/// Configuration of client connections.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ClientConfig(pub(crate) Arc<config::ClientConfig>);

class! { ClientConfig |py, c| shared {
    new(registry: &MechanismRegistry, mechanism: &str, client_id: Option<String> = None,
        reauth_timing: Option<String> = None, api_versions_version: Option<i64> = None,
        reauth_retry_ms: Option<i64> = None, reauth_min_delay_ms: Option<i64> = None,
        max_receive_size: Option<i64> = None, known_versions: Option<(i64, Option<i64>)> = None,
        software: Option<(String, String)> = None) -> PyResult<Self> {
        let mut b = config::ClientConfig::builder((*registry.snapshot(py)).clone(), mechanism);
        let reauth_timing = reauth_timing.map(|t| ReauthTiming::from_name(&t)).transpose();
        let reauth_timing = reauth_timing.or_raise()?;
        let client_id = client_id.as_deref().map(Some);
        set_given!(b: set_client_id(client_id), set_reauth_timing(reauth_timing),
            set_api_versions_version(api_versions_version), set_reauth_retry_ms(reauth_retry_ms),
            set_reauth_min_delay_ms(reauth_min_delay_ms), set_max_receive_size(max_receive_size));
        known_versions.map(|(handshake, auth)| b.set_known_versions(handshake, auth));
        software.map(|(name, version)| b.set_software(&name, &version));
        Ok(ClientConfig(b.build().or_raise()?))
    }
    fn metrics(now_ms: Now = None) -> Metrics { c.metrics().snapshot(now(now_ms)) }
}}

/// Configuration of one listener's server connections.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerConfig(pub(crate) Arc<config::ServerConfig>);

class! { ServerConfig |py, c| shared {
    new(registry: &MechanismRegistry, enabled_mechanisms: Option<Vec<String>> = None,
        max_reauth_ms: Option<i64> = None, max_reauth_ms_for: Option<BTreeMap<String, i64>> = None,
        max_receive_size: Option<i64> = None, failed_authentication_delay_ms: Option<i64> = None,
        reauth_retry_ms: Option<i64> = None, api_versions: Option<Vec<(i64, i64, i64)>> = None,
        max_request_size: Option<i64> = None, unknown_user_mask: Option<(Vec<u8>, i64)> = None,
        legacy_gssapi: Option<bool> = None) -> PyResult<Self> {
        let mut b = config::ServerConfig::builder((*registry.snapshot(py)).clone());
        set_given!(b: set_enabled_mechanisms(enabled_mechanisms),
            set_max_reauth_ms(max_reauth_ms), set_max_receive_size(max_receive_size),
            set_reauth_retry_ms(reauth_retry_ms), set_max_request_size(max_request_size),
            set_failed_authentication_delay_ms(failed_authentication_delay_ms),
            set_legacy_gssapi(legacy_gssapi));
        for (mechanism, ms) in max_reauth_ms_for.unwrap_or_default() {
            b.set_max_reauth_ms_for(&mechanism, ms);
        }
        for (api_key, min, max) in api_versions.unwrap_or_default() {
            b.set_api_version(api_key, min, max);
        }
        unknown_user_mask.map(|(secret, iterations)| b.set_unknown_user_mask(&secret, iterations));
        Ok(ServerConfig(b.build().or_raise()?))
    }
    fn metrics(now_ms: Now = None) -> Metrics { c.metrics().snapshot(now(now_ms)) }
    /// The answer to ApiVersions, which Kafka's clients ask again once authenticated.
    fn api_versions_response(frame: &[u8]) -> PyResult<Bytes> {
        Ok(c.api_versions_response(frame).or_raise()?.0.into())
    }
}}

/// What `check_config` found for one scope: `scope` (`client`, or `listener <NAME>`), the
/// `effective` settings as `(name, value)` pairs in order (secrets shown as `[hidden]`), the
/// `unknown` `sasl.*` and `ksasl.*` names and the `warnings` (settings without effect).
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ConfigReport(Report);

class! { ConfigReport |py, c| shared {
    #[getter] fn scope() -> &str { &c.scope }
    #[getter] fn effective() -> &[(String, String)] { &c.effective }
    #[getter] fn unknown() -> &[String] { &c.unknown }
    #[getter] fn warnings() -> &[String] { &c.warnings }
    {
        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let c = &self.0;
            let fields = (&c.scope, &c.effective, &c.unknown, &c.warnings).into_pyobject(py)?;
            Ok(format!("ConfigReport{}", fields.repr()?))
        }
    }
}}

/// The reports of `.properties` text as ksasl reads it: a client configuration's, or each
/// SASL listener's of a broker configuration (`listener`: that one only).
#[pyfunction]
#[pyo3(signature = (text, listener = None))]
pub(crate) fn check_config(text: &str, listener: Option<&str>) -> PyResult<Vec<ConfigReport>> {
    let reports = ksasl::config::check(text, listener).or_raise()?;
    Ok(reports.into_iter().map(ConfigReport).collect())
}
