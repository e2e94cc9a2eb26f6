//! The GSSAPI server: RFC 4752 over a [`GssAcceptor`], as the JDK's `GssKrb5Server` used by
//! Kafka's broker behaves, with Kafka's principal mapping and an optional cap of the session
//! at the service ticket's end.
//!
//! 1. Each client token goes to `gss_accept_sec_context`; a token it returns is sent as a
//!    challenge.
//! 2. When the context is established, the ticket must be for this server's service (the JDK
//!    checks the protocol part of the target name). If the last accept step produced no token
//!    the wrapped security-layer offer follows at once; otherwise the client's empty answer
//!    to that token comes first.
//! 3. The client's wrapped choice must be "no security layer". Kafka's broker authorizes any
//!    authorization id the client adds and keeps the authenticated Kerberos principal, so
//!    ksasl does the same: the principal is the initiator's Kerberos name, shortened by the
//!    principal-to-local rules, never the authorization id the client sent.

use std::sync::Arc;

use super::context::{GssAcceptor, GssAcceptorFactory};
use super::layer;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{quote, Authenticated, MechServerStep, ServerMechanism};
use crate::names::GSSAPI;

/// Maps an authenticated Kerberos principal (`alice@EXAMPLE.COM`) to the Kafka user name.
pub type PrincipalMapper = Arc<dyn Fn(&str) -> Result<String> + Send + Sync>;

/// What a GSSAPI server needs besides its keytab.
#[derive(Clone)]
pub struct GssapiServerConfig {
    /// The service tickets must be for (`kafka`, the first part of the broker's principal).
    pub service_name: String,
    /// Turns the client's Kerberos principal into the Kafka user name
    /// (`sasl.kerberos.principal.to.local.rules`).
    pub mapper: PrincipalMapper,
    /// Whether a session ends when the client's service ticket does (on by default; Kafka
    /// bounds a GSSAPI session only by `connections.max.reauth.ms`).
    pub cap_session_at_ticket: bool,
    /// The receive buffer announced in the security-layer offer (the JDK's 65,536).
    pub max_buffer: u32,
}

impl std::fmt::Debug for GssapiServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GssapiServerConfig")
            .field("service_name", &self.service_name)
            .field("cap_session_at_ticket", &self.cap_session_at_ticket)
            .field("max_buffer", &self.max_buffer)
            .finish_non_exhaustive()
    }
}

impl GssapiServerConfig {
    /// A configuration for `service_name` with `mapper`, the ticket cap on and the JDK's
    /// buffer size.
    pub fn new(service_name: &str, mapper: PrincipalMapper) -> Result<Self> {
        if service_name.is_empty() || service_name.contains(['@', '/']) {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "the GSSAPI service name must be non-empty, without '@' or '/'",
            ));
        }
        Ok(GssapiServerConfig {
            service_name: service_name.to_string(),
            mapper,
            cap_session_at_ticket: true,
            max_buffer: layer::JDK_MAX_BUFFER,
        })
    }
}

enum Stage {
    Accepting(Box<dyn GssAcceptor>),
    /// The context is established and its last token sent; the client answers it with an
    /// empty message.
    AwaitingEmpty(Box<dyn GssAcceptor>, Peer),
    /// The offer is sent; the client's choice comes next.
    AwaitingChoice(Box<dyn GssAcceptor>, Peer),
    Done,
}

struct Peer {
    principal: String,
}

/// A GSSAPI server exchange.
pub struct GssapiServer {
    config: Arc<GssapiServerConfig>,
    stage: Stage,
}

impl GssapiServer {
    /// A server exchange with a fresh acceptor context from `factory`.
    pub fn new(config: Arc<GssapiServerConfig>, factory: &dyn GssAcceptorFactory) -> Result<Self> {
        Ok(GssapiServer {
            stage: Stage::Accepting(factory.new_context()?),
            config,
        })
    }

    fn established(&self, ctx: &dyn GssAcceptor) -> Result<Peer> {
        let target = ctx.target_principal()?;
        let protocol = target.split(['/', '@']).next().unwrap_or("");
        if !protocol.eq_ignore_ascii_case(&self.config.service_name) {
            return Err(Error::new(
                ErrorCode::KerberosWrongService,
                format!(
                    "GSS context targ name protocol error: {} (this server is {})",
                    quote(target.as_bytes()),
                    self.config.service_name
                ),
            ));
        }
        Ok(Peer {
            principal: ctx.peer_principal()?,
        })
    }

    fn offer(&mut self, mut ctx: Box<dyn GssAcceptor>, peer: Peer) -> Result<MechServerStep> {
        let offer = ctx.wrap(&layer::server_offer(self.config.max_buffer))?;
        self.stage = Stage::AwaitingChoice(ctx, peer);
        Ok(MechServerStep::Challenge(offer))
    }
}

impl ServerMechanism for GssapiServer {
    fn name(&self) -> &str {
        GSSAPI
    }

    fn step(&mut self, response: &[u8], _now_ms: i64) -> Result<MechServerStep> {
        match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Accepting(mut ctx) => {
                let token = ctx.accept(response)?;
                if !ctx.is_established() {
                    self.stage = Stage::Accepting(ctx);
                    return Ok(MechServerStep::Challenge(token));
                }
                let peer = self.established(ctx.as_ref())?;
                if token.is_empty() {
                    self.offer(ctx, peer)
                } else {
                    self.stage = Stage::AwaitingEmpty(ctx, peer);
                    Ok(MechServerStep::Challenge(token))
                }
            }
            Stage::AwaitingEmpty(ctx, peer) => {
                if !response.is_empty() {
                    return Err(Error::new(
                        ErrorCode::MalformedMessage,
                        "the GSSAPI client answered the context's last token with data instead of an empty message",
                    ));
                }
                self.offer(ctx, peer)
            }
            Stage::AwaitingChoice(mut ctx, peer) => {
                let choice = ctx.unwrap(response)?;
                // The authorization id is read (and must be well formed) but, as in Kafka,
                // it does not change who authenticated.
                layer::read_client_choice(&choice)?;
                let name = (self.config.mapper)(&peer.principal)?;
                if name.is_empty() {
                    return Err(Error::new(
                        ErrorCode::InvalidCredentials,
                        "the principal-to-local rules mapped the Kerberos principal to an empty name",
                    ));
                }
                let mut who = Authenticated::new(name);
                if self.config.cap_session_at_ticket {
                    who.credential_expiry_ms = ctx.ticket_end_ms()?;
                }
                Ok(MechServerStep::Done(None, who))
            }
            Stage::Done => Err(Error::new(
                ErrorCode::WrongState,
                "the GSSAPI server exchange is complete",
            )),
        }
    }
}
