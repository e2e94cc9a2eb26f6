//! The C ABI. Conventions (see `include/ksasl.h`):
//!
//! - Every name starts with `ksasl_`; objects are opaque handles made by `ksasl_<object>_new`
//!   and released by `ksasl_<object>_free` (NULL is a no-op).
//! - Fallible functions return `ksasl_result` (0 = `KSASL_OK`, otherwise a stable error code,
//!   named by `ksasl_result_name`); the handle keeps a detail message
//!   (`ksasl_<object>_last_error`). Out-parameters are written only on success.
//! - Output bytes and strings are borrowed from the handle and stay valid until the next call
//!   on that handle; the caller frees nothing it did not create.
//! - Callbacks take `void *userdata` first, return `int` (0 = success), and may be given a
//!   function that frees the userdata. The library never calls back from a thread of its own.
//! - A panic never crosses the boundary: it becomes `KSASL_PANIC`.
//!
//! Handles that wrap per-connection state are used by one thread at a time; configuration
//! objects (stores, registries, configs, refreshers, validators) may be shared between
//! threads once built.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]
// These are C entry points: the pointer contracts are the C caller's, stated in the header.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{Error, ErrorCode};

mod conn;
mod exchange;
mod hostmech;
mod oauth;
mod objects;
mod tokens;

pub use conn::*;
pub use exchange::*;
pub use hostmech::*;
pub use oauth::*;
pub use objects::*;
pub use tokens::*;

/// A result code: 0 is success; anything else is an error code (see `ksasl_result_name`).
pub type ksasl_result = u32;

// The result codes are written into the header from src/error.rs by build.rs.
pub(crate) const KSASL_OK: ksasl_result = 0;
pub(crate) const KSASL_NULL_ARGUMENT: ksasl_result = 106;
pub(crate) const KSASL_PANIC: ksasl_result = 501;

/// Frees a userdata pointer handed to the library with a callback.
pub type ksasl_free_fn = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// A userdata pointer and its optional free function; freed when the owner is dropped.
pub(crate) struct Userdata {
    ptr: *mut c_void,
    free: ksasl_free_fn,
}

// The caller promises (as documented in the header) that userdata may be used from the
// threads that use the object it was given to.
unsafe impl Send for Userdata {}
unsafe impl Sync for Userdata {}

impl Userdata {
    pub(crate) fn new(ptr: *mut c_void, free: ksasl_free_fn) -> Self {
        Userdata { ptr, free }
    }
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for Userdata {
    fn drop(&mut self) {
        if let Some(f) = self.free {
            unsafe { f(self.ptr) }
        }
    }
}

/// The detail of a handle's last failure.
#[derive(Default)]
pub(crate) struct LastError(Option<CString>);

impl LastError {
    pub(crate) fn set(&mut self, e: &Error) {
        self.0 = CString::new(e.to_string().replace('\0', "\\0")).ok();
    }
    pub(crate) fn ptr(&self) -> *const c_char {
        self.0.as_ref().map_or(c"".as_ptr(), |s| s.as_ptr())
    }
}

/// Objects that keep a last-error message.
pub(crate) trait HasError {
    fn last_error(&mut self) -> &mut LastError;
}

fn panic_error() -> Error {
    Error::new(ErrorCode::Panic, "a panic was caught at the C boundary")
}

/// Runs `f` on the object behind `p`, turning errors and panics into codes and keeping the
/// detail on the object.
pub(crate) fn with<T: HasError>(
    p: *mut T,
    f: impl FnOnce(&mut T) -> Result<(), Error>,
) -> ksasl_result {
    let Some(obj) = (unsafe { p.as_mut() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    match catch_unwind(AssertUnwindSafe(|| f(&mut *obj))) {
        Ok(Ok(())) => KSASL_OK,
        Ok(Err(e)) => {
            obj.last_error().set(&e);
            e.code().as_u32()
        }
        Err(_) => {
            // The object may be half-updated; its state machine refuses further steps only if
            // the panic happened inside it, so report the panic and leave the rest as is.
            obj.last_error().set(&panic_error());
            KSASL_PANIC
        }
    }
}

/// Runs a constructor: on success writes the new handle to `out`.
pub(crate) fn construct<T>(out: *mut *mut T, f: impl FnOnce() -> Result<T, Error>) -> ksasl_result {
    if out.is_null() {
        return KSASL_NULL_ARGUMENT;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            unsafe { *out = Box::into_raw(Box::new(v)) };
            KSASL_OK
        }
        Ok(Err(e)) => {
            set_thread_error(&e);
            e.code().as_u32()
        }
        Err(_) => {
            set_thread_error(&panic_error());
            KSASL_PANIC
        }
    }
}

/// Frees a handle made by a constructor.
pub(crate) fn free<T>(p: *mut T) {
    if !p.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(p) })));
    }
}

thread_local! {
    static THREAD_ERROR: std::cell::RefCell<LastError> = std::cell::RefCell::new(LastError::default());
}

fn set_thread_error(e: &Error) {
    THREAD_ERROR.with(|t| t.borrow_mut().set(e));
}

/// A required C string argument, as UTF-8.
pub(crate) fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(Error::new(
            ErrorCode::NullArgument,
            format!("{what} must not be NULL"),
        ));
    }
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} is not valid UTF-8"),
        )
    })
}

/// An optional C string argument (NULL = none).
pub(crate) fn opt_text<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, Error> {
    if p.is_null() {
        Ok(None)
    } else {
        text(p, what).map(Some)
    }
}

/// A byte buffer argument (NULL is allowed only with length 0).
pub(crate) fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorCode::NullArgument,
            format!("{what} is NULL with a non-zero length"),
        ));
    }
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Checks that out-pointers are non-NULL before any work is done.
pub(crate) fn need<T>(p: *mut T, what: &str) -> Result<(), Error> {
    if p.is_null() {
        Err(Error::new(
            ErrorCode::NullArgument,
            format!("{what} must not be NULL"),
        ))
    } else {
        Ok(())
    }
}

/// Writes an out-parameter (already checked non-NULL).
pub(crate) fn put<T>(p: *mut T, v: T) {
    unsafe { *p = v }
}

/// Writes an optional out-parameter (skipped when the caller passed NULL).
pub(crate) fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        put(p, v)
    }
}

/// Writes one metric of a snapshot, by Kafka name, to `value`.
pub(crate) fn metric(
    metrics: &crate::session::SaslMetrics,
    name: *const c_char,
    now_ms: i64,
    value: *mut f64,
) -> Result<(), Error> {
    need(value, "value")?;
    let n = text(name, "name")?;
    let snap = metrics.snapshot(now_ms);
    let v = snap
        .get(n)
        .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, format!("no metric named {n}")))?;
    put(value, *v);
    Ok(())
}

/// Writes a pending credential request's fields to the three out-parameters.
pub(crate) fn put_request(
    pending: Option<&(crate::mech::CredentialRequest, CString, CString)>,
    mechanism: *mut *const c_char,
    username: *mut *const c_char,
    token_authenticated: *mut c_int,
) -> Result<(), Error> {
    need(mechanism, "mechanism")?;
    need(username, "username")?;
    need(token_authenticated, "token_authenticated")?;
    let (r, m, u) = pending
        .ok_or_else(|| Error::new(ErrorCode::WrongState, "no credential has been requested"))?;
    put(mechanism, m.as_ptr());
    put(username, u.as_ptr());
    put(token_authenticated, as_int(r.token_authenticated));
    Ok(())
}

/// A C string kept alive by its owner.
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// The library version, e.g. `"0.1.0"`.
#[no_mangle]
pub extern "C" fn ksasl_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The stable name of a result code (`"OK"`, `"INVALID_CREDENTIALS"`, ...; `"UNKNOWN"` for
/// numbers that are not codes).
#[no_mangle]
pub extern "C" fn ksasl_result_name(result: ksasl_result) -> *const c_char {
    if result == KSASL_OK {
        return c"OK".as_ptr();
    }
    ErrorCode::from_u32(result).map_or(c"UNKNOWN".as_ptr(), |c| c.name_cstr().as_ptr())
}

/// The kind of a result code: `"misuse"`, `"protocol"`, `"authentication"`, `"credential"`,
/// `"internal"`, or `"ok"` / `"unknown"`.
#[no_mangle]
pub extern "C" fn ksasl_result_kind(result: ksasl_result) -> *const c_char {
    use crate::error::ErrorKind::*;
    if result == KSASL_OK {
        return c"ok".as_ptr();
    }
    match ErrorCode::from_u32(result).map(|c| c.kind()) {
        Some(Misuse) => c"misuse".as_ptr(),
        Some(Protocol) => c"protocol".as_ptr(),
        Some(Authentication) => c"authentication".as_ptr(),
        Some(Credential) => c"credential".as_ptr(),
        Some(Internal) => c"internal".as_ptr(),
        None => c"unknown".as_ptr(),
    }
}

/// The detail of the last failed constructor (`ksasl_*_new`) on this thread.
#[no_mangle]
pub extern "C" fn ksasl_last_constructor_error() -> *const c_char {
    THREAD_ERROR.with(|t| t.borrow().ptr())
}

/// Deliberately panics inside the library and returns what the boundary made of it
/// (`KSASL_PANIC`): a way for tests and hosts to check that no panic unwinds into C.
#[no_mangle]
pub extern "C" fn ksasl_check_panic_boundary() -> ksasl_result {
    match catch_unwind(|| -> ksasl_result { panic!("deliberate panic to check the C boundary") }) {
        Ok(r) => r,
        Err(_) => KSASL_PANIC,
    }
}

pub(crate) fn as_int(b: bool) -> c_int {
    c_int::from(b)
}
