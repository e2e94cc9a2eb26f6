//! Credential refresh scheduling (Kafka's `ExpiringCredentialRefreshingLogin`), a refresher
//! with librdkafka's shape, and a tracker that re-authenticates the connections still using
//! an old credential.
//!
//! Everything is sans-IO: time comes in as `now_ms`, each object reports its next deadline,
//! and the host (or the optional [`background`](crate::background) driver) calls back then.

mod kerberos;
mod refresher;
mod schedule;
mod tracker;

pub use kerberos::KerberosRefreshConfig;
pub use refresher::{Credential, CredentialValue, RefreshHandle, Refresher};
pub use schedule::{
    check_expiry, next_refresh, ExpiringCredential, RefreshAt, RefreshConfig, RefreshConfigBuilder,
};
pub use tracker::{ConnectionId, Tracker, TrackerConfig, TrackerPoll};
