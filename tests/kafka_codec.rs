//! The Kafka wire codec: the byte examples of reference §1.6 and every version of every
//! message a SASL client or server exchanges.

use ksasl::kafka::codec::{
    decode_body, decode_response, encode_request, encode_response, Message, Reader, RequestHeader,
};
use ksasl::kafka::messages::*;

fn request<M: Message>(m: &M, version: i16, corr: i32, client_id: Option<&str>) -> Vec<u8> {
    encode_request(m, version, corr, client_id).unwrap()
}

fn response<M: Message>(m: &M, version: i16, corr: i32) -> Vec<u8> {
    encode_response(m, version, corr).unwrap()
}

fn api_versions(software: Option<(&str, &str)>) -> ApiVersionsRequest {
    ApiVersionsRequest {
        software: software.map(|(n, v)| (n.to_string(), v.to_string())),
        ..ApiVersionsRequest::default()
    }
}

fn handshake(mechanism: &str) -> SaslHandshakeRequest {
    SaslHandshakeRequest {
        mechanism: mechanism.to_string(),
    }
}

fn authenticate(bytes: &[u8]) -> SaslAuthenticateRequest {
    SaslAuthenticateRequest {
        auth_bytes: bytes.to_vec(),
    }
}

fn hex(s: &str) -> Vec<u8> {
    // Hex digits, with "quoted" ASCII allowed in between, spaces ignored.
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {}
            '"' => {
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    out.push(q as u8);
                }
            }
            _ => {
                let d = chars.next().unwrap();
                out.push(u8::from_str_radix(&format!("{c}{d}"), 16).unwrap());
            }
        }
    }
    out
}

#[test]
fn reference_byte_examples() {
    let cid = Some("client-1");
    assert_eq!(
        request(&api_versions(None), 0, 0x7ffffff8, cid),
        hex(r#"00000012 0012 0000 7ffffff8 0008 "client-1""#)
    );
    assert_eq!(
        request(&handshake("PLAIN"), 1, 0x7ffffff9, cid),
        hex(r#"00000019 0011 0001 7ffffff9 0008 "client-1" 0005 "PLAIN""#)
    );
    let hs = SaslHandshakeResponse {
        error_code: 0,
        mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-256".into()],
    };
    let hs_bytes = hex(r#"00000020 7ffffff9 0000 00000002 0005 "PLAIN" 000d "SCRAM-SHA-256""#);
    assert_eq!(response(&hs, 1, 0x7ffffff9), hs_bytes);
    assert_eq!(
        response(&hs, 0, 0x7ffffff9),
        hs_bytes,
        "v0 and v1 are the same"
    );
    let (corr, parsed) = decode_response::<SaslHandshakeResponse>(1, &hs_bytes[4..]).unwrap();
    assert_eq!(corr, 0x7ffffff9);
    assert_eq!(parsed, hs);

    let plain = b"\0alice\0alice-secret";
    assert_eq!(
        request(&authenticate(plain), 1, 0x7ffffffa, cid),
        hex(r#"00000029 0024 0001 7ffffffa 0008 "client-1" 00000013 00"alice"00"alice-secret""#)
    );
    assert_eq!(
        request(&authenticate(plain), 2, 0x7ffffffa, cid),
        hex(r#"00000028 0024 0002 7ffffffa 0008 "client-1" 00 14 00"alice"00"alice-secret" 00"#)
    );
    let ok = SaslAuthenticateResponse {
        error_code: 0,
        error_message: None,
        auth_bytes: vec![],
        session_lifetime_ms: 3_600_000,
    };
    let v1 = hex("00000014 7ffffffa 0000 ffff 00000000 00000000 0036ee80");
    let v2 = hex("00000012 7ffffffa 00 0000 00 01 00000000 0036ee80 00");
    assert_eq!(response(&ok, 1, 0x7ffffffa), v1);
    assert_eq!(response(&ok, 2, 0x7ffffffa), v2);
    assert_eq!(
        decode_response(1, &v1[4..]).unwrap(),
        (0x7ffffffa, ok.clone())
    );
    assert_eq!(decode_response(2, &v2[4..]).unwrap(), (0x7ffffffa, ok));
    let err = SaslAuthenticateResponse {
        error_code: 58,
        error_message: Some("Authentication failed: Invalid username or password".into()),
        auth_bytes: vec![],
        session_lifetime_ms: 0,
    };
    let err_bytes = hex(
        r#"00000045 7ffffffa 00 003a 34"Authentication failed: Invalid username or password" 01 0000000000000000 00"#,
    );
    assert_eq!(response(&err, 2, 0x7ffffffa), err_bytes);
    assert_eq!(
        decode_response(2, &err_bytes[4..]).unwrap(),
        (0x7ffffffa, err)
    );
}

/// ApiVersions v5 requests as kafka-clients 4.4.0 serializes them (header v2, client id "c",
/// correlation id 9, software "apache-kafka-java" "4.4.0"): cluster "abc" and node 3, then
/// both unset.
const KAFKA_V5_TARGET: &str =
    "001200050000000900016300126170616368652d6b61666b612d6a61766106342e342e30046162630000000300";
const KAFKA_V5_UNSET: &str =
    "001200050000000900016300126170616368652d6b61666b612d6a61766106342e342e3000ffffffff00";

fn hex_bytes(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn api_versions_v5_target_fields() {
    let f = hex_bytes(KAFKA_V5_TARGET);
    let (header, d) = RequestHeader::parse(&f).unwrap();
    assert_eq!(header.api_version, 5);
    let body: ApiVersionsRequest = decode_body(5, d).unwrap();
    assert_eq!(body.cluster_id.as_deref(), Some("abc"));
    assert_eq!(body.node_id, 3);
    assert!(body.is_valid());
    let half = ApiVersionsRequest {
        node_id: -1,
        ..body.clone()
    };
    assert!(!half.is_valid());
    // Truncated after the cluster id: refused.
    let cut = &f[..f.len() - 5];
    let (_, d) = RequestHeader::parse(cut).unwrap();
    assert!(decode_body::<ApiVersionsRequest>(5, d).is_err());
}

#[test]
fn api_versions_every_version() {
    let keys = vec![
        ApiVersionRange {
            api_key: 17,
            min_version: 0,
            max_version: 1,
        },
        ApiVersionRange {
            api_key: 18,
            min_version: 0,
            max_version: 4,
        },
        ApiVersionRange {
            api_key: 36,
            min_version: 0,
            max_version: 2,
        },
    ];
    let r = ApiVersionsResponse {
        error_code: 0,
        api_keys: keys,
        throttle_time_ms: 7,
    };
    for v in 0..=5 {
        let f = response(&r, v, 42);
        // ApiVersions responses always use response header v0: the body starts at byte 8.
        assert_eq!(&f[4..8], &42i32.to_be_bytes());
        assert_eq!(i16::from_be_bytes([f[8], f[9]]), 0);
        let (corr, p) = decode_response::<ApiVersionsResponse>(v, &f[4..]).unwrap();
        assert_eq!(corr, 42);
        assert_eq!(p.api_keys, r.api_keys);
        assert_eq!(p.throttle_time_ms, if v >= 1 { 7 } else { 0 });
        let expected_len = 4
            + 2
            + if v >= 3 {
                1 + 3 * 7 + 4 + 1
            } else {
                4 + 3 * 6 + if v >= 1 { 4 } else { 0 }
            };
        assert_eq!(f.len() - 4, expected_len, "v{v}");
        // Requests: v3+ carry software name and version in a flexible body (header v2).
        let sw = (v >= 3).then_some(("ksasl", "0.1.0"));
        let req = request(&api_versions(sw), v, 9, Some("c"));
        assert_eq!(
            RequestPrefix::parse(&req[4..]).unwrap(),
            RequestPrefix {
                api_key: 18,
                api_version: v,
                correlation_id: 9
            }
        );
        let (header, d) = RequestHeader::parse(&req[4..]).unwrap();
        assert_eq!(header.client_id.as_deref(), Some("c"));
        let body: ApiVersionsRequest = decode_body(v, d).unwrap();
        assert_eq!(
            body.software,
            (v >= 3).then(|| ("ksasl".to_string(), "0.1.0".to_string()))
        );
        // v5's target fields are sent unset.
        assert_eq!((body.cluster_id, body.node_id), (None, -1));
        if v == 5 {
            let unset = hex_bytes(KAFKA_V5_UNSET);
            let sw = api_versions(Some(("apache-kafka-java", "4.4.0")));
            let mine = request(&sw, 5, 9, Some("c"));
            assert_eq!(
                &mine[4..],
                &unset[..],
                "v5 request bytes as kafka-clients 4.4 writes them"
            );
        }
    }
    // Garbage after a valid body is refused.
    let mut f = response(&r, 1, 1);
    f.push(0);
    assert!(decode_response::<ApiVersionsResponse>(1, &f[4..]).is_err());
}

#[test]
fn sasl_authenticate_every_version() {
    let r = SaslAuthenticateResponse {
        error_code: 0,
        error_message: Some("m".into()),
        auth_bytes: b"xyz".to_vec(),
        session_lifetime_ms: 5,
    };
    for v in 0..=2 {
        let f = response(&r, v, 3);
        let (corr, p) = decode_response::<SaslAuthenticateResponse>(v, &f[4..]).unwrap();
        assert_eq!(corr, 3);
        assert_eq!(p.auth_bytes, b"xyz");
        assert_eq!(p.error_message.as_deref(), Some("m"));
        assert_eq!(
            p.session_lifetime_ms,
            if v >= 1 { 5 } else { 0 },
            "v0 has no lifetime field"
        );
        let req = request(&authenticate(b"tok"), v, 4, None);
        let (header, d) = RequestHeader::parse(&req[4..]).unwrap();
        assert_eq!(header.client_id, None);
        let body: SaslAuthenticateRequest = decode_body(v, d).unwrap();
        assert_eq!(body.auth_bytes, b"tok");
    }
}

#[test]
fn frame_decoder_bounds() {
    let mut d = FrameDecoder::new(16);
    d.push(&[0, 0, 0, 3, 1, 2]);
    assert_eq!(d.next_frame().unwrap(), None);
    d.push(&[3, 0, 0]);
    assert_eq!(d.next_frame().unwrap(), Some(vec![1, 2, 3]));
    d.push(&[0, 0]);
    assert_eq!(
        d.next_frame().unwrap(),
        Some(vec![]),
        "a zero-length frame is legal"
    );
    let mut d = FrameDecoder::new(16);
    d.push(&[0, 0, 0, 17]);
    assert_eq!(
        d.next_frame().unwrap_err().code(),
        ksasl::ErrorCode::MessageTooLarge
    );
    let mut d = FrameDecoder::new(16);
    d.push(&[0xff, 0xff, 0xff, 0xfe]);
    assert_eq!(
        d.next_frame().unwrap_err().code(),
        ksasl::ErrorCode::InvalidFrameSize
    );
    assert!(Reader::new(&[]).i16().is_err());
}
