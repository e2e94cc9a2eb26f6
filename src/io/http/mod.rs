//! HTTP(S) for hosts without an HTTP stack of their own (the `http` feature): token logins
//! against an identity provider ([`OidcLogin`]) and JWKS fetches ([`JwksFetcher`]).
//!
//! Built on `ureq` 3 (blocking, small, no async runtime) with `rustls` on `ring`, the crypto
//! the rest of the crate already uses. Certificates are always verified, against the CA bundle
//! the host configures or else Mozilla's roots (`webpki-roots`); redirects are never followed
//! (a 3xx answer is an error naming the status, so a token request never goes to a host it
//! was not configured for); response bodies are capped; proxies from the environment are used
//! only when asked for. Everything here blocks the calling thread: hosts with an event loop
//! use the sans-IO forms in [`crate::oidc`] and [`crate::mech::oauthbearer::JwksValidator`].

mod client;
mod jwks;
mod login;
mod settings;

pub use client::{HttpClient, HttpConfig, HttpResponse};
pub use jwks::JwksFetcher;
pub use login::OidcLogin;
pub use settings::{jwks_endpoint, HttpSettings, OidcSettings};
