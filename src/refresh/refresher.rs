//! The refresher: holds the current credential, asks the host for a new one on Kafka's
//! schedule, and validates what it is given. Its API mirrors librdkafka's OAUTHBEARER refresh
//! (`oauthbearer_token_refresh_cb`, `oauthbearer_set_token`, `oauthbearer_set_token_failure`).

use std::sync::{Arc, Mutex, Weak};

use super::schedule::{check_expiry, next_refresh, ExpiringCredential, RefreshAt, RefreshConfig};
use crate::aws::credentials::AwsCredentials;
use crate::credential::{PasswordCredential, PasswordSource};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::aws_msk_iam::AwsCredentialSource;
use crate::mech::oauthbearer::{OAuthBearerToken, SaslExtensions, TokenSource};
use crate::random::SharedRandom;
use crate::session::uniform;

/// What a credential is.
#[derive(Clone, Debug)]
pub enum CredentialValue {
    /// An OAUTHBEARER token and the SASL extensions to send with it.
    Token(OAuthBearerToken, SaslExtensions),
    /// A username and password (PLAIN/SCRAM) with an agreed lifetime, or a delegation token
    /// (token id and HMAC, SCRAM with `tokenauth`).
    Password(Arc<PasswordCredential>),
    /// AWS credentials (temporary ones, from STS or an instance role), for `AWS_MSK_IAM`.
    Aws(AwsCredentials),
}

/// A credential held by the refresher, with its generation (1 for the first, +1 per refresh).
#[derive(Clone, Debug)]
pub struct Credential {
    /// The principal it authenticates.
    pub principal: String,
    /// Its timing.
    pub expiring: ExpiringCredential,
    /// The credential itself.
    pub value: CredentialValue,
    /// Which refresh produced it.
    pub generation: u64,
}

type Callback = Arc<dyn Fn(&Refresher, i64) + Send + Sync>;

struct Inner {
    current: Option<Arc<Credential>>,
    next_refresh_ms: Option<i64>,
    in_flight: bool,
    failures: u32,
    last_failure: Option<String>,
    refreshes: Vec<i64>,
}

/// Holds the current credential and schedules its refresh. Shared (`Arc`) by every connection
/// of a client; all methods take `&self` and are thread-safe. The refresher never calls back
/// from a thread of its own: the host (or [`crate::background::BackgroundRefresher`]) calls
/// [`Refresher::poll`] or [`Refresher::run_due`] at [`Refresher::next_deadline`].
pub struct Refresher {
    config: RefreshConfig,
    random: SharedRandom,
    inner: Mutex<Inner>,
    callback: Mutex<Option<Callback>>,
}

impl std::fmt::Debug for Refresher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refresher")
            .field("generation", &self.generation())
            .field("next_deadline", &self.next_deadline())
            .finish()
    }
}

fn poisoned() -> Error {
    Error::new(ErrorCode::Internal, "refresher lock poisoned")
}

impl Refresher {
    /// A refresher with no credential yet (due at once).
    pub fn new(config: RefreshConfig, random: SharedRandom) -> Self {
        Refresher {
            config,
            random,
            inner: Mutex::new(Inner {
                current: None,
                next_refresh_ms: Some(0),
                in_flight: false,
                failures: 0,
                last_failure: None,
                refreshes: Vec::new(),
            }),
            callback: Mutex::new(None),
        }
    }

    /// Sets the callback form: `run_due` calls it when a refresh is due; it must answer with
    /// [`Refresher::set_token`], [`Refresher::set_credential`] or
    /// [`Refresher::set_token_failure`] (now, or later through a [`RefreshHandle`]).
    pub fn set_refresh_callback(&self, callback: impl Fn(&Refresher, i64) + Send + Sync + 'static) {
        if let Ok(mut c) = self.callback.lock() {
            *c = Some(Arc::new(callback));
        }
    }

    /// Removes the refresh callback (and drops what it captured).
    pub fn clear_refresh_callback(&self) {
        if let Ok(mut c) = self.callback.lock() {
            *c = None;
        }
    }

    /// A weak handle for answering later (an async host's task): answers that arrive after the
    /// refresher is dropped get [`ErrorCode::RefresherGone`].
    pub fn handle(self: &Arc<Self>) -> RefreshHandle {
        RefreshHandle(Arc::downgrade(self))
    }

    /// The configuration.
    pub fn config(&self) -> &RefreshConfig {
        &self.config
    }

    /// When a refresh is next due (0, the epoch, when nothing is held yet: at once), or `None`
    /// if refreshing has stopped or a request is outstanding.
    pub fn next_deadline(&self) -> Option<i64> {
        let i = self.inner.lock().ok()?;
        if i.in_flight {
            return None;
        }
        i.next_refresh_ms
    }

    /// The generation of the current credential (0: none yet).
    pub fn generation(&self) -> u64 {
        self.inner
            .lock()
            .ok()
            .and_then(|i| i.current.as_ref().map(|c| c.generation))
            .unwrap_or(0)
    }

    /// The instants at which credentials were installed, oldest first.
    pub fn refresh_times(&self) -> Vec<i64> {
        self.inner
            .lock()
            .map(|i| i.refreshes.clone())
            .unwrap_or_default()
    }

    /// Failures since the last success, and the last reason.
    pub fn failures(&self) -> (u32, Option<String>) {
        self.inner
            .lock()
            .map(|i| (i.failures, i.last_failure.clone()))
            .unwrap_or((0, None))
    }

    /// Pull form: `true` when the host must fetch a new credential now. The request then
    /// counts as outstanding until it is answered.
    pub fn poll(&self, now_ms: i64) -> bool {
        let Ok(mut i) = self.inner.lock() else {
            return false;
        };
        match i.next_refresh_ms {
            Some(t) if !i.in_flight && now_ms >= t => {
                i.in_flight = true;
                true
            }
            _ => false,
        }
    }

    /// Callback form: if a refresh is due, calls the callback (with no lock held). A callback
    /// that returns without answering and without keeping a handle is not an error: the
    /// request stays outstanding until answered.
    pub fn run_due(&self, now_ms: i64) -> bool {
        self.poll(now_ms) && self.invoke_callback(now_ms)
    }

    /// Calls the refresh callback for a request already claimed by [`Refresher::poll`] (or
    /// reported by [`Tracker::poll`](super::Tracker::poll)). Without a callback the request
    /// is answered as a failure.
    pub fn invoke_callback(&self, now_ms: i64) -> bool {
        let cb = self.callback.lock().ok().and_then(|c| c.clone());
        match cb {
            Some(cb) => {
                cb(self, now_ms);
                true
            }
            None => {
                let _ = self.set_token_failure("no refresh callback is set", now_ms);
                false
            }
        }
    }

    /// The credential to present at `now_ms`: the newest one while it is still valid.
    /// An expired credential is never offered.
    pub fn current(&self, now_ms: i64) -> Result<Arc<Credential>> {
        let i = self.inner.lock().map_err(|_| poisoned())?;
        match &i.current {
            Some(c) if now_ms < c.expiring.expiry_ms => Ok(c.clone()),
            Some(_) => Err(Error::new(
                ErrorCode::NoValidCredential,
                "the credential has expired and no fresh one has been obtained",
            )),
            None => Err(Error::new(
                ErrorCode::NoValidCredential,
                "no credential has been obtained yet",
            )),
        }
    }

    /// The newest credential whatever its expiry (for mechanisms whose expiry the server
    /// enforces, such as passwords with an agreed lifetime).
    pub fn latest(&self) -> Result<Arc<Credential>> {
        let i = self.inner.lock().map_err(|_| poisoned())?;
        i.current.clone().ok_or_else(|| {
            Error::new(
                ErrorCode::NoValidCredential,
                "no credential has been obtained yet",
            )
        })
    }

    /// The current password credential (PLAIN, SCRAM, delegation token).
    pub fn current_password(&self) -> Result<(Arc<PasswordCredential>, u64)> {
        let c = self.latest()?;
        match &c.value {
            CredentialValue::Password(p) => Ok((p.clone(), c.generation)),
            CredentialValue::Token(..) | CredentialValue::Aws(_) => Err(Error::new(
                ErrorCode::CredentialMechanismMismatch,
                "the current credential is not a password",
            )),
        }
    }

    /// librdkafka's `set_token`: installs an OAUTHBEARER token (absolute expiry in ms,
    /// principal, extensions). Returns the new generation.
    pub fn set_token(
        &self,
        token: &str,
        expiry_ms: i64,
        principal: &str,
        extensions: &[(&str, &str)],
        now_ms: i64,
    ) -> Result<u64> {
        if principal.is_empty() {
            return Err(Error::misuse("the principal must not be empty"));
        }
        check_expiry(expiry_ms, now_ms)?;
        let ext = SaslExtensions::from_pairs(extensions.iter().copied())?;
        if extensions.len() != ext.map().len() {
            return Err(Error::new(
                ErrorCode::InvalidExtension,
                "an extension name appears twice",
            ));
        }
        let t = OAuthBearerToken::new(token, principal, expiry_ms)?;
        let expiring = ExpiringCredential {
            start_ms: None,
            expiry_ms,
            absolute_last_refresh_ms: None,
        };
        self.install(principal, expiring, CredentialValue::Token(t, ext), now_ms)
    }

    /// Installs any credential (a token with its `iat`, a password with an agreed lifetime, a
    /// delegation token). Returns the new generation.
    pub fn set_credential(
        &self,
        principal: &str,
        expiring: ExpiringCredential,
        value: CredentialValue,
        now_ms: i64,
    ) -> Result<u64> {
        check_expiry(expiring.expiry_ms, now_ms)?;
        if expiring.start_ms.is_some_and(|s| s > expiring.expiry_ms) {
            return Err(Error::new(
                ErrorCode::InvalidCredentialExpiry,
                "the credential starts after it expires",
            ));
        }
        self.install(principal, expiring, value, now_ms)
    }

    fn install(
        &self,
        principal: &str,
        expiring: ExpiringCredential,
        value: CredentialValue,
        now_ms: i64,
    ) -> Result<u64> {
        let r = uniform(self.random.0.as_ref())?;
        let mut i = self.inner.lock().map_err(|_| poisoned())?;
        let generation = i.current.as_ref().map_or(0, |c| c.generation) + 1;
        i.current = Some(Arc::new(Credential {
            principal: principal.to_string(),
            expiring,
            value,
            generation,
        }));
        i.next_refresh_ms = match next_refresh(Some(&expiring), now_ms, &self.config, r) {
            RefreshAt::At(t) => Some(t),
            RefreshAt::Stop => None,
        };
        i.in_flight = false;
        i.failures = 0;
        i.last_failure = None;
        i.refreshes.push(now_ms);
        Ok(generation)
    }

    /// librdkafka's `set_token_failure`: the refresh failed; the old credential stays in use
    /// while it is valid, and the next attempt is due after the retry backoff.
    pub fn set_token_failure(&self, reason: &str, now_ms: i64) -> Result<()> {
        let mut i = self.inner.lock().map_err(|_| poisoned())?;
        i.failures += 1;
        i.last_failure = Some(reason.to_string());
        i.in_flight = false;
        let delay = self.config.retry_delay_ms(i.failures);
        i.next_refresh_ms = Some(now_ms.saturating_add(delay));
        Ok(())
    }

    /// Asks for a refresh before `deadline_ms` (the tracker's early refresh): the next
    /// deadline moves forward, never back.
    pub fn refresh_before(&self, deadline_ms: i64) {
        if let Ok(mut i) = self.inner.lock() {
            if let Some(t) = i.next_refresh_ms {
                if deadline_ms < t {
                    i.next_refresh_ms = Some(deadline_ms);
                }
            }
        }
    }

    /// The current token and extensions for an OAUTHBEARER exchange at `now_ms`.
    pub fn current_token(&self, now_ms: i64) -> Result<(OAuthBearerToken, SaslExtensions, u64)> {
        let c = self.current(now_ms)?;
        match &c.value {
            CredentialValue::Token(t, e) => Ok((t.clone(), e.clone(), c.generation)),
            CredentialValue::Password(_) | CredentialValue::Aws(_) => Err(Error::new(
                ErrorCode::CredentialMechanismMismatch,
                "the current credential is not a token",
            )),
        }
    }

    /// Installs AWS credentials for `AWS_MSK_IAM`, as `set_token` installs a token: they must
    /// carry their expiry (temporary credentials; long-term keys need no refresher and are a
    /// source by themselves), which schedules the next refresh. `principal` names them in the
    /// refresher's reports (an IAM ARN, say). Returns the new generation; connections that
    /// signed with an older one re-authenticate when a tracker says so.
    pub fn set_aws_credentials(
        &self,
        credentials: AwsCredentials,
        principal: &str,
        now_ms: i64,
    ) -> Result<u64> {
        if principal.is_empty() {
            return Err(Error::misuse("the principal must not be empty"));
        }
        let Some(expiry_ms) = credentials.expires_at_ms() else {
            return Err(Error::new(
                ErrorCode::InvalidCredentialExpiry,
                "AWS credentials in a refresher must carry their expiry",
            ));
        };
        let expiring = ExpiringCredential {
            start_ms: None,
            expiry_ms,
            absolute_last_refresh_ms: None,
        };
        self.set_credential(
            principal,
            expiring,
            CredentialValue::Aws(credentials),
            now_ms,
        )
    }

    /// The current AWS credentials at `now_ms` (never expired ones).
    pub fn current_aws_credentials(&self, now_ms: i64) -> Result<(AwsCredentials, u64)> {
        let c = self.current(now_ms)?;
        match &c.value {
            CredentialValue::Aws(a) => Ok((a.clone(), c.generation)),
            _ => Err(Error::new(
                ErrorCode::CredentialMechanismMismatch,
                "the current credential is not a set of AWS credentials",
            )),
        }
    }
}

impl AwsCredentialSource for Refresher {
    fn aws_credentials(&self, now_ms: i64) -> Result<AwsCredentials> {
        self.current_aws_credentials(now_ms).map(|(c, _)| c)
    }
}

impl TokenSource for Refresher {
    fn token(&self, now_ms: i64) -> Result<(OAuthBearerToken, SaslExtensions)> {
        self.current_token(now_ms).map(|(t, e, _)| (t, e))
    }
}

impl PasswordSource for Refresher {
    fn password(&self) -> Result<Arc<PasswordCredential>> {
        self.current_password().map(|(p, _)| p)
    }
}

/// A weak reference to a refresher, for answers that arrive later.
#[derive(Clone, Debug)]
pub struct RefreshHandle(Weak<Refresher>);

impl RefreshHandle {
    fn get(&self) -> Result<Arc<Refresher>> {
        self.0.upgrade().ok_or_else(|| {
            Error::new(
                ErrorCode::RefresherGone,
                "the refresher has been dropped; the answer is discarded",
            )
        })
    }

    /// [`Refresher::set_token`] through the handle.
    pub fn set_token(
        &self,
        token: &str,
        expiry_ms: i64,
        principal: &str,
        extensions: &[(&str, &str)],
        now_ms: i64,
    ) -> Result<u64> {
        self.get()?
            .set_token(token, expiry_ms, principal, extensions, now_ms)
    }

    /// [`Refresher::set_token_failure`] through the handle.
    pub fn set_token_failure(&self, reason: &str, now_ms: i64) -> Result<()> {
        self.get()?.set_token_failure(reason, now_ms)
    }
}
