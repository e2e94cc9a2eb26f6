//! Whole exchanges between ksasl clients and servers: every mechanism, both authzid forms,
//! the pull form of credential lookup, expiries, tokens, failures and the key cache.

mod common;

use std::sync::Arc;

use common::{exchange, Failure, NOW};
use ksasl::*;

fn store() -> Arc<CredentialStore> {
    let s = Arc::new(CredentialStore::new());
    s.add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    s.add_user("we,ird=name", "p,w=d\u{e9}", 4096, &OsRandom)
        .unwrap();
    s
}

fn servers() -> MechanismRegistry {
    MechanismRegistry::password_servers(Some(store()))
}

fn clients(user: &str, password: &str) -> MechanismRegistry {
    MechanismRegistry::password_clients(Arc::new(PasswordCredential::new(user, password).unwrap()))
}

#[test]
fn every_mechanism_authenticates() {
    let servers = servers();
    let clients = clients("alice", "alice-secret");
    assert_eq!(
        servers.server_mechanisms(),
        vec!["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    );
    for mech in servers.server_mechanisms() {
        let mut c = clients.client(&mech).unwrap();
        let mut s = servers.server(&mech).unwrap();
        let (outcome, transcript) = exchange(&mut c, &mut s).unwrap();
        assert_eq!(outcome.principal, Principal::user("alice"));
        assert_eq!(outcome.principal.to_string(), "User:alice");
        assert_eq!(outcome.mechanism, mech);
        assert_eq!(outcome.credential_expiry_ms, None);
        assert!(s.is_complete() && c.is_complete());
        assert_eq!(s.outcome(), Some(&outcome));
        let expected_messages = if mech == "PLAIN" { 2 } else { 4 };
        assert_eq!(transcript.len(), expected_messages, "{mech}");
        if mech == "PLAIN" {
            assert_eq!(transcript[0], b"\0alice\0alice-secret");
            assert_eq!(
                transcript[1], b"",
                "Kafka answers PLAIN success with an empty challenge"
            );
        }
    }
}

#[test]
fn escaped_usernames_and_non_ascii_passwords() {
    let servers = servers();
    let clients = clients("we,ird=name", "p,w=d\u{e9}");
    for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let (outcome, transcript) = exchange(
            &mut clients.client(mech).unwrap(),
            &mut servers.server(mech).unwrap(),
        )
        .unwrap();
        assert_eq!(outcome.principal.name, "we,ird=name");
        if mech != "PLAIN" {
            assert!(transcript[0].starts_with(b"n,,n=we=2Cird=3Dname,r="));
        }
    }
}

#[test]
fn plain_authzid_equal_to_username_is_accepted_and_other_is_refused() {
    let cred = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    let servers = servers();
    let mut c = ClientExchange::new(Box::new(
        PlainClient::new(cred.clone())
            .with_authzid("alice")
            .unwrap(),
    ));
    let (outcome, t) = exchange(&mut c, &mut servers.server("PLAIN").unwrap()).unwrap();
    assert_eq!(t[0], b"alice\0alice\0alice-secret");
    assert_eq!(outcome.principal.name, "alice");

    let mut c = ClientExchange::new(Box::new(
        PlainClient::new(cred).with_authzid("admin").unwrap(),
    ));
    let mut s = servers.server("PLAIN").unwrap();
    let err = match exchange(&mut c, &mut s) {
        Err(Failure::Server(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(err.code(), ErrorCode::AuthzidMismatch);
    assert_eq!(
        err.client_message("PLAIN", false),
        "Authentication failed: Client requested an authorization id that is different from username"
    );
}

#[test]
fn wrong_password_fails_with_kafka_texts() {
    let servers = servers();
    let clients = clients("alice", "wrong");
    for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let mut s = servers.server(mech).unwrap();
        let err = match exchange(&mut clients.client(mech).unwrap(), &mut s) {
            Err(Failure::Server(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(err.code(), ErrorCode::InvalidCredentials);
        assert_eq!(s.state(), ExchangeState::Failed);
        assert_eq!(s.last_error(), Some(&err));
        let text = err.client_message(mech, false);
        if mech == "PLAIN" {
            assert_eq!(text, "Authentication failed: Invalid username or password");
        } else {
            assert_eq!(text, format!("Authentication failed during authentication due to invalid credentials with SASL mechanism {mech}"));
        }
    }
}

#[test]
fn unknown_users_fail_like_kafka() {
    let servers = servers();
    let clients = clients("mallory", "x");
    // PLAIN: the same disclosed text as a wrong password.
    let e = match exchange(
        &mut clients.client("PLAIN").unwrap(),
        &mut servers.server("PLAIN").unwrap(),
    ) {
        Err(Failure::Server(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.code(), ErrorCode::UnknownUser);
    assert_eq!(
        e.client_message("PLAIN", false),
        "Authentication failed: Invalid username or password"
    );
    // SCRAM: fails at the first message, generic to the client.
    let mut s = servers.server("SCRAM-SHA-256").unwrap();
    let mut c = clients.client("SCRAM-SHA-256").unwrap();
    let first = match c.start(NOW).unwrap() {
        ClientStep::Send(m) => m,
        other => panic!("{other:?}"),
    };
    let e = s.step(&first, NOW).unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownUser);
    assert!(!e.is_disclosed());
    assert!(!e.client_message("SCRAM-SHA-256", false).contains("mallory"));
}

/// A credential store that always defers, like a host that looks users up in a database.
struct Deferring;
impl CredentialLookup for Deferring {
    fn lookup(&self, _: &CredentialRequest) -> Lookup {
        Lookup::Later
    }
}

#[test]
fn pull_form_stops_and_resumes() {
    let salt = b"pull-salt";
    let cred =
        ScramCredential::derive(ScramMechanism::Sha512, b"alice-secret", salt, 4096).unwrap();
    for lookup in [None, Some(Arc::new(Deferring) as Arc<dyn CredentialLookup>)] {
        let servers = MechanismRegistry::password_servers(lookup);
        let clients = clients("alice", "alice-secret");
        for mech in ["PLAIN", "SCRAM-SHA-512"] {
            let mut c = clients.client(mech).unwrap();
            let mut s = servers.server(mech).unwrap();
            let first = match c.start(NOW).unwrap() {
                ClientStep::Send(m) | ClientStep::Done(Some(m)) => m,
                other => panic!("{other:?}"),
            };
            let req = match s.step(&first, NOW).unwrap() {
                ServerStep::NeedCredential(r) => r,
                other => panic!("{other:?}"),
            };
            assert_eq!(
                req,
                CredentialRequest {
                    mechanism: mech.into(),
                    username: "alice".into(),
                    token_authenticated: false
                }
            );
            assert_eq!(s.state(), ExchangeState::WaitingForCredential);
            // Stepping while a credential is awaited is misuse and changes nothing.
            assert_eq!(s.step(b"x", NOW).unwrap_err().code(), ErrorCode::WrongState);
            assert_eq!(s.state(), ExchangeState::WaitingForCredential);
            let answer = CredentialAnswer::Found(
                ServerCredential::scram(cred.clone()).with_expiry_ms(NOW + 5_000),
            );
            match s.provide_credential(answer, NOW).unwrap() {
                ServerStep::Done { outcome, .. } => {
                    assert_eq!(mech, "PLAIN", "PLAIN verified against a SCRAM credential");
                    assert_eq!(outcome.credential_expiry_ms, Some(NOW + 5_000));
                }
                ServerStep::Challenge(ch) => {
                    let fin = match c.step(&ch, NOW).unwrap() {
                        ClientStep::Send(m) => m,
                        other => panic!("{other:?}"),
                    };
                    match s.step(&fin, NOW).unwrap() {
                        ServerStep::Done { message, outcome } => {
                            assert_eq!(outcome.credential_expiry_ms, Some(NOW + 5_000));
                            assert_eq!(
                                c.step(&message.unwrap(), NOW).unwrap(),
                                ClientStep::Done(None)
                            );
                        }
                        other => panic!("{other:?}"),
                    }
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(
                s.provide_credential(CredentialAnswer::Unknown, NOW)
                    .unwrap_err()
                    .code(),
                ErrorCode::StepAfterDone
            );
        }
    }
}

#[test]
fn pull_form_unknown_and_unavailable() {
    let servers = MechanismRegistry::password_servers(None);
    let clients = clients("alice", "alice-secret");
    for (answer, code) in [
        (CredentialAnswer::Unknown, ErrorCode::UnknownUser),
        (
            CredentialAnswer::Unavailable("database down".into()),
            ErrorCode::CredentialLookupFailed,
        ),
    ] {
        for mech in ["PLAIN", "SCRAM-SHA-256"] {
            let mut c = clients.client(mech).unwrap();
            let mut s = servers.server(mech).unwrap();
            let first = match c.start(NOW).unwrap() {
                ClientStep::Send(m) | ClientStep::Done(Some(m)) => m,
                other => panic!("{other:?}"),
            };
            assert!(matches!(
                s.step(&first, NOW).unwrap(),
                ServerStep::NeedCredential(_)
            ));
            let e = s.provide_credential(answer.clone(), NOW).unwrap_err();
            assert_eq!(e.code(), code, "{mech}");
            assert!(
                !e.client_message(mech, false).contains("database"),
                "the host's reason stays with the host"
            );
            assert_eq!(s.state(), ExchangeState::Failed);
            assert_eq!(
                s.step(b"x", NOW).unwrap_err().code(),
                ErrorCode::StepAfterFailure
            );
        }
    }
}

#[test]
fn password_credentials_serve_scram_with_a_fresh_salt() {
    let servers = MechanismRegistry::password_servers(None);
    let clients = clients("bob", "bob-pw");
    let mut c = clients.client("SCRAM-SHA-256").unwrap();
    let mut s = servers.server("SCRAM-SHA-256").unwrap();
    let ClientStep::Send(first) = c.start(NOW).unwrap() else {
        panic!()
    };
    assert!(matches!(
        s.step(&first, NOW).unwrap(),
        ServerStep::NeedCredential(_)
    ));
    let ServerStep::Challenge(ch) = s
        .provide_credential(
            CredentialAnswer::Found(ServerCredential::password("bob-pw")),
            NOW,
        )
        .unwrap()
    else {
        panic!()
    };
    let ClientStep::Send(fin) = c.step(&ch, NOW).unwrap() else {
        panic!()
    };
    let ServerStep::Done { message, outcome } = s.step(&fin, NOW).unwrap() else {
        panic!()
    };
    assert_eq!(
        c.step(&message.unwrap(), NOW).unwrap(),
        ClientStep::Done(None)
    );
    assert_eq!(outcome.principal.name, "bob");
}

#[test]
fn delegation_token_login_reports_owner_and_expiry() {
    let store = Arc::new(CredentialStore::new());
    let hmac =
        "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==";
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let c = ScramCredential::generate(m, hmac.as_bytes(), 4096, &OsRandom).unwrap();
        store
            .set_token(
                "AAECAwQFBgcICQoLDA0ODw",
                m,
                ServerCredential::scram(c)
                    .with_token_owner("alice")
                    .with_expiry_ms(NOW + 86_400_000),
            )
            .unwrap();
    }
    let servers = MechanismRegistry::password_servers(Some(store.clone()));
    let clients = MechanismRegistry::password_clients(Arc::new(
        PasswordCredential::delegation_token("AAECAwQFBgcICQoLDA0ODw", hmac).unwrap(),
    ));
    assert_eq!(
        clients.client_mechanisms(),
        vec!["SCRAM-SHA-256", "SCRAM-SHA-512"],
        "no PLAIN for tokens"
    );
    for mech in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let (outcome, t) = exchange(
            &mut clients.client(mech).unwrap(),
            &mut servers.server(mech).unwrap(),
        )
        .unwrap();
        assert!(t[0].ends_with(b",tokenauth=true"));
        assert_eq!(outcome.principal, Principal::user("alice"));
        assert!(outcome.principal.token_authenticated);
        assert_eq!(outcome.credential_expiry_ms, Some(NOW + 86_400_000));
    }
    // Once the token is gone the same login fails as an unknown token.
    store.remove_token("AAECAwQFBgcICQoLDA0ODw").unwrap();
    let r = exchange(
        &mut clients.client("SCRAM-SHA-256").unwrap(),
        &mut servers.server("SCRAM-SHA-256").unwrap(),
    );
    assert_eq!(r.unwrap_err().code(), ErrorCode::UnknownToken);
    // A token id is not a username: a password login as the token id fails.
    let plain = clients_for_token_id_as_user();
    assert_eq!(
        exchange(
            &mut plain.client("SCRAM-SHA-256").unwrap(),
            &mut servers.server("SCRAM-SHA-256").unwrap()
        )
        .unwrap_err()
        .code(),
        ErrorCode::UnknownUser
    );
}

fn clients_for_token_id_as_user() -> MechanismRegistry {
    clients("AAECAwQFBgcICQoLDA0ODw", "whatever")
}

#[test]
fn user_expiry_is_reported() {
    let store = store();
    store.set_user_expiry("alice", Some(NOW + 42)).unwrap();
    let servers = MechanismRegistry::password_servers(Some(store));
    let clients = clients("alice", "alice-secret");
    for mech in ["PLAIN", "SCRAM-SHA-256"] {
        let (o, _) = exchange(
            &mut clients.client(mech).unwrap(),
            &mut servers.server(mech).unwrap(),
        )
        .unwrap();
        assert_eq!(o.credential_expiry_ms, Some(NOW + 42));
    }
}

#[test]
fn reauthentication_with_cached_keys_runs_no_pbkdf2() {
    let store = store();
    let servers = MechanismRegistry::password_servers(Some(store.clone()));
    let cred = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    let clients = MechanismRegistry::password_clients(cred.clone());
    assert_eq!(cred.derivations(), 0);
    for _ in 0..3 {
        exchange(
            &mut clients.client("SCRAM-SHA-256").unwrap(),
            &mut servers.server("SCRAM-SHA-256").unwrap(),
        )
        .unwrap();
    }
    // Three logins against the same stored credential: one PBKDF2 run, then the cache.
    assert_eq!(cred.derivations(), 1);
    exchange(
        &mut clients.client("SCRAM-SHA-512").unwrap(),
        &mut servers.server("SCRAM-SHA-512").unwrap(),
    )
    .unwrap();
    assert_eq!(cred.derivations(), 2, "another mechanism, another salt");
    exchange(
        &mut clients.client("SCRAM-SHA-256").unwrap(),
        &mut servers.server("SCRAM-SHA-256").unwrap(),
    )
    .unwrap();
    assert_eq!(cred.derivations(), 2, "each mechanism keeps its keys");
    assert_eq!(cred.cached_key_sets(), 2);
    // A server credential with a new salt (the password was set again): one more run.
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    exchange(
        &mut clients.client("SCRAM-SHA-256").unwrap(),
        &mut servers.server("SCRAM-SHA-256").unwrap(),
    )
    .unwrap();
    assert_eq!(cred.derivations(), 3);
}

#[test]
fn cached_keys_follow_the_server_credential() {
    // The server rotates the stored credential (new salt): the client derives again and
    // still authenticates; a stale cache entry is never used for the new salt.
    let store = store();
    let servers = MechanismRegistry::password_servers(Some(store.clone()));
    let cred = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    let clients = MechanismRegistry::password_clients(cred.clone());
    exchange(
        &mut clients.client("SCRAM-SHA-256").unwrap(),
        &mut servers.server("SCRAM-SHA-256").unwrap(),
    )
    .unwrap();
    store
        .add_user("alice", "alice-secret", 8192, &OsRandom)
        .unwrap();
    exchange(
        &mut clients.client("SCRAM-SHA-256").unwrap(),
        &mut servers.server("SCRAM-SHA-256").unwrap(),
    )
    .unwrap();
    assert_eq!(cred.cached_key_sets(), 1);
    // A password change on the server makes the old credential fail.
    store.add_user("alice", "rotated", 4096, &OsRandom).unwrap();
    let e = exchange(
        &mut clients.client("SCRAM-SHA-256").unwrap(),
        &mut servers.server("SCRAM-SHA-256").unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidCredentials);
}

#[test]
fn registry_errors() {
    let r = servers();
    assert_eq!(
        r.server("GSSAPI").unwrap_err().code(),
        ErrorCode::UnknownMechanism
    );
    assert_eq!(
        r.client("PLAIN").unwrap_err().code(),
        ErrorCode::UnknownMechanism
    );
    let mut r = MechanismRegistry::new();
    assert_eq!(
        r.register_server("lower", || Ok(Box::new(PlainServer::new())))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        r.register_server("", || Ok(Box::new(PlainServer::new())))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        r.register_server("ABCDEFGHIJKLMNOPQRSTU", || Ok(Box::new(PlainServer::new())))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    // A factory that builds the wrong mechanism is caught.
    r.register_server("X-PLAIN", || Ok(Box::new(PlainServer::new())))
        .unwrap();
    assert_eq!(
        r.server("X-PLAIN").unwrap_err().code(),
        ErrorCode::InvalidConfig
    );
    assert!(r.unregister("X-PLAIN"));
    assert!(!r.unregister("X-PLAIN"));
}

#[test]
fn client_misuse_is_reported_not_panicked() {
    let clients = clients("alice", "alice-secret");
    let mut c = clients.client("SCRAM-SHA-256").unwrap();
    assert_eq!(
        c.step(b"r=x", NOW).unwrap_err().code(),
        ErrorCode::WrongState
    );
    assert_eq!(c.state(), ExchangeState::NotStarted);
    c.start(NOW).unwrap();
    assert_eq!(c.start(NOW).unwrap_err().code(), ErrorCode::WrongState);
    assert_eq!(
        PasswordCredential::new("", "x").unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        PasswordCredential::new("a\0b", "x").unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    let opts = ScramClientOptions {
        max_iterations: 100,
        ..Default::default()
    };
    let cred = Arc::new(PasswordCredential::new("a", "b").unwrap());
    assert_eq!(
        ScramClient::new(ScramMechanism::Sha256, cred.clone(), opts)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidConfig
    );
    let opts = ScramClientOptions {
        fixed_nonce: Some("a,b".into()),
        ..Default::default()
    };
    assert_eq!(
        ScramClient::new(ScramMechanism::Sha256, cred, opts)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
}

#[test]
fn redaction_never_shows_passwords_or_proofs() {
    let servers = servers();
    let clients = clients("alice", "alice-secret");
    for mech in ["PLAIN", "SCRAM-SHA-256"] {
        let (_, t) = exchange(
            &mut clients.client(mech).unwrap(),
            &mut servers.server(mech).unwrap(),
        )
        .unwrap();
        for (i, m) in t.iter().enumerate() {
            let r = ksasl::mech::redact(mech, m, i % 2 == 0);
            assert!(!r.contains("alice-secret"), "{r}");
            if mech != "PLAIN" && i >= 1 {
                assert!(!r.contains("p=") || r.contains("p=<redacted>"), "{r}");
                assert!(!r.contains("v=") || r.contains("v=<redacted>"), "{r}");
            }
        }
        if mech == "PLAIN" {
            assert_eq!(
                ksasl::mech::redact(mech, &t[0], true),
                "\\0alice\\0<redacted>"
            );
        }
    }
}

#[test]
fn a_scram_string_answers_plain_and_scram_requests() {
    let sha256 =
        ScramCredential::derive(ScramMechanism::Sha256, b"alice-secret", b"salt-256", 4096)
            .unwrap()
            .to_kafka_string();
    let sha512 =
        ScramCredential::derive(ScramMechanism::Sha512, b"alice-secret", b"salt-512", 4096)
            .unwrap()
            .to_kafka_string();
    let req = |mechanism: &str| CredentialRequest {
        mechanism: mechanism.into(),
        username: "alice".into(),
        token_authenticated: false,
    };
    // PLAIN can check a password against either variant.
    assert_eq!(
        req("PLAIN").scram_credential(&sha256).unwrap().mechanism(),
        ScramMechanism::Sha256
    );
    assert_eq!(
        req("PLAIN").scram_credential(&sha512).unwrap().mechanism(),
        ScramMechanism::Sha512
    );
    // A SCRAM request takes only its own variant.
    assert_eq!(
        req("SCRAM-SHA-256")
            .scram_credential(&sha256)
            .unwrap()
            .mechanism(),
        ScramMechanism::Sha256
    );
    assert_eq!(
        req("SCRAM-SHA-256")
            .scram_credential(&sha512)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidCredentialFormat
    );
    assert_eq!(
        req("PLAIN").scram_credential("salt=x").unwrap_err().code(),
        ErrorCode::InvalidCredentialFormat
    );
}
