//! An optional background driver for hosts without an event loop: a thread that sleeps until
//! the next refresh deadline (from the wall clock), runs the refresh callback, and, with a
//! tracker, hands the host the connections to re-authenticate. It is outside the sans-IO
//! core: nothing else in the library starts threads or reads the clock.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, ErrorCode, Result};
use crate::io::gss::KerberosLogin;
use crate::random::OsRandom;
use crate::refresh::{ConnectionId, Refresher, Tracker};

/// Milliseconds since the Unix epoch, from the system clock.
pub fn wall_clock_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The longest a driver sleeps without checking (an answer may come from another thread, and
/// while a refresh is outstanding there is no deadline).
pub const MAX_SLEEP_MS: i64 = 1_000;

/// How long a driver (this module's thread, or a host's task in its own event loop) sleeps
/// before it polls again: until the `next_deadline` of a refresher or tracker, at most
/// [`MAX_SLEEP_MS`], never negative.
pub fn sleep_ms(next_deadline: Option<i64>, now_ms: i64) -> i64 {
    next_deadline.map_or(MAX_SLEEP_MS, |t| {
        t.saturating_sub(now_ms).clamp(0, MAX_SLEEP_MS)
    })
}

struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

/// A running background refresher. Stop it with [`BackgroundRefresher::stop`]; dropping it
/// stops and joins the thread too.
pub struct BackgroundRefresher {
    stop: Arc<Stop>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for BackgroundRefresher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundRefresher")
            .field("running", &self.thread.is_some())
            .finish()
    }
}

impl BackgroundRefresher {
    /// Drives `refresher` (its callback must be set) on a new thread.
    pub fn start(refresher: Arc<Refresher>) -> Result<Self> {
        Self::spawn(move |now| {
            refresher.run_due(now);
            refresher.next_deadline()
        })
    }

    /// Drives a tracker: runs the refresher's callback when a refresh is due and calls
    /// `reauthenticate` (never under a lock) with the connections to re-authenticate.
    pub fn start_with_tracker(
        tracker: Arc<Tracker>,
        reauthenticate: impl Fn(Vec<ConnectionId>) + Send + 'static,
    ) -> Result<Self> {
        Self::spawn(move |now| {
            let due = tracker.poll(now);
            if due.refresh {
                tracker.refresher().invoke_callback(now);
            }
            if !due.reauthenticate.is_empty() {
                reauthenticate(due.reauthenticate);
            }
            tracker.next_deadline()
        })
    }

    /// Drives a Kerberos login: logs in again whenever its schedule says so (a failed login
    /// is retried on the login's own retry plan).
    pub fn start_kerberos(login: Arc<KerberosLogin>) -> Result<Self> {
        Self::spawn(move |now| {
            let _ = login.poll(now, &OsRandom);
            login.next_login_ms()
        })
    }

    /// Logs in at an identity provider now (blocking: the first token, or the error, before
    /// anything else), then keeps `refresher`'s token fresh from `login` on a new thread,
    /// each token with `extensions`.
    #[cfg(feature = "http")]
    pub fn start_oidc(
        login: Arc<crate::io::http::OidcLogin>,
        refresher: Arc<Refresher>,
        extensions: crate::mech::oauthbearer::SaslExtensions,
    ) -> Result<Self> {
        if refresher.poll(wall_clock_ms()) {
            login.refresh(&refresher, &extensions, wall_clock_ms())?;
        }
        login.attach(&refresher, extensions);
        Self::start(refresher)
    }

    /// Keeps a JWKS fresh: fetches whenever the fetcher's validator says a fetch is due (at
    /// start, every refresh period, for an unknown `kid` within about a second, and on the
    /// retry backoff after a failure).
    #[cfg(feature = "http")]
    pub fn start_jwks(fetcher: Arc<crate::io::http::JwksFetcher>) -> Result<Self> {
        Self::spawn(move |now| Some(fetcher.poll(now)))
    }

    /// Each `start` fails (`INTERNAL`) only when the system refuses a new thread.
    fn spawn(mut step: impl FnMut(i64) -> Option<i64> + Send + 'static) -> Result<Self> {
        let stop = Arc::new(Stop {
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        });
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("ksasl-refresh".into())
            .spawn(move || loop {
                let now = wall_clock_ms();
                let next = step(now);
                let wait = sleep_ms(next, wall_clock_ms());
                let Ok(guard) = s.stopped.lock() else { return };
                if *guard {
                    return;
                }
                let (guard, _) = match s
                    .wake
                    .wait_timeout(guard, Duration::from_millis(wait as u64))
                {
                    Ok(r) => r,
                    Err(_) => return,
                };
                if *guard {
                    return;
                }
            })
            .map_err(|e| {
                Error::new(
                    ErrorCode::Internal,
                    format!("cannot start the refresh thread: {e}"),
                )
            })?;
        Ok(BackgroundRefresher {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the thread and waits for it to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Ok(mut s) = self.stop.stopped.lock() {
            *s = true;
        }
        self.stop.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for BackgroundRefresher {
    fn drop(&mut self) {
        self.shutdown();
    }
}
