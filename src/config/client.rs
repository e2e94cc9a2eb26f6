//! A client's SASL settings from the properties users already have: Kafka's client names
//! (`sasl.mechanism`, `sasl.jaas.config`, `sasl.login.*`, `sasl.oauthbearer.*`,
//! `sasl.kerberos.*`) or librdkafka's (`sasl.mechanisms`, `sasl.username`, `sasl.password`,
//! `sasl.oauthbearer.config`, `sasl.oauthbearer.method`, ...), in one parser.
//!
//! [`ClientSettings::from_properties`] checks every value it uses and fails on the first
//! problem with `INVALID_CONFIG`, naming the key, the form it expects and Kafka's default.
//! Properties that are not SASL settings (`bootstrap.servers`, `group.id`, `ssl.*` of the
//! broker connection) are left alone; `sasl.*` and `ksasl.*` names it does not know are listed
//! in [`ClientSettings::unknown`] for the host to log, and settings that have no effect in
//! the configuration given are listed in [`ClientSettings::warnings`].

use std::fmt;

use super::jaas::{self, JaasEntry};
use super::properties::{is_secret_key, Properties};
use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::oauthbearer::{java_double, SaslExtensions, UnsecuredTokenBuilder};
use crate::names::{GSSAPI, OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512};
use crate::refresh::RefreshConfig;
use crate::secret::Secret;

/// Kafka's login module classes, by mechanism.
pub const PLAIN_LOGIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
/// `ScramLoginModule`.
pub const SCRAM_LOGIN_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
/// `OAuthBearerLoginModule`.
pub const OAUTHBEARER_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";
/// The JDK's Kerberos login module.
pub const KRB5_LOGIN_MODULE: &str = "com.sun.security.auth.module.Krb5LoginModule";
/// Kafka's OIDC login callback handler (`sasl.login.callback.handler.class`).
pub const OIDC_LOGIN_HANDLER: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler";
const JWT_RETRIEVER_PREFIX: &str = "org.apache.kafka.common.security.oauthbearer.";

/// `security.protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// `PLAINTEXT` (Kafka's default): no TLS, no SASL.
    Plaintext,
    /// `SSL`: TLS, no SASL.
    Ssl,
    /// `SASL_PLAINTEXT`.
    SaslPlaintext,
    /// `SASL_SSL`.
    SaslSsl,
}

impl SecurityProtocol {
    /// The name, upper case.
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    /// Whether SASL authentication is used.
    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }

    /// Whether the connection is TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Parses a name in any case (Kafka and librdkafka both accept any).
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(SecurityProtocol::Plaintext),
            "SSL" => Ok(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Ok(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Ok(SecurityProtocol::SaslSsl),
            _ => Err(bad_value(
                "security.protocol",
                value,
                "one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
                "PLAINTEXT",
            )),
        }
    }
}

/// Kafka's `ConfigException` text, followed by the expected form and Kafka's default.
pub(crate) fn bad_value(key: &str, value: &str, expected: &str, default: &str) -> Error {
    let shown = if is_secret_key(key) {
        "[hidden]".to_string()
    } else {
        quote(value.as_bytes())
    };
    Error::new(
        ErrorCode::InvalidConfig,
        format!(
            "Invalid value {shown} for configuration {key}: expected {expected} (default: {default})"
        ),
    )
}

pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidConfig, message)
}

/// The options of an unsecured token login (`OAuthBearerLoginModule`'s `unsecuredLogin*`
/// options, or librdkafka's `sasl.oauthbearer.config`).
#[derive(Clone, Debug, PartialEq)]
pub struct UnsecuredLogin {
    /// The principal claim's name (`sub`).
    pub principal_claim_name: String,
    /// The scope claim's name (`scope`).
    pub scope_claim_name: String,
    /// The token's lifetime (3600 s).
    pub lifetime_seconds: i64,
    /// The claims in order, each with its JSON text.
    pub claims: Vec<(String, UnsecuredClaim)>,
}

/// The value of one claim of an unsecured token.
#[derive(Clone, Debug, PartialEq)]
pub enum UnsecuredClaim {
    /// A string.
    Str(String),
    /// A number.
    Num(f64),
    /// A list of strings.
    List(Vec<String>),
}

impl UnsecuredLogin {
    fn new() -> Self {
        UnsecuredLogin {
            principal_claim_name: "sub".into(),
            scope_claim_name: "scope".into(),
            lifetime_seconds: 3600,
            claims: Vec::new(),
        }
    }

    fn claim(&mut self, name: &str, claim: UnsecuredClaim) {
        self.claims.retain(|(n, _)| n != name);
        self.claims.push((name.to_string(), claim));
    }

    /// The builder of the tokens these options describe (checked: a principal, no `iat`/`exp`).
    pub fn builder(&self) -> Result<UnsecuredTokenBuilder> {
        let mut b = UnsecuredTokenBuilder::new()
            .principal_claim_name(&self.principal_claim_name)
            .scope_claim_name(&self.scope_claim_name)
            .lifetime_seconds(self.lifetime_seconds);
        for (name, claim) in &self.claims {
            b = match claim {
                UnsecuredClaim::Str(s) => b.string_claim(name, s)?,
                UnsecuredClaim::Num(n) => b.number_claim(name, *n)?,
                UnsecuredClaim::List(l) => {
                    b.list_claim(name, &l.iter().map(String::as_str).collect::<Vec<_>>())?
                }
            };
        }
        // Build once to check the principal claim.
        b.build(0)?;
        Ok(b)
    }
}

/// Where a client's credential comes from.
#[derive(Clone)]
pub enum ClientCredential {
    /// No SASL (`security.protocol` without `SASL_`).
    None,
    /// A username and password (PLAIN, SCRAM); `token_auth` sends SCRAM's `tokenauth=true`
    /// (a delegation token's id and HMAC).
    Password {
        /// The username (or token id).
        username: String,
        /// The password (or token HMAC).
        password: Secret,
        /// SCRAM's `tokenauth` extension.
        token_auth: bool,
    },
    /// Unsecured OAUTHBEARER tokens made by the client itself (testing only).
    UnsecuredToken(UnsecuredLogin),
    /// Tokens from an identity provider's token endpoint: the settings, by Kafka's names, for
    /// `ksasl::io::http::OidcSettings::from_pairs`.
    Oidc(Properties),
    /// Tokens the host supplies (librdkafka's refresh callback), with librdkafka's
    /// `sasl.oauthbearer.config` for it, as librdkafka hands that string to its callback.
    HostToken {
        /// `sasl.oauthbearer.config`.
        config: Option<Secret>,
    },
    /// Kerberos.
    Kerberos {
        /// The client principal (`principal`, or librdkafka's `sasl.kerberos.principal`).
        principal: Option<String>,
        /// The keytab (`keyTab` when `useKeyTab=true`, or `sasl.kerberos.keytab`).
        keytab: Option<String>,
    },
}

impl fmt::Debug for ClientCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientCredential::None => f.write_str("None"),
            ClientCredential::Password {
                username,
                token_auth,
                ..
            } => f
                .debug_struct("Password")
                .field("username", username)
                .field("token_auth", token_auth)
                .finish_non_exhaustive(),
            ClientCredential::UnsecuredToken(u) => {
                f.debug_tuple("UnsecuredToken").field(u).finish()
            }
            ClientCredential::Oidc(p) => f.debug_tuple("Oidc").field(p).finish(),
            ClientCredential::HostToken { config } => f
                .debug_struct("HostToken")
                .field("config", &config.as_ref().map(|_| "[hidden]"))
                .finish(),
            ClientCredential::Kerberos { principal, keytab } => f
                .debug_struct("Kerberos")
                .field("principal", principal)
                .field("keytab", keytab)
                .finish(),
        }
    }
}

/// A client's SASL settings.
#[derive(Clone, Debug)]
pub struct ClientSettings {
    /// `security.protocol`.
    pub security_protocol: SecurityProtocol,
    /// `sasl.mechanism` (librdkafka: `sasl.mechanisms`).
    pub mechanism: String,
    /// The credential.
    pub credential: ClientCredential,
    /// SASL extensions sent with OAUTHBEARER.
    pub extensions: SaslExtensions,
    /// `sasl.login.refresh.*`.
    pub refresh: RefreshConfig,
    /// `sasl.kerberos.service.name` (JAAS `serviceName`, librdkafka's default `kafka`).
    pub kerberos_service_name: Option<String>,
    /// `sasl.*` and `ksasl.*` names this parser does not know.
    pub unknown: Vec<String>,
    /// Settings that have no effect as configured.
    pub warnings: Vec<String>,
}

/// Client names of Kafka 4.4 (`SaslConfigs` and `security.protocol`) that this parser reads
/// or knowingly leaves alone.
pub const KAFKA_CLIENT_NAMES: &[&str] = &[
    "security.protocol",
    "sasl.mechanism",
    "sasl.jaas.config",
    "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.oauthbearer.allow.unverified.audience",
    "sasl.oauthbearer.allow.unverified.issuer",
    "sasl.oauthbearer.assertion.algorithm",
    "sasl.oauthbearer.assertion.claim.aud",
    "sasl.oauthbearer.assertion.claim.exp.seconds",
    "sasl.oauthbearer.assertion.claim.iss",
    "sasl.oauthbearer.assertion.claim.jti.include",
    "sasl.oauthbearer.assertion.claim.nbf.seconds",
    "sasl.oauthbearer.assertion.claim.sub",
    "sasl.oauthbearer.assertion.file",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.assertion.template.file",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.header.urlencode",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.jwt.retriever.class",
    "sasl.oauthbearer.jwt.validator.class",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.token.endpoint.url",
];

/// librdkafka's SASL names (its `CONFIGURATION.md`) that this parser reads or knowingly
/// leaves alone; some are also Kafka's.
pub const LIBRDKAFKA_CLIENT_NAMES: &[&str] = &[
    "security.protocol",
    "sasl.mechanisms",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
    "sasl.kerberos.service.name",
    "sasl.kerberos.principal",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.keytab",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.oauthbearer.config",
    "enable.sasl.oauthbearer.unsecure.jwt",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.extensions",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.grant.type",
    "sasl.oauthbearer.assertion.algorithm",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.assertion.private.key.pem",
    "sasl.oauthbearer.assertion.file",
    "sasl.oauthbearer.assertion.claim.aud",
    "sasl.oauthbearer.assertion.claim.exp.seconds",
    "sasl.oauthbearer.assertion.claim.iss",
    "sasl.oauthbearer.assertion.claim.jti.include",
    "sasl.oauthbearer.assertion.claim.nbf.seconds",
    "sasl.oauthbearer.assertion.claim.sub",
    "sasl.oauthbearer.assertion.jwt.template.file",
    "sasl.oauthbearer.metadata.authentication.type",
    "https.ca.location",
    "https.ca.pem",
    // The broker's CA for `ksasl probe` (which also reads Kafka's ssl.truststore.*).
    "ssl.ca.location",
];

/// ksasl's own client names (never Kafka's).
pub const KSASL_CLIENT_NAMES: &[&str] = &[
    "ksasl.oauthbearer.client.auth",
    "ksasl.oauthbearer.grant.type",
    "ksasl.oauthbearer.assertion.private.key.pem",
    "ksasl.oauthbearer.assertion.kid",
];

/// Settings of Kafka's OIDC login that go to the token login as they are.
const OIDC_PASSTHROUGH: &[&str] = &[
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.header.urlencode",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.assertion.algorithm",
    "sasl.oauthbearer.assertion.claim.iss",
    "sasl.oauthbearer.assertion.claim.sub",
    "sasl.oauthbearer.assertion.claim.aud",
    "sasl.oauthbearer.assertion.claim.exp.seconds",
    "sasl.oauthbearer.assertion.claim.nbf.seconds",
    "sasl.oauthbearer.assertion.claim.jti.include",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.login.retry.backoff.max.ms",
    "ksasl.oauthbearer.client.auth",
    "ksasl.oauthbearer.grant.type",
    "ksasl.oauthbearer.assertion.private.key.pem",
    "ksasl.oauthbearer.assertion.kid",
];

/// Settings ksasl cannot honour yet: refused rather than silently ignored.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "sasl.oauthbearer.assertion.file",
        "ksasl signs its own assertions; give sasl.oauthbearer.assertion.private.key.file",
    ),
    (
        "sasl.oauthbearer.assertion.template.file",
        "ksasl builds the assertion's claims from sasl.oauthbearer.assertion.claim.*",
    ),
    (
        "sasl.oauthbearer.assertion.jwt.template.file",
        "ksasl builds the assertion's claims from sasl.oauthbearer.assertion.claim.*",
    ),
    (
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "give the private key unencrypted (PKCS#8 PEM)",
    ),
    (
        "sasl.client.callback.handler.class",
        "a Java class cannot be loaded; use the library's callbacks instead",
    ),
    (
        "sasl.login.class",
        "a Java class cannot be loaded; use the library's refresher instead",
    ),
];

fn parse_f64(key: &str, value: &str, default: &str) -> Result<f64> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| bad_value(key, value, "a number", default))
}

fn parse_i64(key: &str, value: &str, expected: &str, default: &str) -> Result<i64> {
    value
        .trim()
        .parse::<i64>()
        .map_err(|_| bad_value(key, value, expected, default))
}

fn parse_bool(key: &str, value: &str, default: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad_value(key, value, "true or false", default)),
    }
}

fn is_scram(mechanism: &str) -> bool {
    mechanism == SCRAM_SHA_256 || mechanism == SCRAM_SHA_512
}

impl ClientSettings {
    /// Reads a client configuration by Kafka's or librdkafka's names.
    pub fn from_properties(props: &Properties) -> Result<Self> {
        Parser::new(props).client()
    }

    /// Reads `.properties` text.
    pub fn from_text(text: &str) -> Result<Self> {
        Self::from_properties(&Properties::parse(text)?)
    }

    /// The settings as `(name, value)` pairs in a fixed order, secrets shown as `[hidden]`:
    /// what `ksasl config check` prints, and what the tests of every binding compare.
    pub fn effective(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| out.push((k.to_string(), v));
        put("security.protocol", self.security_protocol.name().into());
        if !self.security_protocol.uses_sasl() {
            put("credential", "none".into());
            return out;
        }
        put("sasl.mechanism", self.mechanism.clone());
        match &self.credential {
            ClientCredential::None => put("credential", "none".into()),
            ClientCredential::Password {
                username,
                token_auth,
                ..
            } => {
                put("credential", "password".into());
                put("username", username.clone());
                put("password", "[hidden]".into());
                if is_scram(&self.mechanism) {
                    put("tokenauth", token_auth.to_string());
                }
            }
            ClientCredential::UnsecuredToken(u) => {
                put("credential", "unsecured-token".into());
                put("principal.claim.name", u.principal_claim_name.clone());
                put("scope.claim.name", u.scope_claim_name.clone());
                put("lifetime.seconds", u.lifetime_seconds.to_string());
                for (name, claim) in &u.claims {
                    let v = match claim {
                        UnsecuredClaim::Str(s) => s.clone(),
                        UnsecuredClaim::Num(n) => java_double(*n),
                        UnsecuredClaim::List(l) => format!("[{}]", l.join(",")),
                    };
                    put(&format!("claim.{name}"), v);
                }
            }
            ClientCredential::Oidc(p) => {
                put("credential", "oidc".into());
                for (k, v) in p.redacted() {
                    put(&k, v);
                }
            }
            ClientCredential::HostToken { config } => {
                put("credential", "host-token".into());
                if config.is_some() {
                    put("sasl.oauthbearer.config", "[hidden]".into());
                }
            }
            ClientCredential::Kerberos { principal, keytab } => {
                put("credential", "kerberos".into());
                if let Some(p) = principal {
                    put("principal", p.clone());
                }
                if let Some(k) = keytab {
                    put("keytab", k.clone());
                }
            }
        }
        if self.mechanism == GSSAPI {
            put(
                "sasl.kerberos.service.name",
                self.kerberos_service_name.clone().unwrap_or_default(),
            );
        }
        if self.mechanism == OAUTHBEARER {
            for (k, v) in self.extensions.map() {
                put(&format!("extension.{k}"), v.clone());
            }
            let r = &self.refresh;
            put(
                "sasl.login.refresh.window.factor",
                java_double(r.window_factor()),
            );
            put(
                "sasl.login.refresh.window.jitter",
                java_double(r.window_jitter()),
            );
            put(
                "sasl.login.refresh.min.period.seconds",
                r.min_period_seconds().to_string(),
            );
            put(
                "sasl.login.refresh.buffer.seconds",
                r.buffer_seconds().to_string(),
            );
        }
        out
    }
}

struct Parser<'a> {
    props: &'a Properties,
    warnings: Vec<String>,
}

impl<'a> Parser<'a> {
    fn new(props: &'a Properties) -> Self {
        Parser {
            props,
            warnings: Vec::new(),
        }
    }

    /// A value; trimmed as Kafka's `ConfigDef` trims every value that is not a password.
    fn get(&self, key: &str) -> Option<&'a str> {
        self.props
            .get(key)
            .map(|v| if is_secret_key(key) { v } else { v.trim() })
    }

    fn unknown(&self) -> Vec<String> {
        self.props
            .keys()
            .filter(|k| {
                (k.starts_with("sasl.") || k.starts_with("ksasl.") || k.starts_with("enable.sasl"))
                    && !KAFKA_CLIENT_NAMES.contains(k)
                    && !LIBRDKAFKA_CLIENT_NAMES.contains(k)
                    && !KSASL_CLIENT_NAMES.contains(k)
            })
            .map(str::to_string)
            .collect()
    }

    fn mechanism(&self) -> Result<String> {
        let kafka = self.get("sasl.mechanism");
        let rdkafka = self.get("sasl.mechanisms");
        let (key, value) = match (kafka, rdkafka) {
            (Some(a), Some(b)) if a.trim() != b.trim() => {
                return Err(invalid(format!(
                    "sasl.mechanism (\"{}\") and sasl.mechanisms (\"{}\") disagree; give one",
                    quote(a.as_bytes()),
                    quote(b.as_bytes())
                )))
            }
            (Some(a), _) => ("sasl.mechanism", a),
            (None, Some(b)) => ("sasl.mechanisms", b),
            (None, None) => return Ok(GSSAPI.into()),
        };
        let m = value.trim();
        if m.contains(',') {
            return Err(bad_value(
                key,
                value,
                "one SASL mechanism (a client uses one; the broker lists several in \
                 sasl.enabled.mechanisms)",
                "GSSAPI",
            ));
        }
        if m.is_empty() {
            return Err(bad_value(key, value, "a SASL mechanism name", "GSSAPI"));
        }
        // Kafka compares names exactly; librdkafka too. A lower-case name is a typo.
        let upper = m.to_ascii_uppercase();
        if upper != m
            && [PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER, GSSAPI].contains(&upper.as_str())
        {
            return Err(bad_value(
                key,
                value,
                &format!("the mechanism's name in upper case ({upper})"),
                "GSSAPI",
            ));
        }
        crate::mech::validate_mechanism_name(m)
            .map_err(|_| bad_value(key, value, "a SASL mechanism name", "GSSAPI"))?;
        Ok(m.to_string())
    }

    fn jaas(&self) -> Result<Option<JaasEntry>> {
        match self.get("sasl.jaas.config") {
            None => Ok(None),
            Some(text) => jaas::parse(text)
                .map(Some)
                .map_err(|e| invalid(format!("sasl.jaas.config: {}", e.message()))),
        }
    }

    fn client(mut self) -> Result<ClientSettings> {
        for (key, why) in UNSUPPORTED {
            if self.props.contains(key) {
                return Err(invalid(format!("{key} is not supported by ksasl: {why}")));
            }
        }
        let security_protocol = match self.get("security.protocol") {
            Some(v) => SecurityProtocol::parse(v)?,
            None => SecurityProtocol::Plaintext,
        };
        // Kafka checks the ranges of the refresh settings whatever the protocol.
        let refresh = self.refresh()?;
        let mut settings = ClientSettings {
            security_protocol,
            mechanism: String::new(),
            credential: ClientCredential::None,
            extensions: SaslExtensions::new(),
            refresh,
            kerberos_service_name: None,
            unknown: self.unknown(),
            warnings: Vec::new(),
        };
        if !security_protocol.uses_sasl() {
            if self.props.keys().any(|k| k.starts_with("sasl.")) {
                self.warnings.push(format!(
                    "security.protocol is {}: the sasl.* settings are not used",
                    security_protocol.name()
                ));
            }
            settings.warnings = self.warnings;
            return Ok(settings);
        }
        let mechanism = self.mechanism()?;
        settings.mechanism = mechanism.clone();
        let jaas = self.jaas()?;
        let librdkafka_password =
            self.get("sasl.username").is_some() || self.get("sasl.password").is_some();
        if jaas.is_some() && librdkafka_password {
            return Err(invalid(
                "give sasl.jaas.config (Kafka's form) or sasl.username and sasl.password \
                 (librdkafka's), not both",
            ));
        }
        settings.credential = match (mechanism.as_str(), &jaas) {
            (PLAIN | SCRAM_SHA_256 | SCRAM_SHA_512, Some(entry)) => {
                self.jaas_password(&mechanism, entry)?
            }
            (PLAIN | SCRAM_SHA_256 | SCRAM_SHA_512, None) => {
                self.librdkafka_password(&mechanism)?
            }
            (OAUTHBEARER, Some(entry)) => {
                self.kafka_oauthbearer(entry, &mut settings.extensions)?
            }
            (OAUTHBEARER, None) => {
                // librdkafka refreshes a token at 80 % of its remaining life, exactly
                // (rdkafka_sasl_oauthbearer.c); Kafka's sasl.login.refresh.* still win when given.
                if !REFRESH_NAMES.iter().any(|k| self.get(k).is_some()) {
                    settings.refresh = librdkafka_refresh()?;
                }
                self.librdkafka_oauthbearer(&mut settings.extensions)?
            }
            (GSSAPI, jaas) => {
                if librdkafka_password {
                    self.warnings.push(
                        "sasl.username and sasl.password are not used by GSSAPI (the mechanism \
                         when sasl.mechanism is not set); set sasl.mechanism for PLAIN or SCRAM"
                            .into(),
                    );
                }
                let (credential, service) = self.kerberos(jaas.as_ref())?;
                settings.kerberos_service_name = service;
                credential
            }
            (other, _) => {
                return Err(invalid(format!(
                    "SASL mechanism {other} is not one ksasl's configuration knows (PLAIN, \
                     SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI); register it in code"
                )))
            }
        };
        settings.warnings = self.warnings;
        Ok(settings)
    }

    fn refresh(&self) -> Result<RefreshConfig> {
        let mut b = RefreshConfig::builder();
        if let Some(v) = self.get("sasl.login.refresh.window.factor") {
            b.window_factor(parse_f64("sasl.login.refresh.window.factor", v, "0.8")?);
        }
        if let Some(v) = self.get("sasl.login.refresh.window.jitter") {
            b.window_jitter(parse_f64("sasl.login.refresh.window.jitter", v, "0.05")?);
        }
        if let Some(v) = self.get("sasl.login.refresh.min.period.seconds") {
            b.min_period_seconds(parse_i64(
                "sasl.login.refresh.min.period.seconds",
                v,
                "a whole number of seconds from 0 to 900",
                "60",
            )?);
        }
        if let Some(v) = self.get("sasl.login.refresh.buffer.seconds") {
            b.buffer_seconds(parse_i64(
                "sasl.login.refresh.buffer.seconds",
                v,
                "a whole number of seconds from 0 to 3600",
                "300",
            )?);
        }
        b.build().map_err(|e| {
            let default = [
                ("window.factor", "0.8"),
                ("window.jitter", "0.05"),
                ("min.period.seconds", "60"),
                ("buffer.seconds", "300"),
            ]
            .iter()
            .find(|(k, _)| e.message().contains(k))
            .map(|(_, d)| *d)
            .unwrap_or("-");
            invalid(format!("{} (default: {default})", e.message()))
        })
    }

    fn jaas_password(&mut self, mechanism: &str, entry: &JaasEntry) -> Result<ClientCredential> {
        let module = entry.login_module();
        if module != PLAIN_LOGIN_MODULE && module != SCRAM_LOGIN_MODULE {
            return Err(wrong_module(mechanism, module));
        }
        let expected = if mechanism == PLAIN {
            PLAIN_LOGIN_MODULE
        } else {
            SCRAM_LOGIN_MODULE
        };
        if module != expected {
            // Kafka accepts either module for either mechanism: both put the username and
            // password in the Subject. Only ScramLoginModule reads tokenauth.
            self.warnings.push(format!(
                "sasl.jaas.config uses {module} for {mechanism}; Kafka accepts it, but \
                 {expected} is the usual one"
            ));
        }
        let username = entry.option("username").ok_or_else(|| {
            invalid(format!(
                "sasl.jaas.config: {} needs the option username",
                short_class(module)
            ))
        })?;
        let password = entry.option("password").ok_or_else(|| {
            invalid(format!(
                "sasl.jaas.config: {} needs the option password",
                short_class(module)
            ))
        })?;
        let token_auth = match entry.option("tokenauth") {
            None => false,
            Some(v) => {
                let on = v.eq_ignore_ascii_case("true");
                if !on && !v.eq_ignore_ascii_case("false") {
                    self.warnings.push(format!(
                        "sasl.jaas.config: tokenauth=\"{}\" is read as false (only \"true\" turns it on)",
                        quote(v.as_bytes())
                    ));
                }
                if module != SCRAM_LOGIN_MODULE && on {
                    self.warnings.push(
                        "sasl.jaas.config: tokenauth is read only by ScramLoginModule".into(),
                    );
                }
                on && module == SCRAM_LOGIN_MODULE
            }
        };
        if token_auth && mechanism == PLAIN {
            return Err(invalid(
                "sasl.jaas.config: tokenauth=true (a delegation token) needs SCRAM-SHA-256 or \
                 SCRAM-SHA-512, not PLAIN",
            ));
        }
        Ok(ClientCredential::Password {
            username: username.to_string(),
            password: Secret::from(password),
            token_auth,
        })
    }

    fn librdkafka_password(&self, mechanism: &str) -> Result<ClientCredential> {
        let (Some(username), Some(password)) =
            (self.get("sasl.username"), self.get("sasl.password"))
        else {
            return Err(invalid(format!(
                "SASL mechanism {mechanism} needs a username and password: sasl.jaas.config \
                 (Kafka: {} required username=\"...\" password=\"...\";) or sasl.username and \
                 sasl.password (librdkafka)",
                if mechanism == PLAIN {
                    PLAIN_LOGIN_MODULE
                } else {
                    SCRAM_LOGIN_MODULE
                }
            )));
        };
        Ok(ClientCredential::Password {
            username: username.to_string(),
            password: Secret::from(password),
            token_auth: false,
        })
    }

    fn kafka_oauthbearer(
        &mut self,
        entry: &JaasEntry,
        extensions: &mut SaslExtensions,
    ) -> Result<ClientCredential> {
        if entry.login_module() != OAUTHBEARER_LOGIN_MODULE {
            return Err(wrong_module(OAUTHBEARER, entry.login_module()));
        }
        let handler = self.get("sasl.login.callback.handler.class").map(str::trim);
        let oidc = match handler {
            None | Some("") => false,
            Some(OIDC_LOGIN_HANDLER) => true,
            Some(
                "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler",
            ) => false,
            Some(other) => {
                return Err(bad_value(
                    "sasl.login.callback.handler.class",
                    other,
                    &format!("{OIDC_LOGIN_HANDLER} (the only handler ksasl can stand in for)"),
                    "none: unsecured tokens from the JAAS options",
                ))
            }
        };
        if !oidc {
            if self.get("sasl.oauthbearer.token.endpoint.url").is_some() {
                self.warnings.push(format!(
                    "sasl.oauthbearer.token.endpoint.url is not used: tokens come from the \
                     provider only with sasl.login.callback.handler.class={OIDC_LOGIN_HANDLER}"
                ));
            }
            return self.unsecured_from_jaas(entry, extensions);
        }
        let mut p = Properties::new();
        for key in OIDC_PASSTHROUGH {
            if let Some(v) = self.get(key) {
                p.set(key, v);
            }
        }
        for (k, v) in entry.options() {
            match k {
                "clientId" | "clientSecret" | "scope" => {
                    let key = match k {
                        "clientId" => "sasl.oauthbearer.client.credentials.client.id",
                        "clientSecret" => "sasl.oauthbearer.client.credentials.client.secret",
                        _ => "sasl.oauthbearer.scope",
                    };
                    // Kafka 4.4 prefers the property over the deprecated JAAS option.
                    if !p.contains(key) {
                        p.set(key, v);
                    }
                }
                k if k.starts_with("extension_") => {
                    insert_extension(extensions, &k["extension_".len()..], v)?
                }
                k if k.starts_with("ssl.") => p.set(k, v),
                _ => {}
            }
        }
        match self
            .get("sasl.oauthbearer.jwt.retriever.class")
            .map(str::trim)
        {
            None => {}
            Some(class) => match class.strip_prefix(JWT_RETRIEVER_PREFIX) {
                Some("DefaultJwtRetriever") | Some("ClientCredentialsJwtRetriever") => {}
                Some("JwtBearerJwtRetriever") => {
                    if !p.contains("ksasl.oauthbearer.grant.type") {
                        p.set(
                            "ksasl.oauthbearer.grant.type",
                            "urn:ietf:params:oauth:grant-type:jwt-bearer",
                        );
                    }
                }
                _ => {
                    return Err(bad_value(
                        "sasl.oauthbearer.jwt.retriever.class",
                        class,
                        "DefaultJwtRetriever, ClientCredentialsJwtRetriever or \
                         JwtBearerJwtRetriever of org.apache.kafka.common.security.oauthbearer",
                        "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
                    ))
                }
            },
        }
        self.oidc_checked(p)
    }

    fn oidc_checked(&self, p: Properties) -> Result<ClientCredential> {
        let url = p.get("sasl.oauthbearer.token.endpoint.url").unwrap_or("");
        if url.trim().is_empty() {
            return Err(invalid(
                "an OIDC login needs sasl.oauthbearer.token.endpoint.url (the provider's token \
                 endpoint)",
            ));
        }
        if url.trim_start().to_ascii_lowercase().starts_with("file:") {
            return Err(bad_value(
                "sasl.oauthbearer.token.endpoint.url",
                url,
                "an http or https URL (ksasl does not read tokens from files)",
                "none",
            ));
        }
        #[cfg(feature = "http")]
        {
            // Every name and value form is checked here; the whole request too, unless it
            // needs a key file, which is read (and checked) when the login starts: parsing a
            // configuration reads no file.
            let settings = crate::io::http::OidcSettings::from_pairs(p.iter())?;
            if settings.assertion_private_key_file.is_none() {
                settings.token_request_config()?;
            }
        }
        Ok(ClientCredential::Oidc(p))
    }

    fn unsecured_from_jaas(
        &self,
        entry: &JaasEntry,
        extensions: &mut SaslExtensions,
    ) -> Result<ClientCredential> {
        let mut u = UnsecuredLogin::new();
        for (k, v) in entry.options() {
            if let Some(name) = k.strip_prefix("unsecuredLoginStringClaim_") {
                u.claim(name, UnsecuredClaim::Str(v.to_string()));
            } else if let Some(name) = k.strip_prefix("unsecuredLoginNumberClaim_") {
                let n = v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .ok_or_else(|| {
                        invalid(format!(
                            "sasl.jaas.config: {k} = \"{}\" is not a number",
                            quote(v.as_bytes())
                        ))
                    })?;
                u.claim(name, UnsecuredClaim::Num(n));
            } else if let Some(name) = k.strip_prefix("unsecuredLoginListClaim_") {
                // The first character is the separator, as in Kafka.
                let mut chars = v.chars();
                let items = match chars.next() {
                    None => Vec::new(),
                    Some(sep) => chars
                        .as_str()
                        .split(sep)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                };
                u.claim(name, UnsecuredClaim::List(items));
            } else if let Some(name) = k.strip_prefix("unsecuredLoginExtension_") {
                insert_extension(extensions, name, v)?;
            } else if k == "unsecuredLoginPrincipalClaimName" {
                u.principal_claim_name = v.trim().to_string();
            } else if k == "unsecuredLoginScopeClaimName" {
                u.scope_claim_name = v.trim().to_string();
            } else if k == "unsecuredLoginLifetimeSeconds" {
                u.lifetime_seconds = v.trim().parse::<i64>().map_err(|_| {
                    invalid(format!(
                        "sasl.jaas.config: unsecuredLoginLifetimeSeconds = \"{}\" is not a whole \
                         number of seconds (default: 3600)",
                        quote(v.as_bytes())
                    ))
                })?;
            }
        }
        u.builder().map_err(|e| {
            invalid(format!(
                "sasl.jaas.config: {} (an unsecured token needs \
                 unsecuredLoginStringClaim_sub=\"<principal>\")",
                e.message()
            ))
        })?;
        Ok(ClientCredential::UnsecuredToken(u))
    }

    fn librdkafka_oauthbearer(
        &mut self,
        extensions: &mut SaslExtensions,
    ) -> Result<ClientCredential> {
        let method = self
            .get("sasl.oauthbearer.method")
            .map(|m| m.trim().to_ascii_lowercase());
        if let Some(list) = self.get("sasl.oauthbearer.extensions") {
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (k, v) = item.split_once('=').ok_or_else(|| {
                    bad_value(
                        "sasl.oauthbearer.extensions",
                        list,
                        "comma-separated name=value pairs",
                        "none",
                    )
                })?;
                insert_extension(extensions, k.trim(), v.trim())?;
            }
        }
        let unsecure = match self.get("enable.sasl.oauthbearer.unsecure.jwt") {
            Some(v) => parse_bool("enable.sasl.oauthbearer.unsecure.jwt", v, "false")?,
            None => false,
        };
        match method.as_deref() {
            Some("oidc") if unsecure => Err(invalid(
                "enable.sasl.oauthbearer.unsecure.jwt and sasl.oauthbearer.method=oidc are \
                 mutually exclusive (as in librdkafka); keep one",
            )),
            Some("oidc") => {
                let mut p = Properties::new();
                for key in OIDC_PASSTHROUGH {
                    if let Some(v) = self.get(key) {
                        p.set(key, v);
                    }
                }
                let aliases = [
                    (
                        "sasl.oauthbearer.client.id",
                        "sasl.oauthbearer.client.credentials.client.id",
                    ),
                    (
                        "sasl.oauthbearer.client.secret",
                        "sasl.oauthbearer.client.credentials.client.secret",
                    ),
                    (
                        "sasl.oauthbearer.assertion.private.key.pem",
                        "ksasl.oauthbearer.assertion.private.key.pem",
                    ),
                    ("https.ca.location", "ssl.truststore.location"),
                    ("https.ca.pem", "ssl.truststore.certificates"),
                    (
                        "sasl.oauthbearer.grant.type",
                        "ksasl.oauthbearer.grant.type",
                    ),
                ];
                for (from, to) in aliases {
                    if let Some(v) = self.get(from) {
                        p.set(to, v);
                    }
                }
                if let Some(t) = self.get("sasl.oauthbearer.metadata.authentication.type") {
                    if !t.trim().eq_ignore_ascii_case("none") {
                        return Err(bad_value(
                            "sasl.oauthbearer.metadata.authentication.type",
                            t,
                            "none (ksasl has no cloud metadata logins)",
                            "none",
                        ));
                    }
                }
                self.oidc_checked(p)
            }
            Some("default") | None => match (unsecure, self.get("sasl.oauthbearer.config")) {
                (true, Some(config)) => self.rdkafka_unsecured(config, extensions),
                (true, None) => Err(invalid(
                    "enable.sasl.oauthbearer.unsecure.jwt=true needs sasl.oauthbearer.config \
                         (principal=<name> [lifeSeconds=<n>] [scope=<s>] [extension_<k>=<v>])",
                )),
                (false, config) => {
                    if self.get("sasl.oauthbearer.token.endpoint.url").is_some() {
                        self.warnings.push(
                            "sasl.oauthbearer.token.endpoint.url is not used without \
                                 sasl.oauthbearer.method=oidc"
                                .into(),
                        );
                    }
                    Ok(ClientCredential::HostToken {
                        config: config.map(Secret::from),
                    })
                }
            },
            Some(_) => Err(bad_value(
                "sasl.oauthbearer.method",
                self.get("sasl.oauthbearer.method").unwrap_or(""),
                "default or oidc",
                "default",
            )),
        }
    }

    /// librdkafka's `sasl.oauthbearer.config` for its built-in unsecured tokens:
    /// `principal=<name> [principalClaimName=] [scopeClaimName=] [scope=a,b] [lifeSeconds=]
    /// [extension_<name>=<value>]`, separated by spaces.
    fn rdkafka_unsecured(
        &self,
        config: &str,
        extensions: &mut SaslExtensions,
    ) -> Result<ClientCredential> {
        let key = "sasl.oauthbearer.config";
        let mut u = UnsecuredLogin::new();
        let mut principal = None;
        let mut scope = None;
        for (n, item) in config.split_whitespace().enumerate() {
            // The value is hidden (it may carry a secret), so items are named by position.
            let (k, v) = item.split_once('=').ok_or_else(|| {
                invalid(format!(
                    "{key}: item {} is not name=value (items are separated by blanks)",
                    n + 1
                ))
            })?;
            match k {
                "principal" => principal = Some(v.to_string()),
                "principalClaimName" => u.principal_claim_name = v.to_string(),
                "scopeClaimName" => u.scope_claim_name = v.to_string(),
                "scope" => scope = Some(v.to_string()),
                "lifeSeconds" => {
                    u.lifetime_seconds = v.parse::<i64>().ok().filter(|s| *s > 0).ok_or_else(|| {
                        invalid(format!(
                            "{key}: lifeSeconds=\"{}\" is not a positive whole number (default: 3600)",
                            quote(v.as_bytes())
                        ))
                    })?
                }
                k if k.starts_with("extension_") => insert_extension(extensions, &k[10..], v)?,
                other => {
                    return Err(invalid(format!(
                        "{key}: unknown option \"{}\" (principal, principalClaimName, \
                         scopeClaimName, scope, lifeSeconds, extension_<name>)",
                        quote(other.as_bytes())
                    )))
                }
            }
        }
        let principal = principal
            .filter(|p| !p.is_empty())
            .ok_or_else(|| invalid(format!("{key} needs principal=<name>")))?;
        let claim = u.principal_claim_name.clone();
        u.claim(&claim, UnsecuredClaim::Str(principal));
        if let Some(s) = scope {
            let claim = u.scope_claim_name.clone();
            u.claim(
                &claim,
                UnsecuredClaim::List(
                    s.split(',')
                        .filter(|x| !x.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
            );
        }
        u.builder()?;
        Ok(ClientCredential::UnsecuredToken(u))
    }

    fn kerberos(&mut self, jaas: Option<&JaasEntry>) -> Result<(ClientCredential, Option<String>)> {
        let mut service = self.get("sasl.kerberos.service.name").map(str::to_string);
        let mut principal = self.get("sasl.kerberos.principal").map(str::to_string);
        let mut keytab = self.get("sasl.kerberos.keytab").map(str::to_string);
        if let Some(entry) = jaas {
            let module = entry.login_module();
            if module != KRB5_LOGIN_MODULE
                && module != "com.ibm.security.auth.module.Krb5LoginModule"
            {
                return Err(wrong_module(GSSAPI, module));
            }
            service = Some(service_name(
                entry.option("serviceName"),
                service.as_deref(),
            )?);
            if let Some(p) = entry.option("principal") {
                principal = Some(p.to_string());
            }
            let use_keytab = entry
                .option("useKeyTab")
                .map(|v| v.eq_ignore_ascii_case("true"))
                .unwrap_or(false);
            match (use_keytab, entry.option("keyTab")) {
                (true, Some(k)) => keytab = Some(k.to_string()),
                (true, None) => {
                    return Err(invalid(
                        "sasl.jaas.config: useKeyTab=true needs keyTab=\"<path>\"",
                    ))
                }
                (false, Some(_)) => self
                    .warnings
                    .push("sasl.jaas.config: keyTab is not used without useKeyTab=true".into()),
                (false, None) => {}
            }
        } else if service.is_none() {
            // librdkafka's default service name.
            if self
                .props
                .keys()
                .any(|k| LIBRDKAFKA_CLIENT_NAMES.contains(&k) && !KAFKA_CLIENT_NAMES.contains(&k))
                || self.get("sasl.mechanisms").is_some()
            {
                service = Some("kafka".into());
            }
        }
        let service = service_name(None, service.as_deref())?;
        Ok((
            ClientCredential::Kerberos { principal, keytab },
            Some(service),
        ))
    }
}

/// Kafka's rule for the Kerberos service name: the JAAS option `serviceName` or the property
/// `sasl.kerberos.service.name`; both set and different is an error, neither is too.
pub(crate) fn service_name(jaas: Option<&str>, property: Option<&str>) -> Result<String> {
    match (jaas, property.map(str::trim).filter(|p| !p.is_empty())) {
        (Some(j), Some(p)) if j != p => Err(invalid(format!(
            "Conflicting serviceName values found in JAAS and Kafka configs value in JAAS file \
             {}, value in Kafka config {}",
            quote(j.as_bytes()),
            quote(p.as_bytes())
        ))),
        (Some(j), _) if !j.trim().is_empty() => Ok(j.to_string()),
        (_, Some(p)) => Ok(p.to_string()),
        _ => Err(invalid(
            "No serviceName defined in either JAAS or Kafka config; set \
             sasl.kerberos.service.name to the broker's Kerberos service (usually kafka)",
        )),
    }
}

fn insert_extension(extensions: &mut SaslExtensions, name: &str, value: &str) -> Result<()> {
    extensions
        .insert(name, value)
        .map_err(|e| invalid(format!("SASL extension: {}", e.message())))
}

fn short_class(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

fn wrong_module(mechanism: &str, module: &str) -> Error {
    let expected = match mechanism {
        PLAIN => PLAIN_LOGIN_MODULE,
        SCRAM_SHA_256 | SCRAM_SHA_512 => SCRAM_LOGIN_MODULE,
        OAUTHBEARER => OAUTHBEARER_LOGIN_MODULE,
        _ => KRB5_LOGIN_MODULE,
    };
    invalid(format!(
        "sasl.jaas.config: SASL mechanism {mechanism} needs {expected}, not \"{}\"",
        quote(module.as_bytes())
    ))
}

/// Kafka's `sasl.login.refresh.*` names.
const REFRESH_NAMES: [&str; 4] = [
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds",
];

/// librdkafka's schedule in Kafka's terms: 80 % of the remaining life, no jitter, no buffer,
/// no minimum period.
fn librdkafka_refresh() -> Result<RefreshConfig> {
    let mut b = RefreshConfig::builder();
    b.window_factor(0.8)
        .window_jitter(0.0)
        .min_period_seconds(0)
        .buffer_seconds(0);
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(text: &str) -> ClientSettings {
        ClientSettings::from_text(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> String {
        let e = ClientSettings::from_text(text).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        e.message().to_string()
    }

    fn value(s: &ClientSettings, key: &str) -> Option<String> {
        s.effective()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    #[test]
    fn kafka_scram_with_a_delegation_token() {
        let s = client(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n\
             username=\"tokenid\" password=\"hmac-XYZ\" tokenauth=\"true\";",
        );
        assert_eq!(s.mechanism, "SCRAM-SHA-256");
        match &s.credential {
            ClientCredential::Password {
                username,
                password,
                token_auth,
            } => {
                assert_eq!(username, "tokenid");
                assert_eq!(password.expose(), b"hmac-XYZ");
                assert!(token_auth);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(value(&s, "tokenauth").as_deref(), Some("true"));
        assert!(!format!("{s:?}").contains("hmac-XYZ"));
        assert!(s.unknown.is_empty() && s.warnings.is_empty());
    }

    #[test]
    fn librdkafka_password_and_unknown_names() {
        let s = client(
            "security.protocol=sasl_plaintext\nsasl.mechanisms=PLAIN\nsasl.username=alice\n\
             sasl.password=alice-secret\nsasl.mechansim=PLAIN\nbootstrap.servers=b:9092",
        );
        assert_eq!(s.security_protocol, SecurityProtocol::SaslPlaintext);
        assert_eq!(s.unknown, vec!["sasl.mechansim".to_string()]);
        assert_eq!(value(&s, "username").as_deref(), Some("alice"));
    }

    #[test]
    fn oauthbearer_forms() {
        let s = client(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n\
             sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule \
             required unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=600 \
             unsecuredLoginListClaim_scope=\",read,write\" unsecuredLoginExtension_traceId=abc;",
        );
        let ClientCredential::UnsecuredToken(u) = &s.credential else {
            panic!("{:?}", s.credential)
        };
        assert_eq!(u.lifetime_seconds, 600);
        let token = u.builder().unwrap().build(1_000_000).unwrap();
        assert_eq!(token.principal(), "alice");
        assert_eq!(token.scope(), ["read", "write"]);
        assert_eq!(
            s.extensions.map().get("traceId").map(String::as_str),
            Some("abc")
        );
        assert_eq!(
            value(&s, "sasl.login.refresh.window.factor").as_deref(),
            Some("0.8")
        );

        let s = client(
            "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n\
             sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n\
             sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n\
             sasl.oauthbearer.jwt.retriever.class=org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever\n\
             sasl.oauthbearer.assertion.private.key.file=/keys/a.pem\n\
             sasl.oauthbearer.assertion.claim.iss=me\n\
             sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule \
             required clientId=kafka clientSecret=\"s3cret-XYZ\" extension_logicalCluster=lkc-1;",
        );
        let ClientCredential::Oidc(p) = &s.credential else {
            panic!("{:?}", s.credential)
        };
        assert_eq!(
            p.get("ksasl.oauthbearer.grant.type"),
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
        );
        assert_eq!(
            value(&s, "sasl.oauthbearer.client.credentials.client.secret").as_deref(),
            Some("[hidden]")
        );
        assert!(!format!("{s:?}{:?}", s.effective()).contains("s3cret-XYZ"));

        // librdkafka: no method, no unsecured JWT: the host supplies tokens.
        let s = client("security.protocol=SASL_SSL\nsasl.mechanisms=OAUTHBEARER\n");
        assert!(matches!(
            s.credential,
            ClientCredential::HostToken { config: None }
        ));
        let s = client(
            "security.protocol=SASL_SSL\nsasl.mechanisms=OAUTHBEARER\n\
             enable.sasl.oauthbearer.unsecure.jwt=true\n\
             sasl.oauthbearer.config=principal=admin scope=a,b lifeSeconds=60 extension_x=1\n",
        );
        let ClientCredential::UnsecuredToken(u) = &s.credential else {
            panic!()
        };
        let t = u.builder().unwrap().build(0).unwrap();
        assert_eq!((t.principal(), t.expiry_ms()), ("admin", 60_000));
        assert_eq!(t.scope(), ["a", "b"]);
    }

    #[test]
    fn errors_name_the_key_the_form_and_the_default() {
        let m = error("security.protocol=SASL");
        assert!(
            m.contains("security.protocol")
                && m.contains("PLAINTEXT, SSL")
                && m.contains("default: PLAINTEXT"),
            "{m}"
        );
        let m = error("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN,SCRAM-SHA-256");
        assert!(m.contains("one SASL mechanism"), "{m}");
        let m = error("security.protocol=SASL_SSL\nsasl.mechanism=plain");
        assert!(m.contains("upper case (PLAIN)"), "{m}");
        let m = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.login.refresh.window.factor=0.3\n\
             sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=a;",
        );
        assert!(m.starts_with("Invalid value 0.3 for configuration sasl.login.refresh.window.factor: Value must be at least 0.5") && m.ends_with("(default: 0.8)"), "{m}");
        let m = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=\"hunter2-XYZ\"",
        );
        assert_eq!(
            m,
            "sasl.jaas.config: JAAS config entry not terminated by semi-colon"
        );
        let m = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=b;",
        );
        assert!(
            m.contains("needs org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"),
            "{m}"
        );
        let m = error("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI");
        assert!(m.starts_with("No serviceName defined"), "{m}");
        let m = error("security.protocol=SASL_SSL\nsasl.mechanisms=OAUTHBEARER\nsasl.oauthbearer.method=oidc\nsasl.oauthbearer.client.id=a\nsasl.oauthbearer.client.secret=hunter2-XYZ");
        assert!(
            m.contains("token.endpoint.url") && !m.contains("hunter2"),
            "{m}"
        );
        let m = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.login.class=com.example.Login",
        );
        assert!(m.contains("sasl.login.class is not supported"), "{m}");
    }

    #[test]
    fn plaintext_means_no_sasl() {
        let s = client("bootstrap.servers=localhost:9092\nsasl.mechanism=PLAIN");
        assert_eq!(
            s.effective(),
            vec![
                ("security.protocol".to_string(), "PLAINTEXT".to_string()),
                ("credential".to_string(), "none".to_string()),
            ]
        );
        assert_eq!(s.warnings.len(), 1);
    }

    #[test]
    fn gssapi_from_jaas_and_from_librdkafka() {
        let s = client(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n\
             sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true \
             storeKey=true keyTab=\"/etc/security/keytabs/client.keytab\" principal=\"client@EXAMPLE.COM\";",
        );
        assert_eq!(
            value(&s, "keytab").as_deref(),
            Some("/etc/security/keytabs/client.keytab")
        );
        assert_eq!(
            value(&s, "principal").as_deref(),
            Some("client@EXAMPLE.COM")
        );
        let s = client(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanisms=GSSAPI\nsasl.kerberos.keytab=/k\n",
        );
        assert_eq!(s.kerberos_service_name.as_deref(), Some("kafka"));
        let m = error(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n\
             sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required serviceName=other;",
        );
        assert!(m.starts_with("Conflicting serviceName values"), "{m}");
    }
}
