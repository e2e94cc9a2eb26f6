//! Reading a token endpoint's answer: the token (RFC 6749 §5.1), the error (§5.2), and the
//! checks Kafka's client makes on the token it got (`ClientJwtValidator`: no signature check,
//! but `exp`, the subject and the scope must make sense).

use serde_json::{Map, Value};

use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::oauthbearer::OAuthBearerToken;
use crate::secret::Secret;

/// HTTP statuses Kafka does not retry (`HttpJwtRetriever`): a client error the provider will
/// repeat. Everything else that is not a success (5xx, 429, ...) is retried.
const UNRETRYABLE: &[u16] = &[
    400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 501, 505,
];

/// Whether a failed request with this status is worth retrying.
pub fn is_retryable_status(status: u16) -> bool {
    !UNRETRYABLE.contains(&status)
}

/// An OAuth error answer (RFC 6749 §5.2), as far as the provider gave one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderError {
    /// The HTTP status.
    pub status: u16,
    /// `error` (or Okta's `errorCode`).
    pub error: Option<String>,
    /// `error_description` (or Okta's `errorSummary`).
    pub description: Option<String>,
}

impl ProviderError {
    fn from_body(status: u16, body: &[u8]) -> Self {
        let doc: Option<Map<String, Value>> = serde_json::from_slice(body).ok();
        let field = |names: &[&str]| {
            let d = doc.as_ref()?;
            names.iter().find_map(|n| d.get(*n)?.as_str()).map(|s| {
                // Short and printable: the provider is a peer.
                quote(s.trim().as_bytes())
            })
        };
        ProviderError {
            status,
            error: field(&["error", "errorCode"]),
            description: field(&["error_description", "errorSummary"]),
        }
    }

    /// `HTTP 401: invalid_client (Invalid client or Invalid client credentials)`.
    pub fn summary(&self) -> String {
        let mut s = format!("HTTP {}", self.status);
        if let Some(e) = &self.error {
            s.push_str(": ");
            s.push_str(e);
        }
        if let Some(d) = &self.description {
            s.push_str(&format!(" ({d})"));
        }
        s
    }

    /// The error for a host: `OIDC_REQUEST_REFUSED` when retrying will not help,
    /// `OIDC_PROVIDER_UNAVAILABLE` otherwise. Both carry `status`, `error` and
    /// `error_description` as details.
    pub fn into_error(self) -> Error {
        let code = if is_retryable_status(self.status) {
            ErrorCode::OidcProviderUnavailable
        } else {
            ErrorCode::OidcRequestRefused
        };
        let mut e = Error::new(
            code,
            format!("the token endpoint refused the request: {}", self.summary()),
        )
        .with_detail("status", self.status.to_string());
        if let Some(v) = self.error {
            e = e.with_detail("error", v);
        }
        if let Some(v) = self.description {
            e = e.with_detail("error_description", v);
        }
        e
    }
}

fn bad(why: impl Into<String>) -> Error {
    Error::new(ErrorCode::OidcBadResponse, why.into())
}

/// The token in a token endpoint's answer: on 200 or 201, the trimmed `access_token` (or,
/// as Kafka 4.4 falls back, `id_token`) of the JSON body. Any other status is the provider's
/// error ([`ProviderError::into_error`]).
pub fn parse_token_response(status: u16, body: &[u8]) -> Result<Secret> {
    if status != 200 && status != 201 {
        return Err(ProviderError::from_body(status, body).into_error());
    }
    let doc: Value = serde_json::from_slice(body).map_err(|_| {
        bad(format!(
            "the token endpoint's answer (HTTP {status}) is not JSON: \"{}\"",
            quote(body)
        ))
    })?;
    for name in ["access_token", "id_token"] {
        if let Some(t) = doc.get(name).and_then(Value::as_str) {
            let t = t.trim();
            if !t.is_empty() {
                return Ok(Secret::from(t));
            }
        }
    }
    Err(bad(
        "the token endpoint's answer has no non-empty access_token (or id_token)",
    ))
}

/// Kafka's client-side reading of a token it got (`ClientJwtValidator`): three non-empty
/// parts; from the payload, `exp` (required, at least 0, whole seconds), the subject claim
/// (required, not blank), `iat` (optional, at least 0) and the scope (a string or a list of
/// distinct, non-blank strings). The signature is not checked: the broker does that.
pub fn client_token(
    token: &str,
    subject_claim: &str,
    scope_claim: &str,
) -> Result<OAuthBearerToken> {
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad(
            "the token is not a signed JWT (three non-empty parts separated by '.')",
        ));
    }
    let claims = crate::mech::oauthbearer::jwt_payload(parts[1])
        .ok_or_else(|| bad("the token's payload is not a base64 JSON object"))?;
    let seconds = |name: &str| -> Result<Option<i64>> {
        match claims.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x >= 0.0 && x.is_finite() => Ok(Some(x as i64)),
                _ => Err(bad(format!(
                    "the token's '{name}' claim is not a number of seconds at least 0"
                ))),
            },
        }
    };
    let exp = seconds("exp")?.ok_or_else(|| bad("the token has no 'exp' claim"))?;
    let iat = seconds("iat")?;
    let principal = match claims.get(subject_claim) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            return Err(bad(format!(
                "the token has no '{}' claim (the subject claim, sasl.oauthbearer.sub.claim.name)",
                quote(subject_claim.as_bytes())
            )))
        }
    };
    let scope = scope_claim_values(&claims, scope_claim)?;
    let mut t = OAuthBearerToken::new(token, &principal, exp.saturating_mul(1000))
        .map_err(|_| bad("the token has characters a bearer token cannot have"))?
        .with_scope(scope);
    if let Some(i) = iat {
        t = t.with_start_ms(i.saturating_mul(1000));
    }
    Ok(t)
}

fn scope_claim_values(claims: &Map<String, Value>, name: &str) -> Result<Vec<String>> {
    let items: Vec<&Value> = match claims.get(name) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        // As in Kafka, a string is one item (not split at spaces).
        Some(v @ Value::String(_)) => vec![v],
        Some(Value::Array(a)) => a.iter().collect(),
        Some(_) => {
            return Err(bad(format!(
                "the token's '{name}' claim is not a string or a list"
            )))
        }
    };
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for v in items {
        let s = v.as_str().map(str::trim).unwrap_or("");
        if s.is_empty() || out.iter().any(|o| o == s) {
            return Err(bad(format!(
                "the token's '{name}' claim has a blank or repeated item"
            )));
        }
        out.push(s.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn jwt(payload: &str) -> String {
        let b = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.c2ln", b(r#"{"alg":"RS256"}"#), b(payload))
    }

    #[test]
    fn access_token_then_id_token() {
        let t = parse_token_response(200, br#"{"access_token":" abc ","expires_in":300}"#).unwrap();
        assert_eq!(t.expose(), b"abc");
        let t = parse_token_response(201, br#"{"access_token":"","id_token":"idt"}"#).unwrap();
        assert_eq!(t.expose(), b"idt");
        let e = parse_token_response(200, br#"{"token_type":"Bearer"}"#).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OidcBadResponse);
        let e = parse_token_response(200, b"<html>hello</html>").unwrap_err();
        assert!(e.message().contains("<html>hello"), "{}", e.message());
    }

    #[test]
    fn provider_errors_carry_the_description_and_say_whether_to_retry() {
        let body = br#"{"error":"invalid_client","error_description":"Invalid client or Invalid client credentials"}"#;
        let e = parse_token_response(401, body).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OidcRequestRefused);
        assert_eq!(
            e.detail("error_description"),
            Some("Invalid client or Invalid client credentials")
        );
        assert_eq!(
            e.message(),
            "the token endpoint refused the request: HTTP 401: invalid_client (Invalid client or Invalid client credentials)"
        );
        let e = parse_token_response(503, b"busy").unwrap_err();
        assert_eq!(e.code(), ErrorCode::OidcProviderUnavailable);
        assert_eq!(
            e.message(),
            "the token endpoint refused the request: HTTP 503"
        );
        let long = format!(
            r#"{{"error":"x","error_description":"{}"}}"#,
            "d".repeat(5000)
        );
        let e = parse_token_response(400, long.as_bytes()).unwrap_err();
        assert!(e.message().len() < 300, "{}", e.message().len());
        assert!(!is_retryable_status(401) && is_retryable_status(429) && is_retryable_status(500));
    }

    #[test]
    fn client_side_checks_follow_kafka() {
        let t = client_token(
            &jwt(r#"{"sub":"svc","exp":1700000300.9,"iat":1700000000,"scope":" a b "}"#),
            "sub",
            "scope",
        )
        .unwrap();
        assert_eq!(t.principal(), "svc");
        assert_eq!(t.expiry_ms(), 1_700_000_300_000);
        assert_eq!(t.start_ms(), Some(1_700_000_000_000));
        assert_eq!(t.scope(), ["a b"]);
        let t = client_token(
            &jwt(r#"{"azp":"svc","exp":5,"scp":["x","y"]}"#),
            "azp",
            "scp",
        )
        .unwrap();
        assert_eq!(
            (t.principal(), t.scope()),
            ("svc", &["x".to_string(), "y".to_string()][..])
        );
        for (payload, what) in [
            (r#"{"sub":"svc"}"#, "'exp'"),
            (r#"{"sub":"svc","exp":-1}"#, "'exp'"),
            (r#"{"sub":" ","exp":5}"#, "'sub'"),
            (r#"{"sub":"s","exp":5,"iat":"x"}"#, "'iat'"),
            (r#"{"sub":"s","exp":5,"scope":["a","a"]}"#, "repeated"),
            (r#"{"sub":"s","exp":5,"scope":7}"#, "not a string"),
        ] {
            let e = client_token(&jwt(payload), "sub", "scope").unwrap_err();
            assert_eq!(e.code(), ErrorCode::OidcBadResponse);
            assert!(e.message().contains(what), "{payload}: {}", e.message());
        }
        assert!(client_token("a.b", "sub", "scope").is_err());
        assert!(client_token("a..c", "sub", "scope").is_err());
        assert!(client_token("a.!!!.c", "sub", "scope").is_err());
    }
}
