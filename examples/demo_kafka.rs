//! The Kafka half of `make demo`: a client driver and a broker driver exchange real Kafka
//! frames in memory, on a virtual clock. The client authenticates with SCRAM-SHA-256, keeps
//! sending requests, and re-authenticates before its session expires while a response is
//! still in flight; a second client that never re-authenticates is cut off by the broker.

use std::collections::VecDeque;
use std::sync::Arc;

use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::codec::{decode_body, RequestHeader};
use ksasl::kafka::messages::*;
use ksasl::kafka::server::{api_name, ServerAction, ServerConfig, ServerConnection};
use ksasl::session::{Gate, ReauthTiming};
use ksasl::*;

const T0: i64 = 1_795_000_000_000;

fn at(now: i64) -> String {
    format!("t=+{:>6.3}s", (now - T0) as f64 / 1000.0)
}

/// A one-line description of a client request frame, secrets redacted.
fn describe_request(f: &[u8], mech: &str) -> String {
    let Ok((p, body)) = RequestHeader::parse(f) else {
        return format!("{} bytes", f.len());
    };
    let what = match p.api_key {
        SASL_AUTHENTICATE => {
            let message = decode_body::<SaslAuthenticateRequest>(p.api_version, body)
                .map(|r| r.auth_bytes)
                .unwrap_or_default();
            format!(" [{}]", ksasl::mech::redact(mech, &message, true))
        }
        SASL_HANDSHAKE => {
            let m = decode_body::<SaslHandshakeRequest>(p.api_version, body);
            format!(" [{}]", m.map(|r| r.mechanism).unwrap_or_default())
        }
        _ => String::new(),
    };
    format!(
        "{} v{} corr={}{what}",
        api_name(p.api_key),
        p.api_version,
        p.correlation_id
    )
}

fn app_request(corr: i32) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 10, 0, 3, 0, 0];
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&[0xff, 0xff]);
    f
}

struct Conn {
    name: &'static str,
    client: ClientConnection,
    server: ServerConnection,
    to_server: FrameDecoder,
    to_client: FrameDecoder,
    in_flight: VecDeque<Vec<u8>>,
    held: VecDeque<i32>,
    next: i32,
    closed: bool,
    answered: usize,
    /// Application traffic is printed around re-authentications only.
    verbose_until: i64,
}

impl Conn {
    fn new(name: &'static str, c: Arc<ClientConfig>, s: Arc<ServerConfig>) -> Self {
        Conn {
            name,
            client: ClientConnection::new(c),
            server: ServerConnection::new(s),
            to_server: FrameDecoder::new(1 << 20),
            to_client: FrameDecoder::new(1 << 20),
            in_flight: VecDeque::new(),
            held: VecDeque::new(),
            next: 0,
            closed: false,
            answered: 0,
            verbose_until: 0,
        }
    }

    fn request(&mut self, now: i64) {
        self.held.push_back(self.next);
        self.next += 1;
        while let Some(&corr) = self.held.front() {
            match self.client.before_request(now) {
                Ok(true) => {
                    self.held.pop_front();
                    if corr == 0 || self.verbose_until >= now {
                        println!(
                            "{} {}: client -> broker  METADATA v0 corr={corr}",
                            at(now),
                            self.name
                        );
                    }
                    self.to_server.push(&app_request(corr));
                }
                _ => {
                    if self.client.is_reauthenticating() {
                        println!(
                            "{} {}: request corr={corr} held: re-authenticating",
                            at(now),
                            self.name
                        );
                    }
                    break;
                }
            }
        }
    }

    fn pump(&mut self, now: i64) {
        // The broker answers application requests at the next tick, so responses to requests
        // sent just before a re-authentication arrive in the middle of it.
        for r in self.in_flight.drain(..) {
            self.to_client.push(&r);
        }
        for _ in 0..32 {
            if self.closed {
                return;
            }
            let mut moved = false;
            if let Some(out) = self.client.poll_transmit() {
                let mut d = FrameDecoder::new(1 << 20);
                d.push(&out);
                while let Ok(Some(f)) = d.next_frame() {
                    println!(
                        "{} {}: client -> broker  {}",
                        at(now),
                        self.name,
                        describe_request(&f, "SCRAM-SHA-256")
                    );
                }
                self.to_server.push(&out);
                moved = true;
            }
            while let Ok(Some(f)) = self.to_server.next_frame() {
                moved = true;
                // The gate routes every frame: only "process" reaches the request handlers.
                let p = RequestPrefix::parse(&f).ok();
                let key = p.as_ref().map_or(-1, |p| p.api_key);
                match self.server.gate(key, now) {
                    Gate::Process => {
                        let corr = p.expect("a request").correlation_id;
                        let mut r = vec![0, 0, 0, 4];
                        r.extend_from_slice(&corr.to_be_bytes());
                        self.in_flight.push_back(r);
                        continue;
                    }
                    Gate::CloseExpired => {
                        println!("{} {}: broker closes the connection: session expired ({} arrived after it)", at(now), self.name, api_name(key));
                        self.closed = true;
                        return;
                    }
                    Gate::Close => {
                        println!(
                            "{} {}: broker closes the failed connection",
                            at(now),
                            self.name
                        );
                        self.closed = true;
                        return;
                    }
                    Gate::BeginReauthentication => {
                        println!("{} {}: broker begins re-authentication", at(now), self.name)
                    }
                    Gate::NotAuthenticated => {} // the exchange's frame
                }
                let action = self.server.handle_frame(&f, now);
                self.to_client
                    .push(&self.server.poll_transmit().unwrap_or_default());
                match action {
                    ServerAction::Authenticated(s) | ServerAction::Reauthenticated(s) => println!(
                        "{} {}: broker: {} authenticated with {}, session lifetime {} ms",
                        at(now),
                        self.name,
                        s.outcome.principal,
                        s.outcome.mechanism,
                        s.lifetime_ms
                    ),
                    ServerAction::Continue => {}
                    other => println!("{} {}: broker: {other:?}", at(now), self.name),
                }
            }
            while let Ok(Some(f)) = self.to_client.next_frame() {
                moved = true;
                match self.client.handle_frame(&f, now) {
                    ClientEvent::Application => {
                        let corr = i32::from_be_bytes([f[0], f[1], f[2], f[3]]);
                        self.answered += 1;
                        let during = self.client.is_reauthenticating();
                        if corr == 0 || during || self.verbose_until >= now {
                            let note = if during {
                                " (arrived during re-authentication, handed back in order)"
                            } else {
                                ""
                            };
                            println!(
                                "{} {}: broker -> client  METADATA response corr={corr}{note}",
                                at(now),
                                self.name
                            );
                        }
                    }
                    ClientEvent::Authenticated(s) | ClientEvent::Reauthenticated(s) => {
                        self.verbose_until = now + 500;
                        println!(
                            "{} {}: client: authenticated; session {} ms, re-authentication at {}",
                            at(now),
                            self.name,
                            s.lifetime_ms,
                            s.reauth_at_ms.map(at).unwrap_or_else(|| "never".into())
                        )
                    }
                    ClientEvent::Continue => {}
                    other => println!("{} {}: client: {other:?}", at(now), self.name),
                }
            }
            if !moved {
                return;
            }
        }
    }
}

pub fn run() -> Result<()> {
    println!("== Kafka framing and KIP-368 re-authentication (virtual clock) ==");
    let store = Arc::new(CredentialStore::new());
    store.add_user("alice", "alice-secret", 4096, &OsRandom)?;
    let broker = ServerConfig::builder(MechanismRegistry::password_servers(Some(store)))
        .set_max_reauth_ms(10_000) // connections.max.reauth.ms
        .build()?;
    let creds = Arc::new(PasswordCredential::new("alice", "alice-secret")?);
    let modern = ClientConfig::builder(
        MechanismRegistry::password_clients(creds.clone()),
        "SCRAM-SHA-256",
    )
    .set_client_id(Some("demo"))
    .build()?;
    let old = ClientConfig::builder(MechanismRegistry::password_clients(creds), "SCRAM-SHA-256")
        .set_reauth_timing(ReauthTiming::Disabled)
        .build()?;

    let mut a = Conn::new("reauth", modern.clone(), broker.clone());
    let mut b = Conn::new("no-reauth", old, broker.clone());
    a.client.start(T0)?;
    a.pump(T0);
    b.client.start(T0)?;
    b.pump(T0);
    // An event loop: a tick every 500 ms with one request each, and the client's deadline
    // checked on every tick (as a timer would).
    let mut now = T0;
    let mut tick = 0;
    while now < T0 + 22_000 {
        now += 500;
        tick += 1;
        for c in [&mut a, &mut b] {
            if c.closed {
                continue;
            }
            let _ = tick;
            c.request(now);
            if c.client.handle_timeout(now)? {
                println!(
                    "{} {}: timer: re-authentication due, starting it",
                    at(now),
                    c.name
                );
            }
            c.pump(now);
        }
    }
    for c in [&a, &b] {
        println!(
            "{}: {} requests sent, {} answered, connection {}",
            c.name,
            c.next,
            c.answered,
            if c.closed {
                "closed by the broker"
            } else {
                "open"
            }
        );
    }
    println!("\nbroker metrics (socket-server-metrics):");
    for (k, v) in broker.metrics().snapshot(now) {
        if k.ends_with("-total")
            || k.ends_with("-count")
            || k.starts_with("reauthentication-latency")
        {
            println!("  {k:<45} {v}");
        }
    }
    Ok(())
}

#[allow(dead_code)]
fn main() -> Result<()> {
    run()
}
