//! GSSAPI (Kerberos V5, RFC 4752) as Kafka uses it.
//!
//! The mechanism is written against the [`context`] traits, so the core stays sans-IO: the
//! Kerberos work itself (tickets, keytabs, the KDC) is done by a GSS-API implementation
//! behind them, normally the system's MIT Kerberos through `ksasl::io::gss`.

pub mod client;
pub mod context;
pub mod layer;
pub mod server;
pub mod short_namer;

pub use client::{GssapiClient, GssapiClientConfig};
pub use context::{GssAcceptor, GssAcceptorFactory, GssContext, GssInitiator, GssInitiatorFactory};
pub use server::{GssapiServer, GssapiServerConfig, PrincipalMapper};
pub use short_namer::{KerberosName, KerberosShortNamer};
