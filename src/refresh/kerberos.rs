//! When to log in to Kerberos again: Kafka's `KerberosLogin` schedule
//! (`sasl.kerberos.ticket.renew.window.factor`, `.ticket.renew.jitter`,
//! `.min.time.before.relogin`), with one deliberate difference for short tickets.
//!
//! Kafka plans the next login at `start + (end - start) * (factor + jitter * r)` for the
//! ticket-granting ticket's start and end, and waits at least `min.time.before.relogin` after
//! the previous login. When a ticket lives less than that minimum, Kafka's plan ends up in
//! the past and its refresh thread exits ("NextRefresh ... is in the past"), so the client
//! stalls once the ticket expires. ksasl keeps the planned instant in that case: the minimum
//! gives way to the ticket's life, never the other way round.

use crate::error::{Error, ErrorCode, Result};

/// The Kerberos login schedule's settings, with Kafka's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KerberosRefreshConfig {
    /// `sasl.kerberos.ticket.renew.window.factor` (0.80).
    pub window_factor: f64,
    /// `sasl.kerberos.ticket.renew.jitter` (0.05).
    pub jitter: f64,
    /// `sasl.kerberos.min.time.before.relogin` (60,000 ms).
    pub min_time_before_relogin_ms: i64,
}

impl Default for KerberosRefreshConfig {
    fn default() -> Self {
        KerberosRefreshConfig {
            window_factor: 0.80,
            jitter: 0.05,
            min_time_before_relogin_ms: 60_000,
        }
    }
}

impl KerberosRefreshConfig {
    /// Each setting given, or Kafka's default: the window factor, the jitter and the minimum
    /// time before a relogin (ms). Checked by [`KerberosRefreshConfig::validate`].
    pub fn with_settings(
        window_factor: Option<f64>,
        jitter: Option<f64>,
        min_ms: Option<i64>,
    ) -> Self {
        let d = KerberosRefreshConfig::default();
        KerberosRefreshConfig {
            window_factor: window_factor.unwrap_or(d.window_factor),
            jitter: jitter.unwrap_or(d.jitter),
            min_time_before_relogin_ms: min_ms.unwrap_or(d.min_time_before_relogin_ms),
        }
    }

    /// Checks the values (Kafka accepts any double for the two factors; ksasl requires a
    /// window in (0, 1] and a jitter in [0, 1) so that the plan falls inside the ticket's
    /// life, and a non-negative minimum).
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::new(ErrorCode::InvalidConfig, what.to_string()));
        if !(self.window_factor > 0.0 && self.window_factor <= 1.0) {
            return bad("sasl.kerberos.ticket.renew.window.factor must be in (0, 1]");
        }
        if !(0.0..1.0).contains(&self.jitter) {
            return bad("sasl.kerberos.ticket.renew.jitter must be in [0, 1)");
        }
        if self.min_time_before_relogin_ms < 0 {
            return bad("sasl.kerberos.min.time.before.relogin must not be negative");
        }
        Ok(())
    }

    /// The next login after one at `login_ms` that got a ticket valid from `start_ms` to
    /// `end_ms`; `r` is a uniform random number in [0, 1) for the jitter.
    pub fn next_login_ms(&self, login_ms: i64, start_ms: i64, end_ms: i64, r: f64) -> i64 {
        let life = end_ms.saturating_sub(start_ms).max(0);
        let share = (self.window_factor + self.jitter * r.clamp(0.0, 1.0)).min(1.0);
        let planned = start_ms
            .saturating_add((life as f64 * share) as i64)
            .min(end_ms);
        let earliest = login_ms.saturating_add(self.min_time_before_relogin_ms);
        let at = if earliest < end_ms {
            planned.max(earliest)
        } else {
            planned
        };
        at.max(login_ms)
    }

    /// When to try again after a failed login at `now_ms`, while the current ticket (if any)
    /// lasts until `end_ms`: a tenth of the time left, between 1 s and the minimum relogin
    /// interval.
    pub fn retry_ms(&self, now_ms: i64, end_ms: Option<i64>) -> i64 {
        let cap = self.min_time_before_relogin_ms.max(1_000);
        let wait = match end_ms {
            Some(end) => (end.saturating_sub(now_ms) / 10).clamp(1_000, cap),
            None => cap.min(10_000),
        };
        now_ms.saturating_add(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    #[test]
    fn kafka_window_for_long_tickets() {
        let c = KerberosRefreshConfig::default();
        // A 10-hour ticket: 80 % to 85 % of its life.
        assert_eq!(c.next_login_ms(0, 0, 10 * H, 0.0), 8 * H);
        assert_eq!(c.next_login_ms(0, 0, 10 * H, 0.5), 8 * H + H / 4);
        // The window counts from the ticket's start, not from the login.
        assert_eq!(c.next_login_ms(5 * H, 4 * H, 14 * H, 0.0), 12 * H);
    }

    #[test]
    fn min_time_before_relogin_holds_while_the_ticket_allows_it() {
        let c = KerberosRefreshConfig::default();
        // A 70 s ticket: 80 % is 56 s, but the next login waits the full minute.
        assert_eq!(c.next_login_ms(0, 0, 70_000, 0.0), 60_000);
    }

    #[test]
    fn short_tickets_are_renewed_inside_their_life() {
        let c = KerberosRefreshConfig::default();
        // A 1-minute ticket: Kafka's thread gives up; ksasl logs in at 48 s to 51 s.
        assert_eq!(c.next_login_ms(0, 0, 60_000, 0.0), 48_000);
        assert_eq!(c.next_login_ms(0, 0, 60_000, 0.5), 49_500);
        // Never before the login itself, even for a ticket that started long ago.
        assert_eq!(c.next_login_ms(100_000, 0, 110_000, 0.0), 100_000);
    }

    #[test]
    fn retries_and_validation() {
        let c = KerberosRefreshConfig::default();
        assert_eq!(c.retry_ms(0, Some(600_000)), 60_000);
        assert_eq!(c.retry_ms(0, Some(30_000)), 3_000);
        assert_eq!(c.retry_ms(0, Some(0)), 1_000);
        assert_eq!(c.retry_ms(0, None), 10_000);
        assert!(c.validate().is_ok());
        for bad in [
            KerberosRefreshConfig {
                window_factor: 0.0,
                ..c
            },
            KerberosRefreshConfig {
                window_factor: 1.5,
                ..c
            },
            KerberosRefreshConfig { jitter: -0.1, ..c },
            KerberosRefreshConfig {
                jitter: f64::NAN,
                ..c
            },
            KerberosRefreshConfig {
                min_time_before_relogin_ms: -1,
                ..c
            },
        ] {
            assert_eq!(bad.validate().unwrap_err().code(), ErrorCode::InvalidConfig);
        }
    }
}
