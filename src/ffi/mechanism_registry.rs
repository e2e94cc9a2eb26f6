//! `ksasl_mechanism_registry`: client and server mechanisms by name, with their credentials.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::boundary::*;
use super::credential_callback::{ksasl_credential_cb, lookup};
use super::credential_store::ksasl_credential_store;
use super::host_mechanism::*;
use super::oauth_validator::{ksasl_oauth_validator_cb, validator};
use crate::credential::PasswordCredential;
use crate::error::Result;
use crate::mech::oauthbearer::{UnsecuredValidator, UnsecuredValidatorConfig};
use crate::mech::MechanismRegistry;

/// A set of client and server mechanisms by name, with the credentials they use.
pub struct ksasl_mechanism_registry {
    pub(crate) inner: MechanismRegistry,
    err: LastError,
}
handle!(ksasl_mechanism_registry(MechanismRegistry));

impl ksasl_mechanism_registry {
    pub(crate) fn add_clients(&mut self, c: Result<PasswordCredential>) -> Result<()> {
        let clients = MechanismRegistry::password_clients(Arc::new(c?));
        Ok(self.inner.merge(clients))
    }

    pub(crate) fn count(&self, server: bool) -> usize {
        let names = match server {
            true => self.inner.server_mechanisms(),
            false => self.inner.client_mechanisms(),
        };
        names.len()
    }
}

/// Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. User logins are looked up in
/// `store`, or with NULL in the credential callback if one is set, otherwise by the host (the
/// pull form); delegation-token logins in the token authority, if one is set.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_password_servers(
    r: *mut ksasl_mechanism_registry,
    store: *const ksasl_credential_store,
) -> ksasl_result {
    with(r, |r| {
        r.inner.merge(MechanismRegistry::password_servers(None));
        let s = get(store, None, |s| Some(s.inner.clone()));
        Ok(if s.is_some() {
            r.inner.set_credential_lookup(s.map(|s| s as _))
        })
    })
}

/// Looks user logins up with `cb` (replacing a store). The library takes `userdata` in every
/// case: `free_userdata` (may be NULL) is called when it is no longer needed, or at once if
/// this call fails.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_set_credential_callback(
    r: *mut ksasl_mechanism_registry,
    cb: ksasl_credential_cb,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, |r| {
        Ok(r.inner.set_credential_lookup(Some(lookup(cb, ud)?)))
    })
}

/// Registers (or replaces) a client mechanism written by the host under `name` (1 to 20 of
/// `A-Z 0-9 - _`); `vtable` is copied. `userdata` is taken in every case: `free_userdata` is
/// called once every registry, configuration, connection and exchange using the mechanism is
/// gone, or at once if this call fails.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_client_mechanism(
    r: *mut ksasl_mechanism_registry,
    name: *const c_char,
    vtable: *const ksasl_client_mechanism_vtable,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, |r| {
        let name = text(name, "name")?;
        r.inner
            .register_host_client(name, client_factory(name, vtable, ud)?)
    })
}

/// Registers (or replaces) a server mechanism written by the host under `name`, offered by
/// server configurations built afterwards; `vtable` and `userdata` as for client mechanisms.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_server_mechanism(
    r: *mut ksasl_mechanism_registry,
    name: *const c_char,
    vtable: *const ksasl_server_mechanism_vtable,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, |r| {
        let name = text(name, "name")?;
        r.inner
            .register_host_server(name, server_factory(name, vtable, ud)?)
    })
}

/// Adds an OAUTHBEARER server with Kafka's unsecured validator: `required_scope`
/// space-separated (NULL: none), `clock_skew_ms` >= 0. Verdicts are cached.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_oauthbearer_unsecured_server(
    r: *mut ksasl_mechanism_registry,
    required_scope: *const c_char,
    clock_skew_ms: i64,
) -> ksasl_result {
    with(r, |r| {
        let scope = opt_text(required_scope, "required_scope")?.unwrap_or_default();
        let v = UnsecuredValidator::new(UnsecuredValidatorConfig {
            required_scope: scope.split_whitespace().map(str::to_string).collect(),
            allowable_clock_skew_ms: clock_skew_ms,
            ..Default::default()
        })?;
        Ok(r.inner.register_cached_oauthbearer_server(Arc::new(v)))
    })
}

/// Adds an OAUTHBEARER server whose tokens `cb` validates (every time); `userdata` is taken
/// as by `ksasl_mechanism_registry_set_credential_callback`.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_oauthbearer_callback_server(
    r: *mut ksasl_mechanism_registry,
    cb: ksasl_oauth_validator_cb,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, |r| {
        Ok(r.inner.register_oauthbearer_server(validator(cb, ud)?))
    })
}
