//! Scaling across cores: logins per second with 1 and with 2 threads sharing what a broker's
//! network threads share (one mechanism registry, one credential store, one token validator
//! with its verdict cache). Each thread plays its own connections; the goal is 2 threads at
//! 1.8x one thread or better.
//!
//! Run with `cargo bench --bench scaling` (or `make bench`). Not criterion: threads have to
//! start together and the figure is a throughput. Each figure is the best of 7 runs of
//! `OPS` operations per thread, timed from a barrier to the last thread's end.
//!
//! Workloads:
//! - `scram-sha-256/server_login`: a SCRAM-SHA-256 login through an exchange from the shared
//!   registry (credential lookup in the shared store, a fresh random nonce, both steps, the
//!   outcome); each thread's client answers with cached keys, so the client's share (about
//!   40 %) is in every figure too. The server's share is also timed on its own.
//! - `oauthbearer/cached_validate`: an OAUTHBEARER exchange from the shared registry whose
//!   validator is a `CachingValidator` in front of a `JwksValidator`, each thread presenting
//!   its own RS256 token (two connections, two tokens), always found in the shared cache.
//! - `oauthbearer/rs256_validate`: the same without the cache: every exchange checks the
//!   RS256 signature (nothing is shared but the key set).
//! - `independent/sha256_compress_x64`: no shared object at all, each thread compressing on its
//!   own state: the ceiling of this machine, against which the others are read.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use ksasl::*;
use serde_json::Value;

const RUNS: usize = 7;

/// Runs `op` `ops` times on each of `threads` threads (each thread builds its own state with
/// `setup(thread index)`); returns (operations per second over the wall time, the sum of
/// the per-operation durations the ops reported).
fn throughput<S, F>(
    threads: usize,
    ops: usize,
    setup: impl Fn(usize) -> S + Sync,
    op: F,
) -> (f64, Duration)
where
    F: Fn(&mut S) -> Duration + Sync,
{
    let mut best = (0.0f64, Duration::ZERO);
    for _ in 0..RUNS {
        let start = Barrier::new(threads + 1);
        let (wall, timed) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let (start, setup, op) = (&start, &setup, &op);
                    scope.spawn(move || {
                        let mut state = setup(i);
                        op(&mut state); // warm: first use of the shared objects
                        start.wait();
                        let mut timed = Duration::ZERO;
                        for _ in 0..ops {
                            timed += op(&mut state);
                        }
                        timed
                    })
                })
                .collect();
            start.wait();
            let t0 = Instant::now();
            let timed: Duration = handles.into_iter().map(|h| h.join().unwrap()).sum();
            (t0.elapsed(), timed)
        });
        let rate = (threads * ops) as f64 / wall.as_secs_f64();
        if rate > best.0 {
            best = (rate, timed);
        }
    }
    best
}

fn report(name: &str, ops: usize, one: (f64, Duration), two: (f64, Duration), share: bool) {
    let per = |(_, timed): (f64, Duration), threads: usize| {
        timed.as_secs_f64() * 1e6 / (threads * ops) as f64
    };
    let extra = if share {
        format!(
            " (server share {:.2} us and {:.2} us per login)",
            per(one, 1),
            per(two, 2)
        )
    } else {
        String::new()
    };
    println!(
        "{name}: 1 thread {:.0}/s, 2 threads {:.0}/s, {:.2}x{extra}",
        one.0,
        two.0,
        two.0 / one.0
    );
}

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/jwt.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn scram(ops: usize) {
    let mech = ScramMechanism::Sha256;
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    let registry = Arc::new(MechanismRegistry::password_servers(Some(store.clone())));
    let name = mech.name();
    let setup = |_| {
        // Each thread's client, its keys derived once (a re-authenticating client's cache).
        Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap())
    };
    let login = |keys: &mut Arc<PasswordCredential>| {
        let opts = ScramClientOptions::default();
        let mut client = ClientExchange::new(Box::new(
            ScramClient::new(mech, keys.clone(), opts).unwrap(),
        ));
        let ClientStep::Send(first) = client.start(0).unwrap() else {
            panic!()
        };
        let t = Instant::now();
        let mut server = registry.server(name).unwrap();
        let ServerStep::Challenge(challenge) = server.step(&first, 0).unwrap() else {
            panic!()
        };
        let mut timed = t.elapsed();
        let ClientStep::Send(last) = client.step(&challenge, 0).unwrap() else {
            panic!()
        };
        let t = Instant::now();
        let ServerStep::Done { outcome, .. } = server.step(&last, 0).unwrap() else {
            panic!()
        };
        std::hint::black_box(outcome);
        drop(server);
        timed += t.elapsed();
        timed
    };
    let one = throughput(1, ops, setup, login);
    let two = throughput(2, ops, setup, login);
    report("scram-sha-256/server_login", ops, one, two, true);
}

fn oauthbearer(ops: usize, cached: bool) {
    let v = vectors();
    let now = v["now_ms"].as_i64().unwrap();
    let jwks = Arc::new(
        JwksValidator::new(JwtValidatorConfig {
            expected_issuer: Some(v["issuer"].as_str().unwrap().into()),
            expected_audiences: vec![v["audience"].as_str().unwrap().into()],
            ..Default::default()
        })
        .unwrap(),
    );
    jwks.set_jwks(&v["jwks"].to_string(), now).unwrap();
    let mut registry = MechanismRegistry::new();
    if cached {
        registry.register_cached_oauthbearer_server(jwks);
    } else {
        registry.register_oauthbearer_server(jwks);
    }
    // Two connections, two tokens (same key, different claims).
    let tokens: Vec<String> = ["rs256", "rs256-string-scope"]
        .iter()
        .map(|name| {
            let t = v["tokens"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == *name)
                .unwrap();
            t["token"].as_str().unwrap().to_string()
        })
        .collect();
    let setup = |i: usize| format!("n,,\x01auth=Bearer {}\x01\x01", tokens[i]).into_bytes();
    let exchange = |first: &mut Vec<u8>| {
        let mut server = registry.server("OAUTHBEARER").unwrap();
        let ServerStep::Done { outcome, .. } = server.step(first, now).unwrap() else {
            panic!()
        };
        std::hint::black_box(outcome);
        Duration::ZERO
    };
    let one = throughput(1, ops, setup, exchange);
    let two = throughput(2, ops, setup, exchange);
    let name = if cached {
        "oauthbearer/cached_validate"
    } else {
        "oauthbearer/rs256_validate"
    };
    report(name, ops, one, two, false);
}

/// What this machine gives a second thread when nothing at all is shared: SHA-256
/// compressions on each thread's own state (the ceiling the workloads above are read against:
/// a VM's two vCPUs may not be two whole cores).
fn independent(ops: usize) {
    let setup = |i: usize| [i as u32; 8];
    let compress = |state: &mut [u32; 8]| {
        let block = sha2::digest::generic_array::GenericArray::from([7u8; 64]);
        for _ in 0..64 {
            sha2::compress256(state, std::slice::from_ref(&block));
        }
        std::hint::black_box(&state);
        Duration::ZERO
    };
    let one = throughput(1, ops, setup, compress);
    let two = throughput(2, ops, setup, compress);
    report("independent/sha256_compress_x64", ops, one, two, false);
}

fn main() {
    // `cargo bench` passes `--bench`; a filter word selects workloads.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    if wanted("independent") {
        independent(100_000);
    }
    if wanted("scram") {
        scram(200_000);
    }
    if wanted("cached") {
        oauthbearer(1_000_000, true);
    }
    if wanted("rs256") {
        oauthbearer(20_000, false);
    }
}
