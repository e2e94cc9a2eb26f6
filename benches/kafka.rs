//! Kafka framing costs: the per-request gate, the memory an idle authenticated server
//! connection keeps, a whole PLAIN authentication through both connection drivers, and a
//! minimal host-defined mechanism through both drivers, answering at once and answering later
//! (the pending/resume path that asynchronous host mechanisms take). Run with `make bench`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::messages::FrameDecoder;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::session::Gate;
use ksasl::*;

/// Counts live heap bytes and allocations, to measure connection state and prove the gate
/// allocates nothing.
struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const NOW: i64 = 1_800_000_000_000;

fn configs() -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let store = Arc::new(CredentialStore::new());
    store.set_password("alice", "alice-secret").unwrap();
    let server = ServerConfig::builder(MechanismRegistry::password_servers(Some(store)))
        .set_max_reauth_ms(600_000)
        .build()
        .unwrap();
    let clients = MechanismRegistry::password_clients(Arc::new(
        PasswordCredential::new("alice", "alice-secret").unwrap(),
    ));
    (ClientConfig::new(clients, "PLAIN").unwrap(), server)
}

/// Runs a whole authentication through both drivers; returns the server connection.
fn authenticate(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> ServerConnection {
    let mut c = ClientConnection::new(client.clone());
    let mut s = ServerConnection::new(server.clone());
    let mut to_server = FrameDecoder::new(1 << 20);
    let mut to_client = FrameDecoder::new(1 << 20);
    c.start(NOW).unwrap();
    loop {
        if let Some(out) = c.poll_transmit() {
            to_server.push(&out);
        }
        while let Some(f) = to_server.next_frame().unwrap() {
            let action = s.handle_frame(&f, NOW);
            to_client.push(&s.poll_transmit().unwrap_or_default());
            assert!(matches!(
                action,
                ServerAction::Continue | ServerAction::Authenticated(_)
            ));
        }
        while let Some(f) = to_client.next_frame().unwrap() {
            match c.handle_frame(&f, NOW) {
                ClientEvent::Continue => {}
                ClientEvent::Authenticated(_) => return s,
                other => panic!("{other:?}"),
            }
        }
    }
}

const ECHO: &str = "X-ECHO";

/// A minimal host-defined mechanism: the client sends its name and the server takes it. With
/// `deferred`, every answer comes later: the step travels as `HostWork` and the host resumes.
struct EchoClient {
    deferred: bool,
}

impl ClientMechanism for EchoClient {
    fn name(&self) -> &str {
        ECHO
    }
    fn start(&mut self, _now_ms: i64) -> Result<ClientStep> {
        let step = ClientStep::Send(b"alice".to_vec());
        Ok(if self.deferred {
            ClientStep::Pending(HostWork::new(step))
        } else {
            step
        })
    }
    fn step(&mut self, _challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        Ok(ClientStep::Done(None))
    }
}

struct EchoServer {
    deferred: bool,
}

fn echo_done(user: &[u8]) -> MechServerStep {
    MechServerStep::Done(
        Some(Vec::new()),
        Authenticated::new(String::from_utf8_lossy(user).into_owned()),
    )
}

impl ServerMechanism for EchoServer {
    fn name(&self) -> &str {
        ECHO
    }
    fn step(&mut self, response: &[u8], _now_ms: i64) -> Result<MechServerStep> {
        Ok(if self.deferred {
            MechServerStep::Pending(HostWork::new(response.to_vec()))
        } else {
            echo_done(response)
        })
    }
}

fn echo_configs(deferred: bool) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let mut clients = MechanismRegistry::new();
    clients
        .register_client(ECHO, move || Ok(Box::new(EchoClient { deferred })))
        .unwrap();
    let mut servers = MechanismRegistry::new();
    servers
        .register_server(ECHO, move || Ok(Box::new(EchoServer { deferred })))
        .unwrap();
    let server = ServerConfig::builder(servers)
        .set_max_reauth_ms(600_000)
        .build()
        .unwrap();
    (ClientConfig::new(clients, ECHO).unwrap(), server)
}

/// Runs a whole authentication through both drivers, finishing pending work at once (as a
/// host whose asynchronous work is already done would).
fn authenticate_host(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> ServerConnection {
    let mut c = ClientConnection::new(client.clone());
    let mut s = ServerConnection::new(server.clone());
    let mut to_server = FrameDecoder::new(1 << 20);
    let mut to_client = FrameDecoder::new(1 << 20);
    c.start(NOW).unwrap();
    loop {
        if let Some(out) = c.poll_transmit() {
            to_server.push(&out);
        }
        while let Some(f) = to_server.next_frame().unwrap() {
            let mut action = s.handle_frame(&f, NOW);
            if let ServerAction::Pending(w) = &action {
                let user = w.downcast_ref::<Vec<u8>>().unwrap();
                action = s.resume(Ok(echo_done(user)), NOW);
            }
            to_client.push(&s.poll_transmit().unwrap_or_default());
            assert!(matches!(
                action,
                ServerAction::Continue | ServerAction::Authenticated(_)
            ));
        }
        while let Some(f) = to_client.next_frame().unwrap() {
            let mut ev = c.handle_frame(&f, NOW);
            if let ClientEvent::Pending(w) = &ev {
                let step = w.downcast_ref::<ClientStep>().unwrap().clone();
                ev = c.resume(Ok(step), NOW);
            }
            match ev {
                ClientEvent::Continue => {}
                ClientEvent::Authenticated(_) => return s,
                other => panic!("{other:?}"),
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let (client, server) = configs();

    // Memory of an idle authenticated server connection: the struct plus what it keeps on
    // the heap once the exchange is over.
    let before = LIVE.load(Ordering::Relaxed);
    let conn = Box::new(authenticate(&client, &server));
    let heap = LIVE.load(Ordering::Relaxed) - before;
    println!(
        "kafka/idle_server_connection: {heap} bytes (struct {} bytes, boxed here, + {} bytes of session state)",
        std::mem::size_of::<ServerConnection>(),
        heap - std::mem::size_of::<ServerConnection>() as isize
    );

    let allocs = ALLOCS.load(Ordering::Relaxed);
    let mut n = 0u64;
    for i in 0..1_000_000i64 {
        if conn.gate(black_box(3), black_box(NOW + i % 1000)) == Gate::Process {
            n += 1;
        }
    }
    assert_eq!(n, 1_000_000);
    println!(
        "kafka/gate: {} allocations in 1,000,000 calls",
        ALLOCS.load(Ordering::Relaxed) - allocs
    );

    c.bench_function("kafka/gate", |b| {
        b.iter(|| conn.gate(black_box(3), black_box(NOW + 1)))
    });
    c.bench_function("kafka/gate_sasl_handshake", |b| {
        b.iter(|| conn.gate(black_box(17), black_box(NOW + 1)))
    });
    c.bench_function("kafka/plain_authentication_both_drivers", |b| {
        b.iter(|| authenticate(&client, &server))
    });
    for (name, deferred) in [
        ("kafka/host_mechanism_both_drivers", false),
        ("kafka/host_mechanism_answered_later_both_drivers", true),
    ] {
        let (hc, hs) = echo_configs(deferred);
        assert_eq!(
            authenticate_host(&hc, &hs)
                .session()
                .unwrap()
                .outcome
                .principal
                .name,
            "alice"
        );
        c.bench_function(name, |b| b.iter(|| authenticate_host(&hc, &hs)));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
