//! The client and server connection drivers: every framing mode, Kafka's answers to bad
//! requests, the session-lifetime and gate tables, both re-authentication rules, the retry
//! policy, the re-authentication schedule, and a simulation of 1,000 connections.

mod kafka_pair;
mod wire;

use std::sync::Arc;

use kafka_pair::Pair;
use ksasl::kafka::client::{ClientConfig, ClientConfigBuilder, ClientConnection, ClientEvent};
use ksasl::kafka::codec::{decode_response_body, encode_response};
use ksasl::kafka::messages::*;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConfigBuilder, ServerConnection};
use ksasl::session::{Gate, ReauthPolicy, ReauthTiming};
use ksasl::*;
use wire::*;

const T0: i64 = 1_800_000_000_000;

fn store() -> Arc<CredentialStore> {
    let s = Arc::new(CredentialStore::new());
    s.add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    s.add_user("bob", "bob-secret", 4096, &OsRandom).unwrap();
    s
}

fn server_builder() -> ServerConfigBuilder {
    let mut registry = MechanismRegistry::password_servers(Some(store()));
    let v = UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap();
    registry.register_oauthbearer_server(Arc::new(v));
    ServerConfig::builder(registry)
}

fn server_config(max_reauth_ms: i64) -> Arc<ServerConfig> {
    server_builder()
        .set_max_reauth_ms(max_reauth_ms)
        .build()
        .unwrap()
}

fn client_builder(user: &str, password: &str, mech: &str) -> ClientConfigBuilder {
    ClientConfig::builder(
        MechanismRegistry::password_clients(Arc::new(
            PasswordCredential::new(user, password).unwrap(),
        )),
        mech,
    )
}

fn client_config(user: &str, password: &str, mech: &str) -> Arc<ClientConfig> {
    client_builder(user, password, mech).build().unwrap()
}

fn pair(client: Arc<ClientConfig>, server: Arc<ServerConfig>) -> Pair {
    Pair::new(client, server)
}

#[test]
fn every_framing_mode_authenticates() {
    for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        for (api_versions, known) in [
            (0, None),
            (3, None),
            (4, None),
            (5, None),
            (0, Some((1i64, Some(0i64)))),
            (0, Some((1, Some(1)))),
            (0, Some((1, Some(2)))),
            (0, Some((0, None))),
        ] {
            let mut c = client_builder("alice", "alice-secret", mech);
            c.set_api_versions_version(api_versions);
            if let Some((h, a)) = known {
                c.set_known_versions(h, a);
            }
            let mut p = pair(c.build().unwrap(), server_config(60_000));
            p.connect(T0);
            assert_eq!(p.stats.failed, None, "{mech} {api_versions} {known:?}");
            assert_eq!(p.stats.authenticated, 1);
            let s = p.server.session().unwrap();
            assert_eq!(s.outcome.principal.to_string(), "User:alice");
            assert_eq!(
                s.expiry_ms,
                Some(T0 + 60_000),
                "the broker enforces the session in every mode"
            );
            let lifetime = p.client.session().unwrap().lifetime_ms;
            match known {
                Some((_, Some(0))) | Some((0, None)) => {
                    assert_eq!(lifetime, 0, "v0 and legacy clients never learn it")
                }
                _ => assert_eq!(lifetime, 60_000),
            }
            assert_eq!(
                p.server.client_supports_reauthentication(),
                !matches!(known, Some((_, Some(0))) | Some((0, None)))
            );
        }
    }
}

#[test]
fn oauthbearer_session_is_bounded_by_the_token() {
    let token = UnsecuredTokenBuilder::for_principal("alice")
        .lifetime_seconds(1200)
        .build(T0)
        .unwrap();
    let mut reg = MechanismRegistry::new();
    let t = token.clone();
    reg.register_client("OAUTHBEARER", move || {
        Ok(Box::new(OAuthBearerClient::new(
            t.clone(),
            SaslExtensions::new(),
        )))
    })
    .unwrap();
    for (max_reauth, expected) in [(0, 1_200_000), (3_600_000, 1_200_000), (600_000, 600_000)] {
        let mut p = pair(
            ClientConfig::new(reg.clone(), "OAUTHBEARER").unwrap(),
            server_config(max_reauth),
        );
        p.connect(T0);
        assert_eq!(p.client.session().unwrap().lifetime_ms, expected);
        assert_eq!(p.server.session_expiry_ms(), Some(T0 + expected));
    }
    // A token accepted at its very end gives a session that is expired now.
    let mut p = pair(
        ClientConfig::new(reg, "OAUTHBEARER").unwrap(),
        server_config(0),
    );
    p.client.start(T0 + 1_199_999).unwrap();
    p.pump(T0 + 1_199_999);
    assert_eq!(p.server.session().unwrap().lifetime_ms, 1);
}

fn frame_body(f: &[u8]) -> &[u8] {
    &f[4..]
}

fn handshake(v: i16, corr: i32, mech: &str) -> Vec<u8> {
    sasl_handshake_request(v, corr, Some("c"), mech)
}

/// An ApiVersions v5 request as kafka-clients 4.4.0 serializes it (see tests/kafka_codec.rs),
/// with a target cluster "abc" and node 3.
const KAFKA_V5_TARGET: &str =
    "001200050000000900016300126170616368652d6b61666b612d6a61766106342e342e30046162630000000300";

fn hex_bytes(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn server_answers_bad_requests_like_kafka() {
    let cfg = server_config(0);
    let new = || ServerConnection::new(cfg.clone());

    // ApiVersions too new: a v0 response with error 35 listing only ApiVersions; the state
    // does not advance, so the client can retry.
    let mut s = new();
    let out = s.frame(
        frame_body(&api_versions_request(9, 1, None, ("a", "b"))),
        T0,
    );
    assert!(matches!(out.action, ServerAction::Continue));
    let (_, body) = parse_response_header(&out.frames[4..], false).unwrap();
    let r = decode_response_body::<ApiVersionsResponse>(0, body).unwrap();
    assert_eq!(r.error_code, 35);
    assert_eq!(
        r.api_keys,
        vec![ApiVersionRange {
            api_key: 18,
            min_version: 0,
            max_version: 5
        }]
    );
    let out = s.frame(
        frame_body(&api_versions_request(3, 2, None, ("ksasl", "1.0"))),
        T0,
    );
    let (_, body) = parse_response_header(&out.frames[4..], false).unwrap();
    let r = decode_response_body::<ApiVersionsResponse>(3, body).unwrap();
    assert_eq!(
        (r.error_code, r.max_version(17), r.max_version(36)),
        (0, Some(1), Some(2))
    );
    // A second ApiVersions: closed at once, no response.
    let out = s.frame(frame_body(&api_versions_request(0, 3, None, ("", ""))), T0);
    assert!(out.frames.is_empty());
    assert!(
        matches!(out.action, ServerAction::CloseNow(ref e) if e.code() == ErrorCode::IllegalSaslState)
    );

    // ApiVersions v5 (kafka-clients 4.4's first request) with a target cluster and node: a
    // full answer; with only one of them, INVALID_REQUEST as Kafka's isValid says, and the
    // state does not advance.
    let target = hex_bytes(KAFKA_V5_TARGET);
    let mut s = new();
    let out = s.frame(&target, T0);
    let (_, body) = parse_response_header(&out.frames[4..], false).unwrap();
    let r = decode_response_body::<ApiVersionsResponse>(5, body).unwrap();
    assert_eq!((r.error_code, r.max_version(18)), (0, Some(5)));
    let mut half = target.clone();
    let n = half.len();
    half[n - 5..n - 1].copy_from_slice(&(-1i32).to_be_bytes()); // node id unset, cluster set
    let mut s = new();
    let out = s.frame(&half, T0);
    let (_, body) = parse_response_header(&out.frames[4..], false).unwrap();
    assert_eq!(
        decode_response_body::<ApiVersionsResponse>(5, body)
            .unwrap()
            .error_code,
        42
    );
    assert!(matches!(
        s.frame(frame_body(&handshake(1, 2, "PLAIN")), T0).action,
        ServerAction::Continue
    ));

    // Invalid software name: INVALID_REQUEST, state unchanged.
    let mut s = new();
    let out = s.frame(
        frame_body(&api_versions_request(3, 1, None, ("-bad", "1"))),
        T0,
    );
    let (_, body) = parse_response_header(&out.frames[4..], false).unwrap();
    assert_eq!(
        decode_response_body::<ApiVersionsResponse>(3, body)
            .unwrap()
            .error_code,
        42
    );
    assert!(matches!(
        s.frame(frame_body(&handshake(1, 2, "PLAIN")), T0).action,
        ServerAction::Continue
    ));

    // Unsupported mechanism: 33 with the enabled list, sent after the KIP-306 delay.
    let mut s = new();
    let out = s.frame(frame_body(&handshake(1, 5, "GSSAPI")), T0);
    let (corr, body) = parse_response_header(&out.frames[4..], false).unwrap();
    assert_eq!(corr, 5);
    let r = decode_response_body::<SaslHandshakeResponse>(1, body).unwrap();
    assert_eq!(r.error_code, 33);
    assert_eq!(
        r.mechanisms,
        ["OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    );
    assert!(
        matches!(out.action, ServerAction::FailAt { deadline_ms, ref error } if deadline_ms == T0 + 100 && error.code() == ErrorCode::UnsupportedSaslMechanism)
    );

    // SaslAuthenticate before SaslHandshake: no response, closed after the delay.
    let mut s = new();
    let out = s.frame(frame_body(&sasl_authenticate_request(1, 1, None, b"x")), T0);
    assert!(out.frames.is_empty());
    assert!(
        matches!(out.action, ServerAction::FailAt { ref error, .. } if error.code() == ErrorCode::IllegalSaslState
        && error.message() == "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake.")
    );

    // A first packet that is not a Kafka request (pre-0.10 GSSAPI): refused, no response.
    let mut s = new();
    let out = s.frame(&[0x60, 0x01, 0x02], T0);
    assert!(out.frames.is_empty());
    assert!(
        matches!(out.action, ServerAction::FailAt { ref error, .. } if error.code() == ErrorCode::UnsupportedSaslMechanism)
    );

    // Garbage after a valid handshake body; an unknown handshake version.
    let mut s = new();
    let mut f = handshake(1, 1, "PLAIN");
    f.push(0);
    assert!(
        matches!(s.frame(frame_body(&f), T0).action, ServerAction::CloseNow(ref e) if e.code() == ErrorCode::InvalidRequest)
    );
    let mut s = new();
    assert!(
        matches!(s.frame(frame_body(&handshake(2, 1, "PLAIN")), T0).action, ServerAction::CloseNow(ref e) if e.code() == ErrorCode::UnsupportedVersion)
    );
    // Truncated: a header cut short.
    let mut s = new();
    let f = handshake(1, 1, "PLAIN");
    assert!(
        matches!(s.frame(&f[4..12], T0).action, ServerAction::CloseNow(ref e) if e.code() == ErrorCode::InvalidRequest)
    );

    // During the token exchange: unknown SaslAuthenticate version, another API, a second handshake.
    let ready = || {
        let mut s = new();
        s.frame(frame_body(&handshake(1, 1, "PLAIN")), T0);
        s
    };
    let mut s = ready();
    assert!(
        matches!(s.frame(frame_body(&sasl_authenticate_request(3, 2, None, b"x")), T0).action, ServerAction::CloseNow(ref e) if e.code() == ErrorCode::UnsupportedVersion)
    );
    let mut s = ready();
    // A Metadata v0 request without its topic list: Kafka cannot read it and closes without
    // answering (readable ones get Metadata's error response: tests/kafka44_refusals.rs).
    let out = s.frame(&kafka_pair::app_request(7)[4..], T0);
    assert!(
        matches!(out.action, ServerAction::CloseNow(ref error) if error.code() == ErrorCode::IllegalSaslState
        && error.detail("api_key") == Some("3") && error.detail("unreadable").is_some()
        && error.message() == "Unexpected Kafka request of type METADATA during SASL authentication.")
    );
    let mut s = ready();
    let out = s.frame(frame_body(&handshake(1, 9, "PLAIN")), T0);
    let (corr, body) = parse_response_header(&out.frames[4..], false).unwrap();
    assert_eq!(
        (
            corr,
            decode_response_body::<SaslHandshakeResponse>(1, body)
                .unwrap()
                .error_code
        ),
        (9, 34)
    );
    // Over the receive bound.
    let mut s = ready();
    let big = sasl_authenticate_request(1, 2, None, &vec![0u8; 600 * 1024]);
    assert!(
        matches!(s.frame(frame_body(&big), T0).action, ServerAction::FailAt { ref error, .. } if error.code() == ErrorCode::MessageTooLarge)
    );
    // Wrong password: error 58 with Kafka's PLAIN text.
    for v in 0..=2 {
        let mut s = ready();
        let out = s.frame(
            frame_body(&sasl_authenticate_request(v, 2, None, b"\0alice\0nope")),
            T0,
        );
        let (_, body) = parse_response_header(&out.frames[4..], v >= 2).unwrap();
        let r = decode_response_body::<SaslAuthenticateResponse>(v, body).unwrap();
        assert_eq!(r.error_code, 58);
        assert_eq!(
            r.error_message.as_deref(),
            Some("Authentication failed: Invalid username or password")
        );
        assert!(matches!(out.action, ServerAction::FailAt { .. }));
    }
    assert_eq!(cfg.metrics().total("failed-authentication-total"), Some(14));
}

#[test]
fn client_reports_broker_errors() {
    let cfg = client_config("alice", "alice-secret", "PLAIN");
    let mut c = ClientConnection::new(cfg.clone());
    c.start(T0).unwrap();
    c.poll_transmit().unwrap();
    let v = ApiVersionsResponse {
        error_code: 0,
        api_keys: vec![
            ApiVersionRange {
                api_key: 17,
                min_version: 0,
                max_version: 1,
            },
            ApiVersionRange {
                api_key: 36,
                min_version: 0,
                max_version: 2,
            },
        ],
        throttle_time_ms: 0,
    };
    assert_eq!(
        c.handle_frame(&encode_response(&v, 0, i32::MAX - 7).unwrap()[4..], T0),
        ClientEvent::Continue
    );
    let hs = SaslHandshakeResponse {
        error_code: 33,
        mechanisms: vec!["SCRAM-SHA-512".into(), "OAUTHBEARER".into()],
    };
    match c.handle_frame(&encode_response(&hs, 1, i32::MAX - 6).unwrap()[4..], T0) {
        ClientEvent::Failed(e) => {
            assert_eq!(e.code(), ErrorCode::UnsupportedSaslMechanism);
            assert_eq!(e.message(), "Client SASL mechanism 'PLAIN' not enabled in the server, enabled mechanisms are [SCRAM-SHA-512, OAUTHBEARER]");
        }
        other => panic!("{other:?}"),
    }
    // A response with a foreign correlation id during the initial authentication is fatal.
    let mut c = ClientConnection::new(cfg.clone());
    c.start(T0).unwrap();
    assert!(
        matches!(c.handle_frame(&encode_response(&v, 0, 5).unwrap()[4..], T0), ClientEvent::Failed(e) if e.code() == ErrorCode::CorrelationMismatch)
    );
    // Error 58 carries the broker's text.
    let mut p = pair(client_config("alice", "wrong", "PLAIN"), server_config(0));
    p.connect(T0);
    let failed = p.stats.failed.clone().unwrap();
    assert!(
        failed.contains("SERVER_REJECTED_AUTHENTICATION")
            && failed.contains("Authentication failed: Invalid username or password"),
        "{failed}"
    );
    // Correlation ids cycle through the reserved range.
    let mut c = ClientConnection::new(cfg);
    c.start(T0).unwrap();
    let first = c.poll_transmit().unwrap();
    assert_eq!(&first[8..12], &(i32::MAX - 7).to_be_bytes());
    assert!(
        ksasl::kafka::client::is_sasl_correlation_id(i32::MAX)
            && !ksasl::kafka::client::is_sasl_correlation_id(i32::MAX - 8)
    );
}

#[test]
fn gate_table() {
    let mut p = pair(
        client_config("alice", "alice-secret", "PLAIN"),
        server_config(10_000),
    );
    p.connect(T0);
    let s = &p.server;
    for key in 0..=80i16 {
        let before = s.gate(key, T0 + 10_000);
        let after = s.gate(key, T0 + 10_001);
        if key == SASL_HANDSHAKE {
            assert_eq!(before, Gate::BeginReauthentication);
            assert_eq!(
                after,
                Gate::BeginReauthentication,
                "a late eligible SaslHandshake still starts re-authentication"
            );
        } else {
            assert_eq!(before, Gate::Process, "key {key}: expiry is strictly after");
            assert_eq!(after, Gate::CloseExpired, "key {key}");
        }
    }
    // Re-authenticate at T0 + 500: a new handshake within one second is not eligible.
    p.client.start_reauthentication(T0 + 500).unwrap();
    p.pump(T0 + 500);
    assert_eq!(p.stats.reauthenticated, 1);
    assert_eq!(p.server.gate(SASL_HANDSHAKE, T0 + 1_499), Gate::Process);
    assert_eq!(
        p.server.gate(SASL_HANDSHAKE, T0 + 1_500),
        Gate::BeginReauthentication
    );
    assert_eq!(p.server.session_expiry_ms(), Some(T0 + 10_500));
    // No session expiry (no credential expiry, connections.max.reauth.ms unset): nothing
    // expires and SaslHandshake is never eligible.
    let mut p = pair(
        client_config("alice", "alice-secret", "PLAIN"),
        server_config(0),
    );
    p.connect(T0);
    assert_eq!(p.server.gate(SASL_HANDSHAKE, T0 + 1_000_000), Gate::Process);
    assert_eq!(p.server.gate(0, i64::MAX), Gate::Process);
    assert_eq!(p.client.session().unwrap().reauth_at_ms, None);
    assert_eq!(p.server.session_expiry_ms(), None);
}

/// Issue 17, defect 6: a successful SaslAuthenticate response carries an empty error message
/// (as Kafka 4.4 sends it), never a null one, in every version.
#[test]
fn successful_authenticate_response_has_an_empty_message() {
    for version in 0..=2i16 {
        let mut s = ServerConnection::new(server_config(10_000));
        s.handle_frame(&sasl_handshake_request(1, 1, None, "PLAIN")[4..], T0);
        s.poll_transmit();
        let req = sasl_authenticate_request(version, 7, None, b"\0alice\0alice-secret");
        let action = s.handle_frame(&req[4..], T0);
        assert!(
            matches!(action, ServerAction::Authenticated(_)),
            "{action:?}"
        );
        let out = s.poll_transmit().unwrap();
        let mut want = 7i32.to_be_bytes().to_vec();
        match version {
            2 => want.extend_from_slice(&[0, 0, 0, 1, 1]), // tags, error, "" and no bytes (compact)
            _ => want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]), // error, "", no bytes
        }
        if version >= 1 {
            want.extend_from_slice(&10_000i64.to_be_bytes());
        }
        if version == 2 {
            want.push(0); // tagged fields
        }
        assert_eq!(&out[4..], &want[..], "SaslAuthenticate v{version}");
        assert_eq!(&out[..4], &(want.len() as i32).to_be_bytes());
    }
}

/// Issue 17, defect 1: the gate never says `Process` without a live session: not before the
/// first authentication completes, not during a re-authentication, and not after a failure.
#[test]
fn gate_never_processes_without_a_live_session() {
    let all = |s: &ServerConnection, now: i64, want: Gate, when: &str| {
        for key in -1..=80i16 {
            assert_eq!(s.gate(key, now), want, "key {key} {when}");
        }
    };
    let cfg = server_config(10_000);
    let mut s = ServerConnection::new(cfg.clone());
    all(&s, T0, Gate::NotAuthenticated, "on a new connection");
    let frame = |f: Vec<u8>| f[4..].to_vec();
    s.handle_frame(&frame(api_versions_request(3, 1, None, ("x", "1"))), T0);
    all(&s, T0, Gate::NotAuthenticated, "after ApiVersions");
    s.handle_frame(&frame(sasl_handshake_request(1, 2, None, "PLAIN")), T0);
    all(&s, T0, Gate::NotAuthenticated, "during the exchange");
    let bad = sasl_authenticate_request(2, 3, None, b"\0alice\0wrong");
    let action = s.handle_frame(&frame(bad), T0);
    assert!(matches!(action, ServerAction::FailAt { .. }), "{action:?}");
    all(&s, T0, Gate::Close, "after a failed login");
    all(&s, i64::MAX, Gate::Close, "after a failed login, later");

    // A re-authentication in progress, then failed: no requests are processed meanwhile.
    let mut p = pair(client_config("alice", "alice-secret", "PLAIN"), cfg.clone());
    p.connect(T0);
    assert_eq!(p.server.gate(3, T0 + 1_000), Gate::Process);
    p.server.handle_frame(
        &frame(sasl_handshake_request(1, 9, None, "PLAIN")),
        T0 + 1_000,
    );
    all(
        &p.server,
        T0 + 1_000,
        Gate::NotAuthenticated,
        "during a re-authentication",
    );
    let bad = sasl_authenticate_request(2, 10, None, b"\0alice\0wrong");
    p.server.handle_frame(&frame(bad), T0 + 1_000);
    all(
        &p.server,
        T0 + 1_000,
        Gate::Close,
        "after a failed re-authentication",
    );
}

#[test]
fn gate_counts_expired_connections() {
    let cfg = server_config(1_000);
    let mut p = Pair::new(client_config("alice", "alice-secret", "PLAIN"), cfg.clone());
    p.connect(T0);
    assert_eq!(p.server.gate(3, T0 + 1_001), Gate::CloseExpired);
    assert_eq!(
        cfg.metrics().total("expired-connections-killed-count"),
        Some(1)
    );
    // SaslHandshake / SaslAuthenticate reaching the request handlers get ILLEGAL_SASL_STATE.
    let r =
        ServerConnection::illegal_state_response(&sasl_authenticate_request(2, 4, None, b"")[4..])
            .unwrap();
    let (_, body) = parse_response_header(&r[4..], true).unwrap();
    let r = decode_response_body::<SaslAuthenticateResponse>(2, body).unwrap();
    assert_eq!(r.error_code, 34);
    assert_eq!(
        r.error_message.as_deref(),
        Some("SaslAuthenticate request received after successful authentication")
    );
}

#[test]
fn reauthentication_must_keep_the_mechanism() {
    let cfg = server_config(60_000);
    let mut p = Pair::new(client_config("alice", "alice-secret", "PLAIN"), cfg.clone());
    p.connect(T0);
    let s = &mut p.server;
    assert_eq!(
        s.gate(SASL_HANDSHAKE, T0 + 2_000),
        Gate::BeginReauthentication
    );
    // SCRAM is enabled, so the handshake succeeds...
    let out = s.frame(
        frame_body(&handshake(1, i32::MAX - 4, "SCRAM-SHA-256")),
        T0 + 2_000,
    );
    let (_, body) = parse_response_header(&out.frames[4..], false).unwrap();
    assert_eq!(
        decode_response_body::<SaslHandshakeResponse>(1, body)
            .unwrap()
            .error_code,
        0
    );
    // ...and the next packet fails without a response.
    let out = s.frame(
        frame_body(&sasl_authenticate_request(
            1,
            i32::MAX - 3,
            None,
            b"n,,n=alice,r=x",
        )),
        T0 + 2_001,
    );
    assert!(out.frames.is_empty());
    match out.action {
        ServerAction::FailAt { error, .. } => {
            assert_eq!(error.code(), ErrorCode::MechanismChanged);
            assert_eq!(error.message(), "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of mechanism 'PLAIN'");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        cfg.metrics().total("failed-reauthentication-total"),
        Some(1)
    );
    assert_eq!(cfg.metrics().total("failed-authentication-total"), Some(0));
}

#[test]
fn reauthentication_must_keep_the_principal() {
    let cfg = server_config(60_000);
    let mut p = Pair::new(client_config("alice", "alice-secret", "PLAIN"), cfg.clone());
    p.connect(T0);
    let s = &mut p.server;
    assert_eq!(
        s.gate(SASL_HANDSHAKE, T0 + 2_000),
        Gate::BeginReauthentication
    );
    s.frame(frame_body(&handshake(1, 1, "PLAIN")), T0 + 2_000);
    let out = s.frame(
        frame_body(&sasl_authenticate_request(2, 2, None, b"\0bob\0bob-secret")),
        T0 + 2_000,
    );
    let (_, body) = parse_response_header(&out.frames[4..], true).unwrap();
    let r = decode_response_body::<SaslAuthenticateResponse>(2, body).unwrap();
    assert_eq!(r.error_code, 58);
    assert_eq!(
        r.error_message.as_deref(),
        Some("Cannot change principals during re-authentication from User.alice: User.bob")
    );
    assert!(
        matches!(out.action, ServerAction::FailAt { ref error, .. } if error.code() == ErrorCode::PrincipalChanged)
    );
    assert_eq!(
        cfg.metrics().total("failed-reauthentication-total"),
        Some(1)
    );
}

#[test]
fn failed_reauthentication_retry_policy() {
    let store = store();
    let server = ServerConfig::builder(MechanismRegistry::password_servers(Some(store.clone())))
        .set_max_reauth_ms(3_600_000)
        .set_reauth_retry_ms(60_000)
        .build()
        .unwrap();
    let client = client_builder("alice", "alice-secret", "PLAIN")
        .set_reauth_retry_ms(60_000)
        .set_reauth_timing(ReauthTiming::Librdkafka)
        .build()
        .unwrap();
    let mut p = pair(client, server);
    p.connect(T0);
    let due = p.client.session().unwrap().reauth_at_ms.unwrap();
    assert_eq!(due, T0 + 3_240_000);
    // The password is rotated on the server: re-authentication fails, the session stays.
    store.set_password("alice", "rotated").unwrap();
    let mut now = due;
    let mut retries = Vec::new();
    while now <= T0 + 3_600_000 {
        p.request(now);
        p.pump(now);
        if let Some(t) = p.client.session().unwrap().reauth_at_ms {
            if t > now && retries.last() != Some(&t) {
                retries.push(t);
            }
        }
        now += 1_000;
    }
    assert!(
        !p.stats.closed_expired && p.stats.failed.is_none(),
        "{:?}",
        p.stats
    );
    // 1 min, then 2 min, then 4 min for every later attempt, while the session lasts.
    let gaps: Vec<i64> = std::iter::once(due)
        .chain(retries.iter().copied())
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| w[1] - w[0])
        .collect();
    assert_eq!(gaps, [60_000, 120_000], "retries at {retries:?}");
    assert_eq!(
        p.stats.reauth_failed, 3,
        "the third retry would land after expiry: none is scheduled"
    );
    assert_eq!(p.client.session().unwrap().reauth_at_ms, None);
    assert_eq!(p.stats.sent, p.stats.received);
    // After expiry the broker closes the connection on its next request.
    p.request(T0 + 3_600_001);
    p.pump(T0 + 3_600_001);
    assert!(p.stats.closed_expired);
}

#[test]
fn reauth_schedule_distribution() {
    let rng = OsRandom;
    let kafka = ReauthPolicy::default();
    let l = 600_000;
    let mut sum = 0.0;
    for _ in 0..10_000 {
        let d = kafka.delay_ms(l, 5, &rng).unwrap().unwrap();
        let f = d as f64 / l as f64;
        assert!((0.85..0.95).contains(&f), "{f}");
        sum += f;
    }
    let mean = sum / 10_000.0;
    assert!((mean - 0.90).abs() < 0.009, "mean {mean}");
    assert_eq!(
        ReauthPolicy {
            timing: ReauthTiming::Librdkafka,
            min_delay_ms: 1000
        }
        .delay_ms(l, 5, &rng)
        .unwrap(),
        Some(540_000)
    );
    let franz = ReauthPolicy {
        timing: ReauthTiming::FranzGo,
        min_delay_ms: 1000,
    };
    for _ in 0..1000 {
        let d = franz.delay_ms(l, 5, &rng).unwrap().unwrap();
        assert!((570_000..588_000).contains(&d), "{d}");
        let d = franz.delay_ms(10_000, 5, &rng).unwrap().unwrap();
        assert!(d <= 9_000, "franz-go keeps at least one second");
    }
    // Floors and clamps.
    assert_eq!(kafka.delay_ms(0, 0, &rng).unwrap(), None);
    assert_eq!(kafka.delay_ms(-1, 0, &rng).unwrap(), None);
    assert_eq!(
        kafka.delay_ms(500, 0, &rng).unwrap(),
        Some(499),
        "a tiny lifetime: capped below it"
    );
    assert_eq!(
        kafka.delay_ms(1_050, 0, &rng).unwrap(),
        Some(1_000),
        "at least one second"
    );
    assert!(
        kafka.delay_ms(20_000, 10_000, &rng).unwrap().unwrap() >= 11_000,
        "at least 1.1x the latency"
    );
    assert!(kafka.delay_ms(i64::MAX, 0, &rng).unwrap().unwrap() < ksasl::session::ONE_YEAR_MS);
    assert_eq!(
        ReauthPolicy {
            timing: ReauthTiming::Disabled,
            min_delay_ms: 1000
        }
        .delay_ms(l, 0, &rng)
        .unwrap(),
        None
    );
}

fn simulate(
    connections: usize,
    reauths: u32,
    client_reauth: bool,
) -> (Vec<Pair>, Arc<ServerConfig>, Arc<ClientConfig>) {
    let server = ServerConfig::builder(MechanismRegistry::password_servers(Some(store())))
        .set_max_reauth_ms(10_000)
        .build()
        .unwrap();
    let mut client = client_builder("alice", "alice-secret", "PLAIN");
    if !client_reauth {
        client.set_reauth_timing(ReauthTiming::Disabled);
    }
    let client = client.build().unwrap();
    let mut pairs: Vec<Pair> = (0..connections)
        .map(|_| Pair::new(client.clone(), server.clone()))
        .collect();
    let mut now = T0;
    for p in pairs.iter_mut() {
        p.connect(now);
    }
    let end = T0 + 10_000 * (reauths as i64 + 1);
    while now < end {
        now += 500;
        for p in pairs.iter_mut().filter(|p| !p.closed) {
            // Two requests per step; their responses arrive a round late, across every
            // re-authentication.
            p.request(now);
            p.request(now);
            p.pump(now);
        }
        if !client_reauth && pairs.iter().all(|p| p.closed) {
            break;
        }
        if client_reauth && pairs.iter().all(|p| p.stats.reauthenticated >= reauths) {
            break;
        }
    }
    for p in pairs.iter_mut().filter(|p| !p.closed) {
        p.pump(now);
    }
    (pairs, server, client)
}

#[test]
fn thousand_connections_ten_reauthentications_each() {
    let (pairs, server, client) = simulate(1000, 10, true);
    let mut reauths = 0u64;
    for p in &pairs {
        assert!(!p.closed && !p.stats.closed_expired, "{:?}", p.stats);
        assert!(p.stats.reauthenticated >= 10);
        assert_eq!(p.stats.sent, p.stats.received, "every response, in order");
        assert!(p.held.is_empty());
        reauths += p.stats.reauthenticated as u64;
    }
    let total: u64 = pairs.iter().map(|p| p.stats.sent.len() as u64).sum();
    assert!(total > 1000 * 10 * 2);
    for (side, m) in [("server", server.metrics()), ("client", client.metrics())] {
        assert_eq!(
            m.total("successful-authentication-total"),
            Some(1000),
            "{side}"
        );
        assert_eq!(
            m.total("successful-reauthentication-total"),
            Some(reauths),
            "{side}"
        );
        assert_eq!(m.total("failed-authentication-total"), Some(0), "{side}");
        assert_eq!(m.total("failed-reauthentication-total"), Some(0), "{side}");
        assert_eq!(
            m.total("successful-authentication-no-reauth-total"),
            Some(0),
            "{side}"
        );
    }
    assert_eq!(
        server.metrics().total("expired-connections-killed-count"),
        Some(0)
    );
}

#[test]
fn without_client_reauthentication_every_connection_expires() {
    let (pairs, server, _) = simulate(1000, 3, false);
    for p in &pairs {
        assert!(p.stats.closed_expired, "{:?}", p.stats);
        assert_eq!(p.stats.reauthenticated, 0);
        // Closed on the first request after the lifetime: requests sent at T0+10_000 were
        // processed, the ones at T0+10_500 were not.
        assert_eq!(
            *p.stats.sent.last().unwrap(),
            41,
            "{:?}",
            &p.stats.sent[35..]
        );
    }
    assert_eq!(
        server.metrics().total("expired-connections-killed-count"),
        Some(1000)
    );
}

#[test]
fn timer_driven_reauthentication_for_event_loops() {
    // librdkafka's style: a timer at the deadline, no request needed.
    let client = client_builder("alice", "alice-secret", "SCRAM-SHA-512")
        .set_reauth_timing(ReauthTiming::Librdkafka)
        .build()
        .unwrap();
    let mut p = pair(client, server_config(20_000));
    p.connect(T0);
    let deadline = p.client.next_deadline().unwrap();
    assert_eq!(deadline, T0 + 18_000);
    assert!(!p.client.reauth_pending(deadline - 1));
    assert!(!p.client.handle_timeout(deadline - 1).unwrap());
    assert!(p.client.reauth_pending(deadline));
    assert!(p.client.handle_timeout(deadline).unwrap());
    assert!(p.client.is_reauthenticating() && !p.client.is_ready());
    assert!(
        !p.client.before_request(deadline).unwrap(),
        "requests are held during re-authentication"
    );
    p.pump(deadline);
    assert_eq!(p.stats.reauthenticated, 1);
    assert_eq!(p.client.next_deadline(), Some(deadline + 18_000));
    assert_eq!(p.server.session_expiry_ms(), Some(deadline + 20_000));
    // Legacy connections never learn a lifetime and cannot re-authenticate.
    let c = client_builder("alice", "alice-secret", "PLAIN")
        .set_known_versions(0, None)
        .build()
        .unwrap();
    let mut p = pair(c, server_config(20_000));
    p.connect(T0);
    assert_eq!(p.client.next_deadline(), None);
    assert_eq!(
        p.client.start_reauthentication(T0).unwrap_err().code(),
        ErrorCode::WrongState
    );
}

#[test]
fn per_mechanism_max_reauth() {
    let server = server_builder()
        .set_max_reauth_ms(60_000)
        .set_max_reauth_ms_for("SCRAM-SHA-256", 5_000)
        .set_max_reauth_ms_for("SCRAM-SHA-512", 0)
        .build()
        .unwrap();
    for (mech, lifetime) in [
        ("PLAIN", 60_000),
        ("SCRAM-SHA-256", 5_000),
        ("SCRAM-SHA-512", 0),
    ] {
        let mut p = Pair::new(client_config("alice", "alice-secret", mech), server.clone());
        p.connect(T0);
        assert_eq!(p.client.session().unwrap().lifetime_ms, lifetime, "{mech}");
        assert_eq!(
            p.server.session_expiry_ms(),
            (lifetime > 0).then_some(T0 + lifetime),
            "{mech}"
        );
    }
    assert_eq!(
        server.metrics().total("successful-authentication-total"),
        Some(3)
    );
}

#[test]
fn reauthentications_are_spaced_by_more_than_a_second() {
    let mut p = pair(
        client_config("alice", "alice-secret", "PLAIN"),
        server_config(60_000),
    );
    p.connect(T0);
    assert!(p.client.start_reauthentication(T0 + 100).unwrap());
    p.pump(T0 + 100);
    assert_eq!(p.stats.reauthenticated, 1);
    // A second one right after (a tracker after a refresh) is deferred, not sent: the broker
    // would refuse a SaslHandshake within a second of the previous re-authentication.
    assert!(!p.client.start_reauthentication(T0 + 600).unwrap());
    assert!(p.client.poll_transmit().is_none());
    assert_eq!(p.client.next_deadline(), Some(T0 + 1_200));
    assert!(!p.client.handle_timeout(T0 + 1_199).unwrap());
    assert!(p.client.handle_timeout(T0 + 1_200).unwrap());
    p.pump(T0 + 1_200);
    assert_eq!(p.stats.reauthenticated, 2);
    assert!(p.stats.failed.is_none());
}

#[test]
fn api_versions_after_authentication_and_the_version_table_rules() {
    let mut b = server_builder();
    b.set_api_version(3, 0, 12);
    b.build().unwrap();
    // ksasl's own APIs cannot be advertised beyond what it speaks; ranges must be valid.
    for (k, lo, hi) in [
        (17, 0, 2),
        (18, 0, 6),
        (36, 0, 3),
        (3, 5, 1),
        (-1, 0, 0),
        (3, -1, 2),
    ] {
        assert_eq!(
            b.clone()
                .set_api_version(k, lo, hi)
                .build()
                .unwrap_err()
                .code(),
            ErrorCode::InvalidConfig,
            "{k} {lo} {hi}"
        );
    }
    let c = b.set_api_version(17, 1, 1).build().unwrap();
    // v3 request with client software fields: the listener's table.
    let mut f = vec![0, 18, 0, 3, 0, 0, 0, 9, 0, 0, 0];
    f.extend_from_slice(&[2, b'x', 2, b'1', 0]);
    let (answer, ok) = c.api_versions_response(&f).unwrap();
    assert!(ok);
    let (_, r) = parse_response_header(&answer[4..], false).unwrap();
    let parsed = decode_response_body::<ApiVersionsResponse>(3, r).unwrap();
    assert_eq!(parsed.error_code, 0);
    assert!(parsed
        .api_keys
        .iter()
        .any(|a| a.api_key == 3 && a.max_version == 12));
    assert!(parsed
        .api_keys
        .iter()
        .any(|a| a.api_key == 17 && a.min_version == 1));
    // v9: Kafka's fallback (v0, UNSUPPORTED_VERSION, listing ApiVersions 0..5).
    let (answer, ok) = c
        .api_versions_response(&[0, 18, 0, 9, 0, 0, 0, 1, 0, 0, 0])
        .unwrap();
    assert!(!ok);
    let (_, r) = parse_response_header(&answer[4..], false).unwrap();
    let parsed = decode_response_body::<ApiVersionsResponse>(0, r).unwrap();
    assert_eq!(parsed.error_code, 35);
    // Not an ApiVersions request.
    assert!(c.api_versions_response(&app_request_body()).is_err());
}

fn app_request_body() -> Vec<u8> {
    kafka_pair::app_request(1)[4..].to_vec()
}

/// Issue 17, defect 2: a frame's declared length is checked before its body is read: Kafka's
/// `sasl.server.max.receive.size` until a session is live, `socket.request.max.bytes` after.
#[test]
fn frame_sizes_are_refused_by_their_prefix() {
    let cfg = server_builder()
        .set_max_reauth_ms(10_000)
        .set_max_request_size(1_000_000)
        .build()
        .unwrap();
    let mut s = ServerConnection::new(cfg.clone());
    assert_eq!(s.check_frame_size(524_288, T0).unwrap(), 524_288);
    assert_eq!(s.check_frame_size(0, T0).unwrap(), 0);
    let e = s.check_frame_size(104_857_600, T0).unwrap_err();
    assert_eq!(e.code(), ErrorCode::MessageTooLarge);
    assert_eq!(
        e.message(),
        "Failing SASL authentication due to invalid receive size"
    );
    assert_eq!(s.gate(3, T0), Gate::Close, "the connection is over");
    assert_eq!(cfg.metrics().total("failed-authentication-total"), Some(1));
    let mut s = ServerConnection::new(cfg.clone());
    assert_eq!(
        s.check_frame_size(-1, T0).unwrap_err().code(),
        ErrorCode::InvalidFrameSize
    );
    // Authenticated: the host's request limit applies.
    let mut p = pair(client_config("alice", "alice-secret", "PLAIN"), cfg.clone());
    p.connect(T0);
    assert_eq!(p.server.check_frame_size(1_000_000, T0).unwrap(), 1_000_000);
    let e = p.server.check_frame_size(1_000_001, T0).unwrap_err();
    assert_eq!(
        e.message(),
        "Invalid receive (size = 1000001 larger than 1000000)"
    );
    assert_eq!(p.server.gate(3, T0), Gate::Close);
    assert_eq!(cfg.metrics().total("failed-authentication-total"), Some(2));
}
