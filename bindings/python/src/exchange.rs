//! `ClientExchange` and `ServerExchange`: one SASL exchange without Kafka framing.

use ksasl::mech::{self, nothing_pending};
use ksasl::{ClientStep, CredentialAnswer, ServerStep};

use crate::dicts::{decode, server_session};
use crate::glue::*;
use crate::hostmech::{awaitable, host_task, late};
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
        ServerStep::Challenge(b)
        | ServerStep::Done {
            message: Some(b), ..
        } => Some(b.into()),
        _ => None,
    };
    Ok((kind, message))
}

/// One client exchange (no Kafka framing); concurrent calls wait for each other.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ClientExchange(Mutex<mech::ClientExchange>);

#[pymethods]
impl ClientExchange {
    #[new]
    fn new(py: Python<'_>, registry: &MechanismRegistry, mechanism: &str) -> PyResult<Self> {
        let ex = registry.snapshot(py).client(mechanism).or_raise()?;
        Ok(ClientExchange(Mutex::new(ex)))
    }

    #[pyo3(signature = (now_ms = None))]
    fn start(&self, py: Python<'_>, now_ms: Now) -> PyResult<ClientOut> {
        client_out(without_gil(py, &self.0, |x| x.start(now(now_ms))))
    }

    /// PBKDF2 and signature checks run without the GIL.
    #[pyo3(signature = (challenge, now_ms = None))]
    fn step(&self, py: Python<'_>, challenge: &[u8], now_ms: Now) -> PyResult<ClientOut> {
        client_out(without_gil(py, &self.0, |x| x.step(challenge, now(now_ms))))
    }

    fn pending_work(&self, py: Python<'_>) -> Option<PyObject> {
        awaitable(py, lock(py, &self.0).pending_work())
    }

    fn resume(&self, py: Python<'_>, result: &Any) -> PyResult<ClientOut> {
        let mut x = lock(py, &self.0);
        let work = x
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(&nothing_pending()))?;
        let step = late(py, false, result)
            .late_client_step(&work, 0)
            .or_raise()?;
        client_out(x.resume(step))
    }

    #[pyo3(signature = (server_message = None))]
    fn server_failed(&self, py: Python<'_>, server_message: Option<&str>) -> PyResult<()> {
        Err(py_err(&lock(py, &self.0).server_failed(server_message)))
    }

    #[getter]
    fn mechanism(&self, py: Python<'_>) -> String {
        lock(py, &self.0).mechanism().to_string()
    }

    #[getter]
    fn complete(&self, py: Python<'_>) -> bool {
        lock(py, &self.0).is_complete()
    }
}

/// One server exchange (no Kafka framing); concurrent calls wait for each other.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct ServerExchange(Mutex<mech::ServerExchange>);

#[pymethods]
impl ServerExchange {
    #[new]
    #[pyo3(signature = (registry, mechanism, max_reauth_ms = None))]
    fn new(
        py: Python<'_>,
        registry: &MechanismRegistry,
        mechanism: &str,
        max_reauth_ms: Option<i64>,
    ) -> PyResult<Self> {
        let mut ex = registry.snapshot(py).server(mechanism).or_raise()?;
        if let Some(ms) = max_reauth_ms {
            ex.set_max_reauth_ms(ms);
        }
        Ok(ServerExchange(Mutex::new(ex)))
    }

    #[pyo3(signature = (response, now_ms = None))]
    fn step(&self, py: Python<'_>, response: &[u8], now_ms: Now) -> PyResult<ServerOut> {
        server_out(without_gil(py, &self.0, |x| x.step(response, now(now_ms))))
    }

    #[pyo3(signature = (answer, now_ms = None))]
    fn provide_credential(&self, py: Python<'_>, answer: &Any, now_ms: Now) -> PyResult<ServerOut> {
        let mut g = lock(py, &self.0);
        let a = match g.pending_request() {
            Some(req) => decode(req, answer)?.and_then(|l| l.now()).or_raise()?,
            None => CredentialAnswer::Unknown, // nothing is pending: the exchange refuses it
        };
        let x = &mut *g;
        server_out(py.allow_threads(move || x.provide_credential(a, now(now_ms))))
    }

    fn host_task(&self, py: Python<'_>) -> PyResult<PyObject> {
        host_task(py, lock(py, &self.0).host_task())
    }

    #[pyo3(signature = (result, now_ms = None))]
    fn resume(&self, py: Python<'_>, result: &Any, now_ms: Now) -> PyResult<ServerOut> {
        let mut x = lock(py, &self.0);
        let work = x
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(&nothing_pending()))?;
        let step = late(py, true, result)
            .late_server_step(&work, 0)
            .or_raise()?;
        server_out(x.resume(step, now(now_ms)))
    }

    fn outcome<'py>(&self, py: Python<'py>) -> PyResult<Option<Dict<'py>>> {
        lock(py, &self.0)
            .session()
            .map(|s| server_session(py, s))
            .transpose()
    }

    #[getter]
    fn client_message(&self, py: Python<'_>) -> Option<String> {
        lock(py, &self.0).client_message()
    }
}
