//! `ClientExchange` and `ServerExchange`: one SASL exchange without Kafka framing.

use ksasl::mech;
use ksasl::{ClientStep, ServerStep};

use crate::dicts::{answer_now, server_session};
use crate::glue::*;
use crate::hostmech::{awaitable, host_task, late_client, late_server};
use crate::registry::MechanismRegistry;

type ClientOut = Option<(Option<Bytes>, bool)>;
type ServerOut = (&'static str, Option<Bytes>);

fn client_out(r: ksasl::Result<ClientStep>) -> PyResult<ClientOut> {
    Ok(match r.or_raise()? {
        ClientStep::Send(b) => Some((Some(b.into()), false)),
        ClientStep::Done(b) => Some((b.map(Bytes::from), true)),
        ClientStep::Pending(_) => None,
    })
}

/// A callback's exception is raised unchanged.
fn server_out(r: ksasl::Result<ServerStep>) -> PyResult<ServerOut> {
    let step = unless_raised(r)?.or_raise()?;
    let kind = step.kind().name();
    let message = match step {
        ServerStep::Challenge(b) => Some(b),
        ServerStep::Done { message, .. } => message,
        _ => None,
    };
    Ok((kind, message.map(Bytes::from)))
}

/// One client exchange (no Kafka framing); concurrent calls wait for each other.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ClientExchange(Mutex<mech::ClientExchange>);

class! { ClientExchange |py, c| lock {
    new(registry: &MechanismRegistry, mechanism: &str) -> PyResult<Self> {
        let ex = registry.snapshot(py).client(mechanism).or_raise()?;
        Ok(ClientExchange(Mutex::new(ex)))
    }
    fn start(now_ms: Now = None) -> PyResult<ClientOut> {
        client_out(py.allow_threads(|| c.start(now(now_ms))))
    }
    /// PBKDF2 and signature checks run without the GIL.
    fn step(challenge: &[u8], now_ms: Now = None) -> PyResult<ClientOut> {
        client_out(py.allow_threads(|| c.step(challenge, now(now_ms))))
    }
    fn pending_work() -> Option<PyObject> { awaitable(py, c.pending_work()) }
    fn resume(result: &Any) -> PyResult<ClientOut> {
        client_out(c.resume(late_client(py, c.pending_work(), result)?))
    }
    fn server_failed(server_message: Option<String> = None) -> PyResult<()> {
        Err(py_err(&c.server_failed(server_message.as_deref())))
    }
    #[getter] fn mechanism() -> String { c.mechanism().to_string() }
    #[getter] fn complete() -> bool { c.is_complete() }
}}

/// One server exchange (no Kafka framing); concurrent calls wait for each other.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerExchange(Mutex<mech::ServerExchange>);

class! { ServerExchange |py, c| lock {
    new(registry: &MechanismRegistry, mechanism: &str, max_reauth_ms: Option<i64> = None)
        -> PyResult<Self> {
        let mut ex = registry.snapshot(py).server(mechanism).or_raise()?;
        set_given!(ex: set_max_reauth_ms(max_reauth_ms));
        Ok(ServerExchange(Mutex::new(ex)))
    }
    fn step(response: &[u8], now_ms: Now = None) -> PyResult<ServerOut> {
        server_out(py.allow_threads(|| c.step(response, now(now_ms))))
    }
    fn provide_credential(answer: &Any, now_ms: Now = None) -> PyResult<ServerOut> {
        let answer = answer_now(c.pending_request(), answer)?;
        server_out(py.allow_threads(|| c.provide_credential(answer, now(now_ms))))
    }
    fn host_task() -> PyResult<PyObject> { host_task(py, c.host_task()) }
    fn resume(result: &Any, now_ms: Now = None) -> PyResult<ServerOut> {
        server_out(c.resume(late_server(py, c.pending_work(), result)?, now(now_ms)))
    }
    fn outcome() -> PyResult<Option<Dict<'py>>> {
        c.session().map(|s| server_session(py, s)).transpose()
    }
    #[getter] fn client_message() -> Option<String> { c.client_message() }
}}
