//! `ksasl_refresher_config_builder`, `ksasl_refresher_config` and `ksasl_refresher`: expiring
//! credentials refreshed on Kafka's schedule, with librdkafka's shape.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::boundary::*;
use crate::refresh::{RefreshConfig, RefreshConfigBuilder, Refresher};

/// The values of a refresher's configuration; unset values keep Kafka's defaults.
pub struct ksasl_refresher_config_builder {
    pub(crate) inner: RefreshConfigBuilder,
    err: LastError,
}

/// A built refresher configuration (`sasl.login.refresh.*` and the retry backoff).
pub struct ksasl_refresher_config(pub(crate) RefreshConfig);

/// Refreshes expiring credentials (OAuth tokens, delegation tokens). Thread-safe.
pub struct ksasl_refresher {
    pub(crate) inner: Arc<Refresher>,
    err: LastError,
    /// Whether a callback was set through this handle (it then holds the handle's address).
    set_callback: AtomicBool,
}
handle!(ksasl_refresher_config_builder(RefreshConfigBuilder));
handle!(ksasl_refresher(Arc<Refresher>, set_callback));

impl Drop for ksasl_refresher {
    fn drop(&mut self) {
        // A callback set through this handle holds its address: it must not outlive the
        // handle, even if a tracker or registry keeps the refresher itself alive. A callback
        // the core set (a client setup's unsecured or OIDC login, shared by another handle)
        // stays.
        if self.set_callback.load(Ordering::SeqCst) {
            self.inner.clear_refresh_callback();
        }
    }
}

pub(crate) fn set_refresh(
    b: *mut ksasl_refresher_config_builder,
    f: impl FnOnce(&mut RefreshConfigBuilder) -> &mut RefreshConfigBuilder,
) -> ksasl_result {
    with(b, |b| {
        f(&mut b.inner);
        Ok(())
    })
}

/// The refresh callback: fetch a credential and answer with `ksasl_refresher_set_token`,
/// `ksasl_refresher_set_delegation_token` or `ksasl_refresher_set_token_failure` (now, or
/// later from any thread).
pub type ksasl_refresh_cb = Option<
    unsafe extern "C" fn(userdata: *mut c_void, refresher: *mut ksasl_refresher, now_ms: i64),
>;

/// Sets the callback run by `ksasl_refresher_run_due`. The library takes `userdata` in every
/// case: `free_userdata` (may be NULL) is called when the callback is replaced or the
/// refresher freed, or at once if this call fails.
#[no_mangle]
pub extern "C" fn ksasl_refresher_set_refresh_callback(
    r: *mut ksasl_refresher,
    cb: ksasl_refresh_cb,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    let handle = r as usize;
    with(r, |r| {
        let cb = callback(cb)?;
        // The callback gets the handle it was set on; freeing the handle clears it (Drop).
        let call = move |_: &Refresher, now| unsafe { cb(ud.ptr(), handle as *mut _, now) };
        r.inner.set_refresh_callback(call);
        Ok(r.set_callback.store(true, Ordering::SeqCst))
    })
}

/// Installs an OAuth token: text, absolute expiry (ms), principal, and `n_extensions` SASL
/// extension names and values (the arrays may be NULL when `n_extensions` is 0).
#[no_mangle]
pub extern "C" fn ksasl_refresher_set_token(
    r: *mut ksasl_refresher,
    token: *const c_char,
    expiry_ms: i64,
    principal: *const c_char,
    extension_names: *const *const c_char,
    extension_values: *const *const c_char,
    n_extensions: usize,
    now_ms: i64,
) -> ksasl_result {
    with(r, |r| {
        let names = texts(extension_names, n_extensions, "extension names")?;
        let values = texts(extension_values, n_extensions, "extension values")?;
        let ext: Vec<_> = names.into_iter().zip(values).collect();
        let (t, p) = (text(token, "token")?, text(principal, "principal")?);
        r.inner.set_token(t, expiry_ms, p, &ext, now_ms).map(drop)
    })
}
