//! `ksasl_server_setup`: a broker listener built from `server.properties` by the core
//! (`ksasl::io::listener::build_listener`, as the Java and Python bindings build it): its
//! configuration, its JWKS endpoints, its token authority and where it listens. Its free and last-error functions are in `accessors.in`.
//!
//! The ABI has no string free function, so the listener chosen by the core
//! (`ksasl::config::choose_listener`) and its address (`ksasl::config::listener_address`) are
//! borrowed accessors of the handle rather than handle-free functions returning new strings.

use std::ffi::{c_char, CString};
use std::ptr::{null, null_mut};
use std::sync::Arc;

use super::boundary::*;
use super::credential_store::ksasl_credential_store;
use super::oidc::ksasl_jwks_endpoint;
use super::server_config::ksasl_server_config;
use super::token_authority::ksasl_token_authority;
use crate::config::{choose_listener, listener_address, Properties, ServerSettings};
use crate::credential::CredentialLookup;
use crate::error::{Error, ErrorCode, Result};
use crate::io::http::JwksFetcher;
use crate::io::listener::{build_listener, Listener};
use crate::kafka::config::ServerConfig;
use crate::token::TokenAuthority;

/// A broker listener built from `server.properties` (`ksasl_server_setup_new`): its
/// configuration, the JWKS endpoints that configuration validates tokens with, its delegation
/// token authority, its name and address. Its strings are owned by the handle and valid until
/// `ksasl_server_setup_free`. Read-only: it may be used from any thread.
pub struct ksasl_server_setup {
    config: Arc<ServerConfig>,
    jwks: Vec<(CString, Arc<JwksFetcher>)>,
    tokens: Option<Arc<TokenAuthority>>,
    listener: CString,
    /// The listener's `listeners` entry: host and port.
    address: Option<(CString, u16)>,
    err: LastError,
}
handle!(ksasl_server_setup);

impl ksasl_server_setup {
    fn build(
        props: &Properties,
        listener: Option<&str>,
        scram: Option<Arc<dyn CredentialLookup>>,
        apis: &[(i64, i64, i64)],
    ) -> Result<Self> {
        let listener = choose_listener(props, listener)?;
        let address = listener_address(props, &listener)?;
        let settings = ServerSettings::from_properties(props, &listener)?;
        let Listener { setup, jwks } = build_listener(&settings, scram, apis)?;
        let jwks = jwks
            .into_iter()
            .map(|(url, e)| (cstring(&url), e))
            .collect();
        // Once GSSAPI is finished every listener has its configuration.
        let config = setup
            .config
            .ok_or_else(|| Error::new(ErrorCode::Internal, "a listener without a configuration"))?;
        Ok(ksasl_server_setup {
            config,
            jwks,
            tokens: setup.tokens,
            listener: cstring(&listener),
            address: address.map(|(host, port)| (cstring(&host), port)),
            err: Default::default(),
        })
    }

    fn endpoint(&self, i: usize) -> Result<&Arc<JwksFetcher>> {
        let n = self.jwks.len();
        let e = self.jwks.get(i).map(|(_, e)| e);
        e.ok_or_else(|| {
            Error::misuse(format!(
                "index {i} is out of range: the setup has {n} JWKS endpoints"
            ))
        })
    }
}

/// `n` (api key, min, max) triples as the core takes them (`p` may be NULL when `n` is 0).
fn api_triples(p: *const i64, n: usize) -> Result<Vec<(i64, i64, i64)>> {
    let len = n
        .checked_mul(3)
        .ok_or_else(|| Error::misuse("n_apis is too large"))?;
    let flat: &[i64] = if len > 0 {
        let p = nonnull(p.cast_mut(), "apis")?;
        unsafe { std::slice::from_raw_parts(p, len) }
    } else {
        &[]
    };
    Ok(flat.chunks_exact(3).map(|t| (t[0], t[1], t[2])).collect())
}

/// Reads a broker's `server.properties` (`text`, `len` bytes: UTF-8, or ISO-8859-1 for bytes
/// that are not) and builds the listener `listener` (Kafka's names ignore case; NULL: the
/// file's only SASL listener), as `ksasl::config::choose_listener` chooses it: a name that is
/// not one of the SASL listeners of `listeners`, or NULL when the file has none or several,
/// is `KSASL_INVALID_CONFIG` naming the listeners to choose from. The listener gets PLAIN
/// users from its JAAS entry's `user_` options, SCRAM users from `scram_store` (may be NULL:
/// no SCRAM user exists; the store stays live: users added later can log in), OAUTHBEARER
/// with Kafka's unsecured validator or JWKS validation (`ksasl_server_setup_jwks_endpoint`),
/// GSSAPI from its keytab (read now: a missing keytab or key fails here, naming the listener),
/// session lifetimes and limits as configured, and with `delegation.token.secret.key` a token
/// authority (`ksasl_server_setup_tokens`). `apis` holds `n_apis` (api key, min version, max
/// version) triples, flat (may be NULL when `n_apis` is 0): the host's own APIs, listed in the
/// listener's ApiVersions answer beside the SASL ones (and the token APIs 38-41 with a token
/// authority). An invalid configuration is `KSASL_INVALID_CONFIG`, its detail (naming the key,
/// the expected form and Kafka's default, never a secret) in `ksasl_last_constructor_error`;
/// as for every constructor, `*out` is written only on success (initialise it to NULL).
#[no_mangle]
pub extern "C" fn ksasl_server_setup_new(
    text: *const u8,
    len: usize,
    listener: *const c_char,
    scram_store: *const ksasl_credential_store,
    apis: *const i64,
    n_apis: usize,
    out: *mut *mut ksasl_server_setup,
) -> ksasl_result {
    construct(out, || {
        let text = bytes(text, len, "text")?;
        let listener = opt_text(listener, "listener")?;
        let scram = unsafe { scram_store.as_ref() };
        let scram = scram.map(|s| s.inner.clone() as Arc<dyn CredentialLookup>);
        let apis = api_triples(apis, n_apis)?;
        ksasl_server_setup::build(&Properties::parse_bytes(text)?, listener, scram, &apis)
    })
}

/// The listener's configuration (never NULL) as a new reference, freed by the caller with
/// `ksasl_server_config_free` (connections made from it keep what they need).
#[no_mangle]
pub extern "C" fn ksasl_server_setup_config(
    s: *const ksasl_server_setup,
    out: *mut *mut ksasl_server_config,
) -> ksasl_result {
    with_ref(s, |s| {
        let out = nonnull(out, "out")?;
        let inner = s.config.clone();
        Ok(put_new(out, ksasl_server_config { inner }))
    })
}

/// How many JWKS endpoints the configuration validates OAUTHBEARER tokens with (one per
/// `sasl.oauthbearer.jwks.endpoint.url` of the listener's OAUTHBEARER; 0 without JWKS
/// validation and for NULL).
#[no_mangle]
pub extern "C" fn ksasl_server_setup_jwks_count(s: *const ksasl_server_setup) -> usize {
    get(s, 0, |s| s.jwks.len())
}

/// The URL of the `i`th JWKS endpoint (`ksasl_server_setup_jwks_count`); borrowed; NULL when
/// `i` is out of range and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_setup_jwks_url(
    s: *const ksasl_server_setup,
    i: usize,
) -> *const c_char {
    get(s, null(), |s| {
        s.jwks.get(i).map_or(null(), |(u, _)| u.as_ptr())
    })
}

/// A new handle on the `i`th JWKS endpoint (the same endpoint the configuration validates
/// with), freed by the caller with `ksasl_jwks_endpoint_free`. It holds no key until the host
/// fetches it (`ksasl_jwks_endpoint_fetch`, then `ksasl_jwks_endpoint_poll` from its refresh
/// thread); until then a token is held for one fetch. `KSASL_INVALID_ARGUMENT` when `i` is
/// out of range.
#[no_mangle]
pub extern "C" fn ksasl_server_setup_jwks_endpoint(
    s: *const ksasl_server_setup,
    i: usize,
    out: *mut *mut ksasl_jwks_endpoint,
) -> ksasl_result {
    with_ref(s, |s| {
        let out = nonnull(out, "out")?;
        Ok(put_new(
            out,
            ksasl_jwks_endpoint::new(s.endpoint(i)?.clone()),
        ))
    })
}

/// With `delegation.token.secret.key`: a new handle on the listener's token authority (the
/// one SCRAM `tokenauth` logins are checked against, with `delegation.token.max.lifetime.ms`
/// and `delegation.token.expiry.time.ms`), freed by the caller with
/// `ksasl_token_authority_free`; `*out` is NULL without a key. The host serves the token APIs
/// (`ksasl_token_authority_handle_request`) and sweeps expired tokens.
#[no_mangle]
pub extern "C" fn ksasl_server_setup_tokens(
    s: *const ksasl_server_setup,
    out: *mut *mut ksasl_token_authority,
) -> ksasl_result {
    with_ref(s, |s| {
        let out = nonnull(out, "out")?;
        let a = s.tokens.as_ref();
        let a = a.map(|a| ksasl_token_authority::new(a.clone()));
        Ok(put(
            out,
            a.map_or(null_mut(), |a| Box::into_raw(Box::new(a))),
        ))
    })
}

/// The listener's name (as requested, or the file's only SASL listener as written in
/// `listeners`); borrowed; NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_setup_listener(s: *const ksasl_server_setup) -> *const c_char {
    get(s, null(), |s| s.listener.as_ptr())
}

/// The host of the listener's `listeners` entry (`NAME://host:port`), as written: `""` for
/// every interface, an IPv6 address without its brackets; borrowed; NULL when the file has no
/// entry for the listener and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_setup_host(s: *const ksasl_server_setup) -> *const c_char {
    get(s, null(), |s| {
        s.address.as_ref().map_or(null(), |(h, _)| h.as_ptr())
    })
}

/// The port of the listener's `listeners` entry (0-65535); -1 when the file has no entry for
/// the listener and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_server_setup_port(s: *const ksasl_server_setup) -> i32 {
    get(s, -1, |s| {
        s.address.as_ref().map_or(-1, |(_, p)| i32::from(*p))
    })
}
