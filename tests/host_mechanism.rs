//! A mechanism defined outside the crate (an HMAC challenge-response, "X-HMAC-CHALLENGE")
//! registered next to the built-ins: the server driver negotiates it, it authenticates,
//! its credential expiry bounds the KIP-368 session, it re-authenticates, a principal change
//! is refused, and a misbehaving mechanism (an error, a panic, an answer after the end, no
//! message where one is needed) leaves the drivers in a defined failed state.

mod kafka_pair;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hmac::{Hmac, Mac};
use kafka_pair::Pair;
use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::session::Gate;
use ksasl::*;
use sha2::Sha256;

const T0: i64 = 1_800_000_000_000;
const NAME: &str = "X-HMAC-CHALLENGE";

fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap();
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// How the client side misbehaves, if at all.
#[derive(Clone, Copy, PartialEq)]
enum ClientFault {
    None,
    /// Keeps sending after it has nothing more to say.
    AnswersAfterTheEnd,
    /// Starts with no message although the server needs the user name.
    NoFirstMessage,
}

/// Client: sends the user name, then HMAC(key, challenge).
struct HmacClient {
    user: Arc<Mutex<(String, Vec<u8>)>>,
    fault: ClientFault,
    answered: bool,
}

impl ClientMechanism for HmacClient {
    fn name(&self) -> &str {
        NAME
    }

    fn start(&mut self, _now_ms: i64) -> Result<ClientStep> {
        if self.fault == ClientFault::NoFirstMessage {
            return Ok(ClientStep::Done(None));
        }
        Ok(ClientStep::Send(
            self.user.lock().unwrap().0.as_bytes().to_vec(),
        ))
    }

    fn step(&mut self, challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        if self.answered {
            // The server's final (empty) message: done, unless misbehaving.
            return Ok(if self.fault == ClientFault::AnswersAfterTheEnd {
                ClientStep::Send(b"more".to_vec())
            } else {
                ClientStep::Done(None)
            });
        }
        self.answered = true;
        Ok(ClientStep::Send(mac(
            &self.user.lock().unwrap().1,
            challenge,
        )))
    }
}

/// Server: a key and an expiry per user; a fresh challenge per exchange.
struct HmacServer {
    keys: Arc<HashMap<String, (Vec<u8>, i64)>>,
    user: Option<String>,
    challenge: Vec<u8>,
    panic: bool,
}

impl ServerMechanism for HmacServer {
    fn name(&self) -> &str {
        NAME
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        if self.panic {
            panic!("the host's mechanism has a bug");
        }
        match &self.user {
            None => {
                let user = String::from_utf8(response.to_vec()).map_err(|_| {
                    Error::new(ErrorCode::MalformedMessage, "the user name is not UTF-8")
                })?;
                if !self.keys.contains_key(&user) {
                    return Err(Error::new(ErrorCode::UnknownUser, "unknown user"));
                }
                self.challenge = now_ms.to_be_bytes().to_vec();
                self.user = Some(user);
                Ok(MechServerStep::Challenge(self.challenge.clone()))
            }
            Some(user) => {
                let (key, expiry) = &self.keys[user];
                if !secret::ct_eq(&mac(key, &self.challenge), response) {
                    return Err(Error::new(ErrorCode::InvalidCredentials, "wrong HMAC"));
                }
                let mut who = Authenticated::new(user.clone());
                who.credential_expiry_ms = Some(*expiry);
                Ok(MechServerStep::Done(Some(Vec::new()), who))
            }
        }
    }
}

fn keys() -> Arc<HashMap<String, (Vec<u8>, i64)>> {
    Arc::new(HashMap::from([
        ("alice".to_string(), (b"alice-key".to_vec(), T0 + 5_000)),
        (
            "mallory".to_string(),
            (b"mallory-key".to_vec(), T0 + 60_000),
        ),
    ]))
}

fn server(max_reauth_ms: i64, panic: bool) -> Arc<ServerConfig> {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("bob", "bob-secret", 4096, &OsRandom)
        .unwrap();
    let mut r = MechanismRegistry::password_servers(Some(store));
    let k = keys();
    r.register_server(NAME, move || {
        Ok(Box::new(HmacServer {
            keys: k.clone(),
            user: None,
            challenge: Vec::new(),
            panic,
        }))
    })
    .unwrap();
    ServerConfig::builder(r)
        .set_max_reauth_ms(max_reauth_ms)
        .build()
        .unwrap()
}

fn client(user: Arc<Mutex<(String, Vec<u8>)>>, fault: ClientFault) -> Arc<ClientConfig> {
    let mut r = MechanismRegistry::new();
    r.register_client(NAME, move || {
        Ok(Box::new(HmacClient {
            user: user.clone(),
            fault,
            answered: false,
        }))
    })
    .unwrap();
    ClientConfig::new(r, NAME).unwrap()
}

fn alice() -> Arc<Mutex<(String, Vec<u8>)>> {
    Arc::new(Mutex::new(("alice".into(), b"alice-key".to_vec())))
}

#[test]
fn negotiated_among_built_ins_authenticates_and_reauthenticates() {
    let server = server(0, false);
    assert!(server.enabled_mechanisms().iter().any(|m| m == NAME));
    assert!(server
        .enabled_mechanisms()
        .iter()
        .any(|m| m == "SCRAM-SHA-512"));
    let mut p = Pair::new(client(alice(), ClientFault::None), server);
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 1, "{:?}", p.stats.failed);
    let s = p.server.session().unwrap().clone();
    assert_eq!(s.outcome.principal.to_string(), "User:alice");
    assert_eq!(s.outcome.mechanism, NAME);
    // connections.max.reauth.ms is off: the credential's expiry alone bounds the session.
    assert_eq!(s.lifetime_ms, 5_000);
    assert_eq!(s.expiry_ms, Some(T0 + 5_000));
    let due = p.client.next_deadline().unwrap();
    assert!((T0 + 4_250..=T0 + 4_750).contains(&due), "{due}");
    p.client.handle_timeout(due).unwrap();
    p.pump(due);
    assert_eq!(p.stats.reauthenticated, 1);
    // The same key still expires at T0 + 5 s: the new session ends there too.
    assert_eq!(p.server.session().unwrap().expiry_ms, Some(T0 + 5_000));
    assert_eq!(p.server.gate(3, T0 + 5_001), Gate::CloseExpired);
}

#[test]
fn principal_change_on_reauthentication_is_refused() {
    let user = alice();
    let mut p = Pair::new(
        client(user.clone(), ClientFault::None),
        server(3_000, false),
    );
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 1);
    *user.lock().unwrap() = ("mallory".into(), b"mallory-key".to_vec());
    let due = p.client.next_deadline().unwrap();
    p.client.handle_timeout(due).unwrap();
    p.pump(due);
    assert_eq!(p.stats.reauthenticated, 0);
    let failed = p.stats.failed.clone().unwrap();
    assert!(
        failed.contains(
            "Cannot change principals during re-authentication from User.alice: User.mallory"
        ),
        "{failed}"
    );
}

#[test]
fn misbehaving_mechanisms_fail_cleanly() {
    // A panic inside the host's server mechanism: a PANIC error, the connection closes.
    let mut p = Pair::new(client(alice(), ClientFault::None), server(0, true));
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.server.session().is_none());
    let why = p.stats.server_failed.clone().unwrap_or_default();
    assert!(why.contains("PANIC") || why.contains("panicked"), "{why}");

    // An error from the host: the driver reports it, and the client learns only Kafka's
    // generic sentence, not the reason.
    let generic = format!(
        "SERVER_REJECTED_AUTHENTICATION: {NAME} authentication failed: Authentication failed \
         during authentication due to invalid credentials with SASL mechanism {NAME}"
    );
    let stranger = Arc::new(Mutex::new(("eve".to_string(), b"k".to_vec())));
    let mut p = Pair::new(client(stranger, ClientFault::None), server(0, false));
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert_eq!(
        p.stats.server_failed.as_deref(),
        Some("UNKNOWN_USER: unknown user")
    );
    assert_eq!(p.stats.failed.as_deref(), Some(generic.as_str()));

    // The client mechanism keeps talking after the server finished: the client fails.
    let mut p = Pair::new(
        client(alice(), ClientFault::AnswersAfterTheEnd),
        server(0, false),
    );
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.stats.failed.is_some());

    // No first message where the server needs one: the driver sends an empty message, the
    // server refuses the empty user name, the client gets the generic sentence.
    let mut p = Pair::new(
        client(alice(), ClientFault::NoFirstMessage),
        server(0, false),
    );
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert_eq!(
        p.stats.server_failed.as_deref(),
        Some("UNKNOWN_USER: unknown user")
    );
    assert_eq!(p.stats.failed.as_deref(), Some(generic.as_str()));
}

#[test]
fn a_panicking_mechanism_leaves_the_authenticator_failed() {
    let mut r = MechanismRegistry::new();
    r.register_server(NAME, || {
        Ok(Box::new(HmacServer {
            keys: keys(),
            user: None,
            challenge: Vec::new(),
            panic: true,
        }))
    })
    .unwrap();
    let mut s = r.server(NAME).unwrap();
    let e = s.step(b"alice", T0).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Panic);
    assert_eq!(s.state(), ExchangeState::Failed);
    assert_eq!(
        s.step(b"alice", T0).unwrap_err().code(),
        ErrorCode::StepAfterFailure
    );
}

// ---------------------------------------------------------------------------------------
// Asynchronous host mechanisms: every call hands the host a job (as a coroutine or a call to
// a remote signer would); the host finishes it later and resumes the driver.

/// A client job: the HMAC client's next call, made by the host.
struct ClientJob {
    mech: Arc<Mutex<HmacClient>>,
    challenge: Option<Vec<u8>>,
    now: i64,
}

/// The HMAC client, answering later.
struct DeferredClient(Arc<Mutex<HmacClient>>);

impl ClientMechanism for DeferredClient {
    fn name(&self) -> &str {
        NAME
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        Ok(ClientStep::Pending(HostWork::new(ClientJob {
            mech: self.0.clone(),
            challenge: None,
            now: now_ms,
        })))
    }

    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        Ok(ClientStep::Pending(HostWork::new(ClientJob {
            mech: self.0.clone(),
            challenge: Some(challenge.to_vec()),
            now: now_ms,
        })))
    }
}

/// A server job: the HMAC server's next step, made by the host.
struct ServerJob {
    mech: Arc<Mutex<HmacServer>>,
    response: Vec<u8>,
    now: i64,
}

/// The HMAC server, answering later.
struct DeferredServer(Arc<Mutex<HmacServer>>);

impl ServerMechanism for DeferredServer {
    fn name(&self) -> &str {
        NAME
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        Ok(MechServerStep::Pending(HostWork::new(ServerJob {
            mech: self.0.clone(),
            response: response.to_vec(),
            now: now_ms,
        })))
    }
}

fn run_client_job(w: &HostWork) -> Result<ClientStep> {
    let j = w.downcast_ref::<ClientJob>().expect("a client job");
    let mut m = j.mech.lock().unwrap();
    match &j.challenge {
        None => m.start(j.now),
        Some(c) => m.step(c, j.now),
    }
}

fn run_server_job(w: &HostWork) -> Result<MechServerStep> {
    let j = w.downcast_ref::<ServerJob>().expect("a server job");
    let r = j.mech.lock().unwrap().step(&j.response, j.now);
    r
}

fn deferred_server(max_reauth_ms: i64) -> Arc<ServerConfig> {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("bob", "bob-secret", 4096, &OsRandom)
        .unwrap();
    let mut r = MechanismRegistry::password_servers(Some(store));
    let k = keys();
    r.register_server(NAME, move || {
        Ok(Box::new(DeferredServer(Arc::new(Mutex::new(HmacServer {
            keys: k.clone(),
            user: None,
            challenge: Vec::new(),
            panic: false,
        })))))
    })
    .unwrap();
    ServerConfig::builder(r)
        .set_max_reauth_ms(max_reauth_ms)
        .build()
        .unwrap()
}

fn deferred_client(user: Arc<Mutex<(String, Vec<u8>)>>) -> Arc<ClientConfig> {
    let mut r = MechanismRegistry::new();
    r.register_client(NAME, move || {
        Ok(Box::new(DeferredClient(Arc::new(Mutex::new(HmacClient {
            user: user.clone(),
            fault: ClientFault::None,
            answered: false,
        })))))
    })
    .unwrap();
    ClientConfig::new(r, NAME).unwrap()
}

fn deferred_pair(user: Arc<Mutex<(String, Vec<u8>)>>, max_reauth_ms: i64) -> Pair {
    let mut p = Pair::new(deferred_client(user), deferred_server(max_reauth_ms));
    p.client_host = Some(Box::new(run_client_job));
    p.server_host = Some(Box::new(run_server_job));
    p
}

#[test]
fn asynchronous_mechanisms_authenticate_and_reauthenticate_with_requests_in_flight() {
    let mut p = deferred_pair(alice(), 0);
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 1, "{:?}", p.stats.failed);
    // start + the answer to the challenge + the server's last message; two server steps.
    assert_eq!((p.stats.client_pending, p.stats.server_pending), (3, 2));
    let s = p.server.session().unwrap().clone();
    assert_eq!(s.outcome.principal.to_string(), "User:alice");
    assert_eq!(s.lifetime_ms, 5_000);

    // Requests go out; the re-authentication starts while their responses are on the way
    // and while both mechanisms are with the host; the responses still come back in order.
    p.request(T0 + 100);
    p.request(T0 + 100);
    let due = p.client.next_deadline().unwrap();
    p.request(due);
    p.pump(due);
    p.request(due);
    p.pump(due);
    assert_eq!(p.stats.reauthenticated, 1, "{:?}", p.stats.failed);
    assert_eq!(p.stats.received, vec![0, 1, 2, 3]);
    assert_eq!((p.stats.client_pending, p.stats.server_pending), (6, 4));
    assert_eq!(p.server.session().unwrap().expiry_ms, Some(T0 + 5_000));
}

#[test]
fn asynchronous_principal_change_is_refused() {
    let user = alice();
    let mut p = deferred_pair(user.clone(), 3_000);
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 1);
    *user.lock().unwrap() = ("mallory".into(), b"mallory-key".to_vec());
    let due = p.client.next_deadline().unwrap();
    p.client.handle_timeout(due).unwrap();
    p.pump(due);
    assert_eq!(p.stats.reauthenticated, 0);
    let failed = p.stats.failed.clone().unwrap();
    assert!(
        failed.contains(
            "Cannot change principals during re-authentication from User.alice: User.mallory"
        ),
        "{failed}"
    );
}

#[test]
fn errors_raised_by_host_work_fail_the_drivers_cleanly() {
    // The server's host work fails: the client gets Kafka's generic text, the server the
    // host's error, and the driver refuses a second resume without changing state.
    let mut p = deferred_pair(alice(), 0);
    p.server_host = Some(Box::new(|_| {
        Err(Error::new(
            ErrorCode::HostMechanismFailed,
            "the token service is unreachable",
        ))
    }));
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    let server_why = p.stats.server_failed.clone().unwrap();
    assert!(
        server_why.contains("the token service is unreachable"),
        "{server_why}"
    );
    let client_why = p.stats.failed.clone().unwrap();
    assert!(
        client_why.contains("Authentication failed during authentication due to invalid credentials with SASL mechanism X-HMAC-CHALLENGE"),
        "{client_why}"
    );
    assert!(!client_why.contains("token service"), "{client_why}");
    let again = p.server.resume(Ok(MechServerStep::Challenge(vec![1])), T0);
    assert!(
        matches!(&again, ServerAction::CloseNow(e) if e.code() == ErrorCode::WrongState),
        "{again:?}"
    );

    // The client's host work fails: the client fails with the host's error.
    let mut p = deferred_pair(alice(), 0);
    p.client_host = Some(Box::new(|_| {
        Err(Error::new(ErrorCode::HostMechanismFailed, "signer crashed"))
    }));
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.stats.failed.clone().unwrap().contains("signer crashed"));
    assert!(p.client.pending_work().is_none());
    match p.client.resume(Ok(ClientStep::Done(None)), T0) {
        ClientEvent::Failed(e) => assert_eq!(e.code(), ErrorCode::WrongState),
        other => panic!("{other:?}"),
    }
}

#[test]
fn resume_and_frames_at_the_wrong_time_are_refused() {
    // Nothing is pending: resume changes nothing.
    let mut client = ClientConnection::new(deferred_client(alice()));
    match client.resume(Ok(ClientStep::Send(vec![1])), T0) {
        ClientEvent::Failed(e) => assert_eq!(e.code(), ErrorCode::WrongState),
        other => panic!("{other:?}"),
    }
    let mut server = ServerConnection::new(deferred_server(0));
    let out = server.resume(Ok(MechServerStep::Challenge(vec![1])), T0);
    assert!(matches!(&out, ServerAction::CloseNow(e) if e.code() == ErrorCode::WrongState));
    // ...and the connections still authenticate afterwards.
    let mut p = deferred_pair(alice(), 0);
    p.client = client;
    p.server = server;
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 1, "{:?}", p.stats.failed);

    // A frame reaching a client whose mechanism is with the host (not an answer to an
    // application request): the client fails; it is not fed to the mechanism.
    let mut p = deferred_pair(alice(), 0);
    p.client_host = Some(Box::new(|_| panic!("not called")));
    p.client.start(T0).unwrap();
    // Run until the client's first mechanism call is handed out.
    for _ in 0..4 {
        if let Some(out) = p.client.poll_transmit() {
            let mut dec = ksasl::kafka::messages::FrameDecoder::new(1 << 20);
            dec.push(&out);
            while let Some(f) = dec.next_frame().unwrap() {
                p.server.handle_frame(&f, T0);
                let mut back = ksasl::kafka::messages::FrameDecoder::new(1 << 20);
                back.push(&p.server.poll_transmit().unwrap_or_default());
                while let Some(r) = back.next_frame().unwrap() {
                    if let ClientEvent::Pending(_) = p.client.handle_frame(&r, T0) {
                        let stray = [0, 0, 0x7f, 0x00, 0, 0];
                        match p.client.handle_frame(&stray, T0) {
                            ClientEvent::Failed(e) => {
                                assert_eq!(e.code(), ErrorCode::CorrelationMismatch);
                                return;
                            }
                            other => panic!("{other:?}"),
                        }
                    }
                }
            }
        }
    }
    panic!("the client mechanism never answered later");
}

#[test]
fn authenticators_wait_for_the_host() {
    let mut r = MechanismRegistry::new();
    r.register_server(NAME, || {
        Ok(Box::new(DeferredServer(Arc::new(Mutex::new(HmacServer {
            keys: keys(),
            user: None,
            challenge: Vec::new(),
            panic: false,
        })))))
    })
    .unwrap();
    let mut s = r.server(NAME).unwrap();
    let ServerStep::Pending(work) = s.step(b"alice", T0).unwrap() else {
        panic!("not pending")
    };
    assert_eq!(s.state(), ExchangeState::WaitingForHost);
    assert_eq!(s.pending_work(), Some(&work));
    // Another message before the host answered: refused, state unchanged.
    assert_eq!(
        s.step(b"alice", T0).unwrap_err().code(),
        ErrorCode::WrongState
    );
    assert_eq!(s.state(), ExchangeState::WaitingForHost);
    let step = s.resume(run_server_job(&work), T0).unwrap();
    assert!(matches!(step, ServerStep::Challenge(_)));
    assert_eq!(s.pending_work(), None);
    assert_eq!(s.state(), ExchangeState::WaitingForPeer);
    // Not pending any more.
    assert_eq!(
        s.resume(Ok(MechServerStep::Challenge(vec![])), T0)
            .unwrap_err()
            .code(),
        ErrorCode::WrongState
    );
    assert_eq!(s.state(), ExchangeState::WaitingForPeer);

    let mut c = ClientExchange::new(Box::new(DeferredClient(Arc::new(Mutex::new(HmacClient {
        user: alice(),
        fault: ClientFault::None,
        answered: false,
    })))));
    let ClientStep::Pending(work) = c.start(T0).unwrap() else {
        panic!("not pending")
    };
    assert_eq!(c.pending_work(), Some(&work));
    assert_eq!(format!("{work:?}"), "HostWork(..)");
    assert_eq!(c.step(b"x", T0).unwrap_err().code(), ErrorCode::WrongState);
    assert_eq!(c.state(), ExchangeState::WaitingForHost);
    // The host's error fails the exchange.
    let e = c
        .resume(Err(Error::new(ErrorCode::HostMechanismFailed, "gone")))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::HostMechanismFailed);
    assert_eq!(c.state(), ExchangeState::Failed);
    assert_eq!(c.pending_work(), None);
    assert_eq!(
        c.resume(Ok(ClientStep::Done(None))).unwrap_err().code(),
        ErrorCode::StepAfterFailure
    );
}
