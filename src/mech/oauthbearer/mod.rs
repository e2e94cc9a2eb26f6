//! OAUTHBEARER (RFC 7628) as Kafka uses it (KIP-255, KIP-342, KIP-768).
//!
//! The client sends one message, the GS2 header and `\x01`-separated key/value pairs:
//! `n,[a=<authzid>],\x01auth=Bearer <token>\x01[<ext>=<value>\x01...]\x01`. The server
//! validates the token with a pluggable [`TokenValidator`]: [`UnsecuredValidator`] (Kafka's
//! development validator for `alg: none` tokens), [`JwksValidator`] (signed JWTs against a
//! JWKS, KIP-768) or one of the host's. On success the server answers with an empty
//! challenge; on rejection with Kafka's JSON error, which the client acknowledges with
//! `\x01` before the server fails the exchange with the JSON as its message.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{Error, ErrorCode, Result};
use crate::secret::Secret;

mod cache;
mod client;
mod jwt;
mod server;
mod unsecured;

pub use cache::CachingValidator;
pub use client::OAuthBearerClient;
pub use jwt::{JwksValidator, JwtValidatorConfig};
pub use server::{ExtensionValidator, OAuthBearerServer};
pub use unsecured::{
    java_double, UnsecuredTokenBuilder, UnsecuredValidator, UnsecuredValidatorConfig,
};

/// The byte that separates key/value pairs, and the client's acknowledgement of an error.
pub const CONTROL_A: u8 = 0x01;

/// A bearer token held by a client, with what it says about itself.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthBearerToken {
    value: Secret,
    principal: String,
    expiry_ms: i64,
    start_ms: Option<i64>,
    scope: Vec<String>,
}

impl fmt::Debug for OAuthBearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthBearerToken")
            .field("value", &"<redacted>")
            .field("principal", &self.principal)
            .field("expiry_ms", &self.expiry_ms)
            .field("start_ms", &self.start_ms)
            .field("scope", &self.scope)
            .finish()
    }
}

impl OAuthBearerToken {
    /// A token. `expiry_ms` is absolute (ms since the epoch), as librdkafka's
    /// `md_lifetime_ms`. The value must be an RFC 6750 `b64token` (what a JWT is).
    pub fn new(value: &str, principal: &str, expiry_ms: i64) -> Result<Self> {
        if !is_b64token(value) {
            return Err(Error::misuse(
                "a bearer token must be a non-empty RFC 6750 b64token",
            ));
        }
        Ok(OAuthBearerToken {
            value: Secret::from(value),
            principal: principal.to_string(),
            expiry_ms,
            start_ms: None,
            scope: Vec::new(),
        })
    }

    /// Sets when the token became valid (its `iat`), in ms.
    pub fn with_start_ms(mut self, start_ms: i64) -> Self {
        self.start_ms = Some(start_ms);
        self
    }

    /// Sets the token's scope.
    pub fn with_scope(mut self, scope: Vec<String>) -> Self {
        self.scope = scope;
        self
    }

    /// The token text (a secret: do not log it).
    pub fn value(&self) -> &str {
        std::str::from_utf8(self.value.expose()).unwrap_or("")
    }

    /// The principal the token names.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// Absolute expiry, ms since the epoch.
    pub fn expiry_ms(&self) -> i64 {
        self.expiry_ms
    }

    /// When the token became valid, if known.
    pub fn start_ms(&self) -> Option<i64> {
        self.start_ms
    }

    /// The token's scope.
    pub fn scope(&self) -> &[String] {
        &self.scope
    }
}

/// RFC 6750 `b64token`: `[-._~+/A-Za-z0-9]+` then optional `=` padding.
pub(crate) fn is_b64token(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// Whether `name` is a valid SASL extension name for OAUTHBEARER: ASCII letters, not `auth`.
pub fn is_valid_extension_name(name: &str) -> bool {
    !name.is_empty() && name != "auth" && name.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Whether `value` is a valid SASL extension value: one or more of VCHAR, SP, HTAB, CR, LF.
pub fn is_valid_extension_value(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) || b" \t\r\n".contains(&b))
}

/// Validated SASL extensions (KIP-342), sorted by name. Confluent Cloud, for instance,
/// needs `logicalCluster` and `identityPoolId`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaslExtensions(BTreeMap<String, String>);

impl SaslExtensions {
    /// No extensions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an extension, checking name and value with Kafka's (and librdkafka's) rules.
    pub fn insert(&mut self, name: &str, value: &str) -> Result<()> {
        if !is_valid_extension_name(name) {
            return Err(Error::new(
                ErrorCode::InvalidExtension,
                format!("Extension name {name} is invalid"),
            ));
        }
        if !is_valid_extension_value(value) {
            return Err(Error::new(
                ErrorCode::InvalidExtension,
                format!("Extension value for extension {name} is invalid"),
            ));
        }
        self.0.insert(name.to_string(), value.to_string());
        Ok(())
    }

    /// Builds a set from pairs.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut e = SaslExtensions::new();
        for (k, v) in pairs {
            e.insert(k, v)?;
        }
        Ok(e)
    }

    /// The extensions.
    pub fn map(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

/// The client's initial response, parsed by the server.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct InitialResponse {
    pub authzid: Option<String>,
    pub token: String,
    pub extensions: BTreeMap<String, String>,
}

fn invalid_first() -> Error {
    Error::malformed("Invalid OAUTHBEARER client first message")
}

impl InitialResponse {
    /// Builds the exact bytes Kafka's client sends.
    pub(crate) fn format(
        authzid: Option<&str>,
        token: &str,
        extensions: &SaslExtensions,
    ) -> Vec<u8> {
        let mut m = Vec::with_capacity(token.len() + 32);
        m.extend_from_slice(b"n,");
        if let Some(a) = authzid {
            m.extend_from_slice(b"a=");
            m.extend_from_slice(crate::mech::scram::escape_username(a).as_bytes());
        }
        m.extend_from_slice(b",\x01auth=Bearer ");
        m.extend_from_slice(token.as_bytes());
        for (k, v) in extensions.map() {
            m.push(CONTROL_A);
            m.extend_from_slice(k.as_bytes());
            m.push(b'=');
            m.extend_from_slice(v.as_bytes());
        }
        m.extend_from_slice(b"\x01\x01");
        m
    }

    /// Parses with Kafka's rules.
    pub(crate) fn parse(bytes: &[u8]) -> Result<InitialResponse> {
        let text = std::str::from_utf8(bytes).map_err(|_| invalid_first())?;
        let rest = text.strip_prefix("n,").ok_or_else(|| {
            if text.starts_with("y,") || text.starts_with("p=") {
                Error::new(
                    ErrorCode::UnsupportedChannelBinding,
                    "channel binding is not supported",
                )
            } else {
                invalid_first()
            }
        })?;
        let (authz, rest) = rest.split_once(',').ok_or_else(invalid_first)?;
        let authzid = match authz {
            "" => None,
            a => {
                let name = a.strip_prefix("a=").ok_or_else(invalid_first)?;
                let ok = !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| (0x01..=0x7f).contains(&b) && b != b',');
                let name = if ok {
                    crate::mech::scram::unescape_username(name)
                } else {
                    None
                };
                Some(name.ok_or_else(|| {
                    Error::new(ErrorCode::InvalidUsername, "invalid authorization id")
                })?)
            }
        };
        // rest = \x01 (key=value\x01)* \x01
        let body = rest
            .strip_prefix('\x01')
            .and_then(|r| r.strip_suffix('\x01'))
            .ok_or_else(invalid_first)?;
        let mut pairs = BTreeMap::new();
        if !body.is_empty() {
            let body = body.strip_suffix('\x01').ok_or_else(invalid_first)?;
            for kv in body.split('\x01') {
                let (k, v) = kv.split_once('=').ok_or_else(invalid_first)?;
                if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphabetic()) {
                    return Err(invalid_first());
                }
                if !is_valid_extension_value(v) {
                    return Err(invalid_first());
                }
                pairs.insert(k.to_string(), v.to_string());
            }
        }
        let auth = pairs.remove("auth").ok_or_else(|| {
            Error::malformed("Invalid OAUTHBEARER client first message: 'auth' not specified")
        })?;
        let (scheme, token) = auth.split_once(' ').ok_or_else(invalid_first)?;
        let token = token.trim_start_matches(' ');
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            || !is_b64token(token)
        {
            return Err(invalid_first());
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(Error::malformed(
                "Invalid OAUTHBEARER client first message: the scheme is not Bearer",
            ));
        }
        Ok(InitialResponse {
            authzid,
            token: token.to_string(),
            extensions: pairs,
        })
    }
}

/// What a validator learnt from an accepted token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidatedToken {
    /// The principal name (the subject or the configured principal claim).
    pub principal: String,
    /// Absolute expiry, ms since the epoch (bounds the KIP-368 session).
    pub expiry_ms: i64,
    /// When the token was issued, ms since the epoch, if it says.
    pub start_ms: Option<i64>,
    /// The token's scope.
    pub scope: Vec<String>,
    /// The first instant at which this verdict holds (for caches), ms.
    pub valid_from_ms: Option<i64>,
    /// The instant from which this verdict no longer holds (for caches), ms.
    pub valid_until_ms: i64,
}

/// Why a validator refused a token: a code and reason for the host, and what Kafka tells the
/// client (`status`, and optionally `scope` and `openid-configuration`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRejection {
    /// The specific reason, as a stable code.
    pub code: ErrorCode,
    /// A message for the host's logs (never holds the token).
    pub reason: String,
    /// RFC 7628 status, `invalid_token` unless said otherwise.
    pub status: String,
    /// The scope the client would need (`insufficient_scope`).
    pub scope: Option<String>,
    /// Where the client can find the authorization server's configuration.
    pub openid_configuration: Option<String>,
}

impl TokenRejection {
    /// `{"status":"invalid_token"}` with a specific code and reason.
    pub fn invalid_token(code: ErrorCode, reason: impl Into<String>) -> Self {
        TokenRejection {
            code,
            reason: reason.into(),
            status: "invalid_token".into(),
            scope: None,
            openid_configuration: None,
        }
    }

    /// The JSON Kafka sends as the error challenge, with its `", "` separators.
    pub fn json(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
        let mut j = format!("{{\"status\":{}", q(&self.status));
        if let Some(s) = &self.scope {
            j.push_str(&format!(", \"scope\":{}", q(s)));
        }
        if let Some(o) = &self.openid_configuration {
            j.push_str(&format!(", \"openid-configuration\":{}", q(o)));
        }
        j.push('}');
        j
    }
}

/// Validates bearer tokens for the server. Implementations must not block: a validator that
/// needs fresh keys says so (see [`JwksValidator::refresh_due`]) and the host fetches them.
pub trait TokenValidator: Send + Sync {
    /// Validates `token` at `now_ms`.
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection>;

    /// A number that changes whenever earlier verdicts may no longer hold (new keys, new
    /// configuration). Caches drop verdicts of other generations.
    fn generation(&self) -> u64 {
        0
    }
}

impl<F> TokenValidator for F
where
    F: Fn(&str, i64) -> std::result::Result<ValidatedToken, TokenRejection> + Send + Sync,
{
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        self(token, now_ms)
    }
}

/// The server's JSON error challenge, as the client reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerErrorChallenge {
    /// `status`.
    pub status: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
    /// `openid-configuration`.
    pub openid_configuration: Option<String>,
}

impl ServerErrorChallenge {
    pub(crate) fn parse(bytes: &[u8]) -> Option<Self> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let o = v.as_object()?;
        let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_string);
        Some(ServerErrorChallenge {
            status: s("status"),
            scope: s("scope"),
            openid_configuration: s("openid-configuration"),
        })
    }
}

/// An OAUTHBEARER client message with the token replaced by `<redacted>`; server messages
/// (empty, or the JSON error) hold no secret.
pub(crate) fn redact(message: &[u8]) -> String {
    let text = crate::mech::printable(message);
    match (text.find("auth="), text.starts_with("n,")) {
        (Some(i), true) => {
            let end = text[i..].find("\\x01").map(|e| i + e).unwrap_or(text.len());
            let scheme_end = text[i..end].find(' ').map(|s| i + s + 1).unwrap_or(end);
            format!("{}<redacted>{}", &text[..scheme_end], &text[end..])
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_response_matches_kafka_bytes() {
        let ext = SaslExtensions::from_pairs([
            ("logicalCluster", "lkc-123"),
            ("identityPoolId", "pool-1"),
        ])
        .unwrap();
        let m = InitialResponse::format(
            None,
            "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.",
            &SaslExtensions::new(),
        );
        assert_eq!(
            m,
            b"n,,\x01auth=Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.\x01\x01"
        );
        let m = InitialResponse::format(Some("a,b"), "tok", &ext);
        assert_eq!(m, b"n,a=a=2Cb,\x01auth=Bearer tok\x01identityPoolId=pool-1\x01logicalCluster=lkc-123\x01\x01");
        let p = InitialResponse::parse(&m).unwrap();
        assert_eq!(p.authzid.as_deref(), Some("a,b"));
        assert_eq!(p.token, "tok");
        assert_eq!(&p.extensions, ext.map());
    }

    #[test]
    fn extension_rules() {
        let mut e = SaslExtensions::new();
        assert!(e.insert("auth", "x").is_err());
        assert!(e.insert("a1", "x").is_err());
        assert!(e.insert("", "x").is_err());
        assert!(e.insert("ok", "").is_err());
        assert!(e.insert("ok", "\x01").is_err());
        assert!(e.insert("ok", "a b\t\r\n~").is_ok());
    }

    #[test]
    fn rejection_json_has_kafka_separators() {
        let mut r = TokenRejection::invalid_token(ErrorCode::InsufficientScope, "x");
        assert_eq!(r.json(), r#"{"status":"invalid_token"}"#);
        r.status = "insufficient_scope".into();
        r.scope = Some("[LOGIN_TO_KAFKA]".into());
        assert_eq!(
            r.json(),
            r#"{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA]"}"#
        );
        r.openid_configuration = Some("https://idp/.well-known/openid-configuration".into());
        assert_eq!(
            r.json(),
            r#"{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA]", "openid-configuration":"https://idp/.well-known/openid-configuration"}"#
        );
    }

    #[test]
    fn redaction_hides_the_token() {
        let m = InitialResponse::format(
            None,
            "secret.token.x",
            &SaslExtensions::from_pairs([("ext", "v")]).unwrap(),
        );
        let r = redact(&m);
        assert!(!r.contains("secret"), "{r}");
        assert!(
            r.contains("auth=Bearer <redacted>") && r.contains("ext=v"),
            "{r}"
        );
    }
}
