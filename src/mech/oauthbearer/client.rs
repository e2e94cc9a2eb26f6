//! The OAUTHBEARER client.

use super::{InitialResponse, OAuthBearerToken, SaslExtensions, ServerErrorChallenge, CONTROL_A};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::{server_rejection, ClientMechanism, ClientStep, OAUTHBEARER};

/// The client side of OAUTHBEARER: sends the token (and extensions), then either completes on
/// the server's empty challenge or acknowledges its JSON error with `\x01`.
#[derive(Debug)]
pub struct OAuthBearerClient {
    source: Source,
    token: OAuthBearerToken,
    extensions: SaslExtensions,
    authzid: Option<String>,
    server_error: Option<(Vec<u8>, Option<ServerErrorChallenge>)>,
}

#[derive(Debug)]
enum Source {
    Fixed,
    Refresher(std::sync::Arc<crate::refresh::Refresher>),
}

impl OAuthBearerClient {
    /// A client presenting `token` with `extensions` (Kafka's client sends no authzid).
    pub fn new(token: OAuthBearerToken, extensions: SaslExtensions) -> Self {
        OAuthBearerClient {
            source: Source::Fixed,
            token,
            extensions,
            authzid: None,
            server_error: None,
        }
    }

    /// A client presenting whatever token `refresher` holds when the exchange starts; it
    /// fails with `NO_VALID_CREDENTIAL` rather than present an expired token.
    pub fn from_refresher(refresher: std::sync::Arc<crate::refresh::Refresher>) -> Self {
        let placeholder = OAuthBearerToken::new("-", "", 0).expect("valid b64token");
        OAuthBearerClient {
            source: Source::Refresher(refresher),
            token: placeholder,
            extensions: SaslExtensions::new(),
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
        if let Source::Refresher(r) = &self.source {
            let (token, extensions, _) = r.current_token(now_ms)?;
            self.token = token;
            self.extensions = extensions;
        }
        Ok(ClientStep::Send(InitialResponse::format(
            self.authzid.as_deref(),
            self.token.value(),
            &self.extensions,
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
                    e = e.with_detail(k, v);
                }
            }
        }
        e
    }
}
