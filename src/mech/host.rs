//! Mechanisms written by the host in another language (KIP-43 pluggability from C, Python or
//! Java): the rules for what a host's callback may answer, written once for every binding.
//!
//! A binding implements [`HostClientCalls`] or [`HostServerCalls`] by calling into its
//! language; the host's code answers through a [`HostOutput`] (a message, "done", an
//! authenticated client, "later", or a failure), which checks every use and turns the answer
//! into the mechanism's step. Whatever the host does wrong (answers twice, answers after
//! failing, authenticates nobody, raises) becomes a `HOST_MECHANISM_FAILED` error naming the
//! mechanism and the callback, and the exchange fails in its defined way.

use std::any::Any;
use std::sync::Arc;

use super::mechanism::{
    printable, Authenticated, ClientMechanism, ClientStep, HostWork, MechServerStep,
    ServerMechanism,
};
use crate::error::{Error, ErrorCode, Result};

/// The error for a failure of the host's code (an exception, a non-zero return): `code` when
/// the host chose one of the library's codes, `HOST_MECHANISM_FAILED` otherwise.
pub fn host_failure(mechanism: &str, callback: &str, code: Option<ErrorCode>, text: &str) -> Error {
    Error::new(
        code.unwrap_or(ErrorCode::HostMechanismFailed),
        format!("the {mechanism} mechanism's {callback} failed: {text}"),
    )
}

fn wrong(mechanism: &str, callback: &str, what: &str) -> Error {
    Error::new(
        ErrorCode::HostMechanismFailed,
        format!("the {mechanism} mechanism's {callback} {what}"),
    )
}

/// Where a host mechanism's callback writes its answer, for one call.
///
/// A client callback sets a message to send and/or says the client side is complete; a
/// server callback sets a challenge, or authenticates the client (after an optional last
/// message). Instead of answering, either may say that the answer comes later, or fail. The
/// message comes first; `done`, `authenticated` and `pending` complete the answer, and nothing
/// may be set after them or after a failure. Every setter refuses a wrong use with an error
/// and records it, so the step fails whatever the callback does next.
#[derive(Debug)]
pub struct HostOutput {
    server: bool,
    message: Option<Vec<u8>>,
    done: bool,
    authenticated: Option<Authenticated>,
    pending: Option<Arc<dyn Any + Send + Sync>>,
    error: Option<(ErrorCode, String)>,
    violation: Option<String>,
}

impl HostOutput {
    /// An empty answer for a client (`server` false) or a server mechanism.
    pub fn new(server: bool) -> Self {
        HostOutput {
            server,
            message: None,
            done: false,
            authenticated: None,
            pending: None,
            error: None,
            violation: None,
        }
    }

    /// Whether this answer is a server mechanism's.
    pub fn is_server(&self) -> bool {
        self.server
    }

    /// Records a wrong use of the answer (the first one is kept) and returns it as an error
    /// with `code`: for the binding's own checks (a NULL pointer, a value of the wrong type).
    pub fn refuse(&mut self, code: ErrorCode, what: impl Into<String>) -> Error {
        let what = what.into();
        if self.violation.is_none() {
            self.violation = Some(what.clone());
        }
        Error::new(code, what)
    }

    fn check_open(&mut self, setter: &str) -> Result<()> {
        let closed = if self.pending.is_some() {
            Some(format!(
                "answered after saying the answer comes later ({setter} after set_pending)"
            ))
        } else if self.done || self.authenticated.is_some() {
            let by = if self.server {
                "set_authenticated"
            } else {
                "set_done"
            };
            Some(format!(
                "answered after completing the exchange ({setter} after {by})"
            ))
        } else if self.error.is_some() {
            Some(format!("answered after failing ({setter} after set_error)"))
        } else {
            None
        };
        match closed {
            Some(what) => Err(self.refuse(ErrorCode::HostMechanismFailed, what)),
            None => Ok(()),
        }
    }

    /// The message to send: the client's next message, or the server's challenge (or its
    /// last message, before `set_authenticated`). Once per answer.
    pub fn set_message(&mut self, message: &[u8]) -> Result<()> {
        self.check_open("set_message")?;
        if self.message.is_some() {
            return Err(self.refuse(ErrorCode::HostMechanismFailed, "set the message twice"));
        }
        self.message = Some(message.to_vec());
        Ok(())
    }

    /// Client mechanisms only: the client side is complete (after the message, if any).
    pub fn set_done(&mut self) -> Result<()> {
        if self.server {
            return Err(self.refuse(
                ErrorCode::HostMechanismFailed,
                "called set_done, which is for client mechanisms (a server completes with set_authenticated)",
            ));
        }
        self.check_open("set_done")?;
        self.done = true;
        Ok(())
    }

    /// Server mechanisms only: the client is authenticated as `authorization_id` (not empty;
    /// the principal is `User:<authorization_id>`); `credential_expiry_ms` is the absolute
    /// expiry of the credential used, which bounds the KIP-368 session.
    pub fn set_authenticated(
        &mut self,
        authorization_id: &str,
        credential_expiry_ms: Option<i64>,
    ) -> Result<()> {
        if !self.server {
            return Err(self.refuse(
                ErrorCode::HostMechanismFailed,
                "called set_authenticated, which is for server mechanisms",
            ));
        }
        self.check_open("set_authenticated")?;
        if authorization_id.is_empty() {
            return Err(self.refuse(
                ErrorCode::HostMechanismFailed,
                "authenticated an empty authorization id",
            ));
        }
        let mut who = Authenticated::new(authorization_id);
        who.credential_expiry_ms = credential_expiry_ms;
        self.authenticated = Some(who);
        Ok(())
    }

    /// The answer comes later: `work` is the host's (a future, a coroutine, a pointer),
    /// handed back untouched by the exchange's or connection's `pending_work`. Nothing else
    /// may be set in the same answer.
    pub fn set_pending(&mut self, work: impl Any + Send + Sync) -> Result<()> {
        self.check_open("set_pending")?;
        if self.message.is_some() {
            return Err(self.refuse(
                ErrorCode::HostMechanismFailed,
                "set a message and then said the answer comes later",
            ));
        }
        self.pending = Some(Arc::new(work));
        Ok(())
    }

    /// Fails the step with `text` (printable characters only are kept), reported as `code`
    /// when it is given (a host that rejects with `UNKNOWN_USER`, say), otherwise as
    /// `HOST_MECHANISM_FAILED`. The client only ever sees Kafka's generic sentence. The first
    /// failure set is kept.
    pub fn set_error(&mut self, code: Option<ErrorCode>, text: &str) {
        if self.error.is_none() {
            let code = code.unwrap_or(ErrorCode::HostMechanismFailed);
            self.error = Some((code, printable(text.as_bytes())));
        }
    }

    /// As [`HostOutput::set_error`] with a code given as a number; a number that is not one
    /// of the library's codes is refused (and fails the step).
    pub fn set_error_code(&mut self, code: u32, text: &str) -> Result<()> {
        match ErrorCode::from_u32(code) {
            Some(c) => {
                self.set_error(Some(c), text);
                Ok(())
            }
            None => Err(self.refuse(
                ErrorCode::InvalidArgument,
                format!("failed with {code}, which is not a ksasl error code"),
            )),
        }
    }

    /// The checked answer: the host's failure, or a wrong use, or what was set. `status` is
    /// what the callback returned where the host's language has one (0: success).
    fn finish(self, mechanism: &str, callback: &str, status: i64) -> Result<Self> {
        if let Some((code, text)) = &self.error {
            return Err(host_failure(mechanism, callback, Some(*code), text));
        }
        if status != 0 {
            let what = match &self.violation {
                Some(v) => format!("returned {status} without an error message (and {v})"),
                None => format!("returned {status} without an error message"),
            };
            return Err(wrong(mechanism, callback, &what));
        }
        if let Some(v) = &self.violation {
            return Err(wrong(mechanism, callback, v));
        }
        Ok(self)
    }

    /// The answer of a client mechanism's `callback` as a step.
    pub fn client_step(self, mechanism: &str, callback: &str, status: i64) -> Result<ClientStep> {
        let a = self.finish(mechanism, callback, status)?;
        if let Some(work) = a.pending {
            return Ok(ClientStep::Pending(HostWork::from_host(mechanism, work)));
        }
        match (a.message, a.done) {
            (m, true) => Ok(ClientStep::Done(m)),
            (Some(m), false) => Ok(ClientStep::Send(m)),
            (None, false) => Err(wrong(
                mechanism,
                callback,
                "set no message before it was done",
            )),
        }
    }

    /// The answer of a server mechanism's `callback` as a step.
    pub fn server_step(
        self,
        mechanism: &str,
        callback: &str,
        status: i64,
    ) -> Result<MechServerStep> {
        let a = self.finish(mechanism, callback, status)?;
        if let Some(work) = a.pending {
            return Ok(MechServerStep::Pending(HostWork::from_host(
                mechanism, work,
            )));
        }
        match (a.message, a.authenticated) {
            (m, Some(who)) => Ok(MechServerStep::Done(m, who)),
            (Some(m), None) => Ok(MechServerStep::Challenge(m)),
            (None, None) => Err(wrong(
                mechanism,
                callback,
                "set neither a challenge nor an authenticated client",
            )),
        }
    }

    /// A late answer (given to `resume`) to the pending `work`, as a client step. An answer
    /// made for a server mechanism is refused (`INVALID_ARGUMENT`) and nothing changes.
    pub fn late_client_step(self, work: &HostWork, status: i64) -> Result<Result<ClientStep>> {
        if self.server {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the answer was made for a server mechanism",
            ));
        }
        Ok(self.client_step(work.mechanism(), "late answer", status))
    }

    /// A late answer (given to `resume`) to the pending `work`, as a server step. An answer
    /// made for a client mechanism is refused (`INVALID_ARGUMENT`) and nothing changes.
    pub fn late_server_step(self, work: &HostWork, status: i64) -> Result<Result<MechServerStep>> {
        if !self.server {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the answer was made for a client mechanism",
            ));
        }
        Ok(self.server_step(work.mechanism(), "late answer", status))
    }
}

/// One exchange of a client mechanism written by the host: calls its `start` (no challenge)
/// or `step`. The host answers through `out` and the call returns the host's status (0 for
/// success; languages without one return 0 and report failures with `set_error`).
pub trait HostClientCalls: Send {
    /// Calls the host's `start` (`challenge` is `None`) or `step`.
    fn call(&mut self, challenge: Option<&[u8]>, now_ms: i64, out: &mut HostOutput) -> i64;
}

/// One exchange of a server mechanism written by the host: calls its `step`, as for
/// [`HostClientCalls`].
pub trait HostServerCalls: Send {
    /// Calls the host's `step` with the client's message.
    fn call(&mut self, response: &[u8], now_ms: i64, out: &mut HostOutput) -> i64;
}

/// A client mechanism whose steps the host computes.
pub(crate) struct HostClient {
    pub(crate) name: String,
    pub(crate) calls: Box<dyn HostClientCalls>,
}

impl HostClient {
    fn run(&mut self, challenge: Option<&[u8]>, now_ms: i64) -> Result<ClientStep> {
        let mut out = HostOutput::new(false);
        let status = self.calls.call(challenge, now_ms, &mut out);
        let callback = if challenge.is_some() { "step" } else { "start" };
        out.client_step(&self.name, callback, status)
    }
}

impl ClientMechanism for HostClient {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        self.run(None, now_ms)
    }

    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        self.run(Some(challenge), now_ms)
    }
}

/// A server mechanism whose steps the host computes.
pub(crate) struct HostServer {
    pub(crate) name: String,
    pub(crate) calls: Box<dyn HostServerCalls>,
}

impl ServerMechanism for HostServer {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        let mut out = HostOutput::new(true);
        let status = self.calls.call(response, now_ms, &mut out);
        out.server_step(&self.name, "step", status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_refuse_wrong_uses_and_fail_the_step() {
        let mut o = HostOutput::new(false);
        o.set_message(b"hi").unwrap();
        assert!(o.set_message(b"again").is_err());
        let e = o.client_step("X", "step", 0).unwrap_err();
        assert_eq!(e.code(), ErrorCode::HostMechanismFailed);
        assert_eq!(e.message(), "the X mechanism's step set the message twice");

        let mut o = HostOutput::new(true);
        assert!(o.set_done().is_err());
        let e = o.server_step("X", "step", 0).unwrap_err();
        assert!(
            e.message().contains("which is for client mechanisms"),
            "{e}"
        );

        let mut o = HostOutput::new(true);
        o.set_authenticated("alice", Some(5)).unwrap();
        assert!(o.set_message(b"late").is_err());
        assert!(o.server_step("X", "step", 0).is_err());

        let mut o = HostOutput::new(true);
        assert!(o.set_authenticated("", None).is_err());
        assert!(o.server_step("X", "step", 0).is_err());
    }

    #[test]
    fn answers_become_steps() {
        let mut o = HostOutput::new(false);
        o.set_message(b"m").unwrap();
        o.set_done().unwrap();
        assert_eq!(
            o.client_step("X", "start", 0).unwrap(),
            ClientStep::Done(Some(b"m".to_vec()))
        );
        let o = HostOutput::new(false);
        let e = o.client_step("X", "start", 0).unwrap_err();
        assert!(e.message().contains("set no message before it was done"));
        let mut o = HostOutput::new(true);
        o.set_message(b"c").unwrap();
        assert!(matches!(
            o.server_step("X", "step", 0).unwrap(),
            MechServerStep::Challenge(c) if c == b"c"
        ));
        let mut o = HostOutput::new(true);
        o.set_pending(7u32).unwrap();
        match o.server_step("X", "step", 0).unwrap() {
            MechServerStep::Pending(w) => {
                assert_eq!(w.downcast_ref::<u32>(), Some(&7));
                assert_eq!(w.mechanism(), "X");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failures_keep_the_hosts_code_and_text() {
        let mut o = HostOutput::new(true);
        o.set_error(Some(ErrorCode::UnknownUser), "no such user\n");
        o.set_error(None, "second");
        let e = o.server_step("X", "step", 1).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownUser);
        assert_eq!(
            e.message(),
            "the X mechanism's step failed: no such user\\x0a"
        );
        let o = HostOutput::new(true);
        let e = o.server_step("X", "step", 3).unwrap_err();
        assert_eq!(
            e.message(),
            "the X mechanism's step returned 3 without an error message"
        );
        let mut o = HostOutput::new(true);
        assert!(o.set_error_code(0, "x").is_err());
        assert!(o.server_step("X", "step", 0).is_err());
    }
}
