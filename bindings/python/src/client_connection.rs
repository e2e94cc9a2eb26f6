//! `ClientConnection`: the core's client driver (Kafka framing, KIP-368 re-authentication).

use ksasl::kafka::client::{self, ClientEvent};

use crate::config::ClientConfig;
use crate::dicts::client_session;
use crate::glue::*;
use crate::hostmech::{awaitable, late_client};

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

class! { ClientConnection |py, c| lock {
    new(config: &ClientConfig) -> Self {
        ClientConnection(Mutex::new(client::ClientConnection::new(config.0.clone())))
    }
    /// Starting an exchange may ask the KDC for a ticket (GSSAPI): without the GIL.
    fn start(now_ms: Now = None) -> PyResult<()> {
        py.allow_threads(|| c.start(now(now_ms))).or_raise()
    }
    fn transmit() -> Bytes { c.poll_transmit().unwrap_or_default().into() }
    fn handle_frame(frame: &Bound<'_, PyBytes>, now_ms: Now = None) -> PyResult<Event> {
        let bytes = frame.as_bytes();
        event(py, py.allow_threads(|| c.handle_frame(bytes, now(now_ms))), Some(frame))
    }
    fn pending_work() -> Option<PyObject> { awaitable(py, c.pending_work()) }
    fn resume(result: &Any, now_ms: Now = None) -> PyResult<Event> {
        event(py, c.resume(late_client(py, c.pending_work(), result)?, now(now_ms)), None)
    }
    fn closed(now_ms: Now = None) -> PyResult<()> { Err(py_err(&c.connection_closed(now(now_ms)))) }
    fn next_deadline() -> Option<i64> { c.next_deadline() }
    fn handle_timeout(now_ms: Now = None) -> PyResult<bool> {
        py.allow_threads(|| c.handle_timeout(now(now_ms))).or_raise()
    }
    fn reauth_pending(now_ms: Now = None) -> bool { c.reauth_pending(now(now_ms)) }
    fn before_request(now_ms: Now = None) -> PyResult<bool> {
        py.allow_threads(|| c.before_request(now(now_ms))).or_raise()
    }
    fn start_reauthentication(now_ms: Now = None) -> PyResult<bool> {
        py.allow_threads(|| c.start_reauthentication(now(now_ms))).or_raise()
    }
    fn session() -> PyResult<Option<Dict<'py>>> {
        c.session().map(|s| client_session(py, s)).transpose()
    }
    #[getter] fn reauthenticating() -> bool { c.is_reauthenticating() }
}}
