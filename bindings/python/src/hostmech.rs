//! Mechanisms written in Python (KIP-43 pluggability): objects with `start`/`step` registered
//! by name, driven by ksasl's authenticators and connection drivers like the built-ins.

use ksasl::mech::{Authenticated, ClientMechanism, ClientStep, HostWork, MechServerStep};
use ksasl::{Error, ErrorCode, Result};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// The library error for an exception raised by host code: a `KsaslError` keeps its code,
/// anything else becomes HOST_MECHANISM_FAILED with the exception's text.
fn host_error(py: Python<'_>, mechanism: &str, e: PyErr) -> Error {
    let v = e.value(py);
    if let (Ok(code), Ok(message)) = (v.getattr("code"), v.getattr("message")) {
        if let (Ok(code), Ok(message)) = (code.extract::<u32>(), message.extract::<String>()) {
            if let Some(c) = ErrorCode::from_u32(code) {
                return Error::new(c, message);
            }
        }
    }
    Error::new(
        ErrorCode::HostMechanismFailed,
        format!("the {mechanism} mechanism raised {}", e),
    )
}

fn protocol(mechanism: &str, what: &str) -> Error {
    Error::new(
        ErrorCode::HostMechanismFailed,
        format!("the {mechanism} mechanism {what}"),
    )
}

/// One exchange's mechanism object: `factory()`, whose exception becomes
/// HOST_MECHANISM_FAILED.
pub fn instantiate(name: &str, factory: &PyObject) -> Result<PyObject> {
    Python::with_gil(|py| factory.call0(py)).map_err(|e| {
        Error::new(
            ErrorCode::HostMechanismFailed,
            format!("the {name} factory raised {e}"),
        )
    })
}

/// Work a Python mechanism handed out: the awaitable its `start`/`step` returned, and who
/// returned it (for error messages when the result comes back).
pub struct PyWork {
    pub awaitable: PyObject,
    pub mechanism: String,
    pub method: &'static str,
}

/// Whether a mechanism method answered with an awaitable (an `async def` method).
fn is_awaitable(out: &Bound<'_, PyAny>) -> bool {
    out.hasattr("__await__").unwrap_or(false)
}

/// The work a pending step carries, if it came from a Python mechanism.
pub fn awaitable(py: Python<'_>, work: &HostWork) -> Option<PyObject> {
    work.downcast_ref::<PyWork>()
        .map(|w| w.awaitable.clone_ref(py))
}

/// What the host passes to `resume`: the awaited result, or the exception it raised.
fn resumed<T>(
    py: Python<'_>,
    work: &HostWork,
    result: &Bound<'_, PyAny>,
    parse: impl FnOnce(&str, &'static str, &Bound<'_, PyAny>) -> Result<T>,
) -> Result<T> {
    let Some(w) = work.downcast_ref::<PyWork>() else {
        return Err(Error::new(
            ErrorCode::Internal,
            "the pending work did not come from a Python mechanism",
        ));
    };
    if result.is_instance_of::<PyBaseException>() {
        return Err(host_error(
            py,
            &w.mechanism,
            PyErr::from_value(result.clone()),
        ));
    }
    parse(&w.mechanism, w.method, result)
}

/// A client mechanism's answer: `(message or None, done)`.
fn client_step(name: &str, method: &str, out: &Bound<'_, PyAny>) -> Result<ClientStep> {
    let (message, done): (Option<Vec<u8>>, bool) = out.extract().map_err(|_| {
        protocol(
            name,
            &format!("{method}() did not return (bytes or None, done)"),
        )
    })?;
    Ok(match (message, done) {
        (m, true) => ClientStep::Done(m),
        (Some(m), false) => ClientStep::Send(m),
        (None, false) => {
            return Err(protocol(
                name,
                &format!("{method}() returned no message before it was done"),
            ))
        }
    })
}

/// Continues a client exchange with what an `async` mechanism method produced.
pub fn resume_client(
    py: Python<'_>,
    work: &HostWork,
    result: &Bound<'_, PyAny>,
) -> Result<ClientStep> {
    resumed(py, work, result, client_step)
}

/// A server mechanism's answer: `("challenge", bytes)` or `("done", message, authorization
/// id, expiry)`.
fn server_step(name: &str, method: &str, out: &Bound<'_, PyAny>) -> Result<MechServerStep> {
    let bad = || {
        protocol(
            name,
            &format!("{method}() did not return (\"challenge\", bytes) or (\"done\", message, principal, expiry)"),
        )
    };
    let t = out.downcast::<PyTuple>().map_err(|_| bad())?;
    let kind: String = t.get_item(0).and_then(|k| k.extract()).map_err(|_| bad())?;
    match kind.as_str() {
        "challenge" if t.len() == 2 => {
            let c: Vec<u8> = t.get_item(1).and_then(|c| c.extract()).map_err(|_| bad())?;
            Ok(MechServerStep::Challenge(c))
        }
        "done" if t.len() == 4 => {
            let message: Option<Vec<u8>> =
                t.get_item(1).and_then(|m| m.extract()).map_err(|_| bad())?;
            let who: String = t.get_item(2).and_then(|w| w.extract()).map_err(|_| bad())?;
            let expiry: Option<i64> = t.get_item(3).and_then(|x| x.extract()).map_err(|_| bad())?;
            if who.is_empty() {
                return Err(protocol(name, "authenticated nobody (empty principal)"));
            }
            let mut a = Authenticated::new(who);
            a.credential_expiry_ms = expiry;
            Ok(MechServerStep::Done(message, a))
        }
        _ => Err(bad()),
    }
}

/// Continues a server exchange with what an `async` mechanism method produced.
pub fn resume_server(
    py: Python<'_>,
    work: &HostWork,
    result: &Bound<'_, PyAny>,
) -> Result<MechServerStep> {
    resumed(py, work, result, server_step)
}

/// Calls a mechanism method (`start(now_ms)` without `input`, `step(input, now_ms)` with it):
/// its answer now, or the awaitable an `async` method returned, handed to the host as pending
/// work.
fn call<T>(
    name: &str,
    obj: &PyObject,
    method: &'static str,
    input: Option<&[u8]>,
    now_ms: i64,
    parse: impl FnOnce(&str, &'static str, &Bound<'_, PyAny>) -> Result<T>,
    pending: impl FnOnce(HostWork) -> T,
) -> Result<T> {
    Python::with_gil(|py| {
        let out = match input {
            Some(b) => obj.call_method1(py, method, (PyBytes::new(py, b), now_ms)),
            None => obj.call_method1(py, method, (now_ms,)),
        }
        .map_err(|e| host_error(py, name, e))?;
        let out = out.bind(py);
        if is_awaitable(out) {
            return Ok(pending(HostWork::new(PyWork {
                awaitable: out.clone().unbind(),
                mechanism: name.to_string(),
                method,
            })));
        }
        parse(name, method, out)
    })
}

/// A client mechanism implemented by a Python object: `start(now_ms)` and
/// `step(challenge, now_ms)` return `(message or None, done)`, or are `async` and return it
/// when awaited.
pub struct PyClientMechanism {
    pub name: String,
    pub obj: PyObject,
}

impl ClientMechanism for PyClientMechanism {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        let (n, o) = (&self.name, &self.obj);
        call(
            n,
            o,
            "start",
            None,
            now_ms,
            client_step,
            ClientStep::Pending,
        )
    }

    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        let (n, o) = (&self.name, &self.obj);
        call(
            n,
            o,
            "step",
            Some(challenge),
            now_ms,
            client_step,
            ClientStep::Pending,
        )
    }
}

/// A server mechanism implemented by a Python object: `step(response, now_ms)` returns
/// `("challenge", bytes)` or `("done", final message or None, authorization id,
/// credential expiry ms or None)`, or is `async` and returns it when awaited.
pub struct PyServerMechanism {
    pub name: String,
    pub obj: PyObject,
}

impl ksasl::mech::ServerMechanism for PyServerMechanism {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        let (n, o) = (&self.name, &self.obj);
        call(
            n,
            o,
            "step",
            Some(response),
            now_ms,
            server_step,
            MechServerStep::Pending,
        )
    }
}
