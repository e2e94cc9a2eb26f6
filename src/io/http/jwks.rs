//! Keeping a [`JwksValidator`]'s keys fresh from the provider's JWKS endpoint.

use std::sync::Arc;

use super::client::HttpClient;
use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::oauthbearer::JwksValidator;

/// Fetches a JWKS (`sasl.oauthbearer.jwks.endpoint.url`) into a validator whenever the
/// validator says a fetch is due (at start, every refresh period, for an unknown `kid`, and
/// on the retry backoff after a failure). Drive it with [`JwksFetcher::poll`], or on a thread
/// of its own with `BackgroundRefresher::start_jwks`.
#[derive(Debug)]
pub struct JwksFetcher {
    url: String,
    http: HttpClient,
    validator: Arc<JwksValidator>,
}

impl JwksFetcher {
    /// A fetcher for an `https://` (or `http://`) JWKS URL.
    pub fn new(url: &str, http: HttpClient, validator: Arc<JwksValidator>) -> Result<Self> {
        let url = url.trim();
        let ok = ["https://", "http://"]
            .iter()
            .any(|p| url.len() > p.len() && url[..p.len()].eq_ignore_ascii_case(p));
        if !ok {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!(
                    "sasl.oauthbearer.jwks.endpoint.url: \"{}\" is not an http or https URL",
                    quote(url.as_bytes())
                ),
            ));
        }
        Ok(JwksFetcher {
            url: url.to_string(),
            http,
            validator,
        })
    }

    /// The validator it feeds.
    pub fn validator(&self) -> &Arc<JwksValidator> {
        &self.validator
    }

    /// Fetches now, blocking, and loads the keys (returning how many are usable). On failure
    /// the validator keeps its keys and records the failure, which sets its retry backoff.
    pub fn fetch(&self, now_ms: i64) -> Result<usize> {
        let result = self.http.get(&self.url).and_then(|a| {
            if a.status != 200 {
                return Err(Error::new(
                    if crate::oidc::is_retryable_status(a.status) {
                        ErrorCode::OidcProviderUnavailable
                    } else {
                        ErrorCode::OidcRequestRefused
                    },
                    format!("the JWKS endpoint answered HTTP {}", a.status),
                ));
            }
            let text = std::str::from_utf8(&a.body)
                .map_err(|_| Error::new(ErrorCode::OidcBadResponse, "the JWKS is not UTF-8"))?;
            self.validator
                .set_jwks(text, now_ms)
                .map_err(|e| Error::new(ErrorCode::OidcBadResponse, e.message().to_string()))
        });
        if let Err(e) = &result {
            self.validator.jwks_fetch_failed(e.message(), now_ms);
        }
        result
    }

    /// Fetches if the validator says a fetch is due at `now_ms`; returns when to poll next.
    pub fn poll(&self, now_ms: i64) -> i64 {
        if self.validator.refresh_due(now_ms) {
            let _ = self.fetch(now_ms);
        }
        self.validator.next_refresh_ms()
    }
}
