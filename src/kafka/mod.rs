//! Kafka's side of SASL: the wire codec, and the client and server connection drivers that
//! run (re-)authentication over it (KIP-43, KIP-152, KIP-368).

pub mod client;
pub mod codec;
pub mod config;
pub mod delegation_tokens;
pub mod messages;
pub mod refusal;
pub mod scram_credentials;
pub mod server;
