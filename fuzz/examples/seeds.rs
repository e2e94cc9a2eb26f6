//! Writes the seed corpora of every fuzz target into `fuzz/corpus/<target>/seed-*`: the test
//! vectors of `tests/vectors/*.json`, and real exchanges recorded from a ksasl client and
//! server talking to each other (every mechanism, every framing, re-authentication, expiry,
//! wrong passwords, unknown users, principal changes, delegation tokens, refused requests).
//!
//! Run from `fuzz/`: `cargo run --example seeds` (fuzz/run.sh does it when a corpus is
//! missing). Every recorded input is replayed through its target's harness before it is
//! written, so a seed that breaks an invariant fails here.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ksasl::credential::PasswordSource;
use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::codec::encode_request;
use ksasl::kafka::messages::*;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::mech::oauthbearer::TokenSource;
use ksasl::mech::{OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512};
use ksasl::session::Gate;
use ksasl::*;
use ksasl_fuzz::*;
use serde_json::Value;

fn corpus(target: &str) -> PathBuf {
    // SEEDS_DIR writes them elsewhere (to merge them with a corpus, say).
    let base = std::env::var_os("SEEDS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let dir = base.join(target);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a seed, unless the target already has one with the same bytes.
fn write(target: &str, name: &str, data: &[u8]) {
    static SEEN: std::sync::Mutex<Vec<(String, Vec<u8>)>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap();
    if seen.iter().any(|(t, d)| t == target && d == data) {
        return;
    }
    seen.push((target.to_string(), data.to_vec()));
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    std::fs::write(corpus(target).join(format!("seed-{name}")), data).unwrap();
}

fn vectors(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn with(sel: u8, data: &[u8]) -> Vec<u8> {
    let mut v = vec![sel];
    v.extend_from_slice(data);
    v
}

// ---------------------------------------------------------------------------------------
// Recorded exchanges.

/// The client side of a recording: the target's harness (its ops are recorded as a
/// `client_driver` input), or a connection with a configuration of its own.
enum ClientSide {
    Harness(ClientHarness),
    Raw(ClientConnection, i64, Vec<u8>),
}

/// The server side: the target's harness (recorded as a `server_driver` input), or a
/// connection with a configuration of its own.
enum ServerSide {
    Harness(ServerHarness),
    Raw(ServerConnection, Vec<u8>, bool),
}

struct Recording {
    client: ClientSide,
    server: ServerSide,
    /// The `client_driver` input (flags byte first).
    cin: Vec<u8>,
    /// The `server_driver` input.
    sin: Vec<u8>,
    c_last: i64,
    s_last: i64,
    now: i64,
    app_corr: i32,
}

fn apply_recorded(bytes: &[u8], f: &mut dyn FnMut(Op<'_>)) {
    // `push_op` may have split a long time step into ticks: replay exactly what was written.
    let mut with_flags = vec![0u8];
    with_flags.extend_from_slice(bytes);
    let (_, ops) = parse_ops(&with_flags).unwrap();
    for op in ops {
        f(op);
    }
}

impl Recording {
    fn new(client: ClientSide, server: ServerSide, cflags: u8, sflags: u8) -> Self {
        Recording {
            client,
            server,
            cin: vec![cflags],
            sin: vec![sflags],
            c_last: T0,
            s_last: T0,
            now: T0,
            app_corr: 0,
        }
    }

    fn standard(cflags: u8, sflags: u8) -> Self {
        Self::new(
            ClientSide::Harness(ClientHarness::new(cflags)),
            ServerSide::Harness(ServerHarness::new(sflags)),
            cflags,
            sflags,
        )
    }

    fn client_op(&mut self, kind: u8, data: &[u8]) {
        let now = self.now;
        match &mut self.client {
            ClientSide::Harness(h) => {
                let start = self.cin.len();
                push_op(
                    &mut self.cin,
                    kind,
                    now - self.c_last,
                    data,
                    client_ops::TICK,
                );
                let bytes = self.cin[start..].to_vec();
                apply_recorded(&bytes, &mut |op| h.step(op));
            }
            ClientSide::Raw(c, closed, out) => {
                if *closed != 0 {
                    return;
                }
                match kind {
                    client_ops::STREAM => {
                        for f in split_frames(data).unwrap() {
                            if let ClientEvent::Failed(_) = c.handle_frame(f, now) {
                                *closed = 1;
                            }
                        }
                    }
                    client_ops::TIMEOUT => {
                        let _ = c.handle_timeout(now);
                    }
                    client_ops::REQUEST => {
                        if c.before_request(now) == Ok(true) {
                            out.extend(app_request(self.app_corr));
                            self.app_corr += 1;
                        }
                    }
                    _ => {}
                }
                if let Some(o) = c.poll_transmit() {
                    out.extend(o);
                }
            }
        }
        self.c_last = now;
    }

    fn server_op(&mut self, kind: u8, data: &[u8]) {
        let now = self.now;
        match &mut self.server {
            ServerSide::Harness(h) => {
                let start = self.sin.len();
                push_op(
                    &mut self.sin,
                    kind,
                    now - self.s_last,
                    data,
                    server_ops::TICK,
                );
                let bytes = self.sin[start..].to_vec();
                apply_recorded(&bytes, &mut |op| h.step(op));
                // The host answers a credential request from the store at once.
                while h.conn.pending_request().is_some() {
                    let start = self.sin.len();
                    push_op(
                        &mut self.sin,
                        server_ops::CREDENTIAL,
                        0,
                        &[0],
                        server_ops::TICK,
                    );
                    let bytes = self.sin[start..].to_vec();
                    apply_recorded(&bytes, &mut |op| h.step(op));
                }
            }
            ServerSide::Raw(s, out, closed) => {
                if *closed {
                    return;
                }
                for f in split_frames(data).unwrap_or_default() {
                    let p = RequestPrefix::parse(f).ok();
                    match s.gate(p.map_or(-1, |p| p.api_key), now) {
                        Gate::Process => out.extend(app_response(p.unwrap().correlation_id)),
                        Gate::Close | Gate::CloseExpired => *closed = true,
                        _ => match s.handle_frame(f, now) {
                            ServerAction::FailAt { .. } | ServerAction::CloseNow(_) => {
                                *closed = true
                            }
                            _ => {}
                        },
                    }
                    if let Some(o) = s.poll_transmit() {
                        out.extend(o);
                    }
                }
            }
        }
        self.s_last = now;
    }

    fn client_output(&mut self) -> Vec<u8> {
        match &mut self.client {
            ClientSide::Harness(h) => h.take_output(),
            ClientSide::Raw(_, _, out) => std::mem::take(out),
        }
    }

    fn server_output(&mut self) -> Vec<u8> {
        match &mut self.server {
            ServerSide::Harness(h) => h.take_output(),
            ServerSide::Raw(_, out, _) => std::mem::take(out),
        }
    }

    /// Moves bytes both ways until nothing moves.
    fn pump(&mut self) {
        for _ in 0..32 {
            let mut moved = false;
            let out = self.client_output();
            if !out.is_empty() {
                self.server_op(server_ops::STREAM, &out);
                moved = true;
            }
            let back = self.server_output();
            if !back.is_empty() {
                self.client_op(client_ops::STREAM, &back);
                moved = true;
            }
            if !moved {
                return;
            }
        }
        panic!("the recording did not settle");
    }

    fn wait(&mut self, ms: i64) {
        self.now += ms;
    }

    /// Waits until the client's re-authentication is due and lets it run.
    fn reauthenticate(&mut self) {
        let due = match &self.client {
            ClientSide::Harness(h) => h.conn.next_deadline(),
            ClientSide::Raw(c, ..) => c.next_deadline(),
        };
        if let Some(t) = due {
            self.now = self.now.max(t);
        }
        self.client_op(client_ops::TIMEOUT, &[]);
        self.pump();
    }

    fn request(&mut self) {
        self.client_op(client_ops::REQUEST, &[]);
    }

    fn authentications(&self) -> (u32, u32) {
        let c = match &self.client {
            ClientSide::Harness(h) => h.authentications,
            _ => 0,
        };
        let s = match &self.server {
            ServerSide::Harness(h) => h.authentications,
            _ => 0,
        };
        (c, s)
    }

    fn save(&self, name: &str) {
        if matches!(self.client, ClientSide::Harness(_)) {
            ClientHarness::run(&self.cin);
            write("client_driver", name, &self.cin);
        }
        if matches!(self.server, ServerSide::Harness(_)) {
            ServerHarness::run(&self.sin);
            write("server_driver", name, &self.sin);
        }
    }
}

fn app_request(corr: i32) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&10i32.to_be_bytes());
    f.extend_from_slice(&3i16.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&(-1i16).to_be_bytes());
    f
}

fn app_response(corr: i32) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&8i32.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&[0xab; 4]);
    f
}

/// PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for the source's credential, with the fixed
/// client nonce (so that every seed is the same on every run).
fn fixed_password_clients(source: Arc<dyn PasswordSource>) -> MechanismRegistry {
    let mut r = MechanismRegistry::new();
    let s = source.clone();
    r.register_client(PLAIN, move || {
        Ok(Box::new(PlainClient::new(s.password()?)) as Box<dyn ksasl::mech::ClientMechanism>)
    })
    .unwrap();
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let s = source.clone();
        r.register_client(m.name(), move || {
            Ok(Box::new(scram_client(m, s.password()?)) as Box<dyn ksasl::mech::ClientMechanism>)
        })
        .unwrap();
    }
    r
}

/// PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers over `store`, with the fixed server nonce.
fn fixed_password_servers(store: Arc<CredentialStore>) -> MechanismRegistry {
    let mut r = MechanismRegistry::new();
    r.register_server(PLAIN, || {
        Ok(Box::new(PlainServer::new()) as Box<dyn ksasl::mech::ServerMechanism>)
    })
    .unwrap();
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        r.register_server(m.name(), move || {
            Ok(Box::new(scram_server(m)) as Box<dyn ksasl::mech::ServerMechanism>)
        })
        .unwrap();
    }
    r.set_credential_lookup(Some(store));
    r
}

/// A client of its own: `mechanism` from `registry`, framing as the standard flags say.
fn raw_client(registry: MechanismRegistry, mechanism: &str, legacy: bool) -> ClientSide {
    let mut b = ClientConfig::builder(registry, mechanism);
    b.set_random(SharedRandom(Arc::new(FixedRandom)));
    if legacy {
        b.set_known_versions(0, None);
    }
    let mut c = ClientConnection::new(b.build().unwrap());
    c.start(T0).unwrap();
    let out = c.poll_transmit().unwrap_or_default();
    ClientSide::Raw(c, 0, out)
}

fn password_client(user: &str, password: &str, mechanism: &str, legacy: bool) -> ClientSide {
    let cred = Arc::new(PasswordCredential::new(user, password).unwrap());
    raw_client(fixed_password_clients(Arc::new(cred)), mechanism, legacy)
}

/// Alice's password first, then bob's: a re-authentication as someone else.
struct Switching(AtomicUsize);

impl PasswordSource for Switching {
    fn password(&self) -> ksasl::Result<Arc<PasswordCredential>> {
        let (user, password, _) = USERS[self.0.fetch_add(1, Ordering::SeqCst).min(1)];
        Ok(Arc::new(PasswordCredential::new(user, password).unwrap()))
    }
}

impl TokenSource for Switching {
    fn token(&self, now_ms: i64) -> ksasl::Result<(OAuthBearerToken, SaslExtensions)> {
        let (user, _, _) = USERS[self.0.fetch_add(1, Ordering::SeqCst).min(1)];
        let t = UnsecuredTokenBuilder::for_principal(user)
            .lifetime_seconds(3600)
            .build(now_ms)?;
        Ok((t, SaslExtensions::new()))
    }
}

fn oauth_client(token: OAuthBearerToken, legacy: bool) -> ClientSide {
    let mut r = MechanismRegistry::new();
    r.register_client(OAUTHBEARER, move || {
        Ok(
            Box::new(OAuthBearerClient::new(token.clone(), SaslExtensions::new()))
                as Box<dyn ksasl::mech::ClientMechanism>,
        )
    })
    .unwrap();
    raw_client(r, OAUTHBEARER, legacy)
}

/// A server of its own, whose users have other passwords, and whose OAUTHBEARER validator
/// wants a scope the client's token lacks: the client sees every failure response.
fn hostile_server() -> ServerSide {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user(USERS[0].0, "another-password", 4096, &FixedRandom)
        .unwrap();
    let mut r = fixed_password_servers(store);
    let v = UnsecuredValidator::new(UnsecuredValidatorConfig {
        required_scope: vec!["admin".into()],
        ..Default::default()
    })
    .unwrap();
    r.register_oauthbearer_server(Arc::new(v));
    let mut b = ServerConfig::builder(r);
    b.set_max_reauth_ms(MAX_REAUTH_MS);
    ServerSide::Raw(ServerConnection::new(b.build().unwrap()), Vec::new(), false)
}

/// A server that only enables SCRAM-SHA-512: the client sees UNSUPPORTED_SASL_MECHANISM.
fn scram512_only_server() -> ServerSide {
    let r = fixed_password_servers(fixtures().store.clone());
    let mut b = ServerConfig::builder(r);
    b.set_enabled_mechanisms(vec![SCRAM_SHA_512.into()]);
    ServerSide::Raw(ServerConnection::new(b.build().unwrap()), Vec::new(), false)
}

fn driver_seeds() {
    use server_flags::*;
    // Every mechanism in every framing: authenticate, re-authenticate twice (the second time
    // with an application response interleaved), a request, then expiry.
    for mech in 0..4u8 {
        for framing in 0..8u8 {
            let cflags = mech | (framing << 2);
            let legacy = framing == 6;
            let sflags = [0, TOKENS, CACHED, SKEW, RETRY, NO_DELAY, MASK, SMALL][framing as usize];
            let mut r = Recording::standard(cflags, sflags);
            r.pump();
            r.request();
            r.pump();
            if !legacy {
                r.reauthenticate();
                r.request();
                r.reauthenticate();
                r.pump();
            }
            let (c, s) = r.authentications();
            assert!(c >= 1 && s >= 1, "{mech} {framing}: {c} {s}");
            // SaslAuthenticate v0 carries no session lifetime: that client never re-authenticates.
            if !legacy && framing != 3 {
                assert!(c >= 3 && s >= 3, "{mech} {framing}: {c} {s}");
            }
            let name = format!("{}-{}", CLIENT_MECHANISMS[mech as usize], framing);
            r.save(&format!("pair-{name}"));
            // The server alone: a request after expiry (the gate closes).
            let mut r2 = Recording::standard(cflags, sflags);
            r2.pump();
            r2.wait(MAX_REAUTH_MS + 1);
            r2.server_op(server_ops::STREAM, &app_request(7));
            if let ServerSide::Harness(h) = &r2.server {
                assert!(h.closed(), "expired connections close");
            }
            write("server_driver", &format!("expired-{name}"), &r2.sin);
        }
    }
    // The pull form: the host answers every user's credential request.
    for mech in 0..4u8 {
        for sflags in [PULL, PULL | TOKENS | MASK] {
            let mut r = Recording::standard(mech, sflags);
            r.pump();
            r.reauthenticate();
            assert!(r.authentications().1 >= 2);
            r.save(&format!(
                "pull-{}-{sflags}",
                CLIENT_MECHANISMS[mech as usize]
            ));
        }
    }
    for flags in [PULL, PULL | MASK] {
        let mut r = Recording::new(
            password_client("mallory", "x", SCRAM_SHA_256, false),
            ServerSide::Harness(ServerHarness::new(flags)),
            0,
            flags,
        );
        r.pump();
        r.save(&format!("pull-unknown-{flags}"));
    }
    // The client's retry policy, librdkafka's timing and a small receive limit; brokers that
    // fail every login, and one that enables another mechanism only.
    for mech in 0..4u8 {
        for extra in [
            client_flags::RETRY,
            client_flags::LIBRDKAFKA,
            client_flags::SMALL,
        ] {
            let mut r = Recording::standard(mech | extra, RETRY);
            r.pump();
            r.reauthenticate();
            r.save(&format!(
                "flags-{}-{extra:02x}",
                CLIENT_MECHANISMS[mech as usize]
            ));
        }
        let mech_name = CLIENT_MECHANISMS[mech as usize];
        let mut r = Recording::new(
            ClientSide::Harness(ClientHarness::new(mech)),
            hostile_server(),
            mech,
            0,
        );
        r.pump();
        r.save(&format!("hostile-{mech_name}"));
        let mut r = Recording::new(
            ClientSide::Harness(ClientHarness::new(mech | (6 << 2))),
            hostile_server(),
            mech | (6 << 2),
            0,
        );
        r.pump();
        r.save(&format!("hostile-legacy-{mech_name}"));
        let mut r = Recording::new(
            ClientSide::Harness(ClientHarness::new(mech)),
            scram512_only_server(),
            mech,
            0,
        );
        r.pump();
        r.save(&format!("refused-mechanism-{mech_name}"));
    }
    // Server-side failures and principal changes from clients of their own.
    let f = fixtures();
    for mech in [PLAIN, SCRAM_SHA_256, SCRAM_SHA_512] {
        for (flags, legacy) in [
            (0u8, false),
            (MASK, false),
            (0, true),
            (RETRY | NO_DELAY, false),
        ] {
            let tag = format!("{mech}-{flags}-{legacy}");
            for (who, user, password) in [
                ("wrong-password", "alice", "nope"),
                ("unknown-user", "mallory", "whatever"),
                ("bob", "bob", USERS[1].1),
            ] {
                let mut r = Recording::new(
                    password_client(user, password, mech, legacy),
                    ServerSide::Harness(ServerHarness::new(flags)),
                    0,
                    flags,
                );
                r.pump();
                r.save(&format!("{who}-{tag}"));
            }
            if legacy {
                continue;
            }
            let mut reg = MechanismRegistry::new();
            reg.merge(fixed_password_clients(Arc::new(Switching(
                AtomicUsize::new(0),
            ))));
            let mut r = Recording::new(
                raw_client(reg, mech, false),
                ServerSide::Harness(ServerHarness::new(flags)),
                0,
                flags,
            );
            r.pump();
            r.reauthenticate();
            r.save(&format!("principal-change-{tag}"));
        }
        // A delegation-token login, then a re-authentication with it.
        let cred = Arc::new(
            PasswordCredential::delegation_token(
                f.token.token_id(),
                std::str::from_utf8(f.token.hmac_base64().expose()).unwrap(),
            )
            .unwrap(),
        );
        if mech != PLAIN {
            for flags in [TOKENS, 0] {
                let mut r = Recording::new(
                    raw_client(fixed_password_clients(Arc::new(cred.clone())), mech, false),
                    ServerSide::Harness(ServerHarness::new(flags)),
                    0,
                    flags,
                );
                r.pump();
                r.reauthenticate();
                r.save(&format!("token-{mech}-{flags}"));
            }
        }
    }
    // OAUTHBEARER: an expired token (the JSON error and its acknowledgement), a principal
    // change, and bob.
    for (flags, legacy) in [
        (0u8, false),
        (SKEW, false),
        (0, true),
        (CACHED | RETRY, false),
    ] {
        let tag = format!("{flags}-{legacy}");
        let expired = UnsecuredTokenBuilder::for_principal("alice")
            .lifetime_seconds(60)
            .build(T0 - 3_600_000)
            .unwrap();
        let mut r = Recording::new(
            oauth_client(expired, legacy),
            ServerSide::Harness(ServerHarness::new(flags)),
            0,
            flags,
        );
        r.pump();
        r.save(&format!("oauth-expired-{tag}"));
        let bob = UnsecuredTokenBuilder::for_principal("bob")
            .build(T0)
            .unwrap();
        let mut r = Recording::new(
            oauth_client(bob, legacy),
            ServerSide::Harness(ServerHarness::new(flags)),
            0,
            flags,
        );
        r.pump();
        r.save(&format!("oauth-bob-{tag}"));
        if !legacy {
            let mut reg = MechanismRegistry::new();
            reg.register_oauthbearer_client(Arc::new(Switching(AtomicUsize::new(0))));
            let mut r = Recording::new(
                raw_client(reg, OAUTHBEARER, false),
                ServerSide::Harness(ServerHarness::new(flags)),
                0,
                flags,
            );
            r.pump();
            r.reauthenticate();
            r.save(&format!("oauth-principal-change-{tag}"));
        }
    }
    // Re-authentication with another mechanism (REAUTH_BAD_MECHANISM): alice's PLAIN
    // session, then a SCRAM handshake.
    {
        let mut r = Recording::standard(0, RETRY);
        r.pump();
        r.wait(5_000);
        let hs = encode_request(
            &SaslHandshakeRequest {
                mechanism: SCRAM_SHA_256.into(),
            },
            1,
            i32::MAX - 7,
            None,
        )
        .unwrap();
        r.server_op(server_ops::STREAM, &hs);
        let au = encode_request(
            &SaslAuthenticateRequest {
                auth_bytes: fixed_client_first().into_bytes(),
            },
            2,
            i32::MAX - 6,
            None,
        )
        .unwrap();
        r.server_op(server_ops::STREAM, &au);
        write("server_driver", "reauth-other-mechanism", &r.sin);
        ServerHarness::run(&r.sin);
    }
    // Kafka 4.4's answers to requests during an exchange (tests/vectors/kafka44_refusals.json):
    // each case's requests, in order, before and during a wrapped and a legacy exchange.
    let v = vectors("kafka44_refusals.json");
    for (name, case) in v.as_object().unwrap() {
        let Some(requests) = case.get("requests").and_then(Value::as_array) else {
            continue;
        };
        let mut input = vec![0u8];
        for r in requests {
            let frame = hex(r.as_str().unwrap());
            push_op(
                &mut input,
                server_ops::STREAM,
                1,
                &raw_frame(&frame),
                server_ops::TICK,
            );
        }
        ServerHarness::run(&input);
        write("server_driver", &format!("kafka44-{name}"), &input);
        // In the codec target, as requests Kafka 4.4 refuses during a wrapped exchange.
        for f in requests.iter().map(|r| hex(r.as_str().unwrap())) {
            write(
                "kafka_codec",
                &format!("refusal-{name}-{}", f.len()),
                &with(4 | (1 << 3), &f),
            );
        }
    }
    // Direct operations: misuse and sizes.
    let mut input = vec![0u8];
    push_op(
        &mut input,
        server_ops::SIZE,
        0,
        &(1i32 << 20).to_be_bytes(),
        server_ops::TICK,
    );
    write("server_driver", "oversized-frame", &input);
    let mut input = vec![SMALL];
    push_op(&mut input, server_ops::CREDENTIAL, 0, &[], server_ops::TICK);
    push_op(&mut input, server_ops::RESUME, 0, &[], server_ops::TICK);
    push_op(
        &mut input,
        server_ops::FRAME,
        0,
        b"\0\0\0",
        server_ops::TICK,
    );
    write("server_driver", "misuse", &input);
}

// ---------------------------------------------------------------------------------------
// Parser seeds.

fn message_seeds() {
    use ksasl_fuzz::messages::*;
    let t = "sasl_messages";
    for (m, bit) in [
        (ScramMechanism::Sha256, 0),
        (ScramMechanism::Sha512, SHA512),
    ] {
        write(
            t,
            &format!("client-first-{bit}"),
            &with(SCRAM_CLIENT_FIRST | bit, fixed_client_first().as_bytes()),
        );
        write(
            t,
            &format!("client-first-authzid-{bit}"),
            &with(
                SCRAM_CLIENT_FIRST | bit,
                b"n,a=alice,n=alice,r=abc,tokenauth=true",
            ),
        );
        write(
            t,
            &format!("client-final-{bit}"),
            &with(SCRAM_CLIENT_FINAL | bit, fixed_client_final(m).as_bytes()),
        );
        write(
            t,
            &format!("server-first-{bit}"),
            &with(SCRAM_SERVER_FIRST | bit, fixed_server_first().as_bytes()),
        );
        write(
            t,
            &format!("server-first-error-{bit}"),
            &with(SCRAM_SERVER_FIRST | bit, b"e=unknown-user"),
        );
        write(
            t,
            &format!("server-final-{bit}"),
            &with(SCRAM_SERVER_FINAL | bit, fixed_server_final(m).as_bytes()),
        );
        write(
            t,
            &format!("server-final-error-{bit}"),
            &with(SCRAM_SERVER_FINAL | bit, b"e=invalid-proof"),
        );
    }
    // The RFC 7677 and Kafka vectors: every message in its own parser.
    for v in vectors("scram.json")["vectors"].as_array().unwrap() {
        let name = v["name"].as_str().unwrap();
        let bit = if v["mechanism"] == "SCRAM-SHA-512" {
            SHA512
        } else {
            0
        };
        for (field, sel) in [
            ("client_first", SCRAM_CLIENT_FIRST),
            ("client_final", SCRAM_CLIENT_FINAL),
            ("server_first", SCRAM_SERVER_FIRST),
            ("server_final", SCRAM_SERVER_FINAL),
        ] {
            if let Some(m) = v[field].as_str() {
                write(
                    t,
                    &format!("{name}-{field}"),
                    &with(sel | bit, m.as_bytes()),
                );
            }
        }
        if let Some(c) = v["kafka_credential"].as_str() {
            write("credentials", name, &with(bit, c.as_bytes()));
            write(
                "credentials",
                &format!("{name}-answer"),
                &with(1 | (2 << 5) | (1 << 3), c.as_bytes()),
            );
        }
    }
    for (name, msg) in [
        ("plain", "\0alice\0alice-fuzz-secret"),
        ("plain-authzid", "alice\0alice\0alice-fuzz-secret"),
        ("plain-bob", "\0bob\0bob-fuzz-secret"),
        ("plain-wrong", "\0alice\0nope"),
    ] {
        write(t, name, &with(PLAIN_SERVER, msg.as_bytes()));
    }
    let f = fixtures();
    let mut tokens: Vec<String> = vec![f.oauth_token.value().into()];
    for u in vectors("jwt.json")["unsecured"].as_array().unwrap() {
        tokens.push(u["token"].as_str().unwrap().into());
    }
    for (i, tok) in tokens.iter().enumerate() {
        write(
            t,
            &format!("oauth-{i}"),
            &with(
                OAUTH_SERVER,
                format!("n,,\x01auth=Bearer {tok}\x01\x01").as_bytes(),
            ),
        );
        write(
            t,
            &format!("oauth-ext-{i}"),
            &with(
                OAUTH_SERVER,
                format!("n,a=alice,\x01auth=Bearer {tok}\x01logicalCluster=lkc-1\x01\x01")
                    .as_bytes(),
            ),
        );
    }
    write(
        t,
        "oauth-error",
        &with(
            OAUTH_CLIENT,
            br#"{"status":"invalid_token","scope":"a b","openid-configuration":"https://x"}"#,
        ),
    );
    write(
        t,
        "oauth-error-then",
        &with(OAUTH_CLIENT, b"{\"status\":\"invalid_token\"}\xff\x01"),
    );
    write(t, "oauth-ok", &with(OAUTH_CLIENT, b""));
    write(t, "saslname", &with(SASLNAME, b"a=2Cb=3Dc"));
}

fn jwt_seeds() {
    let v = vectors("jwt.json");
    for (i, tok) in v["tokens"].as_array().unwrap().iter().enumerate() {
        let name = tok["name"].as_str().unwrap();
        let token = tok["token"].as_str().unwrap();
        // Selector: validator 2 (HMAC allowed) or 3 (iat validation), clock at the vectors' time.
        let sel = (8 << 4) | if i % 4 == 3 { 3 } else { 2 };
        write("jwt", name, &with(sel, token.as_bytes()));
    }
    for tok in v["unsecured"].as_array().unwrap() {
        let name = tok["name"].as_str().unwrap();
        write(
            "jwt",
            &format!("unsecured-{name}"),
            &with(8 << 4, tok["token"].as_str().unwrap().as_bytes()),
        );
    }
    let now = v["now_ms"].as_i64().unwrap();
    let custom = UnsecuredTokenBuilder::new()
        .principal_claim_name("user")
        .string_claim("user", "bob")
        .unwrap()
        .scope_claim_name("roles")
        .list_claim("roles", &["test", "x"])
        .unwrap()
        .build(now)
        .unwrap();
    write(
        "jwt",
        "unsecured-custom",
        &with((8 << 4) | 1, custom.value().as_bytes()),
    );
    write(
        "credentials",
        "jwks",
        &with(5, v["jwks"].to_string().as_bytes()),
    );
}

fn codec_seeds() {
    let t = "kafka_codec";
    let v = vectors("token_messages.json");
    for m in v["messages"].as_array().unwrap() {
        let name = format!(
            "{}-v{}-{}",
            m["message"].as_str().unwrap(),
            m["version"],
            m["example"].as_str().unwrap_or("")
        );
        let frame = hex(m["frame"].as_str().unwrap());
        let body = &frame[4..];
        let version = m["version"].as_i64().unwrap() as u8;
        if name.contains("Request") {
            write(t, &name, &with(0, body));
            write(t, &format!("serve-{name}"), &with(5, body));
        } else {
            let kind = match m["api_key"].as_i64().unwrap() {
                38 => 3,
                39 | 40 => 4,
                _ => 5,
            };
            let mut d = vec![1 | (kind << 3), version];
            d.extend_from_slice(body);
            write(t, &name, &d);
        }
    }
    // KIP-554's requests: describe all, describe named users (one twice), and an alteration
    // with a deletion, an upsertion and a duplicate.
    use ksasl::kafka::scram_credentials::*;
    let describe = |users: Option<Vec<String>>| {
        DescribeScramRequest { users }
            .encode_request(3, Some("fuzz"))
            .unwrap()
    };
    write(t, "scram-describe-all", &with(0, &describe(None)[4..]));
    let named = Some(vec!["alice".into(), "nobody".into(), "alice".into()]);
    write(t, "scram-describe-named", &with(0, &describe(named)[4..]));
    let upsert = |name: &str, m| {
        ScramUpsertion::from_password(name, m, 4096, "pw", &FixedRandom).unwrap()
    };
    let alter = AlterScramRequest {
        deletions: vec![ScramDeletion {
            name: "bob".into(),
            mechanism: 2,
        }],
        upsertions: vec![
            upsert("carol", ksasl::ScramMechanism::Sha256),
            upsert("bob", ksasl::ScramMechanism::Sha512),
        ],
    };
    let f = alter.encode_request(4, None).unwrap();
    write(t, "scram-alter", &with(0, &f[4..]));
    // The SASL requests and responses of a real exchange, in every version.
    for version in 0..=5i16 {
        let r = ApiVersionsRequest::default();
        let mut r = r;
        if version >= 3 {
            r.software = Some(("ksasl".into(), "1.0".into()));
        }
        let f = encode_request(&r, version, 1, Some("fuzz")).unwrap();
        write(t, &format!("api-versions-v{version}"), &with(0, &f[4..]));
        write(
            t,
            &format!("api-versions-answer-v{version}"),
            &with(3, &f[4..]),
        );
        let config = server_config(0);
        let (resp, _) = config.api_versions_response(&f[4..]).unwrap();
        let mut d = vec![1, version as u8];
        d.extend_from_slice(&resp[4..]);
        write(t, &format!("api-versions-response-v{version}"), &d);
    }
    for version in 0..=1i16 {
        let f = encode_request(
            &SaslHandshakeRequest {
                mechanism: "SCRAM-SHA-256".into(),
            },
            version,
            2,
            None,
        )
        .unwrap();
        write(t, &format!("handshake-v{version}"), &with(0, &f[4..]));
        let r = SaslHandshakeResponse {
            error_code: 0,
            mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-256".into()],
        };
        let resp = ksasl::kafka::codec::encode_response(&r, version, 2).unwrap();
        let mut d = vec![1 | (1 << 3), version as u8];
        d.extend_from_slice(&resp[4..]);
        write(t, &format!("handshake-response-v{version}"), &d);
    }
    for version in 0..=2i16 {
        let f = encode_request(
            &SaslAuthenticateRequest {
                auth_bytes: fixed_client_first().into_bytes(),
            },
            version,
            3,
            Some("c"),
        )
        .unwrap();
        write(t, &format!("authenticate-v{version}"), &with(0, &f[4..]));
        write(t, &format!("illegal-state-v{version}"), &with(3, &f[4..]));
        write(
            t,
            &format!("during-exchange-v{version}"),
            &with(4 | (1 << 3), &f[4..]),
        );
        let r = SaslAuthenticateResponse {
            error_code: 0,
            error_message: Some(String::new()),
            auth_bytes: fixed_server_first().into_bytes(),
            session_lifetime_ms: 10_000,
        };
        let resp = ksasl::kafka::codec::encode_response(&r, version, 3).unwrap();
        let mut d = vec![1 | (2 << 3), version as u8];
        d.extend_from_slice(&resp[4..]);
        write(t, &format!("authenticate-response-v{version}"), &d);
    }
    write(
        t,
        "legacy-raw",
        &with(4 | (2 << 3), fixed_client_first().as_bytes()),
    );
    let mut frames = vec![2, 0x10, 0x00, 7];
    frames.extend(raw_frame(b"n,,n=alice,r=x"));
    frames.extend(raw_frame(b""));
    frames.extend(raw_frame(&[0xab; 40]));
    write(t, "frames", &frames);
    write(
        t,
        "reader",
        &with(
            6,
            &[
                3, 0, 2, b'h', b'i', 0x81, 0x01, 0, 0, 0, 4, 1, 2, 3, 4, 2, 1, 1, 0x61,
            ],
        ),
    );
    write(t, "raw", &with(7, b"hello"));
}

fn credential_seeds() {
    let t = "credentials";
    write(t, "principal", &with(2, b"User:alice"));
    write(t, "principal-bare", &with(2, b"alice"));
    write(
        t,
        "extensions",
        &with(3, b"logicalCluster=lkc-1\x01identityPoolId=pool-1"),
    );
    write(t, "mechanism", &with(4, b"SCRAM-SHA-512"));
    write(t, "algorithms", &with(4, b"RS256,ES384,EdDSA,HS256"));
    write(t, "answer-password", &with(1 | (1 << 5), b"secret\0alice"));
    let authority = &fixtures().authority;
    write(
        t,
        "token-records",
        &with(6, authority.export_records().unwrap().as_bytes()),
    );
    let mut b = vec![7u8];
    for v in [
        60_000i64,
        30_000,
        524_288,
        104_857_600,
        100,
        0,
        18,
        0,
        5,
        4096,
    ] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b.extend_from_slice(b"PLAIN,SCRAM-SHA-256");
    write(t, "builders", &b);
}

/// The configurations of tests/vectors/config_table.json, each read as a client's (first byte
/// 0) and as the listener it names or as a broker's first listener (first byte 1: SASL_SSL).
fn config_seeds() {
    let t = "config";
    let table = vectors("config_table.json");
    for (kind, entries) in ["valid", "invalid"].iter().map(|k| (k, &table[k])) {
        for (i, e) in entries.as_array().unwrap().iter().enumerate() {
            let text = e["properties"].as_str().unwrap().as_bytes();
            let pick = match e["listener"].as_str() {
                Some("INTERNAL") => 2,
                Some("EXTERNAL") => 3,
                Some("l") => 4,
                Some(_) => 1,
                None => 0,
            };
            write(t, &format!("{kind}-{i}"), &with(pick, text));
        }
    }
    write(t, "jaas-comment", &with(0, b"M required a=/x;"));
    write(
        t,
        "jaas-quotes",
        &with(0, br#"M required a="x\"y" b='\101';"#),
    );
}

fn main() {
    config_seeds();
    driver_seeds();
    message_seeds();
    jwt_seeds();
    codec_seeds();
    credential_seeds();
    for t in [
        "server_driver",
        "client_driver",
        "sasl_messages",
        "jwt",
        "kafka_codec",
        "credentials",
        "config",
    ] {
        let n = std::fs::read_dir(corpus(t)).unwrap().count();
        println!("{t}: {n} files");
    }
}
