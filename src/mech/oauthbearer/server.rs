//! The OAUTHBEARER server.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::message::{InitialResponse, CONTROL_A};
use super::validator::{TokenRejection, TokenValidator, ValidatedToken};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{Authenticated, MechServerStep, ServerMechanism};
use crate::names::OAUTHBEARER;

/// Decides which SASL extensions a server accepts (KIP-342). Kafka's built-in validators
/// accept every extension; this is the hook for deployments that check them.
pub trait ExtensionValidator: Send + Sync {
    /// Returns the extensions to keep, or the invalid ones with a reason each.
    fn validate(
        &self,
        token: &ValidatedToken,
        extensions: &BTreeMap<String, String>,
    ) -> std::result::Result<BTreeMap<String, String>, Vec<(String, String)>>;
}

enum State {
    Initial,
    ErrorSent(Box<TokenRejection>),
    Done,
}

/// The server side of OAUTHBEARER.
pub struct OAuthBearerServer {
    validator: Arc<dyn TokenValidator>,
    extension_validator: Option<Arc<dyn ExtensionValidator>>,
    state: State,
}

impl OAuthBearerServer {
    /// A server validating tokens with `validator` and keeping every extension.
    pub fn new(validator: Arc<dyn TokenValidator>) -> Self {
        OAuthBearerServer {
            validator,
            extension_validator: None,
            state: State::Initial,
        }
    }

    /// Adds an extension validator.
    pub fn with_extension_validator(mut self, v: Arc<dyn ExtensionValidator>) -> Self {
        self.extension_validator = Some(v);
        self
    }

    fn first(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        let first = InitialResponse::parse(response)?;
        let token = match self.validator.validate(&first.token, now_ms) {
            Ok(t) => t,
            Err(rejection) => {
                let json = rejection.json().into_bytes();
                self.state = State::ErrorSent(Box::new(rejection));
                return Ok(MechServerStep::Challenge(json));
            }
        };
        if let Some(a) = &first.authzid {
            if a != &token.principal {
                return Err(Error::disclosed(
                    ErrorCode::AuthzidMismatch,
                    format!(
                        "Authentication failed: Client requested an authorization id ({a}) that is different from the token's principal name ({})",
                        token.principal
                    ),
                ));
            }
        }
        let extensions = match &self.extension_validator {
            None => first.extensions,
            Some(v) => {
                match v.validate(&token, &first.extensions) {
                    Ok(kept) => kept,
                    Err(invalid) => {
                        let list = invalid
                            .iter()
                            .map(|(k, r)| format!("{}: {r}", crate::error::quote(k.as_bytes())))
                            .collect::<Vec<_>>()
                            .join("; ");
                        return Err(Error::disclosed(
                        ErrorCode::InvalidExtensions,
                        format!("Authentication failed: {} extensions are invalid! They are: {list}", invalid.len()),
                    ));
                    }
                }
            }
        };
        let mut who = Authenticated::new(token.principal);
        who.credential_expiry_ms = Some(token.expiry_ms);
        who.extensions = extensions;
        self.state = State::Done;
        Ok(MechServerStep::Done(Some(Vec::new()), who))
    }
}

impl ServerMechanism for OAuthBearerServer {
    fn name(&self) -> &str {
        OAUTHBEARER
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Initial => self.first(response, now_ms),
            State::ErrorSent(rejection) => {
                if response != [CONTROL_A] {
                    return Err(Error::malformed(
                        "expected the client's %x01 acknowledgement of the error",
                    ));
                }
                let json = rejection.json();
                let e = Error::new(
                    rejection.code,
                    format!("OAUTHBEARER token rejected: {}", rejection.reason),
                )
                .with_client_text(json)
                .with_detail("status", rejection.status);
                let e = match rejection.scope {
                    Some(s) => e.with_detail("scope", s),
                    None => e,
                };
                Err(match rejection.openid_configuration {
                    Some(o) => e.with_detail("openid-configuration", o),
                    None => e,
                })
            }
            State::Done => Err(Error::new(
                ErrorCode::WrongState,
                "OAUTHBEARER server stepped out of order",
            )),
        }
    }
}
