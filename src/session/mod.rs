//! KIP-368 sessions: lifetimes, the client's re-authentication schedule, the policy after a
//! failed re-authentication, the per-request gate, and Kafka's authentication metrics.
//!
//! Everything takes `now_ms`; nothing here reads a clock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::Result;
use crate::random::RandomSource;
pub use crate::wire::{Gate, ReauthTiming};

/// A client connection's view of its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSession {
    /// The lifetime the broker granted (0: none; the connection never needs to re-authenticate).
    pub lifetime_ms: i64,
    /// When this client will re-authenticate, if ever.
    pub reauth_at_ms: Option<i64>,
    /// When the broker will refuse requests, as far as the client can tell (measured from the
    /// client's completion time, so slightly late).
    pub expiry_ms: Option<i64>,
    /// How long the (re-)authentication took, ms.
    pub latency_ms: i64,
}

/// One year: longer lifetimes are clamped to it (a broker sending `i64::MAX` must not
/// overflow anyone's arithmetic).
pub const ONE_YEAR_MS: i64 = 365 * 24 * 3600 * 1000;

/// The session a server grants at the end of an authentication (reference §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLifetime {
    /// What the final SaslAuthenticate response carries (0 = no re-authentication needed).
    pub lifetime_ms: i64,
    /// When the server will refuse the connection's requests, if ever.
    pub expiry_ms: Option<i64>,
}

/// Kafka's (3.3+) session lifetime: from the credential's absolute expiry and the
/// mechanism's `connections.max.reauth.ms` (only a positive value counts as set). Whenever
/// either is present the session expires, even when the lifetime computes to 0 (expired now).
pub fn session_lifetime(
    credential_expiry_ms: Option<i64>,
    max_reauth_ms: i64,
    now_ms: i64,
) -> SessionLifetime {
    let from_credential = credential_expiry_ms.map(|e| e.saturating_sub(now_ms).max(0));
    let from_config = (max_reauth_ms > 0).then_some(max_reauth_ms);
    let lifetime = match (from_credential, from_config) {
        (None, None) => {
            return SessionLifetime {
                lifetime_ms: 0,
                expiry_ms: None,
            }
        }
        (Some(c), None) => c,
        (None, Some(m)) => m,
        (Some(c), Some(m)) => c.min(m),
    };
    SessionLifetime {
        lifetime_ms: lifetime,
        expiry_ms: Some(now_ms.saturating_add(lifetime)),
    }
}

/// The client's re-authentication schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReauthPolicy {
    /// Where in the lifetime to re-authenticate.
    pub timing: ReauthTiming,
    /// The smallest delay between an authentication and the next (default 1 s); the delay is
    /// also at least 1.1 times the measured authentication latency. Both are capped below the
    /// lifetime.
    pub min_delay_ms: i64,
}

impl Default for ReauthPolicy {
    fn default() -> Self {
        ReauthPolicy {
            timing: ReauthTiming::Kafka,
            min_delay_ms: 1000,
        }
    }
}

/// A uniform number in [0, 1) from 53 random bits.
pub fn uniform(rng: &dyn RandomSource) -> Result<f64> {
    let mut b = [0u8; 8];
    rng.fill(&mut b)?;
    Ok((u64::from_be_bytes(b) >> 11) as f64 / (1u64 << 53) as f64)
}

impl ReauthPolicy {
    /// The delay from the client's completion of an authentication to its next
    /// re-authentication, or `None` when the server asked for none (lifetime 0).
    pub fn delay_ms(
        &self,
        lifetime_ms: i64,
        auth_latency_ms: i64,
        rng: &dyn RandomSource,
    ) -> Result<Option<i64>> {
        if lifetime_ms <= 0 || self.timing == ReauthTiming::Disabled {
            return Ok(None);
        }
        let l = lifetime_ms.min(ONE_YEAR_MS);
        let pct = match self.timing {
            ReauthTiming::Kafka => 0.85 + 0.10 * uniform(rng)?,
            ReauthTiming::Librdkafka => 0.90,
            ReauthTiming::FranzGo => 0.95 + 0.03 * uniform(rng)?,
            ReauthTiming::Disabled => return Ok(None),
        };
        let mut d = (l as f64 * pct).floor() as i64;
        if self.timing == ReauthTiming::FranzGo && l > 1000 {
            d = d.min(l - 1000);
        }
        let floor = self
            .min_delay_ms
            .max((auth_latency_ms.max(0) as f64 * 1.1).ceil() as i64);
        d = d.max(floor).min(l - 1).max(0);
        Ok(Some(d))
    }
}

/// What happens when a re-authentication fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FailedReauthPolicy {
    /// Kafka: the failure is fatal; the connection is closed.
    #[default]
    Close,
    /// Keep the connection on its old session until that expires, and retry the
    /// re-authentication after `initial_delay_ms`, then twice that, then four times that
    /// for every later attempt (default one minute).
    RetryUntilExpiry {
        /// The first delay.
        initial_delay_ms: i64,
    },
}

impl FailedReauthPolicy {
    /// The policy for a configured first retry delay: 0 closes (Kafka), a positive delay
    /// retries until the session expires; a negative one is an error.
    pub fn from_initial_delay_ms(initial_delay_ms: i64) -> crate::error::Result<Self> {
        match initial_delay_ms {
            0 => Ok(FailedReauthPolicy::Close),
            d if d > 0 => Ok(FailedReauthPolicy::RetryUntilExpiry {
                initial_delay_ms: d,
            }),
            _ => Err(crate::error::Error::new(
                crate::error::ErrorCode::InvalidArgument,
                "the re-authentication retry delay must not be negative",
            )),
        }
    }

    /// The seed's policy with its default one-minute first delay.
    pub fn retry() -> Self {
        FailedReauthPolicy::RetryUntilExpiry {
            initial_delay_ms: 60_000,
        }
    }

    /// The delay before retry number `attempt` (0 = after the first failure), or `None` if
    /// failures are fatal.
    pub fn retry_delay_ms(&self, attempt: u32) -> Option<i64> {
        match self {
            FailedReauthPolicy::Close => None,
            FailedReauthPolicy::RetryUntilExpiry { initial_delay_ms } => {
                let factor = match attempt {
                    0 => 1,
                    1 => 2,
                    _ => 4,
                };
                Some(initial_delay_ms.saturating_mul(factor))
            }
        }
    }
}

const WINDOW_MS: i64 = 30_000;

/// Two 30-second samples, as Kafka's default `metrics.sample.window.ms` and
/// `metrics.num.samples`.
#[derive(Default, Clone, Copy)]
struct Sample {
    used: bool,
    start_ms: i64,
    count: u64,
    sum: f64,
    max: f64,
}

#[derive(Default)]
struct Sampled {
    samples: [Sample; 2],
    current: usize,
    started: bool,
}

impl Sampled {
    fn roll(&mut self, now_ms: i64) {
        if !self.started {
            self.started = true;
            self.samples[self.current] = Sample {
                used: true,
                start_ms: now_ms,
                ..Default::default()
            };
            return;
        }
        let cur = self.samples[self.current];
        if now_ms >= cur.start_ms.saturating_add(WINDOW_MS) {
            self.current ^= 1;
            // A window that is more than one window old holds nothing current.
            let start = if now_ms >= cur.start_ms.saturating_add(2 * WINDOW_MS) {
                now_ms
            } else {
                cur.start_ms.saturating_add(WINDOW_MS)
            };
            if start == now_ms {
                self.samples[self.current ^ 1] = Sample {
                    used: true,
                    start_ms: now_ms.saturating_sub(WINDOW_MS),
                    ..Default::default()
                };
            }
            self.samples[self.current] = Sample {
                used: true,
                start_ms: start,
                ..Default::default()
            };
        }
    }

    fn record(&mut self, value: f64, now_ms: i64) {
        self.roll(now_ms);
        let s = &mut self.samples[self.current];
        s.count += 1;
        s.sum += value;
        s.max = if s.count == 1 {
            value
        } else {
            s.max.max(value)
        };
    }

    fn live(&self, now_ms: i64) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(move |s| {
            self.started && now_ms < s.start_ms.saturating_add(2 * WINDOW_MS) && s.count > 0
        })
    }

    /// Events per second over the samples, with Kafka's `Rate` window rule.
    fn rate(&self, now_ms: i64) -> f64 {
        let count: u64 = self.live(now_ms).map(|s| s.count).sum();
        if !self.started {
            return 0.0;
        }
        // Only samples that have been opened count: an unused one would date from the epoch.
        let oldest = self
            .samples
            .iter()
            .filter(|s| s.used)
            .map(|s| s.start_ms)
            .min()
            .unwrap_or(now_ms);
        let mut elapsed = now_ms.saturating_sub(oldest).max(0);
        let full = elapsed / WINDOW_MS;
        if full < 1 {
            elapsed += (1 - full) * WINDOW_MS;
        }
        count as f64 / (elapsed as f64 / 1000.0)
    }

    fn avg(&self, now_ms: i64) -> f64 {
        let (n, sum) = self
            .live(now_ms)
            .fold((0u64, 0.0), |(n, s), x| (n + x.count, s + x.sum));
        if n == 0 {
            f64::NAN
        } else {
            sum / n as f64
        }
    }

    fn max(&self, now_ms: i64) -> f64 {
        self.live(now_ms).map(|s| s.max).fold(f64::NAN, f64::max)
    }
}

struct Meter {
    total: AtomicU64,
    window: Mutex<Sampled>,
}

impl Meter {
    fn new() -> Self {
        Meter {
            total: AtomicU64::new(0),
            window: Mutex::new(Sampled::default()),
        }
    }

    fn record(&self, now_ms: i64) {
        self.total.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut w) = self.window.lock() {
            w.record(1.0, now_ms);
        }
    }

    fn rate(&self, now_ms: i64) -> f64 {
        self.window.lock().map(|w| w.rate(now_ms)).unwrap_or(0.0)
    }
}

/// Kafka's SASL authentication metrics (`Selector.SelectorMetrics` and the broker's
/// `expired-connections-killed-count`), shared by every connection of one configuration.
/// Counters are atomics; rates, averages and maxima use two 30-second samples as Kafka does.
pub struct SaslMetrics {
    successful_authentication: Meter,
    successful_authentication_no_reauth: AtomicU64,
    successful_reauthentication: Meter,
    failed_authentication: Meter,
    failed_reauthentication: Meter,
    reauthentication_latency: Mutex<Sampled>,
    expired_connections_killed: AtomicU64,
}

impl Default for SaslMetrics {
    fn default() -> Self {
        SaslMetrics {
            successful_authentication: Meter::new(),
            successful_authentication_no_reauth: AtomicU64::new(0),
            successful_reauthentication: Meter::new(),
            failed_authentication: Meter::new(),
            failed_reauthentication: Meter::new(),
            reauthentication_latency: Mutex::new(Sampled::default()),
            expired_connections_killed: AtomicU64::new(0),
        }
    }
}

impl std::fmt::Debug for SaslMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslMetrics")
            .field(
                "successful_authentication_total",
                &self.successful_authentication.total.load(Ordering::Relaxed),
            )
            .field(
                "successful_reauthentication_total",
                &self
                    .successful_reauthentication
                    .total
                    .load(Ordering::Relaxed),
            )
            .finish()
    }
}

impl SaslMetrics {
    /// New, zeroed metrics.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn authentication_succeeded(&self, reauth_capable: bool, now_ms: i64) {
        self.successful_authentication.record(now_ms);
        if !reauth_capable {
            self.successful_authentication_no_reauth
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn reauthentication_succeeded(&self, latency_ms: i64, now_ms: i64) {
        self.successful_reauthentication.record(now_ms);
        if let Ok(mut l) = self.reauthentication_latency.lock() {
            l.record(latency_ms as f64, now_ms);
        }
    }

    pub(crate) fn authentication_failed(&self, reauthenticating: bool, now_ms: i64) {
        if reauthenticating {
            self.failed_reauthentication.record(now_ms);
        } else {
            self.failed_authentication.record(now_ms);
        }
    }

    pub(crate) fn connection_expired(&self) {
        self.expired_connections_killed
            .fetch_add(1, Ordering::Relaxed);
    }

    /// A total by its Kafka name (`successful-authentication-total`, ...,
    /// `expired-connections-killed-count`).
    pub fn total(&self, name: &str) -> Option<u64> {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Some(match name {
            "successful-authentication-total" => load(&self.successful_authentication.total),
            "successful-authentication-no-reauth-total" => {
                load(&self.successful_authentication_no_reauth)
            }
            "successful-reauthentication-total" => load(&self.successful_reauthentication.total),
            "failed-authentication-total" => load(&self.failed_authentication.total),
            "failed-reauthentication-total" => load(&self.failed_reauthentication.total),
            "expired-connections-killed-count" => load(&self.expired_connections_killed),
            _ => return None,
        })
    }

    /// Every metric by its Kafka name, as of `now_ms`. Averages and maxima with no sample in
    /// the window are NaN, as in Kafka.
    pub fn snapshot(&self, now_ms: i64) -> BTreeMap<&'static str, f64> {
        let mut m = BTreeMap::new();
        for (name, meter) in [
            ("successful-authentication", &self.successful_authentication),
            (
                "successful-reauthentication",
                &self.successful_reauthentication,
            ),
            ("failed-authentication", &self.failed_authentication),
            ("failed-reauthentication", &self.failed_reauthentication),
        ] {
            let (total, rate): (&'static str, &'static str) = match name {
                "successful-authentication" => (
                    "successful-authentication-total",
                    "successful-authentication-rate",
                ),
                "successful-reauthentication" => (
                    "successful-reauthentication-total",
                    "successful-reauthentication-rate",
                ),
                "failed-authentication" => {
                    ("failed-authentication-total", "failed-authentication-rate")
                }
                _ => (
                    "failed-reauthentication-total",
                    "failed-reauthentication-rate",
                ),
            };
            m.insert(total, meter.total.load(Ordering::Relaxed) as f64);
            m.insert(rate, meter.rate(now_ms));
        }
        m.insert(
            "successful-authentication-no-reauth-total",
            self.successful_authentication_no_reauth
                .load(Ordering::Relaxed) as f64,
        );
        m.insert(
            "expired-connections-killed-count",
            self.expired_connections_killed.load(Ordering::Relaxed) as f64,
        );
        let (avg, max) = self
            .reauthentication_latency
            .lock()
            .map(|l| (l.avg(now_ms), l.max(now_ms)))
            .unwrap_or((f64::NAN, f64::NAN));
        m.insert("reauthentication-latency-avg", avg);
        m.insert("reauthentication-latency-max", max);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetime_table() {
        let now = 1_000_000;
        assert_eq!(
            session_lifetime(None, 0, now),
            SessionLifetime {
                lifetime_ms: 0,
                expiry_ms: None
            }
        );
        assert_eq!(
            session_lifetime(None, -5, now),
            SessionLifetime {
                lifetime_ms: 0,
                expiry_ms: None
            }
        );
        assert_eq!(
            session_lifetime(None, 600_000, now),
            SessionLifetime {
                lifetime_ms: 600_000,
                expiry_ms: Some(now + 600_000)
            }
        );
        assert_eq!(
            session_lifetime(Some(now + 1_200_000), 0, now),
            SessionLifetime {
                lifetime_ms: 1_200_000,
                expiry_ms: Some(now + 1_200_000)
            }
        );
        assert_eq!(
            session_lifetime(Some(now + 1_200_000), 3_600_000, now),
            SessionLifetime {
                lifetime_ms: 1_200_000,
                expiry_ms: Some(now + 1_200_000)
            }
        );
        assert_eq!(
            session_lifetime(Some(now + 9_000_000), 3_600_000, now).lifetime_ms,
            3_600_000
        );
        // An already-expired credential: lifetime 0 and a session that is expired now.
        assert_eq!(
            session_lifetime(Some(now - 5), 3_600_000, now),
            SessionLifetime {
                lifetime_ms: 0,
                expiry_ms: Some(now)
            }
        );
        assert_eq!(
            session_lifetime(Some(now - 5), 0, now),
            SessionLifetime {
                lifetime_ms: 0,
                expiry_ms: Some(now)
            }
        );
    }

    #[test]
    fn retry_schedule() {
        let p = FailedReauthPolicy::retry();
        let d: Vec<_> = (0..5).map(|a| p.retry_delay_ms(a).unwrap()).collect();
        assert_eq!(d, [60_000, 120_000, 240_000, 240_000, 240_000]);
        assert_eq!(FailedReauthPolicy::Close.retry_delay_ms(0), None);
    }

    #[test]
    fn rates_right_after_the_first_event() {
        // Found by the Python real-client test: with one sample in use the rate divided by
        // the time since the epoch.
        let m = SaslMetrics::new();
        m.authentication_succeeded(true, 1_800_000_000_000);
        m.authentication_succeeded(true, 1_800_000_000_500);
        let r = m.snapshot(1_800_000_001_000)["successful-authentication-rate"];
        // Kafka's Rate: one second elapsed, plus one full window while fewer than one has passed.
        assert!((r - 2.0 / 31.0).abs() < 1e-9, "{r}");
    }

    #[test]
    fn rates_use_two_thirty_second_samples() {
        let m = SaslMetrics::new();
        for i in 0..30 {
            m.authentication_succeeded(true, 1_000 + i * 1000);
        }
        let s = m.snapshot(31_000);
        assert_eq!(s["successful-authentication-total"], 30.0);
        // 30 events over at least one full window (30 s + what elapsed).
        assert!(
            (s["successful-authentication-rate"] - 30.0 / 30.0).abs() < 0.05,
            "{}",
            s["successful-authentication-rate"]
        );
        // Long after, the samples have aged out.
        assert_eq!(m.snapshot(1_000_000)["successful-authentication-rate"], 0.0);
        assert!(s["reauthentication-latency-avg"].is_nan());
        m.reauthentication_succeeded(10, 40_000);
        m.reauthentication_succeeded(30, 41_000);
        let s = m.snapshot(42_000);
        assert_eq!(s["reauthentication-latency-avg"], 20.0);
        assert_eq!(s["reauthentication-latency-max"], 30.0);
    }
}
