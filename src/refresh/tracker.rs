//! The tracker: which live client connections authenticated with which credential
//! generation. When the refresher installs a new credential, the tracker asks every
//! connection still on an older one to re-authenticate (spread over a window), and it pulls
//! the refresh forward when a connection's next re-authentication comes before the
//! credential's refresh point while the credential would then have less than half of the
//! connection's session left (so the re-authentication presents the fresh credential instead
//! of opening a short session and needing another one soon after).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::refresher::Refresher;
use crate::error::{Error, ErrorCode, Result};
use crate::session::ClientSession;

/// The host's name for a connection.
pub type ConnectionId = u64;

/// Tracker settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackerConfig {
    /// Connections on an old credential are asked to re-authenticate spread evenly over
    /// this window after a refresh (0: all at once).
    pub spread_window_ms: i64,
    /// How long before a connection's re-authentication a refresh it needs is asked for.
    pub early_refresh_lead_ms: i64,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            spread_window_ms: 10_000,
            early_refresh_lead_ms: 1_000,
        }
    }
}

#[derive(Clone, Copy)]
struct Tracked {
    generation: u64,
    early_key: i64,
}

struct Inner {
    connections: HashMap<ConnectionId, Tracked>,
    /// Re-authentication times of connections that need a fresher credential by then.
    early: BTreeSet<(i64, ConnectionId)>,
    /// Connections to re-authenticate because of a refresh, with their times, in order.
    wave: VecDeque<(i64, ConnectionId)>,
    wave_generation: u64,
    seen_generation: u64,
}

/// What the host should do now.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TrackerPoll {
    /// Fetch a new credential (answer the refresher).
    pub refresh: bool,
    /// Start re-authentication on these connections.
    pub reauthenticate: Vec<ConnectionId>,
}

/// Tracks client connections against a [`Refresher`]. Thread-safe.
pub struct Tracker {
    refresher: Arc<Refresher>,
    config: TrackerConfig,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracker")
            .field("connections", &self.len())
            .finish()
    }
}

fn poisoned() -> Error {
    Error::new(ErrorCode::Internal, "tracker lock poisoned")
}

impl Tracker {
    /// A tracker for the connections that use `refresher`'s credentials.
    pub fn new(refresher: Arc<Refresher>, config: TrackerConfig) -> Result<Self> {
        if config.spread_window_ms < 0 || config.early_refresh_lead_ms < 0 {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "tracker windows must not be negative",
            ));
        }
        let seen = refresher.generation();
        Ok(Tracker {
            refresher,
            config,
            inner: Mutex::new(Inner {
                connections: HashMap::new(),
                early: BTreeSet::new(),
                wave: VecDeque::new(),
                wave_generation: seen,
                seen_generation: seen,
            }),
        })
    }

    /// The refresher.
    pub fn refresher(&self) -> &Arc<Refresher> {
        &self.refresher
    }

    /// Number of tracked connections.
    pub fn len(&self) -> usize {
        self.inner.lock().map(|i| i.connections.len()).unwrap_or(0)
    }

    /// Whether no connection is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records that `connection` (re-)authenticated with credential `generation` (the
    /// refresher's generation when the exchange started) and got `session`.
    pub fn authenticated(
        &self,
        connection: ConnectionId,
        generation: u64,
        session: &ClientSession,
    ) -> Result<()> {
        let mut i = self.inner.lock().map_err(|_| poisoned())?;
        if let Some(old) = i.connections.remove(&connection) {
            i.early.remove(&(old.early_key, connection));
        }
        // A fresh credential must exist by the next re-authentication if that comes before
        // the refresh point and the credential would then have less than half a session left.
        let mut early_key = i64::MIN;
        let refresh_at = self.refresher.next_deadline().unwrap_or(i64::MAX);
        if let (Some(at), Ok(c)) = (session.reauth_at_ms, self.refresher.current(i64::MIN)) {
            if c.generation == generation
                && at < refresh_at
                && c.expiring.expiry_ms - at < session.lifetime_ms / 2
            {
                early_key = at;
                i.early.insert((at, connection));
            }
        }
        i.connections.insert(
            connection,
            Tracked {
                generation,
                early_key,
            },
        );
        Ok(())
    }

    /// Forgets a closed connection.
    pub fn forget(&self, connection: ConnectionId) {
        if let Ok(mut i) = self.inner.lock() {
            if let Some(old) = i.connections.remove(&connection) {
                i.early.remove(&(old.early_key, connection));
            }
        }
    }

    /// The next instant at which [`Tracker::poll`] has something to do.
    pub fn next_deadline(&self) -> Option<i64> {
        let i = self.inner.lock().ok()?;
        let mut d = self.refresher.next_deadline();
        let mut consider = |t: i64| d = Some(d.map_or(t, |x| x.min(t)));
        if let Some(&(t, _)) = i.wave.front() {
            consider(t);
        }
        if self.refresher.generation() != i.seen_generation {
            // A new credential: fan out at once (the epoch is before any `now_ms`).
            consider(0);
        }
        if let Some(&(t, _)) = i.early.first() {
            consider(t.saturating_sub(self.config.early_refresh_lead_ms));
        }
        d
    }

    /// Everything due at `now_ms`: whether to fetch a credential, and which connections to
    /// re-authenticate now.
    pub fn poll(&self, now_ms: i64) -> TrackerPoll {
        let mut out = TrackerPoll::default();
        let Ok(mut i) = self.inner.lock() else {
            return out;
        };
        let generation = self.refresher.generation();
        if generation != i.seen_generation {
            self.fan_out(&mut i, generation, now_ms);
        }
        if let Some(&(t, _)) = i.early.first() {
            self.refresher
                .refresh_before(t.saturating_sub(self.config.early_refresh_lead_ms));
        }
        out.refresh = self.refresher.poll(now_ms);
        while let Some(&(t, c)) = i.wave.front() {
            if t > now_ms {
                break;
            }
            i.wave.pop_front();
            // Skip connections that closed or re-authenticated with a newer credential.
            if i.connections
                .get(&c)
                .is_some_and(|x| x.generation < i.wave_generation)
            {
                out.reauthenticate.push(c);
            }
        }
        out
    }

    fn fan_out(&self, i: &mut Inner, generation: u64, now_ms: i64) {
        i.seen_generation = generation;
        i.wave_generation = generation;
        // Every connection is now on an old credential; the early set no longer applies.
        i.early.clear();
        let mut stale: Vec<ConnectionId> = i
            .connections
            .iter()
            .filter(|(_, t)| t.generation < generation)
            .map(|(c, _)| *c)
            .collect();
        stale.sort_unstable();
        let n = stale.len().max(1) as i64;
        let window = self.config.spread_window_ms;
        i.wave.clear();
        i.wave.extend(stale.into_iter().enumerate().map(|(k, c)| {
            (
                now_ms.saturating_add((window as i128 * k as i128 / n as i128) as i64),
                c,
            )
        }));
        for t in i.connections.values_mut() {
            t.early_key = i64::MIN;
        }
    }
}
