//! # ksasl
//!
//! Sans-IO SASL authentication for Apache Kafka clients, brokers and proxies: PLAIN,
//! SCRAM-SHA-256/512 and OAUTHBEARER client and server authenticators that are byte- and
//! behaviour-compatible with Apache Kafka.
//!
//! The core never reads the clock, sleeps, performs I/O or starts threads: the host passes
//! bytes and the current time (`now_ms`, milliseconds since the Unix epoch) in and gets bytes
//! and verdicts out.
//!
//! ```
//! use std::sync::Arc;
//! use ksasl::{MechanismRegistry, CredentialStore, OsRandom, PasswordCredential, ClientStep, ServerStep};
//!
//! // Server: a store with one user, and every built-in password mechanism.
//! let store = Arc::new(CredentialStore::new());
//! store.add_user("alice", "alice-secret", 4096, &OsRandom).unwrap();
//! let servers = MechanismRegistry::password_servers(Some(store));
//!
//! // Client: the same password, for every built-in password mechanism.
//! let clients = MechanismRegistry::password_clients(Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap()));
//!
//! let now = 1_700_000_000_000;
//! let mut client = clients.client("SCRAM-SHA-256").unwrap();
//! let mut server = servers.server("SCRAM-SHA-256").unwrap();
//! let mut to_server = match client.start(now).unwrap() { ClientStep::Send(m) => m, _ => unreachable!() };
//! loop {
//!     match server.step(&to_server, now).unwrap() {
//!         ServerStep::Challenge(c) => match client.step(&c, now).unwrap() {
//!             ClientStep::Send(m) => to_server = m,
//!             ClientStep::Done(_) | ClientStep::Pending(_) => unreachable!(),
//!         },
//!         ServerStep::Done { message, outcome } => {
//!             assert!(matches!(client.step(&message.unwrap(), now).unwrap(), ClientStep::Done(None)));
//!             assert_eq!(outcome.principal.to_string(), "User:alice");
//!             break;
//!         }
//!         ServerStep::NeedCredential(_) => unreachable!("the store answers at once"),
//!         ServerStep::Pending(_) => unreachable!("built-in mechanisms answer at once"),
//!     }
//! }
//! ```

// Unsafe code is allowed only in the C ABI (`ffi`), the system GSS-API calls (`io`), and
// one call into the SHA-NI PBKDF2 loop after a CPU feature check (`credential::pbkdf2`).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod aws;
pub mod background;
pub mod config;
pub mod credential;
pub mod error;
#[cfg(feature = "capi")]
#[allow(unsafe_code)]
pub mod ffi;
#[allow(unsafe_code)]
pub mod io;
pub mod java_map;
pub mod kafka;
pub mod mech;
pub mod names;
pub mod oidc;
pub mod random;
pub mod refresh;
pub mod secret;
pub mod session;
mod sync;
pub mod token;
pub mod wire;

pub use credential::{
    CredentialAnswer, CredentialAnswerKind, CredentialLookup, CredentialRequest, CredentialSecret,
    CredentialStore, Lookup, PasswordCredential, ServerCredential,
};
pub use error::{Error, ErrorCode, ErrorKind, Result};
pub use mech::oauthbearer::{
    CachingValidator, ExtensionValidator, JwksValidator, JwtValidatorConfig, OAuthBearerClient,
    OAuthBearerServer, OAuthBearerToken, SaslExtensions, ServerErrorChallenge, TokenRejection,
    TokenValidator, UnsecuredTokenBuilder, UnsecuredValidator, UnsecuredValidatorConfig,
    ValidatedToken,
};
pub use mech::plain::{PlainClient, PlainServer};
pub use mech::scram::{
    ScramClient, ScramClientOptions, ScramCredential, ScramMechanism, ScramServer,
    ScramServerOptions,
};
pub use mech::{
    AuthOutcome, Authenticated, ClientExchange, ClientMechanism, ClientStep, ExchangeState,
    HostOutput, HostTask, HostWork, MechServerStep, MechanismRegistry, Principal, ServerExchange,
    ServerMechanism, ServerSession, ServerStep,
};
pub use random::{OsRandom, RandomSource, SharedRandom};
pub use secret::Secret;

/// The library version (from Cargo).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
