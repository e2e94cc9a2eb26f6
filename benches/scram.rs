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

        // The implementation `pbkdf2_4096` replaced (the RustCrypto `pbkdf2` crate over
        // `hmac`), timed in the same run: before and after on the same machine state.
        c.bench_function(&format!("{name}/pbkdf2_crate_4096"), |b| {
            let mut out = vec![0u8; mech.hash_len()];
            b.iter(|| match mech {
                ScramMechanism::Sha256 => pbkdf2::pbkdf2_hmac::<sha2::Sha256>(
                    b"pencil",
                    b"W22ZaJ0SNY7soEsUEjb6gQ==",
                    4096,
                    &mut out,
                ),
                ScramMechanism::Sha512 => pbkdf2::pbkdf2_hmac::<sha2::Sha512>(
                    b"pencil",
                    b"W22ZaJ0SNY7soEsUEjb6gQ==",
                    4096,
                    &mut out,
                ),
            })
        });

        // The floor under `pbkdf2_4096`: PBKDF2 with 4096 iterations cannot do less than
        // 2 x 4096 sequential compression-function calls (inner and outer hash of each HMAC).
        // Each call starts from the state the previous one left, so the calls cannot be
        // skipped or overlapped. (The block is fixed, though, so unlike in PBKDF2, where each
        // message is the previous output, its loading is off the chain of dependencies.) The
        // `bench-soft-sha` feature times the portable compression function.
        c.bench_function(&format!("{name}/sha_floor_8192"), |b| match mech {
            ScramMechanism::Sha256 => {
                let block = sha2::digest::generic_array::GenericArray::from([0x5au8; 64]);
                b.iter(|| {
                    let mut state = criterion::black_box([0x6a09_e667u32; 8]);
                    for _ in 0..8192 {
                        sha2::compress256(&mut state, std::slice::from_ref(&block));
                    }
                    state
                })
            }
            ScramMechanism::Sha512 => {
                let block = sha2::digest::generic_array::GenericArray::from([0x5au8; 128]);
                b.iter(|| {
                    let mut state = criterion::black_box([0x6a09_e667_f3bc_c908u64; 8]);
                    for _ in 0..8192 {
                        sha2::compress512(&mut state, std::slice::from_ref(&block));
                    }
                    state
                })
            }
        });

        // The same 8192 compressions with PBKDF2's own dependency: each block's first hash
        // length is the previous output (written out big-endian), and each call starts from
        // the same fixed state, as an HMAC's inner and outer hashes do. No HMAC bookkeeping,
        // no XOR: what no PBKDF2 built on this compression function can go under.
        c.bench_function(&format!("{name}/sha_chained_floor_8192"), |b| match mech {
            ScramMechanism::Sha256 => {
                let mut block = sha2::digest::generic_array::GenericArray::from([0x5au8; 64]);
                b.iter(|| {
                    let start = criterion::black_box([0x6a09_e667u32; 8]);
                    for _ in 0..8192 {
                        let mut state = start;
                        sha2::compress256(&mut state, std::slice::from_ref(&block));
                        write_be32(&state, &mut block[..32]);
                    }
                    block[0]
                })
            }
            ScramMechanism::Sha512 => {
                let mut block = sha2::digest::generic_array::GenericArray::from([0x5au8; 128]);
                b.iter(|| {
                    let start = criterion::black_box([0x6a09_e667_f3bc_c908u64; 8]);
                    for _ in 0..8192 {
                        let mut state = start;
                        sha2::compress512(&mut state, std::slice::from_ref(&block));
                        for (bytes, word) in block[..64].chunks_exact_mut(8).zip(state) {
                            bytes.copy_from_slice(&word.to_be_bytes());
                        }
                    }
                    block[0]
                })
            }
        });

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

/// State words out big-endian, as src/credential/pbkdf2.rs writes them (not inlined, so that
/// the compiler emits two 16-byte stores the next compression's loads can forward from).
#[inline(never)]
fn write_be32(state: &[u32; 8], out: &mut [u8]) {
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
}
