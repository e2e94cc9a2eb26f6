//! Mechanisms written by the host (KIP-43 pluggability): a table of C callbacks registered by
//! name next to the built-ins, driven by the library's authenticators and connection drivers.
//!
//! The FFI only translates: each callback writes its answer through a `ksasl_host_output`,
//! which is checked and turned into a [`ClientStep`] or [`MechServerStep`]; the state machine
//! around the mechanism (steps after the end, sizes, principals, sessions) is the core's. Every
//! way host code can fail or answer wrongly becomes `KSASL_HOST_MECHANISM_FAILED` with a
//! message saying which mechanism, which callback and what was wrong, and the exchange fails.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Arc;

use super::objects::ksasl_registry;
use super::*;
use crate::mech::{
    printable, Authenticated, ClientMechanism, ClientStep, HostWork, MechServerStep,
    ServerMechanism,
};

const KSASL_HOST_MECHANISM_FAILED: ksasl_result = ErrorCode::HostMechanismFailed as ksasl_result;

/// Where a host mechanism's callback writes its answer. Valid only during the callback that
/// received it.
///
/// A client callback sets a message to send (`ksasl_host_output_set_message`) and/or says the
/// client side is complete (`ksasl_host_output_set_done`); a server callback sets a challenge,
/// or authenticates the client (`ksasl_host_output_set_authenticated`, optionally after a last
/// message). A failure is reported with `ksasl_host_output_set_error` and a non-zero return.
/// The message, if any, comes first: `set_done` and `set_authenticated` complete the answer,
/// and nothing may be set after them. Instead of answering, a callback may say that the answer
/// comes later (`ksasl_host_output_set_pending`); the host then gives it, in an output of its
/// own (`ksasl_host_output_new`), to the connection's or exchange's `resume` function.
pub struct ksasl_host_output {
    server: bool,
    message: Option<Vec<u8>>,
    done: bool,
    authenticated: Option<Authenticated>,
    /// The host's work pointer, when the answer comes later.
    pending: Option<usize>,
    /// The host's failure: its message, and the ksasl code it chose (HOST_MECHANISM_FAILED
    /// when none).
    error: Option<(String, ErrorCode)>,
    /// The first wrong use of the setters; it fails the step whatever the callback returns.
    violation: Option<String>,
}

impl ksasl_host_output {
    fn new(server: bool) -> Self {
        ksasl_host_output {
            server,
            message: None,
            done: false,
            authenticated: None,
            pending: None,
            error: None,
            violation: None,
        }
    }

    fn completed(&self) -> bool {
        self.done || self.authenticated.is_some() || self.pending.is_some()
    }

    /// Records a wrong use (the first one is kept) and returns `code`.
    fn misuse(&mut self, code: ksasl_result, what: impl Into<String>) -> ksasl_result {
        if self.violation.is_none() {
            self.violation = Some(what.into());
        }
        code
    }

    /// The wrong use of calling `setter` after the answer was completed or failed, if it is.
    fn closed(&mut self, setter: &str) -> Option<ksasl_result> {
        if self.pending.is_some() {
            return Some(self.misuse(
                KSASL_HOST_MECHANISM_FAILED,
                format!("answered after saying the answer comes later ({setter} after ksasl_host_output_set_pending)"),
            ));
        }
        if self.completed() {
            let by = if self.server {
                "ksasl_host_output_set_authenticated"
            } else {
                "ksasl_host_output_set_done"
            };
            return Some(self.misuse(
                KSASL_HOST_MECHANISM_FAILED,
                format!("answered after completing the exchange ({setter} after {by})"),
            ));
        }
        if self.error.is_some() {
            return Some(self.misuse(
                KSASL_HOST_MECHANISM_FAILED,
                format!("answered after failing ({setter} after ksasl_host_output_set_error)"),
            ));
        }
        None
    }

    /// The callback's answer, checked: the error to report, or the message and completion.
    fn finish(self, mechanism: &str, callback: &str, rc: c_int) -> Result<Answer, Error> {
        let fail = |what: String| {
            Error::new(
                ErrorCode::HostMechanismFailed,
                format!("the {mechanism} mechanism's {callback} {what}"),
            )
        };
        if let Some((e, code)) = self.error {
            return Err(Error::new(
                code,
                format!("the {mechanism} mechanism's {callback} failed: {e}"),
            ));
        }
        if rc != 0 {
            return Err(fail(match self.violation {
                Some(v) => format!("returned {rc} without an error message (and {v})"),
                None => format!("returned {rc} without an error message"),
            }));
        }
        if let Some(v) = self.violation {
            return Err(fail(v));
        }
        Ok(Answer {
            message: self.message,
            done: self.done,
            authenticated: self.authenticated,
            pending: self.pending,
        })
    }

    /// A client callback's answer as a step.
    fn client_step(self, mechanism: &str, callback: &str, rc: c_int) -> Result<ClientStep, Error> {
        let a = self.finish(mechanism, callback, rc)?;
        if let Some(work) = a.pending {
            return Ok(ClientStep::Pending(c_work(mechanism, work)));
        }
        match (a.message, a.done) {
            (m, true) => Ok(ClientStep::Done(m)),
            (Some(m), false) => Ok(ClientStep::Send(m)),
            (None, false) => Err(Error::new(
                ErrorCode::HostMechanismFailed,
                format!("the {mechanism} mechanism's {callback} set no message before it was done"),
            )),
        }
    }

    /// A server callback's answer as a step.
    fn server_step(
        self,
        mechanism: &str,
        callback: &str,
        rc: c_int,
    ) -> Result<MechServerStep, Error> {
        let a = self.finish(mechanism, callback, rc)?;
        if let Some(work) = a.pending {
            return Ok(MechServerStep::Pending(c_work(mechanism, work)));
        }
        match (a.message, a.authenticated) {
            (m, Some(who)) => Ok(MechServerStep::Done(m, who)),
            (Some(m), None) => Ok(MechServerStep::Challenge(m)),
            (None, None) => Err(Error::new(
                ErrorCode::HostMechanismFailed,
                format!(
                    "the {mechanism} mechanism's {callback} set neither a challenge nor an authenticated client"
                ),
            )),
        }
    }
}

struct Answer {
    message: Option<Vec<u8>>,
    done: bool,
    authenticated: Option<Authenticated>,
    pending: Option<usize>,
}

/// The pending work of a C mechanism: the host's pointer (kept as an address) and the
/// mechanism's name for the messages of the late answer.
struct CWork {
    mechanism: String,
    work: usize,
}

fn c_work(mechanism: &str, work: usize) -> HostWork {
    HostWork::new(CWork {
        mechanism: mechanism.to_string(),
        work,
    })
}

/// The host's pointer of a pending step (NULL if the host gave NULL or the work is not a C
/// mechanism's).
pub(crate) fn work_pointer(work: Option<&HostWork>) -> *mut c_void {
    work.and_then(|w| w.downcast_ref::<CWork>())
        .map_or(std::ptr::null_mut(), |w| w.work as *mut c_void)
}

/// Takes the late answer the host wrote into `answer` for the pending `work`. The outer error
/// is a misuse (nothing changes); the inner result is the mechanism's step or its failure.
/// The output is emptied, ready to be reused or freed.
fn take_late_answer(
    answer: *mut ksasl_host_output,
    server: bool,
    work: &HostWork,
) -> Result<(ksasl_host_output, String), Error> {
    let a = unsafe { answer.as_mut() }
        .ok_or_else(|| Error::new(ErrorCode::NullArgument, "answer must not be NULL"))?;
    if a.server != server {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            if server {
                "the answer was made for a client mechanism (ksasl_host_output_new with for_server 0)"
            } else {
                "the answer was made for a server mechanism (ksasl_host_output_new with for_server 1)"
            },
        ));
    }
    let name = work
        .downcast_ref::<CWork>()
        .map(|w| w.mechanism.clone())
        .ok_or_else(|| {
            Error::new(
                ErrorCode::WrongState,
                "the pending work is not a C mechanism's",
            )
        })?;
    Ok((std::mem::replace(a, ksasl_host_output::new(server)), name))
}

/// The late answer of a client mechanism, for `resume`.
pub(crate) fn late_client_step(
    answer: *mut ksasl_host_output,
    rc: c_int,
    work: &HostWork,
) -> Result<Result<ClientStep, Error>, Error> {
    let (a, name) = take_late_answer(answer, false, work)?;
    Ok(a.client_step(&name, "late answer", rc))
}

/// The late answer of a server mechanism, for `resume`.
pub(crate) fn late_server_step(
    answer: *mut ksasl_host_output,
    rc: c_int,
    work: &HostWork,
) -> Result<Result<MechServerStep, Error>, Error> {
    let (a, name) = take_late_answer(answer, true, work)?;
    Ok(a.server_step(&name, "late answer", rc))
}

/// Creates an output for a late answer: the host writes into it with the
/// `ksasl_host_output_set_*` functions (any thread, no connection needed) and hands it to
/// `ksasl_client_conn_resume`, `ksasl_server_conn_resume`, `ksasl_client_resume` or
/// `ksasl_server_resume`, which take its content and leave it empty for reuse. `for_server` is
/// 1 for a server mechanism's answer, 0 for a client's. Free it with `ksasl_host_output_free`.
#[no_mangle]
pub extern "C" fn ksasl_host_output_new(
    for_server: c_int,
    out: *mut *mut ksasl_host_output,
) -> ksasl_result {
    construct(out, || Ok(ksasl_host_output::new(for_server != 0)))
}

/// Frees an output made by `ksasl_host_output_new` (NULL is a no-op). Never pass the output a
/// callback received.
#[no_mangle]
pub extern "C" fn ksasl_host_output_free(out: *mut ksasl_host_output) {
    free(out)
}

fn output<'a>(out: *mut ksasl_host_output) -> Option<&'a mut ksasl_host_output> {
    unsafe { out.as_mut() }
}

/// Sets the message to send: the client's next message, or the server's challenge (or its
/// last message, when followed by `ksasl_host_output_set_authenticated`). `message` may be
/// NULL when `len` is 0 (an empty message). Once per callback, before the answer is completed.
/// A wrong call returns an error code and fails the step with `KSASL_HOST_MECHANISM_FAILED`.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_message(
    out: *mut ksasl_host_output,
    message: *const u8,
    len: usize,
) -> ksasl_result {
    let Some(o) = output(out) else {
        return KSASL_NULL_ARGUMENT;
    };
    if let Some(code) = o.closed("ksasl_host_output_set_message") {
        return code;
    }
    if o.message.is_some() {
        return o.misuse(KSASL_HOST_MECHANISM_FAILED, "set the message twice");
    }
    match bytes(message, len, "message") {
        Ok(b) => {
            o.message = Some(b.to_vec());
            KSASL_OK
        }
        Err(_) => o.misuse(
            KSASL_NULL_ARGUMENT,
            "gave a NULL message with a non-zero length",
        ),
    }
}

/// Client mechanisms only: the client side is complete (after the message, if one is to be
/// sent). The server's verdict is still to come.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_done(out: *mut ksasl_host_output) -> ksasl_result {
    let Some(o) = output(out) else {
        return KSASL_NULL_ARGUMENT;
    };
    if o.server {
        return o.misuse(
            KSASL_HOST_MECHANISM_FAILED,
            "called ksasl_host_output_set_done, which is for client mechanisms (a server completes with ksasl_host_output_set_authenticated)",
        );
    }
    if let Some(code) = o.closed("ksasl_host_output_set_done") {
        return code;
    }
    o.done = true;
    KSASL_OK
}

/// Server mechanisms only: the client is authenticated as `authorization_id` (UTF-8, not
/// empty; the Kafka principal is `User:<authorization_id>`). `credential_expiry_ms` is the
/// absolute expiry of the credential used (ms since the epoch), which bounds the KIP-368
/// session, or -1 (any negative value) for none. A message set before is sent as the last
/// challenge.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_authenticated(
    out: *mut ksasl_host_output,
    authorization_id: *const c_char,
    credential_expiry_ms: i64,
) -> ksasl_result {
    let Some(o) = output(out) else {
        return KSASL_NULL_ARGUMENT;
    };
    if !o.server {
        return o.misuse(
            KSASL_HOST_MECHANISM_FAILED,
            "called ksasl_host_output_set_authenticated, which is for server mechanisms",
        );
    }
    if let Some(code) = o.closed("ksasl_host_output_set_authenticated") {
        return code;
    }
    if authorization_id.is_null() {
        return o.misuse(KSASL_NULL_ARGUMENT, "gave a NULL authorization id");
    }
    let Ok(id) = unsafe { CStr::from_ptr(authorization_id) }.to_str() else {
        return o.misuse(
            KSASL_HOST_MECHANISM_FAILED,
            "gave an authorization id that is not valid UTF-8",
        );
    };
    if id.is_empty() {
        return o.misuse(
            KSASL_HOST_MECHANISM_FAILED,
            "authenticated an empty authorization id",
        );
    }
    let mut who = Authenticated::new(id);
    who.credential_expiry_ms = (credential_expiry_ms >= 0).then_some(credential_expiry_ms);
    o.authenticated = Some(who);
    KSASL_OK
}

/// Says that the answer comes later (the mechanism started work that finishes outside the
/// callback: a request to a signer, a job on a worker thread). `work` is the host's own pointer
/// (may be NULL), given back by the `*_pending_work` functions; the library never dereferences
/// or frees it (free the exchange's work in `dispose`, which also runs when a connection is
/// freed while its answer is pending). The driver then reports
/// `KSASL_CLIENT_PENDING` / `KSASL_SERVER_ACTION_PENDING` (exchanges: see
/// `ksasl_client_pending_work`, `KSASL_SERVER_PENDING`), and the host continues with a
/// `*_resume` function and the answer in an output from `ksasl_host_output_new`. Nothing else
/// may be set in the same callback.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_pending(
    out: *mut ksasl_host_output,
    work: *mut c_void,
) -> ksasl_result {
    let Some(o) = output(out) else {
        return KSASL_NULL_ARGUMENT;
    };
    if let Some(code) = o.closed("ksasl_host_output_set_pending") {
        return code;
    }
    if o.message.is_some() {
        return o.misuse(
            KSASL_HOST_MECHANISM_FAILED,
            "set a message and then said the answer comes later",
        );
    }
    o.pending = Some(work as usize);
    KSASL_OK
}

/// Fails the step with `message` (a NUL-terminated text, kept in the error the library reports
/// as `KSASL_HOST_MECHANISM_FAILED`; the Kafka client is sent only Kafka's generic sentence).
/// The callback should then return non-zero; the step fails in any case. The first message
/// set is kept.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_error(
    out: *mut ksasl_host_output,
    message: *const c_char,
) -> ksasl_result {
    set_error(
        out,
        ErrorCode::HostMechanismFailed,
        message,
        "ksasl_host_output_set_error",
    )
}

/// As `ksasl_host_output_set_error`, reporting the failure with one of the library's own codes
/// instead of `KSASL_HOST_MECHANISM_FAILED`: for example `KSASL_UNKNOWN_USER` or
/// `KSASL_INVALID_CREDENTIALS`, as a built-in mechanism would. A code that is not one of the
/// library's (or is `KSASL_OK`) returns `KSASL_INVALID_ARGUMENT` and fails the step as a
/// misuse.
#[no_mangle]
pub extern "C" fn ksasl_host_output_set_error_code(
    out: *mut ksasl_host_output,
    code: ksasl_result,
    message: *const c_char,
) -> ksasl_result {
    let Some(o) = output(out) else {
        return KSASL_NULL_ARGUMENT;
    };
    match ErrorCode::from_u32(code) {
        Some(c) => set_error(out, c, message, "ksasl_host_output_set_error_code"),
        None => o.misuse(
            ErrorCode::InvalidArgument as ksasl_result,
            format!("called ksasl_host_output_set_error_code with {code}, which is not a ksasl error code"),
        ),
    }
}

fn set_error(
    out: *mut ksasl_host_output,
    code: ErrorCode,
    message: *const c_char,
    setter: &str,
) -> ksasl_result {
    let Some(o) = output(out) else {
        return KSASL_NULL_ARGUMENT;
    };
    if message.is_null() {
        return o.misuse(
            KSASL_NULL_ARGUMENT,
            format!("called {setter} with a NULL message"),
        );
    }
    if o.error.is_none() {
        let m = unsafe { CStr::from_ptr(message) }.to_bytes();
        o.error = Some((printable(m), code));
    }
    KSASL_OK
}

/// A client mechanism written by the host. The library copies the table at registration.
///
/// - `new_exchange(userdata)` makes the state of one exchange (called when a connection or
///   `ksasl_client_new` starts using the mechanism) and returns it; NULL fails the exchange.
/// - `start(exchange, now_ms, out)` produces the first message (Kafka always starts with a
///   client message; an empty one is allowed).
/// - `step(exchange, challenge, challenge_len, now_ms, out)` answers a server challenge
///   (`challenge` is borrowed for the call).
/// - `dispose(exchange)` (may be NULL) frees the exchange state: called exactly once for
///   every exchange `new_exchange` made, when the exchange is freed.
///
/// `start` and `step` answer through `out` and return 0, or non-zero to fail the exchange (with
/// `ksasl_host_output_set_error`'s message). A client that is not done must set a message.
/// The callbacks are called from the threads that use the connections and exchanges of the
/// registry, never from a thread of the library's own: `new_exchange` may run on several
/// threads at once (the userdata is shared), while one exchange is used by one thread at a
/// time. A callback must not call into the connection or exchange that is calling it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ksasl_client_mechanism_vtable {
    /// Makes one exchange's state (required).
    pub new_exchange: Option<unsafe extern "C" fn(userdata: *mut c_void) -> *mut c_void>,
    /// The first message (required).
    pub start: Option<
        unsafe extern "C" fn(
            exchange: *mut c_void,
            now_ms: i64,
            out: *mut ksasl_host_output,
        ) -> c_int,
    >,
    /// The answer to a server challenge (required).
    pub step: Option<
        unsafe extern "C" fn(
            exchange: *mut c_void,
            challenge: *const u8,
            challenge_len: usize,
            now_ms: i64,
            out: *mut ksasl_host_output,
        ) -> c_int,
    >,
    /// Frees one exchange's state (optional).
    pub dispose: Option<unsafe extern "C" fn(exchange: *mut c_void)>,
}

/// A server mechanism written by the host. The library copies the table at registration.
///
/// - `new_exchange(userdata)` makes the state of one exchange (called when a client selects
///   the mechanism, or by `ksasl_server_new`); NULL fails the exchange.
/// - `step(exchange, response, response_len, now_ms, out)` evaluates one client message
///   (borrowed for the call) and sets a challenge (`ksasl_host_output_set_message`) or
///   authenticates the client (`ksasl_host_output_set_authenticated`, after an optional last
///   message); returns 0, or non-zero to fail the exchange (with
///   `ksasl_host_output_set_error`'s message).
/// - `dispose(exchange)` (may be NULL): as for client mechanisms, once per exchange.
///
/// Threads and re-entrancy as for `ksasl_client_mechanism_vtable`. The host looks credentials
/// up itself (the registry's store or credential callback is not consulted).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ksasl_server_mechanism_vtable {
    /// Makes one exchange's state (required).
    pub new_exchange: Option<unsafe extern "C" fn(userdata: *mut c_void) -> *mut c_void>,
    /// Evaluates one client message (required).
    pub step: Option<
        unsafe extern "C" fn(
            exchange: *mut c_void,
            response: *const u8,
            response_len: usize,
            now_ms: i64,
            out: *mut ksasl_host_output,
        ) -> c_int,
    >,
    /// Frees one exchange's state (optional).
    pub dispose: Option<unsafe extern "C" fn(exchange: *mut c_void)>,
}

type NewExchangeFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type DisposeFn = unsafe extern "C" fn(*mut c_void);
type StartFn = unsafe extern "C" fn(*mut c_void, i64, *mut ksasl_host_output) -> c_int;
type StepFn =
    unsafe extern "C" fn(*mut c_void, *const u8, usize, i64, *mut ksasl_host_output) -> c_int;

/// What every exchange of one registered mechanism shares; the userdata is freed when the last
/// exchange and the last registry or configuration holding the mechanism are gone.
struct Shared {
    name: String,
    new_exchange: NewExchangeFn,
    dispose: Option<DisposeFn>,
    userdata: Userdata,
}

impl Shared {
    fn new(
        name: &str,
        new_exchange: Option<NewExchangeFn>,
        dispose: Option<DisposeFn>,
        userdata: Userdata,
    ) -> Result<Arc<Self>, Error> {
        Ok(Arc::new(Shared {
            name: name.to_string(),
            new_exchange: required(new_exchange, "new_exchange")?,
            dispose,
            userdata,
        }))
    }
}

/// One exchange's host state, disposed of once when the mechanism instance is dropped.
struct Exchange {
    shared: Arc<Shared>,
    ptr: *mut c_void,
}

// The host promises (as documented in the header) that its callbacks may be called from the
// threads that use the registry's connections, one thread at a time per exchange.
unsafe impl Send for Exchange {}

impl Exchange {
    fn new(shared: &Arc<Shared>) -> Result<Self, Error> {
        let ptr = unsafe { (shared.new_exchange)(shared.userdata.ptr()) };
        if ptr.is_null() {
            return Err(Error::new(
                ErrorCode::HostMechanismFailed,
                format!(
                    "the {} mechanism's new_exchange callback returned NULL",
                    shared.name
                ),
            ));
        }
        Ok(Exchange {
            shared: shared.clone(),
            ptr,
        })
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if let Some(d) = self.shared.dispose {
            unsafe { d(self.ptr) }
        }
    }
}

fn required<T>(f: Option<T>, what: &str) -> Result<T, Error> {
    f.ok_or_else(|| {
        Error::new(
            ErrorCode::NullArgument,
            format!("vtable->{what} must not be NULL"),
        )
    })
}

struct HostClient {
    x: Exchange,
    start: StartFn,
    step: StepFn,
}

impl HostClient {
    fn answer(
        &self,
        callback: &str,
        call: impl FnOnce(*mut ksasl_host_output) -> c_int,
    ) -> Result<ClientStep, Error> {
        let mut out = ksasl_host_output::new(false);
        let rc = call(&mut out);
        out.client_step(&self.x.shared.name, callback, rc)
    }
}

impl ClientMechanism for HostClient {
    fn name(&self) -> &str {
        &self.x.shared.name
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep, Error> {
        let (f, p) = (self.start, self.x.ptr);
        self.answer("start callback", |out| unsafe { f(p, now_ms, out) })
    }

    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep, Error> {
        let (f, p) = (self.step, self.x.ptr);
        self.answer("step callback", |out| unsafe {
            f(p, challenge.as_ptr(), challenge.len(), now_ms, out)
        })
    }
}

struct HostServer {
    x: Exchange,
    step: StepFn,
}

impl ServerMechanism for HostServer {
    fn name(&self) -> &str {
        &self.x.shared.name
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep, Error> {
        let (f, p) = (self.step, self.x.ptr);
        let mut out = ksasl_host_output::new(true);
        let rc = unsafe { f(p, response.as_ptr(), response.len(), now_ms, &mut out) };
        out.server_step(&self.x.shared.name, "step callback", rc)
    }
}

/// Registers (or replaces) a client mechanism written by the host, under `name` (1 to 20 of
/// `A-Z 0-9 - _`). `vtable` is copied. The library takes `userdata` in every case:
/// `free_userdata` (may be NULL) is called once, when the registry, every configuration and
/// connection made from it and every exchange of the mechanism are gone, or at once if this
/// call fails.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_client_mechanism(
    r: *mut ksasl_registry,
    name: *const c_char,
    vtable: *const ksasl_client_mechanism_vtable,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, move |r| {
        let name = text(name, "name")?;
        let vt = *unsafe { vtable.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "vtable must not be NULL"))?;
        let shared = Shared::new(name, vt.new_exchange, vt.dispose, ud)?;
        let (start, step) = (required(vt.start, "start")?, required(vt.step, "step")?);
        r.inner.register_client(name, move || {
            Ok(Box::new(HostClient {
                x: Exchange::new(&shared)?,
                start,
                step,
            }) as Box<dyn ClientMechanism>)
        })
    })
}

/// Registers (or replaces) a server mechanism written by the host, under `name`; a server
/// configuration made from the registry afterwards offers it next to the other mechanisms.
/// Ownership of `vtable` and `userdata` as for `ksasl_registry_add_client_mechanism`.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_server_mechanism(
    r: *mut ksasl_registry,
    name: *const c_char,
    vtable: *const ksasl_server_mechanism_vtable,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, move |r| {
        let name = text(name, "name")?;
        let vt = *unsafe { vtable.as_ref() }
            .ok_or_else(|| Error::new(ErrorCode::NullArgument, "vtable must not be NULL"))?;
        let shared = Shared::new(name, vt.new_exchange, vt.dispose, ud)?;
        let step = required(vt.step, "step")?;
        r.inner.register_server(name, move || {
            Ok(Box::new(HostServer {
                x: Exchange::new(&shared)?,
                step,
            }) as Box<dyn ServerMechanism>)
        })
    })
}
