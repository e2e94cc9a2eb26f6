//! The authenticator model shared by every SASL mechanism, on both sides.
//!
//! A mechanism implements [`ClientMechanism`] or [`ServerMechanism`]: a pure step function
//! from the peer's bytes (and the current time, passed in) to what to do next. The library
//! wraps every mechanism, built-in or host-defined, in a [`ClientExchange`] or
//! [`ServerExchange`], which owns the state machine around it: the size limit on
//! incoming messages, "step after done" and "step after failure" errors, the pull form for
//! credentials, and the Kafka principal of a successful exchange. A mechanism therefore
//! cannot put the exchange into an undefined state, whatever it returns.
//!
//! Mechanisms are found by name in a [`MechanismRegistry`].

pub mod aws_msk_iam;
pub mod exchange;
pub mod gssapi;
pub mod host;
pub mod mechanism;
mod named;
pub mod oauthbearer;
pub mod plain;
pub mod redact;
pub mod registry;
pub mod scram;

pub use crate::credential::CredentialRequest;
pub use crate::names::{GSSAPI, OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512};
pub use exchange::{
    nothing_pending, nothing_requested, ClientExchange, ExchangeState, HostTask, ServerExchange,
    ServerSession, DEFAULT_MAX_RECEIVE_SIZE,
};
pub use host::{host_failure, HostClientCalls, HostOutput, HostServerCalls};
pub use mechanism::{
    server_rejection, AuthOutcome, Authenticated, ClientMechanism, ClientStep, HostWork,
    MechServerStep, Principal, ServerMechanism, ServerStep,
};
pub use redact::redact;
pub use registry::{validate_mechanism_name, MechanismRegistry, DEFAULT_VERDICT_CACHE};
