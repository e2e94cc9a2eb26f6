//! One SASL exchange on either side: a mechanism instance wrapped in the state machine every
//! mechanism shares (size limit, steps after the end, the pull form for credentials, pending
//! host work, the Kafka principal of a successful exchange).

use std::fmt;
use std::sync::Arc;

use super::mechanism::{
    AuthOutcome, ClientMechanism, ClientStep, HostWork, MechServerStep, Principal, ServerMechanism,
    ServerStep,
};
use crate::credential::{
    CredentialAnswer, CredentialLookup, CredentialRequest, Lookup, UnknownUserMask,
};
use crate::error::{Error, ErrorCode, Result};
use crate::session::session_lifetime;

/// Kafka's default bound on a SASL message during authentication
/// (`sasl.server.max.receive.size`, 512 KiB). Both sides apply it to what they receive.
pub const DEFAULT_MAX_RECEIVE_SIZE: usize = 512 * 1024;

/// What an exchange (or a connection) waits for from the host before it can go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostTask<'a> {
    /// A credential: answer with `provide_credential`.
    Credential(&'a CredentialRequest),
    /// A host mechanism's pending work: finish it and `resume` with its result.
    Mechanism(&'a HostWork),
}

/// The KIP-368 session a server grants at the end of a successful exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSession {
    /// Who authenticated, with which mechanism, and the credential's expiry.
    pub outcome: AuthOutcome,
    /// The lifetime sent to the client (0: none): Kafka's formula over the credential's
    /// expiry and `connections.max.reauth.ms`.
    pub lifetime_ms: i64,
    /// When the server stops accepting the connection's requests, if ever.
    pub expiry_ms: Option<i64>,
}

/// Runs a call into a mechanism (possibly written by the host), turning a panic into a
/// [`ErrorCode::Panic`] error so that the authenticator ends in its failed state instead of
/// unwinding through the connection driver.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> std::thread::Result<Result<T>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
}

/// The result of a [`guarded`] call, a panic becoming an error naming the mechanism.
fn unpanic<T>(r: std::thread::Result<Result<T>>, mechanism: &str) -> Result<T> {
    r.unwrap_or_else(|_| {
        Err(Error::new(
            ErrorCode::Panic,
            format!("the {mechanism} mechanism panicked"),
        ))
    })
}

/// Where an authenticator is in its exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeState {
    /// Client only: `start` has not been called.
    NotStarted,
    /// Waiting for the peer's next message.
    WaitingForPeer,
    /// Server only: waiting for the host to provide a credential.
    WaitingForCredential,
    /// Waiting for the host to finish the mechanism's pending work and resume.
    WaitingForHost,
    /// Completed successfully.
    Done,
    /// Failed; the authenticator accepts no more input.
    Failed,
}

fn check_open(state: ExchangeState) -> Result<()> {
    match state {
        ExchangeState::Done => Err(Error::new(
            ErrorCode::StepAfterDone,
            "the exchange is already complete",
        )),
        ExchangeState::Failed => Err(Error::new(
            ErrorCode::StepAfterFailure,
            "the exchange has already failed",
        )),
        _ => Ok(()),
    }
}

/// The refusal of a `resume` when no mechanism work is pending (`WRONG_STATE`); the same text
/// everywhere, for the authenticators, the drivers and every binding.
pub fn nothing_pending() -> Error {
    Error::new(ErrorCode::WrongState, "no SASL mechanism work is pending")
}

/// The refusal of an answer to a credential request when none is pending (`WRONG_STATE`): a
/// binding that needs the request to decode the host's answer reports this when there is
/// none, as the exchange itself does.
pub fn nothing_requested() -> Error {
    Error::new(ErrorCode::WrongState, "no credential has been requested")
}

fn pending_error() -> Error {
    Error::new(
        ErrorCode::WrongState,
        "the mechanism's pending work has not been resumed",
    )
}

fn check_size(len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(Error::new(
            ErrorCode::MessageTooLarge,
            format!("SASL message of {len} bytes is larger than the maximum of {max} bytes"),
        ));
    }
    Ok(())
}

/// A client exchange: one mechanism instance plus the state machine around it.
pub struct ClientExchange {
    mech: Box<dyn ClientMechanism>,
    state: ExchangeState,
    max_receive_size: usize,
    last_error: Option<Error>,
    /// The mechanism's work while its answer is pending.
    pending: Option<HostWork>,
}

impl fmt::Debug for ClientExchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientExchange")
            .field("mechanism", &self.mech.name())
            .field("state", &self.state)
            .finish()
    }
}

impl ClientExchange {
    /// Wraps a mechanism.
    pub fn new(mech: Box<dyn ClientMechanism>) -> Self {
        ClientExchange {
            mech,
            state: ExchangeState::NotStarted,
            max_receive_size: DEFAULT_MAX_RECEIVE_SIZE,
            last_error: None,
            pending: None,
        }
    }

    /// Sets the largest challenge accepted (default [`DEFAULT_MAX_RECEIVE_SIZE`]).
    pub fn set_max_receive_size(&mut self, max: usize) {
        self.max_receive_size = max;
    }

    /// The mechanism name.
    pub fn mechanism(&self) -> &str {
        self.mech.name()
    }

    /// The current state.
    pub fn state(&self) -> ExchangeState {
        self.state
    }

    /// Whether the client side has completed.
    pub fn is_complete(&self) -> bool {
        self.state == ExchangeState::Done
    }

    /// The error that failed the exchange, if it failed.
    pub fn last_error(&self) -> Option<&Error> {
        self.last_error.as_ref()
    }

    /// Produces the first message.
    pub fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::NotStarted {
            return Err(Error::new(
                ErrorCode::WrongState,
                "the exchange has already started",
            ));
        }
        let r = guarded(|| self.mech.start(now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// Continues after [`ClientStep::Pending`] with what the mechanism's work produced: the
    /// step, or the error the host code raised (which fails the exchange). A result that is
    /// `Pending` again waits once more.
    pub fn resume(&mut self, result: Result<ClientStep>) -> Result<ClientStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::WaitingForHost {
            return Err(nothing_pending());
        }
        self.after(result)
    }

    /// Records that the server failed the exchange (for example a Kafka `SaslAuthenticate`
    /// response with error 58 and its `error_message`) and returns the error to report. The
    /// exchange is then failed; calling this again returns the same error.
    pub fn server_failed(&mut self, server_message: Option<&str>) -> Error {
        if self.state == ExchangeState::Failed {
            if let Some(e) = &self.last_error {
                return e.clone();
            }
        }
        let r = guarded(|| Ok(self.mech.server_failed(server_message)));
        let e = match unpanic(r, self.mech.name()) {
            Ok(e) | Err(e) => e,
        };
        self.state = ExchangeState::Failed;
        self.last_error = Some(e.clone());
        e
    }

    /// Evaluates a server challenge.
    pub fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        check_open(self.state)?;
        if self.state == ExchangeState::NotStarted {
            return Err(Error::new(
                ErrorCode::WrongState,
                "start must be called before step",
            ));
        }
        if self.state == ExchangeState::WaitingForHost {
            return Err(pending_error());
        }
        if let Err(e) = check_size(challenge.len(), self.max_receive_size) {
            return self.after(Err(e));
        }
        let r = guarded(|| self.mech.step(challenge, now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// The work of a mechanism whose answer is pending ([`ExchangeState::WaitingForHost`]).
    pub fn pending_work(&self) -> Option<&HostWork> {
        self.pending.as_ref()
    }

    fn after(&mut self, r: Result<ClientStep>) -> Result<ClientStep> {
        self.pending = match &r {
            Ok(ClientStep::Pending(w)) => Some(w.clone()),
            _ => None,
        };
        match &r {
            Ok(ClientStep::Send(_)) => self.state = ExchangeState::WaitingForPeer,
            Ok(ClientStep::Done(_)) => self.state = ExchangeState::Done,
            Ok(ClientStep::Pending(_)) => self.state = ExchangeState::WaitingForHost,
            Err(e) => {
                self.state = ExchangeState::Failed;
                self.last_error = Some(e.clone());
            }
        }
        r
    }
}

/// With a mask, an unknown user's stand-in credential instead of `Unknown` (password logins
/// of the mechanisms the mask covers), and `masked` set. The stand-in is derived for known
/// users too, and dropped, so that both kinds of login do the same work.
fn stand_in(
    mask: &Option<Arc<UnknownUserMask>>,
    req: &CredentialRequest,
    answer: CredentialAnswer,
    masked: &mut bool,
) -> CredentialAnswer {
    let Some(mask) = mask.as_ref().filter(|_| !req.token_authenticated) else {
        return answer;
    };
    match (mask.credential(&req.mechanism, &req.username), answer) {
        (Some(c), CredentialAnswer::Unknown) => {
            *masked = true;
            CredentialAnswer::Found(c)
        }
        (_, answer) => answer,
    }
}

/// A server exchange: one mechanism instance plus the state machine around it.
pub struct ServerExchange {
    mech: Box<dyn ServerMechanism>,
    lookup: Option<Arc<dyn CredentialLookup>>,
    state: ExchangeState,
    max_receive_size: usize,
    max_reauth_ms: i64,
    session: Option<Box<ServerSession>>,
    last_error: Option<Error>,
    now_ms: i64,
    /// The credential request the host has to answer.
    request: Option<CredentialRequest>,
    /// The mechanism's work while its answer is pending.
    pending: Option<HostWork>,
    /// Stand-in credentials for unknown users (enumeration resistance), if enabled.
    unknown_users: Option<Arc<UnknownUserMask>>,
    /// Whether the credential being checked is a stand-in: the exchange cannot succeed.
    masked: bool,
}

impl fmt::Debug for ServerExchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerExchange")
            .field("mechanism", &self.mech.name())
            .field("state", &self.state)
            .field("session", &self.session)
            .finish()
    }
}

impl ServerExchange {
    /// Wraps a mechanism.
    pub fn new(mech: Box<dyn ServerMechanism>) -> Self {
        ServerExchange {
            mech,
            lookup: None,
            state: ExchangeState::WaitingForPeer,
            max_receive_size: DEFAULT_MAX_RECEIVE_SIZE,
            max_reauth_ms: 0,
            session: None,
            last_error: None,
            now_ms: 0,
            request: None,
            pending: None,
            unknown_users: None,
            masked: false,
        }
    }

    /// Answers unknown users with stand-in credentials so that they fail like wrong passwords
    /// (see [`UnknownUserMask`]); `None` (the default) fails them as Kafka does.
    pub fn set_unknown_user_mask(&mut self, mask: Option<Arc<UnknownUserMask>>) {
        self.unknown_users = mask;
    }

    /// Sets `connections.max.reauth.ms` for this exchange's session (0, the default: the
    /// session is bounded only by the credential's expiry, if it has one).
    pub fn set_max_reauth_ms(&mut self, max_reauth_ms: i64) {
        self.max_reauth_ms = max_reauth_ms;
    }

    /// Sets the largest client message accepted (default [`DEFAULT_MAX_RECEIVE_SIZE`]).
    pub fn set_max_receive_size(&mut self, max: usize) {
        self.max_receive_size = max;
    }

    /// Sets the credential store consulted when the mechanism needs a credential. Without
    /// one, or when the store answers [`Lookup::Later`], the exchange stops with
    /// [`ServerStep::NeedCredential`] and the host answers through
    /// [`ServerExchange::provide_credential`].
    pub fn set_credential_lookup(&mut self, lookup: Option<Arc<dyn CredentialLookup>>) {
        self.lookup = lookup;
    }

    /// The mechanism name.
    pub fn mechanism(&self) -> &str {
        self.mech.name()
    }

    /// The current state.
    pub fn state(&self) -> ExchangeState {
        self.state
    }

    /// Whether the client has been authenticated.
    pub fn is_complete(&self) -> bool {
        self.state == ExchangeState::Done
    }

    /// The outcome of a successful exchange.
    pub fn outcome(&self) -> Option<&AuthOutcome> {
        self.session.as_deref().map(|s| &s.outcome)
    }

    /// The session of a successful exchange: the outcome and the KIP-368 lifetime Kafka
    /// grants for it (see [`ServerExchange::set_max_reauth_ms`]).
    pub fn session(&self) -> Option<&ServerSession> {
        self.session.as_deref()
    }

    /// The error that failed the exchange, if it failed.
    pub fn last_error(&self) -> Option<&Error> {
        self.last_error.as_ref()
    }

    /// After a failure: the text a Kafka broker sends the client in its failed
    /// `SaslAuthenticate` response (Kafka's generic sentence unless the mechanism discloses
    /// a specific one).
    pub fn client_message(&self) -> Option<String> {
        self.last_error
            .as_ref()
            .map(|e| e.client_message(self.mech.name(), false))
    }

    /// The credential request the host must answer (after [`ServerStep::NeedCredential`]).
    pub fn pending_request(&self) -> Option<&CredentialRequest> {
        self.request.as_ref()
    }

    /// What the exchange waits for from the host, if anything.
    pub fn host_task(&self) -> Option<HostTask<'_>> {
        match (&self.request, &self.pending) {
            (Some(r), _) => Some(HostTask::Credential(r)),
            (None, Some(w)) => Some(HostTask::Mechanism(w)),
            (None, None) => None,
        }
    }

    /// Evaluates one client message.
    pub fn step(&mut self, response: &[u8], now_ms: i64) -> Result<ServerStep> {
        check_open(self.state)?;
        if self.state == ExchangeState::WaitingForCredential {
            return Err(Error::new(
                ErrorCode::WrongState,
                "a credential was requested and has not been provided",
            ));
        }
        if self.state == ExchangeState::WaitingForHost {
            return Err(pending_error());
        }
        self.now_ms = now_ms;
        if let Err(e) = check_size(response.len(), self.max_receive_size) {
            return self.after(Err(e));
        }
        let r = guarded(|| self.mech.step(response, now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// Answers a [`ServerStep::NeedCredential`] and continues the exchange.
    pub fn provide_credential(
        &mut self,
        answer: CredentialAnswer,
        now_ms: i64,
    ) -> Result<ServerStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::WaitingForCredential {
            return Err(nothing_requested());
        }
        self.now_ms = now_ms;
        let answer = match self.request.take() {
            Some(req) => stand_in(&self.unknown_users, &req, answer, &mut self.masked),
            None => answer,
        };
        let r = guarded(|| self.mech.provide_credential(answer, now_ms));
        let r = unpanic(r, self.mech.name());
        self.after(r)
    }

    /// Continues after [`ServerStep::Pending`] with what the mechanism's work produced: its
    /// step, or the error the host code raised (which fails the exchange). The result is
    /// taken as if the mechanism had returned it from `step`: a credential request goes to
    /// the configured store, `Done` authenticates, `Pending` waits again.
    pub fn resume(&mut self, result: Result<MechServerStep>, now_ms: i64) -> Result<ServerStep> {
        check_open(self.state)?;
        if self.state != ExchangeState::WaitingForHost {
            return Err(nothing_pending());
        }
        self.now_ms = now_ms;
        self.after(result)
    }

    /// The work of a mechanism whose answer is pending ([`ExchangeState::WaitingForHost`]).
    pub fn pending_work(&self) -> Option<&HostWork> {
        self.pending.as_ref()
    }

    /// Answers the mechanism's credential requests from the configured store for as long as
    /// it can: the mechanism's next step, or the request the host must answer.
    fn answer_from_store(&mut self, mut r: Result<MechServerStep>) -> Result<MechServerStep> {
        // A mechanism asks once per exchange; a bound keeps a faulty one from looping forever.
        let mut answered = 0;
        while let (Ok(MechServerStep::NeedCredential(req)), Some(lookup)) = (&r, &self.lookup) {
            if answered == 8 {
                return Err(Error::new(
                    ErrorCode::Internal,
                    "the mechanism keeps asking for credentials",
                ));
            }
            answered += 1;
            match lookup.lookup(req) {
                Lookup::Now(answer) => {
                    let answer = stand_in(&self.unknown_users, req, answer, &mut self.masked);
                    let now = self.now_ms;
                    let g = guarded(|| self.mech.provide_credential(answer, now));
                    r = unpanic(g, self.mech.name())
                }
                Lookup::Later => break,
            }
        }
        r
    }

    fn after(&mut self, r: Result<MechServerStep>) -> Result<ServerStep> {
        self.pending = None;
        let mut r = self.answer_from_store(r);
        if self.masked {
            // A stand-in never authenticates; the host learns the user was unknown, the
            // client only what a wrong password tells it.
            r = match r {
                Ok(MechServerStep::Done(..)) => Err(Error::new(
                    ErrorCode::InvalidCredentials,
                    "Invalid client credentials",
                )),
                other => other,
            }
            .map_err(|e| e.with_detail("unknown_user", "true"));
        }
        match r {
            Ok(MechServerStep::Challenge(b)) => {
                self.state = ExchangeState::WaitingForPeer;
                Ok(ServerStep::Challenge(b))
            }
            Ok(MechServerStep::NeedCredential(req)) => {
                self.state = ExchangeState::WaitingForCredential;
                self.request = Some(req.clone());
                Ok(ServerStep::NeedCredential(req))
            }
            Ok(MechServerStep::Pending(work)) => {
                self.state = ExchangeState::WaitingForHost;
                self.pending = Some(work.clone());
                Ok(ServerStep::Pending(work))
            }
            Ok(MechServerStep::Done(message, who)) => {
                let mut principal = Principal::user(who.authorization_id);
                principal.token_authenticated = who.token_authenticated;
                let outcome = AuthOutcome {
                    principal,
                    mechanism: self.mech.name().to_string(),
                    credential_expiry_ms: who.credential_expiry_ms,
                    extensions: who.extensions,
                };
                let life = session_lifetime(
                    outcome.credential_expiry_ms,
                    self.max_reauth_ms,
                    self.now_ms,
                );
                self.state = ExchangeState::Done;
                self.session = Some(Box::new(ServerSession {
                    outcome: outcome.clone(),
                    lifetime_ms: life.lifetime_ms,
                    expiry_ms: life.expiry_ms,
                }));
                Ok(ServerStep::Done { message, outcome })
            }
            Err(e) => {
                let e = e.for_client(self.mech.name(), false);
                self.state = ExchangeState::Failed;
                self.last_error = Some(e.clone());
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mech::plain::PlainServer;

    #[test]
    fn an_answer_without_a_request_is_refused_with_nothing_requested() {
        let mut s = ServerExchange::new(Box::new(PlainServer::new()));
        assert!(s.pending_request().is_none());
        let e = s
            .provide_credential(CredentialAnswer::Unknown, 0)
            .unwrap_err();
        assert_eq!(e, nothing_requested());
        assert_eq!(e.code(), ErrorCode::WrongState);
        assert_eq!(s.state(), ExchangeState::WaitingForPeer);
    }
}
