//! Issue 17: enumeration resistance. With the option on, an unknown user's SCRAM or PLAIN
//! login and a known user's login with a wrong password are indistinguishable to the client:
//! the same messages (shape, attributes, iteration count), at the same step, with the same
//! error code and text. Off (the default), an unknown SCRAM user fails at the first message,
//! as in Kafka. The timing comparison is a benchmark: `cargo bench --bench enumeration`.

mod wire;

use std::sync::Arc;

use base64::Engine;
use ksasl::credential::scram::ScramMechanism;
use ksasl::kafka::codec::decode_response_body;
use ksasl::kafka::messages::SaslAuthenticateResponse;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::*;
use wire::*;

const T0: i64 = 1_800_000_000_000;
const SECRET: &[u8] = b"an unknown-user secret shared by the cluster";

fn config(mask: bool) -> Arc<ServerConfig> {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    let mut b = ServerConfig::builder(MechanismRegistry::password_servers(Some(store)));
    if mask {
        b.set_unknown_user_mask(SECRET, 4096);
    }
    b.build().unwrap()
}

/// What the client sees of one login: each SaslAuthenticate response (error code, message,
/// auth bytes) and whether the connection then closed; and the host's error.
struct Transcript {
    responses: Vec<(i16, Option<String>, Vec<u8>)>,
    host_error: Option<Error>,
}

fn body(frames: &[u8]) -> SaslAuthenticateResponse {
    let (_, r) = parse_response_header(&frames[4..], false).unwrap();
    decode_response_body::<SaslAuthenticateResponse>(1, r).unwrap()
}

fn send(c: &mut ServerConnection, frame: &[u8]) -> (ServerAction, Vec<u8>) {
    let action = c.handle_frame(&frame[4..], T0);
    (action, c.poll_transmit().unwrap_or_default())
}

fn scram_login(
    cfg: &Arc<ServerConfig>,
    m: ScramMechanism,
    user: &str,
    password: &str,
) -> Transcript {
    let mut c = ServerConnection::new(cfg.clone());
    send(&mut c, &sasl_handshake_request(1, 1, None, m.name()));
    let bare = format!("n={user},r=fyko+d2lbbFgONRv9qkxdawL");
    let (action, out) = send(
        &mut c,
        &sasl_authenticate_request(1, 2, None, format!("n,,{bare}").as_bytes()),
    );
    let first = body(&out);
    let mut t = Transcript {
        responses: vec![(
            first.error_code,
            first.error_message.clone(),
            first.auth_bytes.clone(),
        )],
        host_error: action.error().cloned(),
    };
    if first.error_code != 0 {
        return t;
    }
    let server_first = String::from_utf8(first.auth_bytes).unwrap();
    let attr = |k: &str| {
        server_first
            .split(',')
            .find_map(|a| a.strip_prefix(k))
            .unwrap()
            .to_string()
    };
    let salt = base64::engine::general_purpose::STANDARD
        .decode(attr("s="))
        .unwrap();
    let iterations: u32 = attr("i=").parse().unwrap();
    let salted = m.salted_password(password.as_bytes(), &salt, iterations);
    let hmac = |key: &[u8], data: &[u8]| -> Vec<u8> {
        use hmac::Mac;
        match m {
            ScramMechanism::Sha256 => {
                let mut h = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
                h.update(data);
                h.finalize().into_bytes().to_vec()
            }
            ScramMechanism::Sha512 => {
                let mut h = hmac::Hmac::<sha2::Sha512>::new_from_slice(key).unwrap();
                h.update(data);
                h.finalize().into_bytes().to_vec()
            }
        }
    };
    let client_key = hmac(salted.expose(), b"Client Key");
    let stored: Vec<u8> = match m {
        ScramMechanism::Sha256 => <sha2::Sha256 as sha2::Digest>::digest(&client_key).to_vec(),
        ScramMechanism::Sha512 => <sha2::Sha512 as sha2::Digest>::digest(&client_key).to_vec(),
    };
    let without_proof = format!("c=biws,r={}", attr("r="));
    let auth_message = format!("{bare},{server_first},{without_proof}");
    let signature = hmac(&stored, auth_message.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(a, b)| a ^ b)
        .collect();
    let fin = format!(
        "{without_proof},p={}",
        base64::engine::general_purpose::STANDARD.encode(proof)
    );
    let (action, out) = send(
        &mut c,
        &sasl_authenticate_request(1, 3, None, fin.as_bytes()),
    );
    let last = body(&out);
    t.responses
        .push((last.error_code, last.error_message, last.auth_bytes));
    t.host_error = action.error().cloned();
    t
}

/// A server-first message with its random parts replaced by their shape: the nonce's length
/// class and the salt's alphabet and length class (Kafka-style salts are 25 or 26 base-36
/// characters, rarely fewer).
fn shape(server_first: &[u8]) -> String {
    let text = std::str::from_utf8(server_first).unwrap();
    text.split(',')
        .map(|a| match a.split_at(2) {
            ("r=", v) => {
                assert!(v.starts_with("fyko+d2lbbFgONRv9qkxdawL"));
                let n = v.len() - 24;
                assert!((20..=26).contains(&n), "server nonce of {n} characters");
                "r=client+server".to_string()
            }
            ("s=", v) => {
                let salt = base64::engine::general_purpose::STANDARD.decode(v).unwrap();
                assert!(
                    (20..=26).contains(&salt.len()),
                    "salt of {} bytes",
                    salt.len()
                );
                assert!(salt
                    .iter()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
                "s=base36".to_string()
            }
            _ => a.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn unknown_users_and_wrong_passwords_look_the_same_with_the_option() {
    let cfg = config(true);
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let wrong = scram_login(&cfg, m, "alice", "not-her-password");
        let unknown = scram_login(&cfg, m, "mallory", "whatever");
        assert_eq!(wrong.responses.len(), 2);
        assert_eq!(
            unknown.responses.len(),
            2,
            "the unknown user gets a challenge"
        );
        let (w, u) = (&wrong.responses, &unknown.responses);
        assert_eq!((w[0].0, &w[0].1), (0, &Some(String::new())));
        assert_eq!((u[0].0, &u[0].1), (0, &Some(String::new())));
        assert_eq!(shape(&w[0].2), shape(&u[0].2));
        assert!(shape(&u[0].2).ends_with(",i=4096"));
        // The final answer: byte for byte the same fields.
        assert_eq!(w[1], u[1]);
        assert_eq!(w[1].0, 58);
        assert_eq!(
            w[1].1.as_deref(),
            Some(&*format!(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
                m.name()
            ))
        );
        // The host sees the same code, and the difference in a detail.
        let (we, ue) = (
            wrong.host_error.clone().unwrap(),
            unknown.host_error.clone().unwrap(),
        );
        assert_eq!(we.code(), ErrorCode::InvalidCredentials);
        assert_eq!(ue.code(), ErrorCode::InvalidCredentials);
        assert_eq!(we.client_text(), ue.client_text());
        assert_eq!(ue.detail("unknown_user"), Some("true"));
        assert_eq!(we.detail("unknown_user"), None);
        // The stand-in salt is the same on every login (a changing one would give it away),
        // and on another server with the same secret.
        let again = scram_login(&config(true), m, "mallory", "x");
        let salt = |t: &Transcript| {
            String::from_utf8(t.responses[0].2.clone())
                .unwrap()
                .split(',')
                .find(|a| a.starts_with("s="))
                .unwrap()
                .to_string()
        };
        assert_eq!(salt(&unknown), salt(&again));
    }
    // A right password still works with the option on.
    let ok = scram_login(&cfg, ScramMechanism::Sha256, "alice", "alice-secret");
    assert_eq!(ok.responses[1].0, 0);
    assert!(ok.host_error.is_none());
}

#[test]
fn plain_unknown_users_fail_like_wrong_passwords_with_the_option() {
    for mask in [false, true] {
        let cfg = config(mask);
        let login = |user: &str| {
            let mut c = ServerConnection::new(cfg.clone());
            send(&mut c, &sasl_handshake_request(1, 1, None, "PLAIN"));
            let msg = format!("\0{user}\0wrong");
            let (action, out) = send(
                &mut c,
                &sasl_authenticate_request(1, 2, None, msg.as_bytes()),
            );
            let b = body(&out);
            (
                b.error_code,
                b.error_message,
                action.error().unwrap().clone(),
            )
        };
        let (wc, wt, we) = login("alice");
        let (uc, ut, ue) = login("mallory");
        assert_eq!((wc, &wt), (uc, &ut));
        assert_eq!(
            wt.as_deref(),
            Some("Authentication failed: Invalid username or password")
        );
        if mask {
            assert_eq!(we.code(), ue.code());
            assert_eq!(ue.detail("unknown_user"), Some("true"));
        } else {
            assert_eq!(ue.code(), ErrorCode::UnknownUser);
        }
    }
}

#[test]
fn without_the_option_an_unknown_scram_user_fails_at_the_first_message_as_in_kafka() {
    let t = scram_login(&config(false), ScramMechanism::Sha256, "mallory", "x");
    assert_eq!(t.responses.len(), 1);
    assert_eq!(t.responses[0].0, 58);
    assert_eq!(t.host_error.unwrap().code(), ErrorCode::UnknownUser);
}

#[test]
fn the_option_refuses_weak_settings() {
    let store = Arc::new(CredentialStore::new());
    let reg = || MechanismRegistry::password_servers(Some(store.clone()));
    for (secret, iterations) in [
        (&b"short"[..], 4096),
        (SECRET, 4095),
        (SECRET, 16385),
        (SECRET, -1),
    ] {
        let e = ServerConfig::builder(reg())
            .set_unknown_user_mask(secret, iterations)
            .build()
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig, "{iterations}");
        assert!(!e.message().contains("unknown-user secret shared"));
    }
}

/// A mechanism that accepts whatever credential it is given: the stand-in must still fail.
struct AcceptsAnything;

impl ServerMechanism for AcceptsAnything {
    fn name(&self) -> &str {
        "PLAIN"
    }
    fn step(&mut self, _response: &[u8], _now_ms: i64) -> Result<MechServerStep> {
        Ok(MechServerStep::NeedCredential(CredentialRequest {
            mechanism: "PLAIN".into(),
            username: "mallory".into(),
            token_authenticated: false,
        }))
    }
    fn provide_credential(
        &mut self,
        answer: CredentialAnswer,
        _now_ms: i64,
    ) -> Result<MechServerStep> {
        assert!(
            matches!(answer, CredentialAnswer::Found(_)),
            "a stand-in, not Unknown"
        );
        Ok(MechServerStep::Done(None, Authenticated::new("mallory")))
    }
}

#[test]
fn a_stand_in_credential_never_authenticates() {
    let store = Arc::new(CredentialStore::new());
    let mut reg = MechanismRegistry::password_servers(Some(store));
    reg.register_server("PLAIN", || {
        Ok(Box::new(AcceptsAnything) as Box<dyn ServerMechanism>)
    })
    .unwrap();
    let cfg = ServerConfig::builder(reg)
        .set_unknown_user_mask(SECRET, 4096)
        .build()
        .unwrap();
    let mut c = ServerConnection::new(cfg);
    send(&mut c, &sasl_handshake_request(1, 1, None, "PLAIN"));
    let (action, out) = send(
        &mut c,
        &sasl_authenticate_request(1, 2, None, b"\0mallory\0x"),
    );
    let e = action.error().expect("refused");
    assert_eq!(e.code(), ErrorCode::InvalidCredentials);
    assert_eq!(e.detail("unknown_user"), Some("true"));
    assert_eq!(body(&out).error_code, 58);
    assert!(!c.is_ready());
}
