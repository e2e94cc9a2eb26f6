//! What every C object shares: last errors, the panic guard, handles, userdata, arguments.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::error::{Error, ErrorCode, ErrorKind, Result};
use crate::session::SaslMetrics;

/// A result code: 0 (`KSASL_OK`) is success, anything else an error (`ksasl_result_name`).
pub type ksasl_result = u32;

/// Frees a userdata pointer handed to the library with a callback.
pub type ksasl_free_fn = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// The detail of a handle's last failure (`NAME: message`), kept until the next failure.
#[derive(Default)]
pub(crate) struct LastError(Mutex<CString>);

impl LastError {
    pub(crate) fn set(&self, e: &Error) {
        let _ = self.0.lock().map(|mut s| *s = cstring(&e.to_string()));
    }
    // The text stays where it is until the next `set`, so the pointer outlives the lock.
    fn ptr(&self) -> *const c_char {
        self.0.lock().map_or(c"".as_ptr(), |s| s.as_ptr())
    }
}

/// A handle that keeps a last error.
pub(crate) trait HasError {
    fn err(&self) -> &LastError;
}

/// Implements [`HasError`] for a handle with an `err` field, and `new(inner)` for a handle
/// whose other fields start empty.
macro_rules! handle {
    ($t:ident $(($inner:ty $(, $field:ident)*))?) => {
        impl $crate::ffi::boundary::HasError for $t {
            fn err(&self) -> &$crate::ffi::boundary::LastError {
                &self.err
            }
        }
        $(impl $t {
            pub(crate) fn new(inner: $inner) -> Self {
                $t { inner, err: Default::default(), $($field: Default::default()),* }
            }
        })?
    };
}
pub(crate) use handle;

thread_local! {
    static THREAD_ERROR: LastError = LastError::default();
}

/// Runs `f` guarded against panics; a failure is kept by `keep` and returned as its code.
fn guard(f: impl FnOnce() -> Result<()>, keep: impl FnOnce(&Error)) -> ksasl_result {
    let panic = || {
        Err(Error::new(
            ErrorCode::Panic,
            "a panic was caught at the boundary",
        ))
    };
    let e = catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| panic())
        .err();
    e.map_or(0, |e| (keep(&e), e.code().as_u32()).1)
}

/// Runs `f` on the handle behind `p`; a failure is kept as the handle's last error.
pub(crate) fn with<T: HasError>(p: *mut T, f: impl FnOnce(&mut T) -> Result<()>) -> ksasl_result {
    match p.is_null() {
        true => ErrorCode::NullArgument.as_u32(),
        // `f` is done with the handle before its failure is kept.
        false => guard(|| f(unsafe { &mut *p }), |e| unsafe { &*p }.err().set(e)),
    }
}

/// Runs `f` on the read-only handle behind `p`; a failure is kept as the handle's last error.
pub(crate) fn with_ref<T: HasError>(p: *const T, f: impl FnOnce(&T) -> Result<()>) -> ksasl_result {
    let t = unsafe { p.as_ref() };
    t.map_or(ErrorCode::NullArgument.as_u32(), |t| {
        guard(|| f(t), |e| t.err().set(e))
    })
}

/// Runs `f` for a function without a handle of its own: a failure is kept for
/// `ksasl_last_constructor_error`.
pub(crate) fn with_thread(f: impl FnOnce() -> Result<()>) -> ksasl_result {
    guard(f, |e| THREAD_ERROR.with(|t| t.set(e)))
}

pub(crate) fn thread_error() -> *const c_char {
    THREAD_ERROR.with(|t| t.ptr())
}

/// Runs a constructor: on success the new handle is written to `out`.
pub(crate) fn construct<T>(out: *mut *mut T, f: impl FnOnce() -> Result<T>) -> ksasl_result {
    with_thread(|| Ok(put_new(nonnull(out, "out")?, f()?)))
}

pub(crate) fn free<T>(p: *mut T) {
    if !p.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(p) })));
    }
}

pub(crate) fn last_error<T: HasError>(p: *const T) -> *const c_char {
    get(p, c"".as_ptr(), |o| o.err().ptr())
}

/// A value read from a handle, or `none` for NULL.
pub(crate) fn get<T, R>(p: *const T, none: R, f: impl FnOnce(&T) -> R) -> R {
    unsafe { p.as_ref() }.map_or(none, f)
}

/// A required handle argument.
pub(crate) fn arg<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    unsafe { p.as_ref() }.ok_or_else(|| arg_null(what))
}

pub(crate) fn arg_null(what: &str) -> Error {
    Error::new(ErrorCode::NullArgument, format!("{what} must not be NULL"))
}

/// A pointer that must not be NULL (out-parameters are checked before any work is done).
pub(crate) fn nonnull<T>(p: *mut T, what: &str) -> Result<*mut T> {
    (!p.is_null()).then_some(p).ok_or_else(|| arg_null(what))
}

pub(crate) fn need_ptr<T>(p: *const T, what: &str) -> Result<()> {
    nonnull(p.cast_mut(), what).map(drop)
}

/// Checks out-parameters named by their variables, returning `NULL_ARGUMENT` for a NULL one.
macro_rules! need {
    ($($p:ident),*) => { $($crate::ffi::boundary::need_ptr($p, stringify!($p))?;)* };
}
pub(crate) use need;

/// A required C string argument, as UTF-8.
pub(crate) fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    let s = unsafe { CStr::from_ptr(nonnull(p.cast_mut(), what)?) }.to_str();
    s.map_err(|_| Error::misuse(format!("{what} is not valid UTF-8")))
}

/// An optional C string argument (NULL: none).
pub(crate) fn opt_text<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    (!p.is_null()).then(|| text(p, what)).transpose()
}

/// `n` C strings (the array may be NULL when `n` is 0).
pub(crate) fn texts<'a>(p: *const *const c_char, n: usize, what: &str) -> Result<Vec<&'a str>> {
    let p = if n > 0 {
        nonnull(p.cast_mut(), what)?
    } else {
        p.cast_mut()
    };
    (0..n).map(|i| text(unsafe { *p.add(i) }, what)).collect()
}

/// A byte buffer argument (NULL only with length 0).
pub(crate) fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8]> {
    let p = if len > 0 {
        nonnull(p.cast_mut(), what)?
    } else {
        [].as_mut_ptr()
    };
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Writes an out-parameter checked by [`nonnull`].
pub(crate) fn put<T>(p: *mut T, v: T) {
    unsafe { *p = v }
}

pub(crate) fn put_new<T>(p: *mut *mut T, v: T) {
    put(p, Box::into_raw(Box::new(v)))
}

/// Writes an optional out-parameter (skipped when NULL).
pub(crate) fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        put(p, v)
    }
}

/// Keeps a message in `buf` and writes it (NULL for none) to two checked out-parameters.
pub(crate) fn put_message(
    buf: &mut Vec<u8>,
    m: Option<Vec<u8>>,
    out: *mut *const u8,
    len: *mut usize,
) {
    let some = m.is_some();
    *buf = m.unwrap_or_default();
    put_bytes(some.then_some(buf), out, len);
}

/// Writes borrowed bytes (NULL for none) to two checked out-parameters.
pub(crate) fn put_bytes(b: Option<&[u8]>, out: *mut *const u8, len: *mut usize) {
    put(out, b.map_or(std::ptr::null(), <[u8]>::as_ptr));
    put(len, b.map_or(0, <[u8]>::len));
}

/// A C string for text the library hands out (an inner NUL is shown as `\0`).
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// A C time argument: negative means none.
pub(crate) fn opt_ms(ms: i64) -> Option<i64> {
    (ms >= 0).then_some(ms)
}

pub(crate) fn as_int(b: bool) -> c_int {
    c_int::from(b)
}

/// Writes one metric of a configuration, by Kafka's name, as of `now`.
pub(crate) fn metric(m: &SaslMetrics, name: *const c_char, now: i64, v: *mut f64) -> Result<()> {
    let (v, n) = (nonnull(v, "value")?, text(name, "name")?);
    let x = m.snapshot(now).get(n).copied();
    Ok(put(
        v,
        x.ok_or_else(|| Error::misuse(format!("no metric named {n}")))?,
    ))
}

/// A userdata pointer and its optional free function, called when the owner is dropped.
pub(crate) struct Userdata(*mut c_void, ksasl_free_fn);

// The caller promises (ksasl.h) that userdata may be used from the threads using its owner.
unsafe impl Send for Userdata {}
unsafe impl Sync for Userdata {}

impl Userdata {
    pub(crate) fn new(ptr: *mut c_void, free: ksasl_free_fn) -> Self {
        Userdata(ptr, free)
    }
    // A method, so that closures capture the whole `Userdata` (and free it when dropped).
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.0
    }
}

impl Drop for Userdata {
    fn drop(&mut self) {
        if let Some(f) = self.1 {
            unsafe { f(self.0) }
        }
    }
}

/// A required callback argument.
pub(crate) fn callback<F>(cb: Option<F>) -> Result<F> {
    cb.ok_or_else(|| arg_null("cb"))
}

/// The stable name of a result code (`"OK"`, `"INVALID_CREDENTIALS"`, ...; `"UNKNOWN"` for
/// numbers that are not codes).
#[no_mangle]
pub extern "C" fn ksasl_result_name(result: ksasl_result) -> *const c_char {
    let name = ErrorCode::from_u32(result).map_or(c"UNKNOWN", ErrorCode::name_cstr);
    if result == 0 { c"OK" } else { name }.as_ptr()
}

/// The kind of a result code: `"misuse"`, `"protocol"`, `"authentication"`, `"credential"`,
/// `"internal"`, or `"ok"` / `"unknown"`.
#[no_mangle]
pub extern "C" fn ksasl_result_kind(result: ksasl_result) -> *const c_char {
    let kind = match (result, ErrorCode::from_u32(result).map(ErrorCode::kind)) {
        (0, _) => c"ok",
        (_, Some(ErrorKind::Misuse)) => c"misuse",
        (_, Some(ErrorKind::Protocol)) => c"protocol",
        (_, Some(ErrorKind::Authentication)) => c"authentication",
        (_, Some(ErrorKind::Credential)) => c"credential",
        (_, Some(ErrorKind::Internal)) => c"internal",
        (_, None) => c"unknown",
    };
    kind.as_ptr()
}
