//! The rules the core keeps for every binding, exercised through the Rust API: decoding a
//! host's credential answer, lookups written by the host, routing of delegation-token logins,
//! host mechanisms answering through `HostOutput`, host token validators, what a connection
//! waits for from the host, and the session and client text a server reports.

use std::sync::{Arc, Mutex};

use ksasl::credential::HostLookup;
use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::messages::FrameDecoder;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::mech::oauthbearer::HostTokenValidator;
use ksasl::mech::{HostClientCalls, HostServerCalls};
use ksasl::*;

const NOW: i64 = 1_800_000_000_000;

fn request(mechanism: &str, user: &str, token: bool) -> CredentialRequest {
    CredentialRequest {
        mechanism: mechanism.into(),
        username: user.into(),
        token_authenticated: token,
    }
}

#[test]
fn answers_decode_with_the_stable_numbering() {
    use CredentialAnswerKind as K;
    assert_eq!(
        K::ALL.iter().map(|k| k.as_u32()).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    let r = request("SCRAM-SHA-256", "alice", false);
    let found = |l: Lookup| match l {
        Lookup::Now(CredentialAnswer::Found(c)) => c,
        other => panic!("{other:?}"),
    };
    let c = found(CredentialAnswer::decode(&r, K::Password, Some("pw"), Some(5), None).unwrap());
    assert_eq!((c.expiry_ms(), c.token_owner()), (Some(5), None));
    let text = ScramCredential::generate(ScramMechanism::Sha256, b"pw", 4096, &OsRandom)
        .unwrap()
        .to_kafka_string();
    let c = found(CredentialAnswer::decode(&r, K::Scram, Some(&text), None, Some("bob")).unwrap());
    assert_eq!(c.token_owner(), Some("bob"));
    // PLAIN verifies against either SCRAM variant.
    let plain = request("PLAIN", "alice", false);
    found(CredentialAnswer::decode(&plain, K::Scram, Some(&text), None, None).unwrap());
    assert!(matches!(
        CredentialAnswer::decode(&r, K::Unknown, None, None, None).unwrap(),
        Lookup::Now(CredentialAnswer::Unknown)
    ));
    match CredentialAnswer::decode(&r, K::Unavailable, Some("db down"), None, None).unwrap() {
        Lookup::Now(CredentialAnswer::Unavailable(why)) => assert_eq!(why, "db down"),
        other => panic!("{other:?}"),
    }
    let later = CredentialAnswer::decode(&r, K::Later, None, None, None).unwrap();
    assert!(matches!(later, Lookup::Later));
    assert_eq!(later.now().unwrap_err().code(), ErrorCode::InvalidArgument);
    // Refusals: no value, a credential that does not parse, a number that is no kind.
    let e = CredentialAnswer::decode(&r, K::Password, None, None, None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NullArgument);
    let e = CredentialAnswer::decode(&r, K::Scram, Some("salt=x"), None, None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidCredentialFormat);
    assert_eq!(
        K::try_from_u32(9).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(K::from_name("scram").unwrap(), K::Scram);
}

#[test]
fn a_host_lookup_that_fails_answers_unavailable() {
    let lookup = HostLookup(|r: &CredentialRequest| -> Result<Lookup> {
        if r.username == "alice" {
            CredentialAnswer::decode(r, CredentialAnswerKind::Password, Some("pw"), None, None)
        } else {
            Err(Error::new(
                ErrorCode::InvalidArgument,
                "the host's answer was a number",
            ))
        }
    });
    assert!(matches!(
        lookup.lookup(&request("PLAIN", "alice", false)),
        Lookup::Now(CredentialAnswer::Found(_))
    ));
    match lookup.lookup(&request("PLAIN", "bob", false)) {
        Lookup::Now(CredentialAnswer::Unavailable(why)) => {
            assert_eq!(why, "the host's answer was a number")
        }
        other => panic!("{other:?}"),
    }
}

/// A lookup that records what it was asked and answers one fixed password.
struct Recording(Mutex<Vec<String>>, &'static str);

impl CredentialLookup for Recording {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        self.0.lock().unwrap().push(request.username.clone());
        let c = ServerCredential::password(self.1);
        Lookup::Now(CredentialAnswer::Found(if request.token_authenticated {
            c.with_token_owner("alice")
        } else {
            c
        }))
    }
}

#[test]
fn the_registry_routes_token_logins_to_the_token_lookup() {
    let users = Arc::new(Recording(Mutex::new(vec![]), "user-pw"));
    let tokens = Arc::new(Recording(Mutex::new(vec![]), "token-pw"));
    let mut r = MechanismRegistry::password_servers(None);
    r.set_credential_lookup(Some(users.clone()));
    r.set_token_lookup(Some(tokens.clone()));
    let login = |user: &str, pw: &str, token: bool| {
        let cred = if token {
            PasswordCredential::delegation_token(user, pw).unwrap()
        } else {
            PasswordCredential::new(user, pw).unwrap()
        };
        let clients = MechanismRegistry::password_clients(Arc::new(cred));
        let mut c = clients.client("SCRAM-SHA-256").unwrap();
        let mut s = r.server("SCRAM-SHA-256").unwrap();
        let ClientStep::Send(first) = c.start(NOW).unwrap() else {
            panic!()
        };
        let ServerStep::Challenge(ch) = s.step(&first, NOW).unwrap() else {
            panic!()
        };
        let ClientStep::Send(fin) = c.step(&ch, NOW).unwrap() else {
            panic!()
        };
        s.step(&fin, NOW).is_ok()
    };
    assert!(login("alice", "user-pw", false));
    assert!(login("tok1", "token-pw", true));
    assert!(
        !login("tok2", "user-pw", true),
        "a token login never reaches the users"
    );
    assert_eq!(*users.0.lock().unwrap(), ["alice"]);
    assert_eq!(*tokens.0.lock().unwrap(), ["tok1", "tok2"]);
    // Without a user lookup, user logins are left to the host (the pull form).
    let mut r = MechanismRegistry::password_servers(None);
    r.set_token_lookup(Some(tokens));
    let mut s = r.server("PLAIN").unwrap();
    let step = s.step(b"\0alice\0pw", NOW).unwrap();
    assert!(matches!(step, ServerStep::NeedCredential(_)));
    assert_eq!(s.pending_request().unwrap().username, "alice");
}

#[test]
fn a_single_exchange_reports_the_kip368_session() {
    // Regression: the single-exchange server gave no session lifetime, so a host framing
    // the exchange itself had to compute Kafka's formula.
    let store = Arc::new(CredentialStore::new());
    store.add_user("alice", "pw", 4096, &OsRandom).unwrap();
    store.set_user_expiry("alice", Some(NOW + 90_000)).unwrap();
    let servers = MechanismRegistry::password_servers(Some(store));
    for (max_reauth, lifetime) in [(0, 90_000), (60_000, 60_000), (120_000, 90_000)] {
        let mut s = servers.server("PLAIN").unwrap();
        s.set_max_reauth_ms(max_reauth);
        assert!(matches!(
            s.step(b"\0alice\0pw", NOW).unwrap(),
            ServerStep::Done { .. }
        ));
        let session = s.session().unwrap();
        assert_eq!(session.lifetime_ms, lifetime);
        assert_eq!(session.expiry_ms, Some(NOW + lifetime));
        assert_eq!(session.outcome.principal.to_string(), "User:alice");
    }
    // A failure keeps Kafka's text for the client on the exchange and on the error.
    let mut s = servers.server("PLAIN").unwrap();
    let e = s.step(b"\0alice\0nope", NOW).unwrap_err();
    assert_eq!(
        s.client_message().as_deref(),
        Some("Authentication failed: Invalid username or password")
    );
    assert_eq!(e.client_text(), s.client_message().as_deref());
    let mut s = servers.server("PLAIN").unwrap();
    let e = s.step(b"\0mallory\0pw", NOW).unwrap_err();
    assert_eq!(
        e.client_text(),
        Some("Authentication failed: Invalid username or password")
    );
}

/// A host mechanism as a binding would write it: the host's answers arrive as plain values
/// and are written into the output.
struct Echo {
    said: Option<Vec<u8>>,
    fail: Option<(Option<ErrorCode>, &'static str)>,
}

impl HostClientCalls for Echo {
    fn call(&mut self, challenge: Option<&[u8]>, _now: i64, out: &mut HostOutput) -> i64 {
        match challenge {
            None => out.set_message(b"alice").map(|_| 0).unwrap_or(1),
            Some(_) => {
                let _ = out.set_message(b"yes");
                let _ = out.set_done();
                0
            }
        }
    }
}

impl HostServerCalls for Echo {
    fn call(&mut self, response: &[u8], _now: i64, out: &mut HostOutput) -> i64 {
        if let Some((code, text)) = self.fail {
            out.set_error(code, text);
            return 1;
        }
        if self.said.is_none() {
            self.said = Some(response.to_vec());
            let _ = out.set_message(b"ok?");
            return 0;
        }
        let who = String::from_utf8_lossy(self.said.as_ref().unwrap()).into_owned();
        let _ = out.set_message(b"");
        let _ = out.set_authenticated(&who, Some(NOW + 30_000));
        0
    }
}

fn host_configs(
    fail: Option<(Option<ErrorCode>, &'static str)>,
) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let mut c = MechanismRegistry::new();
    c.register_host_client("X-ECHO", || {
        Ok(Box::new(Echo {
            said: None,
            fail: None,
        }))
    })
    .unwrap();
    let mut s = MechanismRegistry::new();
    s.register_host_server("X-ECHO", move || Ok(Box::new(Echo { said: None, fail })))
        .unwrap();
    (
        ClientConfig::new(c, "X-ECHO").unwrap(),
        ServerConfig::new(s).unwrap(),
    )
}

/// Runs one connection; returns the last server output and the client's last event.
fn run(client: Arc<ClientConfig>, server: Arc<ServerConfig>) -> (ServerAction, ClientEvent) {
    let mut c = ClientConnection::new(client);
    let mut s = ServerConnection::new(server);
    c.start(NOW).unwrap();
    let (mut to_s, mut to_c) = (FrameDecoder::new(1 << 20), FrameDecoder::new(1 << 20));
    let mut last = None;
    let mut event = ClientEvent::Continue;
    for _ in 0..10 {
        to_s.push(&c.poll_transmit().unwrap_or_default());
        while let Some(f) = to_s.next_frame().unwrap() {
            last = Some(s.handle_frame(&f, NOW));
            to_c.push(&s.poll_transmit().unwrap_or_default());
        }
        while let Some(f) = to_c.next_frame().unwrap() {
            event = c.handle_frame(&f, NOW);
        }
    }
    (last.unwrap(), event)
}

#[test]
fn host_mechanisms_answer_through_host_outputs() {
    let (client, server) = host_configs(None);
    let (out, event) = run(client, server);
    let session = out.session().unwrap();
    assert_eq!(session.outcome.principal.to_string(), "User:alice");
    assert_eq!(
        session.lifetime_ms, 30_000,
        "the host's credential expiry bounds it"
    );
    assert!(matches!(event, ClientEvent::Authenticated(_)));
    // The host fails with one of the library's codes: kept, with the host's text, and the
    // client is told Kafka's generic sentence only. The reason reaches the host.
    let (client, server) = host_configs(Some((Some(ErrorCode::UnknownUser), "no such user")));
    let (out, event) = run(client, server);
    let e = out.error().unwrap();
    assert_eq!(e.code(), ErrorCode::UnknownUser);
    assert_eq!(
        e.to_string(),
        "UNKNOWN_USER: the X-ECHO mechanism's step failed: no such user"
    );
    let told = "Authentication failed during authentication due to invalid credentials with SASL mechanism X-ECHO";
    assert_eq!(e.client_text(), Some(told));
    assert!(out.deadline_ms().is_some());
    match event {
        ClientEvent::Failed(e) => {
            assert_eq!(e.code(), ErrorCode::ServerRejectedAuthentication);
            assert_eq!(e.detail("server_message"), Some(told));
            assert_eq!(
                e.to_string()
                    .matches("SERVER_REJECTED_AUTHENTICATION")
                    .count(),
                1
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn host_token_validators_and_their_verdicts() {
    let v = HostTokenValidator(|token: &str, now: i64| -> Result<Option<(String, i64)>> {
        match token {
            "good" => Ok(Some(("alice".into(), now + 1_000))),
            "nobody" => Ok(Some((String::new(), now + 1_000))),
            "bad" => Ok(None),
            _ => Err(Error::new(ErrorCode::Internal, "the host's code raised")),
        }
    });
    let ok = v.validate("good", NOW).unwrap();
    assert_eq!(
        (ok.principal.as_str(), ok.expiry_ms),
        ("alice", NOW + 1_000)
    );
    for (t, why) in [
        (
            "nobody",
            "the host's validator accepted the token for an empty principal",
        ),
        ("bad", "rejected by the host's validator"),
        (
            "boom",
            "the host's validator failed: the host's code raised",
        ),
    ] {
        let r = v.validate(t, NOW).unwrap_err();
        assert_eq!(
            (r.code, r.reason.as_str(), r.status.as_str()),
            (ErrorCode::TokenRejected, why, "invalid_token")
        );
    }
}

#[test]
fn an_async_host_settles_a_frame_through_host_tasks() {
    // The pull form: no lookup, the connection stops for the host, which answers and joins
    // the outputs; the same loop an asyncio or CompletionStage host runs.
    let server = ServerConfig::new(MechanismRegistry::password_servers(None)).unwrap();
    let clients = MechanismRegistry::password_clients(Arc::new(
        PasswordCredential::new("alice", "pw").unwrap(),
    ));
    let client = ClientConfig::new(clients, "SCRAM-SHA-512").unwrap();
    let mut c = ClientConnection::new(client);
    let mut s = ServerConnection::new(server);
    c.start(NOW).unwrap();
    let (mut to_s, mut to_c) = (FrameDecoder::new(1 << 20), FrameDecoder::new(1 << 20));
    let mut asked = 0;
    for _ in 0..6 {
        to_s.push(&c.poll_transmit().unwrap_or_default());
        while let Some(f) = to_s.next_frame().unwrap() {
            let mut action = s.handle_frame(&f, NOW);
            while let Some(task) = s.host_task() {
                let HostTask::Credential(req) = task else {
                    panic!("no mechanism work here")
                };
                asked += 1;
                let answer = CredentialAnswer::decode(
                    req,
                    CredentialAnswerKind::Password,
                    Some("pw"),
                    None,
                    None,
                )
                .unwrap()
                .now()
                .unwrap();
                assert!(matches!(action, ServerAction::NeedCredential(_)));
                action = s.provide_credential(answer, NOW);
            }
            assert!(matches!(
                action,
                ServerAction::Continue | ServerAction::Authenticated(_)
            ));
            // The frames of every step wait in the outbox.
            to_c.push(&s.poll_transmit().unwrap_or_default());
        }
        while let Some(f) = to_c.next_frame().unwrap() {
            c.handle_frame(&f, NOW);
        }
    }
    assert_eq!(asked, 1);
    assert!(c.is_ready() && s.is_ready());
    // Answering when nothing is asked changes nothing.
    let out = s.provide_credential(CredentialAnswer::Unknown, NOW);
    assert_eq!(out.error().unwrap().code(), ErrorCode::WrongState);
    assert!(s.is_ready());
}
