//! A Kerberos login that renews itself: the ticket-granting ticket a GSSAPI client's contexts
//! use, obtained from a keytab (no `kinit`) or read from a credential cache, and replaced on
//! Kafka's `sasl.kerberos.ticket.renew.*` schedule ([`KerberosRefreshConfig`]).
//!
//! The object is shared: the client mechanism takes [`KerberosLogin::current`] at the start of
//! every (re-)authentication, and whoever drives time (the host's loop, or
//! [`BackgroundRefresher::start_kerberos`](crate::background::BackgroundRefresher::start_kerberos))
//! calls [`KerberosLogin::poll`] at [`KerberosLogin::next_login_ms`].

use std::sync::{Arc, Mutex};

use super::sys;
use super::system::{Credential, InitiatorFactory};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::gssapi::context::GssInitiatorFactory;
use crate::random::RandomSource;
use crate::refresh::KerberosRefreshConfig;

/// Where a login's ticket comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginSource {
    /// A new ticket for `principal` from the key in `keytab` at every login (JAAS
    /// `useKeyTab=true keyTab=... principal=...`).
    Keytab {
        /// `alice@EXAMPLE.COM`.
        principal: String,
        /// The keytab's path.
        keytab: String,
    },
    /// The ticket in a credential cache someone else keeps fresh (JAAS `useTicketCache=true`);
    /// `None` for the default cache.
    Cache {
        /// The cache's name (`FILE:/tmp/krb5cc_1000`).
        cache: Option<String>,
        /// The principal to pick from the cache.
        principal: Option<String>,
    },
}

impl LoginSource {
    /// The source the JAAS `Krb5LoginModule` options describe: with a keytab, a login as
    /// `principal` (required) from it; without, the ticket in `cache` (NULL: the default
    /// cache), for `principal` when given.
    pub fn from_settings(
        principal: Option<&str>,
        keytab: Option<&str>,
        cache: Option<&str>,
    ) -> Result<Self> {
        let given = |v: Option<&str>| v.filter(|s| !s.is_empty()).map(str::to_string);
        match (given(keytab), given(principal)) {
            (Some(keytab), Some(principal)) => Ok(LoginSource::Keytab { principal, keytab }),
            (Some(_), None) => Err(Error::new(
                ErrorCode::InvalidConfig,
                "a Kerberos login from a keytab needs the principal (JAAS principal=...)",
            )),
            (None, principal) => Ok(LoginSource::Cache {
                cache: given(cache),
                principal,
            }),
        }
    }
}

#[derive(Default)]
struct State {
    credential: Option<Arc<Credential>>,
    end_ms: Option<i64>,
    next_ms: Option<i64>,
    logins: u64,
    failures: u64,
    last_error: Option<Error>,
}

/// A renewing Kerberos login. Every method is safe to call from several threads.
pub struct KerberosLogin {
    source: LoginSource,
    config: KerberosRefreshConfig,
    state: Mutex<State>,
}

impl std::fmt::Debug for KerberosLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KerberosLogin")
            .field("source", &self.source)
            .field("next_login_ms", &self.next_login_ms())
            .finish_non_exhaustive()
    }
}

fn uniform(random: &dyn RandomSource) -> f64 {
    let mut b = [0u8; 8];
    match random.fill(&mut b) {
        Ok(()) => (u64::from_be_bytes(b) >> 11) as f64 / (1u64 << 53) as f64,
        Err(_) => 0.0,
    }
}

impl KerberosLogin {
    /// A login from `source` with `config`'s schedule; nothing happens until
    /// [`KerberosLogin::login`] or [`KerberosLogin::poll`].
    pub fn new(source: LoginSource, config: KerberosRefreshConfig) -> Result<Self> {
        config.validate()?;
        if let LoginSource::Keytab { principal, keytab } = &source {
            if principal.is_empty() || keytab.is_empty() {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    "a Kerberos login from a keytab needs both a principal and a keytab",
                ));
            }
        }
        Ok(KerberosLogin {
            source,
            config,
            state: Mutex::new(State {
                // Due at once: the first login has not been made.
                next_ms: Some(0),
                ..State::default()
            }),
        })
    }

    /// A login as the JAAS `Krb5LoginModule` options and Kafka's client settings describe it:
    /// the source as [`LoginSource::from_settings`] reads `principal`, `keytab` and `cache`,
    /// and the schedule from `sasl.kerberos.ticket.renew.window.factor`,
    /// `sasl.kerberos.ticket.renew.jitter` and `sasl.kerberos.min.time.before.relogin`
    /// (each `None` for Kafka's default). Every binding builds its login here.
    pub fn from_settings(
        principal: Option<&str>,
        keytab: Option<&str>,
        cache: Option<&str>,
        window_factor: Option<f64>,
        jitter: Option<f64>,
        min_time_before_relogin_ms: Option<i64>,
    ) -> Result<Self> {
        let source = LoginSource::from_settings(principal, keytab, cache)?;
        let schedule =
            KerberosRefreshConfig::with_settings(window_factor, jitter, min_time_before_relogin_ms);
        Self::new(source, schedule)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Logs in now (I/O: reads the keytab or cache, asks the KDC for a ticket) and plans the
    /// next login. On failure the current ticket, if any, stays in use and a retry is planned.
    pub fn login(&self, now_ms: i64, random: &dyn RandomSource) -> Result<()> {
        let result = match &self.source {
            LoginSource::Keytab { principal, keytab } => {
                Credential::login_keytab(principal, keytab)
            }
            LoginSource::Cache { cache, principal } => {
                // After the first login, renew the cache's ticket at the KDC first, as Kafka's
                // client runs `kinit -R` (without the process). Failing that (a ticket that is
                // not renewable, or past its renewable life), the cache is read as it is: a
                // tool such as k5start may have refreshed it.
                if self.lock().logins > 0 {
                    let _ = sys::renew_cache(cache.as_deref(), principal.as_deref());
                }
                Credential::from_cache(cache.as_deref(), principal.as_deref())
            }
        };
        let mut s = self.lock();
        match result {
            Ok(cred) => {
                let end = cred
                    .lifetime_secs()
                    .map(|secs| now_ms.saturating_add(i64::from(secs) * 1000));
                s.next_ms = Some(match end {
                    Some(end) => self
                        .config
                        .next_login_ms(now_ms, now_ms, end, uniform(random)),
                    // A ticket that never expires needs no renewal.
                    None => i64::MAX,
                });
                s.end_ms = end;
                s.credential = Some(Arc::new(cred));
                s.logins += 1;
                s.last_error = None;
                Ok(())
            }
            Err(e) => {
                let end = s.end_ms.filter(|end| *end > now_ms);
                s.next_ms = Some(self.config.retry_ms(now_ms, end));
                s.failures += 1;
                s.last_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Logs in if a login is due at `now_ms`; returns whether one was made.
    pub fn poll(&self, now_ms: i64, random: &dyn RandomSource) -> Result<bool> {
        if self.next_login_ms().map_or(true, |t| t > now_ms) {
            return Ok(false);
        }
        self.login(now_ms, random).map(|()| true)
    }

    /// The current ticket's credential, for a new context.
    pub fn current(&self) -> Result<Arc<Credential>> {
        let s = self.lock();
        match (&s.credential, &s.last_error) {
            (Some(c), _) => Ok(c.clone()),
            (None, Some(e)) => Err(e.clone()),
            (None, None) => Err(Error::new(
                ErrorCode::KerberosLoginFailed,
                "no Kerberos login has been made yet (call login first)",
            )),
        }
    }

    /// When the next login is due, ms since the epoch.
    pub fn next_login_ms(&self) -> Option<i64> {
        self.lock().next_ms
    }

    /// When the current ticket-granting ticket ends, if there is one.
    pub fn ticket_end_ms(&self) -> Option<i64> {
        self.lock().end_ms
    }

    /// Successful logins so far.
    pub fn logins(&self) -> u64 {
        self.lock().logins
    }

    /// Failed logins so far.
    pub fn failures(&self) -> u64 {
        self.lock().failures
    }

    /// A factory of initiator contexts on this login's current ticket.
    pub fn initiator_factory(self: &Arc<Self>, mutual: bool) -> Arc<dyn GssInitiatorFactory> {
        let me = self.clone();
        Arc::new(InitiatorFactory::new(move || me.current(), mutual))
    }
}
