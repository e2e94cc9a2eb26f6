//! The AWS_MSK_IAM verifier and MSK's presigned-token validator fed arbitrary payloads and
//! tokens at a fixed time, with one known key; and the client's parser of the broker's answer.
//! The first byte picks the input kind. Oracle: whatever is accepted must carry the signature
//! an independent SigV4 computation (hmac + sha2, not ksasl's) gives for its own fields.
#![no_main]

use std::sync::{Arc, OnceLock};

use hmac::{Hmac, Mac};
use ksasl::aws::msk_iam::parse_server_response;
use ksasl::aws::AwsCredentials;
use ksasl::mech::aws_msk_iam::{AwsKeyStore, AwsMskIamServer, MskIamServerConfig, MskTokenValidator};
use ksasl::mech::oauthbearer::TokenValidator;
use ksasl::*;
use ksasl_fuzz::no_panic;
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

/// 2026-12-03T12:34:56Z, the time of the seed corpus.
const NOW: i64 = 1_796_301_296_000;
const SECRET: &str = "fuzz-secret";

fn config() -> Arc<MskIamServerConfig> {
    static C: OnceLock<Arc<MskIamServerConfig>> = OnceLock::new();
    C.get_or_init(|| {
        let keys = Arc::new(AwsKeyStore::new());
        keys.add(&AwsCredentials::new("AKIAFUZZ", SECRET).unwrap(), "fuzz").unwrap();
        Arc::new(MskIamServerConfig { keys, region: "us-east-1".into(), hosts: vec![] })
    })
    .clone()
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut m = Hmac::<Sha256>::new_from_slice(key).unwrap();
    m.update(data.as_bytes());
    m.finalize().into_bytes().to_vec()
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn hexs(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The signature SigV4 gives these fields (lowercase names, as the payload has them).
fn oracle_signature(get: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let mut q: Vec<(String, String)> = vec![("Action".into(), get("action")?)];
    for (name, field) in [
        ("X-Amz-Algorithm", "x-amz-algorithm"),
        ("X-Amz-Credential", "x-amz-credential"),
        ("X-Amz-Date", "x-amz-date"),
        ("X-Amz-Expires", "x-amz-expires"),
        ("X-Amz-Security-Token", "x-amz-security-token"),
        ("X-Amz-SignedHeaders", "x-amz-signedheaders"),
    ] {
        if let Some(v) = get(field) {
            q.push((name.into(), v));
        }
    }
    let mut q: Vec<(String, String)> = q.iter().map(|(k, v)| (enc(k), enc(v))).collect();
    q.sort();
    let query: Vec<String> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let canonical = format!(
        "GET\n/\n{}\nhost:{}\n\nhost\n{}",
        query.join("&"),
        get("host")?,
        hexs(&Sha256::digest(b""))
    );
    let date = get("x-amz-date")?;
    let scope = format!("{}/us-east-1/kafka-cluster/aws4_request", date.get(..8)?);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{date}\n{scope}\n{}",
        hexs(&Sha256::digest(canonical.as_bytes()))
    );
    let mut k = hmac(format!("AWS4{SECRET}").as_bytes(), date.get(..8)?);
    for part in ["us-east-1", "kafka-cluster", "aws4_request"] {
        k = hmac(&k, part);
    }
    Some(hexs(&hmac(&k, &to_sign)))
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, input)) = data.split_first() else {
        return;
    };
    match sel % 3 {
        0 => {
            let mut s = ServerExchange::new(Box::new(AwsMskIamServer::new(config())));
            match s.step(input, NOW) {
                Ok(ServerStep::Done { outcome, .. }) => {
                    assert_eq!(outcome.principal.name, "fuzz");
                    let v: serde_json::Value = serde_json::from_slice(input).unwrap();
                    let get = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
                    assert_eq!(oracle_signature(&get), get("x-amz-signature"), "accepted a bad signature");
                }
                Ok(other) => panic!("unexpected step {other:?}"),
                Err(e) => no_panic(&e),
            }
        }
        1 => {
            let token = String::from_utf8_lossy(input);
            if let Ok(ok) = MskTokenValidator::new(config()).validate(&token, NOW) {
                assert_eq!(ok.principal, "fuzz");
                let url = base64::Engine::decode(
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                    token.trim_end_matches('='),
                )
                .unwrap();
                let url = String::from_utf8(url).unwrap();
                let (_, query) = url.split_once("/?").unwrap();
                let pairs: Vec<(String, String)> = query
                    .split('&')
                    .filter_map(|p| p.split_once('='))
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
                    .collect();
                let dec = |s: &str| {
                    let mut out = Vec::new();
                    let b = s.as_bytes();
                    let mut i = 0;
                    while i < b.len() {
                        if b[i] == b'%' {
                            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                            i += 3;
                        } else {
                            out.push(b[i]);
                            i += 1;
                        }
                    }
                    String::from_utf8(out).unwrap()
                };
                let get = |k: &str| {
                    if k == "host" {
                        return Some("kafka.us-east-1.amazonaws.com".to_string());
                    }
                    pairs.iter().find(|(n, _)| n == k).map(|(_, v)| dec(v))
                };
                assert_eq!(oracle_signature(&get), get("x-amz-signature"), "accepted a bad token");
            }
        }
        _ => {
            if let Err(e) = parse_server_response(input) {
                no_panic(&e);
            }
        }
    }
});
