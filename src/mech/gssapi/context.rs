//! The boundary between the GSSAPI mechanism and a GSS-API implementation.
//!
//! Establishing a Kerberos security context talks to the KDC (to get a service ticket) and
//! reads keytabs and credential caches, so it cannot live in the sans-IO core. The mechanism
//! (RFC 4752's token loop and security-layer negotiation, Kafka's names and rules) is written
//! against these traits; `ksasl::io::gss` implements them over the system's MIT Kerberos
//! library, and a host may supply its own (a JDK `GSSContext`, a test double).

use crate::error::Result;

/// What both ends of an established context can do: protect the short RFC 4752 messages.
pub trait GssContext: Send {
    /// Whether the context is fully established.
    fn is_established(&self) -> bool;
    /// Protects `message` for integrity (no confidentiality: RFC 4752 wraps its
    /// security-layer messages with `conf_req_flag` false, as the JDK does).
    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>>;
    /// Checks and removes the protection of a token the peer wrapped.
    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>>;
}

/// The initiator (client) end of one security context.
pub trait GssInitiator: GssContext {
    /// One `gss_init_sec_context` call: `input` is `None` the first time, then the
    /// acceptor's token. Returns the token to send, empty when there is none.
    fn init(&mut self, input: Option<&[u8]>) -> Result<Vec<u8>>;
    /// The initiator's own principal (`alice@EXAMPLE.COM`), which Kafka's client sends as the
    /// SASL authorization id.
    fn principal(&self) -> Result<String>;
}

/// The acceptor (server) end of one security context.
pub trait GssAcceptor: GssContext {
    /// One `gss_accept_sec_context` call with the initiator's token. Returns the token to
    /// send back, empty when there is none.
    fn accept(&mut self, input: &[u8]) -> Result<Vec<u8>>;
    /// The authenticated initiator's principal (`alice@EXAMPLE.COM`), once established.
    fn peer_principal(&self) -> Result<String>;
    /// The principal the initiator's ticket was for (`kafka/broker1.example.com@EXAMPLE.COM`),
    /// once established.
    fn target_principal(&self) -> Result<String>;
    /// When the initiator's service ticket ends, in ms since the epoch, if known. Called once,
    /// after the last message has been unwrapped: an implementation may consume the context
    /// to find out (MIT's lucid-context export does).
    fn ticket_end_ms(&mut self) -> Result<Option<i64>>;
}

/// Makes a fresh initiator context for each exchange (a re-authentication is a new
/// context, with whatever credential is current at that moment).
pub trait GssInitiatorFactory: Send + Sync {
    /// A new context for the host-based service `service@host` (`kafka@broker1`).
    fn new_context(&self, service: &str, host: &str) -> Result<Box<dyn GssInitiator>>;
}

/// Makes a fresh acceptor context for each exchange.
pub trait GssAcceptorFactory: Send + Sync {
    /// A new acceptor context.
    fn new_context(&self) -> Result<Box<dyn GssAcceptor>>;
}
