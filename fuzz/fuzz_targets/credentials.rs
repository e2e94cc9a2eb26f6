//! The credential and configuration strings ksasl parses: Kafka's SCRAM credential text
//! (`salt=...,stored_key=...,server_key=...,iterations=...`, also as a host's credential
//! answer), `TYPE:NAME` principals, OAUTHBEARER SASL extensions, mechanism and algorithm
//! names, a JWKS document, delegation-token records (JSON), and the configuration builders
//! with arbitrary values (ksasl has no JAAS text parser: hosts pass the JAAS options of
//! PLAIN, SCRAM and OAUTHBEARER as these typed values). The first byte picks the parser.
#![no_main]

use std::sync::Arc;

use ksasl::kafka::client::ClientConfig;
use ksasl::kafka::server::ServerConfig;
use ksasl::mech::oauthbearer::{is_valid_extension_name, is_valid_extension_value};
use ksasl::mech::validate_mechanism_name;
use ksasl::token::{parse_principal, principal_from_str, TokenInfo};
use ksasl::*;
use ksasl_fuzz::{no_panic, T0};
use libfuzzer_sys::fuzz_target;

fn i64_at(b: &[u8], i: usize) -> i64 {
    let mut a = [0u8; 8];
    for (j, x) in a.iter_mut().enumerate() {
        *x = b.get(i * 8 + j).copied().unwrap_or(0);
    }
    i64::from_be_bytes(a)
}

fn ok_or_no_panic<T>(r: Result<T>) -> Option<T> {
    match r {
        Ok(t) => Some(t),
        Err(e) => {
            no_panic(&e);
            None
        }
    }
}

fn builders(b: &[u8], text: &str) {
    let names: Vec<String> = text.split(',').map(str::to_string).collect();
    let mut s = ServerConfig::builder(MechanismRegistry::password_servers(None));
    if b.first().is_some_and(|x| x & 1 != 0) {
        s.set_enabled_mechanisms(names.clone());
    }
    s.set_max_reauth_ms(i64_at(b, 0))
        .set_max_reauth_ms_for(names[0].as_str(), i64_at(b, 1))
        .set_max_receive_size(i64_at(b, 2))
        .set_max_request_size(i64_at(b, 3))
        .set_failed_authentication_delay_ms(i64_at(b, 4))
        .set_reauth_retry_ms(i64_at(b, 5))
        .set_api_version(
            i64_at(b, 6) % 70_000,
            i64_at(b, 7) % 70_000,
            i64_at(b, 8) % 70_000,
        );
    if b.first().is_some_and(|x| x & 2 != 0) {
        s.set_unknown_user_mask(text.as_bytes(), i64_at(b, 9));
    }
    if let Some(c) = ok_or_no_panic(s.build()) {
        assert!(c.max_receive_size() > 0);
        let _ = c.max_reauth_ms(&names[0]);
    }
    let cred = Arc::new(PasswordCredential::new("alice", "pw").unwrap());
    let mech = names.last().map(String::as_str).unwrap_or("");
    let mut c = ClientConfig::builder(MechanismRegistry::password_clients(cred), mech);
    c.set_api_versions_version(i64_at(b, 0))
        .set_reauth_min_delay_ms(i64_at(b, 1))
        .set_reauth_retry_ms(i64_at(b, 2))
        .set_max_receive_size(i64_at(b, 3))
        .set_software(names[0].as_str(), mech)
        .set_client_id(Some(text));
    if b.first().is_some_and(|x| x & 4 != 0) {
        c.set_known_versions(i64_at(b, 4), (i64_at(b, 5) >= 0).then(|| i64_at(b, 5) % 8));
    }
    ok_or_no_panic(c.build());
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    // Areas 6 and 7 take binary values first: up to 80 bytes, then the text.
    let text = String::from_utf8_lossy(rest);
    let text = text.as_ref();
    match sel % 8 {
        0 => {
            let m = if sel & 8 != 0 {
                ScramMechanism::Sha512
            } else {
                ScramMechanism::Sha256
            };
            if let Some(c) = ok_or_no_panic(ScramCredential::from_kafka_string(m, text)) {
                let again = ScramCredential::from_kafka_string(m, &c.to_kafka_string())
                    .expect("a credential's own text parses");
                assert_eq!(again, c);
                assert!(!c.salt().is_empty() && c.iterations() > 0);
            }
        }
        1 => {
            // A host's answer: kind, value, expiry, owner, separated by NUL.
            let mut parts = text.split('\0');
            let (value, owner) = (parts.next(), parts.next());
            let mechanism =
                ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"][(sel >> 3) as usize % 4];
            let request = CredentialRequest {
                mechanism: mechanism.into(),
                username: "alice".into(),
                token_authenticated: sel & 0x20 != 0,
            };
            let kind = CredentialAnswerKind::try_from_u32(u32::from(sel >> 5) % 6);
            if let Ok(kind) = kind {
                let expiry = (sel & 0x10 != 0).then_some(T0);
                ok_or_no_panic(CredentialAnswer::decode(
                    &request, kind, value, expiry, owner,
                ));
            }
            ok_or_no_panic(request.scram_credential(text));
        }
        2 => {
            let p = ok_or_no_panic(principal_from_str(text));
            match parse_principal(text) {
                Some(q) => {
                    assert_eq!(format!("{}:{}", q.principal_type, q.name), text);
                    assert_eq!(p, Some(q));
                }
                None if text.contains(':') => assert!(p.is_none()),
                None => assert_eq!(p.is_some(), !text.is_empty()),
            }
        }
        3 => {
            let pairs: Vec<(&str, &str)> = text
                .split('\x01')
                .filter_map(|kv| kv.split_once('='))
                .collect();
            let all_valid = pairs
                .iter()
                .all(|(k, v)| is_valid_extension_name(k) && is_valid_extension_value(v));
            match SaslExtensions::from_pairs(pairs.iter().copied()) {
                Ok(e) => {
                    assert!(all_valid);
                    for (k, v) in e.map() {
                        assert!(is_valid_extension_name(k) && is_valid_extension_value(v));
                    }
                }
                Err(e) => no_panic(&e),
            }
        }
        4 => {
            let ok = validate_mechanism_name(text).is_ok();
            assert_eq!(
                ok,
                (1..=20).contains(&text.len())
                    && text.bytes().all(|b| b.is_ascii_uppercase()
                        || b.is_ascii_digit()
                        || b == b'-'
                        || b == b'_'),
                "mechanism name rule"
            );
            let names: Vec<&str> = text.split(',').collect();
            let mut c = JwtValidatorConfig::default();
            if c.set_algorithm_names(&names).is_ok() {
                assert!(!c.algorithms.is_empty());
            }
        }
        5 => {
            let v = JwksValidator::new(JwtValidatorConfig::default()).unwrap();
            if let Some(n) = ok_or_no_panic(v.set_jwks(text, T0)) {
                assert!(n > 0);
                assert!(!v.refresh_due(T0));
            }
        }
        6 => {
            let Ok(records) = serde_json::from_str::<serde_json::Value>(text) else {
                return;
            };
            let items = match records {
                serde_json::Value::Array(a) => a,
                other => vec![other],
            };
            for r in &items {
                if let Some(info) = ok_or_no_panic(TokenInfo::from_record(r)) {
                    let again = TokenInfo::from_record(&info.to_record()).expect("own record");
                    assert_eq!(again, info);
                }
            }
        }
        _ => {
            let split = rest.len().min(80);
            let (values, text) = rest.split_at(split);
            builders(values, &String::from_utf8_lossy(text));
        }
    }
});
