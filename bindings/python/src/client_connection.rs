//! `ClientConnection`: the core's client driver (Kafka framing, KIP-368 re-authentication).

use ksasl::kafka::client::{self, ClientEvent};
use ksasl::mech::nothing_pending;

use crate::config::ClientConfig;
use crate::dicts::client_session;
use crate::glue::*;
use crate::hostmech::{awaitable, late};

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

/// A client connection's SASL state; `handle_frame` and `resume` return `(event, frame, error)`
/// and raise when the authentication fails.
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

    fn transmit(&self, py: Python<'_>) -> Bytes {
        lock(py, &self.0).poll_transmit().unwrap_or_default().into()
    }

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

    #[pyo3(signature = (now_ms = None))]
    fn closed(&self, py: Python<'_>, now_ms: Now) -> PyResult<()> {
        Err(py_err(&lock(py, &self.0).connection_closed(now(now_ms))))
    }

    fn next_deadline(&self, py: Python<'_>) -> Option<i64> {
        lock(py, &self.0).next_deadline()
    }

    #[pyo3(signature = (now_ms = None))]
    fn handle_timeout(&self, py: Python<'_>, now_ms: Now) -> PyResult<bool> {
        lock(py, &self.0).handle_timeout(now(now_ms)).or_raise()
    }

    #[pyo3(signature = (now_ms = None))]
    fn reauth_pending(&self, py: Python<'_>, now_ms: Now) -> bool {
        lock(py, &self.0).reauth_pending(now(now_ms))
    }

    #[pyo3(signature = (now_ms = None))]
    fn before_request(&self, py: Python<'_>, now_ms: Now) -> PyResult<bool> {
        lock(py, &self.0).before_request(now(now_ms)).or_raise()
    }

    #[pyo3(signature = (now_ms = None))]
    fn start_reauthentication(&self, py: Python<'_>, now_ms: Now) -> PyResult<bool> {
        lock(py, &self.0)
            .start_reauthentication(now(now_ms))
            .or_raise()
    }

    fn session<'py>(&self, py: Python<'py>) -> PyResult<Option<Dict<'py>>> {
        let s = lock(py, &self.0).session().copied();
        s.map(|s| client_session(py, &s)).transpose()
    }

    #[getter]
    fn reauthenticating(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).is_reauthenticating()
    }
}
