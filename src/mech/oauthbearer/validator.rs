//! What a token validator decides: the accepted token's facts, or a rejection with Kafka's
//! JSON error for the client; the validator trait, and a validator written by the host.

use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::sync::Padded;

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

    /// The rejection as an error for the host that asked a validator directly: its code and
    /// reason, with `status` (and `scope`, `openid-configuration` when set) as details.
    pub fn into_error(self) -> Error {
        let mut e = Error::new(self.code, self.reason).with_detail("status", self.status);
        if let Some(s) = self.scope {
            e = e.with_detail("scope", s);
        }
        if let Some(o) = self.openid_configuration {
            e = e.with_detail("openid-configuration", o);
        }
        e
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

/// A handle of a [`Striped`](crate::sync::Striped) set on a validator.
impl TokenValidator for Padded<Arc<dyn TokenValidator>> {
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        self.0.validate(token, now_ms)
    }

    fn generation(&self) -> u64 {
        self.0.generation()
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

impl ValidatedToken {
    /// The verdict of a validator written by the host, which gives the principal and the
    /// absolute expiry (ms since the epoch) of a token it accepts. An empty principal is a
    /// rejection: nobody can be authenticated as nobody.
    pub fn from_host(
        principal: &str,
        expiry_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        if principal.is_empty() {
            return Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                "the host's validator accepted the token for an empty principal",
            ));
        }
        Ok(ValidatedToken {
            principal: principal.to_string(),
            expiry_ms,
            start_ms: None,
            scope: vec![],
            valid_from_ms: None,
            valid_until_ms: expiry_ms,
        })
    }
}

/// A token validator written by the host: a function giving `Some((principal, expiry_ms))`
/// for a token it accepts and `None` for one it rejects. A failure of the host's code (an
/// exception) rejects the token with the failure's message, kept on the server side; the
/// client gets `{"status":"invalid_token"}` either way.
pub struct HostTokenValidator<F>(pub F);

impl<F> TokenValidator for HostTokenValidator<F>
where
    F: Fn(&str, i64) -> Result<Option<(String, i64)>> + Send + Sync,
{
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        match (self.0)(token, now_ms) {
            Ok(Some((principal, expiry_ms))) => ValidatedToken::from_host(&principal, expiry_ms),
            Ok(None) => Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                "rejected by the host's validator",
            )),
            Err(e) => Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                format!("the host's validator failed: {}", e.message()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_becomes_an_error_with_its_details() {
        let mut r = TokenRejection::invalid_token(ErrorCode::InsufficientScope, "needs write");
        r.status = "insufficient_scope".into();
        r.scope = Some("write".into());
        let e = r.into_error();
        assert_eq!(e.code(), ErrorCode::InsufficientScope);
        assert_eq!(e.message(), "needs write");
        assert_eq!(e.detail("status"), Some("insufficient_scope"));
        assert_eq!(e.detail("scope"), Some("write"));
        assert_eq!(e.detail("openid-configuration"), None);
    }
}
