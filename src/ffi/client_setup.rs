//! `ksasl_client_setup`: a client built from its `.properties` (Kafka's or librdkafka's names)
//! by the core (`ksasl::config::ClientSettings::build`): its configuration, the refresher
//! behind OAUTHBEARER tokens, and what the host still has to do. Its free and last-error
//! functions are in `accessors.in`.

use std::ffi::{c_char, CString};
use std::ptr::null;

use super::boundary::*;
use super::client_config::ksasl_client_config;
use super::mechanism_registry::ksasl_mechanism_registry;
use super::refresher::ksasl_refresher;
use crate::config::{ClientLogin, ClientSettings, ClientSetup, Properties};
use crate::error::Result;
use crate::random::SharedRandom;

/// What the host still has to do for a client setup (`KSASL_CLIENT_LOGIN_*`; 0 for NULL).
pub type ksasl_client_login = u32;

/// Nothing: the credential is in the configuration (PLAIN, SCRAM; unsecured OAUTHBEARER
/// tokens, made by the refresher's own callback when the host runs `ksasl_refresher_run_due`).
pub const KSASL_CLIENT_LOGIN_READY: ksasl_client_login = 1;
/// OAUTHBEARER tokens from an identity provider (`sasl.oauthbearer.token.endpoint.url`): the
/// refresher's callback logs in at the provider (blocking the thread that runs
/// `ksasl_refresher_run_due`).
pub const KSASL_CLIENT_LOGIN_OIDC: ksasl_client_login = 2;
/// OAUTHBEARER tokens the host supplies (`ksasl_refresher_set_token`), as librdkafka's refresh
/// callback does.
pub const KSASL_CLIENT_LOGIN_HOST_TOKEN: ksasl_client_login = 3;
/// GSSAPI: the host registers a GSSAPI client for `ksasl_client_setup_kerberos_service_name`
/// (`ksasl_mechanism_registry_add_gssapi_client`) and calls `ksasl_client_setup_with_registry`.
pub const KSASL_CLIENT_LOGIN_KERBEROS: ksasl_client_login = 4;

/// A client built from its properties (`ksasl_client_setup_new`): its configuration, its
/// refresher, and what the host still has to do. Its strings are owned by the handle and
/// valid until `ksasl_client_setup_free`. Read-only functions may be called from any thread;
/// `ksasl_client_setup_with_registry` is not called concurrently with the others.
pub struct ksasl_client_setup {
    inner: ClientSetup,
    mechanism: CString,
    security_protocol: CString,
    /// For Kerberos: the service name, principal and keytab.
    kerberos: Option<[Option<CString>; 3]>,
    unknown: Vec<CString>,
    warnings: Vec<CString>,
    err: LastError,
}
handle!(ksasl_client_setup);

impl ksasl_client_setup {
    fn build(props: Result<Properties>) -> Result<Self> {
        let settings = ClientSettings::from_properties(&props?)?;
        let inner = settings.build(SharedRandom::default())?;
        let kerberos = match &inner.login {
            ClientLogin::Kerberos {
                service_name,
                principal,
                keytab,
            } => Some([
                Some(cstring(service_name)),
                principal.as_deref().map(cstring),
                keytab.as_deref().map(cstring),
            ]),
            _ => None,
        };
        let all = |v: &[String]| v.iter().map(|s| cstring(s)).collect();
        Ok(ksasl_client_setup {
            mechanism: cstring(&settings.mechanism),
            security_protocol: cstring(settings.security_protocol.name()),
            kerberos,
            unknown: all(&settings.unknown),
            warnings: all(&settings.warnings),
            inner,
            err: Default::default(),
        })
    }

    fn kerberos(&self, i: usize) -> *const c_char {
        let s = self.kerberos.as_ref().and_then(|k| k[i].as_ref());
        s.map_or(null(), |s| s.as_ptr())
    }
}

fn item(v: &[CString], i: usize) -> *const c_char {
    v.get(i).map_or(null(), |s| s.as_ptr())
}

/// Reads a client's `.properties` (`text`, `len` bytes: UTF-8, or ISO-8859-1 for bytes that
/// are not) by Kafka's or librdkafka's names and builds the client they describe. An invalid
/// configuration (or one without SASL: `security.protocol` must be `SASL_PLAINTEXT` or
/// `SASL_SSL`) is `KSASL_INVALID_CONFIG`, its detail (naming the key, the expected form and
/// Kafka's default, never a secret) in `ksasl_last_constructor_error`; as for every
/// constructor, `*out` is written only on success (initialise it to NULL).
#[no_mangle]
pub extern "C" fn ksasl_client_setup_new(
    text: *const c_char,
    len: usize,
    out: *mut *mut ksasl_client_setup,
) -> ksasl_result {
    construct(out, || {
        let text = bytes(text.cast(), len, "text")?;
        ksasl_client_setup::build(Properties::parse_bytes(text))
    })
}

/// `ksasl_client_setup_new` from `n` property names and values (the arrays may be NULL when
/// `n` is 0; a repeated name keeps its last value).
#[no_mangle]
pub extern "C" fn ksasl_client_setup_new_from_pairs(
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    out: *mut *mut ksasl_client_setup,
) -> ksasl_result {
    construct(out, || {
        let keys = texts(keys, n, "keys")?;
        let values = texts(values, n, "values")?;
        ksasl_client_setup::build(Ok(Properties::from_pairs(keys.into_iter().zip(values))))
    })
}

/// The connection configuration (`sasl.mechanism` chosen) as a new reference, freed by the
/// caller with `ksasl_client_config_free`; `*out` is NULL when there is none (GSSAPI until
/// `ksasl_client_setup_with_registry`).
#[no_mangle]
pub extern "C" fn ksasl_client_setup_config(
    s: *const ksasl_client_setup,
    out: *mut *mut ksasl_client_config,
) -> ksasl_result {
    with_ref(s, |s| {
        let out = nonnull(out, "out")?;
        let c = s
            .inner
            .config
            .as_ref()
            .map(|c| ksasl_client_config { inner: c.clone() });
        Ok(put(
            out,
            c.map_or(std::ptr::null_mut(), |c| Box::into_raw(Box::new(c))),
        ))
    })
}

/// For OAUTHBEARER: a new reference to the refresher whose token the configuration's client
/// presents (the same refresher, scheduled by `sasl.login.refresh.*`), freed by the caller
/// with `ksasl_refresher_free`; `*out` is NULL when there is none. The host runs it
/// (`ksasl_refresher_run_due` at `ksasl_refresher_next_deadline`) or, for
/// `KSASL_CLIENT_LOGIN_HOST_TOKEN`, answers it with `ksasl_refresher_set_token`. Freeing this
/// handle keeps the refresher's own callback (unsecured tokens, OIDC logins) unless a callback
/// was set through it.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_refresher(
    s: *const ksasl_client_setup,
    out: *mut *mut ksasl_refresher,
) -> ksasl_result {
    with_ref(s, |s| {
        let out = nonnull(out, "out")?;
        let r = s.inner.refresher.as_ref();
        let r = r.map(|r| ksasl_refresher::new(r.clone()));
        Ok(put(
            out,
            r.map_or(std::ptr::null_mut(), |r| Box::into_raw(Box::new(r))),
        ))
    })
}

/// What the host still has to do (`KSASL_CLIENT_LOGIN_*`); 0 for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_login(s: *const ksasl_client_setup) -> ksasl_client_login {
    get(s, 0, |s| match s.inner.login {
        ClientLogin::Ready => KSASL_CLIENT_LOGIN_READY,
        ClientLogin::Oidc => KSASL_CLIENT_LOGIN_OIDC,
        ClientLogin::HostToken(_) => KSASL_CLIENT_LOGIN_HOST_TOKEN,
        ClientLogin::Kerberos { .. } => KSASL_CLIENT_LOGIN_KERBEROS,
    })
}

/// The mechanism (`sasl.mechanism`, librdkafka's `sasl.mechanisms`), e.g. `"SCRAM-SHA-256"`;
/// borrowed from the handle; NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_mechanism(s: *const ksasl_client_setup) -> *const c_char {
    get(s, null(), |s| s.mechanism.as_ptr())
}

/// `security.protocol` (`"SASL_PLAINTEXT"` or `"SASL_SSL"`); borrowed; NULL for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_security_protocol(
    s: *const ksasl_client_setup,
) -> *const c_char {
    get(s, null(), |s| s.security_protocol.as_ptr())
}

/// For `KSASL_CLIENT_LOGIN_KERBEROS`: the broker's service name (`sasl.kerberos.service.name`,
/// JAAS `serviceName`); borrowed; NULL otherwise and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_kerberos_service_name(
    s: *const ksasl_client_setup,
) -> *const c_char {
    get(s, null(), |s| s.kerberos(0))
}

/// For `KSASL_CLIENT_LOGIN_KERBEROS`: the client principal (JAAS `principal`, librdkafka's
/// `sasl.kerberos.principal`); borrowed; NULL when not configured, otherwise and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_kerberos_principal(
    s: *const ksasl_client_setup,
) -> *const c_char {
    get(s, null(), |s| s.kerberos(1))
}

/// For `KSASL_CLIENT_LOGIN_KERBEROS`: the keytab (JAAS `keyTab`, librdkafka's
/// `sasl.kerberos.keytab`); borrowed; NULL when not configured, otherwise and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_kerberos_keytab(
    s: *const ksasl_client_setup,
) -> *const c_char {
    get(s, null(), |s| s.kerberos(2))
}

/// How many `sasl.*` and `ksasl.*` names the library does not know were given (for the host
/// to log); 0 for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_unknown_count(s: *const ksasl_client_setup) -> usize {
    get(s, 0, |s| s.unknown.len())
}

/// The `i`th unknown name (`ksasl_client_setup_unknown_count`); borrowed; NULL when `i` is
/// out of range and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_unknown(
    s: *const ksasl_client_setup,
    i: usize,
) -> *const c_char {
    get(s, null(), |s| item(&s.unknown, i))
}

/// How many settings have no effect as configured (for the host to log); 0 for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_warning_count(s: *const ksasl_client_setup) -> usize {
    get(s, 0, |s| s.warnings.len())
}

/// The `i`th warning, a sentence naming the setting (`ksasl_client_setup_warning_count`);
/// borrowed; NULL when `i` is out of range and for NULL.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_warning(
    s: *const ksasl_client_setup,
    i: usize,
) -> *const c_char {
    get(s, null(), |s| item(&s.warnings, i))
}

/// Builds the configuration again for the setup's mechanism from `registry`'s client
/// mechanisms (copied as it is now): for GSSAPI, once the host has added a GSSAPI client for
/// the broker. Configurations handed out before stay as they were. On failure
/// (`KSASL_UNKNOWN_MECHANISM` when the registry lacks the mechanism) nothing changes.
#[no_mangle]
pub extern "C" fn ksasl_client_setup_with_registry(
    s: *mut ksasl_client_setup,
    registry: *const ksasl_mechanism_registry,
) -> ksasl_result {
    with(s, |s| {
        let registry = arg(registry, "registry")?.inner.clone();
        let mechanism = s.mechanism.to_str().unwrap_or_default().to_string();
        s.inner.with_registry(registry, &mechanism)
    })
}
