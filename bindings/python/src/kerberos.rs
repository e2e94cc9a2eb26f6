//! GSSAPI: the core's renewing Kerberos login (its I/O runs without the GIL).

use ksasl::io::gss;
use ksasl::OsRandom;

use crate::glue::*;

/// A Kerberos login renewed on Kafka's `sasl.kerberos.ticket.renew.*` schedule.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct KerberosLogin(pub(crate) Arc<gss::KerberosLogin>);

class! { KerberosLogin |py, c| shared {
    new(principal: Option<String> = None, keytab: Option<String> = None,
        ccache: Option<String> = None, window_factor: Option<f64> = None,
        jitter: Option<f64> = None, min_time_before_relogin_ms: Option<i64> = None)
        -> PyResult<Self> {
        let (p, k, cache) = (principal.as_deref(), keytab.as_deref(), ccache.as_deref());
        let login = gss::KerberosLogin::from_settings(
            p, k, cache, window_factor, jitter, min_time_before_relogin_ms).or_raise()?;
        Ok(KerberosLogin(Arc::new(login)))
    }
    fn login(now_ms: Now = None) -> PyResult<()> {
        py.allow_threads(|| c.login(now(now_ms), &OsRandom)).or_raise()
    }
    fn poll(now_ms: Now = None) -> PyResult<bool> {
        py.allow_threads(|| c.poll(now(now_ms), &OsRandom)).or_raise()
    }
    #[getter] fn next_login_ms() -> Option<i64> { c.next_login_ms() }
    #[getter] fn ticket_end_ms() -> Option<i64> { c.ticket_end_ms() }
    #[getter] fn logins() -> u64 { c.logins() }
    #[getter] fn failures() -> u64 { c.failures() }
}}

/// Whether the system's GSS-API library (MIT Kerberos) loads.
#[pyfunction]
pub(crate) fn gssapi_available() -> bool {
    gss::available()
}
