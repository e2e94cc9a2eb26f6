//! `ServerConnection`: the core's broker-side driver and its per-request gate.

use ksasl::kafka::server::{self, ServerAction};
use ksasl::mech::nothing_pending;
use ksasl::CredentialAnswer;

use crate::config::ServerConfig;
use crate::dicts::{decode, server_session};
use crate::glue::*;
use crate::hostmech::{host_task, late};

type Output = (&'static str, Bytes, Option<i64>, Option<PyObject>);

/// The action with the frames the connection queued. A callback's exception is raised
/// unchanged.
fn output(
    py: Python<'_>,
    c: &mut server::ServerConnection,
    action: ServerAction,
) -> PyResult<Output> {
    let frames = c.poll_transmit().unwrap_or_default();
    let action = unless_raised(action)?;
    let error = action.error().map(|e| exception(py, e)).transpose()?;
    Ok((
        action.kind().name(),
        frames.into(),
        action.deadline_ms(),
        error,
    ))
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
        let mut c = lock(py, &self.0);
        let c = &mut *c;
        let action = py.allow_threads(|| c.handle_frame(frame, now(now_ms)));
        output(py, c, action)
    }

    #[pyo3(signature = (answer, now_ms = None))]
    fn provide_credential(&self, py: Python<'_>, answer: &Any, now_ms: Now) -> PyResult<Output> {
        let mut g = lock(py, &self.0);
        let answer = match g.pending_request() {
            Some(req) => decode(req, answer)?.and_then(|l| l.now()).or_raise()?,
            None => CredentialAnswer::Unknown, // nothing was requested: the core refuses it
        };
        let c = &mut *g;
        let action = py.allow_threads(|| c.provide_credential(answer, now(now_ms)));
        output(py, c, action)
    }

    fn host_task(&self, py: Python<'_>) -> PyResult<PyObject> {
        host_task(py, lock(py, &self.0).host_task())
    }

    #[pyo3(signature = (result, now_ms = None))]
    fn resume(&self, py: Python<'_>, result: &Any, now_ms: Now) -> PyResult<Output> {
        let mut c = lock(py, &self.0);
        let work = c
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(&nothing_pending()))?;
        let step = late(py, true, result)
            .late_server_step(&work, 0)
            .or_raise()?;
        let action = c.resume(step, now(now_ms));
        output(py, &mut c, action)
    }

    /// A frame's declared length, checked before the body is read (Kafka's limits).
    #[pyo3(signature = (declared, now_ms = None))]
    fn check_frame_size(&self, py: Python<'_>, declared: i32, now_ms: Now) -> PyResult<usize> {
        lock(py, &self.0)
            .check_frame_size(declared, now(now_ms))
            .or_raise()
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

    /// The request that interrupted the exchange when ksasl does not have its API's schema.
    fn refused_request<'py>(&self, py: Python<'py>) -> PyResult<Option<Dict<'py>>> {
        lock(py, &self.0)
            .refused_request()
            .map(|r| {
                Ok(dict!(py, api_key: r.api_key, api_version: r.api_version,
                    correlation_id: r.correlation_id, error_code: r.error_code,
                    error_message: &r.error_message))
            })
            .transpose()
    }

    #[getter]
    fn ready(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).is_ready()
    }

    fn next_deadline(&self, py: Python<'_>) -> Option<i64> {
        lock(py, &self.0).next_deadline()
    }

    fn session<'py>(&self, py: Python<'py>) -> PyResult<Option<Dict<'py>>> {
        lock(py, &self.0)
            .session()
            .map(|s| server_session(py, s))
            .transpose()
    }
}
