//! The retry plan of one token request (Kafka's `Retry`, `sasl.login.retry.backoff.ms` and
//! `sasl.login.retry.backoff.max.ms`).

use crate::error::{Error, ErrorCode, Result};

/// Kafka's default first wait (`sasl.login.retry.backoff.ms`).
pub const DEFAULT_RETRY_BACKOFF_MS: i64 = 100;
/// Kafka's default budget (`sasl.login.retry.backoff.max.ms`).
pub const DEFAULT_RETRY_BACKOFF_MAX_MS: i64 = 10_000;

/// How long to wait between attempts of one request: attempt `n` (from 1) that failed in a
/// way worth retrying is followed by a wait of `backoff·2^(n−1)`, cut to what is left of the
/// budget `backoff_max` counted from the first attempt; when nothing is left the request has
/// failed, with the first attempt's error (as Kafka reports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPlan {
    backoff_ms: i64,
    backoff_max_ms: i64,
}

impl Default for RetryPlan {
    fn default() -> Self {
        RetryPlan {
            backoff_ms: DEFAULT_RETRY_BACKOFF_MS,
            backoff_max_ms: DEFAULT_RETRY_BACKOFF_MAX_MS,
        }
    }
}

impl RetryPlan {
    /// A plan; both values at least 0 and the first wait no longer than the budget.
    pub fn new(backoff_ms: i64, backoff_max_ms: i64) -> Result<Self> {
        if backoff_ms < 0 || backoff_max_ms < 0 || backoff_ms > backoff_max_ms {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!(
                    "retry backoff must be at least 0 and at most the maximum (got {backoff_ms} \
                     and {backoff_max_ms}; Kafka's defaults are {DEFAULT_RETRY_BACKOFF_MS} and \
                     {DEFAULT_RETRY_BACKOFF_MAX_MS})"
                ),
            ));
        }
        Ok(RetryPlan {
            backoff_ms,
            backoff_max_ms,
        })
    }

    /// The first wait.
    pub fn backoff_ms(&self) -> i64 {
        self.backoff_ms
    }

    /// The budget.
    pub fn backoff_max_ms(&self) -> i64 {
        self.backoff_max_ms
    }

    /// The wait after failed attempt `attempt` (from 1), `elapsed_ms` after the first attempt
    /// started; `None` when the budget is spent.
    pub fn wait_ms(&self, attempt: u32, elapsed_ms: i64) -> Option<i64> {
        let left = self.backoff_max_ms.saturating_sub(elapsed_ms.max(0));
        let shift = attempt.saturating_sub(1).min(40);
        let wait = self.backoff_ms.saturating_mul(1i64 << shift).min(left);
        (wait > 0).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_until_the_budget_is_spent() {
        let p = RetryPlan::default();
        assert_eq!(p.wait_ms(1, 0), Some(100));
        assert_eq!(p.wait_ms(2, 100), Some(200));
        assert_eq!(p.wait_ms(7, 6_300), Some(3_700));
        assert_eq!(p.wait_ms(8, 10_000), None);
        assert_eq!(p.wait_ms(60, 0), Some(10_000));
        assert_eq!(RetryPlan::new(0, 0).unwrap().wait_ms(1, 0), None);
    }

    #[test]
    fn bad_plans_are_refused() {
        assert!(RetryPlan::new(-1, 10).is_err());
        let e = RetryPlan::new(200, 100).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        assert!(e.message().contains("10000"), "{}", e.message());
    }
}
