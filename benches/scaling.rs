//! Scaling across cores: logins per second with 1 and with 2 threads sharing what a broker's
//! network threads share (one mechanism registry, one credential store, one token validator
//! with its verdict cache). Each thread plays its own connections; the goal is 2 threads at
//! 1.8x one thread or better.
//!
//! Run with `cargo bench --bench scaling` (or `make bench`). Not criterion: threads have to
//! start together and the figure is a throughput. Each workload runs 41 rounds of short runs
//! (one thread and two threads of the workload and of its control, the order reversed every
//! other round), each timed from a barrier to the last thread's end; the figure is the ratio
//! of the best two-thread run to the best one-thread run, with the median of the rounds'
//! ratios beside it, and for a workload with a control, the median over the rounds of its
//! two-thread rate over the control's (see [`compare`] for why).
//!
//! Workloads:
//! - `scram-sha-256/server_login`: a SCRAM-SHA-256 login through an exchange from the shared
//!   registry (credential lookup in the shared store, a fresh random nonce, both steps, the
//!   outcome); each thread's client answers with cached keys, so the client's share (about
//!   40 %) is in every figure too. The server's share is also timed on its own.
//! - `scram-sha-256/server_login_unshared`: the control, each thread with a registry and
//!   store of its own.
//! - `oauthbearer/cached_validate`: an OAUTHBEARER exchange from the shared registry whose
//!   validator is a `CachingValidator` in front of a `JwksValidator`, each thread presenting
//!   its own RS256 token (two connections, two tokens), always found in the shared cache.
//! - `oauthbearer/cached_validate_unshared`: the control, each thread with a registry,
//!   validator and cache of its own.
//! - `oauthbearer/rs256_validate`: the same without the cache: every exchange checks the
//!   RS256 signature (nothing is shared but the key set).
//! - `independent/sha256_compress_x64`: no shared object at all, each thread compressing on its
//!   own state: the ceiling of this machine, against which the others are read.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use ksasl::*;

mod common;
use common::{jwks_validator, jwt_vectors};

/// Pairs of runs (one thread, two threads) per workload.
const PAIRS: usize = 41;

/// One run: `op` `ops` times on each of `threads` threads (each thread builds its own state
/// with `setup(thread index)`); returns (operations per second over the wall time, the sum
/// of the per-operation durations the ops reported).
fn run_once<S, F>(
    threads: usize,
    ops: usize,
    setup: &(impl Fn(usize) -> S + Sync),
    op: &F,
) -> (f64, Duration)
where
    F: Fn(&mut S) -> Duration + Sync,
{
    let start = Barrier::new(threads + 1);
    let (wall, timed) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let start = &start;
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
    ((threads * ops) as f64 / wall.as_secs_f64(), timed)
}

/// One workload's figures: the best run with one and with two threads, and the median of
/// the ratios of the pairs.
struct Figures {
    one: (f64, Duration),
    two: (f64, Duration),
    median: f64,
}

impl Figures {
    /// Two threads' best rate over one thread's.
    fn ratio(&self) -> f64 {
        self.two.0 / self.one.0
    }
}

/// Runs `PAIRS` rounds of short runs (about 0.1 s for one thread). A round runs each of the
/// `variants` (a workload and its control) with one thread and with two threads, in reverse
/// order every other round; `setup(variant, thread)` builds a thread's state.
///
/// This VM shares its host: one thread's rate moves by 20 % from one second to the next, so
/// a single pair's ratio ranges from 1.2x to 2.8x for the same code. The other tenants can
/// only slow a run down, never speed it up, so the best of many short runs is the rate of the
/// undisturbed machine, and the ratio of the two best rates is the figure read against the
/// goal. (It leans low: a two-thread run is undisturbed only when both vCPUs are.) The median
/// of the pairs' ratios is printed beside it.
///
/// With two variants, the median over the rounds of the first variant's two-thread rate over
/// the second's is returned too: runs seconds apart share most of the host's disturbance, so
/// this ratio shows a few percent of contention between the threads of a shared object that
/// the noise of the scaling ratios hides.
fn compare<S, F>(
    ops: usize,
    variants: usize,
    setup: impl Fn(usize, usize) -> S + Sync,
    op: F,
) -> (Vec<Figures>, f64)
where
    F: Fn(&mut S) -> Duration + Sync,
{
    let mut figures: Vec<Figures> = (0..variants)
        .map(|_| Figures {
            one: (0.0, Duration::ZERO),
            two: (0.0, Duration::ZERO),
            median: 0.0,
        })
        .collect();
    let mut ratios = vec![Vec::with_capacity(PAIRS); variants];
    let mut against = Vec::with_capacity(PAIRS);
    for round in 0..PAIRS {
        let mut runs: Vec<(usize, usize)> = (0..variants).flat_map(|v| [(v, 1), (v, 2)]).collect();
        if round % 2 == 1 {
            runs.reverse();
        }
        let mut rates = vec![[(0.0, Duration::ZERO); 2]; variants];
        for (v, threads) in runs {
            let setup = |thread: usize| setup(v, thread);
            rates[v][threads - 1] = run_once(threads, ops, &setup, &op);
        }
        for (v, [one, two]) in rates.iter().enumerate() {
            ratios[v].push(two.0 / one.0);
            let f = &mut figures[v];
            if one.0 > f.one.0 {
                f.one = *one;
            }
            if two.0 > f.two.0 {
                f.two = *two;
            }
        }
        if variants == 2 {
            against.push(rates[0][1].0 / rates[1][1].0);
        }
    }
    for (f, mut r) in figures.iter_mut().zip(ratios) {
        r.sort_by(f64::total_cmp);
        f.median = r[PAIRS / 2];
    }
    against.sort_by(f64::total_cmp);
    (figures, against.get(PAIRS / 2).copied().unwrap_or(0.0))
}

/// The line under a workload and its control.
/// A workload's figures and its control's (`names`: the workload's, then the control's), and
/// the workload's two-thread rate against the control's.
fn report_pair(names: [&str; 2], ops: usize, figures: Vec<Figures>, against: f64, share: bool) {
    for (name, f) in names.into_iter().zip(figures) {
        report(name, ops, f, share);
    }
    let name = names[0];
    println!("{name}: shared against unshared, 2 threads, median of the rounds {against:.3}x");
}

fn report(name: &str, ops: usize, f: Figures, share: bool) {
    let per = |(_, timed): (f64, Duration), threads: usize| {
        timed.as_secs_f64() * 1e6 / (threads * ops) as f64
    };
    let extra = if share {
        format!(
            " (server share {:.2} us and {:.2} us per login)",
            per(f.one, 1),
            per(f.two, 2)
        )
    } else {
        String::new()
    };
    println!(
        "{name}: 1 thread {:.0}/s, 2 threads {:.0}/s, {:.2}x (best runs of {PAIRS}; median of the pairs {:.2}x){extra}",
        f.one.0,
        f.two.0,
        f.ratio(),
        f.median
    );
}

/// A server registry with alice's SCRAM credentials in a store of its own.
fn scram_registry() -> MechanismRegistry {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    MechanismRegistry::password_servers(Some(store))
}

/// SCRAM-SHA-256 logins: every thread's server exchanges from one registry and store, and
/// the control, each thread with its own (what the same work scales to when nothing is
/// shared).
fn scram(ops: usize) {
    let mech = ScramMechanism::Sha256;
    let common = Arc::new(scram_registry());
    let name = mech.name();
    let setup = |variant: usize, _| {
        let registry = if variant == 0 {
            common.clone()
        } else {
            Arc::new(scram_registry())
        };
        // Each thread's client, its keys derived once (a re-authenticating client's cache).
        let keys = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
        (registry, keys)
    };
    let login = |(registry, keys): &mut (Arc<MechanismRegistry>, Arc<PasswordCredential>)| {
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
    let (figures, against) = compare(ops, 2, setup, login);
    let names = [
        "scram-sha-256/server_login",
        "scram-sha-256/server_login_unshared",
    ];
    report_pair(names, ops, figures, against, true);
}

/// OAUTHBEARER exchanges from one registry (one validator; `cached`: one verdict cache) for
/// all threads; with `cached`, also the control, each thread with a registry of its own.
fn oauthbearer(ops: usize, cached: bool) {
    let v = jwt_vectors();
    let now = v["now_ms"].as_i64().unwrap();
    let registry = || {
        let jwks = jwks_validator(&v, &v["jwks"].to_string(), now);
        let mut registry = MechanismRegistry::new();
        if cached {
            registry.register_cached_oauthbearer_server(jwks);
        } else {
            registry.register_oauthbearer_server(jwks);
        }
        Arc::new(registry)
    };
    let common = registry();
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
    let setup = |variant: usize, i: usize| {
        let registry = if variant == 0 {
            common.clone()
        } else {
            registry()
        };
        let first = format!("n,,\x01auth=Bearer {}\x01\x01", tokens[i]).into_bytes();
        (registry, first)
    };
    let exchange = |(registry, first): &mut (Arc<MechanismRegistry>, Vec<u8>)| {
        let mut server = registry.server("OAUTHBEARER").unwrap();
        let ServerStep::Done { outcome, .. } = server.step(first, now).unwrap() else {
            panic!()
        };
        std::hint::black_box(outcome);
        Duration::ZERO
    };
    if !cached {
        let (mut figures, _) = compare(ops, 1, setup, exchange);
        report("oauthbearer/rs256_validate", ops, figures.remove(0), false);
        return;
    }
    let (figures, against) = compare(ops, 2, setup, exchange);
    let names = [
        "oauthbearer/cached_validate",
        "oauthbearer/cached_validate_unshared",
    ];
    report_pair(names, ops, figures, against, false);
}

/// What this machine gives a second thread when nothing at all is shared: SHA-256
/// compressions on each thread's own state (the ceiling the workloads above are read against:
/// a VM's two vCPUs may not be two whole cores).
fn independent(ops: usize) {
    let setup = |_, i: usize| [i as u32; 8];
    let compress = |state: &mut [u32; 8]| {
        let block = sha2::digest::generic_array::GenericArray::from([7u8; 64]);
        for _ in 0..64 {
            sha2::compress256(state, std::slice::from_ref(&block));
        }
        std::hint::black_box(&state);
        Duration::ZERO
    };
    let (mut figures, _) = compare(ops, 1, setup, compress);
    report(
        "independent/sha256_compress_x64",
        ops,
        figures.remove(0),
        false,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter word selects workloads.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    if wanted("independent") {
        independent(30_000);
    }
    if wanted("scram") {
        scram(15_000);
    }
    if wanted("cached") {
        oauthbearer(60_000, true);
    }
    if wanted("rs256") {
        oauthbearer(3_000, false);
    }
}
