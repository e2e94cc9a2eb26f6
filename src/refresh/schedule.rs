//! Kafka's refresh schedule (`ExpiringCredentialRefreshingLogin`): the configuration, the
//! next refresh instant of a credential, and the checks on a credential's expiry.

use crate::error::{Error, ErrorCode, Result};
use crate::mech::oauthbearer::java_double;

/// What Kafka's refresh logic knows about a credential.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpiringCredential {
    /// When the credential became valid (`iat` of a token), ms; the refresh window is
    /// measured from here when known.
    pub start_ms: Option<i64>,
    /// When it expires, ms since the epoch (required).
    pub expiry_ms: i64,
    /// A credential that cannot be refreshed past this instant (never set for OAuth tokens).
    pub absolute_last_refresh_ms: Option<i64>,
}

/// `sasl.login.refresh.*` and the retry backoff, with Kafka's defaults; built and checked by
/// [`RefreshConfigBuilder`], immutable afterwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefreshConfig {
    window_factor: f64,
    window_jitter: f64,
    min_period_seconds: i64,
    buffer_seconds: i64,
    relogin_allowed_before_logout: bool,
    retry_backoff_ms: i64,
    retry_backoff_max_ms: i64,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        RefreshConfig {
            window_factor: 0.8,
            window_jitter: 0.05,
            min_period_seconds: 60,
            buffer_seconds: 300,
            relogin_allowed_before_logout: true,
            retry_backoff_ms: 10_000,
            retry_backoff_max_ms: 10_000,
        }
    }
}

/// Sets the values of a [`RefreshConfig`]; [`RefreshConfigBuilder::build`] checks them all
/// with Kafka's ranges and messages (`INVALID_CONFIG`). Unset values keep Kafka's defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefreshConfigBuilder(RefreshConfig);

impl RefreshConfigBuilder {
    /// `sasl.login.refresh.window.factor` (0.8, in [0.5, 1.0]).
    pub fn window_factor(&mut self, v: f64) -> &mut Self {
        self.0.window_factor = v;
        self
    }

    /// `sasl.login.refresh.window.jitter` (0.05, in [0.0, 0.25]).
    pub fn window_jitter(&mut self, v: f64) -> &mut Self {
        self.0.window_jitter = v;
        self
    }

    /// `sasl.login.refresh.min.period.seconds` (60, in [0, 900]).
    pub fn min_period_seconds(&mut self, v: i64) -> &mut Self {
        self.0.min_period_seconds = v;
        self
    }

    /// `sasl.login.refresh.buffer.seconds` (300, in [0, 3600]).
    pub fn buffer_seconds(&mut self, v: i64) -> &mut Self {
        self.0.buffer_seconds = v;
        self
    }

    /// Keep trying after the credential expired (true: OAUTHBEARER's relogin before logout).
    pub fn relogin_allowed_before_logout(&mut self, v: bool) -> &mut Self {
        self.0.relogin_allowed_before_logout = v;
        self
    }

    /// `sasl.login.retry.backoff.ms` (10 000): the wait after a failed refresh.
    pub fn retry_backoff_ms(&mut self, v: i64) -> &mut Self {
        self.0.retry_backoff_ms = v;
        self
    }

    /// `sasl.login.retry.backoff.max.ms`: equal to the backoff (Kafka's fixed 10 s) unless
    /// raised, in which case the wait doubles per failure up to it.
    pub fn retry_backoff_max_ms(&mut self, v: i64) -> &mut Self {
        self.0.retry_backoff_max_ms = v;
        self
    }

    /// The configuration, if every value is in range.
    pub fn build(&self) -> Result<RefreshConfig> {
        self.0.validate()?;
        Ok(self.0)
    }
}

fn range_error(name: &str, value: String, bound: &str, limit: String) -> Error {
    Error::new(
        ErrorCode::InvalidConfig,
        format!("Invalid value {value} for configuration {name}: Value must be {bound} {limit}"),
    )
}

/// Fails unless `v` lies in `[lo, hi]` (NaN counts as too low), printing numbers as Java does.
fn check_f64_range(name: &str, v: f64, lo: f64, hi: f64) -> Result<()> {
    if v.is_nan() || v < lo {
        return Err(range_error(
            name,
            java_double(v),
            "at least",
            java_double(lo),
        ));
    }
    if v > hi {
        return Err(range_error(
            name,
            java_double(v),
            "no more than",
            java_double(hi),
        ));
    }
    Ok(())
}

/// Fails unless the integer `v` lies in `[lo, hi]`, with Kafka's range message.
fn check_i64_range(name: &str, v: i64, lo: i64, hi: i64) -> Result<()> {
    if v < lo {
        return Err(range_error(name, v.to_string(), "at least", lo.to_string()));
    }
    if v > hi {
        return Err(range_error(
            name,
            v.to_string(),
            "no more than",
            hi.to_string(),
        ));
    }
    Ok(())
}

impl RefreshConfig {
    /// A builder starting from Kafka's defaults.
    pub fn builder() -> RefreshConfigBuilder {
        RefreshConfigBuilder::default()
    }

    /// `sasl.login.refresh.window.factor`.
    pub fn window_factor(&self) -> f64 {
        self.window_factor
    }

    /// `sasl.login.refresh.window.jitter`.
    pub fn window_jitter(&self) -> f64 {
        self.window_jitter
    }

    /// `sasl.login.refresh.min.period.seconds`.
    pub fn min_period_seconds(&self) -> i64 {
        self.min_period_seconds
    }

    /// `sasl.login.refresh.buffer.seconds`.
    pub fn buffer_seconds(&self) -> i64 {
        self.buffer_seconds
    }

    /// Whether refreshing goes on after the credential expired.
    pub fn relogin_allowed_before_logout(&self) -> bool {
        self.relogin_allowed_before_logout
    }

    /// The wait after a failed refresh.
    pub fn retry_backoff_ms(&self) -> i64 {
        self.retry_backoff_ms
    }

    /// The longest wait after repeated failures.
    pub fn retry_backoff_max_ms(&self) -> i64 {
        self.retry_backoff_max_ms
    }

    /// Checks the ranges Kafka's client configuration enforces, with Kafka's messages.
    fn validate(&self) -> Result<()> {
        check_f64_range(
            "sasl.login.refresh.window.factor",
            self.window_factor,
            0.5,
            1.0,
        )?;
        check_f64_range(
            "sasl.login.refresh.window.jitter",
            self.window_jitter,
            0.0,
            0.25,
        )?;
        check_i64_range(
            "sasl.login.refresh.min.period.seconds",
            self.min_period_seconds,
            0,
            900,
        )?;
        check_i64_range(
            "sasl.login.refresh.buffer.seconds",
            self.buffer_seconds,
            0,
            3600,
        )?;
        if self.retry_backoff_ms <= 0 || self.retry_backoff_max_ms < self.retry_backoff_ms {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "retry backoff must be positive and not above its maximum",
            ));
        }
        Ok(())
    }

    /// The wait before refresh attempt `failures` + 1 after `failures` failures.
    pub fn retry_delay_ms(&self, failures: u32) -> i64 {
        let mut d = self.retry_backoff_ms;
        for _ in 1..failures.min(32) {
            d = d.saturating_mul(2);
        }
        d.min(self.retry_backoff_max_ms)
    }
}

/// When to refresh next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshAt {
    /// At this instant (ms).
    At(i64),
    /// Never again (the credential cannot be refreshed, or expired without relogin).
    Stop,
}

/// Kafka's next refresh instant (reference §3.2), with the jitter draw `r` in [0, 1) given.
pub fn next_refresh(
    credential: Option<&ExpiringCredential>,
    now_ms: i64,
    config: &RefreshConfig,
    r: f64,
) -> RefreshAt {
    let Some(c) = credential else {
        return RefreshAt::At(now_ms.saturating_add(10_000));
    };
    let exp = c.expiry_ms;
    if now_ms > exp {
        return if config.relogin_allowed_before_logout {
            RefreshAt::At(now_ms.saturating_add(10_000))
        } else {
            RefreshAt::Stop
        };
    }
    if c.absolute_last_refresh_ms.is_some_and(|l| l < exp) {
        return RefreshAt::Stop;
    }
    let start = c.start_ms.unwrap_or(now_ms);
    let pct = config.window_factor + config.window_jitter * r;
    let p = 1000 * config.min_period_seconds;
    let b = 1000 * config.buffer_seconds;
    if now_ms.saturating_add(p).saturating_add(b) > exp {
        return RefreshAt::At(now_ms.saturating_add(((exp as f64 - now_ms as f64) * pct) as i64));
    }
    let proposed = start.saturating_add(((exp as f64 - start as f64) * pct) as i64);
    if proposed > exp - b {
        RefreshAt::At(exp - b)
    } else if proposed < now_ms.saturating_add(p) {
        RefreshAt::At(now_ms.saturating_add(p))
    } else {
        RefreshAt::At(proposed)
    }
}

/// Checks that an expiry is an absolute time in ms since the epoch and lies ahead, with a
/// message that says what looks wrong.
pub fn check_expiry(expiry_ms: i64, now_ms: i64) -> Result<()> {
    let bad = |m: String| Err(Error::new(ErrorCode::InvalidCredentialExpiry, m));
    const TEN_YEARS_MS: i64 = 10 * 365 * 24 * 3600 * 1000;
    if expiry_ms <= 0 {
        return bad(format!("the credential expiry {expiry_ms} must be a positive absolute time in milliseconds since the epoch"));
    }
    if now_ms > TEN_YEARS_MS && expiry_ms < now_ms / 100 {
        let hint = if (expiry_ms - now_ms / 1000).abs() < TEN_YEARS_MS / 1000 {
            "it looks like seconds since the epoch"
        } else {
            "it looks like a relative lifetime"
        };
        return bad(format!(
            "the credential expiry {expiry_ms} is far below the current time {now_ms} in milliseconds since the epoch: {hint}; pass an absolute time in milliseconds"
        ));
    }
    if expiry_ms <= now_ms {
        return bad(format!(
            "the credential expiry {expiry_ms} is in the past (now is {now_ms})"
        ));
    }
    if expiry_ms - now_ms > TEN_YEARS_MS {
        return bad(format!(
            "the credential expiry {expiry_ms} is more than ten years ahead of now ({now_ms}): it looks like microseconds or nanoseconds"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_795_000_000_000;
    const S: i64 = 1000;

    fn cred(start: Option<i64>, exp: i64) -> ExpiringCredential {
        ExpiringCredential {
            start_ms: start,
            expiry_ms: exp,
            absolute_last_refresh_ms: None,
        }
    }

    fn at(c: Option<&ExpiringCredential>, now: i64, r: f64) -> i64 {
        match next_refresh(c, now, &RefreshConfig::default(), r) {
            RefreshAt::At(t) => t,
            RefreshAt::Stop => panic!("stopped"),
        }
    }

    #[test]
    fn reference_worked_examples() {
        // 1-hour token, fresh: 48:00 to 51:00.
        let c = cred(Some(T), T + 3600 * S);
        assert_eq!(at(Some(&c), T, 0.0), T + 2880 * S);
        assert_eq!(at(Some(&c), T, 0.5), T + 2970 * S);
        assert!(at(Some(&c), T, 0.999_999) < T + 3060 * S);
        // No iat: the same, relative to now.
        let c = cred(None, T + 3600 * S);
        assert_eq!(at(Some(&c), T, 0.0), T + 2880 * S);
        // Fetched 20 minutes late: still measured from iat, so 28-31 minutes from now.
        let c = cred(Some(T), T + 3600 * S);
        assert_eq!(at(Some(&c), T + 1200 * S, 0.0), T + 2880 * S);
        assert!(at(Some(&c), T + 1200 * S, 0.999) < T + 3060 * S);
        // 10-minute token: the end buffer wins, T + 300 s.
        let c = cred(Some(T), T + 600 * S);
        assert_eq!(at(Some(&c), T, 0.0), T + 300 * S);
        assert_eq!(at(Some(&c), T, 0.99), T + 300 * S);
        // 5-minute token: shorter than P + B, so now + 300 s * pct: [240, 255) s.
        let c = cred(Some(T), T + 300 * S);
        assert_eq!(at(Some(&c), T, 0.0), T + 240 * S);
        assert_eq!(at(Some(&c), T, 0.5), T + 247_500);
        // 24-hour token, 23 hours old: the minimum period, now + 60 s.
        let c = cred(Some(T), T + 24 * 3600 * S);
        assert_eq!(
            at(Some(&c), T + 23 * 3600 * S, 0.3),
            T + 23 * 3600 * S + 60 * S
        );
        // F = 1.0, J = 0.25: past the end, so exp - 300 s.
        let cfg = RefreshConfig {
            window_factor: 1.0,
            window_jitter: 0.25,
            ..Default::default()
        };
        let c = cred(Some(T), T + 3600 * S);
        assert_eq!(
            next_refresh(Some(&c), T, &cfg, 0.0),
            RefreshAt::At(T + 3300 * S)
        );
        // Expired at computation: retry in 10 s (OAUTHBEARER), or stop.
        assert_eq!(at(Some(&c), T + 3601 * S, 0.0), T + 3611 * S);
        let no_relogin = RefreshConfig {
            relogin_allowed_before_logout: false,
            ..Default::default()
        };
        assert_eq!(
            next_refresh(Some(&c), T + 3601 * S, &no_relogin, 0.0),
            RefreshAt::Stop
        );
        // No credential: 10 s. An absolute last refresh before the expiry: stop.
        assert_eq!(at(None, T, 0.0), T + 10 * S);
        let c = ExpiringCredential {
            start_ms: Some(T),
            expiry_ms: T + 3600 * S,
            absolute_last_refresh_ms: Some(T + 1800 * S),
        };
        assert_eq!(
            next_refresh(Some(&c), T, &RefreshConfig::default(), 0.0),
            RefreshAt::Stop
        );
    }

    #[test]
    fn ranges_use_kafka_messages() {
        let e = |c: RefreshConfig| c.validate().unwrap_err().message().to_string();
        assert_eq!(
            e(RefreshConfig { window_factor: 0.4, ..Default::default() }),
            "Invalid value 0.4 for configuration sasl.login.refresh.window.factor: Value must be at least 0.5"
        );
        assert_eq!(
            e(RefreshConfig { window_factor: 1.5, ..Default::default() }),
            "Invalid value 1.5 for configuration sasl.login.refresh.window.factor: Value must be no more than 1.0"
        );
        assert_eq!(
            e(RefreshConfig { window_jitter: 0.3, ..Default::default() }),
            "Invalid value 0.3 for configuration sasl.login.refresh.window.jitter: Value must be no more than 0.25"
        );
        assert_eq!(
            e(RefreshConfig { min_period_seconds: 901, ..Default::default() }),
            "Invalid value 901 for configuration sasl.login.refresh.min.period.seconds: Value must be no more than 900"
        );
        assert_eq!(
            e(RefreshConfig { buffer_seconds: -1, ..Default::default() }),
            "Invalid value -1 for configuration sasl.login.refresh.buffer.seconds: Value must be at least 0"
        );
        assert!(RefreshConfig::default().validate().is_ok());
        let edges = RefreshConfig {
            window_factor: 1.0,
            window_jitter: 0.25,
            min_period_seconds: 900,
            buffer_seconds: 3600,
            ..Default::default()
        };
        assert!(edges.validate().is_ok());
    }

    #[test]
    fn expiry_checks() {
        let now = T;
        assert!(check_expiry(now + 3_600_000, now).is_ok());
        for (bad, needle) in [
            (0, "positive"),
            (-5, "positive"),
            (now - 1, "in the past"),
            (now, "in the past"),
            (now / 1000 + 3600, "seconds since the epoch"),
            (3_600_000, "relative lifetime"),
            (3600, "relative lifetime"),
            (now * 1000, "microseconds"),
        ] {
            let e = check_expiry(bad, now).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidCredentialExpiry);
            assert!(e.message().contains(needle), "{bad}: {}", e.message());
        }
    }

    #[test]
    fn retry_backoff() {
        let fixed = RefreshConfig::default();
        assert_eq!(
            (1..5).map(|f| fixed.retry_delay_ms(f)).collect::<Vec<_>>(),
            [10_000; 4]
        );
        let exp = RefreshConfig {
            retry_backoff_max_ms: 60_000,
            ..Default::default()
        };
        assert_eq!(
            (1..6).map(|f| exp.retry_delay_ms(f)).collect::<Vec<_>>(),
            [10_000, 20_000, 40_000, 60_000, 60_000]
        );
    }
}
