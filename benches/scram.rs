//! SCRAM costs per login. Run with `make bench` (which also measures OpenSSL's PBKDF2
//! through Python's hashlib in the same run, for comparison).

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ksasl::*;

const CLIENT_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
const SERVER_NONCE: &str = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";

struct Fixture {
    mech: ScramMechanism,
    store: Arc<CredentialStore>,
    client_first: Vec<u8>,
    server_first: Vec<u8>,
    client_final: Vec<u8>,
    server_final: Vec<u8>,
}

fn client(mech: ScramMechanism, cred: Arc<PasswordCredential>) -> ClientExchange {
    let opts = ScramClientOptions {
        fixed_nonce: Some(CLIENT_NONCE.into()),
        ..Default::default()
    };
    ClientExchange::new(Box::new(ScramClient::new(mech, cred, opts).unwrap()))
}

fn server(f: &Fixture) -> ServerExchange {
    let opts = ScramServerOptions {
        fixed_nonce: Some(SERVER_NONCE.into()),
        ..Default::default()
    };
    let mut s = ServerExchange::new(Box::new(ScramServer::new(f.mech, opts)));
    s.set_credential_lookup(Some(f.store.clone()));
    s
}

fn bytes(step: ClientStep) -> Vec<u8> {
    match step {
        ClientStep::Send(m) => m,
        other => panic!("{other:?}"),
    }
}

fn fixture(mech: ScramMechanism) -> Fixture {
    let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
    let store = Arc::new(CredentialStore::new());
    store
        .set_scram(
            "user",
            ScramCredential::derive(mech, b"pencil", &salt, 4096).unwrap(),
        )
        .unwrap();
    let mut f = Fixture {
        mech,
        store,
        client_first: vec![],
        server_first: vec![],
        client_final: vec![],
        server_final: vec![],
    };
    let mut c = client(
        mech,
        Arc::new(PasswordCredential::new("user", "pencil").unwrap()),
    );
    let mut s = server(&f);
    f.client_first = bytes(c.start(0).unwrap());
    f.server_first = match s.step(&f.client_first, 0).unwrap() {
        ServerStep::Challenge(m) => m,
        other => panic!("{other:?}"),
    };
    f.client_final = bytes(c.step(&f.server_first, 0).unwrap());
    f.server_final = match s.step(&f.client_final, 0).unwrap() {
        ServerStep::Done { message, .. } => message.unwrap(),
        other => panic!("{other:?}"),
    };
    f
}

fn bench(c: &mut Criterion) {
    for mech in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let f = fixture(mech);
        let name = mech.name();

        c.bench_function(&format!("{name}/pbkdf2_4096"), |b| {
            b.iter(|| mech.salted_password(b"pencil", b"W22ZaJ0SNY7soEsUEjb6gQ==", 4096))
        });

        // Its floor and the code it replaced are timed in benches/pbkdf2_floor.rs, interleaved
        // round by round (this VM's SHA speed drifts too much for one-after-the-other rows).

        // The same derivation with ring, the crate that verifies JWT signatures, to show why
        // SCRAM does not use it.
        let ring_alg = match mech {
            ScramMechanism::Sha256 => ring::pbkdf2::PBKDF2_HMAC_SHA256,
            ScramMechanism::Sha512 => ring::pbkdf2::PBKDF2_HMAC_SHA512,
        };
        c.bench_function(&format!("{name}/ring_pbkdf2_4096"), |b| {
            let mut out = vec![0u8; mech.hash_len()];
            let iterations = std::num::NonZeroU32::new(4096).unwrap();
            b.iter(|| {
                ring::pbkdf2::derive(
                    ring_alg,
                    iterations,
                    b"W22ZaJ0SNY7soEsUEjb6gQ==",
                    b"pencil",
                    &mut out,
                )
            })
        });

        c.bench_function(&format!("{name}/server_final_step"), |b| {
            b.iter_batched(
                || {
                    let mut s = server(&f);
                    s.step(&f.client_first, 0).unwrap();
                    s
                },
                |mut s| s.step(&f.client_final, 0).unwrap(),
                BatchSize::SmallInput,
            )
        });

        c.bench_function(&format!("{name}/server_login"), |b| {
            b.iter(|| {
                let mut s = server(&f);
                s.step(&f.client_first, 0).unwrap();
                s.step(&f.client_final, 0).unwrap()
            })
        });

        // What a binding's server login does (the JMH `scram2` figure of `make bench-java`
        // times the same work): an exchange from the registry, so with the credential lookup
        // and a fresh random server nonce, both steps and the outcome. Only the server's share
        // is timed; the client (with cached keys) answers between the steps.
        let registry = MechanismRegistry::password_servers(Some(f.store.clone()));
        let keys = Arc::new(PasswordCredential::new("user", "pencil").unwrap());
        c.bench_function(&format!("{name}/server_login_from_registry"), |b| {
            b.iter_custom(|iters| {
                let mut server_time = Duration::ZERO;
                for _ in 0..iters {
                    let mut cl = client(mech, keys.clone());
                    let first = bytes(cl.start(0).unwrap());
                    let t = Instant::now();
                    let mut s = registry.server(name).unwrap();
                    let challenge = match s.step(&first, 0).unwrap() {
                        ServerStep::Challenge(m) => m,
                        other => panic!("{other:?}"),
                    };
                    server_time += t.elapsed();
                    let last = bytes(cl.step(&challenge, 0).unwrap());
                    let t = Instant::now();
                    s.step(&last, 0).unwrap();
                    criterion::black_box(s.outcome().cloned());
                    drop(s);
                    server_time += t.elapsed();
                }
                server_time
            })
        });

        // The Rust side of the JMH `ScramParts` pieces (`benches/java/run.sh ScramParts`), for
        // the binding's own cost per call: an exchange from the registry made and dropped
        // (`part1`), and the same with the first step on a recorded client-first (`part2`).
        c.bench_function(&format!("{name}/server_new_drop"), |b| {
            b.iter(|| drop(criterion::black_box(registry.server(name).unwrap())))
        });
        c.bench_function(&format!("{name}/server_new_first_step"), |b| {
            b.iter(|| {
                let mut s = registry.server(name).unwrap();
                criterion::black_box(s.step(&f.client_first, 0).unwrap())
            })
        });

        c.bench_function(&format!("{name}/client_login_4096"), |b| {
            b.iter(|| {
                // A fresh credential: nothing cached, one PBKDF2 run at 4096 iterations.
                let mut cl = client(
                    mech,
                    Arc::new(PasswordCredential::new("user", "pencil").unwrap()),
                );
                cl.start(0).unwrap();
                cl.step(&f.server_first, 0).unwrap();
                cl.step(&f.server_final, 0).unwrap()
            })
        });

        let cached = Arc::new(PasswordCredential::new("user", "pencil").unwrap());
        c.bench_function(&format!("{name}/client_reauth_cached"), |b| {
            b.iter(|| {
                let mut cl = client(mech, cached.clone());
                cl.start(0).unwrap();
                cl.step(&f.server_first, 0).unwrap();
                cl.step(&f.server_final, 0).unwrap()
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
