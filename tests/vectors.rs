//! Byte-for-byte SCRAM vectors (RFC 7677 and the behaviour reference §4.7), shared with the
//! other languages' tests through `tests/vectors/scram.json`.

mod common;

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ksasl::mech::ServerExchange;
use ksasl::*;
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/scram.json"
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["vectors"].as_array().unwrap().clone()
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("missing {k}"))
}

#[test]
fn client_reproduces_every_vector() {
    for v in vectors() {
        let mech = ScramMechanism::from_name(s(&v, "mechanism")).unwrap();
        let cred = if v["token_auth"].as_bool().unwrap() {
            PasswordCredential::delegation_token(s(&v, "username"), s(&v, "password")).unwrap()
        } else {
            PasswordCredential::new(s(&v, "username"), s(&v, "password")).unwrap()
        };
        let opts = ScramClientOptions {
            fixed_nonce: Some(s(&v, "client_nonce").into()),
            ..Default::default()
        };
        let mut c = ClientExchange::new(Box::new(
            ScramClient::new(mech, Arc::new(cred), opts).unwrap(),
        ));
        assert_eq!(
            c.start(0).unwrap(),
            ClientStep::Send(s(&v, "client_first").as_bytes().to_vec()),
            "{}",
            s(&v, "name")
        );
        assert_eq!(
            c.step(s(&v, "server_first").as_bytes(), 0).unwrap(),
            ClientStep::Send(s(&v, "client_final").as_bytes().to_vec()),
            "{}",
            s(&v, "name")
        );
        assert_eq!(
            c.step(s(&v, "server_final").as_bytes(), 0).unwrap(),
            ClientStep::Done(None)
        );
        assert!(c.is_complete());
    }
}

#[test]
fn server_reproduces_every_vector() {
    for v in vectors() {
        let mech = ScramMechanism::from_name(s(&v, "mechanism")).unwrap();
        let salt = STANDARD.decode(s(&v, "salt_b64")).unwrap();
        let iterations = v["iterations"].as_u64().unwrap() as u32;
        let cred =
            ScramCredential::derive(mech, s(&v, "password").as_bytes(), &salt, iterations).unwrap();
        // The derived keys are the published ones.
        let kafka = cred.to_kafka_string();
        assert!(
            kafka.contains(&format!("stored_key={}", s(&v, "stored_key_b64"))),
            "{}",
            s(&v, "name")
        );
        assert!(
            kafka.contains(&format!("server_key={}", s(&v, "server_key_b64"))),
            "{}",
            s(&v, "name")
        );
        if let Some(expected) = v["kafka_credential"].as_str() {
            assert_eq!(kafka, expected);
            assert_eq!(
                ScramCredential::from_kafka_string(mech, expected)
                    .unwrap()
                    .to_kafka_string(),
                expected
            );
        }

        let store = Arc::new(CredentialStore::new());
        let token = v["token_auth"].as_bool().unwrap();
        if token {
            let sc = ServerCredential::scram(cred)
                .with_token_owner("owner")
                .with_expiry_ms(common::NOW + 60_000);
            store.set_token(s(&v, "username"), mech, sc).unwrap();
        } else {
            store.set_scram(s(&v, "username"), cred).unwrap();
        }
        let opts = ScramServerOptions {
            fixed_nonce: Some(s(&v, "server_nonce").into()),
            ..Default::default()
        };
        let mut srv = ServerExchange::new(Box::new(ScramServer::new(mech, opts)));
        srv.set_credential_lookup(Some(store));
        assert_eq!(
            srv.step(s(&v, "client_first").as_bytes(), common::NOW)
                .unwrap(),
            ServerStep::Challenge(s(&v, "server_first").as_bytes().to_vec())
        );
        match srv
            .step(s(&v, "client_final").as_bytes(), common::NOW)
            .unwrap()
        {
            ServerStep::Done { message, outcome } => {
                assert_eq!(message.unwrap(), s(&v, "server_final").as_bytes());
                assert_eq!(outcome.mechanism, s(&v, "mechanism"));
                if token {
                    assert_eq!(outcome.principal.to_string(), "User:owner");
                    assert!(outcome.principal.token_authenticated);
                    assert_eq!(outcome.credential_expiry_ms, Some(common::NOW + 60_000));
                    assert_eq!(
                        outcome.extensions.get("tokenauth").map(String::as_str),
                        Some("true")
                    );
                } else {
                    assert_eq!(outcome.principal.to_string(), "User:user");
                    assert!(!outcome.principal.token_authenticated);
                    assert_eq!(outcome.credential_expiry_ms, None);
                    assert!(outcome.extensions.is_empty());
                }
            }
            other => panic!("{other:?}"),
        }
    }
}
