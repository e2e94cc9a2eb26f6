//! `ksasl_tracker`: which connections use which credential generation of a refresher.

use std::ffi::c_int;

use super::boundary::*;
use super::refresher::ksasl_refresher;
use crate::refresh::{Tracker, TrackerConfig};
use crate::session::ClientSession;

/// Tracks connections against a refresher's credentials. Thread-safe.
pub struct ksasl_tracker {
    pub(crate) inner: Tracker,
    pub(crate) due: Vec<u64>,
    err: LastError,
}
handle!(ksasl_tracker(Tracker, due));

/// Creates a tracker for `refresher`: after a refresh, connections on the old credential are
/// asked to re-authenticate spread over `spread_window_ms`.
#[no_mangle]
pub extern "C" fn ksasl_tracker_new(
    refresher: *const ksasl_refresher,
    spread_window_ms: i64,
    out: *mut *mut ksasl_tracker,
) -> ksasl_result {
    construct(out, || {
        let r = arg(refresher, "refresher")?.inner.clone();
        let config = TrackerConfig {
            spread_window_ms,
            ..Default::default()
        };
        let inner = Tracker::new(r, config)?;
        Ok(ksasl_tracker::new(inner))
    })
}

/// Records that connection `id` (re-)authenticated with credential `generation`;
/// `lifetime_ms`, `reauth_at_ms` and `expiry_ms` as `ksasl_client_connection_session` gives
/// them (-1: none).
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
        let (reauth_at_ms, expiry_ms) = (opt_ms(reauth_at_ms), opt_ms(expiry_ms));
        let s = ClientSession {
            lifetime_ms,
            reauth_at_ms,
            expiry_ms,
            latency_ms: 0,
        };
        t.inner.authenticated(id, generation, &s)
    })
}

/// What is due at `now_ms`: `*refresh` 1 when a credential must be fetched (answer the
/// refresher); `*ids`/`*n` the connections to re-authenticate (borrowed until the next call).
#[no_mangle]
pub extern "C" fn ksasl_tracker_poll(
    t: *mut ksasl_tracker,
    now_ms: i64,
    refresh: *mut c_int,
    ids: *mut *const u64,
    n: *mut usize,
) -> ksasl_result {
    with(t, |t| {
        need!(refresh, ids, n);
        let p = t.inner.poll(now_ms);
        t.due = p.reauthenticate;
        put(refresh, as_int(p.refresh));
        put(ids, t.due.as_ptr());
        Ok(put(n, t.due.len()))
    })
}
