//! Mechanisms written in Python: their answers go into the core's `HostOutput`, which holds
//! the rules; an `async def` method's awaitable is the pending work.

use ksasl::mech::{host_failure, nothing_pending, HostClientCalls, HostServerCalls, HostTask};
use ksasl::wire::ServerStepKind;
use ksasl::{ErrorCode, HostOutput, HostWork};
use pyo3::exceptions::PyBaseException;

use crate::dicts::request_dict;
use crate::glue::*;

type Late = ksasl::Result<ksasl::ClientStep>;
type LateServer = ksasl::Result<ksasl::mech::MechServerStep>;

pub(crate) struct PyMechanism(PyObject);

impl PyMechanism {
    pub(crate) fn make(name: &str, factory: &PyObject) -> ksasl::Result<Box<Self>> {
        Python::with_gil(|py| match factory.call0(py) {
            Ok(obj) => Ok(Box::new(PyMechanism(obj))),
            Err(e) => {
                let (code, text) = host_text(py, &e);
                Err(host_failure(name, "factory", code, &text))
            }
        })
    }
}

impl HostClientCalls for PyMechanism {
    fn call(&mut self, challenge: Option<&[u8]>, now_ms: i64, out: &mut HostOutput) -> i64 {
        Python::with_gil(|py| {
            let obj = self.0.bind(py);
            let r = match challenge {
                None => obj.call_method1("start", (now_ms,)),
                Some(b) => obj.call_method1("step", (PyBytes::new(py, b), now_ms)),
            };
            answer(py, out, r);
        });
        0
    }
}

impl HostServerCalls for PyMechanism {
    fn call(&mut self, response: &[u8], now_ms: i64, out: &mut HostOutput) -> i64 {
        HostClientCalls::call(self, Some(response), now_ms, out)
    }
}

/// A method's result (or exception) written into `out`.
fn answer(py: Python<'_>, out: &mut HostOutput, r: PyResult<Bound<'_, PyAny>>) {
    let v = match r {
        Ok(v) => v,
        Err(e) => {
            let (code, text) = host_text(py, &e);
            return out.set_error(code, &text);
        }
    };
    // A tuple is an answer; only something else is asked for `__await__` (a failed
    // `hasattr` costs an AttributeError).
    let awaitable = !v.is_instance_of::<PyTuple>() && v.hasattr("__await__").unwrap_or(false);
    let refused = if awaitable {
        let _ = out.set_pending(v.unbind());
        None
    } else if out.is_server() {
        server_answer(out, &v).is_none().then_some(
            "did not return (\"challenge\", bytes) or (\"done\", message, authorization id, expiry)",
        )
    } else if let Ok((message, done)) = v.extract::<(Option<Vec<u8>>, bool)>() {
        let _ = message.map(|m| out.set_message(&m));
        let _ = done.then(|| out.set_done());
        None
    } else {
        Some("did not return (bytes or None, done)")
    };
    if let Some(what) = refused {
        out.refuse(ErrorCode::HostMechanismFailed, what);
    }
}

fn server_answer(out: &mut HostOutput, v: &Bound<'_, PyAny>) -> Option<()> {
    let kind: String = v.get_item(0).ok()?.extract().ok()?;
    match ServerStepKind::from_name(&kind).ok()? {
        ServerStepKind::Challenge => {
            let (_, challenge): (String, Vec<u8>) = v.extract().ok()?;
            let _ = out.set_message(&challenge);
        }
        ServerStepKind::Done => {
            let (_, message, who, expiry): (String, Option<Vec<u8>>, String, Option<i64>) =
                v.extract().ok()?;
            let _ = message.map(|m| out.set_message(&m));
            let _ = out.set_authenticated(&who, expiry);
        }
        _ => return None,
    }
    Some(())
}

/// The late answer (what the awaitable returned, or raised) to the pending `work`, as the
/// core's step for `resume`; raises when nothing is pending.
fn late<R>(
    py: Python<'_>,
    work: Option<&HostWork>,
    result: &Any,
    server: bool,
    step: impl FnOnce(HostOutput, &HostWork) -> ksasl::Result<R>,
) -> PyResult<R> {
    let work = work.ok_or_else(|| py_err(&nothing_pending()))?;
    let mut out = HostOutput::new(server);
    let r = match result.is_instance_of::<PyBaseException>() {
        true => Err(PyErr::from_value(result.clone())),
        false => Ok(result.clone()),
    };
    answer(py, &mut out, r);
    step(out, work).or_raise()
}

pub(crate) fn late_client(py: Python<'_>, w: Option<&HostWork>, r: &Any) -> PyResult<Late> {
    late(py, w, r, false, |o, w| o.late_client_step(w, 0))
}

pub(crate) fn late_server(py: Python<'_>, w: Option<&HostWork>, r: &Any) -> PyResult<LateServer> {
    late(py, w, r, true, |o, w| o.late_server_step(w, 0))
}

pub(crate) fn awaitable(py: Python<'_>, work: Option<&HostWork>) -> Option<PyObject> {
    work?.downcast_ref::<PyObject>().map(|a| a.clone_ref(py))
}

pub(crate) fn host_task(py: Python<'_>, task: Option<HostTask<'_>>) -> PyResult<PyObject> {
    let task = match task {
        None => return Ok(py.None()),
        Some(HostTask::Credential(r)) => ("credential", request_dict(py, r)?.into_any()),
        Some(HostTask::Mechanism(w)) => ("mechanism", awaitable(py, Some(w)).into_pyobject(py)?),
    };
    Ok(task.into_pyobject(py)?.into_any().unbind())
}
