//! Configuration by the names users already have: Java `.properties` files, Kafka's
//! `sasl.jaas.config` strings, Kafka's client and broker property names and librdkafka's.
//!
//! - [`Properties`]: `.properties` text as Java reads it.
//! - [`jaas`]: Kafka's JAAS grammar and error texts.
//! - [`ClientSettings`]: a client's mechanism, credential, extensions and refresh schedule
//!   from Kafka's or librdkafka's names.
//! - [`ServerSettings`]: one broker listener's mechanisms, JAAS entries, session lifetimes
//!   and limits from `server.properties`, with Kafka's listener and mechanism prefixes.
//!
//! Everything here is pure: no file is read (the caller hands in the text), no clock.

pub mod client;
pub mod jaas;
pub mod properties;
pub mod server;

pub use client::{
    ClientCredential, ClientSettings, SecurityProtocol, UnsecuredClaim, UnsecuredLogin,
};
pub use jaas::{ControlFlag, JaasEntry};
pub use properties::{is_secret_key, Properties};
pub use server::{sasl_listeners, DelegationTokenSettings, ServerMechanism, ServerSettings};
