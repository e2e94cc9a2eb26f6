//! AWS SigV4 and the AWS_MSK_IAM payload: AWS's published test vectors, and byte-for-byte
//! comparisons with kafka-python 3's AWS_MSK_IAM client and aws-msk-iam-sasl-signer-python
//! (tests/vectors/aws_msk_iam.json, written by tests/vectors/gen_aws_msk.py).

use ksasl::aws::msk_iam::{
    client_payload, parse_server_response, presign_connect, presigned_token, ClientPayload,
    KeyOrder, PAYLOAD_VERSION,
};
use ksasl::aws::sigv4::{
    self, credential_scope, hex, hmac_sha256, presign, signing_key, string_to_sign, AmzDate,
    CanonicalRequest, PresignRequest,
};
use ksasl::aws::AwsCredentials;
use ksasl::error::ErrorCode;
use serde_json::Value;

/// The credentials of AWS's `aws-sig-v4-test-suite`.
fn suite_credentials() -> AwsCredentials {
    AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY").unwrap()
}

/// 2015-08-30T12:36:00Z, the suite's clock.
const SUITE_MS: i64 = 1_440_938_160_000;

fn suite_signature(query: &[(&str, &str)]) -> (String, String) {
    let date = AmzDate::from_ms(SUITE_MS).unwrap();
    let request = CanonicalRequest {
        method: "GET".into(),
        path: "/".into(),
        query: query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        headers: vec![
            ("Host".into(), "example.amazonaws.com".into()),
            ("X-Amz-Date".into(), date.timestamp().into()),
        ],
        payload_hash: sigv4::EMPTY_PAYLOAD_SHA256.into(),
    };
    let canonical = request.render();
    let scope = credential_scope(&date, "us-east-1", "service");
    let to_sign = string_to_sign(&date, &scope, &canonical);
    let key = signing_key(
        suite_credentials().secret_access_key(),
        date.date(),
        "us-east-1",
        "service",
    );
    (canonical, hex(&hmac_sha256(&*key, to_sign.as_bytes())))
}

#[test]
fn get_vanilla_from_the_aws_test_suite() {
    let (canonical, signature) = suite_signature(&[]);
    assert_eq!(
        canonical,
        "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\
         e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        signature,
        "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    );
}

#[test]
fn get_vanilla_query_order_key_case_sorts_the_query() {
    let (canonical, signature) = suite_signature(&[("Param2", "value2"), ("Param1", "value1")]);
    assert!(
        canonical.contains("\nParam1=value1&Param2=value2\n"),
        "{canonical}"
    );
    assert_eq!(
        signature,
        "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
    );
}

#[test]
fn signing_key_of_the_aws_documentation() {
    let key = signing_key(
        b"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "20120215",
        "us-east-1",
        "iam",
    );
    assert_eq!(
        hex(&*key),
        "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
    );
}

#[test]
fn presigned_url_of_the_s3_documentation() {
    let creds = AwsCredentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    )
    .unwrap();
    // 2013-05-24T00:00:00Z
    let signed = presign(
        &PresignRequest {
            method: "GET",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test.txt",
            query: &[],
            region: "us-east-1",
            service: "s3",
            expires_secs: 86_400,
            payload_hash: "UNSIGNED-PAYLOAD",
        },
        &creds,
        1_369_353_600_000,
    )
    .unwrap();
    assert_eq!(
        signed.query_string(),
        "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F\
         us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&\
         X-Amz-SignedHeaders=host&X-Amz-Signature=\
         aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
    );
}

#[test]
fn dates_round_trip_and_refuse_what_is_not_a_date() {
    for (ms, stamp) in [
        (0, "19700101T000000Z"),
        (SUITE_MS, "20150830T123600Z"),
        (951_782_400_000, "20000229T000000Z"),
        (253_402_300_799_999, "99991231T235959Z"),
    ] {
        let date = AmzDate::from_ms(ms).unwrap();
        assert_eq!(date.timestamp(), stamp);
        assert_eq!(date.date(), &stamp[..8]);
        let (parsed, parsed_ms) = AmzDate::parse(stamp).unwrap();
        assert_eq!(parsed, date);
        assert_eq!(parsed_ms, ms / 1000 * 1000);
    }
    for bad in [
        "20150830T123600",
        "20150830 123600Z",
        "20150230T000000Z",
        "20190229T000000Z",
        "20151301T000000Z",
        "20150830T246000Z",
        "2015083OT123600Z",
        "+2015830T123600Z",
        "19691231T235959Z",
        "２0150830T123600Z",
    ] {
        assert!(AmzDate::parse(bad).is_none(), "{bad}");
    }
    for bad in [-1, 253_402_300_800_000, i64::MIN, i64::MAX] {
        assert_eq!(
            AmzDate::from_ms(bad).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}

#[test]
fn uri_encoding_keeps_only_the_unreserved_characters() {
    assert_eq!(sigv4::uri_encode("aZ09-._~"), "aZ09-._~");
    assert_eq!(
        sigv4::uri_encode("a b/c:d+e=f%é"),
        "a%20b%2Fc%3Ad%2Be%3Df%25%C3%A9"
    );
}

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/aws_msk_iam.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn credentials_of(v: &Value) -> AwsCredentials {
    let creds = AwsCredentials::new(
        v["access_key_id"].as_str().unwrap(),
        v["secret_access_key"].as_str().unwrap(),
    )
    .unwrap();
    match v["session_token"].as_str() {
        Some(token) => creds.with_session_token(token).unwrap(),
        None => creds,
    }
}

#[test]
fn payloads_equal_kafka_pythons_byte_for_byte() {
    let v = vectors();
    let cases = v["payloads"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let payload = client_payload(
            &ClientPayload {
                host: case["host"].as_str().unwrap(),
                region: case["region"].as_str().unwrap(),
                user_agent: case["user_agent"].as_str().unwrap(),
                order: KeyOrder::KafkaPython,
            },
            &credentials_of(case),
            case["now_ms"].as_i64().unwrap(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(payload).unwrap(),
            case["payload"].as_str().unwrap()
        );
    }
}

#[test]
fn presigned_tokens_equal_the_msk_signers_byte_for_byte() {
    let v = vectors();
    let cases = v["tokens"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let token = presigned_token(
            case["region"].as_str().unwrap(),
            &credentials_of(case),
            case["now_ms"].as_i64().unwrap(),
            case["user_agent"].as_str().unwrap(),
        )
        .unwrap();
        assert_eq!(token.token(), case["token"].as_str().unwrap());
        assert_eq!(token.expires_at_ms(), case["expiry_ms"].as_i64().unwrap());
        assert!(!format!("{token:?}").contains(case["token"].as_str().unwrap()));
    }
}

/// aws-msk-iam-auth's own payloads (tests/vectors/aws_msk_iam_java.json, written by
/// tests/vectors/aws_msk_java/Gen.java at the time each one names): ksasl signs the same bytes.
#[test]
fn payloads_equal_aws_msk_iam_auths_byte_for_byte() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/aws_msk_iam_java.json"
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let cases = v["payloads"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let java = case["payload"].as_str().unwrap();
        let parsed: Value = serde_json::from_str(java).unwrap();
        let (_, now_ms) = AmzDate::parse(parsed["x-amz-date"].as_str().unwrap()).unwrap();
        let payload = client_payload(
            &ClientPayload {
                host: case["host"].as_str().unwrap(),
                region: case["region"].as_str().unwrap(),
                user_agent: case["user_agent"].as_str().unwrap(),
                order: KeyOrder::JavaHashMap,
            },
            &credentials_of(case),
            now_ms,
        )
        .unwrap();
        assert_eq!(String::from_utf8(payload).unwrap(), java);
    }
}

/// aws-msk-iam-auth fills a `java.util.HashMap` (capacity 16) and Jackson writes it in bucket
/// order; the keys that share a bucket keep their insertion order (x-amz-signedheaders before
/// x-amz-signature, x-amz-credential before user-agent).
#[test]
fn the_java_librarys_key_order() {
    let creds = suite_credentials().with_session_token("tok").unwrap();
    let bytes = client_payload(
        &ClientPayload {
            host: "b-1.example.kafka.us-east-1.amazonaws.com",
            region: "us-east-1",
            user_agent: "aws-msk-iam-auth/2.3.6",
            order: KeyOrder::JavaHashMap,
        },
        &creds,
        SUITE_MS,
    )
    .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let keys: Vec<String> = text
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .map(|kv| kv.split(':').next().unwrap().trim_matches('"').to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "x-amz-date",
            "x-amz-signedheaders",
            "x-amz-signature",
            "host",
            "action",
            "x-amz-expires",
            "x-amz-security-token",
            "version",
            "x-amz-algorithm",
            "x-amz-credential",
            "user-agent"
        ]
    );
    // The same signature as the other order: only the JSON differs.
    let python = client_payload(
        &ClientPayload {
            host: "b-1.example.kafka.us-east-1.amazonaws.com",
            region: "us-east-1",
            user_agent: "aws-msk-iam-auth/2.3.6",
            order: KeyOrder::KafkaPython,
        },
        &creds,
        SUITE_MS,
    )
    .unwrap();
    let a: Value = serde_json::from_str(&text).unwrap();
    let b: Value = serde_json::from_slice(&python).unwrap();
    assert_eq!(a, b);
}

#[test]
fn the_connect_request_is_signed_for_the_broker_host() {
    let signed = presign_connect("broker", "us-east-1", &suite_credentials(), SUITE_MS).unwrap();
    assert!(signed
        .canonical_request
        .starts_with("GET\n/\nAction=kafka-cluster%3AConnect&X-Amz-Algorithm="));
    assert!(signed.canonical_request.contains("\nhost:broker\n\nhost\n"));
    assert_eq!(signed.param("X-Amz-Expires"), Some("900"));
}

#[test]
fn bad_inputs_are_refused_with_invalid_argument() {
    for (id, secret) in [("", "s"), ("AK/ID", "s"), ("AKID", "")] {
        assert_eq!(
            AwsCredentials::new(id, secret).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
    assert!(suite_credentials().with_session_token("").is_err());
    let creds = suite_credentials();
    for (host, region) in [("", "us-east-1"), ("a b", "us-east-1"), ("h", "")] {
        assert_eq!(
            presign_connect(host, region, &creds, SUITE_MS)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }
    assert!(presigned_token("us-east-1/x", &creds, SUITE_MS, "ua").is_err());
    let payload = ClientPayload {
        host: "h",
        region: "us-east-1",
        user_agent: "a\nb",
        order: KeyOrder::JavaHashMap,
    };
    assert!(client_payload(&payload, &creds, SUITE_MS).is_err());
}

#[test]
fn credentials_do_not_show_their_secrets() {
    let creds = suite_credentials()
        .with_session_token("session-tok")
        .unwrap();
    let shown = format!("{creds:?}");
    assert!(shown.contains("AKIDEXAMPLE"));
    assert!(!shown.contains("wJalr"));
    assert!(!shown.contains("session-tok"));
}

#[test]
fn server_responses() {
    let ok = parse_server_response(br#"{"version":"2020_10_22","request-id":"r-1"}"#).unwrap();
    assert_eq!(ok.version, PAYLOAD_VERSION);
    assert_eq!(ok.request_id, "r-1");
    for bad in [
        &b""[..],
        b"[]",
        b"{\"version\":\"2020_10_22\"}",
        b"{\"version\":1,\"request-id\":\"r\"}",
        b"\xff",
    ] {
        assert_eq!(
            parse_server_response(bad).unwrap_err().code(),
            ErrorCode::MalformedMessage
        );
    }
    let other = parse_server_response(
        format!(
            "{{\"version\":\"{}\",\"request-id\":\"r\"}}",
            "9".repeat(500)
        )
        .as_bytes(),
    )
    .unwrap_err();
    assert_eq!(other.code(), ErrorCode::UnsupportedVersion);
    assert!(other.message().len() < 200);
}

// --- the mechanism, both sides ----------------------------------------------------------------

mod mechanism {
    use std::sync::{Arc, Mutex};

    use ksasl::aws::msk_iam::KeyOrder;
    use ksasl::aws::AwsCredentials;
    use ksasl::error::{ErrorCode, Result};
    use ksasl::mech::aws_msk_iam::{
        AwsCredentialSource, AwsKeyStore, MskIamClientConfig, MskIamServerConfig,
    };
    use ksasl::mech::{ClientStep, MechanismRegistry, ServerStep};

    const NOW: i64 = 1_796_301_296_000;
    const HOST: &str = "b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com";

    fn alice() -> AwsCredentials {
        AwsCredentials::new("AKIAALICE", "alice-secret/+=").unwrap()
    }

    /// Credentials a test can swap, as a refresher would.
    struct Rotating(Mutex<AwsCredentials>);

    impl AwsCredentialSource for Rotating {
        fn aws_credentials(&self, _now_ms: i64) -> Result<AwsCredentials> {
            Ok(self.0.lock().unwrap().clone())
        }
    }

    fn server_registry(keys: &Arc<AwsKeyStore>, hosts: &[&str]) -> MechanismRegistry {
        let mut r = MechanismRegistry::new();
        r.register_aws_msk_iam_server(Arc::new(MskIamServerConfig {
            keys: keys.clone(),
            region: "us-east-1".into(),
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
        }));
        r
    }

    fn client_registry(host: &str, source: Arc<dyn AwsCredentialSource>) -> MechanismRegistry {
        let mut r = MechanismRegistry::new();
        r.register_aws_msk_iam_client(Arc::new(MskIamClientConfig::new(host, "us-east-1")), source);
        r
    }

    /// One exchange: the server's verdict (Ok: principal and the credential expiry).
    fn login(
        client: &MechanismRegistry,
        server: &MechanismRegistry,
        client_now: i64,
        server_now: i64,
    ) -> std::result::Result<(String, Option<i64>), ksasl::error::Error> {
        let mut c = client.client("AWS_MSK_IAM").unwrap();
        let mut s = server.server("AWS_MSK_IAM").unwrap();
        let ClientStep::Send(payload) = c.start(client_now)? else {
            panic!("the client sends first")
        };
        match s.step(&payload, server_now) {
            Ok(ServerStep::Done { message, outcome }) => {
                let answer = message.expect("the server answers with its request id");
                let text = String::from_utf8(answer.clone()).unwrap();
                assert!(
                    text.starts_with("{\"version\":\"2020_10_22\",\"request-id\":\""),
                    "{text}"
                );
                assert_eq!(c.step(&answer, client_now).unwrap(), ClientStep::Done(None));
                assert_eq!(outcome.mechanism, "AWS_MSK_IAM");
                Ok((outcome.principal.to_string(), outcome.credential_expiry_ms))
            }
            Ok(other) => panic!("unexpected {other:?}"),
            Err(e) => {
                let shown = s.client_message().unwrap();
                assert!(shown.ends_with("]: Access denied"), "{shown}");
                assert!(
                    !shown.contains("signature") && !shown.contains("secret"),
                    "{shown}"
                );
                assert_eq!(e.code(), ErrorCode::InvalidCredentials);
                Err(e)
            }
        }
    }

    #[test]
    fn a_signed_payload_authenticates_as_the_keys_principal() {
        let keys = Arc::new(AwsKeyStore::new());
        keys.add(&alice(), "arn:aws:iam::123456789012:user/alice")
            .unwrap();
        let server = server_registry(&keys, &[HOST]);
        let client = client_registry(HOST, Arc::new(alice()));
        let (principal, expiry) = login(&client, &server, NOW, NOW).unwrap();
        assert_eq!(principal, "User:arn:aws:iam::123456789012:user/alice");
        assert_eq!(expiry, None);
    }

    #[test]
    fn temporary_credentials_need_their_token_and_cap_the_session() {
        let keys = Arc::new(AwsKeyStore::new());
        let temp = AwsCredentials::new("ASIATEMP", "temp-secret")
            .unwrap()
            .with_session_token("session-token")
            .unwrap()
            .with_expiry(NOW + 3_600_000);
        keys.add(&temp, "temp").unwrap();
        let server = server_registry(&keys, &[]);
        let (_, expiry) = login(
            &client_registry(HOST, Arc::new(temp.clone())),
            &server,
            NOW,
            NOW,
        )
        .unwrap();
        assert_eq!(expiry, Some(NOW + 3_600_000));
        // The same key without its token, or with another one.
        let bare = AwsCredentials::new("ASIATEMP", "temp-secret").unwrap();
        let e = login(&client_registry(HOST, Arc::new(bare)), &server, NOW, NOW).unwrap_err();
        assert_eq!(e.detail("request_id").map(str::len), Some(36));
        assert!(
            e.message().contains("session token is missing"),
            "{}",
            e.message()
        );
        let other = AwsCredentials::new("ASIATEMP", "temp-secret")
            .unwrap()
            .with_session_token("another")
            .unwrap();
        let e = login(&client_registry(HOST, Arc::new(other)), &server, NOW, NOW).unwrap_err();
        assert!(
            e.message().contains("session token is not the key's"),
            "{}",
            e.message()
        );
        // Credentials past their expiry: the client does not sign, the server does not accept.
        let late = NOW + 3_600_000;
        let mut c = client_registry(HOST, Arc::new(temp))
            .client("AWS_MSK_IAM")
            .unwrap();
        assert_eq!(
            c.start(late).unwrap_err().code(),
            ErrorCode::NoValidCredential
        );
    }

    #[test]
    fn refusals_wrong_secret_stale_or_future_date_wrong_host_region_or_action() {
        let keys = Arc::new(AwsKeyStore::new());
        keys.add(&alice(), "alice").unwrap();
        let server = server_registry(&keys, &[HOST]);
        let reason = |client: &MechanismRegistry, client_now: i64| {
            login(client, &server, client_now, NOW)
                .unwrap_err()
                .message()
                .to_string()
        };
        let wrong_secret = AwsCredentials::new("AKIAALICE", "not-the-secret").unwrap();
        assert!(
            reason(&client_registry(HOST, Arc::new(wrong_secret)), NOW).contains("does not verify")
        );
        let unknown = AwsCredentials::new("AKIAMALLORY", "x").unwrap();
        assert!(reason(&client_registry(HOST, Arc::new(unknown)), NOW).contains("unknown"));
        // 900 s of validity: signed 15 minutes and 1 second ago is too old.
        assert!(
            reason(&client_registry(HOST, Arc::new(alice())), NOW - 901_000).contains("expired")
        );
        assert!(login(
            &client_registry(HOST, Arc::new(alice())),
            &server,
            NOW - 899_000,
            NOW
        )
        .is_ok());
        // Up to 15 minutes ahead of the server's clock is accepted, not more.
        assert!(login(
            &client_registry(HOST, Arc::new(alice())),
            &server,
            NOW + 900_000,
            NOW
        )
        .is_ok());
        assert!(reason(&client_registry(HOST, Arc::new(alice())), NOW + 901_000).contains("ahead"));
        assert!(
            reason(&client_registry("b-2.other", Arc::new(alice())), NOW).contains("another host")
        );
        let mut eu = MechanismRegistry::new();
        eu.register_aws_msk_iam_client(
            Arc::new(MskIamClientConfig::new(HOST, "eu-west-1")),
            Arc::new(alice()),
        );
        assert!(reason(&eu, NOW).contains("another region"));

        // A valid payload edited by an attacker: each field is checked or signed.
        let mut c = client_registry(HOST, Arc::new(alice()))
            .client("AWS_MSK_IAM")
            .unwrap();
        let ClientStep::Send(good) = c.start(NOW).unwrap() else {
            panic!()
        };
        let good: serde_json::Value = serde_json::from_slice(&good).unwrap();
        for (field, value, why) in [
            ("action", "kafka-cluster:AlterCluster", "action"),
            ("x-amz-expires", "86400", "x-amz-expires"),
            ("x-amz-expires", "0900", "x-amz-expires"),
            ("x-amz-signedheaders", "", "signed headers"),
            ("x-amz-algorithm", "AWS4-HMAC-SHA1", "algorithm"),
            ("version", "2021_01_01", "version"),
            ("x-amz-date", "20261203T123457Z", "does not verify"),
            (
                "x-amz-credential",
                "AKIAALICE/20261203/us-east-1/kafka-cluster",
                "credential",
            ),
            ("x-amz-signature", "00", "does not verify"),
        ] {
            let mut edited = good.clone();
            edited[field] = serde_json::Value::from(value);
            let mut s = server.server("AWS_MSK_IAM").unwrap();
            let e = s
                .step(&serde_json::to_vec(&edited).unwrap(), NOW)
                .unwrap_err();
            assert!(e.message().contains(why), "{field}: {}", e.message());
        }
        let mut no_host = good.clone();
        no_host.as_object_mut().unwrap().remove("host");
        for bad in [
            serde_json::to_vec(&no_host).unwrap(),
            b"not json".to_vec(),
            b"[]".to_vec(),
            vec![b' '; 20_000],
        ] {
            let mut s = server.server("AWS_MSK_IAM").unwrap();
            assert_eq!(
                s.step(&bad, NOW).unwrap_err().code(),
                ErrorCode::InvalidCredentials
            );
        }
    }

    #[test]
    fn a_rotation_signs_with_the_new_key_and_the_old_one_stops_working() {
        let keys = Arc::new(AwsKeyStore::new());
        keys.add(&alice(), "alice").unwrap();
        let server = server_registry(&keys, &[HOST]);
        let source = Arc::new(Rotating(Mutex::new(alice())));
        let client = client_registry(HOST, source.clone());
        assert!(login(&client, &server, NOW, NOW).is_ok());
        let new = AwsCredentials::new("AKIAALICE2", "new-secret").unwrap();
        keys.add(&new, "alice").unwrap();
        *source.0.lock().unwrap() = new;
        assert_eq!(
            login(&client, &server, NOW + 1000, NOW + 1000).unwrap().0,
            "User:alice"
        );
        assert!(keys.remove("AKIAALICE"));
        let old = client_registry(HOST, Arc::new(alice()));
        assert!(login(&old, &server, NOW + 2000, NOW + 2000)
            .unwrap_err()
            .message()
            .contains("unknown"));
    }

    /// kafka-python's and aws-msk-iam-auth's own payloads (tests/vectors/aws_msk_iam.json and
    /// aws_msk_iam_java.json) verify on ksasl's server at the time they were signed.
    #[test]
    fn the_server_accepts_kafka_pythons_and_the_java_librarys_payloads() {
        let java: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/vectors/aws_msk_iam_java.json"
            ))
            .unwrap(),
        )
        .unwrap();
        let mut cases = super::vectors()["payloads"].as_array().unwrap().clone();
        for case in java["payloads"].as_array().unwrap() {
            let mut case = case.clone();
            let p: serde_json::Value =
                serde_json::from_str(case["payload"].as_str().unwrap()).unwrap();
            let (_, ms) =
                ksasl::aws::sigv4::AmzDate::parse(p["x-amz-date"].as_str().unwrap()).unwrap();
            case["now_ms"] = serde_json::Value::from(ms);
            cases.push(case);
        }
        assert_eq!(cases.len(), 8);
        for case in &cases {
            let keys = Arc::new(AwsKeyStore::new());
            keys.add(&super::credentials_of(case), "python").unwrap();
            let mut r = MechanismRegistry::new();
            r.register_aws_msk_iam_server(Arc::new(MskIamServerConfig {
                keys,
                region: case["region"].as_str().unwrap().into(),
                hosts: vec![case["host"].as_str().unwrap().into()],
            }));
            let mut s = r.server("AWS_MSK_IAM").unwrap();
            let step = s
                .step(
                    case["payload"].as_str().unwrap().as_bytes(),
                    case["now_ms"].as_i64().unwrap(),
                )
                .unwrap();
            assert!(matches!(step, ServerStep::Done { .. }), "{step:?}");
        }
    }

    #[test]
    fn the_client_refuses_an_answer_that_is_not_msks() {
        let mut c = client_registry(HOST, Arc::new(alice()))
            .client("AWS_MSK_IAM")
            .unwrap();
        c.start(NOW).unwrap();
        assert_eq!(
            c.step(b"{}", NOW).unwrap_err().code(),
            ErrorCode::MalformedMessage
        );
        let _ = KeyOrder::JavaHashMap;
    }
}

// --- MSK's OAUTHBEARER tokens and AWS credentials in a refresher -----------------------------

mod tokens {
    use std::sync::Arc;

    use ksasl::aws::msk_iam::presigned_token;
    use ksasl::aws::AwsCredentials;
    use ksasl::error::ErrorCode;
    use ksasl::mech::aws_msk_iam::{
        AwsKeyStore, MskIamClientConfig, MskIamServerConfig, MskTokenSource, MskTokenValidator,
    };
    use ksasl::mech::oauthbearer::TokenValidator;
    use ksasl::mech::{ClientStep, MechanismRegistry, ServerStep};
    use ksasl::random::SharedRandom;
    use ksasl::refresh::{RefreshConfig, Refresher};

    const NOW: i64 = 1_796_301_296_000;

    fn config(keys: &Arc<AwsKeyStore>, region: &str) -> Arc<MskIamServerConfig> {
        Arc::new(MskIamServerConfig {
            keys: keys.clone(),
            region: region.into(),
            hosts: vec![],
        })
    }

    /// aws-msk-iam-sasl-signer-python's tokens validate, for the signing second plus 900 s.
    #[test]
    fn the_signers_tokens_validate() {
        let v = super::vectors();
        for case in v["tokens"].as_array().unwrap() {
            let keys = Arc::new(AwsKeyStore::new());
            keys.add(&super::credentials_of(case), "signer").unwrap();
            let validator = MskTokenValidator::new(config(&keys, case["region"].as_str().unwrap()));
            let now = case["now_ms"].as_i64().unwrap();
            let token = case["token"].as_str().unwrap();
            let ok = validator.validate(token, now).unwrap();
            assert_eq!(ok.principal, "signer");
            assert_eq!(ok.expiry_ms, case["expiry_ms"].as_i64().unwrap());
            let late = validator.validate(token, now + 901_000).unwrap_err();
            assert_eq!(late.status, "invalid_token");
            assert!(late.reason.contains("expired"), "{}", late.reason);
            // Another region's validator does not take it.
            let other = MskTokenValidator::new(config(&keys, "ap-south-2"));
            assert!(other.validate(token, now).is_err());
        }
    }

    /// A token lives 15 minutes, or until the credentials it was signed with expire, if that
    /// is sooner: librdkafka, refreshing at 80 % of that, re-signs before the credentials go.
    #[test]
    fn a_tokens_lifetime_ends_with_its_credentials() {
        let lasting = AwsCredentials::new("AKIALASTING", "secret").unwrap();
        let short =
            AwsCredentials::from_parts("ASIASHORT", "secret", Some("session"), Some(NOW + 60_000))
                .unwrap();
        let long = AwsCredentials::from_parts(
            "ASIALONG",
            "secret",
            Some("session"),
            Some(NOW + 3_600_000),
        )
        .unwrap();
        let expiry = |c: &AwsCredentials, now: i64| {
            MskTokenSource::new("us-east-1", None, Arc::new(c.clone()))
                .token_at(now)
                .map(|t| t.expiry_ms())
        };
        assert_eq!(expiry(&lasting, NOW + 999).unwrap(), NOW + 900_000);
        assert_eq!(expiry(&short, NOW).unwrap(), NOW + 60_000);
        assert_eq!(expiry(&long, NOW).unwrap(), NOW + 900_000);
        // Expired credentials sign nothing.
        let gone = expiry(&short, NOW + 60_000).unwrap_err();
        assert_eq!(gone.code(), ErrorCode::NoValidCredential);
    }

    #[test]
    fn an_oauthbearer_client_with_msk_tokens_authenticates_and_tampering_is_refused() {
        let alice = AwsCredentials::new("AKIAALICE", "alice-secret").unwrap();
        let keys = Arc::new(AwsKeyStore::new());
        keys.add(&alice, "alice").unwrap();
        let source = Arc::new(MskTokenSource::new(
            "us-east-1",
            Some("ksasl-test"),
            Arc::new(alice.clone()),
        ));
        assert_eq!(
            source.token_at(NOW).unwrap().value(),
            presigned_token("us-east-1", &alice, NOW, "ksasl-test")
                .unwrap()
                .token()
        );
        let mut client = MechanismRegistry::new();
        client.register_oauthbearer_client(source.clone());
        let mut server = MechanismRegistry::new();
        server.register_oauthbearer_server(Arc::new(MskTokenValidator::new(config(
            &keys,
            "us-east-1",
        ))));
        let mut c = client.client("OAUTHBEARER").unwrap();
        let mut s = server.server("OAUTHBEARER").unwrap();
        let ClientStep::Send(first) = c.start(NOW).unwrap() else {
            panic!()
        };
        let ServerStep::Done { outcome, .. } = s.step(&first, NOW).unwrap() else {
            panic!()
        };
        assert_eq!(outcome.principal.to_string(), "User:alice");
        assert_eq!(outcome.credential_expiry_ms, Some(NOW + 900_000));

        let validator = MskTokenValidator::new(config(&keys, "us-east-1"));
        let good = source.token_at(NOW).unwrap().value().to_string();
        let url = String::from_utf8(
            base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, &good)
                .unwrap(),
        )
        .unwrap();
        let enc =
            |u: &str| base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, u);
        for (edited, why) in [
            (
                url.replace("kafka-cluster%3AConnect", "kafka-cluster%3ADescribeCluster"),
                "action",
            ),
            (
                url.replace("X-Amz-Expires=900", "X-Amz-Expires=3600"),
                "x-amz-expires",
            ),
            (
                url.replace("https://kafka.us-east-1", "https://kafka.us-east-2"),
                "kafka endpoint",
            ),
            (
                url.replace(
                    "&User-Agent=",
                    "&Action=kafka-cluster%3AConnect&User-Agent=",
                ),
                "twice",
            ),
            (
                url.replace("&User-Agent=", "&Extra=1&User-Agent="),
                "does not sign",
            ),
            (
                url.replace("X-Amz-Signature=", "X-Amz-Signature=0"),
                "does not verify",
            ),
            (url.replace("%2F", "%2G"), "percent-encoded"),
            (url.replace("%2F", "%+F"), "percent-encoded"),
        ] {
            let r = validator.validate(&enc(&edited), NOW).unwrap_err();
            assert!(r.reason.contains(why), "{why}: {}", r.reason);
        }
        for junk in ["", "!!!", &"A".repeat(40_000)] {
            assert!(validator.validate(junk, NOW).is_err());
        }
    }

    #[test]
    fn a_refresher_holds_aws_credentials_and_clients_sign_with_the_current_ones() {
        let refresher = Arc::new(Refresher::new(
            RefreshConfig::builder().build().unwrap(),
            SharedRandom::default(),
        ));
        let no_expiry = AwsCredentials::new("AKIAONE", "one").unwrap();
        assert_eq!(
            refresher
                .set_aws_credentials(no_expiry, "alice", NOW)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidCredentialExpiry
        );
        let first = AwsCredentials::new("ASIAONE", "one")
            .unwrap()
            .with_session_token("t1")
            .unwrap()
            .with_expiry(NOW + 3_600_000);
        assert_eq!(
            refresher
                .set_aws_credentials(first.clone(), "alice", NOW)
                .unwrap(),
            1
        );
        let due = refresher.next_deadline().unwrap();
        assert!(due > NOW + 2_800_000 && due < NOW + 3_100_000, "{due}");

        let keys = Arc::new(AwsKeyStore::new());
        keys.add(&first, "alice").unwrap();
        let mut server = MechanismRegistry::new();
        server.register_aws_msk_iam_server(config(&keys, "us-east-1"));
        let mut client = MechanismRegistry::new();
        client.register_aws_msk_iam_client(
            Arc::new(MskIamClientConfig::new("b-1", "us-east-1")),
            refresher.clone(),
        );
        let login = |now: i64| {
            let mut c = client.client("AWS_MSK_IAM").unwrap();
            let mut s = server.server("AWS_MSK_IAM").unwrap();
            let ClientStep::Send(p) = c.start(now)? else {
                panic!()
            };
            s.step(&p, now)
                .map(|step| matches!(step, ServerStep::Done { .. }))
        };
        assert!(login(NOW).unwrap());
        // A refresh installs the next credentials; the old key is then retired by the server.
        let second = AwsCredentials::new("ASIATWO", "two")
            .unwrap()
            .with_session_token("t2")
            .unwrap()
            .with_expiry(NOW + 7_200_000);
        keys.add(&second, "alice").unwrap();
        assert_eq!(
            refresher
                .set_aws_credentials(second, "alice", NOW + 1000)
                .unwrap(),
            2
        );
        keys.remove("ASIAONE");
        assert!(login(NOW + 2000).unwrap());
        // Past every expiry nothing is signed.
        assert_eq!(
            login(NOW + 7_200_000).unwrap_err().code(),
            ErrorCode::NoValidCredential
        );
    }
}
