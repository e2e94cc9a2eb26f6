//! The configurations of client and server connections, made by validated builders: every
//! value a host (or a binding) passes is checked once, here, with the same error codes in
//! every language, and the configuration is immutable and shared (`Arc`) once built.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::codec::{decode_body, encode_response, RequestHeader};
use super::messages::{
    error_code, valid_software_field, ApiVersionRange, ApiVersionsRequest, ApiVersionsResponse,
    API_VERSIONS, MAX_API_VERSIONS_VERSION, MAX_SASL_AUTHENTICATE_VERSION,
    MAX_SASL_HANDSHAKE_VERSION, SASL_AUTHENTICATE, SASL_HANDSHAKE,
};
use crate::credential::UnknownUserMask;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::{MechanismRegistry, DEFAULT_MAX_RECEIVE_SIZE};
use crate::names::GSSAPI;
use crate::random::SharedRandom;
use crate::secret::Secret;
use crate::session::{FailedReauthPolicy, ReauthPolicy, ReauthTiming, SaslMetrics};

/// Kafka's default `connection.failed.authentication.delay.ms`.
pub const DEFAULT_FAILED_AUTHENTICATION_DELAY_MS: i64 = 100;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidConfig, message)
}

fn non_negative(name: &str, v: i64) -> Result<i64> {
    if v < 0 {
        return Err(invalid(format!("{name} must not be negative, not {v}")));
    }
    Ok(v)
}

fn receive_size(v: i64) -> Result<usize> {
    frame_size("max_receive_size", v)
}

fn frame_size(name: &str, v: i64) -> Result<usize> {
    if !(1..=i64::from(i32::MAX)).contains(&v) {
        return Err(invalid(format!(
            "{name} must be 1 to {}, not {v}",
            i32::MAX
        )));
    }
    Ok(v as usize)
}

/// Kafka's `socket.request.max.bytes` default: 100 MiB.
pub const DEFAULT_MAX_REQUEST_SIZE: i64 = 104_857_600;

fn retry_policy(ms: i64) -> Result<FailedReauthPolicy> {
    FailedReauthPolicy::from_initial_delay_ms(non_negative("reauth_retry_ms", ms)?)
}

// ---------------------------------------------------------------------------------------
// Server.

/// Configuration shared by the server connections of one listener. Built by
/// [`ServerConfig::builder`].
#[derive(Debug)]
pub struct ServerConfig {
    registry: MechanismRegistry,
    enabled_mechanisms: Vec<String>,
    max_reauth_ms: i64,
    max_reauth_ms_by_mechanism: BTreeMap<String, i64>,
    max_receive_size: usize,
    max_request_size: usize,
    failed_authentication_delay_ms: i64,
    failed_reauth_policy: FailedReauthPolicy,
    api_versions: Vec<ApiVersionRange>,
    metrics: Arc<SaslMetrics>,
    unknown_user_mask: Option<Arc<UnknownUserMask>>,
    legacy_gssapi: bool,
}

/// The values of a [`ServerConfig`], checked by [`ServerConfigBuilder::build`]. Unset values
/// keep Kafka's defaults.
#[derive(Debug, Clone)]
pub struct ServerConfigBuilder {
    registry: MechanismRegistry,
    enabled_mechanisms: Option<Vec<String>>,
    max_reauth_ms: i64,
    max_reauth_ms_by_mechanism: Vec<(String, i64)>,
    max_receive_size: i64,
    max_request_size: i64,
    failed_authentication_delay_ms: i64,
    reauth_retry_ms: i64,
    api_versions: Vec<(i64, i64, i64)>,
    metrics: Option<Arc<SaslMetrics>>,
    unknown_user_mask: Option<(Secret, i64)>,
    legacy_gssapi: bool,
}

impl ServerConfigBuilder {
    /// Accepts pre-0.10 GSSAPI clients (KIP-43): when GSSAPI is enabled, a first packet that
    /// is a raw GSS-API token (RFC 2743's initial-token tag, which no Kafka request header
    /// can start with) begins a GSSAPI exchange in raw framing, as Kafka's broker did before
    /// 4.0. Off by default, as in Kafka 4.x (KAFKA-18339 removed it).
    pub fn set_legacy_gssapi(&mut self, on: bool) -> &mut Self {
        self.legacy_gssapi = on;
        self
    }

    /// `sasl.enabled.mechanisms`, in the order the handshake response lists them (default:
    /// every server mechanism of the registry). Each must be registered.
    pub fn set_enabled_mechanisms(&mut self, mechanisms: Vec<String>) -> &mut Self {
        self.enabled_mechanisms = Some(mechanisms);
        self
    }

    /// `connections.max.reauth.ms` (default 0: sessions are bounded only by credentials).
    pub fn set_max_reauth_ms(&mut self, ms: i64) -> &mut Self {
        self.max_reauth_ms = ms;
        self
    }

    /// `listener.name.<listener>.<mechanism>.connections.max.reauth.ms`: the value for one
    /// mechanism, which must be registered. Setting it again replaces the earlier value.
    pub fn set_max_reauth_ms_for(&mut self, mechanism: &str, ms: i64) -> &mut Self {
        self.max_reauth_ms_by_mechanism
            .retain(|(m, _)| m != mechanism);
        self.max_reauth_ms_by_mechanism
            .push((mechanism.to_string(), ms));
        self
    }

    /// `sasl.server.max.receive.size` (512 KiB): the largest authentication frame accepted.
    pub fn set_max_receive_size(&mut self, bytes: i64) -> &mut Self {
        self.max_receive_size = bytes;
        self
    }

    /// `socket.request.max.bytes` (104,857,600): the largest request frame of an
    /// authenticated connection ([`ServerConnection::check_frame_size`](super::server::ServerConnection::check_frame_size)).
    pub fn set_max_request_size(&mut self, bytes: i64) -> &mut Self {
        self.max_request_size = bytes;
        self
    }

    /// `connection.failed.authentication.delay.ms` (100).
    pub fn set_failed_authentication_delay_ms(&mut self, ms: i64) -> &mut Self {
        self.failed_authentication_delay_ms = ms;
        self
    }

    /// After a failed re-authentication: 0 (Kafka) closes the connection; a positive delay
    /// keeps the old session until it expires (the clients' retry policy).
    pub fn set_reauth_retry_ms(&mut self, ms: i64) -> &mut Self {
        self.reauth_retry_ms = ms;
        self
    }

    /// Adds (or replaces) an API in the ApiVersions answer (a broker lists all of its APIs).
    /// The APIs ksasl answers itself cannot be advertised beyond the versions it speaks.
    pub fn set_api_version(
        &mut self,
        api_key: i64,
        min_version: i64,
        max_version: i64,
    ) -> &mut Self {
        // A later value for the same API replaces the earlier one, valid or not.
        self.api_versions.retain(|(k, _, _)| *k != api_key);
        self.api_versions.push((api_key, min_version, max_version));
        self
    }

    /// Enumeration resistance (off by default, as in Kafka): a login for an unknown user of
    /// PLAIN or SCRAM gets a stand-in credential (for SCRAM a salt derived from the name under
    /// `secret`, and `iterations`) and fails at the final message with exactly the error and
    /// text of a wrong password, so a client cannot tell the two apart (RFC 5802 §5.1). The
    /// secret (at least 16 bytes) must stay the same across restarts and servers; iterations
    /// (4096 to 16384) should be those of the real credentials. The host still sees the
    /// difference: the error's `unknown_user` detail.
    pub fn set_unknown_user_mask(&mut self, secret: &[u8], iterations: i64) -> &mut Self {
        self.unknown_user_mask = Some((Secret::from_slice(secret), iterations));
        self
    }

    /// Shares the metrics of another configuration (default: a set of its own).
    pub fn set_metrics(&mut self, metrics: Arc<SaslMetrics>) -> &mut Self {
        self.metrics = Some(metrics);
        self
    }

    /// The configuration, if every value is valid (`INVALID_CONFIG` otherwise, naming it).
    pub fn build(&self) -> Result<Arc<ServerConfig>> {
        let registered = self.registry.server_mechanisms();
        let known = |m: &str| -> Result<()> {
            if registered.iter().any(|r| r == m) {
                Ok(())
            } else {
                Err(invalid(format!(
                    "the SASL mechanism {m:?} is not a server mechanism of the registry"
                )))
            }
        };
        let enabled = self
            .enabled_mechanisms
            .clone()
            .unwrap_or(registered.clone());
        if enabled.is_empty() {
            return Err(invalid("no SASL mechanism is enabled"));
        }
        enabled.iter().try_for_each(|m| known(m))?;
        let mut by_mechanism = BTreeMap::new();
        for (m, ms) in &self.max_reauth_ms_by_mechanism {
            known(m)?;
            by_mechanism.insert(m.clone(), non_negative("max_reauth_ms", *ms)?);
        }
        let mut api_versions = default_api_versions();
        for (key, min, max) in &self.api_versions {
            let range = api_version_range(*key, *min, *max)?;
            api_versions.retain(|a| a.api_key != range.api_key);
            api_versions.push(range);
        }
        Ok(Arc::new(ServerConfig {
            registry: self.registry.clone(),
            enabled_mechanisms: enabled,
            max_reauth_ms: non_negative("max_reauth_ms", self.max_reauth_ms)?,
            max_reauth_ms_by_mechanism: by_mechanism,
            max_receive_size: receive_size(self.max_receive_size)?,
            max_request_size: frame_size("max_request_size", self.max_request_size)?,
            failed_authentication_delay_ms: non_negative(
                "failed_authentication_delay_ms",
                self.failed_authentication_delay_ms,
            )?,
            failed_reauth_policy: retry_policy(self.reauth_retry_ms)?,
            api_versions,
            metrics: self.metrics.clone().unwrap_or_default(),
            unknown_user_mask: match &self.unknown_user_mask {
                Some((secret, iterations)) => {
                    let iterations = u32::try_from(*iterations).unwrap_or(0);
                    Some(Arc::new(UnknownUserMask::new(secret.expose(), iterations)?))
                }
                None => None,
            },
            legacy_gssapi: self.legacy_gssapi,
        }))
    }
}

fn default_api_versions() -> Vec<ApiVersionRange> {
    let r = |api_key, max_version| ApiVersionRange {
        api_key,
        min_version: 0,
        max_version,
    };
    vec![
        r(SASL_HANDSHAKE, MAX_SASL_HANDSHAKE_VERSION),
        r(API_VERSIONS, MAX_API_VERSIONS_VERSION),
        r(SASL_AUTHENTICATE, MAX_SASL_AUTHENTICATE_VERSION),
    ]
}

fn api_version_range(api_key: i64, min: i64, max: i64) -> Result<ApiVersionRange> {
    let v = |x: i64| i16::try_from(x).ok().filter(|x| *x >= 0);
    let (Some(k), Some(lo), Some(hi)) = (v(api_key), v(min), v(max)) else {
        return Err(invalid(format!(
            "API {api_key}: API keys and versions are 0 to {}",
            i16::MAX
        )));
    };
    if hi < lo {
        return Err(invalid(format!(
            "API {api_key}: the version range {min}..{max} is invalid"
        )));
    }
    let own = match k {
        SASL_HANDSHAKE => Some(MAX_SASL_HANDSHAKE_VERSION),
        API_VERSIONS => Some(MAX_API_VERSIONS_VERSION),
        SASL_AUTHENTICATE => Some(MAX_SASL_AUTHENTICATE_VERSION),
        _ => None,
    };
    if let Some(own) = own.filter(|own| hi > *own) {
        return Err(invalid(format!(
            "API {api_key} is answered by ksasl, which speaks versions 0..{own}"
        )));
    }
    Ok(ApiVersionRange {
        api_key: k,
        min_version: lo,
        max_version: hi,
    })
}

impl ServerConfig {
    /// A builder with Kafka's defaults, enabling every server mechanism of `registry`.
    pub fn builder(registry: MechanismRegistry) -> ServerConfigBuilder {
        ServerConfigBuilder {
            registry,
            enabled_mechanisms: None,
            max_reauth_ms: 0,
            max_reauth_ms_by_mechanism: Vec::new(),
            max_receive_size: DEFAULT_MAX_RECEIVE_SIZE as i64,
            max_request_size: DEFAULT_MAX_REQUEST_SIZE,
            failed_authentication_delay_ms: DEFAULT_FAILED_AUTHENTICATION_DELAY_MS,
            reauth_retry_ms: 0,
            api_versions: Vec::new(),
            metrics: None,
            unknown_user_mask: None,
            legacy_gssapi: false,
        }
    }

    /// Kafka's defaults for every server mechanism of `registry`.
    pub fn new(registry: MechanismRegistry) -> Result<Arc<ServerConfig>> {
        Self::builder(registry).build()
    }

    /// The server mechanisms, with their credential lookups.
    pub fn registry(&self) -> &MechanismRegistry {
        &self.registry
    }

    /// `sasl.enabled.mechanisms`.
    pub fn enabled_mechanisms(&self) -> &[String] {
        &self.enabled_mechanisms
    }

    /// `connections.max.reauth.ms` for `mechanism` (its own value, or the listener's).
    pub fn max_reauth_ms(&self, mechanism: &str) -> i64 {
        self.max_reauth_ms_by_mechanism
            .get(mechanism)
            .copied()
            .unwrap_or(self.max_reauth_ms)
    }

    /// `sasl.server.max.receive.size`.
    pub fn max_receive_size(&self) -> usize {
        self.max_receive_size
    }

    /// `socket.request.max.bytes`.
    pub fn max_request_size(&self) -> usize {
        self.max_request_size
    }

    /// The stand-in credentials for unknown users, when enumeration resistance is on.
    pub fn unknown_user_mask(&self) -> Option<&Arc<UnknownUserMask>> {
        self.unknown_user_mask.as_ref()
    }

    /// Whether a pre-0.10 client's raw GSSAPI first packet is accepted (and GSSAPI is
    /// enabled); see [`ServerConfigBuilder::set_legacy_gssapi`].
    pub fn legacy_gssapi(&self) -> bool {
        self.legacy_gssapi && self.enabled_mechanisms.iter().any(|m| m == GSSAPI)
    }

    /// `connection.failed.authentication.delay.ms`.
    pub fn failed_authentication_delay_ms(&self) -> i64 {
        self.failed_authentication_delay_ms
    }

    /// What a failed re-authentication does.
    pub fn failed_reauth_policy(&self) -> FailedReauthPolicy {
        self.failed_reauth_policy
    }

    /// The APIs advertised in ApiVersions answers.
    pub fn api_versions(&self) -> &[ApiVersionRange] {
        &self.api_versions
    }

    /// Kafka's broker metrics over every connection of this configuration.
    pub fn metrics(&self) -> &Arc<SaslMetrics> {
        &self.metrics
    }

    /// The answer to an ApiVersions request `frame` (without its length prefix), framed, as
    /// the connection answers it before authentication: this listener's APIs, the KIP-511
    /// fallback (v0, error 35) for a version ksasl does not speak, or INVALID_REQUEST for an
    /// invalid request. The flag tells whether the answer was a success. Hosts use it for the
    /// ApiVersions requests Kafka's clients send after authentication.
    pub fn api_versions_response(&self, frame: &[u8]) -> Result<(Vec<u8>, bool)> {
        let (header, body) = RequestHeader::parse(frame)?;
        if header.api_key != API_VERSIONS {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("API {} is not ApiVersions", header.api_key),
            ));
        }
        Ok(self.api_versions_answer(&header, body))
    }

    /// The answer to a parsed ApiVersions request (see
    /// [`ServerConfig::api_versions_response`]).
    pub(crate) fn api_versions_answer(
        &self,
        header: &RequestHeader,
        body: super::codec::Decoder<'_>,
    ) -> (Vec<u8>, bool) {
        let v = header.api_version;
        let corr = header.correlation_id;
        let answer = |error_code, api_keys, version| {
            let r = ApiVersionsResponse {
                error_code,
                api_keys,
                throttle_time_ms: 0,
            };
            encode_response(&r, version, corr).unwrap_or_default()
        };
        if !(0..=MAX_API_VERSIONS_VERSION).contains(&v) {
            let own = vec![ApiVersionRange {
                api_key: API_VERSIONS,
                min_version: 0,
                max_version: MAX_API_VERSIONS_VERSION,
            }];
            return (answer(error_code::UNSUPPORTED_VERSION, own, 0), false);
        }
        let valid = decode_body::<ApiVersionsRequest>(v, body).is_ok_and(|b| b.is_valid());
        if !valid {
            return (answer(error_code::INVALID_REQUEST, vec![], v), false);
        }
        (answer(error_code::NONE, self.api_versions.clone(), v), true)
    }
}

// ---------------------------------------------------------------------------------------
// Client.

/// Configuration of client connections. Built by [`ClientConfig::builder`].
#[derive(Debug)]
pub struct ClientConfig {
    registry: MechanismRegistry,
    mechanism: String,
    client_id: Option<String>,
    api_versions_version: i16,
    software: (String, String),
    known_versions: Option<(i16, Option<i16>)>,
    reauth_policy: ReauthPolicy,
    failed_reauth_policy: FailedReauthPolicy,
    max_receive_size: usize,
    random: SharedRandom,
    metrics: Arc<SaslMetrics>,
}

/// The values of a [`ClientConfig`], checked by [`ClientConfigBuilder::build`]. Unset values
/// keep Kafka's defaults.
#[derive(Debug, Clone)]
pub struct ClientConfigBuilder {
    registry: MechanismRegistry,
    mechanism: String,
    client_id: Option<String>,
    api_versions_version: i64,
    software: (String, String),
    known_versions: Option<(i64, Option<i64>)>,
    reauth_timing: ReauthTiming,
    reauth_min_delay_ms: i64,
    reauth_retry_ms: i64,
    max_receive_size: i64,
    random: SharedRandom,
    metrics: Option<Arc<SaslMetrics>>,
}

impl ClientConfigBuilder {
    /// `client.id`, sent in request headers (default: none).
    pub fn set_client_id(&mut self, client_id: Option<&str>) -> &mut Self {
        self.client_id = client_id.map(str::to_string);
        self
    }

    /// The ApiVersions version sent first: 0 (Kafka's client, the default) to 5 (librdkafka
    /// sends 3). A broker that does not know it answers KIP-511's fallback and the client
    /// retries with v0.
    pub fn set_api_versions_version(&mut self, version: i64) -> &mut Self {
        self.api_versions_version = version;
        self
    }

    /// Skips ApiVersions because the host already knows the broker's versions: the
    /// SaslHandshake version (0-1) and the SaslAuthenticate version (0-2; `None`: legacy
    /// framing, which SaslHandshake v0 needs).
    pub fn set_known_versions(&mut self, handshake: i64, authenticate: Option<i64>) -> &mut Self {
        self.known_versions = Some((handshake, authenticate));
        self
    }

    /// The software name and version sent in ApiVersions v3+ (default `ksasl` and its
    /// version).
    pub fn set_software(&mut self, name: &str, version: &str) -> &mut Self {
        self.software = (name.to_string(), version.to_string());
        self
    }

    /// When to re-authenticate (default: as Kafka's Java client).
    pub fn set_reauth_timing(&mut self, timing: ReauthTiming) -> &mut Self {
        self.reauth_timing = timing;
        self
    }

    /// The smallest delay between an authentication and the next re-authentication
    /// (default 1000 ms).
    pub fn set_reauth_min_delay_ms(&mut self, ms: i64) -> &mut Self {
        self.reauth_min_delay_ms = ms;
        self
    }

    /// After a failed re-authentication: 0 (Kafka) fails the connection; a positive delay
    /// keeps the old session and retries after it, then twice it, then four times it (must
    /// match the broker's policy).
    pub fn set_reauth_retry_ms(&mut self, ms: i64) -> &mut Self {
        self.reauth_retry_ms = ms;
        self
    }

    /// The largest SASL response accepted (512 KiB).
    pub fn set_max_receive_size(&mut self, bytes: i64) -> &mut Self {
        self.max_receive_size = bytes;
        self
    }

    /// Randomness for the re-authentication schedule (default: the operating system's).
    pub fn set_random(&mut self, random: SharedRandom) -> &mut Self {
        self.random = random;
        self
    }

    /// Shares the metrics of another configuration (default: a set of its own).
    pub fn set_metrics(&mut self, metrics: Arc<SaslMetrics>) -> &mut Self {
        self.metrics = Some(metrics);
        self
    }

    /// The configuration, if every value is valid: `UNKNOWN_MECHANISM` when the registry has
    /// no client mechanism of that name, `INVALID_CONFIG` naming any other bad value.
    pub fn build(&self) -> Result<Arc<ClientConfig>> {
        if !self.registry.client_mechanisms().contains(&self.mechanism) {
            return Err(Error::new(
                ErrorCode::UnknownMechanism,
                format!("no client mechanism {} in the registry", self.mechanism),
            ));
        }
        if self
            .client_id
            .as_ref()
            .is_some_and(|c| c.len() > i16::MAX as usize)
        {
            return Err(invalid("client_id is longer than 32767 bytes"));
        }
        let (name, version) = &self.software;
        if !valid_software_field(name) || !valid_software_field(version) {
            return Err(invalid(
                "the software name and version must be alphanumerics, '-' and '.', starting and ending alphanumeric",
            ));
        }
        Ok(Arc::new(ClientConfig {
            registry: self.registry.clone(),
            mechanism: self.mechanism.clone(),
            client_id: self.client_id.clone(),
            api_versions_version: self.checked_api_versions_version()?,
            software: self.software.clone(),
            known_versions: self.checked_known_versions()?,
            reauth_policy: ReauthPolicy {
                timing: self.reauth_timing,
                min_delay_ms: non_negative("reauth_min_delay_ms", self.reauth_min_delay_ms)?,
            },
            failed_reauth_policy: retry_policy(self.reauth_retry_ms)?,
            max_receive_size: receive_size(self.max_receive_size)?,
            random: self.random.clone(),
            metrics: self.metrics.clone().unwrap_or_default(),
        }))
    }

    fn checked_api_versions_version(&self) -> Result<i16> {
        match i16::try_from(self.api_versions_version) {
            Ok(v) if (0..=MAX_API_VERSIONS_VERSION).contains(&v) => Ok(v),
            _ => Err(invalid(format!(
                "the ApiVersions version must be 0 to {MAX_API_VERSIONS_VERSION}, not {}",
                self.api_versions_version
            ))),
        }
    }

    fn checked_known_versions(&self) -> Result<Option<(i16, Option<i16>)>> {
        let Some((handshake, authenticate)) = self.known_versions else {
            return Ok(None);
        };
        let ok = match (handshake, authenticate) {
            (0, None) => true,
            (1, Some(a)) => (0..=i64::from(MAX_SASL_AUTHENTICATE_VERSION)).contains(&a),
            _ => false,
        };
        if !ok {
            return Err(invalid(format!(
                "known versions: SaslHandshake 1 with SaslAuthenticate 0-2, or SaslHandshake 0 with legacy framing; not {handshake} and {authenticate:?}"
            )));
        }
        Ok(Some((handshake as i16, authenticate.map(|a| a as i16))))
    }
}

impl ClientConfig {
    /// A builder with Kafka's defaults for `mechanism` from `registry`.
    pub fn builder(registry: MechanismRegistry, mechanism: &str) -> ClientConfigBuilder {
        ClientConfigBuilder {
            registry,
            mechanism: mechanism.to_string(),
            client_id: None,
            api_versions_version: 0,
            software: ("ksasl".into(), env!("CARGO_PKG_VERSION").into()),
            known_versions: None,
            reauth_timing: ReauthTiming::Kafka,
            reauth_min_delay_ms: ReauthPolicy::default().min_delay_ms,
            reauth_retry_ms: 0,
            max_receive_size: DEFAULT_MAX_RECEIVE_SIZE as i64,
            random: SharedRandom::default(),
            metrics: None,
        }
    }

    /// Kafka's defaults for `mechanism` from `registry`.
    pub fn new(registry: MechanismRegistry, mechanism: &str) -> Result<Arc<ClientConfig>> {
        Self::builder(registry, mechanism).build()
    }

    /// The client mechanisms.
    pub fn registry(&self) -> &MechanismRegistry {
        &self.registry
    }

    /// `sasl.mechanism`.
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }

    /// `client.id`.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The ApiVersions version sent first.
    pub fn api_versions_version(&self) -> i16 {
        self.api_versions_version
    }

    /// The software name and version sent in ApiVersions v3+.
    pub fn software(&self) -> (&str, &str) {
        (&self.software.0, &self.software.1)
    }

    /// The SaslHandshake and SaslAuthenticate versions given by the host, if any.
    pub fn known_versions(&self) -> Option<(i16, Option<i16>)> {
        self.known_versions
    }

    /// When connections re-authenticate.
    pub fn reauth_policy(&self) -> ReauthPolicy {
        self.reauth_policy
    }

    /// What a failed re-authentication does.
    pub fn failed_reauth_policy(&self) -> FailedReauthPolicy {
        self.failed_reauth_policy
    }

    /// The largest SASL response accepted.
    pub fn max_receive_size(&self) -> usize {
        self.max_receive_size
    }

    /// The randomness of the re-authentication schedule.
    pub fn random(&self) -> &SharedRandom {
        &self.random
    }

    /// Kafka's client metrics over every connection of this configuration.
    pub fn metrics(&self) -> &Arc<SaslMetrics> {
        &self.metrics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_set_again_replaces_the_refused_one() {
        let registry = MechanismRegistry::password_servers(None);
        let mut b = ServerConfig::builder(registry);
        b.set_api_version(3, 5, 1)
            .set_max_reauth_ms_for("PLAIN", -1);
        assert_eq!(b.build().unwrap_err().code(), ErrorCode::InvalidConfig);
        b.set_api_version(3, 0, 12)
            .set_max_reauth_ms_for("PLAIN", 30_000);
        let c = b.build().unwrap();
        assert_eq!(c.max_reauth_ms("PLAIN"), 30_000);
        assert!(c
            .api_versions()
            .iter()
            .any(|a| (a.api_key, a.min_version, a.max_version) == (3, 0, 12)));
    }
}
