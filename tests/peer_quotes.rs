//! Issue 17, defect 4: an error quotes at most 64 characters of anything a peer sent, in its
//! message, its details and the text the client is told, however long the peer's input.

mod wire;

use std::sync::Arc;

use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::codec::encode_response;
use ksasl::kafka::messages::*;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::*;
use wire::*;

const T0: i64 = 1_800_000_000_000;
const LONG: usize = 30_000; // a Kafka string holds at most 32,767 bytes

/// Every text of `e` is short: no 32 KiB input survives in it.
fn check(what: &str, e: &Error) {
    let texts = std::iter::once(e.message().to_string())
        .chain(e.details().iter().map(|(_, v)| v.clone()))
        .chain([e.client_message("SCRAM-SHA-256", false), e.to_string()]);
    for t in texts {
        assert!(
            t.len() < 600,
            "{what}: {} bytes: {}...",
            t.len(),
            &t[..200.min(t.len())]
        );
    }
}

fn long(c: char) -> String {
    std::iter::repeat(c).take(LONG).collect()
}

fn store() -> Arc<CredentialStore> {
    let s = Arc::new(CredentialStore::new());
    s.add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    s
}

fn registry() -> MechanismRegistry {
    let mut r = MechanismRegistry::password_servers(Some(store()));
    let v = UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap();
    r.register_oauthbearer_server(Arc::new(v));
    r
}

fn server_fails(what: &str, mech: &str, messages: &[Vec<u8>]) {
    let r = registry();
    let mut s = r.server(mech).unwrap();
    for m in messages {
        match s.step(m, T0) {
            Ok(ServerStep::NeedCredential(_)) => panic!("{what}: a credential request"),
            Ok(_) => continue,
            Err(e) => return check(what, &e),
        }
    }
    panic!("{what}: no failure");
}

#[test]
fn mechanism_messages_quote_little_of_the_peer() {
    let a = long('a');
    // What the client sends; an OAUTHBEARER client then acknowledges the error challenge.
    let cases = [
        ("PLAIN unknown user", "PLAIN", format!("\0{a}\0pw")),
        ("PLAIN authzid", "PLAIN", format!("{a}\0alice\0pw")),
        (
            "SCRAM unknown user",
            "SCRAM-SHA-256",
            format!("n,,n={a},r=abc"),
        ),
        ("SCRAM bad attribute", "SCRAM-SHA-256", format!("n,,{a}")),
        ("SCRAM bad gs2", "SCRAM-SHA-256", format!("{a},,n=x,r=y")),
        (
            "SCRAM authzid",
            "SCRAM-SHA-256",
            format!("n,a={a},n=alice,r=abc"),
        ),
        (
            "SCRAM nonce",
            "SCRAM-SHA-256",
            format!("n,,n=alice,r={a}\u{1}"),
        ),
        (
            "SCRAM extension",
            "SCRAM-SHA-256",
            format!("n,,n=alice,r=abc,{a}"),
        ),
        (
            "SCRAM non-ASCII user",
            "SCRAM-SHA-256",
            format!("n,,n={}é,r=abc", a),
        ),
        (
            "OAUTHBEARER gs2",
            "OAUTHBEARER",
            format!("{a}\x01auth=Bearer x\x01\x01"),
        ),
        (
            "OAUTHBEARER auth",
            "OAUTHBEARER",
            format!("n,,\x01auth={a}\x01\x01"),
        ),
        (
            "OAUTHBEARER extension",
            "OAUTHBEARER",
            format!("n,,\x01{a}=1\x01auth=Bearer x\x01\x01"),
        ),
        (
            "OAUTHBEARER token",
            "OAUTHBEARER",
            format!("n,,\x01auth=Bearer {a}\x01\x01"),
        ),
        (
            "OAUTHBEARER token parts",
            "OAUTHBEARER",
            format!("n,,\x01auth=Bearer e30.{a}.\x01\x01"),
        ),
    ];
    for (what, mech, first) in cases {
        let ack = (mech == "OAUTHBEARER").then(|| b"\x01".to_vec());
        let messages: Vec<Vec<u8>> = std::iter::once(first.into_bytes()).chain(ack).collect();
        server_fails(what, mech, &messages);
    }
}

#[test]
fn scram_client_quotes_little_of_the_server() {
    let a = long('a');
    let cred = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    for (what, first) in [
        ("e=", format!("e={a}")),
        ("bad nonce", format!("r={a},s=QUJD,i=4096")),
        ("bad salt", format!("r=x,s={a}!,i=4096")),
        ("bad iterations", format!("r=x,s=QUJD,i={a}x")),
        ("attribute", a.clone()),
    ] {
        let mut c = MechanismRegistry::password_clients(cred.clone())
            .client("SCRAM-SHA-256")
            .unwrap();
        c.start(T0).unwrap();
        let e = c.step(first.as_bytes(), T0).unwrap_err();
        check(what, &e);
    }
    let mut c = MechanismRegistry::password_clients(cred.clone())
        .client("SCRAM-SHA-256")
        .unwrap();
    let e = c.server_failed(Some(&a));
    check("server_failed", &e);
}

#[test]
fn drivers_quote_little_of_the_peer() {
    let a = long('A');
    // A handshake naming a 32 KiB mechanism.
    let cfg = ServerConfig::builder(registry()).build().unwrap();
    let mut s = ServerConnection::new(cfg.clone());
    let f = sasl_handshake_request(1, 1, None, &a);
    match s.handle_frame(&f[4..], T0) {
        ServerAction::FailAt { error, .. } | ServerAction::CloseNow(error) => {
            check("handshake", &error)
        }
        other => panic!("{other:?}"),
    }
    // A client told by the broker: a 32 KiB error message, or 32 KiB mechanism names.
    let cred = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    let ccfg = ClientConfig::builder(MechanismRegistry::password_clients(cred), "PLAIN")
        .set_known_versions(1, Some(2))
        .build()
        .unwrap();
    let mut c = ClientConnection::new(ccfg.clone());
    c.start(T0).unwrap();
    c.poll_transmit();
    let hs = SaslHandshakeResponse {
        error_code: 33,
        mechanisms: vec![a.clone(), a.clone()],
    };
    let r = encode_response(&hs, 1, i32::MAX - 7).unwrap();
    match c.handle_frame(&r[4..], T0) {
        ClientEvent::Failed(e) => check("handshake response", &e),
        other => panic!("{other:?}"),
    }
    // A 32 KiB error message in a SaslAuthenticate response.
    let mut c = ClientConnection::new(ccfg);
    c.start(T0).unwrap();
    c.poll_transmit();
    let hs = SaslHandshakeResponse {
        error_code: 0,
        mechanisms: vec!["PLAIN".into()],
    };
    let r = encode_response(&hs, 1, i32::MAX - 7).unwrap();
    assert!(matches!(c.handle_frame(&r[4..], T0), ClientEvent::Continue));
    let sent = c.poll_transmit().unwrap();
    let corr = i32::from_be_bytes(sent[8..12].try_into().unwrap());
    let ar = SaslAuthenticateResponse {
        error_code: 58,
        error_message: Some(a.clone()),
        auth_bytes: vec![],
        session_lifetime_ms: 0,
    };
    let r = encode_response(&ar, 2, corr).unwrap();
    match c.handle_frame(&r[4..], T0) {
        ClientEvent::Failed(e) => check("authenticate response", &e),
        other => panic!("{other:?}"),
    }
}

#[test]
fn exchange_api_quotes_little_of_the_peer() {
    // A host that takes the mechanism name from its own handshake parsing.
    let e = registry().server(&long('M')).err().unwrap();
    check("unknown mechanism", &e);
    assert_eq!(e.code(), ErrorCode::UnknownMechanism);
    let mut x = SaslExtensions::default();
    let name = format!("{}!", long('n'));
    check("extension name", &x.insert(&name, "v").unwrap_err());
    check(
        "extension value",
        &x.insert(&long('n'), "\u{1}").unwrap_err(),
    );
}
