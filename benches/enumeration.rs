//! Enumeration resistance (issue 17): the server's time for a SCRAM-SHA-256 login of an
//! unknown user, answered with a stand-in credential, against a known user's login with a
//! wrong password, both failing at the final message. Only the server's calls are timed
//! (handshake, client-first, client-final through `ServerConnection`); the client's work is
//! not. Logins alternate between the two kinds, 1,000 of each after 200 of warm-up, and the
//! medians are compared. Run with `cargo bench --bench enumeration`; figures in BENCHMARKS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ksasl::kafka::codec::{decode_response, encode_request};
use ksasl::kafka::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
};
use ksasl::kafka::server::{ServerConfig, ServerConnection};
use ksasl::*;

const NOW: i64 = 1_800_000_000_000;
const MECH: &str = "SCRAM-SHA-256";

fn authenticate(corr: i32, bytes: Vec<u8>) -> Vec<u8> {
    let r = SaslAuthenticateRequest { auth_bytes: bytes };
    encode_request(&r, 1, corr, None).unwrap()
}

/// The server's time for one login, and its final error code (58 for both kinds).
fn login(server: &Arc<ServerConfig>, client: &MechanismRegistry) -> (Duration, i16) {
    let mut c = client.client(MECH).unwrap();
    let handshake = encode_request(
        &SaslHandshakeRequest {
            mechanism: MECH.into(),
        },
        1,
        1,
        None,
    )
    .unwrap();
    let first = match c.start(NOW).unwrap() {
        ClientStep::Send(b) => authenticate(2, b),
        other => panic!("{other:?}"),
    };
    let mut s = ServerConnection::new(server.clone());
    let t0 = Instant::now();
    s.handle_frame(&handshake[4..], NOW);
    s.poll_transmit();
    s.handle_frame(&first[4..], NOW);
    let out = s.poll_transmit().unwrap();
    let mut spent = t0.elapsed();
    let (_, r) = decode_response::<SaslAuthenticateResponse>(1, &out[4..]).unwrap();
    assert_eq!(r.error_code, 0, "both kinds get a challenge");
    let last = match c.step(&r.auth_bytes, NOW).unwrap() {
        ClientStep::Send(b) => authenticate(3, b),
        other => panic!("{other:?}"),
    };
    let t1 = Instant::now();
    s.handle_frame(&last[4..], NOW);
    let out = s.poll_transmit().unwrap();
    spent += t1.elapsed();
    let (_, r) = decode_response::<SaslAuthenticateResponse>(1, &out[4..]).unwrap();
    (spent, r.error_code)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    let server = ServerConfig::builder(MechanismRegistry::password_servers(Some(store)))
        .set_unknown_user_mask(b"a secret shared by the cluster's brokers", 4096)
        .build()
        .unwrap();
    // The clients keep the keys SCRAM derives, so only the first login of each runs PBKDF2.
    let client = |user: &str, password: &str| {
        MechanismRegistry::password_clients(Arc::new(
            PasswordCredential::new(user, password).unwrap(),
        ))
    };
    let wrong = client("alice", "not-her-password");
    let unknown = client("mallory", "whatever");
    let (mut w, mut u) = (Vec::new(), Vec::new());
    for i in 0..1200 {
        let (tw, cw) = login(&server, &wrong);
        let (tu, cu) = login(&server, &unknown);
        assert_eq!((cw, cu), (58, 58));
        if i >= 200 {
            w.push(tw);
            u.push(tu);
        }
    }
    let (mw, mu) = (median(w), median(u));
    let diff = (mu.as_secs_f64() - mw.as_secs_f64()) / mw.as_secs_f64() * 100.0;
    println!("enumeration/{MECH} server time, median of 1000 logins each:");
    println!(
        "  known user, wrong password : {:>8.2} µs",
        mw.as_secs_f64() * 1e6
    );
    println!(
        "  unknown user (stand-in)    : {:>8.2} µs",
        mu.as_secs_f64() * 1e6
    );
    println!("  difference                 : {diff:>+8.1} % (the target is within ±10 %)");
}
