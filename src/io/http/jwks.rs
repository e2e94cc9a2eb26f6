//! Keeping a [`JwksValidator`]'s keys fresh from the provider's JWKS endpoint.

use std::sync::{Arc, Mutex};

use super::client::HttpClient;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::oauthbearer::{JwksValidator, TokenRejection, TokenValidator, ValidatedToken};
use crate::oidc::http_url;

/// Fetches a JWKS (`sasl.oauthbearer.jwks.endpoint.url`) into a validator whenever the
/// validator says a fetch is due (at start, every refresh period, for an unknown `kid`, and
/// on the retry backoff after a failure). Drive it with [`JwksFetcher::poll`], or on a thread
/// of its own with `BackgroundRefresher::start_jwks`.
///
/// It is also a [`TokenValidator`] that holds a token signed by a key it does not know yet:
/// when the validator asks for a refetch (an unknown `kid`, at most once a minute per `kid`),
/// the validating thread fetches the JWKS at once (one fetch at a time; other threads wait for
/// it rather than fetching again) and validates again with the new keys, so the first token
/// of a rotated key is accepted instead of refused. The wait is bounded by the HTTP timeouts.
/// Kafka 4.4 refuses that token and refetches in the background.
#[derive(Debug)]
pub struct JwksFetcher {
    url: String,
    http: HttpClient,
    validator: Arc<JwksValidator>,
    fetching: Mutex<()>,
}

impl JwksFetcher {
    /// A fetcher for an `https://` (or `http://`) JWKS URL.
    pub fn new(url: &str, http: HttpClient, validator: Arc<JwksValidator>) -> Result<Self> {
        let url = http_url("sasl.oauthbearer.jwks.endpoint.url", url)?;
        Ok(JwksFetcher {
            url,
            http,
            validator,
            fetching: Mutex::new(()),
        })
    }

    /// The validator it feeds.
    pub fn validator(&self) -> &Arc<JwksValidator> {
        &self.validator
    }

    /// Fetches now, blocking, and loads the keys (returning how many are usable). On failure
    /// the validator keeps its keys and records the failure, which sets its retry backoff.
    pub fn fetch(&self, now_ms: i64) -> Result<usize> {
        let _one = self
            .fetching
            .lock()
            .map_err(|_| Error::new(ErrorCode::Internal, "JWKS fetch lock poisoned"))?;
        self.fetch_locked(now_ms)
    }

    fn fetch_locked(&self, now_ms: i64) -> Result<usize> {
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

impl TokenValidator for JwksFetcher {
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        let before = self.validator.generation();
        match self.validator.validate(token, now_ms) {
            Err(r) if r.code == ErrorCode::TokenUnknownKey => {
                let Ok(_one) = self.fetching.lock() else {
                    return Err(r);
                };
                // Another thread may have fetched while this one waited for the lock.
                if self.validator.generation() == before && self.validator.refresh_due(now_ms) {
                    let _ = self.fetch_locked(now_ms);
                }
                if self.validator.generation() == before {
                    return Err(r);
                }
                self.validator.validate(token, now_ms)
            }
            verdict => verdict,
        }
    }

    fn generation(&self) -> u64 {
        self.validator.generation()
    }
}
