//! The GSSAPI client: RFC 4752 over a [`GssInitiator`], as the JDK's `GssKrb5Client` used by
//! Kafka's Java client behaves.
//!
//! 1. `start` creates a fresh context for `service@host` and sends its first token (the
//!    Kerberos AP-REQ).
//! 2. While the context is not established, each challenge goes to `gss_init_sec_context`;
//!    once it is, a last empty token is answered with an empty message (RFC 4752 §3.1).
//! 3. The wrapped security-layer offer is answered with the wrapped choice "no security
//!    layer" followed by the authorization id (the client's own principal by default, which
//!    is what Kafka's client sends).

use std::sync::Arc;

use super::context::{GssInitiator, GssInitiatorFactory};
use super::layer;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{ClientMechanism, ClientStep};
use crate::names::GSSAPI;

/// How many challenges a client answers before it gives up on a server that never finishes
/// (a Kerberos exchange needs at most three).
const MAX_CHALLENGES: usize = 8;

/// What a GSSAPI client needs besides its credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GssapiClientConfig {
    /// `sasl.kerberos.service.name`: the broker's service (the `kafka` of
    /// `kafka/broker1.example.com@EXAMPLE.COM`). Kafka has no default and neither does ksasl.
    pub service_name: String,
    /// The broker's host name as the service principal spells it.
    pub host: String,
    /// The SASL authorization id to send; `None` sends the client's own principal, as Kafka's
    /// client does.
    pub authorization_id: Option<String>,
}

impl GssapiClientConfig {
    /// A configuration for `service_name@host`; both must be non-empty and without `@` or `/`.
    pub fn new(service_name: &str, host: &str) -> Result<Self> {
        check_part("service name", service_name)?;
        check_part("host", host)?;
        Ok(GssapiClientConfig {
            service_name: service_name.to_string(),
            host: host.to_string(),
            authorization_id: None,
        })
    }
}

fn check_part(what: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        let text = if what == "service name" {
            "No serviceName defined in either JAAS or Kafka config (sasl.kerberos.service.name)"
                .to_string()
        } else {
            format!("the GSSAPI {what} is empty")
        };
        return Err(Error::new(ErrorCode::InvalidConfig, text));
    }
    if value.contains(['@', '/']) || value.chars().any(char::is_control) {
        return Err(Error::new(
            ErrorCode::InvalidConfig,
            format!("the GSSAPI {what} must not contain '@', '/' or control characters"),
        ));
    }
    Ok(())
}

enum State {
    Fresh,
    Establishing(Box<dyn GssInitiator>),
    /// Established; waiting for the server's security-layer offer.
    Negotiating(Box<dyn GssInitiator>),
    Done,
}

/// A GSSAPI client exchange.
pub struct GssapiClient {
    config: Arc<GssapiClientConfig>,
    factory: Arc<dyn GssInitiatorFactory>,
    state: State,
    challenges: usize,
}

impl GssapiClient {
    /// A client that makes its context with `factory` when it starts.
    pub fn new(config: Arc<GssapiClientConfig>, factory: Arc<dyn GssInitiatorFactory>) -> Self {
        GssapiClient {
            config,
            factory,
            state: State::Fresh,
            challenges: 0,
        }
    }

    fn negotiate(
        &mut self,
        mut ctx: Box<dyn GssInitiator>,
        challenge: &[u8],
    ) -> Result<ClientStep> {
        if challenge.is_empty() {
            // A server that sends its last context token's acknowledgement as an empty
            // challenge gets an empty answer (the JDK client does the same).
            self.state = State::Negotiating(ctx);
            return Ok(ClientStep::Send(Vec::new()));
        }
        let offer = ctx.unwrap(challenge)?;
        layer::read_server_offer(&offer)?;
        let authzid = match &self.config.authorization_id {
            Some(a) => a.clone(),
            None => ctx.principal()?,
        };
        let answer = ctx.wrap(&layer::client_choice(&authzid))?;
        self.state = State::Done;
        Ok(ClientStep::Done(Some(answer)))
    }
}

impl ClientMechanism for GssapiClient {
    fn name(&self) -> &str {
        GSSAPI
    }

    fn start(&mut self, _now_ms: i64) -> Result<ClientStep> {
        if !matches!(self.state, State::Fresh) {
            return Err(Error::new(
                ErrorCode::WrongState,
                "the GSSAPI client has already started",
            ));
        }
        let mut ctx = self
            .factory
            .new_context(&self.config.service_name, &self.config.host)?;
        let token = ctx.init(None)?;
        self.state = if ctx.is_established() {
            State::Negotiating(ctx)
        } else {
            State::Establishing(ctx)
        };
        Ok(ClientStep::Send(token))
    }

    fn step(&mut self, challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        self.challenges += 1;
        if self.challenges > MAX_CHALLENGES {
            return Err(Error::new(
                ErrorCode::MalformedMessage,
                format!("the GSSAPI server sent more than {MAX_CHALLENGES} challenges"),
            ));
        }
        match std::mem::replace(&mut self.state, State::Done) {
            State::Establishing(mut ctx) => {
                let token = ctx.init(Some(challenge))?;
                if ctx.is_established() {
                    self.state = State::Negotiating(ctx);
                } else {
                    self.state = State::Establishing(ctx);
                }
                // An empty token after the context completes is sent as an empty message.
                Ok(ClientStep::Send(token))
            }
            State::Negotiating(ctx) => self.negotiate(ctx, challenge),
            State::Fresh | State::Done => Err(Error::new(
                ErrorCode::WrongState,
                "the GSSAPI client is not waiting for a challenge",
            )),
        }
    }
}
