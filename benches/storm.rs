//! A re-authentication storm on the server side: N connections (100,000 by default), all
//! authenticated, all re-authenticate within 10 s of simulated time, as a token refresh or a
//! `connections.max.reauth.ms` boundary shared by many clients can make them. Everything goes
//! through the real connection drivers and the frame codec: `ClientConnection` builds each
//! SaslHandshake and SaslAuthenticate request, `FrameDecoder` splits the bytes,
//! `ServerConnection::handle_frame` answers, and the client reads the answer.
//!
//! ```text
//! python3 benches/storm_tokens.py                  # once: 2 x 100,000 RS256 tokens (cached)
//! cargo bench --bench storm [-- [scram|oauth] [--connections N]]
//! ```
//!
//! Workloads:
//! - `SCRAM-SHA-256`: user alice (4096 iterations) in one shared `CredentialStore`; the client
//!   keys are derived once and cached (one `PasswordCredential` for every client connection,
//!   as a client process has).
//! - `OAUTHBEARER`: a `JwksValidator` for the key of `target/storm/jwks.json` behind the
//!   registry's verdict cache (`register_cached_oauthbearer_server`, what every binding
//!   registers). Connection i authenticates with subject i's first token and re-authenticates
//!   with its second: a refreshed token, same principal, never seen before, so every
//!   re-authentication checks an RS256 signature and adds a verdict to the cache.
//!
//! The model (the same in `benches/java` `Storm`, on Kafka's own classes): the re-authentication
//! times t_i are N uniform draws over 10 s (splitmix64, seed 42), sorted; connection i starts
//! at t_i. One network thread serves every connection: re-authentication i starts when it is
//! due or when the thread is done with the previous one, whichever is later (s_i), and holds
//! the thread for c_i, the measured time of its server-side calls (frame splitting,
//! `handle_frame`, `poll_transmit`, for every request of the exchange). The client's own
//! calls take k_i (measured too; they run on the client's machine, so they add latency but do
//! not hold the server). An application request the client holds while it re-authenticates
//! waits L_i = (s_i - t_i) + c_i + k_i; the network adds nothing.
//!
//! Printed per workload: mean c (server CPU per re-authentication) and k, L's p50, p99 and
//! max, the network thread's utilisation (sum of c over 10 s), and the server side's heap:
//! bytes held per authenticated connection and the peak during the storm. Heap is counted by
//! a global allocator that tags each allocation made while server code runs (and the shared
//! server objects made in setup); the clients' memory is not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::messages::FrameDecoder;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::mech::oauthbearer::TokenSource;
use ksasl::*;
use serde_json::Value;

mod common;

// ------------------------------------------------------------------------ server-side heap

thread_local! {
    /// Set while server code runs on this thread: what it allocates counts as server memory.
    static SERVER_SIDE: Cell<bool> = const { Cell::new(false) };
    /// Server bytes live, and the most live since the last reset. The storm runs on one
    /// thread, so plain thread-local counters are exact and cost next to nothing.
    static SERVER_LIVE: Cell<isize> = const { Cell::new(0) };
    static SERVER_PEAK: Cell<isize> = const { Cell::new(0) };
}

/// The system allocator with one tag byte in front of every block: 1 for a block allocated
/// on the server side. A block is counted off by its own tag, wherever it is freed.
struct Tagged;

fn padded(l: Layout) -> (Layout, usize) {
    let front = l.align().max(16);
    // Cannot fail: the size grows by at most one alignment unit of a valid layout.
    let layout = Layout::from_size_align(l.size() + front, front).expect("layout");
    (layout, front)
}

fn count(bytes: isize) {
    let _ = SERVER_LIVE.try_with(|live| {
        live.set(live.get() + bytes);
        let _ = SERVER_PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

unsafe impl GlobalAlloc for Tagged {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let (layout, front) = padded(l);
        let base = System.alloc(layout);
        if base.is_null() {
            return base;
        }
        let server = SERVER_SIDE.try_with(Cell::get).unwrap_or(false);
        let user = base.add(front);
        *user.sub(1) = server as u8;
        if server {
            count(l.size() as isize);
        }
        user
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let (layout, front) = padded(l);
        if *p.sub(1) == 1 {
            count(-(l.size() as isize));
        }
        System.dealloc(p.sub(front), layout)
    }
}

#[global_allocator]
static GLOBAL: Tagged = Tagged;

/// Runs `f` as server code: its allocations count as server memory.
fn server<T>(f: impl FnOnce() -> T) -> T {
    SERVER_SIDE.with(|c| c.set(true));
    let out = f();
    SERVER_SIDE.with(|c| c.set(false));
    out
}

fn server_live() -> isize {
    SERVER_LIVE.with(Cell::get)
}

/// Starts the peak over from the current live count.
fn reset_peak() {
    SERVER_PEAK.with(|p| p.set(server_live()));
}

fn server_peak() -> isize {
    SERVER_PEAK.with(Cell::get)
}

// ------------------------------------------------------------------------------ the model

const SPREAD_NS: f64 = 10e9;
const NOW: i64 = 1_800_000_000_000;

/// The N re-authentication times in nanoseconds of simulated time, sorted: splitmix64 from
/// seed 42, the top 53 bits as a uniform draw in [0, 1), times 10 s.
fn storm_times(n: usize) -> Vec<f64> {
    let mut state: u64 = 42;
    let mut times: Vec<f64> = (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * SPREAD_NS
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// The nearest-rank percentile `p` (0-100) of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One connection: both drivers and the bytes in flight each way. The server's driver is
/// boxed on the server side, so that its own size counts as server memory.
struct Conn {
    client: ClientConnection,
    server: Box<ServerConnection>,
    to_server: FrameDecoder,
    to_client: FrameDecoder,
}

/// Nanoseconds of server-side and of client-side calls in one exchange.
#[derive(Default, Clone, Copy)]
struct Cost {
    server_ns: u64,
    client_ns: u64,
}

fn elapsed_ns(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

impl Conn {
    fn new(client: Arc<ClientConfig>, server_config: &Arc<ServerConfig>) -> Conn {
        Conn {
            client: ClientConnection::new(client),
            server: server(|| Box::new(ServerConnection::new(server_config.clone()))),
            to_server: FrameDecoder::new(1 << 20),
            to_client: FrameDecoder::new(1 << 20),
        }
    }

    /// Runs the exchange the client has started until it authenticates or re-authenticates;
    /// panics on anything else (a storm with a failure has no figures).
    fn exchange(&mut self, now: i64, mut cost: Cost) -> Cost {
        loop {
            let t = Instant::now();
            let out = self.client.poll_transmit();
            if let Some(out) = out {
                self.to_server.push(&out);
            }
            cost.client_ns += elapsed_ns(t);

            let t = Instant::now();
            let answers = server(|| {
                let mut answers = Vec::new();
                while let Some(frame) = self.to_server.next_frame().expect("request frame") {
                    match self.server.handle_frame(&frame, now) {
                        ServerAction::Continue
                        | ServerAction::Authenticated(_)
                        | ServerAction::Reauthenticated(_) => {}
                        other => panic!("the server refused: {other:?}"),
                    }
                    if let Some(answer) = self.server.poll_transmit() {
                        answers.push(answer);
                    }
                }
                answers
            });
            cost.server_ns += elapsed_ns(t);

            let t = Instant::now();
            for answer in &answers {
                self.to_client.push(answer);
            }
            while let Some(frame) = self.to_client.next_frame().expect("response frame") {
                match self.client.handle_frame(&frame, now) {
                    ClientEvent::Continue => {}
                    ClientEvent::Authenticated(_) | ClientEvent::Reauthenticated(_) => {
                        cost.client_ns += elapsed_ns(t);
                        return cost;
                    }
                    other => panic!("the client failed: {other:?}"),
                }
            }
            cost.client_ns += elapsed_ns(t);
        }
    }
}

/// A workload: the server config all connections share, and each connection's client config
/// with a switch to its refreshed credential.
struct Workload {
    name: &'static str,
    /// When the connections authenticate (the storm comes half an hour later).
    start_ms: i64,
    server: Arc<ServerConfig>,
    clients: Vec<Arc<ClientConfig>>,
    refresh: Box<dyn Fn(usize)>,
}

fn scram(n: usize) -> Workload {
    let server_config = server(|| {
        let store = Arc::new(CredentialStore::new());
        store
            .add_user("alice", "alice-secret", 4096, &OsRandom)
            .unwrap();
        ServerConfig::builder(MechanismRegistry::password_servers(Some(store)))
            .set_max_reauth_ms(3_600_000)
            .build()
            .unwrap()
    });
    let keys = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    let config = ClientConfig::new(
        MechanismRegistry::password_clients(keys),
        ScramMechanism::Sha256.name(),
    )
    .unwrap();
    Workload {
        name: "SCRAM-SHA-256",
        start_ms: NOW,
        server: server_config,
        clients: vec![config; n],
        refresh: Box::new(|_| {}),
    }
}

/// A connection's token: its subject's first token until `refreshed`, then the second.
struct ConnToken {
    tokens: [OAuthBearerToken; 2],
    refreshed: AtomicBool,
}

impl TokenSource for ConnToken {
    fn token(&self, _now_ms: i64) -> Result<(OAuthBearerToken, SaslExtensions)> {
        let i = self.refreshed.load(Ordering::Relaxed) as usize;
        Ok((self.tokens[i].clone(), SaslExtensions::new()))
    }
}

fn storm_dir() -> PathBuf {
    std::env::var_os("KSASL_STORM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/storm")))
}

fn oauthbearer(n: usize) -> Workload {
    let dir = storm_dir();
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: run `python3 benches/storm_tokens.py` first",
                dir.join(name).display()
            )
        })
    };
    let meta: Value = serde_json::from_str(&read("meta.json")).unwrap();
    let count = meta["count"].as_u64().unwrap() as usize;
    assert!(
        count >= n,
        "{} holds tokens for {count} subjects, fewer than {n}: run benches/storm_tokens.py --count {n}",
        dir.display()
    );
    let iat_ms = meta["iat"].as_i64().unwrap() * 1000;
    let exp_ms = meta["exp"].as_i64().unwrap() * 1000;
    let jwks = read("jwks.json");
    let server_config = server(|| {
        let validator = common::jwks_validator(&meta, &jwks, iat_ms);
        let mut registry = MechanismRegistry::new();
        registry.register_cached_oauthbearer_server(validator);
        ServerConfig::builder(registry)
            .set_max_reauth_ms(3_600_000)
            .build()
            .unwrap()
    });
    let lines = read("tokens.txt");
    let mut lines = lines.lines();
    let mut sources = Vec::with_capacity(n);
    let clients = (0..n)
        .map(|i| {
            let principal = format!("svc-{i:06}");
            let mut token = || {
                OAuthBearerToken::new(lines.next().expect("token line"), &principal, exp_ms)
                    .unwrap()
            };
            let source = Arc::new(ConnToken {
                tokens: [token(), token()],
                refreshed: AtomicBool::new(false),
            });
            sources.push(source.clone());
            let mut registry = MechanismRegistry::new();
            registry.register_oauthbearer_client(source);
            ClientConfig::new(registry, "OAUTHBEARER").unwrap()
        })
        .collect();
    Workload {
        name: "OAUTHBEARER",
        // A minute after the tokens were issued.
        start_ms: iat_ms + 60_000,
        server: server_config,
        clients,
        refresh: Box::new(move |i| sources[i].refreshed.store(true, Ordering::Relaxed)),
    }
}

/// Authenticates every connection, then runs the storm and prints its figures.
fn run(w: Workload) {
    let (n, start_ms) = (w.clients.len(), w.start_ms);
    let t0 = Instant::now();
    let shared = server_live();
    let mut conns: Vec<Conn> = w
        .clients
        .iter()
        .map(|c| Conn::new(c.clone(), &w.server))
        .collect();
    drop(w.clients);
    for c in &mut conns {
        c.client.start(start_ms).unwrap();
        c.exchange(start_ms, Cost::default());
    }
    let held = server_live() - shared;
    let setup_s = t0.elapsed().as_secs_f64();

    let times = storm_times(n);
    let storm_ms = start_ms + 1_800_000;
    reset_peak();
    let before = server_live();
    let mut costs = Vec::with_capacity(n);
    let wall = Instant::now();
    for (i, (c, t)) in conns.iter_mut().zip(&times).enumerate() {
        let now = storm_ms + (*t / 1e6) as i64;
        (w.refresh)(i);
        let t = Instant::now();
        assert!(c.client.start_reauthentication(now).unwrap());
        let cost = Cost {
            client_ns: elapsed_ns(t),
            server_ns: 0,
        };
        costs.push(c.exchange(now, cost));
        assert!(c.server.is_ready() && c.client.is_ready());
    }
    let wall_s = wall.elapsed().as_secs_f64();
    let peak = server_peak();
    let after = server_live() - before;

    // One network thread, in order of the due times.
    let mut free = 0.0f64;
    let mut waits: Vec<f64> = times
        .iter()
        .zip(&costs)
        .map(|(&t, cost)| {
            let start = t.max(free);
            free = start + cost.server_ns as f64;
            (start - t) + (cost.server_ns + cost.client_ns) as f64
        })
        .collect();
    waits.sort_by(f64::total_cmp);
    let server_ns: u64 = costs.iter().map(|c| c.server_ns).sum();
    let client_ns: u64 = costs.iter().map(|c| c.client_ns).sum();
    let us = |ns: f64| ns / 1e3;
    println!(
        "storm ksasl {} connections={n} server_us={:.2} client_us={:.2} p50_us={:.1} p99_us={:.1} \
         max_us={:.1} utilisation={:.3} held_bytes_per_conn={} peak_mb={:.1}",
        w.name,
        us(server_ns as f64 / n as f64),
        us(client_ns as f64 / n as f64),
        us(percentile(&waits, 50.0)),
        us(percentile(&waits, 99.0)),
        us(percentile(&waits, 100.0)),
        server_ns as f64 / SPREAD_NS,
        held / n as isize,
        peak as f64 / (1 << 20) as f64,
    );
    println!(
        "  (setup {setup_s:.1} s: {n} first authentications; storm {wall_s:.2} s of wall time; \
         shared server objects {:.1} MiB; the storm left {:+.1} MiB on the server side)",
        shared as f64 / (1 << 20) as f64,
        after as f64 / (1 << 20) as f64,
    );
    drop(conns);
}

fn main() {
    // `cargo bench` passes `--bench`; a word selects workloads, `--connections N` the count.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n = 100_000;
    let mut words = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--connections" {
            n = it
                .next()
                .and_then(|v| v.parse().ok())
                .filter(|&v: &usize| v > 0)
                .expect("--connections takes a positive count");
        } else if !a.starts_with("--") {
            words.push(a.to_lowercase());
        }
    }
    let wanted = |w: &str| words.is_empty() || words.iter().any(|x| w.contains(x.as_str()));
    if wanted("scram") {
        run(scram(n));
    }
    if wanted("oauthbearer") {
        run(oauthbearer(n));
    }
}
