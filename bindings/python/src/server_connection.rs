//! `ServerConnection`: the core's broker-side driver and its per-request gate.

use ksasl::kafka::server::{ServerAction, ServerConnection as Server};

use crate::config::ServerConfig;
use crate::dicts::{answer_now, server_session};
use crate::glue::*;
use crate::hostmech::{host_task, late_server};

type Output = (&'static str, Bytes, Option<i64>, Option<PyObject>);

/// The action with the frames the connection queued. A callback's exception is raised
/// unchanged.
fn output(py: Python<'_>, action: ServerAction, c: &mut Server) -> PyResult<Output> {
    let frames = c.poll_transmit().unwrap_or_default().into();
    let action = unless_raised(action)?;
    let error = action.error().map(|e| exception(py, e)).transpose()?;
    Ok((action.kind().name(), frames, action.deadline_ms(), error))
}

/// A server connection's SASL state; `handle_frame`, `provide_credential` and `resume` return
/// `(action, frames, deadline_ms, error)`, the error saying why a connection fails.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerConnection(Mutex<Server>);

class! { ServerConnection |py, c| lock {
    new(config: &ServerConfig) -> Self {
        ServerConnection(Mutex::new(Server::new(config.0.clone())))
    }
    fn handle_frame(frame: &[u8], now_ms: Now = None) -> PyResult<Output> {
        output(py, py.allow_threads(|| c.handle_frame(frame, now(now_ms))), c)
    }
    fn provide_credential(answer: &Any, now_ms: Now = None) -> PyResult<Output> {
        let answer = answer_now(c.pending_request(), answer)?;
        output(py, py.allow_threads(|| c.provide_credential(answer, now(now_ms))), c)
    }
    fn host_task() -> PyResult<PyObject> { host_task(py, c.host_task()) }
    fn resume(result: &Any, now_ms: Now = None) -> PyResult<Output> {
        output(py, c.resume(late_server(py, c.pending_work(), result)?, now(now_ms)), c)
    }
    /// A frame's declared length, checked before the body is read (Kafka's limits).
    fn check_frame_size(declared: i32, now_ms: Now = None) -> PyResult<usize> {
        c.check_frame_size(declared, now(now_ms)).or_raise()
    }
    fn gate(api_key: i16, now_ms: Now = None) -> &'static str {
        c.gate(api_key, now(now_ms)).name()
    }
    {
        /// Kafka's ILLEGAL_SASL_STATE answer to a SASL request after authentication.
        #[staticmethod]
        fn illegal_state_response(frame: &[u8]) -> Option<Bytes> {
            Server::illegal_state_response(frame).map(Bytes::from)
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
    }
    #[getter] fn ready() -> bool { c.is_ready() }
    fn next_deadline() -> Option<i64> { c.next_deadline() }
    fn session() -> PyResult<Option<Dict<'py>>> {
        c.session().map(|s| server_session(py, s)).transpose()
    }
}}
