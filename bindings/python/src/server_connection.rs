//! `ServerConnection`: the core's broker-side driver and its per-request gate.

use ksasl::kafka::server::{self, ServerAction, ServerOutput};
use ksasl::mech::nothing_pending;
use ksasl::CredentialAnswer;

use crate::config::ServerConfig;
use crate::dicts::{decode, server_session};
use crate::glue::*;
use crate::hostmech::{host_task, late};

type Output = (&'static str, Bytes, Option<i64>, Option<PyObject>);

/// The output, continuing the one whose frames were `before` (`ServerOutput::then`). A
/// callback's exception is raised unchanged.
fn output(py: Python<'_>, out: ServerOutput, before: Option<&[u8]>) -> PyResult<Output> {
    let out = match before {
        Some(b) => ServerOutput { frames: b.to_vec(), action: ServerAction::Continue }.then(out),
        None => out,
    };
    let out = unless_raised(out)?;
    let (kind, deadline) = (out.action.kind().name(), out.action.deadline_ms());
    let error = out.action.error().map(|e| exception(py, e)).transpose()?;
    Ok((kind, out.frames.into(), deadline, error))
}

/// A server connection's SASL state; `handle_frame`, `provide_credential` and `resume` return
/// `(action, frames, deadline_ms, error)`, the error saying why a connection fails.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerConnection(Mutex<server::ServerConnection>);

#[pymethods]
impl ServerConnection {
    #[new]
    fn new(config: &ServerConfig) -> Self {
        ServerConnection(Mutex::new(server::ServerConnection::new(config.0.clone())))
    }

    #[pyo3(signature = (frame, now_ms = None))]
    fn handle_frame(&self, py: Python<'_>, frame: &[u8], now_ms: Now) -> PyResult<Output> {
        let out = without_gil(py, &self.0, |c| c.handle_frame(frame, now(now_ms)));
        output(py, out, None)
    }

    #[pyo3(signature = (answer, now_ms = None, frames_before = None))]
    fn provide_credential(
        &self, py: Python<'_>, answer: &Any, now_ms: Now, frames_before: Option<&[u8]>,
    ) -> PyResult<Output> {
        let mut g = lock(py, &self.0);
        let answer = match g.pending_request() {
            Some(req) => decode(req, answer)?.and_then(|l| l.now()).or_raise()?,
            None => CredentialAnswer::Unknown, // nothing was requested: the core refuses it
        };
        let c = &mut *g;
        let out = py.allow_threads(move || c.provide_credential(answer, now(now_ms)));
        output(py, out, frames_before)
    }

    fn host_task(&self, py: Python<'_>) -> PyResult<PyObject> {
        host_task(py, lock(py, &self.0).host_task())
    }

    #[pyo3(signature = (result, now_ms = None, frames_before = None))]
    fn resume(
        &self, py: Python<'_>, result: &Any, now_ms: Now, frames_before: Option<&[u8]>,
    ) -> PyResult<Output> {
        let mut c = lock(py, &self.0);
        let work = c.pending_work().cloned().ok_or_else(|| py_err(&nothing_pending()))?;
        let step = late(py, true, result).late_server_step(&work, 0).or_raise()?;
        output(py, c.resume(step, now(now_ms)), frames_before)
    }

    #[pyo3(signature = (api_key, now_ms = None))]
    fn gate(&self, py: Python<'_>, api_key: i16, now_ms: Now) -> &'static str {
        lock(py, &self.0).gate(api_key, now(now_ms)).name()
    }

    /// Kafka's ILLEGAL_SASL_STATE answer to a SASL request after authentication.
    #[staticmethod]
    fn illegal_state_response(frame: &[u8]) -> Option<Bytes> {
        server::ServerConnection::illegal_state_response(frame).map(Bytes::from)
    }

    #[getter]
    fn ready(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).is_ready()
    }

    fn next_deadline(&self, py: Python<'_>) -> Option<i64> {
        lock(py, &self.0).next_deadline()
    }

    fn session<'py>(&self, py: Python<'py>) -> PyResult<Option<Dict<'py>>> {
        lock(py, &self.0).session().map(|s| server_session(py, s)).transpose()
    }
}
