//! A broker listener's SASL settings from `server.properties`, with Kafka's precedence:
//! for listener `L` and mechanism `M` (both lower case in the names), a setting Kafka reads
//! per mechanism comes from `listener.name.L.M.<name>`, then `listener.name.L.<name>`, then
//! `<name>`; a listener setting from `listener.name.L.<name>`, then `<name>`.
//!
//! Per-mechanism settings, as Kafka reads them: the JAAS entry (only
//! `listener.name.L.M.sasl.jaas.config`: an unprefixed `sasl.jaas.config` is ignored by a
//! broker, with a warning), `connections.max.reauth.ms`, `sasl.server.callback.handler.class`
//! (only mechanism-prefixed) and the OAUTHBEARER validation settings (`sasl.oauthbearer.*`).

use std::collections::BTreeMap;
use std::fmt;

use super::client::{
    bad_value, invalid, KRB5_LOGIN_MODULE, OAUTHBEARER_LOGIN_MODULE, PLAIN_LOGIN_MODULE,
    SCRAM_LOGIN_MODULE,
};
use super::jaas::{self, JaasEntry};
use super::properties::Properties;
use crate::error::{quote, Result};
use crate::mech::oauthbearer::{JwtValidatorConfig, UnsecuredValidatorConfig};
use crate::names::{GSSAPI, OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512};
use crate::secret::Secret;

/// Kafka's JWKS validator callback handler (`sasl.server.callback.handler.class`).
pub const JWKS_VALIDATOR_HANDLER: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler";

/// Broker names of Kafka 4.4 this parser reads, beyond the client names of
/// [`KAFKA_CLIENT_NAMES`](super::client::KAFKA_CLIENT_NAMES), which a broker reads too (its own
/// logins, OAUTHBEARER validation, Kerberos).
pub const KAFKA_BROKER_NAMES: &[&str] = &[
    "listeners",
    "listener.security.protocol.map",
    "sasl.enabled.mechanisms",
    "sasl.mechanism.inter.broker.protocol",
    "sasl.mechanism.controller.protocol",
    "sasl.server.callback.handler.class",
    "sasl.server.max.receive.size",
    "connections.max.reauth.ms",
    "connection.failed.authentication.delay.ms",
    "sasl.kerberos.principal.to.local.rules",
    "delegation.token.secret.key",
    "delegation.token.max.lifetime.ms",
    "delegation.token.expiry.time.ms",
    "delegation.token.expiry.check.interval.ms",
];

/// Kafka's default `sasl.server.max.receive.size` (512 KiB).
pub const DEFAULT_SERVER_MAX_RECEIVE_SIZE: i64 = 524_288;

/// How one enabled mechanism authenticates.
#[derive(Clone)]
pub enum ServerMechanism {
    /// PLAIN against the JAAS entry's `user_<name>="<password>"` options (Kafka's
    /// `PlainServerCallbackHandler`).
    Plain {
        /// Users and passwords, in order.
        users: Vec<(String, Secret)>,
    },
    /// SCRAM against the credential store of the host (Kafka keeps them in its metadata).
    Scram,
    /// OAUTHBEARER with Kafka's unsecured validator (the `unsecuredValidator*` options).
    UnsecuredOAuthBearer(UnsecuredValidatorConfig),
    /// OAUTHBEARER with JWKS validation (`OAuthBearerValidatorCallbackHandler`).
    JwksOAuthBearer {
        /// `sasl.oauthbearer.jwks.endpoint.url`.
        jwks_endpoint_url: String,
        /// The validator's settings.
        validator: JwtValidatorConfig,
        /// How to reach the endpoint: the JAAS entry's `ssl.*` options (as Kafka reads them)
        /// and `sasl.login.connect.timeout.ms` / `.read.timeout.ms`.
        http: Properties,
    },
    /// GSSAPI with the broker's Kerberos identity.
    Gssapi {
        /// The JAAS `principal`.
        principal: Option<String>,
        /// The JAAS `keyTab` (with `useKeyTab=true`).
        keytab: Option<String>,
        /// `sasl.kerberos.service.name`.
        service_name: Option<String>,
    },
}

impl fmt::Debug for ServerMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerMechanism::Plain { users } => f
                .debug_struct("Plain")
                .field("users", &users.iter().map(|(u, _)| u).collect::<Vec<_>>())
                .finish(),
            ServerMechanism::Scram => f.write_str("Scram"),
            ServerMechanism::UnsecuredOAuthBearer(c) => {
                f.debug_tuple("UnsecuredOAuthBearer").field(c).finish()
            }
            ServerMechanism::JwksOAuthBearer {
                jwks_endpoint_url, ..
            } => f
                .debug_struct("JwksOAuthBearer")
                .field("jwks_endpoint_url", jwks_endpoint_url)
                .finish_non_exhaustive(),
            ServerMechanism::Gssapi {
                principal,
                keytab,
                service_name,
            } => f
                .debug_struct("Gssapi")
                .field("principal", principal)
                .field("keytab", keytab)
                .field("service_name", service_name)
                .finish(),
        }
    }
}

/// `delegation.token.*`.
#[derive(Clone)]
pub struct DelegationTokenSettings {
    /// `delegation.token.secret.key`.
    pub secret_key: Secret,
    /// `delegation.token.max.lifetime.ms` (7 days).
    pub max_lifetime_ms: i64,
    /// `delegation.token.expiry.time.ms` (1 day).
    pub expiry_time_ms: i64,
}

impl fmt::Debug for DelegationTokenSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegationTokenSettings")
            .field("max_lifetime_ms", &self.max_lifetime_ms)
            .field("expiry_time_ms", &self.expiry_time_ms)
            .finish_non_exhaustive()
    }
}

/// One listener's SASL settings.
#[derive(Clone, Debug)]
pub struct ServerSettings {
    /// The listener's name as given (`SASL_SSL`, `EXTERNAL`, ...).
    pub listener: String,
    /// `sasl.enabled.mechanisms`, in order.
    pub enabled_mechanisms: Vec<String>,
    /// Each enabled mechanism's settings.
    pub mechanisms: BTreeMap<String, ServerMechanism>,
    /// `connections.max.reauth.ms` per mechanism (0: sessions do not expire).
    pub max_reauth_ms: BTreeMap<String, i64>,
    /// `sasl.server.max.receive.size`.
    pub max_receive_size: i64,
    /// `connection.failed.authentication.delay.ms`.
    pub failed_authentication_delay_ms: i64,
    /// `sasl.kerberos.principal.to.local.rules`.
    pub principal_to_local_rules: Vec<String>,
    /// `delegation.token.*`, when `delegation.token.secret.key` is set.
    pub delegation_tokens: Option<DelegationTokenSettings>,
    /// `sasl.*` and `ksasl.*` names not known.
    pub unknown: Vec<String>,
    /// Settings without effect as configured.
    pub warnings: Vec<String>,
}

/// The SASL listeners of `listeners` (by `listener.security.protocol.map`, or by their own
/// names when there is no map), in order.
pub fn sasl_listeners(props: &Properties) -> Result<Vec<String>> {
    let map: Vec<(String, String)> = match props.get("listener.security.protocol.map") {
        Some(m) => m
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                item.split_once(':')
                    .map(|(l, p)| (l.trim().to_ascii_uppercase(), p.trim().to_ascii_uppercase()))
                    .ok_or_else(|| {
                        bad_value(
                            "listener.security.protocol.map",
                            m,
                            "comma-separated LISTENER:PROTOCOL pairs",
                            "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
                        )
                    })
            })
            .collect::<Result<_>>()?,
        None => ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
            .iter()
            .map(|p| (p.to_string(), p.to_string()))
            .collect(),
    };
    let Some(listeners) = props.get("listeners") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in listeners
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let name = item.split_once("://").map(|(n, _)| n).ok_or_else(|| {
            bad_value(
                "listeners",
                listeners,
                "comma-separated NAME://host:port entries",
                "PLAINTEXT://:9092",
            )
        })?;
        let upper = name.trim().to_ascii_uppercase();
        let protocol = map
            .iter()
            .find(|(l, _)| *l == upper)
            .map(|(_, p)| p.as_str())
            .ok_or_else(|| {
                invalid(format!(
                    "listener {} has no security protocol in listener.security.protocol.map",
                    quote(name.as_bytes())
                ))
            })?;
        if protocol.starts_with("SASL_") {
            out.push(name.trim().to_string());
        }
    }
    Ok(out)
}

/// Where `listener` listens, from its `listeners` entry (`NAME://host:port`; Kafka's names
/// ignore case): `(host, port)`, the host as written (empty: every interface; an IPv6 address
/// without its brackets), or `None` when the file has no `listeners` or no entry of that name.
/// A malformed entry or port is `INVALID_CONFIG`.
pub fn listener_address(props: &Properties, listener: &str) -> Result<Option<(String, u16)>> {
    let Some(listeners) = props.get("listeners") else {
        return Ok(None);
    };
    let malformed = || {
        bad_value(
            "listeners",
            listeners,
            "comma-separated NAME://host:port entries",
            "PLAINTEXT://:9092",
        )
    };
    for item in listeners
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let (name, address) = item.split_once("://").ok_or_else(malformed)?;
        if !name.trim().eq_ignore_ascii_case(listener.trim()) {
            continue;
        }
        let (host, port) = address.rsplit_once(':').ok_or_else(malformed)?;
        let port: u16 = port.trim().parse().map_err(|_| malformed())?;
        let host = host.trim();
        let host = match host.strip_prefix('[') {
            Some(h) => h.strip_suffix(']').ok_or_else(malformed)?,
            None => host,
        };
        return Ok(Some((host.to_string(), port)));
    }
    Ok(None)
}

/// The listener a host serves from `props`: `requested` when given (Kafka's names ignore case)
/// and it is one of the SASL listeners of `listeners`, or any name when the file lists none (a
/// snippet of listener settings); without `requested`, the file's only SASL listener. An
/// unknown name, none or several are `INVALID_CONFIG`, naming the listeners to choose from.
pub fn choose_listener(props: &Properties, requested: Option<&str>) -> Result<String> {
    let sasl = sasl_listeners(props)?;
    let list = sasl.join(", ");
    match requested.map(str::trim) {
        Some(name) if sasl.is_empty() || sasl.iter().any(|l| l.eq_ignore_ascii_case(name)) => {
            Ok(name.to_string())
        }
        Some(name) => Err(invalid(format!(
            "listener {} is not a SASL listener of the configuration: its SASL listeners are {list}",
            quote(name.as_bytes())
        ))),
        None => match sasl.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(invalid(
                "the configuration has no SASL listener in listeners (with \
                 listener.security.protocol.map): name one",
            )),
            _ => Err(invalid(format!(
                "the configuration has {} SASL listeners ({list}): choose one",
                sasl.len()
            ))),
        },
    }
}

struct Lookup<'a> {
    props: &'a Properties,
    listener_prefix: String,
}

impl<'a> Lookup<'a> {
    /// A listener setting: `listener.name.L.<key>`, then `<key>`.
    fn listener(&self, key: &str) -> Option<(&'a str, String)> {
        let prefixed = format!("{}{key}", self.listener_prefix);
        if let Some(v) = self.props.get(&prefixed) {
            return Some((v.trim(), prefixed));
        }
        self.props.get(key).map(|v| (v.trim(), key.to_string()))
    }

    /// A mechanism setting: `listener.name.L.M.<key>`, then the listener setting.
    fn mechanism(&self, mechanism: &str, key: &str) -> Option<(&'a str, String)> {
        let prefixed = format!(
            "{}{}.{key}",
            self.listener_prefix,
            mechanism.to_ascii_lowercase()
        );
        if let Some(v) = self.props.get(&prefixed) {
            return Some((v.trim(), prefixed));
        }
        self.listener(key)
    }

    /// Only `listener.name.L.M.<key>`.
    fn mechanism_only(&self, mechanism: &str, key: &str) -> Option<(&'a str, String)> {
        let prefixed = format!(
            "{}{}.{key}",
            self.listener_prefix,
            mechanism.to_ascii_lowercase()
        );
        self.props.get(&prefixed).map(|v| (v.trim(), prefixed))
    }
}

fn long(value: &str, key: &str, expected: &str, default: &str) -> Result<i64> {
    value
        .trim()
        .parse::<i64>()
        .map_err(|_| bad_value(key, value, expected, default))
}

impl ServerSettings {
    /// Reads the settings of `listener` (its name as in `listeners`, any case).
    pub fn from_properties(props: &Properties, listener: &str) -> Result<Self> {
        let listener = listener.trim();
        if listener.is_empty() {
            return Err(invalid("the listener's name is empty"));
        }
        let look = Lookup {
            props,
            listener_prefix: format!("listener.name.{}.", listener.to_ascii_lowercase()),
        };
        let mut warnings = Vec::new();
        let enabled_mechanisms: Vec<String> = match look.listener("sasl.enabled.mechanisms") {
            Some((v, key)) => {
                let list: Vec<String> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                if list.is_empty() {
                    return Err(bad_value(
                        &key,
                        v,
                        "a comma-separated list of SASL mechanisms",
                        "GSSAPI",
                    ));
                }
                for m in &list {
                    crate::mech::validate_mechanism_name(m).map_err(|_| {
                        bad_value(
                            &key,
                            v,
                            "a comma-separated list of SASL mechanisms",
                            "GSSAPI",
                        )
                    })?;
                }
                list
            }
            None => vec![GSSAPI.to_string()],
        };
        let listener_jaas = format!("{}sasl.jaas.config", look.listener_prefix);
        if props.contains(&listener_jaas) {
            warnings.push(format!(
                "{listener_jaas} is ignored by Kafka: a broker reads JAAS only per mechanism \
                 ({}<mechanism>.sasl.jaas.config)",
                look.listener_prefix
            ));
        }
        if props.contains("sasl.jaas.config") {
            warnings.push(
                "Server config sasl.jaas.config should be prefixed with SASL mechanism name, \
                 ignoring config; use listener.name.<listener>.<mechanism>.sasl.jaas.config"
                    .to_string(),
            );
        }
        let default_reauth = match look.listener("connections.max.reauth.ms") {
            Some((v, key)) => long(v, &key, "a number of milliseconds", "0")?,
            None => 0,
        };
        let mut max_reauth_ms = BTreeMap::new();
        let mut mechanisms = BTreeMap::new();
        for m in &enabled_mechanisms {
            let reauth = match look.mechanism_only(m, "connections.max.reauth.ms") {
                Some((v, key)) => long(v, &key, "a number of milliseconds", "0")?,
                None => default_reauth,
            };
            if reauth < 0 {
                return Err(invalid(format!(
                    "connections.max.reauth.ms for {m} must not be negative, not {reauth}"
                )));
            }
            max_reauth_ms.insert(m.clone(), reauth);
            let jaas_key = format!(
                "{}{}.sasl.jaas.config",
                look.listener_prefix,
                m.to_ascii_lowercase()
            );
            let entry = match props.get(&jaas_key) {
                Some(text) => jaas::parse(text)
                    .map_err(|e| invalid(format!("{jaas_key}: {}", e.message())))?,
                None => {
                    return Err(invalid(format!(
                        "Could not find a 'KafkaServer' or '{}.KafkaServer' entry in the JAAS \
                         configuration for {m}; set {jaas_key}",
                        listener.to_ascii_lowercase()
                    )))
                }
            };
            let mechanism = server_mechanism(&look, m, &jaas_key, &entry, &mut warnings)?;
            mechanisms.insert(m.clone(), mechanism);
        }
        let max_receive_size = match look.listener("sasl.server.max.receive.size") {
            Some((v, key)) => {
                let n = long(v, &key, "a number of bytes", "524288")?;
                if n <= 0 || n > i64::from(i32::MAX) {
                    return Err(bad_value(&key, v, "1 to 2147483647 bytes", "524288"));
                }
                n
            }
            None => DEFAULT_SERVER_MAX_RECEIVE_SIZE,
        };
        let failed_authentication_delay_ms =
            match look.listener("connection.failed.authentication.delay.ms") {
                Some((v, key)) => {
                    let n = long(v, &key, "a number of milliseconds", "100")?;
                    if n < 0 {
                        return Err(bad_value(&key, v, "at least 0 ms", "100"));
                    }
                    n
                }
                None => 100,
            };
        let principal_to_local_rules = match look.listener("sasl.kerberos.principal.to.local.rules")
        {
            Some((v, _)) => split_rules(v),
            None => vec!["DEFAULT".to_string()],
        };
        if enabled_mechanisms.iter().any(|m| m == GSSAPI) {
            crate::mech::gssapi::KerberosShortNamer::new(None, &principal_to_local_rules).map_err(
                |e| {
                    invalid(format!(
                        "sasl.kerberos.principal.to.local.rules: {}",
                        e.message()
                    ))
                },
            )?;
        }
        let delegation_tokens = match props.get("delegation.token.secret.key") {
            None => None,
            Some("") => None,
            Some(key) => {
                let max_lifetime_ms = match props.get("delegation.token.max.lifetime.ms") {
                    Some(v) => long(
                        v,
                        "delegation.token.max.lifetime.ms",
                        "milliseconds, at least 1",
                        "604800000",
                    )?,
                    None => 604_800_000,
                };
                let expiry_time_ms = match props.get("delegation.token.expiry.time.ms") {
                    Some(v) => long(
                        v,
                        "delegation.token.expiry.time.ms",
                        "milliseconds, at least 1",
                        "86400000",
                    )?,
                    None => 86_400_000,
                };
                if max_lifetime_ms < 1 {
                    return Err(bad_value(
                        "delegation.token.max.lifetime.ms",
                        &max_lifetime_ms.to_string(),
                        "milliseconds, at least 1",
                        "604800000",
                    ));
                }
                if expiry_time_ms < 1 {
                    return Err(bad_value(
                        "delegation.token.expiry.time.ms",
                        &expiry_time_ms.to_string(),
                        "milliseconds, at least 1",
                        "86400000",
                    ));
                }
                Some(DelegationTokenSettings {
                    secret_key: Secret::from(key),
                    max_lifetime_ms,
                    expiry_time_ms,
                })
            }
        };
        let unknown = unknown_names(props, &look.listener_prefix);
        Ok(ServerSettings {
            listener: listener.to_string(),
            enabled_mechanisms,
            mechanisms,
            max_reauth_ms,
            max_receive_size,
            failed_authentication_delay_ms,
            principal_to_local_rules,
            delegation_tokens,
            unknown,
            warnings,
        })
    }

    /// Reads `.properties` text.
    pub fn from_text(text: &str, listener: &str) -> Result<Self> {
        Self::from_properties(&Properties::parse(text)?, listener)
    }

    /// The settings as `(name, value)` pairs in a fixed order, secrets hidden.
    pub fn effective(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut put = |k: String, v: String| out.push((k, v));
        put("listener".into(), self.listener.clone());
        put(
            "sasl.enabled.mechanisms".into(),
            self.enabled_mechanisms.join(","),
        );
        for m in &self.enabled_mechanisms {
            put(
                format!("{m}.connections.max.reauth.ms"),
                self.max_reauth_ms.get(m).copied().unwrap_or(0).to_string(),
            );
            match self.mechanisms.get(m) {
                Some(ServerMechanism::Plain { users }) => {
                    put(format!("{m}.validator"), "plain-users".into());
                    put(
                        format!("{m}.users"),
                        users
                            .iter()
                            .map(|(u, _)| u.as_str())
                            .collect::<Vec<_>>()
                            .join(","),
                    );
                }
                Some(ServerMechanism::Scram) => put(format!("{m}.validator"), "scram-store".into()),
                Some(ServerMechanism::UnsecuredOAuthBearer(c)) => {
                    put(format!("{m}.validator"), "unsecured".into());
                    put(
                        format!("{m}.principal.claim.name"),
                        c.principal_claim_name.clone(),
                    );
                    put(format!("{m}.scope.claim.name"), c.scope_claim_name.clone());
                    put(format!("{m}.required.scope"), c.required_scope.join(" "));
                    put(
                        format!("{m}.allowable.clock.skew.ms"),
                        c.allowable_clock_skew_ms.to_string(),
                    );
                }
                Some(ServerMechanism::JwksOAuthBearer {
                    jwks_endpoint_url,
                    validator,
                    ..
                }) => {
                    put(format!("{m}.validator"), "jwks".into());
                    put(
                        format!("{m}.sasl.oauthbearer.jwks.endpoint.url"),
                        jwks_endpoint_url.clone(),
                    );
                    put(
                        format!("{m}.sasl.oauthbearer.expected.issuer"),
                        validator.expected_issuer.clone().unwrap_or_default(),
                    );
                    put(
                        format!("{m}.sasl.oauthbearer.expected.audience"),
                        validator.expected_audiences.join(","),
                    );
                    put(
                        format!("{m}.sasl.oauthbearer.clock.skew.seconds"),
                        (validator.clock_skew_ms / 1000).to_string(),
                    );
                    put(
                        format!("{m}.sasl.oauthbearer.sub.claim.name"),
                        validator.subject_claim_name.clone(),
                    );
                    put(
                        format!("{m}.sasl.oauthbearer.scope.claim.name"),
                        validator.scope_claim_name.clone(),
                    );
                    put(
                        format!("{m}.sasl.oauthbearer.jwks.endpoint.refresh.ms"),
                        validator.refresh_period_ms.to_string(),
                    );
                }
                Some(ServerMechanism::Gssapi {
                    principal,
                    keytab,
                    service_name,
                }) => {
                    put(format!("{m}.validator"), "kerberos".into());
                    put(
                        format!("{m}.principal"),
                        principal.clone().unwrap_or_default(),
                    );
                    put(format!("{m}.keytab"), keytab.clone().unwrap_or_default());
                    put(
                        format!("{m}.sasl.kerberos.service.name"),
                        service_name.clone().unwrap_or_default(),
                    );
                }
                None => {}
            }
        }
        put(
            "sasl.server.max.receive.size".into(),
            self.max_receive_size.to_string(),
        );
        put(
            "connection.failed.authentication.delay.ms".into(),
            self.failed_authentication_delay_ms.to_string(),
        );
        put(
            "sasl.kerberos.principal.to.local.rules".into(),
            self.principal_to_local_rules.join(","),
        );
        match &self.delegation_tokens {
            Some(d) => {
                put("delegation.token.secret.key".into(), "[hidden]".into());
                put(
                    "delegation.token.max.lifetime.ms".into(),
                    d.max_lifetime_ms.to_string(),
                );
                put(
                    "delegation.token.expiry.time.ms".into(),
                    d.expiry_time_ms.to_string(),
                );
            }
            // Kafka enables delegation tokens only with a secret key.
            None => put("delegation.token.secret.key".into(), "[unset]".into()),
        }
        out
    }
}

/// Kafka's list type: split at every comma, blanks around items dropped.
fn split_rules(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect()
}

fn server_mechanism(
    look: &Lookup<'_>,
    m: &str,
    jaas_key: &str,
    entry: &JaasEntry,
    warnings: &mut Vec<String>,
) -> Result<ServerMechanism> {
    let expect = |module: &str| -> Result<()> {
        if entry.login_module() == module {
            Ok(())
        } else {
            Err(invalid(format!(
                "{jaas_key}: SASL mechanism {m} needs {module}, not \"{}\"",
                quote(entry.login_module().as_bytes())
            )))
        }
    };
    let handler = look
        .mechanism_only(m, "sasl.server.callback.handler.class")
        .map(|(v, _)| v.trim().to_string());
    match m {
        PLAIN => {
            expect(PLAIN_LOGIN_MODULE)?;
            if let Some(h) = handler {
                return Err(unsupported_handler(m, &h));
            }
            let users: Vec<(String, Secret)> = entry
                .options()
                .filter_map(|(k, v)| {
                    k.strip_prefix("user_")
                        .map(|u| (u.to_string(), Secret::from(v)))
                })
                .collect();
            if users.is_empty() {
                warnings.push(format!(
                    "{jaas_key} has no user_<name>=\"<password>\" options: every PLAIN login \
                     will fail"
                ));
            }
            Ok(ServerMechanism::Plain { users })
        }
        SCRAM_SHA_256 | SCRAM_SHA_512 => {
            // Kafka reads no option of this entry, so any module serves.
            if entry.login_module() != SCRAM_LOGIN_MODULE {
                warnings.push(format!(
                    "{jaas_key} names {}: Kafka accepts it, but {SCRAM_LOGIN_MODULE} is the \
                     usual one",
                    quote(entry.login_module().as_bytes())
                ));
            }
            if let Some(h) = handler {
                return Err(unsupported_handler(m, &h));
            }
            Ok(ServerMechanism::Scram)
        }
        OAUTHBEARER => {
            expect(OAUTHBEARER_LOGIN_MODULE)?;
            match handler.as_deref() {
                None => {
                    let mut c = UnsecuredValidatorConfig::default();
                    if let Some(v) = entry.option("unsecuredValidatorPrincipalClaimName") {
                        c.principal_claim_name = v.trim().to_string();
                    }
                    if let Some(v) = entry.option("unsecuredValidatorScopeClaimName") {
                        c.scope_claim_name = v.trim().to_string();
                    }
                    if let Some(v) = entry.option("unsecuredValidatorRequiredScope") {
                        c.required_scope = v.split_whitespace().map(str::to_string).collect();
                    }
                    if let Some(v) = entry.option("unsecuredValidatorAllowableClockSkewMs") {
                        c.allowable_clock_skew_ms = v
                            .trim()
                            .parse::<i64>()
                            .ok()
                            .filter(|n| *n >= 0)
                            .ok_or_else(|| {
                                invalid(format!(
                                    "{jaas_key}: unsecuredValidatorAllowableClockSkewMs = \"{}\" \
                                     is not a whole number of milliseconds, at least 0 \
                                     (default: 0)",
                                    quote(v.as_bytes())
                                ))
                            })?;
                    }
                    Ok(ServerMechanism::UnsecuredOAuthBearer(c))
                }
                Some(JWKS_VALIDATOR_HANDLER) => jwks_mechanism(look, m, entry),
                Some(other) => Err(unsupported_handler(m, other)),
            }
        }
        GSSAPI => {
            if entry.login_module() != KRB5_LOGIN_MODULE
                && entry.login_module() != "com.ibm.security.auth.module.Krb5LoginModule"
            {
                expect(KRB5_LOGIN_MODULE)?;
            }
            let use_keytab = entry
                .option("useKeyTab")
                .map(|v| v.eq_ignore_ascii_case("true"))
                .unwrap_or(false);
            let keytab = match (use_keytab, entry.option("keyTab")) {
                (true, Some(k)) => Some(k.to_string()),
                (true, None) => {
                    return Err(invalid(format!(
                        "{jaas_key}: useKeyTab=true needs keyTab=\"<path>\""
                    )))
                }
                (false, _) => None,
            };
            let service_name = super::client::service_name(
                entry.option("serviceName"),
                look.listener("sasl.kerberos.service.name").map(|(v, _)| v),
            )
            .map_err(|e| invalid(format!("{jaas_key}: {}", e.message())))?;
            Ok(ServerMechanism::Gssapi {
                principal: entry.option("principal").map(str::to_string),
                keytab,
                service_name: Some(service_name),
            })
        }
        other => Err(invalid(format!(
            "SASL mechanism {other} in sasl.enabled.mechanisms is not one ksasl's configuration \
             knows (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI); register it in code"
        ))),
    }
}

fn unsupported_handler(m: &str, class: &str) -> crate::error::Error {
    invalid(format!(
        "sasl.server.callback.handler.class for {m}: \"{}\" is a Java class ksasl cannot load; \
         for a store of your own, use the library's credential callbacks",
        quote(class.as_bytes())
    ))
}

fn jwks_mechanism(look: &Lookup<'_>, m: &str, entry: &JaasEntry) -> Result<ServerMechanism> {
    let get = |k: &str| look.mechanism(m, k);
    let (url, _) = get("sasl.oauthbearer.jwks.endpoint.url").ok_or_else(|| {
        invalid(format!(
            "{JWKS_VALIDATOR_HANDLER} needs sasl.oauthbearer.jwks.endpoint.url (the provider's \
             JWKS endpoint)"
        ))
    })?;
    let url = url.trim().to_string();
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(bad_value(
            "sasl.oauthbearer.jwks.endpoint.url",
            &url,
            "an http or https URL (ksasl does not read key sets from files)",
            "none",
        ));
    }
    let mut c = JwtValidatorConfig::default();
    if let Some((v, key)) = get("sasl.oauthbearer.expected.issuer") {
        c.expected_issuer = Some(v.trim().to_string()).filter(|s| !s.is_empty());
        let _ = key;
    }
    if let Some((v, _)) = get("sasl.oauthbearer.expected.audience") {
        c.expected_audiences = v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
    }
    if let Some((v, key)) = get("sasl.oauthbearer.clock.skew.seconds") {
        let s = long(v, &key, "a whole number of seconds, at least 0", "30")?;
        if s < 0 {
            return Err(bad_value(
                &key,
                v,
                "a whole number of seconds, at least 0",
                "30",
            ));
        }
        c.clock_skew_ms = s.saturating_mul(1000);
    }
    if let Some((v, _)) = get("sasl.oauthbearer.sub.claim.name") {
        c.subject_claim_name = v.trim().to_string();
    }
    if let Some((v, _)) = get("sasl.oauthbearer.scope.claim.name") {
        c.scope_claim_name = v.trim().to_string();
    }
    let positive = |k: &str, default: &str, set: &mut i64| -> Result<()> {
        if let Some((v, key)) = get(k) {
            let n = long(v, &key, "a positive number of milliseconds", default)?;
            if n <= 0 {
                return Err(bad_value(
                    &key,
                    v,
                    "a positive number of milliseconds",
                    default,
                ));
            }
            *set = n;
        }
        Ok(())
    };
    positive(
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "3600000",
        &mut c.refresh_period_ms,
    )?;
    positive(
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "100",
        &mut c.retry_backoff_ms,
    )?;
    positive(
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
        "10000",
        &mut c.retry_backoff_max_ms,
    )?;
    let mut http = Properties::new();
    for (k, v) in entry.options().filter(|(k, _)| k.starts_with("ssl.")) {
        http.set(k, v);
    }
    for k in [
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
    ] {
        if let Some((v, _)) = get(k) {
            http.set(k, v);
        }
    }
    #[cfg(feature = "http")]
    crate::io::http::HttpSettings::from_pairs(http.iter())?;
    Ok(ServerMechanism::JwksOAuthBearer {
        jwks_endpoint_url: url,
        validator: c,
        http,
    })
}

/// `sasl.*` and `ksasl.*` names (bare, or after this listener's prefix and an optional
/// mechanism prefix) that neither Kafka's broker nor its client defines.
fn unknown_names(props: &Properties, listener_prefix: &str) -> Vec<String> {
    let known = |name: &str| {
        KAFKA_BROKER_NAMES.contains(&name) || super::client::KAFKA_CLIENT_NAMES.contains(&name)
    };
    let mut out = Vec::new();
    for key in props.keys() {
        let tail = if let Some(rest) = key.strip_prefix(listener_prefix) {
            // An optional mechanism prefix: the segment before `sasl.` or `connections.`.
            let known_tail = [PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER, GSSAPI]
                .iter()
                .find_map(|m| rest.strip_prefix(&format!("{}.", m.to_ascii_lowercase())));
            known_tail.unwrap_or(rest)
        } else if key.starts_with("listener.name.") {
            continue;
        } else {
            key
        };
        let checked = tail.starts_with("sasl.") || tail.starts_with("ksasl.");
        if checked && !known(tail) {
            out.push(key.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    const BROKER: &str = "\
listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9093,CONTROLLER://127.0.0.1:9094
listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_SSL,CONTROLLER:PLAINTEXT
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512
listener.name.external.sasl.enabled.mechanisms=OAUTHBEARER,SCRAM-SHA-256
connections.max.reauth.ms=3600000
listener.name.internal.plain.connections.max.reauth.ms=60000
listener.name.internal.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username=\"admin\" password=\"admin-secret-XYZ\" user_admin=\"admin-secret-XYZ\" user_alice=\"alice-secret-XYZ\";
listener.name.internal.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.external.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.external.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.external.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=https://idp.example/jwks
sasl.oauthbearer.expected.issuer=https://idp.example
sasl.oauthbearer.expected.audience=kafka,kafka2
listener.name.external.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.external.sasl.server.max.receive.size=1048576
delegation.token.secret.key=dt-secret-XYZ
";

    #[test]
    fn listeners_and_precedence() {
        let props = Properties::parse(BROKER).unwrap();
        assert_eq!(sasl_listeners(&props).unwrap(), ["INTERNAL", "EXTERNAL"]);
        let s = ServerSettings::from_properties(&props, "INTERNAL").unwrap();
        assert_eq!(s.enabled_mechanisms, ["PLAIN", "SCRAM-SHA-512"]);
        assert_eq!(s.max_reauth_ms["PLAIN"], 60_000);
        assert_eq!(s.max_reauth_ms["SCRAM-SHA-512"], 3_600_000);
        assert_eq!(s.max_receive_size, DEFAULT_SERVER_MAX_RECEIVE_SIZE);
        let ServerMechanism::Plain { users } = &s.mechanisms["PLAIN"] else {
            panic!()
        };
        assert_eq!(
            users.iter().map(|(u, _)| u.as_str()).collect::<Vec<_>>(),
            ["admin", "alice"]
        );
        let s = ServerSettings::from_properties(&props, "external").unwrap();
        assert_eq!(s.enabled_mechanisms, ["OAUTHBEARER", "SCRAM-SHA-256"]);
        assert_eq!(s.max_receive_size, 1_048_576);
        let ServerMechanism::JwksOAuthBearer {
            jwks_endpoint_url,
            validator,
            ..
        } = &s.mechanisms["OAUTHBEARER"]
        else {
            panic!()
        };
        assert_eq!(jwks_endpoint_url, "https://idp.example/jwks");
        assert_eq!(validator.expected_audiences, ["kafka", "kafka2"]);
        assert_eq!(
            validator.expected_issuer.as_deref(),
            Some("https://idp.example")
        );
        let shown = format!("{s:?}{:?}", s.effective());
        assert!(!shown.contains("XYZ"), "{shown}");
        assert!(s.unknown.is_empty() && s.warnings.is_empty(), "{s:?}");
    }

    #[test]
    fn the_listener_to_serve() {
        let props = Properties::parse(BROKER).unwrap();
        assert_eq!(
            choose_listener(&props, Some("external")).unwrap(),
            "external"
        );
        let e = choose_listener(&props, Some("CONTROLLER")).unwrap_err();
        assert!(
            e.message()
                .ends_with("its SASL listeners are INTERNAL, EXTERNAL"),
            "{e}"
        );
        let e = choose_listener(&props, None).unwrap_err();
        assert!(
            e.message()
                .contains("2 SASL listeners (INTERNAL, EXTERNAL)"),
            "{e}"
        );
        let one = Properties::parse(
            "listeners=A://:1,B://:2\nlistener.security.protocol.map=A:SASL_SSL,B:SSL",
        )
        .unwrap();
        assert_eq!(choose_listener(&one, None).unwrap(), "A");
        let snippet = Properties::parse("sasl.enabled.mechanisms=PLAIN").unwrap();
        assert_eq!(choose_listener(&snippet, Some("L")).unwrap(), "L");
        assert!(choose_listener(&snippet, None)
            .unwrap_err()
            .message()
            .contains("no SASL listener"));
    }

    #[test]
    fn where_a_listener_listens() {
        let props = Properties::parse(
            "listeners=PLAIN://:9092, Internal://127.0.0.1:9093,V6://[::1]:0
             listener.security.protocol.map=PLAIN:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,V6:SASL_SSL",
        )
        .unwrap();
        let at = |l| listener_address(&props, l).unwrap();
        assert_eq!(at("internal"), Some(("127.0.0.1".into(), 9093)));
        assert_eq!(at("PLAIN"), Some(("".into(), 9092)));
        assert_eq!(at("v6"), Some(("::1".into(), 0)));
        assert_eq!(at("OTHER"), None);
        let none = Properties::parse("sasl.enabled.mechanisms=PLAIN").unwrap();
        assert_eq!(listener_address(&none, "X").unwrap(), None);
        for bad in ["L://host", "L://host:99999", "L://[::1:9", "L:host:1"] {
            let p = Properties::parse(&format!("listeners={bad}")).unwrap();
            let e = listener_address(&p, "L").unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidConfig, "{bad}");
            assert!(e.message().contains("listeners"), "{e}");
        }
    }

    #[test]
    fn what_kafka_refuses_or_ignores() {
        let e =
            ServerSettings::from_text("sasl.enabled.mechanisms=PLAIN\n", "SASL_SSL").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        assert!(
            e.message()
                .contains("listener.name.sasl_ssl.plain.sasl.jaas.config"),
            "{e}"
        );
        let s = ServerSettings::from_text(
            "sasl.enabled.mechanisms=SCRAM-SHA-256\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n\
             listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n\
             sasl.server.max.recieve.size=5\n",
            "SASL_SSL",
        )
        .unwrap();
        assert_eq!(s.warnings.len(), 1);
        assert_eq!(s.unknown, ["sasl.server.max.recieve.size"]);
        let e = ServerSettings::from_text(
            "sasl.enabled.mechanisms=OAUTHBEARER\n\
             listener.name.l.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n\
             listener.name.l.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler\n",
            "L",
        )
        .unwrap_err();
        assert!(e.message().contains("jwks.endpoint.url"), "{e}");
    }
}
