//! `ClientConnection`: the core's client driver (Kafka framing, KIP-368 re-authentication).

use ksasl::kafka::client::{self, ClientEvent};
use ksasl::mech::nothing_pending;

use crate::config::ClientConfig;
use crate::dicts::client_session;
use crate::glue::*;
use crate::hostmech::{awaitable, late};

/// `(event, frame, error)`: the event's name, the application frame (the very object handed
/// in) and why a re-authentication failed.
type Event = (&'static str, Option<Py<PyBytes>>, Option<PyObject>);

fn event(py: Python<'_>, ev: ClientEvent, frame: Option<&Bound<'_, PyBytes>>) -> PyResult<Event> {
    let kind = ev.kind().name();
    Ok(match ev {
        ClientEvent::Failed(e) => return Err(py_err(&e)),
        ClientEvent::ReauthenticationFailed { error, .. } => {
            (kind, None, Some(exception(py, &error)?))
        }
        ClientEvent::Application => (kind, frame.map(|f| f.clone().unbind()), None),
        _ => (kind, None, None),
    })
}

/// A client connection's SASL state. `handle_frame(frame)` and `resume(result)` return
/// `(event, frame, error)`: "continue", "application" (frame: the object passed in),
/// "authenticated", "reauthenticated", "reauth_failed" (error: why) or "pending" (await
/// `pending_work()`, then `resume`); they raise when authentication fails.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ClientConnection(Mutex<client::ClientConnection>);

#[pymethods]
impl ClientConnection {
    #[new]
    fn new(config: &ClientConfig) -> Self {
        ClientConnection(Mutex::new(client::ClientConnection::new(config.0.clone())))
    }

    #[pyo3(signature = (now_ms = None))]
    fn start(&self, py: Python<'_>, now_ms: Now) -> PyResult<()> {
        lock(py, &self.0).start(now(now_ms)).or_raise()
    }

    /// The bytes to write (length-prefixed frames), possibly empty.
    fn transmit(&self, py: Python<'_>) -> Bytes {
        lock(py, &self.0).poll_transmit().unwrap_or_default().into()
    }

    /// Handles one received frame (without its length prefix).
    #[pyo3(signature = (frame, now_ms = None))]
    fn handle_frame(
        &self,
        py: Python<'_>,
        frame: &Bound<'_, PyBytes>,
        now_ms: Now,
    ) -> PyResult<Event> {
        let bytes = frame.as_bytes();
        let ev = without_gil(py, &self.0, |c| c.handle_frame(bytes, now(now_ms)));
        event(py, ev, Some(frame))
    }

    fn pending_work(&self, py: Python<'_>) -> Option<PyObject> {
        awaitable(py, lock(py, &self.0).pending_work())
    }

    #[pyo3(signature = (result, now_ms = None))]
    fn resume(&self, py: Python<'_>, result: &Any, now_ms: Now) -> PyResult<Event> {
        let mut c = lock(py, &self.0);
        let work = c
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(&nothing_pending()))?;
        let step = late(py, false, result)
            .late_client_step(&work, 0)
            .or_raise()?;
        event(py, c.resume(step, now(now_ms)), None)
    }

    /// The broker closed the connection: raises the error to report.
    #[pyo3(signature = (now_ms = None))]
    fn closed(&self, py: Python<'_>, now_ms: Now) -> PyResult<()> {
        Err(py_err(&lock(py, &self.0).connection_closed(now(now_ms))))
    }

    /// When to call `handle_timeout` next (ms), or None.
    fn next_deadline(&self, py: Python<'_>) -> Option<i64> {
        lock(py, &self.0).next_deadline()
    }

    /// Starts a due re-authentication; returns whether it started.
    #[pyo3(signature = (now_ms = None))]
    fn handle_timeout(&self, py: Python<'_>, now_ms: Now) -> PyResult<bool> {
        lock(py, &self.0).handle_timeout(now(now_ms)).or_raise()
    }

    #[pyo3(signature = (now_ms = None))]
    fn reauth_pending(&self, py: Python<'_>, now_ms: Now) -> bool {
        lock(py, &self.0).reauth_pending(now(now_ms))
    }

    /// Before an application request: True to send it now, False to hold it.
    #[pyo3(signature = (now_ms = None))]
    fn before_request(&self, py: Python<'_>, now_ms: Now) -> PyResult<bool> {
        lock(py, &self.0).before_request(now(now_ms)).or_raise()
    }

    /// Starts a re-authentication now (deferred, returning False, within a second of the last).
    #[pyo3(signature = (now_ms = None))]
    fn start_reauthentication(&self, py: Python<'_>, now_ms: Now) -> PyResult<bool> {
        lock(py, &self.0)
            .start_reauthentication(now(now_ms))
            .or_raise()
    }

    /// `{"lifetime_ms", "reauth_at_ms", "expiry_ms", "latency_ms"}`, or None.
    fn session<'py>(&self, py: Python<'py>) -> PyResult<Option<Dict<'py>>> {
        let s = lock(py, &self.0).session().copied();
        s.map(|s| client_session(py, &s)).transpose()
    }

    #[getter]
    fn reauthenticating(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).is_reauthenticating()
    }
}
