//! The OAUTHBEARER messages: the client's initial response and the server's JSON error
//! challenge, and their redacted renderings for logs.

use std::collections::BTreeMap;

use super::token::{is_b64token, is_valid_extension_value, SaslExtensions};
use crate::error::{Error, ErrorCode, Result};

/// The byte that separates key/value pairs, and the client's acknowledgement of an error.
pub const CONTROL_A: u8 = 0x01;

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
            m.extend_from_slice(crate::mech::scram::messages::escape_username(a).as_bytes());
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
        let authzid = Self::authzid(authz)?;
        let mut pairs = Self::key_values(rest)?;
        let auth = pairs.remove("auth").ok_or_else(|| {
            Error::malformed("Invalid OAUTHBEARER client first message: 'auth' not specified")
        })?;
        let token = Self::bearer_token(&auth)?;
        Ok(InitialResponse {
            authzid,
            token,
            extensions: pairs,
        })
    }

    /// The gs2 header's authorization id: empty for none, else `a=` and an escaped name.
    fn authzid(field: &str) -> Result<Option<String>> {
        if field.is_empty() {
            return Ok(None);
        }
        let name = field.strip_prefix("a=").ok_or_else(invalid_first)?;
        let ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| (0x01..=0x7f).contains(&b) && b != b',');
        let name = if ok {
            crate::mech::scram::messages::unescape_username(name)
        } else {
            None
        };
        Ok(Some(name.ok_or_else(|| {
            Error::new(ErrorCode::InvalidUsername, "invalid authorization id")
        })?))
    }

    /// The `key=value` pairs of `\x01 (key=value \x01)* \x01`, each key and value checked.
    fn key_values(rest: &str) -> Result<BTreeMap<String, String>> {
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
        Ok(pairs)
    }

    /// The token of an `auth` value: a well-formed scheme that must be Bearer, then a b64token.
    fn bearer_token(auth: &str) -> Result<String> {
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
        Ok(token.to_string())
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
    let text = crate::mech::mechanism::printable(message);
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
    use crate::error::ErrorCode;
    use crate::mech::oauthbearer::token::SaslExtensions;
    use crate::mech::oauthbearer::validator::TokenRejection;

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
