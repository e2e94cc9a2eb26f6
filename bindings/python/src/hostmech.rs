//! Mechanisms written in Python (KIP-43 pluggability): objects with `start`/`step` registered
//! by name, driven by ksasl's authenticators and connection drivers like the built-ins.

use ksasl::mech::{Authenticated, ClientMechanism, ClientStep, MechServerStep};
use ksasl::{Error, ErrorCode, Result};
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

/// A client mechanism implemented by a Python object: `start(now_ms)` and
/// `step(challenge, now_ms)` return `(message or None, done)`.
pub struct PyClientMechanism {
    pub name: String,
    pub obj: PyObject,
}

impl PyClientMechanism {
    fn call(
        &self,
        method: &str,
        invoke: impl FnOnce(Python<'_>) -> PyResult<PyObject>,
    ) -> Result<ClientStep> {
        Python::with_gil(|py| {
            let out = invoke(py).map_err(|e| host_error(py, &self.name, e))?;
            let (message, done): (Option<Vec<u8>>, bool) = out.extract(py).map_err(|_| {
                protocol(
                    &self.name,
                    &format!("{method}() did not return (bytes or None, done)"),
                )
            })?;
            Ok(match (message, done) {
                (m, true) => ClientStep::Done(m),
                (Some(m), false) => ClientStep::Send(m),
                (None, false) => {
                    return Err(protocol(
                        &self.name,
                        &format!("{method}() returned no message before it was done"),
                    ))
                }
            })
        })
    }
}

impl ClientMechanism for PyClientMechanism {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        self.call("start", |py| self.obj.call_method1(py, "start", (now_ms,)))
    }

    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        self.call("step", |py| {
            self.obj
                .call_method1(py, "step", (PyBytes::new(py, challenge), now_ms))
        })
    }
}

/// A server mechanism implemented by a Python object: `step(response, now_ms)` returns
/// `("challenge", bytes)` or `("done", final message or None, authorization id,
/// credential expiry ms or None)`.
pub struct PyServerMechanism {
    pub name: String,
    pub obj: PyObject,
}

impl ksasl::mech::ServerMechanism for PyServerMechanism {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        Python::with_gil(|py| {
            let r = PyBytes::new(py, response);
            let out = self
                .obj
                .call_method1(py, "step", (r, now_ms))
                .map_err(|e| host_error(py, &self.name, e))?;
            let bad = || {
                protocol(
                    &self.name,
                    "step() did not return (\"challenge\", bytes) or (\"done\", message, principal, expiry)",
                )
            };
            let t = out.bind(py).downcast::<PyTuple>().map_err(|_| bad())?;
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
                    let expiry: Option<i64> =
                        t.get_item(3).and_then(|x| x.extract()).map_err(|_| bad())?;
                    if who.is_empty() {
                        return Err(protocol(
                            &self.name,
                            "authenticated nobody (empty principal)",
                        ));
                    }
                    let mut a = Authenticated::new(who);
                    a.credential_expiry_ms = expiry;
                    Ok(MechServerStep::Done(message, a))
                }
                _ => Err(bad()),
            }
        })
    }
}
