//! GSSAPI over the system's MIT Kerberos: credentials from keytabs and credential caches, and
//! the initiator and acceptor contexts the core's GSSAPI mechanism runs on.
//!
//! This is I/O (the library reads keytabs and caches and talks to the KDC), so it sits
//! outside the sans-IO core: the mechanism in `mech::gssapi` sees only its traits. The
//! library is loaded on first use (see [`sys`]); without it every call here fails with
//! `GSSAPI_UNAVAILABLE` and nothing else in ksasl changes.
//!
//! Login without `kinit`: [`Credential::login_keytab`] asks the GSS-API for a
//! ticket-granting ticket from a client keytab into a credential cache private to that
//! credential (MIT's `client_keytab` credential store), so no process is started and the
//! user's own cache is never touched. A new login gets a new ticket; the refresher decides
//! when (Kafka's `sasl.kerberos.ticket.renew.*` schedule).

pub mod login;
pub mod setup;
#[allow(missing_docs)]
mod sys;
pub mod system;

pub use login::{KerberosLogin, LoginSource};
pub use setup::{finish_listener, register_client, register_server, GssapiServerSettings};
pub use sys::{available, default_realm, renew_cache, LIBRARY_NAMES};
pub use system::{Acceptor, AcceptorFactory, Credential, Initiator, InitiatorFactory};
