//! `ksasl_client_mechanism_vtable` and `ksasl_server_mechanism_vtable`: mechanisms written in
//! C by the host (KIP-43), called through the core's `HostClientCalls` / `HostServerCalls`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::boundary::*;
use super::host_output::{call, ksasl_host_output};
use crate::error::Result;
use crate::mech::{host_failure, HostClientCalls, HostOutput, HostServerCalls};

/// Makes one exchange's state from the mechanism's userdata (NULL fails the exchange).
pub type ksasl_mechanism_new_fn =
    Option<unsafe extern "C" fn(userdata: *mut c_void) -> *mut c_void>;
/// A client's first message: answers through `out`, returns 0 (non-zero fails).
pub type ksasl_mechanism_start_fn = Option<
    unsafe extern "C" fn(exchange: *mut c_void, now_ms: i64, out: *mut ksasl_host_output) -> c_int,
>;
/// Answers the peer's message (borrowed for the call) through `out`; returns 0 (non-zero fails).
pub type ksasl_mechanism_step_fn = Option<
    unsafe extern "C" fn(
        exchange: *mut c_void,
        message: *const u8,
        message_len: usize,
        now_ms: i64,
        out: *mut ksasl_host_output,
    ) -> c_int,
>;
/// Frees one exchange's state.
pub type ksasl_mechanism_dispose_fn = Option<unsafe extern "C" fn(exchange: *mut c_void)>;

/// A client mechanism written by the host (the table is copied at registration): `start`
/// produces the first message (Kafka's clients speak first; it may be empty), `step` answers
/// server challenges, `dispose` (may be NULL) frees an exchange's state once, when the
/// exchange is freed. A failing callback sets `ksasl_host_output_set_error` and returns
/// non-zero. Callbacks run on the threads using the registry's connections and exchanges
/// (`new_exchange` maybe on several at once, an exchange on one at a time), never on a thread
/// of the library's own, and must not call into the connection or exchange calling them.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ksasl_client_mechanism_vtable {
    /// Required.
    pub new_exchange: ksasl_mechanism_new_fn,
    /// Required.
    pub start: ksasl_mechanism_start_fn,
    /// Required.
    pub step: ksasl_mechanism_step_fn,
    /// Optional.
    pub dispose: ksasl_mechanism_dispose_fn,
}

/// A server mechanism written by the host (the table is copied at registration): `step`
/// evaluates a client message and sets a challenge or authenticates the client; the rest as
/// for `ksasl_client_mechanism_vtable`. The host looks credentials up itself.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ksasl_server_mechanism_vtable {
    /// Required.
    pub new_exchange: ksasl_mechanism_new_fn,
    /// Required.
    pub step: ksasl_mechanism_step_fn,
    /// Optional.
    pub dispose: ksasl_mechanism_dispose_fn,
}

type NewFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type StartFn = unsafe extern "C" fn(*mut c_void, i64, *mut ksasl_host_output) -> c_int;
type StepFn =
    unsafe extern "C" fn(*mut c_void, *const u8, usize, i64, *mut ksasl_host_output) -> c_int;

/// What the exchanges of one registered mechanism share; the userdata is freed when the last
/// exchange and the last registry or configuration holding the mechanism are gone.
struct Shared(String, NewFn, ksasl_mechanism_dispose_fn, Userdata);

/// One exchange's host state, disposed of when the exchange is dropped.
struct Exchange(Arc<Shared>, *mut c_void);

// The host promises (ksasl.h) that its callbacks may be called from the threads using the
// registry's connections, one thread at a time per exchange.
unsafe impl Send for Exchange {}

impl Exchange {
    fn new(s: &Arc<Shared>) -> Result<Self> {
        match unsafe { (s.1)(s.3.ptr()) } {
            p if p.is_null() => Err(host_failure(&s.0, "new_exchange", None, "it returned NULL")),
            p => Ok(Exchange(s.clone(), p)),
        }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if let Some(d) = self.0 .2 {
            unsafe { d(self.1) }
        }
    }
}

fn required<T>(f: Option<T>, what: &str) -> Result<T> {
    f.ok_or_else(|| arg_null(&format!("vtable->{what}")))
}

struct CClient(Exchange, StartFn, StepFn);

impl HostClientCalls for CClient {
    fn call(&mut self, challenge: Option<&[u8]>, now_ms: i64, out: &mut HostOutput) -> i64 {
        let (p, start, step) = (self.0 .1, self.1, self.2);
        call(out, |o| unsafe {
            match challenge {
                None => start(p, now_ms, o),
                Some(c) => step(p, c.as_ptr(), c.len(), now_ms, o),
            }
        })
    }
}

struct CServer(Exchange, StepFn);

impl HostServerCalls for CServer {
    fn call(&mut self, response: &[u8], now_ms: i64, out: &mut HostOutput) -> i64 {
        let (p, step) = (self.0 .1, self.1);
        call(out, |o| unsafe {
            step(p, response.as_ptr(), response.len(), now_ms, o)
        })
    }
}

type Factory<T> = Box<dyn Fn() -> Result<Box<T>> + Send + Sync>;

/// The factory of a client mechanism from its C table.
pub(crate) fn client_factory(
    name: &str,
    vtable: *const ksasl_client_mechanism_vtable,
    ud: Userdata,
) -> Result<Factory<dyn HostClientCalls>> {
    let vt = *arg(vtable, "vtable")?;
    let s = Arc::new(Shared(
        name.into(),
        required(vt.new_exchange, "new_exchange")?,
        vt.dispose,
        ud,
    ));
    let (start, step) = (required(vt.start, "start")?, required(vt.step, "step")?);
    Ok(Box::new(move || {
        Ok(Box::new(CClient(Exchange::new(&s)?, start, step)))
    }))
}

/// The factory of a server mechanism from its C table.
pub(crate) fn server_factory(
    name: &str,
    vtable: *const ksasl_server_mechanism_vtable,
    ud: Userdata,
) -> Result<Factory<dyn HostServerCalls>> {
    let vt = *arg(vtable, "vtable")?;
    let s = Arc::new(Shared(
        name.into(),
        required(vt.new_exchange, "new_exchange")?,
        vt.dispose,
        ud,
    ));
    let step = required(vt.step, "step")?;
    Ok(Box::new(move || {
        Ok(Box::new(CServer(Exchange::new(&s)?, step)))
    }))
}
