//! Shared glue: errors as exceptions, callback exceptions per thread, locks, the clock.

use std::cell::RefCell;
use std::sync::{MutexGuard, TryLockError};

use pyo3::sync::GILOnceCell;

// What every module of the binding uses (`use crate::glue::*`).
pub(crate) use ksasl::{Error, ErrorCode};
pub(crate) use pyo3::prelude::*;
pub(crate) use pyo3::types::{PyBytes, PyDict, PyTuple};
pub(crate) use std::sync::{Arc, Mutex};

/// Sets each field of `$to` whose argument of the same name the caller gave.
macro_rules! given {
    ($to:ident: $($f:ident),*) => { $(if let Some(v) = $f { $to.$f = v; })* };
}

/// Calls each builder setter whose argument the caller gave.
macro_rules! set_given {
    ($b:ident: $($setter:ident($arg:ident)),*) => { $(if let Some(v) = $arg { $b.$setter(v); })* };
}
/// A new dict of the given keys and values (`?` on failure).
macro_rules! dict {
    ($py:expr, $($k:ident: $v:expr),* $(,)?) => {{
        let d = PyDict::new($py);
        $(d.set_item(stringify!($k), $v)?;)*
        d
    }};
}
/// A class's `#[pymethods]` block, its methods in order (pyo3 wants one block per class):
/// - `fn name(arg: Type = default, ..) -> R { body }`: a method with `py` and `c` (the inner
///   value, locked when the class says `lock`) in scope; `signature` has the defaults;
/// - `#[getter] fn name() -> R { body }`: a getter with `py` and `c`;
/// - `new(arg: Type = default, ..) -> R { body }`: the constructor, with `py`;
/// - `{ items }`: items written in full.
macro_rules! class {
    ($ty:ident |$py:ident, $c:ident| $how:ident { $($items:tt)* }) => {
        class!(@ $ty $py $c $how [] $($items)*);
    };
    (@ $ty:ident $py:ident $c:ident $how:ident [$($out:tt)*]) => {
        #[pymethods]
        impl $ty { $($out)* }
    };
    (@ $ty:ident $py:ident $c:ident $how:ident [$($out:tt)*] { $($item:tt)* } $($rest:tt)*) => {
        class!(@ $ty $py $c $how [$($out)* $($item)*] $($rest)*);
    };
    (@ $ty:ident $py:ident $c:ident $how:ident [$($out:tt)*]
        $(#[doc = $doc:literal])* new($($a:ident: $t:ty $(= $d:tt)?),* $(,)?) -> $r:ty
        { $($body:tt)* } $($rest:tt)*) => {
        class!(@ $ty $py $c $how [$($out)*
            $(#[doc = $doc])*
            #[new]
            #[pyo3(signature = ($($a $(= $d)?),*))]
            #[allow(clippy::too_many_arguments)]
            fn new($py: Python<'_>, $($a: $t),*) -> $r {
                let _ = $py;
                $($body)*
            }
        ] $($rest)*);
    };
    (@ $ty:ident $py:ident $c:ident $how:ident [$($out:tt)*]
        $(#[doc = $doc:literal])* #[getter] fn $name:ident() -> $r:ty { $($body:tt)* }
        $($rest:tt)*) => {
        class!(@ $ty $py $c $how [$($out)*
            $(#[doc = $doc])*
            #[getter]
            fn $name(&self, $py: Python<'_>) -> $r {
                class!(@inner $how $py $c self);
                $($body)*
            }
        ] $($rest)*);
    };
    (@ $ty:ident $py:ident $c:ident $how:ident [$($out:tt)*]
        $(#[doc = $doc:literal])* fn $name:ident($($a:ident: $t:ty $(= $d:tt)?),* $(,)?)
        $(-> $r:ty)? { $($body:tt)* } $($rest:tt)*) => {
        class!(@ $ty $py $c $how [$($out)*
            $(#[doc = $doc])*
            #[pyo3(signature = ($($a $(= $d)?),*))]
            fn $name<'py>(&self, $py: Python<'py>, $($a: $t),*) $(-> $r)? {
                class!(@inner $how $py $c self);
                $($body)*
            }
        ] $($rest)*);
    };
    (@inner lock $py:ident $c:ident $s:tt) => {
        let mut held = lock($py, &$s.0);
        let $c = &mut *held;
    };
    (@inner shared $py:ident $c:ident $s:tt) => {
        let _ = $py;
        let $c = &$s.0;
    };
}
pub(crate) use {class, dict, given, set_given};

pub(crate) type Bytes = std::borrow::Cow<'static, [u8]>;
pub(crate) type Any<'py> = Bound<'py, PyAny>;
pub(crate) type Dict<'py> = Bound<'py, PyDict>;
pub(crate) type Now = Option<i64>;

static ERRORS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

fn errors(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    let m = ERRORS.get_or_try_init(py, || py.import("ksasl.errors").map(Bound::unbind))?;
    Ok(m.bind(py))
}

/// The `ksasl.errors` exception (not raised) for a core error, with `client_message`.
pub(crate) fn exception(py: Python<'_>, e: &Error) -> PyResult<PyObject> {
    let (code, kind) = (e.code(), e.kind().name());
    let details = e.details().to_vec();
    let args = (e.message(), code.as_u32(), code.name(), kind, details);
    let make = errors(py)?.getattr("_from_core")?;
    let v = make.call1((args, e.client_text(), code.is_state_misuse()))?;
    Ok(v.unbind())
}

pub(crate) fn py_err(e: &Error) -> PyErr {
    Python::with_gil(|py| match exception(py, e) {
        Ok(v) => PyErr::from_value(v.into_bound(py)),
        Err(err) => err,
    })
}

pub(crate) trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for ksasl::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(|e| py_err(&e))
    }
}

/// A Python exception as the host's answer: a `KsaslError`'s code and message, or the text.
pub(crate) fn host_text(py: Python<'_>, e: &PyErr) -> (Option<ErrorCode>, String) {
    let v = e.value(py);
    match errors(py).and_then(|m| v.is_instance(&m.getattr("KsaslError")?)) {
        Ok(true) => {
            let code = v.getattr("code").and_then(|c| c.extract()).ok();
            let text = v.getattr("message").and_then(|m| m.extract());
            (code.and_then(ErrorCode::from_u32), text.unwrap_or_default())
        }
        _ => (None, e.to_string()),
    }
}

thread_local! {
    /// A callback's exception, kept for (and drained by) the thread whose core call ran it.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keeps a callback's exception for its caller; the core gets an error with its text.
pub(crate) fn keep(py: Python<'_>, e: PyErr, code: ErrorCode) -> Error {
    let text = host_text(py, &e).1;
    RAISED.with(|r| {
        r.borrow_mut().get_or_insert(e);
    });
    Error::new(code, text)
}

/// `value`, unless a callback raised during the core call that made it: then its exception.
pub(crate) fn unless_raised<T>(value: T) -> PyResult<T> {
    let raised = RAISED.with(|r| r.borrow_mut().take());
    raised.map_or(Ok(value), Err)
}

/// Locks `m`; while another thread holds it, waits without the GIL (that thread may need it).
pub(crate) fn lock<'a, T: Send>(py: Python<'_>, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    loop {
        match m.try_lock() {
            Ok(g) => return g,
            Err(TryLockError::Poisoned(p)) => return p.into_inner(),
            Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(m.lock())),
        }
    }
}

/// The binding's default clock.
pub(crate) fn now(now_ms: Now) -> i64 {
    now_ms.unwrap_or_else(ksasl::background::wall_clock_ms)
}
