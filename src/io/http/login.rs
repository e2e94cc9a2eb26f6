//! A token login over HTTPS: the sans-IO [`TokenRequester`] sent with Kafka's retry plan.

use std::sync::Arc;
use std::time::Instant;

use super::client::HttpClient;
use crate::error::{ErrorCode, Result};
use crate::mech::oauthbearer::{OAuthBearerToken, SaslExtensions};
use crate::oidc::{RetryPlan, TokenRequester};
use crate::random::SharedRandom;
use crate::refresh::{CredentialValue, ExpiringCredential, Refresher};

/// Gets tokens from an identity provider's token endpoint. Share one per client (`Arc`).
#[derive(Debug)]
pub struct OidcLogin {
    requester: TokenRequester,
    http: HttpClient,
    retry: RetryPlan,
    random: SharedRandom,
}

/// Whether a failed attempt may be retried: the provider unreachable or answering 5xx/429.
fn retryable(code: ErrorCode) -> bool {
    code == ErrorCode::OidcProviderUnavailable
}

impl OidcLogin {
    /// A login; `retry` is `sasl.login.retry.backoff.ms` / `.max.ms`.
    pub fn new(
        requester: TokenRequester,
        http: HttpClient,
        retry: RetryPlan,
        random: SharedRandom,
    ) -> Self {
        OidcLogin {
            requester,
            http,
            retry,
            random,
        }
    }

    /// The request builder.
    pub fn requester(&self) -> &TokenRequester {
        &self.requester
    }

    /// Gets a token, blocking: one request, retried on Kafka's plan while the provider is
    /// unreachable or answers 5xx/429 (the error is the first attempt's, with the number of
    /// attempts). `now_ms` is the wall clock, for the assertions' `iat`.
    pub fn fetch(&self, now_ms: i64) -> Result<OAuthBearerToken> {
        let start = Instant::now();
        let mut first: Option<crate::error::Error> = None;
        let mut attempt = 0u32;
        loop {
            attempt = attempt.saturating_add(1);
            let elapsed = start.elapsed().as_millis() as i64;
            let result = self
                .requester
                .request(now_ms.saturating_add(elapsed), self.random.0.as_ref())
                .and_then(|r| self.http.send(&r))
                .and_then(|a| self.requester.token_from_response(a.status, &a.body));
            let e = match result {
                Ok(t) => return Ok(t),
                Err(e) if !retryable(e.code()) => return Err(e),
                Err(e) => e,
            };
            let first = first.get_or_insert(e);
            let elapsed = start.elapsed().as_millis() as i64;
            let Some(wait) = self.retry.wait_ms(attempt, elapsed) else {
                let msg = format!("{} ({attempt} attempts in {elapsed} ms)", first.message());
                let mut out = crate::error::Error::new(first.code(), msg);
                for (k, v) in first.details() {
                    out = out.with_detail(k.clone(), v.clone());
                }
                return Err(out);
            };
            std::thread::sleep(std::time::Duration::from_millis(wait as u64));
        }
    }

    /// Gets a token (blocking, as [`OidcLogin::fetch`]) and installs it in `refresher` with
    /// `extensions`; returns the new generation. On failure the refresher records it
    /// (`set_token_failure`: the current token stays in use until it expires, and the next
    /// attempt follows the refresher's retry backoff) and the error is returned.
    pub fn refresh(
        &self,
        refresher: &Refresher,
        extensions: &SaslExtensions,
        started_ms: i64,
    ) -> Result<u64> {
        let clock = Instant::now();
        let fetched = self.fetch(started_ms);
        // The refresh is scheduled from when the token arrived, not when it was asked for.
        let now = started_ms.saturating_add(clock.elapsed().as_millis() as i64);
        let installed = fetched.and_then(|t| {
            let expiring = ExpiringCredential {
                start_ms: t.start_ms(),
                expiry_ms: t.expiry_ms(),
                absolute_last_refresh_ms: None,
            };
            let principal = t.principal().to_string();
            let value = CredentialValue::Token(t, extensions.clone());
            refresher.set_credential(&principal, expiring, value, now)
        });
        if let Err(e) = &installed {
            let _ = refresher.set_token_failure(e.message(), now);
        }
        installed
    }

    /// Makes this login the refresher's callback: each due refresh runs
    /// [`OidcLogin::refresh`] (blocking the thread that runs it, such as a
    /// [`BackgroundRefresher`]).
    ///
    /// [`BackgroundRefresher`]: crate::background::BackgroundRefresher
    pub fn attach(self: &Arc<Self>, refresher: &Refresher, extensions: SaslExtensions) {
        let login = self.clone();
        refresher.set_refresh_callback(move |r, now| {
            let _ = login.refresh(r, &extensions, now);
        });
    }
}
