//! Property tests: random input to every parser and step function never panics, and the
//! authenticator always ends in a defined state.

mod wire;

use std::sync::{Arc, OnceLock};

use ksasl::*;
use proptest::prelude::*;

const NOW: i64 = 1_700_000_000_000;

fn store() -> Arc<CredentialStore> {
    static STORE: OnceLock<Arc<CredentialStore>> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let s = Arc::new(CredentialStore::new());
            s.add_user("alice", "pw", 4096, &OsRandom).unwrap();
            s
        })
        .clone()
}

fn servers() -> MechanismRegistry {
    MechanismRegistry::password_servers(Some(store()))
}

/// Bytes that look like SCRAM messages: attributes from a small alphabet, so the parsers get
/// past their first checks more often than with uniform noise.
fn scramish() -> impl Strategy<Value = Vec<u8>> {
    let attr = prop_oneof![
        Just("n".to_string()),
        Just("".to_string()),
        Just("y".to_string()),
        "[a-z]=[ -~]{0,12}",
        "r=cnonce[!-~]{0,8}",
        "s=[A-Za-z0-9+/]{0,8}={0,2}",
        "i=[0-9]{0,12}",
        "c=biws",
        "p=[A-Za-z0-9+/=]{0,48}",
        "v=[A-Za-z0-9+/=]{0,48}",
        "tokenauth=(true|false)",
    ];
    proptest::collection::vec(attr, 0..8).prop_map(|a| a.join(",").into_bytes())
}

fn any_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..256), scramish()]
}

fn client(mech: &str) -> ClientExchange {
    let opts = ScramClientOptions {
        fixed_nonce: Some("cnonce".into()),
        ..Default::default()
    };
    let cred = Arc::new(PasswordCredential::new("alice", "pw").unwrap());
    match ScramMechanism::from_name(mech) {
        Some(m) => ClientExchange::new(Box::new(ScramClient::new(m, cred, opts).unwrap())),
        None => ClientExchange::new(Box::new(PlainClient::new(cred))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn servers_never_panic(mech in prop_oneof![Just("PLAIN"), Just("SCRAM-SHA-256"), Just("SCRAM-SHA-512")],
                           msgs in proptest::collection::vec(any_bytes(), 1..4)) {
        let mut s = servers().server(mech).unwrap();
        for m in &msgs {
            let before = s.state();
            match s.step(m, NOW) {
                Ok(ServerStep::Challenge(_)) => prop_assert_eq!(s.state(), ExchangeState::WaitingForPeer),
                Ok(ServerStep::Done { .. }) => prop_assert_eq!(s.state(), ExchangeState::Done),
                Ok(ServerStep::NeedCredential(_)) => prop_assert!(false, "the store answers at once"),
                Ok(ServerStep::Pending(_)) => prop_assert!(false, "built-in mechanisms answer at once"),
                Err(e) => match e.code() {
                    ErrorCode::StepAfterDone | ErrorCode::StepAfterFailure | ErrorCode::WrongState => prop_assert_eq!(s.state(), before),
                    _ => prop_assert_eq!(s.state(), ExchangeState::Failed),
                },
            }
        }
    }

    #[test]
    fn clients_never_panic(mech in prop_oneof![Just("PLAIN"), Just("SCRAM-SHA-256"), Just("SCRAM-SHA-512")],
                           msgs in proptest::collection::vec(any_bytes(), 1..4)) {
        let mut c = client(mech);
        c.start(NOW).unwrap();
        for m in &msgs {
            let before = c.state();
            match c.step(m, NOW) {
                Ok(_) => prop_assert!(matches!(c.state(), ExchangeState::WaitingForPeer | ExchangeState::Done)),
                Err(e) => match e.code() {
                    ErrorCode::StepAfterDone | ErrorCode::StepAfterFailure | ErrorCode::WrongState => prop_assert_eq!(c.state(), before),
                    _ => prop_assert_eq!(c.state(), ExchangeState::Failed),
                },
            }
        }
    }

    #[test]
    fn scram_client_after_valid_server_first_never_panics(tail in any_bytes()) {
        let mut c = client("SCRAM-SHA-256");
        c.start(NOW).unwrap();
        c.step(b"r=cnonceS,s=c2FsdA==,i=4096", NOW).unwrap();
        let _ = c.step(&tail, NOW);
    }

    #[test]
    fn pull_form_never_panics(mech in prop_oneof![Just("PLAIN"), Just("SCRAM-SHA-256")], first in any_bytes(), later in any_bytes()) {
        let mut s = MechanismRegistry::password_servers(None).server(mech).unwrap();
        if let Ok(ServerStep::NeedCredential(_)) = s.step(&first, NOW) {
            let answer = CredentialAnswer::Found(ServerCredential::password("pw"));
            let _ = s.provide_credential(answer, NOW);
            let _ = s.step(&later, NOW);
        } else {
            prop_assert_eq!(s.provide_credential(CredentialAnswer::Unknown, NOW).is_err(), true);
        }
    }

    #[test]
    fn credential_strings_never_panic(text in "[ -~]{0,200}", real in proptest::bool::ANY) {
        let text = if real {
            format!("salt={text},stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096")
        } else {
            text
        };
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            if let Ok(c) = ScramCredential::from_kafka_string(m, &text) {
                prop_assert_eq!(ScramCredential::from_kafka_string(m, &c.to_kafka_string()).unwrap(), c);
            }
        }
    }

    #[test]
    fn escaping_round_trips(name in "\\PC{0,40}") {
        let escaped = ksasl::mech::scram::escape_username(&name);
        prop_assert!(!escaped.contains(','));
        prop_assert_eq!(ksasl::mech::scram::unescape_username(&escaped), Some(name));
    }

    #[test]
    fn redaction_never_panics(mech in "[A-Z0-9-]{1,20}", bytes in any_bytes(), from_client in proptest::bool::ANY) {
        let _ = ksasl::mech::redact(&mech, &bytes, from_client);
        let _ = ksasl::mech::redact("PLAIN", &bytes, from_client);
        let _ = ksasl::mech::redact("SCRAM-SHA-256", &bytes, from_client);
    }
}

fn jwks() -> Arc<JwksValidator> {
    static V: OnceLock<Arc<JwksValidator>> = OnceLock::new();
    V.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/vectors/jwt.json"
        ))
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let val = JwksValidator::new(JwtValidatorConfig::default()).unwrap();
        val.set_jwks(&v["jwks"].to_string(), 0).unwrap();
        Arc::new(val)
    })
    .clone()
}

/// Strings shaped like JWTs: three dot-separated base64url-ish parts, sometimes real JSON.
fn jwtish() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        "[A-Za-z0-9_+/=-]{0,40}",
        Just("eyJhbGciOiJub25lIn0".to_string()),
        Just("eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0xIn0".to_string()),
        Just("eyJhbGciOiJFUzI1NiJ9".to_string()),
        Just("eyJzdWIiOiJhIiwiZXhwIjo5OTk5OTk5OTk5fQ".to_string()),
        Just("eyJzdWIiOjEsImV4cCI6IngifQ".to_string()),
    ];
    proptest::collection::vec(part, 0..5).prop_map(|p| p.join("."))
}

fn oauthish() -> impl Strategy<Value = Vec<u8>> {
    (
        jwtish(),
        proptest::collection::vec("[a-zA-Z]{0,6}=[ -~]{0,6}", 0..3),
        "(a=[a-z=]{0,4})?",
        proptest::bool::ANY,
    )
        .prop_map(|(token, ext, authz, terminated)| {
            let mut m = format!("n,{authz},\x01auth=Bearer {token}");
            for e in ext {
                m.push('\x01');
                m.push_str(&e);
            }
            if terminated {
                m.push_str("\x01\x01");
            }
            m.into_bytes()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn oauthbearer_server_never_panics(first in prop_oneof![any_bytes(), oauthish()], second in any_bytes()) {
        for validator in [
            Arc::new(UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap()) as Arc<dyn TokenValidator>,
            jwks(),
            Arc::new(CachingValidator::new(jwks(), 4)),
        ] {
            let mut s = ServerExchange::new(Box::new(OAuthBearerServer::new(validator)));
            let r = s.step(&first, NOW);
            if r.is_err() {
                prop_assert_eq!(s.state(), ExchangeState::Failed);
            }
            let _ = s.step(&second, NOW);
            let _ = s.step(&[1], NOW);
        }
    }

    #[test]
    fn validators_never_panic(token in jwtish(), now in any::<i64>()) {
        let _ = UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap().validate(&token, now);
        let _ = jwks().validate(&token, now);
    }

    #[test]
    fn oauthbearer_client_never_panics(challenges in proptest::collection::vec(any_bytes(), 1..4), msg in proptest::option::of("[ -~]{0,40}")) {
        let token = OAuthBearerToken::new("abc.def.", "alice", NOW).unwrap();
        let mut c = ClientExchange::new(Box::new(OAuthBearerClient::new(token, SaslExtensions::new())));
        c.start(NOW).unwrap();
        for ch in &challenges {
            let _ = c.step(ch, NOW);
        }
        let _ = c.server_failed(msg.as_deref());
        prop_assert_eq!(c.state(), ExchangeState::Failed);
    }

    #[test]
    fn jwks_documents_never_panic(doc in "[ -~]{0,200}", kty in "(RSA|EC|OKP|oct|x)", n in "[A-Za-z0-9_-]{0,20}") {
        let v = JwksValidator::new(JwtValidatorConfig::default()).unwrap();
        let _ = v.set_jwks(&doc, 0);
        let _ = v.set_jwks(&format!(r#"{{"keys":[{{"kty":"{kty}","n":"{n}","e":"AQAB","crv":"P-256","x":"{n}","y":"{n}","kid":"k"}}]}}"#), 0);
        let _ = v.next_refresh_ms();
    }
}

mod kafka_frames {
    use super::wire::*;
    use super::*;
    use ksasl::kafka::client::{ClientConfig, ClientConnection};
    use ksasl::kafka::messages::*;
    use ksasl::kafka::server::{ServerConfig, ServerConnection};

    fn server() -> ServerConnection {
        ServerConnection::new(ServerConfig::new(super::servers()).unwrap())
    }

    fn client() -> ClientConnection {
        let reg = MechanismRegistry::password_clients(Arc::new(
            PasswordCredential::new("alice", "pw").unwrap(),
        ));
        ClientConnection::new(ClientConfig::new(reg, "SCRAM-SHA-256").unwrap())
    }

    /// Frames that look like Kafka requests: a real header prefix, then noise.
    fn requestish() -> impl Strategy<Value = Vec<u8>> {
        (
            prop_oneof![Just(17i16), Just(18), Just(36), Just(3), any::<i16>()],
            -1i16..6,
            any::<i32>(),
            proptest::collection::vec(any::<u8>(), 0..64),
        )
            .prop_map(|(k, v, c, rest)| {
                let mut f = Vec::new();
                f.extend_from_slice(&k.to_be_bytes());
                f.extend_from_slice(&v.to_be_bytes());
                f.extend_from_slice(&c.to_be_bytes());
                f.extend_from_slice(&rest);
                f
            })
    }

    fn valid_start() -> Vec<Vec<u8>> {
        vec![
            api_versions_request(3, 1, Some("c"), ("ksasl", "1"))[4..].to_vec(),
            sasl_handshake_request(1, 2, Some("c"), "SCRAM-SHA-256")[4..].to_vec(),
            sasl_authenticate_request(2, 3, None, b"n,,n=alice,r=abc")[4..].to_vec(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn server_driver_never_panics(prefix in 0usize..4, frames in proptest::collection::vec(prop_oneof![requestish(), proptest::collection::vec(any::<u8>(), 0..64)], 1..5)) {
            let mut s = server();
            for f in valid_start().iter().take(prefix) {
                let _ = s.handle_frame(f, NOW);
            }
            for f in &frames {
                let _ = s.handle_frame(f, NOW);
                let _ = s.poll_transmit();
                let _ = s.gate(3, NOW);
            }
            let _ = s.provide_credential(CredentialAnswer::Unknown, NOW);
        }

        #[test]
        fn client_driver_never_panics(frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 1..5), corr_ok in proptest::bool::ANY) {
            let mut c = client();
            c.start(NOW).unwrap();
            let mut expected = i32::MAX - 7;
            for f in &frames {
                let mut f = f.clone();
                if corr_ok && f.len() >= 4 {
                    f[..4].copy_from_slice(&expected.to_be_bytes());
                    expected = expected.wrapping_add(1).max(i32::MAX - 7);
                }
                let _ = c.handle_frame(&f, NOW);
                let _ = c.poll_transmit();
                let _ = c.before_request(NOW);
            }
        }

        #[test]
        fn frame_decoder_never_panics(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..32), 0..8), max in 0usize..64) {
            let mut d = FrameDecoder::new(max);
            for c in &chunks {
                d.push(c);
                while let Ok(Some(f)) = d.next_frame() {
                    prop_assert!(f.len() <= max);
                }
            }
        }
    }
}
