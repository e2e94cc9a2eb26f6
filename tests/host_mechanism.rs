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
use ksasl::kafka::client::ClientConfig;
use ksasl::kafka::server::ServerConfig;
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
    let store = Arc::new(MemoryCredentialStore::new());
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
    let mut c = ServerConfig::new(r);
    c.max_reauth_ms = max_reauth_ms;
    Arc::new(c)
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
    Arc::new(ClientConfig::new(r, NAME))
}

fn alice() -> Arc<Mutex<(String, Vec<u8>)>> {
    Arc::new(Mutex::new(("alice".into(), b"alice-key".to_vec())))
}

#[test]
fn negotiated_among_built_ins_authenticates_and_reauthenticates() {
    let server = server(0, false);
    assert!(server.enabled_mechanisms.iter().any(|m| m == NAME));
    assert!(server
        .enabled_mechanisms
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

    // An error from the host: the driver reports it (no reason disclosed to the client).
    let stranger = Arc::new(Mutex::new(("eve".to_string(), b"k".to_vec())));
    let mut p = Pair::new(client(stranger, ClientFault::None), server(0, false));
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.stats.failed.is_some());

    // The client mechanism keeps talking after the server finished: the client fails.
    let mut p = Pair::new(
        client(alice(), ClientFault::AnswersAfterTheEnd),
        server(0, false),
    );
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.stats.failed.is_some());

    // No first message where the server needs one: the exchange fails, nothing hangs.
    let mut p = Pair::new(
        client(alice(), ClientFault::NoFirstMessage),
        server(0, false),
    );
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.stats.failed.is_some() || p.stats.server_failed.is_some());
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
