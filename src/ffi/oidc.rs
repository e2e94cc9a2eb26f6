//! `ksasl_oidc_settings`, `ksasl_oidc_login`, `ksasl_jwks_endpoint`: token logins at an
//! identity provider and JWKS endpoints over HTTPS (`ksasl::io::http`). Their fetches block
//! the calling thread (bounded by the configured timeouts and retry budget): call them from a
//! refresh thread, not from an event loop.

use std::ffi::c_char;
use std::sync::Arc;

use super::boundary::*;
use super::jwks_validator::ksasl_jwks_validator;
use super::mechanism_registry::ksasl_mechanism_registry;
use super::oauth_token::ksasl_oauth_token;
use super::refresher::ksasl_refresher;
use crate::io::http::{jwks_endpoint, JwksFetcher, OidcLogin, OidcSettings};
use crate::mech::oauthbearer::SaslExtensions;
use crate::random::SharedRandom;

/// Settings of a token login or a JWKS endpoint, by Kafka's property names.
pub struct ksasl_oidc_settings {
    pub(crate) inner: OidcSettings,
    err: LastError,
}
handle!(ksasl_oidc_settings(OidcSettings));

/// A token login at an identity provider. Thread-safe.
pub struct ksasl_oidc_login {
    pub(crate) inner: Arc<OidcLogin>,
    err: LastError,
}
handle!(ksasl_oidc_login(Arc<OidcLogin>));

/// A JWKS endpoint feeding a `ksasl_jwks_validator`. Thread-safe.
pub struct ksasl_jwks_endpoint {
    pub(crate) inner: Arc<JwksFetcher>,
    err: LastError,
}
handle!(ksasl_jwks_endpoint(Arc<JwksFetcher>));

/// Creates empty settings (Kafka's defaults for everything not set).
#[no_mangle]
pub extern "C" fn ksasl_oidc_settings_new(out: *mut *mut ksasl_oidc_settings) -> ksasl_result {
    construct(out, || {
        Ok(ksasl_oidc_settings::new(OidcSettings::default()))
    })
}

/// Sets one value by its Kafka property name (`sasl.oauthbearer.token.endpoint.url`,
/// `sasl.oauthbearer.client.credentials.client.id` or `clientId`, `...client.secret` or
/// `clientSecret`, `sasl.oauthbearer.scope`, `sasl.oauthbearer.assertion.*`,
/// `sasl.login.retry.backoff.ms`, `sasl.login.connect.timeout.ms`, `sasl.login.read.timeout.ms`,
/// `ssl.truststore.location` (a PEM file), `ssl.truststore.certificates` (PEM text)), or
/// ksasl's own (`ksasl.oauthbearer.client.auth`, `ksasl.oauthbearer.grant.type`,
/// `ksasl.oauthbearer.assertion.private.key.pem`, `ksasl.oauthbearer.assertion.kid`). An
/// unknown name or a malformed value is `KSASL_INVALID_CONFIG` and changes nothing.
#[no_mangle]
pub extern "C" fn ksasl_oidc_settings_set(
    s: *mut ksasl_oidc_settings,
    name: *const c_char,
    value: *const c_char,
) -> ksasl_result {
    with(s, |s| {
        let (name, value) = (text(name, "name")?, text(value, "value")?);
        s.inner.set(name, value)
    })
}

/// Creates a login from `settings` (checked now: URL, client id and secret or key, CA file).
#[no_mangle]
pub extern "C" fn ksasl_oidc_login_new(
    settings: *const ksasl_oidc_settings,
    out: *mut *mut ksasl_oidc_login,
) -> ksasl_result {
    construct(out, || {
        let s = &arg(settings, "settings")?.inner;
        Ok(ksasl_oidc_login::new(Arc::new(
            s.login(SharedRandom::default())?,
        )))
    })
}

/// Gets a token now (blocking, retried on `sasl.login.retry.backoff.*`) into `*out` (free it
/// with `ksasl_oauth_token_free`). A refused request is `KSASL_OIDC_REQUEST_REFUSED` (the
/// provider's `error_description` is in `ksasl_oidc_login_last_error`), an unreachable
/// provider `KSASL_OIDC_PROVIDER_UNAVAILABLE`, an unknown CA `KSASL_TLS_CERTIFICATE_REFUSED`.
#[no_mangle]
pub extern "C" fn ksasl_oidc_login_fetch(
    l: *mut ksasl_oidc_login,
    now_ms: i64,
    out: *mut *mut ksasl_oauth_token,
) -> ksasl_result {
    with(l, |l| {
        let out = nonnull(out, "out")?;
        let inner = l.inner.fetch(now_ms)?;
        put_new(
            out,
            ksasl_oauth_token {
                value: cstring(inner.value()),
                inner,
            },
        );
        Ok(())
    })
}

/// Answers a due refresh of `r` (after `ksasl_refresher_poll` said so) from the provider:
/// installs a fresh token, or records the failure with `ksasl_refresher_set_token_failure`'s
/// meaning (the current token stays in use while valid) and returns its code. Blocks.
#[no_mangle]
pub extern "C" fn ksasl_oidc_login_refresh(
    l: *mut ksasl_oidc_login,
    r: *mut ksasl_refresher,
    now_ms: i64,
) -> ksasl_result {
    with(l, |l| {
        let refresher = &arg(r.cast_const(), "refresher")?.inner;
        l.inner
            .refresh(refresher, &SaslExtensions::new(), now_ms)
            .map(drop)
    })
}

/// Creates a JWKS endpoint (`sasl.oauthbearer.jwks.endpoint.url`) feeding `v`, with the HTTPS
/// values of `settings` (may be NULL: Mozilla's roots, ksasl's default timeouts).
#[no_mangle]
pub extern "C" fn ksasl_jwks_endpoint_new(
    url: *const c_char,
    v: *const ksasl_jwks_validator,
    settings: *const ksasl_oidc_settings,
    out: *mut *mut ksasl_jwks_endpoint,
) -> ksasl_result {
    construct(out, || {
        let url = text(url, "url")?;
        let validator = arg(v, "validator")?.inner.clone();
        let http = if settings.is_null() {
            Default::default()
        } else {
            arg(settings, "settings")?.inner.http.clone()
        };
        Ok(ksasl_jwks_endpoint::new(Arc::new(jwks_endpoint(
            url, &http, validator,
        )?)))
    })
}

/// Fetches the JWKS now (blocking); `*keys` (may be NULL) gets the number of usable keys. On
/// failure the validator keeps its keys and its next fetch waits for the retry backoff.
#[no_mangle]
pub extern "C" fn ksasl_jwks_endpoint_fetch(
    e: *mut ksasl_jwks_endpoint,
    now_ms: i64,
    keys: *mut usize,
) -> ksasl_result {
    with(e, |e| Ok(put_opt(keys, e.inner.fetch(now_ms)?)))
}

/// Fetches if a fetch is due at `now_ms` (blocking then); returns when to call again (ms since
/// the epoch), -1 for NULL. Call it from the host's refresh thread.
#[no_mangle]
pub extern "C" fn ksasl_jwks_endpoint_poll(e: *const ksasl_jwks_endpoint, now_ms: i64) -> i64 {
    get(e, -1, |e| e.inner.poll(now_ms))
}

/// Adds an OAUTHBEARER server validating with `e` (verdicts cached): a token signed by a key
/// the validator does not know yet is held for one JWKS fetch instead of refused.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server(
    r: *mut ksasl_mechanism_registry,
    e: *const ksasl_jwks_endpoint,
) -> ksasl_result {
    with(r, |r| {
        let validator = arg(e, "endpoint")?.inner.clone();
        Ok(r.inner.register_cached_oauthbearer_server(validator))
    })
}
