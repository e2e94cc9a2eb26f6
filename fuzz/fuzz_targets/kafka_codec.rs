//! The Kafka codec: request headers and bodies of every request ksasl reads (ApiVersions,
//! SaslHandshake, SaslAuthenticate, the four delegation-token APIs), every response it reads
//! (the same APIs), KIP-554's two SCRAM credential APIs served by a credential store, the
//! frame splitter (legacy raw frames included), the low-level reader,
//! the answers built from a request (ApiVersions, ILLEGAL_SASL_STATE, Kafka 4.4's refusals of
//! other APIs during an exchange, Metadata included) and the delegation-token service. The
//! first byte picks the area. Whatever decodes must encode again to the same message.
#![no_main]

use std::fmt::Debug;

use ksasl::kafka::codec::{
    decode_body, encode_body, encode_request, is_flexible, Decoder, Message, Reader, RequestHeader,
};
use ksasl::kafka::delegation_tokens::*;
use ksasl::kafka::messages::*;
use ksasl::kafka::scram_credentials::*;
use ksasl::kafka::server::{ServerAction, ServerConnection};
use ksasl::mech::{PLAIN, SCRAM_SHA_256};
use ksasl::random::SharedRandom;
use ksasl::token::{
    expiry_from_response, token_from_create_response, tokens_from_describe_response,
    TokenAuthority, TokenConfig,
};
use ksasl::*;
use ksasl_fuzz::{no_panic, server_config, split_frames, FixedRandom, T0};
use libfuzzer_sys::fuzz_target;

/// A decoded message encodes, and the encoding decodes to the same message.
fn round_trip<M: Message + PartialEq + Debug>(m: &M, version: i16) {
    let body = encode_body(m, version).expect("a decoded message encodes");
    let d = Decoder {
        r: Reader::new(&body),
        flexible: is_flexible(M::API_KEY, version),
    };
    let again: M = decode_body(version, d).expect("an encoded message decodes");
    assert_eq!(&again, m, "{} v{version} does not round-trip", M::NAME);
}

fn body<M: Message + PartialEq + Debug>(version: i16, d: Decoder<'_>) {
    match decode_body::<M>(version, d) {
        Ok(m) => round_trip(&m, version),
        Err(e) => no_panic(&e),
    }
}

fn request(frame: &[u8]) {
    let Ok((h, d)) = RequestHeader::parse(frame) else {
        return;
    };
    let prefix = RequestPrefix::parse(frame).expect("a parsed header has a prefix");
    assert_eq!(
        (prefix.api_key, prefix.api_version, prefix.correlation_id),
        (h.api_key, h.api_version, h.correlation_id)
    );
    let v = h.api_version;
    match h.api_key {
        API_VERSIONS => body::<ApiVersionsRequest>(v, d),
        SASL_HANDSHAKE => body::<SaslHandshakeRequest>(v, d),
        SASL_AUTHENTICATE => body::<SaslAuthenticateRequest>(v, d),
        k if is_token_api(k) => match TokenRequest::parse_body(k, v, d.r) {
            Ok(TokenRequest::Create(m)) => round_trip(&m, v),
            Ok(TokenRequest::Renew(m)) => round_trip(&m, v),
            Ok(TokenRequest::Expire(m)) => round_trip(&m, v),
            Ok(TokenRequest::Describe(m)) => round_trip(&m, v),
            Err(e) => no_panic(&e),
        },
        k if is_scram_credentials_api(k) => {
            match k {
                DESCRIBE_USER_SCRAM_CREDENTIALS => body::<DescribeScramRequest>(v, d),
                _ => body::<AlterScramRequest>(v, d),
            }
            // KIP-554 served by a store with two users: the answer is a response of the
            // request's API, with its correlation id, or the request is refused cleanly.
            let store = CredentialStore::new();
            for (user, m) in [("alice", ScramMechanism::Sha256), ("bob", ScramMechanism::Sha512)] {
                let key = vec![7u8; m.hash_len()];
                let c = ScramCredential::new(m, b"salt".to_vec(), key.clone(), key, 4096);
                store.set_scram(user, c.unwrap()).unwrap();
            }
            match store.handle_scram_request(frame) {
                Ok(answer) => {
                    assert_eq!(response_correlation_id(&answer[4..]), Some(h.correlation_id));
                    if k == DESCRIBE_USER_SCRAM_CREDENTIALS {
                        DescribeScramResponse::parse_response(&answer[4..]).unwrap();
                    } else {
                        AlterScramResponse::parse_response(&answer[4..]).unwrap();
                    }
                }
                Err(e) => no_panic(&e),
            }
        }
        _ => {}
    }
}

fn response_of<M: Message + PartialEq + Debug>(version: i16, frame: &[u8]) -> Option<M> {
    match ksasl::kafka::codec::decode_response::<M>(version, frame) {
        Ok((corr, m)) => {
            assert_eq!(response_correlation_id(frame), Some(corr));
            round_trip(&m, version);
            Some(m)
        }
        Err(e) => {
            no_panic(&e);
            None
        }
    }
}

fn response(kind: u8, version: i16, frame: &[u8]) {
    match kind % 6 {
        0 => drop(response_of::<ApiVersionsResponse>(version, frame)),
        1 => drop(response_of::<SaslHandshakeResponse>(version, frame)),
        2 => drop(response_of::<SaslAuthenticateResponse>(version, frame)),
        3 => {
            if let Some(r) = response_of::<CreateTokenResponse>(version, frame) {
                if let Err(e) = token_from_create_response(&r) {
                    no_panic(&e);
                }
            }
        }
        4 => {
            response_of::<ExpiryResponse>(version, frame);
            if let Err(e) = expiry_from_response(version, frame) {
                no_panic(&e);
            }
        }
        _ => {
            response_of::<DescribeTokensResponse>(version, frame);
            if let Err(e) = tokens_from_describe_response(version, frame) {
                no_panic(&e);
            }
        }
    }
}

/// The frame splitter, fed in chunks: every frame it returns is within the bound, and every
/// byte is either returned or still buffered.
fn frames(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let max = u16::from_be_bytes([data[0], data[1]]) as usize;
    let chunk = data[2] as usize + 1;
    let mut d = FrameDecoder::new(max);
    let (mut pushed, mut taken) = (0, 0);
    for c in data[3..].chunks(chunk) {
        d.push(c);
        pushed += c.len();
        loop {
            match d.next_frame() {
                Ok(Some(f)) => {
                    assert!(f.len() <= max);
                    assert_eq!(raw_frame(&f).len(), f.len() + 4);
                    taken += f.len() + 4;
                }
                Ok(None) => break,
                Err(e) => {
                    no_panic(&e);
                    return;
                }
            }
        }
        assert_eq!(taken + d.buffered(), pushed);
    }
}

/// A connection that has received `before` (a handshake or nothing), then `frame`.
fn connection(flags: u8, before: &[Vec<u8>], frame: &[u8]) {
    let mut c = ServerConnection::new(server_config(flags));
    for f in before {
        let a = c.handle_frame(&f[4..], T0);
        assert!(matches!(a, ServerAction::Continue), "{a:?}");
    }
    let _ = c.poll_transmit();
    match c.handle_frame(frame, T0) {
        ServerAction::FailAt { error, .. } | ServerAction::CloseNow(error) => no_panic(&error),
        ServerAction::ReauthenticationFailed(e) => no_panic(&e),
        _ => {}
    }
    if let Some(r) = c.refused_request() {
        let p = RequestPrefix::parse(frame).expect("a refused request has a header");
        assert_eq!(
            (r.api_key, r.api_version, r.correlation_id),
            (p.api_key, p.api_version, p.correlation_id)
        );
    }
    if let Some(out) = c.poll_transmit() {
        assert!(split_frames(&out).is_some());
    }
}

fn handshake(version: i16, mechanism: &str) -> Vec<u8> {
    let m = SaslHandshakeRequest {
        mechanism: mechanism.into(),
    };
    encode_request(&m, version, 1, Some("fuzz")).unwrap()
}

/// Reads primitives in the order the bytes say.
fn reader(data: &[u8]) {
    let Some((&program, rest)) = data.split_first() else {
        return;
    };
    let mut r = Reader::new(rest);
    let mut op = program;
    for _ in 0..16 {
        let ok = match op % 12 {
            0 => r.i8().is_ok(),
            1 => r.i16().is_ok(),
            2 => r.i32().is_ok(),
            3 => r.i64().is_ok(),
            4 => r.uvarint().is_ok(),
            5 => r.nullable_string().is_ok(),
            6 => r.compact_nullable_string().is_ok(),
            7 => r.bytes().is_ok(),
            8 => r.compact_bytes().is_ok(),
            9 => r.array_len().is_ok_and(|n| n <= r.remaining()),
            10 => r.compact_array_len().is_ok_and(|n| n <= r.remaining()),
            _ => r.tagged_fields().is_ok(),
        };
        if !ok {
            break;
        }
        op = op.rotate_left(3) ^ 0x5a;
    }
    let _ = r.finish("fuzz");
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    match sel % 8 {
        0 => request(rest),
        1 => {
            let Some((&v, frame)) = rest.split_first() else {
                return;
            };
            response(sel >> 3, v as i8 as i16, frame)
        }
        2 => frames(rest),
        3 => {
            let config = server_config(0);
            match config.api_versions_response(rest) {
                Ok((out, _)) => assert!(split_frames(&out).is_some()),
                Err(e) => no_panic(&e),
            }
            if let Some(out) = ServerConnection::illegal_state_response(rest) {
                assert!(split_frames(&out).is_some());
            }
        }
        4 => {
            // Bits 3-4: before the handshake, during a wrapped exchange, during a legacy
            // exchange (raw tokens), or a re-authentication's bad mechanism is irrelevant here.
            let before = match (sel >> 3) % 3 {
                0 => vec![],
                1 => vec![handshake(1, PLAIN)],
                _ => vec![handshake(0, SCRAM_SHA_256)],
            };
            connection(sel >> 5, &before, rest)
        }
        5 => {
            let authority = TokenAuthority::new(
                TokenConfig::new(Secret::from("fuzz-token-secret-key")),
                SharedRandom(std::sync::Arc::new(FixedRandom)),
            )
            .unwrap();
            // Creating a token runs PBKDF2 twice: its request is parsed (area 0), not served.
            if RequestPrefix::parse(rest).is_ok_and(|p| p.api_key == CREATE_DELEGATION_TOKEN) {
                return;
            }
            let caller = if sel & 8 != 0 {
                let mut p = Principal::user("alice");
                p.token_authenticated = true;
                p
            } else {
                Principal::user("alice")
            };
            match authority.handle_request(rest, &caller, T0) {
                Ok(out) => assert!(split_frames(&out).is_some()),
                Err(e) => no_panic(&e),
            }
        }
        6 => reader(rest),
        _ => {
            // Raw legacy frames: whatever a raw frame carries comes back out of the splitter.
            let mut d = FrameDecoder::new(rest.len());
            d.push(&raw_frame(rest));
            assert_eq!(d.next_frame().unwrap().as_deref(), Some(rest));
        }
    }
});
