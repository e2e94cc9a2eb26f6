//! Delegation tokens (KIP-48) as Apache Kafka implements them: a sans-IO token authority for
//! brokers, proxies and test servers, and the SCRAM credentials derived from tokens.
//!
//! - A token id is 16 random bytes in unpadded base64url (22 characters, never starting with
//!   `-`); its HMAC is HMAC-SHA512 of the id's UTF-8 bytes under the UTF-8 bytes of the secret
//!   key (`delegation.token.secret.key`). The HMAC is never stored: it is recomputed from the
//!   id, so a persisted record holds no secret.
//! - A client logs in with SCRAM-SHA-256 or SCRAM-SHA-512, username = token id, password =
//!   standard base64 (with padding) of the HMAC, and `tokenauth=true`. The server's credential
//!   is derived from that password with 4096 iterations and a random salt.
//! - Create, renew and expire follow Kafka's KRaft rules (section 7.2 of the behaviour
//!   reference); a token whose expiry has passed still authenticates until the sweep removes
//!   it, and then yields an already-expired session, as in Kafka.
//!
//! The authority never reads the clock: every call takes `now_ms`, and
//! [`TokenAuthority::next_sweep_ms`] says when to sweep.

mod authority;
mod by_name;
mod info;
mod serve;

pub use authority::TokenAuthority;
pub use by_name::{
    change_token_request, create_token_request, describe_tokens_request, principal_arg,
    principal_args, RequestHeader,
};
pub use info::*;
pub use serve::{
    expiry_from_response, token_from_create_frame, token_from_create_response,
    token_from_described, tokens_from_describe_response,
};
