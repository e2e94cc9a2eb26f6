//! The delegation-token wire codec (`ksasl::kafka::delegation_tokens`): byte-exact encodings computed
//! by hand from the schemas, round trips of every version of every message, Kafka's own
//! encodings (tests/vectors/token_messages.json, from tests/vectors/gen_token_messages.java
//! and kafka-clients 4.4.0), refusal of malformed input and of fields a version lacks, and
//! random input that never panics a parser.

mod common;

use std::fmt::Debug;

use common::unhex;
use ksasl::kafka::codec::{is_flexible, Reader, RequestHeader};
use ksasl::kafka::delegation_tokens::*;
use ksasl::kafka::messages::{response_correlation_id, RequestPrefix};

/// A request's header prefix and client id, and the reader of its body.
struct Parsed<'a> {
    prefix: RequestPrefix,
    client_id: Option<String>,
    body: Reader<'a>,
}

fn parse_request(frame: &[u8]) -> ksasl::Result<Parsed<'_>> {
    let (h, d) = RequestHeader::parse(frame)?;
    Ok(Parsed {
        prefix: RequestPrefix {
            api_key: h.api_key,
            api_version: h.api_version,
            correlation_id: h.correlation_id,
        },
        client_id: h.client_id,
        body: d.r,
    })
}

/// A response's correlation id and the reader of its body.
fn parse_response_header(frame: &[u8], flexible: bool) -> ksasl::Result<(i32, Reader<'_>)> {
    let mut r = Reader::new(frame);
    let corr = r.i32()?;
    if flexible {
        r.tagged_fields()?;
    }
    Ok((corr, r))
}
use ksasl::{ErrorCode, Secret};
use proptest::prelude::*;

const CORR: i32 = 7;
const CID: Option<&str> = Some("client-1");

/// Hex digits, with "quoted" ASCII allowed in between; spaces ignored.
fn hex(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\n' => {}
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

fn user(name: &str) -> PrincipalName {
    PrincipalName::user(name)
}

const DEADBEEF: [u8; 4] = [0xde, 0xad, 0xbe, 0xef];

// ---------------------------------------------------------------------------------------
// One interface over the seven message types, for the generic checks below.

trait Msg: Sized + PartialEq + Debug + Clone {
    const API_KEY: i16;
    const MAX: i16;
    const REQUEST: bool;
    fn body(&self, v: i16) -> ksasl::Result<Vec<u8>>;
    /// The whole frame, length prefix included.
    fn frame(&self, v: i16, corr: i32, client_id: Option<&str>) -> ksasl::Result<Vec<u8>>;
    fn parse_body(v: i16, body: &[u8]) -> ksasl::Result<Self>;
    /// Parses a frame without its length prefix (and checks the header).
    fn parse_frame(v: i16, frame: &[u8]) -> ksasl::Result<Self>;
}

macro_rules! request_msg {
    ($t:ty) => {
        impl Msg for $t {
            const API_KEY: i16 = <$t>::API_KEY;
            const MAX: i16 = <$t>::MAX_VERSION;
            const REQUEST: bool = true;
            fn body(&self, v: i16) -> ksasl::Result<Vec<u8>> {
                self.encode_body(v)
            }
            fn frame(&self, v: i16, corr: i32, cid: Option<&str>) -> ksasl::Result<Vec<u8>> {
                self.encode_request(v, corr, cid)
            }
            fn parse_body(v: i16, body: &[u8]) -> ksasl::Result<Self> {
                <$t>::parse_request_body(v, Reader::new(body))
            }
            fn parse_frame(v: i16, frame: &[u8]) -> ksasl::Result<Self> {
                let req = parse_request(frame)?;
                assert_eq!(req.prefix.api_key, <$t>::API_KEY);
                assert_eq!(req.prefix.api_version, v);
                let parsed = <$t>::parse_request_body(v, req.body)?;
                // The dispatcher agrees.
                let again = parse_request(frame)?;
                let any = TokenRequest::parse_body(<$t>::API_KEY, v, again.body)?;
                assert_eq!(any.api_key(), <$t>::API_KEY);
                Ok(parsed)
            }
        }
    };
}

macro_rules! response_msg {
    ($t:ty, $key:expr) => {
        impl Msg for $t {
            const API_KEY: i16 = $key;
            const MAX: i16 = <$t>::MAX_VERSION;
            const REQUEST: bool = false;
            fn body(&self, v: i16) -> ksasl::Result<Vec<u8>> {
                self.encode_body(v)
            }
            fn frame(&self, v: i16, corr: i32, _cid: Option<&str>) -> ksasl::Result<Vec<u8>> {
                self.encode_response(v, corr)
            }
            fn parse_body(v: i16, body: &[u8]) -> ksasl::Result<Self> {
                <$t>::parse_response_body(v, Reader::new(body))
            }
            fn parse_frame(v: i16, frame: &[u8]) -> ksasl::Result<Self> {
                let parsed = <$t>::parse_response(v, frame)?;
                // parse_response agrees with parse_response_header + parse_response_body.
                let (_, body) = parse_response_header(frame, is_flexible($key, v))?;
                assert_eq!(<$t>::parse_response_body(v, body)?, parsed);
                Ok(parsed)
            }
        }
    };
}

request_msg!(CreateTokenRequest);
request_msg!(RenewTokenRequest);
request_msg!(ExpireTokenRequest);
request_msg!(DescribeTokensRequest);
response_msg!(CreateTokenResponse, CREATE_DELEGATION_TOKEN);
response_msg!(ExpiryResponse, RENEW_DELEGATION_TOKEN);
response_msg!(DescribeTokensResponse, DESCRIBE_DELEGATION_TOKEN);

/// Encodes `m` as `v` (body and frame), checks the framing, parses both back, and returns
/// the frame.
fn round_trip<M: Msg>(m: &M, v: i16) -> Vec<u8> {
    let body = m.body(v).unwrap();
    let frame = m.frame(v, CORR, CID).unwrap();
    let n = i32::from_be_bytes(frame[..4].try_into().unwrap());
    assert_eq!(n as usize, frame.len() - 4, "length prefix");
    assert!(frame.ends_with(&body), "the frame ends with the body");
    let flexible = v >= 2;
    let header_len = if M::REQUEST {
        2 + 2 + 4 + 2 + CID.unwrap().len() + usize::from(flexible)
    } else {
        4 + usize::from(flexible)
    };
    assert_eq!(frame.len(), 4 + header_len + body.len(), "header size v{v}");
    if M::REQUEST {
        assert_eq!(
            RequestPrefix::parse(&frame[4..]).unwrap(),
            RequestPrefix {
                api_key: M::API_KEY,
                api_version: v,
                correlation_id: CORR
            }
        );
        assert_eq!(
            parse_request(&frame[4..]).unwrap().client_id.as_deref(),
            CID
        );
    } else {
        assert_eq!(response_correlation_id(&frame[4..]), Some(CORR));
    }
    assert_eq!(&M::parse_body(v, &body).unwrap(), m, "body v{v}");
    assert_eq!(&M::parse_frame(v, &frame[4..]).unwrap(), m, "frame v{v}");
    frame
}

// ---------------------------------------------------------------------------------------
// Examples.

fn create_request(v: i16) -> CreateTokenRequest {
    CreateTokenRequest {
        owner: (v >= 3).then(|| user("carol")),
        renewers: vec![user("alice"), PrincipalName::new("Group", "ops")],
        max_lifetime_ms: 3_600_000,
    }
}

fn create_response(v: i16) -> CreateTokenResponse {
    CreateTokenResponse {
        error_code: 0,
        owner: user("alice"),
        requester: if v >= 3 {
            user("admin")
        } else {
            PrincipalName::default()
        },
        issue_timestamp_ms: 1_700_000_000_000,
        expiry_timestamp_ms: 1_700_086_400_000,
        max_timestamp_ms: 1_700_604_800_000,
        token_id: "AAECAwQFBgcICQoLDA0ODw".into(),
        hmac: Secret::from_slice(&DEADBEEF),
        throttle_time_ms: 5,
    }
}

fn renew_request() -> RenewTokenRequest {
    RenewTokenRequest {
        hmac: Secret::from_slice(&DEADBEEF),
        renew_period_ms: 86_400_000,
    }
}

fn expire_request() -> ExpireTokenRequest {
    ExpireTokenRequest {
        hmac: Secret::from_slice(&DEADBEEF),
        expiry_time_period_ms: -1,
    }
}

fn expiry_response() -> ExpiryResponse {
    ExpiryResponse {
        error_code: error_code::DELEGATION_TOKEN_EXPIRED,
        expiry_timestamp_ms: -1,
        throttle_time_ms: 100,
    }
}

fn described(v: i16, owner: &str, renewers: &[&str]) -> DescribedToken {
    DescribedToken {
        owner: user(owner),
        requester: if v >= 3 {
            user("admin")
        } else {
            PrincipalName::default()
        },
        issue_timestamp_ms: 1,
        expiry_timestamp_ms: 2,
        max_timestamp_ms: 3,
        token_id: "t".into(),
        hmac: Secret::from_slice(&DEADBEEF),
        renewers: renewers.iter().map(|r| user(r)).collect(),
    }
}

fn describe_response(v: i16) -> DescribeTokensResponse {
    DescribeTokensResponse {
        error_code: 0,
        tokens: vec![described(v, "alice", &["bob"])],
        throttle_time_ms: 0,
    }
}

// ---------------------------------------------------------------------------------------
// Byte-exact encodings, computed field by field from the JSON schemas.

#[test]
fn create_request_bytes() {
    let m = CreateTokenRequest {
        owner: None,
        renewers: vec![user("alice")],
        max_lifetime_ms: -1,
    };
    // v1: request header v1, classic encodings.
    let v1 = hex(concat!(
        r#"0000002b"#,                 // frame length 43 = 18 header + 25 body
        r#"0026 0001 00000007"#,       // api key 38, version 1, correlation id 7
        r#"0008 "client-1""#,          // client_id: int16 length + bytes
        r#"00000001"#,                 // renewers: int32 count 1
        r#"0004 "User" 0005 "alice""#, //   principal type, principal name (STRING)
        r#"ffffffffffffffff"#,         // max_lifetime_ms -1 (int64)
    ));
    assert_eq!(m.encode_request(1, CORR, CID).unwrap(), v1);
    assert_eq!(round_trip(&m, 1), v1);
    // v0 is the same apart from the version in the header.
    let mut v0 = v1.clone();
    v0[7] = 0;
    assert_eq!(m.encode_request(0, CORR, CID).unwrap(), v0);

    // v3: request header v2, compact encodings, the nullable owner, tagged-field sections.
    let m = CreateTokenRequest {
        owner: Some(user("carol")),
        renewers: vec![user("alice")],
        max_lifetime_ms: 3_600_000,
    };
    let v3 = hex(concat!(
        r#"00000034"#,                // frame length 52 = 19 header + 33 body
        r#"0026 0003 00000007"#,      // api key 38, version 3, correlation id 7
        r#"0008 "client-1""#,         // client_id stays a classic string in header v2
        r#"00"#,                      // header tagged fields: none
        r#"05 "User" 06 "carol""#,    // owner type, owner name (compact: length + 1)
        r#"02"#,                      // renewers: compact count 1 + 1
        r#"05 "User" 06 "alice" 00"#, //   type, name, tagged fields
        r#"000000000036ee80"#,        // max_lifetime_ms 3600000
        r#"00"#,                      // body tagged fields
    ));
    assert_eq!(round_trip(&m, 3), v3);
    // The same v3 request with a null owner: two null compact strings (00 00).
    let none = CreateTokenRequest {
        owner: None,
        ..m.clone()
    };
    let f = none.encode_request(3, CORR, CID).unwrap();
    assert_eq!(&f[4 + 19..4 + 21], &[0, 0]);
    assert_eq!(round_trip(&none, 3), f);
}

#[test]
fn create_response_bytes() {
    let v1 = hex(concat!(
        r#"0000004f"#,                      // frame length 79
        r#"00000007"#,                      // response header v0: correlation id
        r#"0000"#,                          // error_code 0
        r#"0004 "User" 0005 "alice""#,      // owner type, owner name
        r#"0000018bcfe56800"#,              // issue 1700000000000
        r#"0000018bd50bc400"#,              // expiry 1700086400000
        r#"0000018bf3f1ec00"#,              // max 1700604800000
        r#"0016 "AAECAwQFBgcICQoLDA0ODw""#, // token id, 22 bytes
        r#"00000004 deadbeef"#,             // hmac: BYTES (int32 length)
        r#"00000005"#,                      // throttle_time_ms 5
    ));
    assert_eq!(round_trip(&create_response(1), 1), v1);
    let v3 = hex(concat!(
        r#"00000056"#,                                           // frame length 86
        r#"00000007 00"#, // response header v1: correlation id, tagged fields
        r#"0000"#,        // error_code
        r#"05 "User" 06 "alice""#, // owner (compact strings)
        r#"05 "User" 06 "admin""#, // token requester (v3+)
        r#"0000018bcfe56800 0000018bd50bc400 0000018bf3f1ec00"#, // issue, expiry, max
        r#"17 "AAECAwQFBgcICQoLDA0ODw""#, // token id: compact length 22 + 1
        r#"05 deadbeef"#, // hmac: compact bytes 4 + 1
        r#"00000005"#,    // throttle
        r#"00"#,          // tagged fields
    ));
    assert_eq!(round_trip(&create_response(3), 3), v3);
    // v2 is v3 without the requester.
    let v2 = create_response(2).encode_response(2, CORR).unwrap();
    assert_eq!(v2.len(), v3.len() - 11);
    // Frame offsets in v3: corr 4..8, tags 8, error 9..11, owner 11..22, requester 22..33.
    assert_eq!(&v2[4..], [&v3[4..22], &v3[33..]].concat().as_slice());
}

#[test]
fn renew_and_expire_request_bytes() {
    let renew_v1 = hex(concat!(
        r#"00000022"#,                           // frame length 34 = 18 + 16
        r#"0027 0001 00000007 0008 "client-1""#, // api key 39, v1, header v1
        r#"00000004 deadbeef"#,                  // hmac (BYTES)
        r#"0000000005265c00"#,                   // renew_period_ms 86400000
    ));
    assert_eq!(round_trip(&renew_request(), 1), renew_v1);
    let renew_v2 = hex(concat!(
        r#"00000021"#,                              // frame length 33 = 19 + 14
        r#"0027 0002 00000007 0008 "client-1" 00"#, // header v2
        r#"05 deadbeef"#,                           // hmac (COMPACT_BYTES)
        r#"0000000005265c00"#,                      // renew_period_ms
        r#"00"#,                                    // tagged fields
    ));
    assert_eq!(round_trip(&renew_request(), 2), renew_v2);

    let expire_v0 = hex(concat!(
        r#"00000022"#,
        r#"0028 0000 00000007 0008 "client-1""#, // api key 40, v0
        r#"00000004 deadbeef"#,
        r#"ffffffffffffffff"#, // expiry_time_period_ms -1: expire now
    ));
    assert_eq!(round_trip(&expire_request(), 0), expire_v0);
    let expire_v2 = hex(concat!(
        r#"00000021"#,
        r#"0028 0002 00000007 0008 "client-1" 00"#,
        r#"05 deadbeef ffffffffffffffff 00"#,
    ));
    assert_eq!(round_trip(&expire_request(), 2), expire_v2);
}

#[test]
fn expiry_response_bytes() {
    let v1 = hex(concat!(
        r#"00000012"#,         // frame length 18
        r#"00000007"#,         // header v0
        r#"0042"#,             // error 66 DELEGATION_TOKEN_EXPIRED
        r#"ffffffffffffffff"#, // expiry_timestamp_ms -1
        r#"00000064"#,         // throttle 100
    ));
    assert_eq!(round_trip(&expiry_response(), 1), v1);
    let v2 = hex(r#"00000014 00000007 00 0042 ffffffffffffffff 00000064 00"#);
    assert_eq!(round_trip(&expiry_response(), 2), v2);
    // Renew and expire responses share the type (and the bytes).
    let r: RenewTokenResponse = expiry_response();
    let e: ExpireTokenResponse = r.clone();
    assert_eq!(
        r.encode_response(2, CORR).unwrap(),
        e.encode_response(2, CORR).unwrap()
    );
}

#[test]
fn describe_request_bytes() {
    let all = DescribeTokensRequest { owners: None };
    let v1 = hex(concat!(
        r#"00000016"#,                           // frame length 22
        r#"0029 0001 00000007 0008 "client-1""#, // api key 41, v1
        r#"ffffffff"#,                           // owners: null array (all tokens)
    ));
    assert_eq!(round_trip(&all, 1), v1);
    let v3 = hex(concat!(
        r#"00000015"#,                              // frame length 21
        r#"0029 0003 00000007 0008 "client-1" 00"#, // header v2
        r#"00"#,                                    // owners: null compact array
        r#"00"#,                                    // tagged fields
    ));
    assert_eq!(round_trip(&all, 3), v3);
    let some = DescribeTokensRequest {
        owners: Some(vec![user("alice")]),
    };
    let v2 = hex(concat!(
        r#"00000021"#, // frame length 33
        r#"0029 0002 00000007 0008 "client-1" 00"#,
        r#"02"#,                      // owners: compact count 1 + 1
        r#"05 "User" 06 "alice" 00"#, //   type, name, tagged fields
        r#"00"#,
    ));
    assert_eq!(round_trip(&some, 2), v2);
    // An empty list is not null: it describes no token.
    let none = DescribeTokensRequest {
        owners: Some(vec![]),
    };
    assert_eq!(&round_trip(&none, 1)[4 + 18..], &[0, 0, 0, 0]);
    assert_eq!(&round_trip(&none, 2)[4 + 19..], &[1, 0]);
}

#[test]
fn describe_response_bytes() {
    let v1 = hex(concat!(
        r#"0000004d"#,                                           // frame length 77
        r#"00000007"#,                                           // header v0
        r#"0000"#,                                               // error_code
        r#"00000001"#,                                           // tokens: count 1
        r#"0004 "User" 0005 "alice""#,                           //   owner
        r#"0000000000000001 0000000000000002 0000000000000003"#, // issue, expiry, max
        r#"0001 "t""#,                                           //   token id
        r#"00000004 deadbeef"#,                                  //   hmac
        r#"00000001 0004 "User" 0003 "bob""#,                    //   renewers: count 1, type, name
        r#"00000000"#,                                           // throttle
    ));
    assert_eq!(round_trip(&describe_response(1), 1), v1);
    let v3 = hex(concat!(
        r#"0000004e"#,             // frame length 78
        r#"00000007 00"#,          // header v1
        r#"0000"#,                 // error_code
        r#"02"#,                   // tokens: compact count 1 + 1
        r#"05 "User" 06 "alice""#, //   owner
        r#"05 "User" 06 "admin""#, //   token requester (v3+)
        r#"0000000000000001 0000000000000002 0000000000000003"#,
        r#"02 "t""#,                   //   token id
        r#"05 deadbeef"#,              //   hmac
        r#"02 05 "User" 04 "bob" 00"#, //   renewers: count, type, name, tagged fields
        r#"00"#,                       //   token tagged fields
        r#"00000000"#,                 // throttle
        r#"00"#,                       // tagged fields
    ));
    assert_eq!(round_trip(&describe_response(3), 3), v3);
}

// ---------------------------------------------------------------------------------------
// Every version of every message.

#[test]
fn every_version_round_trips() {
    for v in 0..=3 {
        round_trip(&create_request(v), v);
        round_trip(&create_response(v), v);
        round_trip(&describe_response(v), v);
        round_trip(
            &DescribeTokensResponse {
                error_code: error_code::DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                tokens: vec![],
                throttle_time_ms: 1,
            },
            v,
        );
        round_trip(
            &DescribeTokensResponse {
                error_code: 0,
                tokens: vec![described(v, "a", &[]), described(v, "b", &["c", "d"])],
                throttle_time_ms: 2,
            },
            v,
        );
        for owners in [None, Some(vec![]), Some(vec![user("a"), user("b")])] {
            round_trip(&DescribeTokensRequest { owners }, v);
        }
        // Defaults (empty strings, empty HMAC) survive too.
        round_trip(&CreateTokenResponse::default(), v);
        round_trip(&CreateTokenRequest::default(), v);
    }
    for v in 0..=2 {
        round_trip(&renew_request(), v);
        round_trip(&expire_request(), v);
        round_trip(&expiry_response(), v);
        round_trip(&RenewTokenRequest::default(), v);
    }
    // Version 0 and version 1 are the same on the wire (only the header's version differs).
    fn same_v0_v1<M: Msg>(m: &M) {
        assert_eq!(m.body(0).unwrap(), m.body(1).unwrap());
        let (f0, f1) = (m.frame(0, 1, None).unwrap(), m.frame(1, 1, None).unwrap());
        if M::REQUEST {
            assert_eq!((&f0[..6], &f0[8..]), (&f1[..6], &f1[8..]));
        } else {
            assert_eq!(f0, f1);
        }
    }
    same_v0_v1(&create_request(1));
    same_v0_v1(&create_response(1));
    same_v0_v1(&renew_request());
    same_v0_v1(&expire_request());
    same_v0_v1(&expiry_response());
    same_v0_v1(&DescribeTokensRequest { owners: None });
    same_v0_v1(&describe_response(1));
}

#[test]
fn unicode_lengths_are_bytes() {
    let m = DescribeTokensRequest {
        owners: Some(vec![user("josé")]),
    };
    let body = m.encode_body(1).unwrap();
    assert_eq!(body, hex(r#"00000001 0004 "User" 0005 6a6f73c3a9"#));
    assert_eq!(
        m.encode_body(2).unwrap(),
        hex(r#"02 05 "User" 06 6a6f73c3a9 00 00"#)
    );
    round_trip(&m, 2);
}

#[test]
fn tagged_fields_are_skipped() {
    // A v2 request whose header and body carry unknown tagged fields (tag 5, 2 bytes; tag
    // 200, 0 bytes): parse_request skips the header's, the body parser the body's.
    let frame = hex(concat!(
        r#"0027 0002 00000007 ffff"#,      // api 39 v2, null client id
        r#"01 05 02 abcd"#,                // header tagged fields: one field
        r#"05 deadbeef 0000000005265c00"#, // hmac, renew period
        r#"02 05 02 abcd c801 00"#,        // body tagged fields: two fields
    ));
    let req = parse_request(&frame).unwrap();
    assert_eq!(req.client_id, None);
    assert_eq!(
        RenewTokenRequest::parse_request_body(2, req.body).unwrap(),
        renew_request()
    );
    // Also inside array elements of a response.
    let frame = hex(concat!(
        r#"00000007 00 0000"#,        // header v1, error 0
        r#"02 05 "User" 06 "alice""#, // one token, owner
        r#"05 "User" 06 "admin""#,    // requester
        r#"0000000000000001 0000000000000002 0000000000000003 02 "t" 05 deadbeef"#,
        r#"02 05 "User" 04 "bob" 01 00 01 ff"#, // a renewer with tag 0 (1 byte)
        r#"01 07 00"#,                          // token: tag 7, empty
        r#"00000000 00"#,
    ));
    assert_eq!(
        DescribeTokensResponse::parse_response(3, &frame).unwrap(),
        describe_response(3)
    );
}

// ---------------------------------------------------------------------------------------
// Kafka's own bytes.

#[test]
fn kafka_clients_vectors() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/token_messages.json"
    ))
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["kafka_clients_version"], "4.4.0");
    let corr = doc["correlation_id"].as_i64().unwrap() as i32;
    let cid = doc["client_id"].as_str().unwrap();
    let hmac = Secret::new(base64_decode(
        "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==",
    ));
    let token_id = "AAECAwQFBgcICQoLDA0ODw".to_string();
    let ts = (1_700_000_000_000, 1_700_086_400_000, 1_700_604_800_000);

    fn check<M: Msg>(m: M, v: i16, corr: i32, cid: &str, body: &[u8], frame: &[u8], what: &str) {
        assert_eq!(m.body(v).unwrap(), body, "{what} v{v}: body");
        assert_eq!(
            m.frame(v, corr, Some(cid)).unwrap(),
            frame,
            "{what} v{v}: frame"
        );
        assert_eq!(
            M::parse_body(v, body).unwrap(),
            m,
            "{what} v{v}: parse body"
        );
        assert_eq!(
            M::parse_frame(v, &frame[4..]).unwrap(),
            m,
            "{what} v{v}: parse frame"
        );
        // Version 0 (gone from Kafka 4) has the same body as version 1.
        if v == 1 {
            assert_eq!(M::parse_body(0, body).unwrap(), m);
        }
    }

    let mut seen = 0;
    for e in doc["messages"].as_array().unwrap() {
        let name = e["message"].as_str().unwrap();
        let example = e["example"].as_str().unwrap();
        let v = e["version"].as_i64().unwrap() as i16;
        let body = unhex(e["body"].as_str().unwrap());
        let frame = unhex(e["frame"].as_str().unwrap());
        let what = format!("{name}/{example}");
        let requester = |p: &str| {
            if v >= 3 {
                user(p)
            } else {
                PrincipalName::default()
            }
        };
        match (name, example) {
            ("CreateDelegationTokenRequest", "create_no_owner") => check(
                CreateTokenRequest {
                    owner: None,
                    renewers: vec![user("alice"), user("bob")],
                    max_lifetime_ms: -1,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("CreateDelegationTokenRequest", "create_with_owner") => check(
                CreateTokenRequest {
                    owner: Some(user("carol")),
                    renewers: vec![user("josé")],
                    max_lifetime_ms: 3_600_000,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("CreateDelegationTokenRequest", "create_java_default_owner") => {
                // The Java admin client's v3 request without an owner: two empty strings,
                // which Kafka reads as "the requester".
                let m = CreateTokenRequest {
                    owner: Some(PrincipalName::default()),
                    renewers: vec![],
                    max_lifetime_ms: 604_800_000,
                };
                assert_eq!(m.effective_owner(), None);
                check(m, v, corr, cid, &body, &frame, &what)
            }
            ("CreateDelegationTokenResponse", "create_ok") => check(
                CreateTokenResponse {
                    error_code: 0,
                    owner: user("alice"),
                    requester: requester("admin"),
                    issue_timestamp_ms: ts.0,
                    expiry_timestamp_ms: ts.1,
                    max_timestamp_ms: ts.2,
                    token_id: token_id.clone(),
                    hmac: hmac.clone(),
                    throttle_time_ms: 5,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("CreateDelegationTokenResponse", "create_error") => check(
                CreateTokenResponse {
                    error_code: error_code::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                    owner: user("alice"),
                    requester: requester("alice"),
                    issue_timestamp_ms: -1,
                    expiry_timestamp_ms: -1,
                    max_timestamp_ms: -1,
                    token_id: String::new(),
                    hmac: Secret::default(),
                    throttle_time_ms: 0,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("RenewDelegationTokenRequest", "renew") => check(
                RenewTokenRequest {
                    hmac: hmac.clone(),
                    renew_period_ms: 86_400_000,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("ExpireDelegationTokenRequest", "expire") => check(
                ExpireTokenRequest {
                    hmac: hmac.clone(),
                    expiry_time_period_ms: -1,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("RenewDelegationTokenResponse", "expiry_ok") => check(
                RenewTokenResponse {
                    error_code: 0,
                    expiry_timestamp_ms: 1_700_172_800_000,
                    throttle_time_ms: 0,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("ExpireDelegationTokenResponse", "expiry_error") => check(
                ExpireTokenResponse {
                    error_code: error_code::DELEGATION_TOKEN_EXPIRED,
                    expiry_timestamp_ms: -1,
                    throttle_time_ms: 100,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("DescribeDelegationTokenRequest", "describe_all") => check(
                DescribeTokensRequest { owners: None },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("DescribeDelegationTokenRequest", "describe_owners") => check(
                DescribeTokensRequest {
                    owners: Some(vec![user("alice"), user("josé")]),
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("DescribeDelegationTokenRequest", "describe_none") => check(
                DescribeTokensRequest {
                    owners: Some(vec![]),
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("DescribeDelegationTokenResponse", "describe_two") => check(
                java_describe_two(v, &hmac),
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            ("DescribeDelegationTokenResponse", "describe_error") => check(
                DescribeTokensResponse {
                    error_code: error_code::DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                    tokens: vec![],
                    throttle_time_ms: 0,
                },
                v,
                corr,
                cid,
                &body,
                &frame,
                &what,
            ),
            other => panic!("unknown vector {other:?}"),
        }
        seen += 1;
    }
    assert_eq!(seen, 34);

    // Where Kafka's write throws UnsupportedVersionException, ksasl refuses too.
    let rejected = doc["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 6);
    for e in rejected {
        assert_eq!(e["exception"], "UnsupportedVersionException");
        let v = e["version"].as_i64().unwrap() as i16;
        let err = match (
            e["message"].as_str().unwrap(),
            e["example"].as_str().unwrap(),
        ) {
            ("CreateDelegationTokenRequest", "create_with_owner") => CreateTokenRequest {
                owner: Some(user("carol")),
                renewers: vec![user("josé")],
                max_lifetime_ms: 3_600_000,
            }
            .encode_request(v, corr, Some(cid)),
            ("CreateDelegationTokenResponse", "create_ok") => CreateTokenResponse {
                requester: user("admin"),
                ..create_response(3)
            }
            .encode_response(v, corr),
            ("DescribeDelegationTokenResponse", "describe_two") => {
                java_describe_two(3, &hmac).encode_response(v, corr)
            }
            other => panic!("unknown rejection {other:?}"),
        };
        assert_eq!(err.unwrap_err().code(), ErrorCode::UnsupportedVersion);
    }
}

fn java_describe_two(v: i16, hmac: &Secret) -> DescribeTokensResponse {
    let req = |p: &str| {
        if v >= 3 {
            user(p)
        } else {
            PrincipalName::default()
        }
    };
    DescribeTokensResponse {
        error_code: 0,
        tokens: vec![
            DescribedToken {
                owner: user("alice"),
                requester: req("admin"),
                issue_timestamp_ms: 1_700_000_000_000,
                expiry_timestamp_ms: 1_700_086_400_000,
                max_timestamp_ms: 1_700_604_800_000,
                token_id: "AAECAwQFBgcICQoLDA0ODw".into(),
                hmac: hmac.clone(),
                renewers: vec![user("bob")],
            },
            DescribedToken {
                owner: user("bob"),
                requester: req("bob"),
                issue_timestamp_ms: 1,
                expiry_timestamp_ms: 2,
                max_timestamp_ms: 3,
                token_id: "tok2".into(),
                hmac: Secret::from_slice(&[1, 2, 3]),
                renewers: vec![],
            },
        ],
        throttle_time_ms: 7,
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

// ---------------------------------------------------------------------------------------
// Refusals.

#[test]
fn versions_out_of_range_are_refused() {
    fn refused<M: Msg>(m: &M) {
        for v in [-1, M::MAX + 1, i16::MAX] {
            assert_eq!(m.body(v).unwrap_err().code(), ErrorCode::UnsupportedVersion);
            assert_eq!(
                m.frame(v, 1, None).unwrap_err().code(),
                ErrorCode::UnsupportedVersion
            );
            // Even a body that would be valid at the highest version.
            let good = m.body(M::MAX).unwrap();
            let e = M::parse_body(v, &good).unwrap_err();
            assert_eq!(e.code(), ErrorCode::UnsupportedVersion);
            assert!(
                e.message().contains(&format!("version {v}")),
                "{}",
                e.message()
            );
        }
    }
    refused(&create_request(3));
    refused(&create_response(3));
    refused(&renew_request());
    refused(&expire_request());
    refused(&expiry_response());
    refused(&DescribeTokensRequest::default());
    refused(&describe_response(3));
    let e = CreateTokenResponse::parse_response(4, &[0; 64]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnsupportedVersion);
    assert_eq!(
        TokenRequest::parse_body(40, 3, Reader::new(&[]))
            .unwrap_err()
            .code(),
        ErrorCode::UnsupportedVersion
    );
    assert_eq!(
        TokenRequest::parse_body(36, 0, Reader::new(&[]))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
}

#[test]
fn fields_a_version_lacks_are_refused() {
    for v in 0..=2 {
        // An owner before v3.
        let e = CreateTokenRequest {
            owner: Some(user("carol")),
            ..Default::default()
        }
        .encode_request(v, 1, None)
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedVersion);
        assert!(e.message().contains("owner") && e.message().contains(&format!("version {v}")));
        // Half an owner is still an owner.
        let half = CreateTokenRequest {
            owner: Some(PrincipalName::new("User", "")),
            ..Default::default()
        };
        assert!(half.encode_body(v).is_err());
        // Kafka's default (empty strings) is not a value: it encodes, and reads back as None.
        let empty = CreateTokenRequest {
            owner: Some(PrincipalName::default()),
            ..Default::default()
        };
        let body = empty.encode_body(v).unwrap();
        assert_eq!(body, CreateTokenRequest::default().encode_body(v).unwrap());
        assert_eq!(
            CreateTokenRequest::parse_request_body(v, Reader::new(&body))
                .unwrap()
                .owner,
            None
        );
        // A requester before v3, in both responses.
        let e = create_response(3).encode_response(v, 1).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedVersion);
        assert!(e.message().contains("requester"));
        let e = describe_response(3).encode_body(v).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedVersion);
        let half = CreateTokenResponse {
            requester: PrincipalName::new("", "admin"),
            ..create_response(v)
        };
        assert!(half.encode_body(v).is_err());
    }
}

#[test]
fn owner_null_handling() {
    // v3 body: owner type, owner name, empty renewers, lifetime -1, tags.
    let body = |t: &str, n: &str| hex(&format!("{t} {n} 01 ffffffffffffffff 00"));
    let parse = |b: Vec<u8>| CreateTokenRequest::parse_request_body(3, Reader::new(&b));
    assert_eq!(parse(body("00", "00")).unwrap().owner, None);
    // A null name makes the type irrelevant (Kafka uses the requester).
    assert_eq!(parse(body(r#"05"User""#, "00")).unwrap().owner, None);
    // A null type with a name is refused.
    let e = parse(body("00", r#"06"carol""#)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidRequest);
    // Empty strings are kept as they are, and mean "the requester".
    let r = parse(body("01", "01")).unwrap();
    assert_eq!(r.owner, Some(PrincipalName::default()));
    assert_eq!(r.effective_owner(), None);
    let r = parse(body(r#"05"User""#, r#"06"carol""#)).unwrap();
    assert_eq!(r.effective_owner(), Some(&user("carol")));
}

#[test]
fn nulls_the_schemas_forbid_are_refused() {
    fn bad<M: Msg>(v: i16, body: &str) {
        let e = M::parse_body(v, &hex(body)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest, "{body}: {e}");
    }
    // Null HMAC (BYTES -1, COMPACT_BYTES 0): the codec's Reader reads those as empty.
    bad::<RenewTokenRequest>(1, "ffffffff 0000000000000001");
    bad::<RenewTokenRequest>(2, "00 0000000000000001 00");
    bad::<ExpireTokenRequest>(0, "ffffffff 0000000000000001");
    // Null renewers array, null renewer name.
    bad::<CreateTokenRequest>(1, "ffffffff ffffffffffffffff");
    bad::<CreateTokenRequest>(2, "00 ffffffffffffffff 00");
    bad::<CreateTokenRequest>(1, r#"00000001 0004"User" ffff ffffffffffffffff"#);
    // Null token id, null owner in a response, null tokens array.
    bad::<CreateTokenResponse>(
        1,
        concat!(
            r#"0000 0004"User" 0001"a" 0000000000000001 0000000000000002 0000000000000003"#,
            r#" ffff 00000000 00000000"#
        ),
    );
    bad::<CreateTokenResponse>(2, "0000 00 00");
    bad::<DescribeTokensResponse>(1, "0000 ffffffff 00000000");
    bad::<DescribeTokensResponse>(3, "0000 00 00000000 00");
    // A negative length that is not -1.
    bad::<DescribeTokensRequest>(1, "fffffffe");
    bad::<RenewTokenRequest>(1, "fffffffe 0000000000000001");
}

#[test]
fn malformed_input_is_refused() {
    fn all_prefixes_fail<M: Msg>(m: &M, v: i16) {
        let body = m.body(v).unwrap();
        for n in 0..body.len() {
            let e = M::parse_body(v, &body[..n]).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRequest);
        }
        let frame = m.frame(v, 1, Some("c")).unwrap();
        for n in 0..frame.len() - 4 {
            assert!(M::parse_frame(v, &frame[4..4 + n]).is_err());
        }
        // Trailing garbage.
        let mut longer = body.clone();
        longer.push(0);
        let e = M::parse_body(v, &longer).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        assert!(e.message().contains("unexpected bytes"), "{}", e.message());
    }
    for v in 0..=3 {
        all_prefixes_fail(&create_request(v), v);
        all_prefixes_fail(&create_response(v), v);
        all_prefixes_fail(&describe_response(v), v);
        all_prefixes_fail(
            &DescribeTokensRequest {
                owners: Some(vec![user("x")]),
            },
            v,
        );
    }
    for v in 0..=2 {
        all_prefixes_fail(&renew_request(), v);
        all_prefixes_fail(&expire_request(), v);
        all_prefixes_fail(&expiry_response(), v);
    }
    // Invalid UTF-8 in a principal name.
    let e =
        DescribeTokensRequest::parse_request_body(1, Reader::new(&hex("00000001 0001 55 0001 ff")))
            .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidRequest);
    // An array count larger than the message.
    let e = DescribeTokensRequest::parse_request_body(1, Reader::new(&hex("7fffffff 0000")))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidRequest);
    let e = DescribeTokensRequest::parse_request_body(2, Reader::new(&hex("ffffffff07 00")))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidRequest);
    // A compact string longer than Kafka allows (32768 bytes).
    let mut b = hex("0000 02 818002"); // error, one token, owner type: uvarint 32768 + 1
    b.extend(std::iter::repeat(b'a').take(32768));
    let e = DescribeTokensResponse::parse_response_body(2, Reader::new(&b)).unwrap_err();
    assert!(e.message().contains("32767"), "{}", e.message());
    // A flexible response parsed as if it were not (and the reverse) fails.
    let f = describe_response(3).encode_response(2, 1);
    assert!(f.is_err(), "requester at v2");
    let f = describe_response(2).encode_response(2, 1).unwrap();
    assert!(DescribeTokensResponse::parse_response(1, &f[4..]).is_err());
    let f = describe_response(1).encode_response(1, 1).unwrap();
    assert!(DescribeTokensResponse::parse_response(2, &f[4..]).is_err());
}

#[test]
fn oversized_values_are_refused_at_encode_time() {
    let long = "x".repeat(32768);
    let e = DescribeTokensRequest {
        owners: Some(vec![user(&long)]),
    }
    .encode_body(1)
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("too long"));
    let e = CreateTokenResponse {
        token_id: long.clone(),
        ..Default::default()
    }
    .encode_response(2, 1)
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let e = renew_request()
        .encode_request(1, 1, Some(&long))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    // The largest legal string is fine.
    let ok = "y".repeat(32767);
    round_trip(
        &DescribeTokensRequest {
            owners: Some(vec![user(&ok)]),
        },
        3,
    );
}

// ---------------------------------------------------------------------------------------
// Constants, dispatch, secrets.

#[test]
fn error_codes_and_supported_table() {
    use error_code::*;
    let codes = [
        (
            DELEGATION_TOKEN_AUTH_DISABLED,
            61,
            "DELEGATION_TOKEN_AUTH_DISABLED",
        ),
        (DELEGATION_TOKEN_NOT_FOUND, 62, "DELEGATION_TOKEN_NOT_FOUND"),
        (
            DELEGATION_TOKEN_OWNER_MISMATCH,
            63,
            "DELEGATION_TOKEN_OWNER_MISMATCH",
        ),
        (
            DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
            64,
            "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
        ),
        (
            DELEGATION_TOKEN_AUTHORIZATION_FAILED,
            65,
            "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
        ),
        (DELEGATION_TOKEN_EXPIRED, 66, "DELEGATION_TOKEN_EXPIRED"),
        (INVALID_PRINCIPAL_TYPE, 67, "INVALID_PRINCIPAL_TYPE"),
        (NONE, 0, "NONE"),
    ];
    for (c, n, s) in codes {
        assert_eq!(c, n);
        assert_eq!(name(c), Some(s));
    }
    assert_eq!(name(68), None);
    let t: Vec<(i16, i16, i16)> = SUPPORTED
        .iter()
        .map(|r| (r.api_key, r.min_version, r.max_version))
        .collect();
    assert_eq!(t, [(38, 0, 3), (39, 0, 2), (40, 0, 2), (41, 0, 3)]);
    let t: Vec<(i16, i16, i16)> = SUPPORTED_KAFKA_4
        .iter()
        .map(|r| (r.api_key, r.min_version, r.max_version))
        .collect();
    assert_eq!(t, [(38, 1, 3), (39, 1, 2), (40, 1, 2), (41, 1, 3)]);
    for r in SUPPORTED {
        assert!(is_token_api(r.api_key));
        for v in 0..=r.max_version {
            assert_eq!(is_flexible(r.api_key, v), v >= 2);
        }
    }
    // The table can go straight into an ApiVersions answer.
    let answer = ksasl::kafka::messages::ApiVersionsResponse {
        error_code: 0,
        api_keys: SUPPORTED.to_vec(),
        throttle_time_ms: 0,
    };
    assert_eq!(answer.max_version(DESCRIBE_DELEGATION_TOKEN), Some(3));
}

#[test]
fn server_dispatch() {
    let frames = [
        create_request(3).encode_request(3, 1, CID).unwrap(),
        renew_request().encode_request(2, 2, CID).unwrap(),
        expire_request().encode_request(1, 3, CID).unwrap(),
        DescribeTokensRequest::default()
            .encode_request(0, 4, CID)
            .unwrap(),
    ];
    let mut got = vec![];
    for f in &frames {
        let req = parse_request(&f[4..]).unwrap();
        assert!(is_token_api(req.prefix.api_key));
        let r =
            TokenRequest::parse_body(req.prefix.api_key, req.prefix.api_version, req.body).unwrap();
        assert_eq!(r.api_key(), req.prefix.api_key);
        got.push(r);
    }
    assert_eq!(
        got,
        [
            TokenRequest::Create(create_request(3)),
            TokenRequest::Renew(renew_request()),
            TokenRequest::Expire(expire_request()),
            TokenRequest::Describe(DescribeTokensRequest::default()),
        ]
    );
    assert_eq!(PrincipalName::user("a").to_string(), "User:a");
    assert_eq!(
        PrincipalName::from(&ksasl::Principal::user("a")),
        PrincipalName::user("a")
    );
    let back = ksasl::Principal::from(&PrincipalName::new("Group", "g"));
    assert_eq!(
        (back.principal_type.as_str(), back.name.as_str()),
        ("Group", "g")
    );
    assert!(!back.token_authenticated);
}

#[test]
fn debug_output_hides_hmacs() {
    let secret = [0x5a_u8; 64];
    let hex_secret: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let debug = format!(
        "{:?} {:?} {:?} {:?}",
        CreateTokenResponse {
            hmac: Secret::from_slice(&secret),
            ..Default::default()
        },
        RenewTokenRequest {
            hmac: Secret::from_slice(&secret),
            renew_period_ms: 0
        },
        ExpireTokenRequest {
            hmac: Secret::from_slice(&secret),
            expiry_time_period_ms: 0
        },
        DescribedToken {
            hmac: Secret::from_slice(&secret),
            ..Default::default()
        }
    );
    assert!(!debug.contains("90, 90"), "{debug}");
    assert!(!debug.contains(&hex_secret[..16]));
    assert!(debug.contains("redacted"));
}

// ---------------------------------------------------------------------------------------
// Random input.

/// Runs every parser, every version (and some out of range), over `bytes` as a body and as
/// a frame; whatever parses must re-encode and parse back the same.
fn parse_everything(bytes: &[u8]) {
    fn one<M: Msg>(bytes: &[u8]) {
        for v in -1..=M::MAX + 1 {
            for parsed in [M::parse_body(v, bytes), parse_frame_quiet::<M>(v, bytes)]
                .into_iter()
                .flatten()
            {
                let body = parsed.body(v).expect("what parses re-encodes");
                assert_eq!(M::parse_body(v, &body).unwrap(), parsed);
            }
        }
    }
    one::<CreateTokenRequest>(bytes);
    one::<CreateTokenResponse>(bytes);
    one::<RenewTokenRequest>(bytes);
    one::<ExpireTokenRequest>(bytes);
    one::<ExpiryResponse>(bytes);
    one::<DescribeTokensRequest>(bytes);
    one::<DescribeTokensResponse>(bytes);
    for key in 36..=42 {
        for v in -1..=4 {
            let _ = TokenRequest::parse_body(key, v, Reader::new(bytes));
        }
    }
    if let Ok(req) = parse_request(bytes) {
        let _ = TokenRequest::parse_body(req.prefix.api_key, req.prefix.api_version, req.body);
    }
}

/// parse_frame without the test-only header assertions.
fn parse_frame_quiet<M: Msg>(v: i16, frame: &[u8]) -> ksasl::Result<M> {
    if M::REQUEST {
        let req = parse_request(frame)?;
        if (req.prefix.api_key, req.prefix.api_version) != (M::API_KEY, v) {
            return M::parse_body(v, req.body.rest());
        }
        M::parse_frame(v, frame)
    } else {
        M::parse_frame(v, frame)
    }
}

fn valid_encodings() -> Vec<Vec<u8>> {
    let mut out = vec![];
    for v in 0..=3 {
        out.push(create_request(v).body(v).unwrap());
        out.push(create_response(v).body(v).unwrap());
        out.push(describe_response(v).body(v).unwrap());
        out.push(create_request(v).frame(v, 1, CID).unwrap()[4..].to_vec());
        out.push(describe_response(v).frame(v, 1, None).unwrap()[4..].to_vec());
        out.push(
            DescribeTokensRequest {
                owners: Some(vec![user("a")]),
            }
            .body(v)
            .unwrap(),
        );
    }
    for v in 0..=2 {
        out.push(renew_request().body(v).unwrap());
        out.push(expire_request().frame(v, 1, CID).unwrap()[4..].to_vec());
        out.push(expiry_response().body(v).unwrap());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..192)) {
        parse_everything(&bytes);
    }

    #[test]
    fn mutated_messages_never_panic(which in any::<prop::sample::Index>(),
                                    edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
                                    cut in any::<prop::sample::Index>()) {
        let all = valid_encodings();
        let mut bytes = which.get(&all).clone();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        parse_everything(&bytes);
        let n = cut.index(bytes.len() + 1);
        parse_everything(&bytes[..n]);
    }
}
