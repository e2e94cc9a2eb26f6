//! Credentials: what a server checks against, and what a client proves with.
//!
//! Server side: a [`ServerCredential`] (a password or a stored SCRAM credential, with an
//! optional expiry and, for delegation tokens, an owner) is found through a
//! [`CredentialLookup`]. The lookup may answer at once (callback form) or say
//! [`Lookup::Later`], in which case the exchange stops with
//! [`ServerStep::NeedCredential`](crate::mech::ServerStep::NeedCredential) until the host
//! answers (pull form, for hosts that query a database asynchronously).
//!
//! Client side: a [`PasswordCredential`] holds a username and password for PLAIN and SCRAM
//! and caches the keys SCRAM derives from them, so re-authentication with an unchanged
//! password costs no PBKDF2.

pub mod mask;
pub mod password;
pub(crate) mod pbkdf2;
pub mod request;
pub mod scram;
pub mod scram_admin;
pub mod store;

pub use mask::UnknownUserMask;
pub use password::{PasswordCredential, PasswordSource};
pub use request::{
    AskHost, CredentialAnswer, CredentialAnswerKind, CredentialLookup, CredentialRequest,
    CredentialSecret, HostLookup, Lookup, ServerCredential,
};
pub use store::CredentialStore;
