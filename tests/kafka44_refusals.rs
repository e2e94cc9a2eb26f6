//! Issue 17, defect 5: a request other than SaslAuthenticate in the middle of an exchange is
//! answered as Kafka 4.4 answers it, byte for byte. The expected bytes are a real Kafka 4.4
//! broker's (`tests/vectors/kafka44_refusals.json`, recorded by `tests/broker/refusal_cases.py`
//! and checked against the live broker by `tests/broker/test_wire_compare.py`).

mod common;

use std::sync::Arc;

use common::{to_hex, unhex};
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::*;

const T0: i64 = 1_800_000_000_000;

fn config() -> Arc<ServerConfig> {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    ServerConfig::builder(MechanismRegistry::password_servers(Some(store)))
        .set_max_reauth_ms(3000)
        .build()
        .unwrap()
}

/// What a host on ksasl sends for each request: the answer frame (hex, no length prefix) or
/// "CLOSED"; and the request it was left to answer, if any.
fn replay(requests: &[Vec<u8>]) -> (Vec<String>, Option<ksasl::kafka::server::RefusedRequest>) {
    let mut c = ServerConnection::new(config());
    let mut out = Vec::new();
    for (i, frame) in requests.iter().enumerate() {
        let now = T0 + i as i64;
        let size = c.check_frame_size(frame.len() as i32, now);
        let action = match size {
            Ok(_) => c.handle_frame(frame, now),
            Err(_) => {
                out.push("CLOSED".to_string());
                break;
            }
        };
        let frames = c.poll_transmit().unwrap_or_default();
        let closing = matches!(
            action,
            ServerAction::FailAt { .. } | ServerAction::CloseNow(_)
        );
        if matches!(action, ServerAction::CloseNow(_)) {
            assert!(frames.is_empty(), "CloseNow never comes with frames");
        }
        if frames.is_empty() {
            out.push("CLOSED".to_string());
            break;
        }
        assert!(frames.len() >= 4);
        out.push(to_hex(&frames[4..]));
        if closing {
            // Written at the deadline, then the connection closes.
            if i + 1 < requests.len() {
                out.push("CLOSED".to_string());
            }
            break;
        }
    }
    (out, c.refused_request().cloned())
}

#[test]
fn every_refusal_matches_kafka_4_4() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/kafka44_refusals.json"
    ))
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = doc.as_object().unwrap();
    assert!(cases.len() >= 60, "the recorded cases are all there");
    let mut host_built = Vec::new();
    for (name, case) in cases {
        let requests: Vec<Vec<u8>> = case["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| unhex(r.as_str().unwrap()))
            .collect();
        let kafka: Vec<String> = case["kafka_4_4"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        let (ours, refused) = replay(&requests);
        assert_eq!(ours.len(), kafka.len(), "{name}: {ours:?} vs {kafka:?}");
        // The first answer (ApiVersions or the handshake) lists this server's own APIs and
        // mechanisms: only its shape is compared.
        assert_eq!(
            ours[0] == "CLOSED",
            kafka[0] == "CLOSED",
            "{name}: first answer"
        );
        if let Some(r) = refused {
            // An API whose schema ksasl does not have: the host builds the answer.
            assert_eq!(r.error_code, 34, "{name}");
            assert_eq!(r.correlation_id, 2, "{name}");
            assert!(
                r.error_message
                    .starts_with("Unexpected Kafka request of type ")
                    && r.error_message.ends_with(" during SASL authentication."),
                "{name}: {}",
                r.error_message
            );
            assert_eq!(ours[1], "CLOSED", "{name}: ksasl itself writes nothing");
            host_built.push(name.clone());
            continue;
        }
        assert_eq!(ours[1..], kafka[1..], "{name}");
    }
    host_built.sort();
    assert_eq!(
        host_built,
        [
            "produce_v3_no_topics",
            "produce_v3_one_partition",
            "unknown_api_key"
        ],
        "only APIs without a schema in ksasl are left to the host"
    );
}

#[test]
fn a_refused_request_is_only_reported_for_an_api_ksasl_cannot_answer() {
    let hs = unhex("00110001000000010004746573740005504c41494e");
    // Metadata v4: ksasl answers; nothing is left to the host.
    let md = unhex("0003000400000002000474657374000000010002743101");
    let (out, refused) = replay(&[hs.clone(), md]);
    assert!(refused.is_none());
    assert!(out[1].starts_with("00000002"));
    // Produce v9 (flexible, unknown to ksasl): the host gets what it needs.
    let produce = unhex("0000000900000007000474657374000000");
    let (out, refused) = replay(&[hs, produce]);
    assert_eq!(out[1], "CLOSED");
    let r = refused.expect("left to the host");
    assert_eq!((r.api_key, r.api_version, r.correlation_id), (0, 9, 7));
    assert_eq!(
        r.error_message,
        "Unexpected Kafka request of type PRODUCE during SASL authentication."
    );
}
