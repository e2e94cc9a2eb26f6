//! `Refresher`, `Tracker` and `BackgroundRefresher`: the core's refresh, tracker and thread.

use std::collections::BTreeMap;

use ksasl::background::{self, BackgroundRefresher as Thread};
use ksasl::refresh::{self, RefreshConfig, TrackerConfig};
use ksasl::SharedRandom;

use crate::aws::AwsCredentials;
use crate::dicts::client_session_from;
use crate::glue::*;
use crate::kerberos::KerberosLogin;
use crate::tokens::token_from_dict;

/// Refreshes tokens on Kafka's schedule (`sasl.login.refresh.*` defaults), librdkafka's shape.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct Refresher(pub(crate) Arc<refresh::Refresher>);

class! { Refresher |py, c| shared {
    new(window_factor: Option<f64> = None, window_jitter: Option<f64> = None,
        min_period_seconds: Option<i64> = None, buffer_seconds: Option<i64> = None,
        relogin_allowed_before_logout: Option<bool> = None, retry_backoff_ms: Option<i64> = None,
        retry_backoff_max_ms: Option<i64> = None) -> PyResult<Self> {
        let mut b = RefreshConfig::builder();
        set_given!(b: window_factor(window_factor), window_jitter(window_jitter),
            min_period_seconds(min_period_seconds), buffer_seconds(buffer_seconds),
            relogin_allowed_before_logout(relogin_allowed_before_logout),
            retry_backoff_ms(retry_backoff_ms), retry_backoff_max_ms(retry_backoff_max_ms));
        let config = b.build().or_raise()?;
        Ok(Refresher(Arc::new(refresh::Refresher::new(config, SharedRandom::default()))))
    }
    fn poll(now_ms: Now = None) -> bool { c.poll(now(now_ms)) }
    /// Runs the refresher's own login when due (a `ClientSetup`'s: unsecured tokens, an OIDC
    /// login); True when it ran. Blocks for an OIDC login: run it off the event loop.
    fn run_due(now_ms: Now = None) -> bool {
        let t = now(now_ms);
        py.allow_threads(|| c.run_due(t))
    }
    /// `expiry_ms` is ABSOLUTE (ms since the epoch); returns the generation.
    fn set_token(token: &str, expiry_ms: i64, principal: &str,
        extensions: Option<BTreeMap<String, String>> = None, now_ms: Now = None) -> PyResult<u64> {
        let ext = extensions.unwrap_or_default();
        let pairs: Vec<_> = ext.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        c.set_token(token, expiry_ms, principal, &pairs, now(now_ms)).or_raise()
    }
    fn set_token_failure(reason: &str, now_ms: Now = None) -> PyResult<()> {
        c.set_token_failure(reason, now(now_ms)).or_raise()
    }
    fn set_delegation_token(token: &Dict, now_ms: Now = None) -> PyResult<u64> {
        token_from_dict(token)?.install(c, now(now_ms)).or_raise()
    }
    /// Temporary AWS credentials (they must carry their expiry); returns the generation.
    fn set_aws_credentials(credentials: &AwsCredentials, principal: &str, now_ms: Now = None)
        -> PyResult<u64> {
        c.set_aws_credentials(credentials.0.clone(), principal, now(now_ms)).or_raise()
    }
    fn next_deadline() -> Option<i64> { c.next_deadline() }
    #[getter] fn generation() -> u64 { c.generation() }
    /// Failed refreshes since the last success, and the last reason.
    fn failures() -> (u32, Option<String>) { c.failures() }
    {
        /// Never an expired token: raises instead.
        #[pyo3(signature = (now_ms = None))]
        fn current<'py>(&self, py: Python<'py>, now_ms: Now) -> PyResult<Dict<'py>> {
            let (t, e, generation) = self.0.current_token(now(now_ms)).or_raise()?;
            Ok(
                dict!(py, token: t.value(), expiry_ms: t.expiry_ms(), principal: t.principal(),
                extensions: e.map().clone(), generation: generation),
            )
        }
    }
}}

/// The core's refresh thread, calling `callback(now_ms)` when a refresh is due; an exception
/// it raises is the refresh's failure. `kerberos(login)`: the thread renewing a Kerberos login.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct BackgroundRefresher(Option<Arc<refresh::Refresher>>, Mutex<Option<Thread>>);

#[pymethods]
impl BackgroundRefresher {
    #[new]
    fn new(refresher: &Refresher, callback: PyObject) -> PyResult<Self> {
        refresher.0.set_refresh_callback(move |r, now_ms| {
            Python::with_gil(|py| {
                if let Err(e) = callback.call1(py, (now_ms,)) {
                    let _ = r.set_token_failure(&host_text(py, &e).1, now_ms);
                }
            })
        });
        let thread = Mutex::new(Some(Thread::start(refresher.0.clone()).or_raise()?));
        Ok(BackgroundRefresher(Some(refresher.0.clone()), thread))
    }

    /// The thread running the refresher's own login when due (a `ClientSetup`'s refresher).
    #[staticmethod]
    fn scheduled(refresher: &Refresher) -> PyResult<Self> {
        let thread = Mutex::new(Some(Thread::start(refresher.0.clone()).or_raise()?));
        Ok(BackgroundRefresher(None, thread))
    }

    #[staticmethod]
    fn kerberos(login: &KerberosLogin) -> PyResult<Self> {
        let thread = Thread::start_kerberos(login.0.clone()).or_raise()?;
        Ok(BackgroundRefresher(None, Mutex::new(Some(thread))))
    }

    fn stop(&self, py: Python<'_>) {
        if let Some(thread) = lock(py, &self.1).take() {
            py.allow_threads(|| thread.stop());
            if let Some(r) = &self.0 {
                r.clear_refresh_callback();
            }
        }
    }
}

impl Drop for BackgroundRefresher {
    fn drop(&mut self) {
        Python::with_gil(|py| self.stop(py));
    }
}

/// Which connections use which token generation, and which to re-authenticate.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct Tracker(refresh::Tracker);

class! { Tracker |py, c| shared {
    new(refresher: &Refresher, spread_window_ms: Option<i64> = None,
        early_refresh_lead_ms: Option<i64> = None) -> PyResult<Self> {
        let mut c = TrackerConfig::default();
        given!(c: spread_window_ms, early_refresh_lead_ms);
        Ok(Tracker(refresh::Tracker::new(refresher.0.clone(), c).or_raise()?))
    }
    fn authenticated(id: u64, generation: u64, session: &Dict) -> PyResult<()> {
        c.authenticated(id, generation, &client_session_from(session)?).or_raise()
    }
    fn forget(id: u64) { c.forget(id) }
    fn next_deadline() -> Option<i64> { c.next_deadline() }
    fn poll(now_ms: Now = None) -> (bool, Vec<u64>) {
        let p = c.poll(now(now_ms));
        (p.refresh, p.reauthenticate)
    }
}}

/// How long a refresh loop sleeps (ms) before it polls again (the core's rule).
#[pyfunction]
#[pyo3(signature = (next_deadline, now_ms = None))]
pub(crate) fn sleep_ms(next_deadline: Option<i64>, now_ms: Now) -> i64 {
    background::sleep_ms(next_deadline, now(now_ms))
}
