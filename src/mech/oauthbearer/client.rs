//! The OAUTHBEARER client.

use std::sync::Arc;

use super::message::{InitialResponse, ServerErrorChallenge, CONTROL_A};
use super::token::{OAuthBearerToken, SaslExtensions, TokenSource};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{server_rejection, ClientMechanism, ClientStep};
use crate::names::OAUTHBEARER;

/// The client side of OAUTHBEARER: sends the token (and extensions), then either completes on
/// the server's empty challenge or acknowledges its JSON error with `\x01`.
pub struct OAuthBearerClient {
    source: Arc<dyn TokenSource>,
    authzid: Option<String>,
    server_error: Option<(Vec<u8>, Option<ServerErrorChallenge>)>,
}

impl std::fmt::Debug for OAuthBearerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthBearerClient")
            .field("authzid", &self.authzid)
            .field("server_error", &self.server_error())
            .finish()
    }
}

/// One token and its extensions, presented by every exchange.
struct FixedToken(OAuthBearerToken, SaslExtensions);

impl TokenSource for FixedToken {
    fn token(&self, _now_ms: i64) -> Result<(OAuthBearerToken, SaslExtensions)> {
        Ok((self.0.clone(), self.1.clone()))
    }
}

impl OAuthBearerClient {
    /// A client presenting `token` with `extensions` (Kafka's client sends no authzid).
    pub fn new(token: OAuthBearerToken, extensions: SaslExtensions) -> Self {
        Self::from_source(Arc::new(FixedToken(token, extensions)))
    }

    /// A client presenting whatever token `source` (a refresher) holds when the exchange
    /// starts; the exchange fails with the source's error (`NO_VALID_CREDENTIAL`) rather than
    /// present an expired token.
    pub fn from_source(source: Arc<dyn TokenSource>) -> Self {
        OAuthBearerClient {
            source,
            authzid: None,
            server_error: None,
        }
    }

    /// Sends an authorization id; Kafka's server accepts only the token's principal.
    pub fn with_authzid(mut self, authzid: &str) -> Result<Self> {
        if authzid.is_empty() || !authzid.is_ascii() || authzid.contains('\0') {
            return Err(Error::misuse(
                "the authorization id must be non-empty ASCII",
            ));
        }
        self.authzid = Some(authzid.to_string());
        Ok(self)
    }

    /// The server's JSON error challenge, once one arrived.
    pub fn server_error(&self) -> Option<&ServerErrorChallenge> {
        self.server_error.as_ref().and_then(|(_, e)| e.as_ref())
    }
}

impl ClientMechanism for OAuthBearerClient {
    fn name(&self) -> &str {
        OAUTHBEARER
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        let (token, extensions) = self.source.token(now_ms)?;
        Ok(ClientStep::Send(InitialResponse::format(
            self.authzid.as_deref(),
            token.value(),
            &extensions,
        )))
    }

    fn step(&mut self, challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        if self.server_error.is_some() {
            return Err(Error::new(
                ErrorCode::UnexpectedChallenge,
                "a challenge arrived after the server's error",
            ));
        }
        if challenge.is_empty() {
            return Ok(ClientStep::Done(None));
        }
        // RFC 7628 §3.2.3: answer any error challenge with a lone %x01; the server then
        // fails the exchange.
        self.server_error = Some((challenge.to_vec(), ServerErrorChallenge::parse(challenge)));
        Ok(ClientStep::Send(vec![CONTROL_A]))
    }

    fn server_failed(&mut self, server_message: Option<&str>) -> Error {
        let parsed = self
            .server_error()
            .cloned()
            .or_else(|| server_message.and_then(|m| ServerErrorChallenge::parse(m.as_bytes())));
        let message = server_message.map(str::to_string).or_else(|| {
            self.server_error
                .as_ref()
                .map(|(raw, _)| String::from_utf8_lossy(raw).into_owned())
        });
        let mut e = server_rejection(OAUTHBEARER, message.as_deref());
        if let Some(p) = parsed {
            for (k, v) in [
                ("status", p.status),
                ("scope", p.scope),
                ("openid-configuration", p.openid_configuration),
            ] {
                if let Some(v) = v {
                    e = e.with_detail(k, crate::error::quote(v.as_bytes()));
                }
            }
        }
        e
    }
}
