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
//! use ksasl::{MechanismRegistry, MemoryCredentialStore, OsRandom, PasswordCredential, ClientStep, ServerStep};
//!
//! // Server: a store with one user, and every built-in password mechanism.
//! let store = Arc::new(MemoryCredentialStore::new());
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

// Only the C ABI (`ffi`) uses unsafe code.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod background;
pub mod credential;
pub mod error;
#[allow(unsafe_code)]
pub mod ffi;
pub mod kafka;
pub mod mech;
pub mod random;
pub mod refresh;
pub mod secret;
pub mod session;
pub mod token;

use std::sync::Arc;

pub use credential::{
    CredentialAnswer, CredentialLookup, CredentialSecret, Lookup, MemoryCredentialStore,
    PasswordCredential, ServerCredential,
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
    AuthOutcome, Authenticated, ClientAuthenticator, ClientMechanism, ClientStep,
    CredentialRequest, ExchangeState, HostWork, MechServerStep, MechanismRegistry, Principal,
    ServerAuthenticator, ServerMechanism, ServerStep,
};
pub use random::{OsRandom, RandomSource, SharedRandom};
pub use secret::Secret;

/// The library version (from Cargo).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

impl MechanismRegistry {
    /// A server registry with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, consulting `lookup`
    /// for credentials (or, with `None`, always asking the host through the pull form).
    pub fn password_servers(lookup: Option<Arc<dyn CredentialLookup>>) -> Self {
        let mut r = MechanismRegistry::new();
        r.register_server(mech::PLAIN, || Ok(Box::new(PlainServer::new())))
            .expect("valid name");
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            r.register_server(m.name(), move || {
                Ok(Box::new(ScramServer::new(m, ScramServerOptions::default())))
            })
            .expect("valid name");
        }
        r.set_credential_lookup(lookup);
        r
    }

    /// Registers an OAUTHBEARER server validating tokens with `validator` (wrap it in a
    /// [`CachingValidator`] to keep verdicts across re-authentications).
    pub fn register_oauthbearer_server(&mut self, validator: Arc<dyn TokenValidator>) {
        self.register_server(mech::OAUTHBEARER, move || {
            Ok(Box::new(OAuthBearerServer::new(validator.clone())))
        })
        .expect("valid name");
    }

    /// Registers an OAUTHBEARER client that presents the refresher's current token at the
    /// start of every (re-)authentication.
    pub fn register_oauthbearer_client(&mut self, refresher: Arc<refresh::Refresher>) {
        self.register_client(mech::OAUTHBEARER, move || {
            Ok(Box::new(OAuthBearerClient::from_refresher(
                refresher.clone(),
            )))
        })
        .expect("valid name");
    }

    /// Registers PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients that use the refresher's
    /// newest password credential (a rotated password, or a renewed delegation token) at the
    /// start of every (re-)authentication.
    pub fn register_refreshing_password_clients(&mut self, refresher: Arc<refresh::Refresher>) {
        let r = refresher.clone();
        self.register_client(mech::PLAIN, move || {
            Ok(Box::new(PlainClient::new(r.current_password()?.0)))
        })
        .expect("valid name");
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            let r = refresher.clone();
            self.register_client(m.name(), move || {
                Ok(Box::new(ScramClient::new(
                    m,
                    r.current_password()?.0,
                    ScramClientOptions::default(),
                )?))
            })
            .expect("valid name");
        }
    }

    /// A client registry with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for one credential
    /// (for a delegation-token credential, only the SCRAM mechanisms).
    pub fn password_clients(credential: Arc<PasswordCredential>) -> Self {
        let mut r = MechanismRegistry::new();
        if !credential.is_token() {
            let c = credential.clone();
            r.register_client(mech::PLAIN, move || {
                Ok(Box::new(PlainClient::new(c.clone())))
            })
            .expect("valid name");
        }
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            let c = credential.clone();
            r.register_client(m.name(), move || {
                Ok(Box::new(ScramClient::new(
                    m,
                    c.clone(),
                    ScramClientOptions::default(),
                )?))
            })
            .expect("valid name");
        }
        r
    }
}
