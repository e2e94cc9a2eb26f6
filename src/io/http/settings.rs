//! One flat set of settings for a token login and for a JWKS endpoint, named after Kafka's
//! properties, so every binding fills the same struct and the rules live here.

use std::fmt;
use std::sync::Arc;

use super::client::{HttpClient, HttpConfig};
use super::jwks::JwksFetcher;
use super::login::OidcLogin;
use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::oauthbearer::JwksValidator;
use crate::oidc::{
    AssertionConfig, ClientAuth, Grant, RetryPlan, TokenRequestConfig, TokenRequester,
};
use crate::random::SharedRandom;
use crate::secret::Secret;

/// How to reach the provider over HTTPS (shared by logins and JWKS endpoints).
#[derive(Clone, Default)]
pub struct HttpSettings {
    /// PEM CA certificates to trust instead of Mozilla's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// A file of PEM CA certificates (read once, when the settings are used).
    pub ca_file: Option<String>,
    /// `sasl.login.connect.timeout.ms`.
    pub connect_timeout_ms: Option<u64>,
    /// `sasl.login.read.timeout.ms`.
    pub read_timeout_ms: Option<u64>,
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSettings")
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .field("ca_file", &self.ca_file)
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("read_timeout_ms", &self.read_timeout_ms)
            .finish()
    }
}

impl HttpSettings {
    /// The client these settings describe.
    pub fn client(&self) -> Result<HttpClient> {
        let ca_pem = match (&self.ca_pem, &self.ca_file) {
            (Some(_), Some(_)) => {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    "give the CA certificates as PEM text or as a file, not both",
                ))
            }
            (Some(p), None) => Some(p.clone()),
            (None, Some(f)) => Some(std::fs::read(f).map_err(|e| {
                Error::new(
                    ErrorCode::InvalidConfig,
                    format!("cannot read the CA file \"{}\": {e}", quote(f.as_bytes())),
                )
            })?),
            (None, None) => None,
        };
        HttpClient::new(&HttpConfig {
            ca_pem,
            connect_timeout_ms: self.connect_timeout_ms,
            read_timeout_ms: self.read_timeout_ms,
            ..Default::default()
        })
    }
}

/// A token login's settings. Unset values take Kafka's defaults.
#[derive(Clone, Default)]
pub struct OidcSettings {
    /// `sasl.oauthbearer.token.endpoint.url` (required).
    pub token_endpoint_url: String,
    /// `sasl.oauthbearer.client.credentials.client.id` (JAAS `clientId`).
    pub client_id: Option<String>,
    /// `sasl.oauthbearer.client.credentials.client.secret` (JAAS `clientSecret`).
    pub client_secret: Option<Secret>,
    /// `client_secret_basic` (the default with a secret), `client_secret_post`,
    /// `private_key_jwt` (the default with an assertion key and a client id, no secret) or
    /// `none`.
    pub client_auth: Option<String>,
    /// `client_credentials` (default) or `urn:ietf:params:oauth:grant-type:jwt-bearer`
    /// (also accepted as `jwt_bearer`).
    pub grant_type: Option<String>,
    /// `sasl.oauthbearer.scope` (JAAS `scope`).
    pub scope: Option<String>,
    /// `sasl.oauthbearer.header.urlencode`.
    pub header_urlencode: Option<bool>,
    /// `sasl.oauthbearer.sub.claim.name`.
    pub sub_claim_name: Option<String>,
    /// `sasl.oauthbearer.scope.claim.name`.
    pub scope_claim_name: Option<String>,
    /// The contents of `sasl.oauthbearer.assertion.private.key.file` (PEM).
    pub assertion_private_key_pem: Option<Secret>,
    /// `sasl.oauthbearer.assertion.private.key.file`, read once (instead of the PEM text).
    pub assertion_private_key_file: Option<String>,
    /// `sasl.oauthbearer.assertion.algorithm`.
    pub assertion_algorithm: Option<String>,
    /// A `kid` for the assertion's header.
    pub assertion_key_id: Option<String>,
    /// `sasl.oauthbearer.assertion.claim.iss`.
    pub assertion_issuer: Option<String>,
    /// `sasl.oauthbearer.assertion.claim.sub`.
    pub assertion_subject: Option<String>,
    /// `sasl.oauthbearer.assertion.claim.aud`.
    pub assertion_audience: Option<String>,
    /// `sasl.oauthbearer.assertion.claim.exp.seconds`.
    pub assertion_exp_seconds: Option<i64>,
    /// `sasl.oauthbearer.assertion.claim.nbf.seconds`.
    pub assertion_nbf_seconds: Option<i64>,
    /// `sasl.oauthbearer.assertion.claim.jti.include`.
    pub assertion_include_jti: Option<bool>,
    /// `sasl.login.retry.backoff.ms`.
    pub retry_backoff_ms: Option<i64>,
    /// `sasl.login.retry.backoff.max.ms`.
    pub retry_backoff_max_ms: Option<i64>,
    /// HTTPS.
    pub http: HttpSettings,
}

impl fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcSettings")
            .field("token_endpoint_url", &self.token_endpoint_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_auth", &self.client_auth)
            .field("grant_type", &self.grant_type)
            .field("scope", &self.scope)
            .field(
                "assertion_private_key_pem",
                &self
                    .assertion_private_key_pem
                    .as_ref()
                    .map(|_| "<redacted>"),
            )
            .field(
                "assertion_private_key_file",
                &self.assertion_private_key_file,
            )
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

fn invalid(why: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidConfig, why.into())
}

impl OidcSettings {
    fn assertion(&self) -> Result<Option<AssertionConfig>> {
        let pem = match (
            &self.assertion_private_key_pem,
            &self.assertion_private_key_file,
        ) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "give the assertion's private key as PEM text or as a file, not both",
                ))
            }
            (Some(p), None) => p.clone(),
            (None, Some(f)) => Secret::new(std::fs::read(f).map_err(|e| {
                invalid(format!(
                    "cannot read sasl.oauthbearer.assertion.private.key.file \"{}\": {e}",
                    quote(f.as_bytes())
                ))
            })?),
            (None, None) => return Ok(None),
        };
        let mut a = AssertionConfig::new(pem);
        if let Some(v) = &self.assertion_algorithm {
            a.algorithm = v.clone();
        }
        a.key_id = self.assertion_key_id.clone();
        a.issuer = self.assertion_issuer.clone();
        a.subject = self.assertion_subject.clone();
        a.audience = self.assertion_audience.clone();
        if let Some(v) = self.assertion_exp_seconds {
            a.exp_seconds = v;
        }
        if let Some(v) = self.assertion_nbf_seconds {
            a.nbf_seconds = v;
        }
        if let Some(v) = self.assertion_include_jti {
            a.include_jti = v;
        }
        Ok(Some(a))
    }

    /// The sans-IO request configuration these settings describe.
    pub fn token_request_config(&self) -> Result<TokenRequestConfig> {
        if self.token_endpoint_url.trim().is_empty() {
            return Err(invalid(
                "sasl.oauthbearer.token.endpoint.url is not set (the provider's token endpoint)",
            ));
        }
        let assertion = self.assertion()?;
        let grant = match self.grant_type.as_deref().map(str::trim) {
            None | Some("") | Some("client_credentials") => Grant::ClientCredentials,
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer") | Some("jwt_bearer") => {
                Grant::JwtBearer(assertion.clone().ok_or_else(|| {
                    invalid("the jwt-bearer grant needs an assertion private key")
                })?)
            }
            Some(other) => {
                return Err(invalid(format!(
                    "grant type \"{}\": expected client_credentials or \
                     urn:ietf:params:oauth:grant-type:jwt-bearer",
                    quote(other.as_bytes())
                )))
            }
        };
        let jwt_bearer = matches!(grant, Grant::JwtBearer(_));
        let client_id = || {
            self.client_id
                .clone()
                .ok_or_else(|| invalid("a client id is needed (clientId)"))
        };
        let secret = || {
            self.client_secret
                .clone()
                .ok_or_else(|| invalid("a client secret is needed (clientSecret)"))
        };
        let default_auth = match (&self.client_secret, &assertion, jwt_bearer) {
            (Some(_), _, _) => "client_secret_basic",
            (None, _, true) => "none",
            (None, Some(_), false) => "private_key_jwt",
            (None, None, false) => "client_secret_basic",
        };
        let client_auth = match self
            .client_auth
            .as_deref()
            .map(str::trim)
            .unwrap_or(default_auth)
        {
            "client_secret_basic" => ClientAuth::SecretBasic {
                client_id: client_id()?,
                client_secret: secret()?,
                urlencode: self.header_urlencode.unwrap_or(false),
            },
            "client_secret_post" => ClientAuth::SecretPost {
                client_id: client_id()?,
                client_secret: secret()?,
            },
            "private_key_jwt" => ClientAuth::PrivateKeyJwt {
                client_id: client_id()?,
                assertion: assertion
                    .clone()
                    .ok_or_else(|| invalid("private_key_jwt needs an assertion private key"))?,
            },
            "none" => ClientAuth::None,
            other => {
                return Err(invalid(format!(
                    "client authentication \"{}\": expected client_secret_basic, \
                     client_secret_post, private_key_jwt or none",
                    quote(other.as_bytes())
                )))
            }
        };
        let mut c = TokenRequestConfig::client_secret(&self.token_endpoint_url, "", "");
        c.grant = grant;
        c.client_auth = client_auth;
        c.scope = self.scope.clone();
        if let Some(v) = &self.sub_claim_name {
            c.subject_claim_name = v.clone();
        }
        if let Some(v) = &self.scope_claim_name {
            c.scope_claim_name = v.clone();
        }
        Ok(c)
    }

    /// The login these settings describe.
    pub fn login(&self, random: SharedRandom) -> Result<OidcLogin> {
        let requester = TokenRequester::new(self.token_request_config()?)?;
        let d = RetryPlan::default();
        let retry = RetryPlan::new(
            self.retry_backoff_ms.unwrap_or(d.backoff_ms()),
            self.retry_backoff_max_ms.unwrap_or(d.backoff_max_ms()),
        )?;
        Ok(OidcLogin::new(
            requester,
            self.http.client()?,
            retry,
            random,
        ))
    }
}

fn parse<T: std::str::FromStr>(name: &str, value: &str, form: &str) -> Result<T> {
    value.trim().parse().map_err(|_| {
        invalid(format!(
            "{name}: \"{}\" is not {form}",
            quote(value.as_bytes())
        ))
    })
}

fn flag(name: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(format!(
            "{name}: \"{}\" is not true or false",
            quote(value.as_bytes())
        ))),
    }
}

impl HttpSettings {
    /// Sets one value by name: `ssl.truststore.location` (a PEM file), `ssl.truststore.certificates`
    /// (PEM text), `ssl.truststore.type` (only `PEM`), `sasl.login.connect.timeout.ms`,
    /// `sasl.login.read.timeout.ms`. Returns `false` for a name that is not one of these.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool> {
        let ms = |v: &str| parse::<u64>(name, v, "a number of milliseconds");
        match name {
            "ssl.truststore.location" => self.ca_file = Some(value.to_string()),
            "ssl.truststore.certificates" => self.ca_pem = Some(value.as_bytes().to_vec()),
            "ssl.truststore.type" if value.trim().eq_ignore_ascii_case("PEM") => {}
            "ssl.truststore.type" => {
                return Err(invalid(format!(
                    "ssl.truststore.type: \"{}\" is not supported; give the CA certificates as \
                     PEM (ssl.truststore.type=PEM)",
                    quote(value.as_bytes())
                )))
            }
            "sasl.login.connect.timeout.ms" => self.connect_timeout_ms = Some(ms(value)?),
            "sasl.login.read.timeout.ms" => self.read_timeout_ms = Some(ms(value)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Settings from `(name, value)` pairs, each as [`HttpSettings::set`] takes it; a name
    /// that is not an HTTPS setting is `INVALID_CONFIG`.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut s = HttpSettings::default();
        for (name, value) in pairs {
            if !s.set(name, value)? {
                return Err(invalid(format!(
                    "\"{}\" is not a setting of a JWKS endpoint",
                    quote(name.as_bytes())
                )));
            }
        }
        Ok(s)
    }
}

impl OidcSettings {
    /// Sets one value by its Kafka property name (or its `OAuthBearerLoginModule` JAAS option
    /// name: `clientId`, `clientSecret`, `scope`), or one of ksasl's own
    /// (`ksasl.oauthbearer.client.auth`, `ksasl.oauthbearer.grant.type`,
    /// `ksasl.oauthbearer.assertion.private.key.pem`, `ksasl.oauthbearer.assertion.kid`), or
    /// an HTTPS setting of [`HttpSettings::set`]. An unknown name or a value of the wrong form
    /// is `INVALID_CONFIG`, naming the key; secrets never appear in errors. A failed `set`
    /// changes nothing (every value is parsed before it is stored).
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let some = || Some(value.to_string());
        let ms = |v: &str| parse::<i64>(name, v, "a number of milliseconds");
        let secs = |v: &str| parse::<i64>(name, v, "a number of seconds");
        match name {
            "sasl.oauthbearer.token.endpoint.url" => self.token_endpoint_url = value.to_string(),
            "sasl.oauthbearer.client.credentials.client.id" | "clientId" => self.client_id = some(),
            "sasl.oauthbearer.client.credentials.client.secret" | "clientSecret" => {
                self.client_secret = Some(Secret::from(value))
            }
            "sasl.oauthbearer.scope" | "scope" => self.scope = some(),
            "sasl.oauthbearer.header.urlencode" => self.header_urlencode = Some(flag(name, value)?),
            "sasl.oauthbearer.sub.claim.name" => self.sub_claim_name = some(),
            "sasl.oauthbearer.scope.claim.name" => self.scope_claim_name = some(),
            "sasl.oauthbearer.assertion.private.key.file" => {
                self.assertion_private_key_file = some()
            }
            "ksasl.oauthbearer.assertion.private.key.pem" => {
                self.assertion_private_key_pem = Some(Secret::from(value))
            }
            "sasl.oauthbearer.assertion.algorithm" => self.assertion_algorithm = some(),
            "ksasl.oauthbearer.assertion.kid" => self.assertion_key_id = some(),
            "sasl.oauthbearer.assertion.claim.iss" => self.assertion_issuer = some(),
            "sasl.oauthbearer.assertion.claim.sub" => self.assertion_subject = some(),
            "sasl.oauthbearer.assertion.claim.aud" => self.assertion_audience = some(),
            "sasl.oauthbearer.assertion.claim.exp.seconds" => {
                self.assertion_exp_seconds = Some(secs(value)?)
            }
            "sasl.oauthbearer.assertion.claim.nbf.seconds" => {
                self.assertion_nbf_seconds = Some(secs(value)?)
            }
            "sasl.oauthbearer.assertion.claim.jti.include" => {
                self.assertion_include_jti = Some(flag(name, value)?)
            }
            "ksasl.oauthbearer.client.auth" => self.client_auth = some(),
            "ksasl.oauthbearer.grant.type" => self.grant_type = some(),
            "sasl.login.retry.backoff.ms" => self.retry_backoff_ms = Some(ms(value)?),
            "sasl.login.retry.backoff.max.ms" => self.retry_backoff_max_ms = Some(ms(value)?),
            _ => {
                if !self.http.set(name, value)? {
                    return Err(invalid(format!(
                        "\"{}\" is not a setting of an OIDC login",
                        quote(name.as_bytes())
                    )));
                }
            }
        }
        Ok(())
    }

    /// Settings from `(name, value)` pairs, each as [`OidcSettings::set`] takes it.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut s = OidcSettings::default();
        for (name, value) in pairs {
            s.set(name, value)?;
        }
        Ok(s)
    }
}

/// A JWKS endpoint (`sasl.oauthbearer.jwks.endpoint.url`) feeding `validator`.
pub fn jwks_endpoint(
    url: &str,
    http: &HttpSettings,
    validator: Arc<JwksValidator>,
) -> Result<JwksFetcher> {
    JwksFetcher::new(url, http.client()?, validator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> OidcSettings {
        OidcSettings {
            token_endpoint_url: "https://idp.example/token".into(),
            client_id: Some("kafka".into()),
            ..Default::default()
        }
    }

    #[test]
    fn settings_from_pairs_name_what_is_wrong() {
        let h = HttpSettings::from_pairs([("sasl.login.read.timeout.ms", "250")]).unwrap();
        assert_eq!(h.read_timeout_ms, Some(250));
        let e = HttpSettings::from_pairs([("clientId", "kafka")]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        assert!(e
            .message()
            .contains("\"clientId\" is not a setting of a JWKS endpoint"));
        let o = OidcSettings::from_pairs([("clientId", "kafka"), ("ssl.truststore.type", "PEM")]);
        assert_eq!(o.unwrap().client_id.as_deref(), Some("kafka"));
        let e = OidcSettings::from_pairs([("sasl.login.retry.backoff.ms", "soon")]).unwrap_err();
        assert!(e.message().contains("sasl.login.retry.backoff.ms"), "{e}");
        // A failed set changes nothing.
        let mut s = settings();
        assert!(s.set("sasl.login.retry.backoff.max.ms", "x").is_err());
        assert_eq!(s.retry_backoff_max_ms, None);
    }

    #[test]
    fn client_authentication_follows_what_is_given() {
        let mut s = settings();
        s.client_secret = Some("s".into());
        let c = s.token_request_config().unwrap();
        assert!(matches!(
            c.client_auth,
            ClientAuth::SecretBasic {
                urlencode: false,
                ..
            }
        ));
        s.client_auth = Some("client_secret_post".into());
        assert!(matches!(
            s.token_request_config().unwrap().client_auth,
            ClientAuth::SecretPost { .. }
        ));
        s.client_auth = Some("private_key_jwt".into());
        let e = s.token_request_config().unwrap_err();
        assert!(
            e.message().contains("assertion private key"),
            "{}",
            e.message()
        );
        s.client_auth = Some("mtls".into());
        assert!(s
            .token_request_config()
            .unwrap_err()
            .message()
            .contains("\"mtls\""));
    }

    #[test]
    fn missing_and_doubled_values_are_named() {
        let e = settings().token_request_config().unwrap_err();
        assert!(e.message().contains("client secret"), "{}", e.message());
        let mut s = settings();
        s.grant_type = Some("jwt_bearer".into());
        assert!(s
            .token_request_config()
            .unwrap_err()
            .message()
            .contains("jwt-bearer"));
        s.grant_type = Some("password".into());
        assert!(s
            .token_request_config()
            .unwrap_err()
            .message()
            .contains("\"password\""));
        let mut s = settings();
        s.set("clientSecret", "hunter2").unwrap();
        s.set("sasl.login.retry.backoff.ms", "250").unwrap();
        assert_eq!(s.retry_backoff_ms, Some(250));
        let e = s.set("sasl.login.read.timeout.ms", "soon").unwrap_err();
        assert!(
            e.message()
                .starts_with("sasl.login.read.timeout.ms: \"soon\""),
            "{}",
            e.message()
        );
        let e = s
            .set("sasl.oauthbearer.header.urlencode", "yes")
            .unwrap_err();
        assert!(e.message().contains("true or false"));
        assert!(s
            .set("ssl.truststore.type", "JKS")
            .unwrap_err()
            .message()
            .contains("PEM"));
        assert!(s
            .set("sasl.oauthbearer.bogus", "1")
            .unwrap_err()
            .message()
            .contains("bogus"));
        assert!(!format!("{s:?}").contains("hunter2"));
        let h = HttpSettings {
            ca_pem: Some(b"x".to_vec()),
            ca_file: Some("/x".into()),
            ..Default::default()
        };
        assert!(h.client().unwrap_err().message().contains("not both"));
        let h = HttpSettings {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        assert!(h
            .client()
            .unwrap_err()
            .message()
            .contains("/nonexistent/ca.pem"));
        let mut s = settings();
        s.client_secret = Some("hunter2".into());
        assert!(!format!("{s:?}").contains("hunter2"));
    }
}
