//! GSSAPI (Kerberos) costs per login, over the system's MIT GSS-API against a real KDC.
//!
//! Needs the throw-away KDC of `tests/kerberos/kdc.py`, whose `--exec` mode gives this process
//! the MIT environment (KRB5_CONFIG, KRB5CCNAME, KRB5RCACHEDIR) and names its facts in
//! `KSASL_KDC_INFO`:
//!
//! ```text
//! python3 tests/kerberos/kdc.py --max-life 1h --exec -- cargo bench --bench gssapi -- --noplot
//! ```
//!
//! Without `KSASL_KDC_INFO`, or without MIT's libgssapi_krb5, it prints why and measures
//! nothing (so `cargo bench` alone still passes).
//!
//! The client logs in once from alice's keytab (a ticket-granting ticket in a private MEMORY
//! cache) and the warm-up login fetches the service ticket for kafka/localhost into that cache,
//! so the timed logins never talk to the KDC: what is left is the AP-REQ (an authenticator
//! encrypted under the session key), the acceptor's decryption of ticket and authenticator with
//! the service key, the replay-cache entry, and the two wrapped security-layer messages.
//!
//! Every login needs a fresh client token: MIT's acceptor records each authenticator in its
//! replay cache and refuses one it has seen. So the server rows run a real client beside the
//! server and time only the server's calls (`iter_custom`), and the client row does the same
//! the other way round.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{black_box, Criterion};
use ksasl::background::wall_clock_ms;
use ksasl::io::gss::{GssapiServerSettings, KerberosLogin, LoginSource};
use ksasl::refresh::KerberosRefreshConfig;
use ksasl::{ClientStep, ErrorCode, MechanismRegistry, OsRandom, ServerStep};

const GSSAPI: &str = "GSSAPI";

struct Setup {
    login: Arc<KerberosLogin>,
    clients: MechanismRegistry,
    realm: String,
    server_keytab: String,
}

impl Setup {
    /// A broker's GSSAPI server as Kafka's defaults describe it: the keytab and principal of
    /// kafka/localhost, `DEFAULT` principal-to-local rules, sessions capped at the ticket. A new
    /// registry reads the keytab again (a new acceptor credential).
    fn servers(&self) -> MechanismRegistry {
        let mut r = MechanismRegistry::new();
        let settings = GssapiServerSettings {
            keytab: Some(self.server_keytab.clone()),
            principal: Some(format!("kafka/localhost@{}", self.realm)),
            ..GssapiServerSettings::default()
        };
        ksasl::io::gss::register_server(&mut r, &settings).expect("the broker's keytab is read");
        r
    }

    /// Renews the client's ticket-granting ticket when its schedule says so (outside the
    /// timed code; with `--max-life 1h` it never does during a run).
    fn keep_logged_in(&self) {
        self.login
            .poll(wall_clock_ms(), &OsRandom)
            .expect("the client's Kerberos login");
    }
}

fn setup() -> Result<Setup, String> {
    let info_path = std::env::var("KSASL_KDC_INFO").map_err(|_| {
        "KSASL_KDC_INFO is not set: run under the test KDC, e.g. \
         python3 tests/kerberos/kdc.py --max-life 1h --exec -- cargo bench --bench gssapi"
            .to_string()
    })?;
    if !ksasl::io::gss::available() {
        return Err("MIT's GSS-API library (libgssapi_krb5) could not be loaded".to_string());
    }
    let text = std::fs::read_to_string(&info_path)
        .map_err(|e| format!("cannot read KSASL_KDC_INFO={info_path}: {e}"))?;
    let info: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{info_path} is not JSON: {e}"))?;
    let field = |path: &[&str]| -> Result<String, String> {
        let mut v = &info;
        for p in path {
            v = &v[*p];
        }
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{info_path} has no {}", path.join(".")))
    };
    let realm = field(&["realm"])?;
    let login = Arc::new(
        KerberosLogin::new(
            LoginSource::Keytab {
                principal: format!("alice@{realm}"),
                keytab: field(&["keytabs", "alice"])?,
            },
            KerberosRefreshConfig::default(),
        )
        .map_err(|e| e.to_string())?,
    );
    login
        .login(wall_clock_ms(), &OsRandom)
        .map_err(|e| format!("alice's login failed: {e}"))?;
    let mut clients = MechanismRegistry::new();
    ksasl::io::gss::register_client(&mut clients, &login, "kafka", "localhost", false)
        .map_err(|e| e.to_string())?;
    Ok(Setup {
        login,
        clients,
        realm,
        server_keytab: field(&["keytabs", "kafka/localhost"])?,
    })
}

fn sent(step: ClientStep) -> Vec<u8> {
    match step {
        ClientStep::Send(m) | ClientStep::Done(Some(m)) => m,
        other => panic!("the GSSAPI client did not answer: {other:?}"),
    }
}

fn challenge(step: ServerStep) -> Vec<u8> {
    match step {
        ServerStep::Challenge(m) => m,
        other => panic!("the GSSAPI server did not send its offer: {other:?}"),
    }
}

fn finish(step: ServerStep) {
    match step {
        ServerStep::Done { outcome, .. } => {
            assert_eq!(outcome.principal.to_string(), "User:alice");
            black_box(outcome);
        }
        other => panic!("the GSSAPI server did not finish: {other:?}"),
    }
}

/// Time spent on each side of one login.
#[derive(Default)]
struct Split {
    client: Duration,
    server: Duration,
}

/// One login, Kafka's way (no mutual authentication: AP-REQ, wrapped offer, wrapped choice,
/// success), with each side's calls timed separately. The server side includes making its
/// exchange (a fresh acceptor context), as a broker does per connection; the client side
/// includes making its exchange and context.
fn timed_login(clients: &MechanismRegistry, servers: &MechanismRegistry, split: &mut Split) {
    let now = wall_clock_ms();
    let t = Instant::now();
    let mut client = clients.client(GSSAPI).unwrap();
    let ap_req = sent(client.start(now).unwrap());
    split.client += t.elapsed();

    let t = Instant::now();
    let mut server = servers.server(GSSAPI).unwrap();
    let offer = challenge(server.step(&ap_req, now).unwrap());
    split.server += t.elapsed();

    let t = Instant::now();
    let choice = match client.step(&offer, now).unwrap() {
        ClientStep::Done(Some(m)) => m,
        other => panic!("the GSSAPI client did not choose a layer: {other:?}"),
    };
    drop(client);
    split.client += t.elapsed();

    let t = Instant::now();
    finish(server.step(&choice, now).unwrap());
    drop(server);
    split.server += t.elapsed();
}

/// Whether the acceptor refuses an AP-REQ it has seen: true with a working replay cache,
/// false with `KRB5RCACHETYPE=none`.
fn refuses_replay(s: &Setup, servers: &MechanismRegistry) -> bool {
    let now = wall_clock_ms();
    let mut client = s.clients.client(GSSAPI).unwrap();
    let ap_req = sent(client.start(now).unwrap());
    challenge(servers.server(GSSAPI).unwrap().step(&ap_req, now).unwrap());
    match servers.server(GSSAPI).unwrap().step(&ap_req, now) {
        Ok(_) => false,
        Err(e) if e.code() == ErrorCode::KerberosReplay => true,
        Err(e) => panic!("a replayed AP-REQ failed otherwise: {e}"),
    }
}

/// What the acceptor does with replays in this process, for the output.
fn rcache_note(s: &Setup, servers: &MechanismRegistry) -> String {
    let kind = std::env::var("KRB5RCACHENAME")
        .or_else(|_| std::env::var("KRB5RCACHETYPE"))
        .unwrap_or_else(|_| "default (file2 in KRB5RCACHEDIR)".to_string());
    let dir = std::env::var("KRB5RCACHEDIR").unwrap_or_else(|_| "unset".to_string());
    format!(
        "replay cache: {kind}, KRB5RCACHEDIR={dir}, replayed AP-REQ refused: {}",
        refuses_replay(s, servers)
    )
}

/// One side's share of a login (`share` picks it from the split) with the given servers:
/// every iteration is a whole login, only that share is counted.
fn bench_share(
    c: &mut Criterion,
    name: &str,
    s: &Setup,
    servers: &MechanismRegistry,
    share: fn(&Split) -> Duration,
) {
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            s.keep_logged_in();
            let mut split = Split::default();
            for _ in 0..iters {
                timed_login(&s.clients, servers, &mut split);
            }
            share(&split)
        })
    });
}

fn bench(c: &mut Criterion, s: &Setup) {
    let servers = s.servers();
    // Warm-up login: fetches the service ticket into alice's cache, so no timed login asks
    // the KDC for anything.
    timed_login(&s.clients, &servers, &mut Split::default());
    println!("gssapi: {}", rcache_note(s, &servers));

    // (a) The client's share of a login: a new exchange and context, gss_init_sec_context with
    // the cached service ticket (the AP-REQ), then unwrapping the offer and wrapping the choice.
    bench_share(c, "gssapi/client_context", s, &servers, |t| t.client);

    // (b) The server's share: a new exchange and acceptor context, gss_accept_sec_context
    // (ticket and authenticator decrypted, replay cache consulted and written), names and
    // ticket end read, the wrapped offer, and the client's choice unwrapped and checked.
    bench_share(c, "gssapi/server_accept", s, &servers, |t| t.server);

    // (c) A whole login in one process, both sides.
    bench_share(c, "gssapi/login_both_sides", s, &servers, |t| {
        t.client + t.server
    });

    // (b) again with MIT's replay cache off. MIT reads KRB5RCACHETYPE when an acceptor opens
    // its default replay cache, which it does per accepted token, so setting it here takes
    // effect for the next login; the replay probe below confirms it. Only for comparison: a
    // broker must keep its replay cache.
    std::env::set_var("KRB5RCACHETYPE", "none");
    let unprotected = s.servers();
    println!("gssapi: {}", rcache_note(s, &unprotected));
    bench_share(
        c,
        "gssapi/server_accept_rcache_none",
        s,
        &unprotected,
        |t| t.server,
    );
    std::env::remove_var("KRB5RCACHETYPE");
}

fn main() {
    let s = match setup() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("gssapi benchmarks skipped: {why}");
            return;
        }
    };
    let mut c = Criterion::default()
        .sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &s);
    c.final_summary();
}
