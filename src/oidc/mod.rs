//! OAuth 2 / OpenID Connect token login (KIP-768, KIP-1139), sans-IO.
//!
//! A client that logs in with an identity provider sends the provider's token endpoint one
//! HTTP POST and turns the answer into an [`OAuthBearerToken`](crate::OAuthBearerToken). This
//! module builds that request ([`TokenRequester::request`]) and reads the answer
//! ([`TokenRequester::token_from_response`]); it never opens a connection. The retry plan of
//! one login ([`RetryPlan`], Kafka's `sasl.login.retry.backoff.*`) says how long to wait
//! between attempts. `ksasl::io::http` (the `http` feature) sends the requests for hosts that
//! do not have an HTTP stack of their own.
//!
//! Supported, as Kafka 4.4 sends them:
//! - the client-credentials grant with `client_secret_basic` (Kafka's default),
//!   `client_secret_post`, or a signed client assertion (`private_key_jwt`, RFC 7523 §2.2);
//! - the JWT-bearer grant (`urn:ietf:params:oauth:grant-type:jwt-bearer`, RFC 7523 §2.1,
//!   KIP-1139), with or without client authentication.

mod assertion;
mod request;
mod response;
mod retry;

pub use assertion::{AssertionConfig, AssertionSigner};
pub use request::{
    form_urlencode, http_url, ClientAuth, Grant, HttpRequest, TokenRequestConfig, TokenRequester,
};
pub use response::{client_token, is_retryable_status, parse_token_response, ProviderError};
pub use retry::RetryPlan;
