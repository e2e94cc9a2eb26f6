//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Apache Kafka speaks them.
//!
//! Kafka's profile: gs2 flag `n` only (no channel binding), `c=biws`, no SASLprep (the
//! password is its UTF-8 bytes), at least 4096 iterations on both sides, the `tokenauth`
//! extension for delegation tokens, and a server that reports failures through the Kafka
//! framing rather than `e=`. On top of Kafka, the client caps the iterations a server may
//! demand (a hostile broker could ask for 2^31), and both sides check nonces strictly.

mod client;
pub(crate) mod messages;
mod server;

pub use crate::credential::scram::{ScramCredential, ScramMechanism, MIN_ITERATIONS};
pub use client::{ScramClient, ScramClientOptions, DEFAULT_MAX_ITERATIONS};
pub use messages::{escape_username, unescape_username};
pub use server::{ScramServer, ScramServerOptions};
