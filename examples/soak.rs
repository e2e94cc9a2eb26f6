//! `make soak` (issue 17): many Kafka client connections over loopback TCP against a broker
//! built on ksasl, with a short session lifetime, for long enough that every connection
//! re-authenticates at least 100 times while it keeps sending requests.
//!
//! One binary, two roles:
//!
//! ```text
//! soak [run] [--connections 1000] [--seconds 240] [--lifetime-ms 2000] [--interval-ms 250]
//!            [--token-seconds 10] [--warmup-seconds 20] [--min-reauths 100] [--ramp-ms 5000]
//! soak server PORT_FILE [--lifetime-ms 2000] [--max-seconds 3600]
//! ```
//!
//! `run` (the default) starts this binary as a child process in the `server` role, samples the
//! child's RSS from `/proc/<pid>/status` (and its live heap, counted by its allocator) every
//! second, runs the clients (one thread each,
//! mechanisms round robin PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 / OAUTHBEARER; the
//! OAUTHBEARER tokens come from one [`Refresher`] with a short token lifetime, driven with a
//! [`Tracker`] by the background refresher, so a refreshed token also makes the connections
//! still on the old one re-authenticate), stops by itself after `--seconds`, kills the child
//! by its pid, prints the figures and exits non-zero if one of them fails:
//!
//! * requests sent = requests answered (counted by the clients and by the server);
//! * re-authentications per connection (min / median / max), the minimum at least
//!   `--min-reauths`;
//! * connections killed for expiry (the gate's `CloseExpired`): 0;
//! * failed authentications and re-authentications (both sides): 0;
//! * the server's RSS every second; every sample of the last 10 % of the run within 5 % of the
//!   value after warm-up (the first sample at least `--warmup-seconds` after the clients
//!   started).
//!
//! The server is a Kafka-protocol server on 127.0.0.1 (a free port, written to PORT_FILE):
//! `connections.max.reauth.ms` = `--lifetime-ms`, users in a [`CredentialStore`] for PLAIN and
//! SCRAM, OAUTHBEARER with the unsecured validator, one thread per connection, and every frame
//! through `check_frame_size`, `gate` and `handle_frame` as a broker does (a failure response
//! written at its `FailAt` deadline, then close; `CloseExpired` and `Close` close without an
//! answer). Under `Gate::Process` it answers Metadata v0 (an empty cluster). A line `WORD` on
//! its standard input is answered with one line `WORD name=value ...` of its counters on its
//! standard output; it exits when the input ends (its parent is gone) or after
//! `--max-seconds`.
//!
//! Each client sends a request every 75-125 % of `--interval-ms`, one at a time, asks
//! `before_request` before each, and starts the re-authentication at `next_deadline` as an
//! event loop's timer would (or up to 25 ms early, right after a request, so that answer
//! arrives during the exchange); the OAUTHBEARER ones also when the tracker asks.
//!
//! Everything binds to 127.0.0.1. Each process holds one socket per connection (plus a few):
//! the open-file limit must exceed `--connections` + 16; the run checks `ulimit -n` through
//! `/proc/self/limits` before it starts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use ksasl::background::{wall_clock_ms, BackgroundRefresher};
use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::messages::{
    response_correlation_id, FrameDecoder, RequestPrefix, API_VERSIONS, SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
};
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::refresh::{RefreshConfig, Refresher, Tracker, TrackerConfig};
use ksasl::session::Gate;
use ksasl::{
    CredentialStore, MechanismRegistry, OsRandom, PasswordCredential, SharedRandom,
    UnsecuredTokenBuilder, UnsecuredValidator, UnsecuredValidatorConfig,
};

/// Counts the bytes the program holds on the heap, so the report can tell a leak (the live
/// heap grows) from allocator fragmentation (RSS grows, the live heap does not).
struct LiveHeap;

static LIVE_HEAP: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call forwards to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for LiveHeap {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            LIVE_HEAP.fetch_add(l.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE_HEAP.fetch_sub(l.size() as i64, Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let q = System.realloc(p, l, n);
        if !q.is_null() {
            LIVE_HEAP.fetch_add(n as i64 - l.size() as i64, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: LiveHeap = LiveHeap;

const METADATA: i16 = 3;
const MECHANISMS: [&str; 4] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];
const OAUTH: usize = 3;
/// PLAIN and SCRAM users (client `i` logs in as user `i / 4 % USERS`).
const USERS: usize = 8;
const TOKEN_PRINCIPAL: &str = "soak-oauth";
/// Thread stacks: the connections need little; 1,000 default (2 MiB) stacks would only
/// reserve address space, but small ones keep the process's mappings small too.
const STACK: usize = 256 * 1024;

fn user(k: usize) -> (String, String) {
    (format!("soak-user-{k}"), format!("soak-secret-{k}"))
}

/// Failures printed in full; later ones are only counted.
static LOGGED: AtomicU64 = AtomicU64::new(0);

fn log_failure(what: String) {
    if LOGGED.fetch_add(1, Ordering::Relaxed) < 20 {
        eprintln!("soak: {what}");
    }
}

// --- options ------------------------------------------------------------------------------

/// `--name value` options with defaults; an unknown option is an error.
struct Options {
    values: Vec<(&'static str, i64)>,
}

impl Options {
    fn parse(args: &[String], defaults: &[(&'static str, i64)]) -> Result<Self, String> {
        let mut values = defaults.to_vec();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let name = a
                .strip_prefix("--")
                .ok_or(format!("unexpected argument {a:?}"))?;
            let slot = values
                .iter_mut()
                .find(|(n, _)| *n == name)
                .ok_or(format!("unknown option --{name}"))?;
            let v = it.next().ok_or(format!("--{name} needs a value"))?;
            slot.1 = v
                .parse()
                .map_err(|_| format!("--{name}: {v:?} is not an integer"))?;
        }
        Ok(Options { values })
    }

    fn get(&self, name: &str) -> i64 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, v)| *v)
    }
}

// --- the server ---------------------------------------------------------------------------

#[derive(Default)]
struct ServerCounters {
    accepted: AtomicU64,
    open: AtomicU64,
    requests_answered: AtomicU64,
    other_answered: AtomicU64,
    authenticated: AtomicU64,
    reauthenticated: AtomicU64,
    expired_kills: AtomicU64,
    failed_authentications: AtomicU64,
    failed_reauthentications: AtomicU64,
    closed_by_client: AtomicU64,
    closed_other: AtomicU64,
}

impl ServerCounters {
    fn line(&self, config: &ServerConfig) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let m = config.metrics();
        let metric = |name: &str| m.total(name).unwrap_or(0);
        format!(
            "accepted={} open={} requests_answered={} other_answered={} authenticated={} \
             reauthenticated={} expired_kills={} failed_authentications={} \
             failed_reauthentications={} closed_by_client={} closed_other={} \
             metric_successful_reauthentication_total={} metric_failed_authentication_total={} \
             metric_failed_reauthentication_total={} metric_expired_connections_killed_count={} \
             heap_live_bytes={}",
            get(&self.accepted),
            get(&self.open),
            get(&self.requests_answered),
            get(&self.other_answered),
            get(&self.authenticated),
            get(&self.reauthenticated),
            get(&self.expired_kills),
            get(&self.failed_authentications),
            get(&self.failed_reauthentications),
            get(&self.closed_by_client),
            get(&self.closed_other),
            metric("successful-reauthentication-total"),
            metric("failed-authentication-total"),
            metric("failed-reauthentication-total"),
            metric("expired-connections-killed-count"),
            LIVE_HEAP.load(Ordering::Relaxed),
        )
    }
}

fn server(args: &[String]) -> Result<(), String> {
    let (port_file, rest) = args
        .split_first()
        .ok_or("usage: soak server PORT_FILE [--lifetime-ms MS] [--max-seconds S]")?;
    let o = Options::parse(rest, &[("lifetime-ms", 2000), ("max-seconds", 3600)])?;
    let store = Arc::new(CredentialStore::new());
    for k in 0..USERS {
        let (name, password) = user(k);
        store
            .add_user(&name, &password, 4096, &OsRandom)
            .map_err(|e| e.to_string())?;
    }
    let mut registry = MechanismRegistry::password_servers(Some(store));
    let validator =
        UnsecuredValidator::new(UnsecuredValidatorConfig::default()).map_err(|e| e.to_string())?;
    registry.register_cached_oauthbearer_server(Arc::new(validator));
    let config = ServerConfig::builder(registry)
        .set_max_reauth_ms(o.get("lifetime-ms")) // connections.max.reauth.ms
        .set_api_version(METADATA as i64, 0, 0)
        .build()
        .map_err(|e| e.to_string())?;
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    // Written whole, then renamed: the parent never reads half a number.
    let tmp = format!("{port_file}.tmp");
    std::fs::write(&tmp, format!("{port}\n")).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, port_file).map_err(|e| format!("{port_file}: {e}"))?;

    let counters = Arc::new(ServerCounters::default());
    {
        // Control: a line `WORD` on the input is answered with `WORD <counters>` on the
        // output; the end of the input (the parent is gone) ends the server.
        let (counters, config) = (counters.clone(), config.clone());
        thread::spawn(move || {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                let Ok(line) = line else { break };
                println!("{} {}", line.trim(), counters.line(&config));
            }
            std::process::exit(0);
        });
    }
    let max_seconds = o.get("max-seconds").max(1) as u64;
    thread::spawn(move || {
        thread::sleep(Duration::from_secs(max_seconds));
        eprintln!("soak server: --max-seconds reached, exiting");
        std::process::exit(3);
    });
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                log_failure(format!("accept: {e}"));
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        counters.accepted.fetch_add(1, Ordering::Relaxed);
        counters.open.fetch_add(1, Ordering::Relaxed);
        let (counters, config) = (counters.clone(), config.clone());
        let spawned = thread::Builder::new().stack_size(STACK).spawn(move || {
            serve(&stream, config, &counters);
            let _ = stream.shutdown(Shutdown::Both);
            counters.open.fetch_sub(1, Ordering::Relaxed);
        });
        if let Err(e) = spawned {
            log_failure(format!("server: cannot start a connection thread: {e}"));
        }
    }
    Ok(())
}

/// The answer to a request the gate let through (a live session), or `None` to close.
fn answer(config: &ServerConfig, frame: &[u8]) -> Option<Vec<u8>> {
    let p = RequestPrefix::parse(frame).ok()?;
    match p.api_key {
        METADATA if p.api_version == 0 => {
            // Metadata v0: correlation id, no brokers, no topics.
            let mut r = Vec::with_capacity(16);
            r.extend_from_slice(&12i32.to_be_bytes());
            r.extend_from_slice(&p.correlation_id.to_be_bytes());
            r.extend_from_slice(&0i32.to_be_bytes());
            r.extend_from_slice(&0i32.to_be_bytes());
            Some(r)
        }
        API_VERSIONS => config.api_versions_response(frame).ok().map(|(r, _)| r),
        // Not eligible for re-authentication (Kafka allows one per second): Kafka's
        // ILLEGAL_SASL_STATE answer.
        SASL_HANDSHAKE | SASL_AUTHENTICATE => ServerConnection::illegal_state_response(frame),
        _ => None,
    }
}

/// Serves one connection until it closes.
fn serve(stream: &TcpStream, config: Arc<ServerConfig>, c: &ServerCounters) {
    let _ = stream.set_nodelay(true);
    let mut conn = ServerConnection::new(config.clone());
    let mut rd = BufReader::with_capacity(4096, stream);
    let mut w = stream;
    let mut body = Vec::new();
    let mut reauthenticating = false;
    let count = |a: &AtomicU64| {
        a.fetch_add(1, Ordering::Relaxed);
    };
    let failed = |reauth: bool| match reauth {
        true => &c.failed_reauthentications,
        false => &c.failed_authentications,
    };
    loop {
        let mut len = [0u8; 4];
        if rd.read_exact(&mut len).is_err() {
            count(&c.closed_by_client);
            return;
        }
        // Kafka's limits on the length alone, before any of the body is read.
        let size = match conn.check_frame_size(i32::from_be_bytes(len), wall_clock_ms()) {
            Ok(size) => size,
            Err(e) => {
                log_failure(format!("server: refusing a frame: {e}"));
                count(&c.closed_other);
                return;
            }
        };
        body.resize(size, 0);
        if rd.read_exact(&mut body).is_err() {
            count(&c.closed_by_client);
            return;
        }
        let now = wall_clock_ms();
        let api_key = match body.get(..2) {
            Some(k) => i16::from_be_bytes([k[0], k[1]]),
            None => -1,
        };
        // The gate routes every frame: only Process reaches the request handlers.
        match conn.gate(api_key, now) {
            Gate::Process => {
                let Some(response) = answer(&config, &body) else {
                    log_failure(format!("server: unexpected request, API {api_key}"));
                    count(&c.closed_other);
                    return;
                };
                if w.write_all(&response).is_err() {
                    count(&c.closed_by_client);
                    return;
                }
                count(match api_key {
                    METADATA => &c.requests_answered,
                    _ => &c.other_answered,
                });
                continue;
            }
            Gate::CloseExpired => {
                let late = conn.session_expiry_ms().map_or(0, |x| now - x);
                log_failure(format!(
                    "server: closing an expired session (API {api_key}, {late} ms after expiry)"
                ));
                count(&c.expired_kills);
                return;
            }
            Gate::Close => {
                count(&c.closed_other);
                return;
            }
            Gate::BeginReauthentication => reauthenticating = true,
            Gate::NotAuthenticated => {}
        }
        let action = conn.handle_frame(&body, now);
        let out = conn.poll_transmit().unwrap_or_default();
        match action {
            ServerAction::Continue => {}
            ServerAction::Authenticated(_) => count(&c.authenticated),
            ServerAction::Reauthenticated(_) => {
                reauthenticating = false;
                count(&c.reauthenticated);
            }
            ServerAction::ReauthenticationFailed(e) => {
                // Only with a retrying policy (not this server's): the session holds.
                reauthenticating = false;
                log_failure(format!("server: re-authentication failed: {e}"));
                count(&c.failed_reauthentications);
            }
            ServerAction::FailAt { deadline_ms, error } => {
                log_failure(format!(
                    "server: {} failed: {error} (the client was told: {:?})",
                    if reauthenticating {
                        "re-authentication"
                    } else {
                        "authentication"
                    },
                    error.client_text().unwrap_or_default()
                ));
                count(failed(reauthenticating));
                // KIP-306: the failure response goes out at the deadline, then the close.
                let wait = deadline_ms.saturating_sub(wall_clock_ms()).max(0);
                thread::sleep(Duration::from_millis(wait as u64));
                let _ = w.write_all(&out);
                return;
            }
            ServerAction::CloseNow(e) => {
                log_failure(format!("server: closing: {e}"));
                count(failed(reauthenticating));
                return;
            }
            ServerAction::NeedCredential(_) | ServerAction::Pending(_) => {
                // The store answers at once and every mechanism is built in.
                log_failure("server: unexpected host task".into());
                count(&c.closed_other);
                return;
            }
        }
        if !out.is_empty() && w.write_all(&out).is_err() {
            count(&c.closed_by_client);
            return;
        }
    }
}

// --- the clients --------------------------------------------------------------------------

/// What one client connection did.
#[derive(Default, Clone)]
struct ClientResult {
    mechanism: usize,
    sent: u64,
    answered: u64,
    /// Answers that arrived while a re-authentication was in progress.
    answered_during_reauth: u64,
    reauthentications: u64,
    /// Re-authentications the tracker asked for (a refreshed token).
    tracker_reauthentications: u64,
    failed_reauthentications: u64,
    max_reauth_latency_ms: i64,
    error: Option<String>,
}

/// What every client shares.
struct ClientShared {
    addr: SocketAddr,
    end_ms: i64,
    interval_ms: i64,
    refresher: Arc<Refresher>,
    tracker: Arc<Tracker>,
    /// Per connection: the tracker asked it to re-authenticate.
    reauth_asked: Arc<Vec<AtomicBool>>,
}

/// A small xorshift generator for pacing jitter (no secrets involved).
struct Jitter(u64);

impl Jitter {
    fn below(&mut self, n: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as i64
    }
}

fn app_request(corr: i32) -> [u8; 18] {
    // Metadata v0: api key 3, version 0, correlation id, null client id, no topics (all).
    let mut f = [0u8; 18];
    f[..4].copy_from_slice(&14i32.to_be_bytes());
    f[4..6].copy_from_slice(&METADATA.to_be_bytes());
    f[8..12].copy_from_slice(&corr.to_be_bytes());
    f[12..14].copy_from_slice(&(-1i16).to_be_bytes());
    f
}

fn run_client(
    id: usize,
    config: Arc<ClientConfig>,
    shared: &ClientShared,
    r: &mut ClientResult,
) -> Result<(), String> {
    let oauth = r.mechanism == OAUTH;
    let mut stream = TcpStream::connect(shared.addr).map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let mut conn = ClientConnection::new(config);
    let mut decoder = FrameDecoder::new(1 << 20);
    let mut jitter = Jitter(0x9e37_79b9_7f4a_7c15 ^ (id as u64 + 1).wrapping_mul(0x2545_f491));
    let mut in_flight: VecDeque<i32> = VecDeque::new();
    let mut next_corr = 0i32;
    let mut buf = vec![0u8; 4096];
    // The refresher's generation when the current exchange started (for the tracker).
    let mut generation = shared.refresher.generation();
    let mut exchange_started = wall_clock_ms();
    let mut in_exchange = true;
    let now = wall_clock_ms();
    let mut next_send = now + jitter.below(shared.interval_ms);
    conn.start(now).map_err(|e| format!("start: {e}"))?;
    let mut drain_deadline = None;
    loop {
        let now = wall_clock_ms();
        let running = now < shared.end_ms;
        if !running {
            // Stop sending, finish what is in flight (answers, an exchange), then close.
            if in_flight.is_empty() && conn.is_ready() {
                break;
            }
            if now > *drain_deadline.get_or_insert(now + 10_000) {
                return Err(format!(
                    "still waiting after the end: {} answers in flight, exchange in progress: {}",
                    in_flight.len(),
                    !conn.is_ready()
                ));
            }
        }
        if running && conn.is_ready() {
            // A refreshed token: the tracker asks the connections still on the old one.
            // (A start within a second of the previous one is deferred, as a broker allows
            // one per second: it then comes due through next_deadline().)
            if oauth && shared.reauth_asked[id].swap(false, Ordering::Relaxed) {
                let stale = generation < shared.refresher.generation();
                if stale
                    && conn
                        .start_reauthentication(now)
                        .map_err(|e| format!("start_reauthentication: {e}"))?
                {
                    r.tracker_reauthentications += 1;
                }
            } else {
                // The scheduled re-authentication (an event loop's timer).
                conn.handle_timeout(now)
                    .map_err(|e| format!("handle_timeout: {e}"))?;
            }
            if now >= next_send && conn.is_ready() {
                // before_request starts a due re-authentication and holds the request.
                if conn
                    .before_request(now)
                    .map_err(|e| format!("before_request: {e}"))?
                {
                    let corr = next_corr;
                    next_corr += 1;
                    stream
                        .write_all(&app_request(corr))
                        .map_err(|e| format!("write: {e}"))?;
                    in_flight.push_back(corr);
                    r.sent += 1;
                    // 75-125 % of the interval.
                    next_send =
                        now + shared.interval_ms * 3 / 4 + jitter.below(shared.interval_ms / 2 + 1);
                    // A re-authentication due within 25 ms (and before the next request)
                    // starts now, with this request's answer still in flight: the answer
                    // arrives during the exchange and is handed back in order.
                    if conn
                        .next_deadline()
                        .is_some_and(|d| d < next_send && d <= now + 25)
                    {
                        conn.start_reauthentication(now)
                            .map_err(|e| format!("start_reauthentication: {e}"))?;
                    }
                }
            }
            if conn.is_reauthenticating() && !in_exchange {
                in_exchange = true;
                exchange_started = now;
                generation = shared.refresher.generation();
            }
        }
        if let Some(out) = conn.poll_transmit() {
            stream.write_all(&out).map_err(|e| format!("write: {e}"))?;
        }
        // Sleep in the read: until the next request, the re-authentication deadline, or at
        // most 100 ms (the tracker's asks are seen then).
        let mut wake = now + 100;
        if running {
            wake = wake.min(next_send);
            if let Some(d) = conn.next_deadline() {
                wake = wake.min(d);
            }
        }
        let timeout = (wake - wall_clock_ms()).clamp(1, 100) as u64;
        stream
            .set_read_timeout(Some(Duration::from_millis(timeout)))
            .map_err(|e| format!("set_read_timeout: {e}"))?;
        let n = match stream.read(&mut buf) {
            Ok(0) => {
                let e = conn.connection_closed(wall_clock_ms());
                return Err(format!(
                    "the server closed the connection ({} in flight): {e}",
                    in_flight.len()
                ));
            }
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("read: {e}")),
        };
        decoder.push(&buf[..n]);
        while let Some(frame) = decoder.next_frame().map_err(|e| e.to_string())? {
            let now = wall_clock_ms();
            match conn.handle_frame(&frame, now) {
                ClientEvent::Application => {
                    let got = response_correlation_id(&frame);
                    let want = in_flight.pop_front();
                    if got != want {
                        return Err(format!("answer {got:?}, expected {want:?}"));
                    }
                    r.answered += 1;
                    if conn.is_reauthenticating() {
                        r.answered_during_reauth += 1;
                    }
                }
                ClientEvent::Continue => {}
                event @ (ClientEvent::Authenticated(_) | ClientEvent::Reauthenticated(_)) => {
                    in_exchange = false;
                    let s = match event {
                        ClientEvent::Reauthenticated(s) => {
                            r.reauthentications += 1;
                            r.max_reauth_latency_ms =
                                r.max_reauth_latency_ms.max(now - exchange_started);
                            s
                        }
                        ClientEvent::Authenticated(s) => s,
                        _ => unreachable!("matched above"),
                    };
                    if oauth {
                        shared
                            .tracker
                            .authenticated(id as u64, generation, &s)
                            .map_err(|e| format!("tracker: {e}"))?;
                    }
                }
                ClientEvent::ReauthenticationFailed { error, .. } => {
                    r.failed_reauthentications += 1;
                    in_exchange = false;
                    log_failure(format!("client {id}: re-authentication failed: {error}"));
                }
                ClientEvent::Failed(e) => {
                    if conn.session().is_some() {
                        r.failed_reauthentications += 1;
                    }
                    return Err(format!("authentication failed: {e}"));
                }
                ClientEvent::Pending(_) => return Err("unexpected pending host work".into()),
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
    Ok(())
}

// --- the run: the server process ----------------------------------------------------------

/// The open-file soft limit of this process, from /proc/self/limits.
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// VmRSS (kB) and thread count of a process.
fn rss_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let l = status.lines().find(|l| l.starts_with(name))?;
        l.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("VmRSS:")?, field("Threads:")?))
}

/// User + system CPU seconds of a process (USER_HZ = 100 on Linux).
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// A `name=value` counter of a server stats line (`u64::MAX` when missing).
fn stat(line: &str, name: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
        .unwrap_or(u64::MAX)
}

/// This binary in the server role, as a child process, killed by its pid when dropped.
struct ServerProcess {
    child: Mutex<Child>,
    pid: u32,
    port: u16,
    /// Its standard input, and the lines of its standard output.
    control: Mutex<(ChildStdin, mpsc::Receiver<String>)>,
}

impl ServerProcess {
    fn start(lifetime_ms: i64, max_seconds: i64) -> Result<Self, String> {
        let port_file: PathBuf =
            std::env::temp_dir().join(format!("ksasl-soak-{}.port", std::process::id()));
        let _ = std::fs::remove_file(&port_file);
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .arg("server")
            .arg(&port_file)
            .args(["--lifetime-ms", &lifetime_ms.to_string()])
            .args(["--max-seconds", &max_seconds.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the server: {e}"))?;
        let stdin = child.stdin.take().ok_or("no server stdin")?;
        let stdout = child.stdout.take().ok_or("no server stdout")?;
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let t = Instant::now();
        let port = loop {
            if let Ok(s) = std::fs::read_to_string(&port_file) {
                if let Ok(p) = s.trim().parse() {
                    break p;
                }
            }
            let exited = child.try_wait().ok().flatten();
            if exited.is_some() || t.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(match exited {
                    Some(status) => format!("the server exited: {status}"),
                    None => "the server wrote no port within 30 s".into(),
                });
            }
            thread::sleep(Duration::from_millis(20));
        };
        let _ = std::fs::remove_file(&port_file);
        Ok(ServerProcess {
            pid: child.id(),
            child: Mutex::new(child),
            port,
            control: Mutex::new((stdin, rx)),
        })
    }

    /// The server's counters: `word` goes to its input, `word <counters>` comes back.
    fn ask(&self, word: &str) -> Option<String> {
        let mut c = self.control.lock().ok()?;
        c.0.write_all(format!("{word}\n").as_bytes()).ok()?;
        c.0.flush().ok()?;
        loop {
            let line = c.1.recv_timeout(Duration::from_secs(10)).ok()?;
            if let Some(rest) = line.strip_prefix(word) {
                return Some(rest.trim().to_string());
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Ok(mut child) = self.child.lock() {
            // By pid (std's kill sends SIGKILL to this child only), then reaped.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One sample of the server, every second: time, RSS (kB), threads, live heap (bytes).
type Sample = (i64, u64, u64, u64);

/// Samples the server every second until `sampling` turns false.
fn sample(server: Arc<ServerProcess>, sampling: Arc<AtomicBool>) -> JoinHandle<Vec<Sample>> {
    thread::spawn(move || {
        let mut samples = Vec::new();
        let mut next = Instant::now();
        while sampling.load(Ordering::Relaxed) {
            let now = wall_clock_ms();
            if let Some((rss, threads)) = rss_kb(server.pid) {
                let heap = server
                    .ask("sample")
                    .map_or(u64::MAX, |l| stat(&l, "heap_live_bytes"));
                samples.push((now, rss, threads, heap));
            }
            next += Duration::from_secs(1);
            thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        samples
    })
}

// --- the run: the clients ------------------------------------------------------------------

/// One refresher for the OAUTHBEARER connections (Kafka's refresh schedule, with the minimum
/// period and buffer at 0 so a short token is refreshed at 80-85 % of its life), and a tracker
/// that asks the connections still on an old token to re-authenticate, spread over a second.
fn token_refresher(token_seconds: i64) -> Result<(Arc<Refresher>, Arc<Tracker>), String> {
    let config = RefreshConfig::builder()
        .min_period_seconds(0)
        .buffer_seconds(0)
        .build()
        .map_err(|e| e.to_string())?;
    let refresher = Arc::new(Refresher::new(config, SharedRandom::default()));
    refresher.set_refresh_callback(move |r, now| {
        let built = UnsecuredTokenBuilder::for_principal(TOKEN_PRINCIPAL)
            .lifetime_seconds(token_seconds)
            .build(now);
        let result =
            built.and_then(|t| r.set_token(t.value(), t.expiry_ms(), t.principal(), &[], now));
        if let Err(e) = result {
            let _ = r.set_token_failure(&e.to_string(), now);
        }
    });
    let tracker = Tracker::new(
        refresher.clone(),
        TrackerConfig {
            spread_window_ms: 1000,
            early_refresh_lead_ms: 1000,
        },
    )
    .map_err(|e| e.to_string())?;
    Ok((refresher, Arc::new(tracker)))
}

/// Client configurations: per mechanism, per user (OAUTHBEARER: the refresher's token).
fn client_configs(refresher: &Arc<Refresher>) -> Result<Vec<Vec<Arc<ClientConfig>>>, String> {
    let mut configs = Vec::new();
    for (m, mechanism) in MECHANISMS.iter().enumerate() {
        let mut per_user = Vec::new();
        for k in 0..if m == OAUTH { 1 } else { USERS } {
            let registry = if m == OAUTH {
                let mut r = MechanismRegistry::new();
                r.register_oauthbearer_client(refresher.clone());
                r
            } else {
                let (name, password) = user(k);
                let c = PasswordCredential::new(&name, &password).map_err(|e| e.to_string())?;
                MechanismRegistry::password_clients(Arc::new(c))
            };
            let c = ClientConfig::builder(registry, mechanism)
                .set_client_id(Some("soak"))
                .build()
                .map_err(|e| e.to_string())?;
            per_user.push(c);
        }
        configs.push(per_user);
    }
    Ok(configs)
}

/// Starts the clients over `ramp_ms` and waits for all of them.
fn run_clients(
    shared: &Arc<ClientShared>,
    configs: &[Vec<Arc<ClientConfig>>],
    connections: usize,
    ramp_ms: i64,
) -> Result<Vec<ClientResult>, String> {
    let t0 = wall_clock_ms();
    let mut handles: Vec<JoinHandle<ClientResult>> = Vec::with_capacity(connections);
    for id in 0..connections {
        let m = id % MECHANISMS.len();
        let config = configs[m][(id / MECHANISMS.len()) % configs[m].len()].clone();
        let shared = shared.clone();
        let h = thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || {
                let mut r = ClientResult {
                    mechanism: m,
                    ..ClientResult::default()
                };
                if let Err(e) = run_client(id, config, &shared, &mut r) {
                    log_failure(format!("client {id} ({}): {e}", MECHANISMS[m]));
                    r.error = Some(e);
                }
                if m == OAUTH {
                    shared.tracker.forget(id as u64);
                }
                r
            })
            .map_err(|e| format!("cannot start client thread {id}: {e}"))?;
        handles.push(h);
        thread::sleep(Duration::from_micros(
            ramp_ms.max(0) as u64 * 1000 / connections as u64,
        ));
    }
    println!(
        "soak: {connections} clients started in {:.1} s",
        (wall_clock_ms() - t0) as f64 / 1000.0
    );
    Ok(handles
        .into_iter()
        .map(|h| {
            h.join().unwrap_or_else(|_| ClientResult {
                error: Some("client thread panicked".into()),
                ..ClientResult::default()
            })
        })
        .collect())
}

fn run(args: &[String]) -> Result<bool, String> {
    let o = Options::parse(
        args,
        &[
            ("connections", 1000),
            ("seconds", 240),
            ("lifetime-ms", 2000),
            ("interval-ms", 250),
            ("token-seconds", 10),
            ("warmup-seconds", 20),
            ("min-reauths", 100),
            ("ramp-ms", 5000),
        ],
    )?;
    let connections = o.get("connections").max(1) as usize;
    let seconds = o.get("seconds").max(1);
    let lifetime_ms = o.get("lifetime-ms");
    let fds = open_file_limit();
    if fds.is_some_and(|n| n < connections as u64 + 16) {
        return Err(format!(
            "the open-file limit ({}) is too low for {connections} connections: raise it (ulimit -n)",
            fds.unwrap_or(0)
        ));
    }
    println!(
        "soak: {connections} connections for {seconds} s, connections.max.reauth.ms={lifetime_ms}, \
         a request every ~{} ms per connection, OAUTHBEARER tokens of {} s, open-file limit {}",
        o.get("interval-ms"),
        o.get("token-seconds"),
        fds.map_or("unknown".into(), |n| n.to_string())
    );
    let started = Instant::now();
    let server = Arc::new(ServerProcess::start(lifetime_ms, seconds + 300)?);
    println!(
        "soak: server pid {} on 127.0.0.1:{}",
        server.pid, server.port
    );
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = sample(server.clone(), sampling.clone());

    let (refresher, tracker) = token_refresher(o.get("token-seconds").max(1))?;
    let reauth_asked: Arc<Vec<AtomicBool>> =
        Arc::new((0..connections).map(|_| AtomicBool::new(false)).collect());
    let flags = reauth_asked.clone();
    let background = BackgroundRefresher::start_with_tracker(tracker.clone(), move |ids| {
        for id in ids {
            if let Some(flag) = flags.get(id as usize) {
                flag.store(true, Ordering::Relaxed);
            }
        }
    })
    .map_err(|e| e.to_string())?;
    let t = Instant::now();
    while refresher.generation() == 0 {
        if t.elapsed() > Duration::from_secs(10) {
            return Err("no OAUTHBEARER token after 10 s".into());
        }
        thread::sleep(Duration::from_millis(10));
    }
    let configs = client_configs(&refresher)?;

    // Every client stops at the same instant.
    let t0 = wall_clock_ms();
    let shared = Arc::new(ClientShared {
        addr: SocketAddr::from(([127, 0, 0, 1], server.port)),
        end_ms: t0 + seconds * 1000,
        interval_ms: o.get("interval-ms").max(1),
        refresher: refresher.clone(),
        tracker,
        reauth_asked,
    });
    let results = run_clients(&shared, &configs, connections, o.get("ramp-ms"))?;
    let clients_s = (wall_clock_ms() - t0) as f64 / 1000.0;
    sampling.store(false, Ordering::Relaxed);
    let samples = sampler.join().map_err(|_| "the sampler panicked")?;
    let server_cpu = cpu_seconds(server.pid);
    let stats = server.ask("final").ok_or("the server gave no counters")?;
    drop(server); // killed by its pid
    background.stop();
    println!(
        "soak: {:.1} s in all (clients {clients_s:.1} s, server CPU {} s)",
        started.elapsed().as_secs_f64(),
        server_cpu.map_or("?".into(), |c| format!("{c:.1}"))
    );
    let report = Report {
        results: &results,
        stats: &stats,
        samples: &samples,
        t0,
        end_ms: shared.end_ms,
        connections,
        token_refreshes: refresher.refresh_times().len(),
        min_reauths: o.get("min-reauths").max(0) as u64,
        warmup_s: o.get("warmup-seconds"),
        seconds,
    };
    Ok(report.print())
}

// --- the report ---------------------------------------------------------------------------

struct Report<'a> {
    results: &'a [ClientResult],
    stats: &'a str,
    samples: &'a [Sample],
    t0: i64,
    end_ms: i64,
    connections: usize,
    token_refreshes: usize,
    min_reauths: u64,
    warmup_s: i64,
    seconds: i64,
}

impl Report<'_> {
    fn stat(&self, name: &str) -> u64 {
        stat(self.stats, name)
    }

    /// Prints the figures; returns whether every check passed.
    fn print(&self) -> bool {
        let results = self.results;
        println!("\nsoak: server counters: {}", self.stats);
        println!(
            "\nsoak: per mechanism (connections, requests, re-authentications min/median/max):"
        );
        for (m, name) in MECHANISMS.iter().enumerate() {
            let mut v: Vec<&ClientResult> = results.iter().filter(|r| r.mechanism == m).collect();
            if v.is_empty() {
                continue;
            }
            v.sort_by_key(|r| r.reauthentications);
            println!(
                "  {name:<14} {:>5} {:>10} {:>5} {:>5} {:>5}",
                v.len(),
                v.iter().map(|r| r.sent).sum::<u64>(),
                v[0].reauthentications,
                v[v.len() / 2].reauthentications,
                v[v.len() - 1].reauthentications
            );
        }
        let tracker_reauths: u64 = results.iter().map(|r| r.tracker_reauthentications).sum();
        println!(
            "  OAUTHBEARER tokens installed by the refresher: {}; re-authentications asked by \
             the tracker: {tracker_reauths}",
            self.token_refreshes
        );
        println!(
            "\nsoak: the server every second (t: seconds since the clients started; live heap \
             at the row's first second; RSS in kB):"
        );
        for row in self.samples.chunks(10) {
            let t = (row[0].0 - self.t0) as f64 / 1000.0;
            let rss: Vec<String> = row.iter().map(|s| format!("{:>7}", s.1)).collect();
            println!(
                "  t={t:>6.1}  heap {:>6} kB  RSS{}",
                row[0].3 / 1024,
                rss.join("")
            );
        }
        let threads = self.samples.iter().map(|s| s.2).max().unwrap_or(0);
        println!("  server threads (max): {threads}");

        println!("\nsoak: figures:");
        let mut ok = true;
        let mut check = |pass: bool, what: String| {
            println!("  [{}] {what}", if pass { "ok" } else { "FAIL" });
            ok &= pass;
        };
        let sent: u64 = results.iter().map(|r| r.sent).sum();
        let answered: u64 = results.iter().map(|r| r.answered).sum();
        let during: u64 = results.iter().map(|r| r.answered_during_reauth).sum();
        let server_answered = self.stat("requests_answered");
        check(
            sent == answered && sent == server_answered,
            format!(
                "requests sent {sent}, answered {answered} (server: {server_answered}; {during} \
                 arrived during a re-authentication)"
            ),
        );
        let mut reauths: Vec<u64> = results.iter().map(|r| r.reauthentications).collect();
        reauths.sort_unstable();
        let (min, med, max) = (
            reauths[0],
            reauths[reauths.len() / 2],
            reauths[reauths.len() - 1],
        );
        let slowest = results.iter().map(|r| r.max_reauth_latency_ms).max();
        check(
            min >= self.min_reauths,
            format!(
                "re-authentications per connection: min {min}, median {med}, max {max} (at least \
                 {}; {} in all, server: {}; slowest {} ms)",
                self.min_reauths,
                reauths.iter().sum::<u64>(),
                self.stat("reauthenticated"),
                slowest.unwrap_or(0)
            ),
        );
        check(
            self.stat("expired_kills") == 0
                && self.stat("metric_expired_connections_killed_count") == 0,
            format!(
                "connections killed for expiry: {} (metric expired-connections-killed-count: {})",
                self.stat("expired_kills"),
                self.stat("metric_expired_connections_killed_count")
            ),
        );
        let client_failed: u64 = results.iter().map(|r| r.failed_reauthentications).sum();
        let server_failed = self.stat("failed_reauthentications");
        let metric_failed = self.stat("metric_failed_reauthentication_total");
        check(
            client_failed == 0 && server_failed == 0 && metric_failed == 0,
            format!(
                "failed re-authentications: clients {client_failed}, server {server_failed} \
                 (metric failed-reauthentication-total: {metric_failed})"
            ),
        );
        check(
            self.stat("failed_authentications") == 0
                && self.stat("metric_failed_authentication_total") == 0
                && self.stat("authenticated") == self.connections as u64,
            format!(
                "authentications: {} of {}, failed {}",
                self.stat("authenticated"),
                self.connections,
                self.stat("failed_authentications")
            ),
        );
        let errors: Vec<&String> = results.iter().filter_map(|r| r.error.as_ref()).collect();
        check(
            errors.is_empty(),
            format!(
                "client connections that failed: {}{}",
                errors.len(),
                errors
                    .first()
                    .map_or(String::new(), |e| format!(" (first: {e})"))
            ),
        );
        self.check_memory(&mut check);
        let logged = LOGGED.load(Ordering::Relaxed);
        if logged > 20 {
            println!("  ({logged} failures logged, the first 20 printed on stderr)");
        }
        println!("soak: {}", if ok { "PASSED" } else { "FAILED" });
        ok
    }

    /// RSS: every sample of the last 10 % of the run (while the clients ran) within 5 % of the
    /// first sample after the warm-up. The live heap is reported beside it.
    fn check_memory(&self, check: &mut impl FnMut(bool, String)) {
        let running: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| s.0 >= self.t0 && s.0 <= self.end_ms)
            .collect();
        let Some(base) = running
            .iter()
            .find(|s| s.0 - self.t0 >= self.warmup_s * 1000)
        else {
            return check(false, "no RSS sample after the warm-up".into());
        };
        let tail_from = self.t0 + self.seconds * 1000 * 9 / 10;
        let tail: Vec<&&Sample> = running.iter().filter(|s| s.0 >= tail_from).collect();
        let (Some(lo), Some(hi)) = (
            tail.iter().map(|s| s.1).min(),
            tail.iter().map(|s| s.1).max(),
        ) else {
            return check(false, "no RSS sample in the last 10 % of the run".into());
        };
        let dev = |x: u64| (x as f64 - base.1 as f64) / base.1 as f64 * 100.0;
        check(
            dev(lo).abs() <= 5.0 && dev(hi).abs() <= 5.0,
            format!(
                "server RSS after the {} s warm-up {} kB; last 10 % ({} samples) {lo}..{hi} kB \
                 ({:+.1} %..{:+.1} %, within 5 %)",
                self.warmup_s,
                base.1,
                tail.len(),
                dev(lo),
                dev(hi)
            ),
        );
        let last = tail.last().map_or(0, |s| s.3);
        println!(
            "  [info] server live heap after the warm-up {} kB, at the end {} kB ({:+} bytes)",
            base.3 / 1024,
            last / 1024,
            last as i64 - base.3 as i64
        );
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("server") => server(&args[1..]).map(|_| true),
        Some("run") => run(&args[1..]),
        _ => run(&args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak: {e}");
            ExitCode::from(2)
        }
    }
}
