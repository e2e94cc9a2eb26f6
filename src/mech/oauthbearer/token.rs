//! The bearer token a client presents, the SASL extensions it sends with it, and where a
//! client gets them when an exchange starts.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{Error, ErrorCode, Result};
use crate::secret::Secret;

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

/// Whether every byte of `s` passes `ok`, tested in blocks of 64 without a branch per byte,
/// so that the compiler turns the test into vector compares: a token is hundreds of bytes
/// long and is checked at every (re-)authentication.
fn all_bytes(s: &[u8], ok: impl Fn(u8) -> bool) -> bool {
    s.chunks(64)
        .all(|block| block.iter().fold(true, |all, &b| all & ok(b)))
}

/// `b` within `lo..=hi`, as one compare.
fn within(b: u8, lo: u8, hi: u8) -> bool {
    b.wrapping_sub(lo) <= hi - lo
}

/// RFC 6750 `b64token`: `[-._~+/A-Za-z0-9]+` then optional `=` padding.
pub(crate) fn is_b64token(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && all_bytes(body.as_bytes(), |b| {
            within(b, b'a', b'z')
                | within(b, b'A', b'Z')
                | within(b, b'0', b'9')
                | (b == b'-')
                | (b == b'.')
                | (b == b'_')
                | (b == b'~')
                | (b == b'+')
                | (b == b'/')
        })
}

/// Whether `name` is a valid SASL extension name for OAUTHBEARER: ASCII letters, not `auth`.
pub fn is_valid_extension_name(name: &str) -> bool {
    !name.is_empty() && name != "auth" && name.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Whether `value` is a valid SASL extension value: one or more of VCHAR, SP, HTAB, CR, LF.
pub fn is_valid_extension_value(value: &str) -> bool {
    !value.is_empty()
        && all_bytes(value.as_bytes(), |b| {
            within(b, 0x21, 0x7e) | (b == b' ') | (b == b'\t') | (b == b'\r') | (b == b'\n')
        })
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
                format!(
                    "Extension name {} is invalid",
                    crate::error::quote(name.as_bytes())
                ),
            ));
        }
        if !is_valid_extension_value(value) {
            return Err(Error::new(
                ErrorCode::InvalidExtension,
                format!(
                    "Extension value for extension {} is invalid",
                    crate::error::quote(name.as_bytes())
                ),
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

/// Where an OAUTHBEARER client gets its token and extensions when an exchange starts: the
/// newest valid ones a [`Refresher`](crate::refresh::Refresher) holds, or a fixed pair.
pub trait TokenSource: Send + Sync {
    /// The token and extensions to present at `now_ms`; an error (for example
    /// `NO_VALID_CREDENTIAL`) fails the exchange before anything is sent.
    fn token(&self, now_ms: i64) -> Result<(OAuthBearerToken, SaslExtensions)>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character below 0x80 and a few beyond, at positions on both sides of the
    /// 64-byte blocks, against the grammar written out byte by byte.
    #[test]
    fn byte_classes_match_their_grammar_at_every_position() {
        let b64 = |c: char| c.is_ascii_alphanumeric() || "-._~+/".contains(c);
        let value = |c: char| ('\x21'..='\x7e').contains(&c) || " \t\r\n".contains(c);
        let chars = (0u8..0x80)
            .map(char::from)
            .chain(['é', '\u{80}', '€', '😀']);
        for c in chars {
            for at in [0, 1, 62, 63, 64, 65, 127, 128, 200] {
                let mut s: String = "a".repeat(201);
                s.replace_range(at..at + 1, &c.to_string());
                // A trailing '=' is padding, not part of the body.
                let padding = c == '=' && s[at + c.len_utf8()..].bytes().all(|b| b == b'=');
                assert_eq!(is_b64token(&s), b64(c) || padding, "{c:?} at {at}");
                assert_eq!(is_valid_extension_value(&s), value(c), "{c:?} at {at}");
            }
        }
        assert!(!is_b64token("") && !is_b64token("==") && !is_valid_extension_value(""));
        assert!(is_b64token("abc==") && !is_b64token("a=bc"));
    }
}
