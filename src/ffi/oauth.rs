//! OAUTHBEARER tokens and validators, the refresher and the tracker.

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use super::objects::ksasl_registry;
use super::*;
use crate::error::ErrorCode;
use crate::mech::oauthbearer::{
    CachingValidator, JwksValidator, JwtValidatorConfig, OAuthBearerToken, TokenRejection,
    TokenValidator, UnsecuredTokenBuilder, UnsecuredValidator, UnsecuredValidatorConfig,
    ValidatedToken,
};
use crate::random::SharedRandom;
use crate::refresh::{RefreshConfig, Refresher, Tracker, TrackerConfig};

/// An OAUTHBEARER token.
pub struct ksasl_token {
    inner: OAuthBearerToken,
    value: CString,
}

/// Builds an unsecured (`alg: none`) token as Kafka's development login does: principal
/// claim `sub`, `lifetime_seconds`, optional space-separated `scope` (NULL: none).
#[no_mangle]
pub extern "C" fn ksasl_token_new_unsecured(
    principal: *const c_char,
    lifetime_seconds: i64,
    scope: *const c_char,
    now_ms: i64,
    out: *mut *mut ksasl_token,
) -> ksasl_result {
    construct(out, || {
        let mut b = UnsecuredTokenBuilder::for_principal(text(principal, "principal")?)
            .lifetime_seconds(lifetime_seconds);
        if let Some(s) = opt_text(scope, "scope")? {
            let items: Vec<&str> = s.split(' ').filter(|x| !x.is_empty()).collect();
            b = b.list_claim("scope", &items)?;
        }
        let t = b.build(now_ms)?;
        Ok(ksasl_token {
            value: cstring(t.value()),
            inner: t,
        })
    })
}

/// Frees a token (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_token_free(t: *mut ksasl_token) {
    free(t)
}

/// The token text (a secret: do not log it), borrowed from the token.
#[no_mangle]
pub extern "C" fn ksasl_token_value(t: *const ksasl_token) -> *const c_char {
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.value.as_ptr())
}

/// The token's absolute expiry in ms (-1 for NULL).
#[no_mangle]
pub extern "C" fn ksasl_token_expiry_ms(t: *const ksasl_token) -> i64 {
    unsafe { t.as_ref() }.map_or(-1, |t| t.inner.expiry_ms())
}

/// Adds an OAUTHBEARER server with Kafka's unsecured validator: `required_scope`
/// space-separated (NULL: none), `clock_skew_ms` >= 0. Verdicts are cached.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_oauthbearer_unsecured_server(
    r: *mut ksasl_registry,
    required_scope: *const c_char,
    clock_skew_ms: i64,
) -> ksasl_result {
    with(r, |r| {
        let scope = opt_text(required_scope, "required_scope")?
            .map(|s| {
                s.split(' ')
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let v = UnsecuredValidator::new(UnsecuredValidatorConfig {
            required_scope: scope,
            allowable_clock_skew_ms: clock_skew_ms,
            ..Default::default()
        })?;
        r.inner
            .register_oauthbearer_server(Arc::new(CachingValidator::new(Arc::new(v), 4096)));
        Ok(())
    })
}

/// A signed-JWT validator (KIP-768) whose JWKS the host supplies.
pub struct ksasl_jwks_validator {
    inner: Arc<JwksValidator>,
    err: LastError,
}

impl HasError for ksasl_jwks_validator {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a JWKS validator with Kafka's defaults (30 s skew, asymmetric algorithms only);
/// `expected_issuer` and `expected_audience` may be NULL.
#[no_mangle]
pub extern "C" fn ksasl_jwks_validator_new(
    expected_issuer: *const c_char,
    expected_audience: *const c_char,
    out: *mut *mut ksasl_jwks_validator,
) -> ksasl_result {
    construct(out, || {
        let config = JwtValidatorConfig {
            expected_issuer: opt_text(expected_issuer, "expected_issuer")?.map(str::to_string),
            expected_audiences: opt_text(expected_audience, "expected_audience")?
                .map(|a| vec![a.to_string()])
                .unwrap_or_default(),
            ..Default::default()
        };
        Ok(ksasl_jwks_validator {
            inner: Arc::new(JwksValidator::new(config)?),
            err: LastError::default(),
        })
    })
}

/// Frees a JWKS validator (registries that use it keep it alive).
#[no_mangle]
pub extern "C" fn ksasl_jwks_validator_free(v: *mut ksasl_jwks_validator) {
    free(v)
}

/// The detail of the validator's last failure.
#[no_mangle]
pub extern "C" fn ksasl_jwks_validator_last_error(v: *const ksasl_jwks_validator) -> *const c_char {
    unsafe { v.as_ref() }.map_or(c"".as_ptr(), |v| v.err.ptr())
}

/// Replaces the key set with a JWKS document fetched at `now_ms`.
#[no_mangle]
pub extern "C" fn ksasl_jwks_validator_set_jwks(
    v: *mut ksasl_jwks_validator,
    jwks_json: *const c_char,
    now_ms: i64,
) -> ksasl_result {
    with(v, |v| {
        v.inner
            .set_jwks(text(jwks_json, "jwks_json")?, now_ms)
            .map(|_| ())
    })
}

/// When the JWKS should be fetched next (ms; 0 means now, as when none is loaded; -1 for a
/// NULL validator).
#[no_mangle]
pub extern "C" fn ksasl_jwks_validator_next_refresh_ms(v: *const ksasl_jwks_validator) -> i64 {
    unsafe { v.as_ref() }.map_or(-1, |v| v.inner.next_refresh_ms().max(0))
}

/// Adds an OAUTHBEARER server validating signed JWTs with `v` (verdicts cached).
#[no_mangle]
pub extern "C" fn ksasl_registry_add_oauthbearer_jwks_server(
    r: *mut ksasl_registry,
    v: *const ksasl_jwks_validator,
) -> ksasl_result {
    with(r, |r| {
        let v = unsafe { v.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "validator must not be NULL"))?;
        r.inner
            .register_oauthbearer_server(Arc::new(CachingValidator::new(v.inner.clone(), 4096)));
        Ok(())
    })
}

/// Where a token-validation callback writes its verdict.
pub struct ksasl_token_verdict {
    verdict: Option<Result<ValidatedToken, TokenRejection>>,
}

/// Accepts the token: its principal and absolute expiry (ms).
#[no_mangle]
pub extern "C" fn ksasl_token_verdict_accept(
    v: *mut ksasl_token_verdict,
    principal: *const c_char,
    expiry_ms: i64,
) -> ksasl_result {
    let Some(v) = (unsafe { v.as_mut() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    match text(principal, "principal") {
        Ok(p) if !p.is_empty() => {
            v.verdict = Some(Ok(ValidatedToken {
                principal: p.to_string(),
                expiry_ms,
                start_ms: None,
                scope: vec![],
                valid_from_ms: None,
                valid_until_ms: expiry_ms,
            }));
            KSASL_OK
        }
        Ok(_) => ErrorCode::InvalidArgument.as_u32(),
        Err(e) => e.code().as_u32(),
    }
}

/// Rejects the token; `reason` (may be NULL) stays on the server side, the client gets
/// `{"status":"invalid_token"}`.
#[no_mangle]
pub extern "C" fn ksasl_token_verdict_reject(
    v: *mut ksasl_token_verdict,
    reason: *const c_char,
) -> ksasl_result {
    let Some(v) = (unsafe { v.as_mut() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    let r = opt_text(reason, "reason")
        .ok()
        .flatten()
        .unwrap_or("rejected by the host's validator");
    v.verdict = Some(Err(TokenRejection::invalid_token(
        ErrorCode::TokenRejected,
        r,
    )));
    KSASL_OK
}

/// A token-validation callback: judge `token` at `now_ms` and answer with
/// `ksasl_token_verdict_accept` or `_reject`. Return 0 (non-zero rejects the token).
pub type ksasl_token_validator_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        token: *const c_char,
        now_ms: i64,
        verdict: *mut ksasl_token_verdict,
    ) -> c_int,
>;

struct CallbackValidator {
    cb: unsafe extern "C" fn(*mut c_void, *const c_char, i64, *mut ksasl_token_verdict) -> c_int,
    userdata: Userdata,
}

impl TokenValidator for CallbackValidator {
    fn validate(&self, token: &str, now_ms: i64) -> Result<ValidatedToken, TokenRejection> {
        let t = cstring(token);
        let mut v = ksasl_token_verdict { verdict: None };
        let rc = unsafe { (self.cb)(self.userdata.ptr(), t.as_ptr(), now_ms, &mut v) };
        match (rc, v.verdict) {
            (0, Some(verdict)) => verdict,
            (0, None) => Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                "the validator callback gave no verdict",
            )),
            (rc, _) => Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                format!("the validator callback returned {rc}"),
            )),
        }
    }
}

/// Adds an OAUTHBEARER server whose tokens the host validates with `cb`. The library takes
/// `userdata` in every case: `free_userdata` (if given) is called when the registry no
/// longer needs it, and also at once if this call fails.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_oauthbearer_callback_server(
    r: *mut ksasl_registry,
    cb: ksasl_token_validator_cb,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, move |r| {
        let cb = cb.ok_or_else(|| Error::new(ErrorCode::NullArgument, "cb must not be NULL"))?;
        r.inner
            .register_oauthbearer_server(Arc::new(CallbackValidator { cb, userdata: ud }));
        Ok(())
    })
}

/// Refreshes expiring credentials on Kafka's schedule (librdkafka's shape). Thread-safe.
pub struct ksasl_refresher {
    pub(crate) inner: Arc<Refresher>,
    err: LastError,
}

impl Drop for ksasl_refresher {
    fn drop(&mut self) {
        // The callback holds this handle's address: it must not outlive the handle, even if
        // a tracker or registry keeps the refresher itself alive.
        self.inner.clear_refresh_callback();
    }
}

impl HasError for ksasl_refresher {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a refresher with `sasl.login.refresh.*` values (window factor 0.8, jitter 0.05,
/// min period 60 s, buffer 300 s are Kafka's defaults); out-of-range values fail with Kafka's
/// message (`ksasl_last_constructor_error`).
#[no_mangle]
pub extern "C" fn ksasl_refresher_new(
    window_factor: f64,
    window_jitter: f64,
    min_period_seconds: i64,
    buffer_seconds: i64,
    out: *mut *mut ksasl_refresher,
) -> ksasl_result {
    construct(out, || {
        let config = RefreshConfig {
            window_factor,
            window_jitter,
            min_period_seconds,
            buffer_seconds,
            ..Default::default()
        };
        Ok(ksasl_refresher {
            inner: Arc::new(Refresher::new(config, SharedRandom::default())?),
            err: LastError::default(),
        })
    })
}

/// Frees a refresher (NULL is a no-op); connections and trackers using it keep it alive.
#[no_mangle]
pub extern "C" fn ksasl_refresher_free(r: *mut ksasl_refresher) {
    free(r)
}

/// The detail of the refresher's last failure.
#[no_mangle]
pub extern "C" fn ksasl_refresher_last_error(r: *const ksasl_refresher) -> *const c_char {
    unsafe { r.as_ref() }.map_or(c"".as_ptr(), |r| r.err.ptr())
}

/// The refresh callback: fetch a token and answer with `ksasl_refresher_set_token` or
/// `ksasl_refresher_set_token_failure` (now, or later from any thread).
pub type ksasl_refresh_cb = Option<
    unsafe extern "C" fn(userdata: *mut c_void, refresher: *mut ksasl_refresher, now_ms: i64),
>;

/// Sets the refresh callback used by `ksasl_refresher_run_due`. The library takes
/// `userdata` in every case: `free_userdata` (if given) is called when the callback is
/// replaced or the refresher freed, and also at once if this call fails.
#[no_mangle]
pub extern "C" fn ksasl_refresher_set_refresh_callback(
    r: *mut ksasl_refresher,
    cb: ksasl_refresh_cb,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Arc::new(Userdata::new(userdata, free_userdata));
    let handle = r as usize;
    with(r, move |r| {
        let cb = cb.ok_or_else(|| Error::new(ErrorCode::NullArgument, "cb must not be NULL"))?;
        // The callback receives the C handle it was registered on, so it can answer through
        // the C API; the handle outlives the refresher's use of the callback because freeing
        // the handle frees the callback with it.
        r.inner.set_refresh_callback(move |_, now| unsafe {
            cb(ud.ptr(), handle as *mut ksasl_refresher, now)
        });
        Ok(())
    })
}

/// Runs the refresh callback for a request already claimed by `ksasl_refresher_poll` or
/// reported by `ksasl_tracker_poll` (`*refresh` = 1). Without a callback, the request is
/// answered as a failure.
#[no_mangle]
pub extern "C" fn ksasl_refresher_invoke_callback(
    r: *mut ksasl_refresher,
    now_ms: i64,
) -> ksasl_result {
    let Some(rr) = (unsafe { r.as_ref() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    let inner = rr.inner.clone();
    match catch_unwind(AssertUnwindSafe(|| inner.invoke_callback(now_ms))) {
        Ok(_) => KSASL_OK,
        Err(_) => KSASL_PANIC,
    }
}

/// Runs the callback if a refresh is due; `*ran` (may be NULL) tells whether it did.
#[no_mangle]
pub extern "C" fn ksasl_refresher_run_due(
    r: *mut ksasl_refresher,
    now_ms: i64,
    ran: *mut c_int,
) -> ksasl_result {
    let Some(rr) = (unsafe { r.as_ref() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    let inner = rr.inner.clone();
    // No borrow of the handle is held while the callback runs (it calls back into it).
    match catch_unwind(AssertUnwindSafe(|| inner.run_due(now_ms))) {
        Ok(x) => {
            put_opt(ran, as_int(x));
            KSASL_OK
        }
        Err(_) => KSASL_PANIC,
    }
}

/// Pull form: 1 when the host must fetch a credential now (the request is then outstanding).
#[no_mangle]
pub extern "C" fn ksasl_refresher_poll(r: *const ksasl_refresher, now_ms: i64) -> c_int {
    unsafe { r.as_ref() }.map_or(0, |r| as_int(r.inner.poll(now_ms)))
}

/// Installs a token: text, absolute expiry in ms, principal, and `n_extensions` extension
/// names and values (arrays may be NULL when `n_extensions` is 0).
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
        let mut ext = Vec::with_capacity(n_extensions);
        if n_extensions > 0 {
            if extension_names.is_null() || extension_values.is_null() {
                return Err(Error::new(
                    ErrorCode::NullArgument,
                    "extension arrays must not be NULL",
                ));
            }
            for i in 0..n_extensions {
                let (k, v) = unsafe { (*extension_names.add(i), *extension_values.add(i)) };
                ext.push((text(k, "extension name")?, text(v, "extension value")?));
            }
        }
        r.inner
            .set_token(
                text(token, "token")?,
                expiry_ms,
                text(principal, "principal")?,
                &ext,
                now_ms,
            )
            .map(|_| ())
    })
}

/// Reports a failed refresh; the old token stays while valid and the next attempt is due
/// after the retry backoff (10 s).
#[no_mangle]
pub extern "C" fn ksasl_refresher_set_token_failure(
    r: *mut ksasl_refresher,
    reason: *const c_char,
    now_ms: i64,
) -> ksasl_result {
    with(r, |r| {
        r.inner.set_token_failure(
            opt_text(reason, "reason")?.unwrap_or("refresh failed"),
            now_ms,
        )
    })
}

/// When a refresh is next due (ms; 0 means now, as for a refresher that holds nothing yet),
/// or -1 if none is scheduled (stopped, or a request is outstanding).
#[no_mangle]
pub extern "C" fn ksasl_refresher_next_deadline(r: *const ksasl_refresher) -> i64 {
    unsafe { r.as_ref() }
        .and_then(|r| r.inner.next_deadline())
        .map_or(-1, |d| d.max(0))
}

/// The generation of the current credential (0: none yet).
#[no_mangle]
pub extern "C" fn ksasl_refresher_generation(r: *const ksasl_refresher) -> u64 {
    unsafe { r.as_ref() }.map_or(0, |r| r.inner.generation())
}

/// Adds an OAUTHBEARER client that presents the refresher's current token.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_oauthbearer_client(
    reg: *mut ksasl_registry,
    r: *const ksasl_refresher,
) -> ksasl_result {
    with(reg, |reg| {
        let r = unsafe { r.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "refresher must not be NULL"))?;
        reg.inner.register_oauthbearer_client(r.inner.clone());
        Ok(())
    })
}

/// Tracks which connections use which credential generation.
pub struct ksasl_tracker {
    inner: Tracker,
    due: Vec<u64>,
    err: LastError,
}

impl HasError for ksasl_tracker {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates a tracker for `refresher`; after a refresh, connections on the old credential are
/// asked to re-authenticate spread over `spread_window_ms`.
#[no_mangle]
pub extern "C" fn ksasl_tracker_new(
    r: *const ksasl_refresher,
    spread_window_ms: i64,
    out: *mut *mut ksasl_tracker,
) -> ksasl_result {
    construct(out, || {
        let r = unsafe { r.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "refresher must not be NULL"))?;
        let config = TrackerConfig {
            spread_window_ms,
            ..Default::default()
        };
        Ok(ksasl_tracker {
            inner: Tracker::new(r.inner.clone(), config)?,
            due: Vec::new(),
            err: LastError::default(),
        })
    })
}

/// Frees a tracker (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_tracker_free(t: *mut ksasl_tracker) {
    free(t)
}

/// The detail of the tracker's last failure.
#[no_mangle]
pub extern "C" fn ksasl_tracker_last_error(t: *const ksasl_tracker) -> *const c_char {
    unsafe { t.as_ref() }.map_or(c"".as_ptr(), |t| t.err.ptr())
}

/// Records that connection `id` (re-)authenticated with credential `generation`; `lifetime_ms`,
/// `reauth_at_ms` and `expiry_ms` come from `ksasl_client_conn_session` (-1: none).
#[no_mangle]
pub extern "C" fn ksasl_tracker_authenticated(
    t: *mut ksasl_tracker,
    id: u64,
    generation: u64,
    lifetime_ms: i64,
    reauth_at_ms: i64,
    expiry_ms: i64,
) -> ksasl_result {
    with(t, |t| {
        let s = crate::kafka::client::ClientSession {
            lifetime_ms,
            reauth_at_ms: (reauth_at_ms >= 0).then_some(reauth_at_ms),
            expiry_ms: (expiry_ms >= 0).then_some(expiry_ms),
            latency_ms: 0,
        };
        t.inner.authenticated(id, generation, &s)
    })
}

/// Forgets a closed connection.
#[no_mangle]
pub extern "C" fn ksasl_tracker_forget(t: *mut ksasl_tracker, id: u64) -> ksasl_result {
    with(t, |t| {
        t.inner.forget(id);
        Ok(())
    })
}

/// The next instant to call `ksasl_tracker_poll` (-1: none; 0: now).
#[no_mangle]
pub extern "C" fn ksasl_tracker_next_deadline(t: *const ksasl_tracker) -> i64 {
    unsafe { t.as_ref() }
        .and_then(|t| t.inner.next_deadline())
        .map_or(-1, |d| d.max(0))
}

/// What is due at `now_ms`: `*refresh` is 1 when a credential must be fetched (answer the
/// refresher); `*ids`/`*n` list connections to re-authenticate (borrowed).
#[no_mangle]
pub extern "C" fn ksasl_tracker_poll(
    t: *mut ksasl_tracker,
    now_ms: i64,
    refresh: *mut c_int,
    ids: *mut *const u64,
    n: *mut usize,
) -> ksasl_result {
    with(t, |t| {
        need(refresh, "refresh")?;
        need(ids, "ids")?;
        need(n, "n")?;
        let p = t.inner.poll(now_ms);
        t.due = p.reauthenticate;
        put(refresh, as_int(p.refresh));
        put(ids, t.due.as_ptr());
        put(n, t.due.len());
        Ok(())
    })
}
