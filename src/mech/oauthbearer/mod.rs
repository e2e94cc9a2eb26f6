//! OAUTHBEARER (RFC 7628) as Kafka uses it (KIP-255, KIP-342, KIP-768).
//!
//! The client sends one message, the GS2 header and `\x01`-separated key/value pairs:
//! `n,[a=<authzid>],\x01auth=Bearer <token>\x01[<ext>=<value>\x01...]\x01`. The server
//! validates the token with a pluggable [`TokenValidator`]: [`UnsecuredValidator`] (Kafka's
//! development validator for `alg: none` tokens), [`JwksValidator`] (signed JWTs against a
//! JWKS, KIP-768) or one of the host's. On success the server answers with an empty
//! challenge; on rejection with Kafka's JSON error, which the client acknowledges with
//! `\x01` before the server fails the exchange with the JSON as its message.

mod cache;
mod client;
mod inspect;
mod jwt;
mod message;
mod server;
mod token;
mod unsecured;
mod validator;
mod verdicts;

pub use cache::CachingValidator;
pub use client::OAuthBearerClient;
pub use inspect::{decode_jwt, DecodedJwt};
pub use jwt::{JwksValidator, JwtValidatorConfig};
pub(crate) use message::redact;
pub use message::{ServerErrorChallenge, CONTROL_A};
pub use server::{ExtensionValidator, OAuthBearerServer};
pub use token::{
    is_valid_extension_name, is_valid_extension_value, OAuthBearerToken, SaslExtensions,
    TokenSource,
};
pub(crate) use unsecured::jwt_payload;
pub use unsecured::{
    java_double, UnsecuredTokenBuilder, UnsecuredValidator, UnsecuredValidatorConfig,
};
pub use validator::{HostTokenValidator, TokenRejection, TokenValidator, ValidatedToken};
