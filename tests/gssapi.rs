//! GSSAPI against a real MIT KDC (started once for this test binary by
//! `tests/kerberos/kdc.py`, on 127.0.0.1): logins from keytabs with no `kinit`, both sides of
//! the exchange over the system GSS-API, Kafka's session rules, and each failure's own code.

mod common;
mod kafka_pair;
mod wire;

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use common::{exchange, Failure, NOW};
use kafka_pair::Pair;
use ksasl::io::gss::{
    AcceptorFactory, Credential, GssapiServerSettings, KerberosLogin, LoginSource,
};
use ksasl::kafka::client::ClientConfig;
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::mech::gssapi::{GssapiClientConfig, GssapiServerConfig, PrincipalMapper};
use ksasl::refresh::KerberosRefreshConfig;
use ksasl::{ClientStep, ErrorCode, MechanismRegistry, OsRandom};

struct Kdc {
    info: serde_json::Value,
    // Holding the child's stdin keeps the KDC alive; it exits when this process does.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

impl Kdc {
    fn keytab(&self, name: &str) -> String {
        self.info["keytabs"][name].as_str().unwrap().to_string()
    }
    fn wrong_keytab(&self, name: &str) -> String {
        self.info["wrong_keytabs"][name]
            .as_str()
            .unwrap()
            .to_string()
    }
}

fn kdc() -> &'static Kdc {
    static KDC: OnceLock<Kdc> = OnceLock::new();
    KDC.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kerberos/kdc.py");
        let mut child = Command::new("python3")
            .args([
                script,
                "--exit-on-stdin-eof",
                "--principal",
                "other/localhost",
                "--principal",
                "brief:4s",
                "--principal",
                "short:20s",
                "--wrong-keytab",
                "kafka/localhost",
                "--wrong-keytab",
                "alice",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs tests/kerberos/kdc.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let info: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("KDC did not start ({e}): {line}"));
        for (k, v) in info["env"].as_object().unwrap() {
            std::env::set_var(k, v.as_str().unwrap());
        }
        Kdc {
            info,
            _stdin: Mutex::new(child.stdin.take().unwrap()),
            _child: Mutex::new(child),
        }
    })
}

fn strip_realm() -> PrincipalMapper {
    Arc::new(|p: &str| Ok(p.split(['/', '@']).next().unwrap_or("").to_string()))
}

fn server_registry(keytab: &str, principal: Option<&str>, service: &str) -> MechanismRegistry {
    let cred = Arc::new(Credential::acceptor(Some(keytab), principal).unwrap());
    let mut r = MechanismRegistry::new();
    r.register_gssapi_server(
        Arc::new(GssapiServerConfig::new(service, strip_realm()).unwrap()),
        Arc::new(AcceptorFactory::new(cred)),
    );
    r
}

fn kafka_server() -> MechanismRegistry {
    let k = kdc();
    let mut r = MechanismRegistry::new();
    let settings = GssapiServerSettings {
        keytab: Some(k.keytab("kafka/localhost")),
        principal: Some("kafka/localhost@KSASL.TEST".into()),
        ..GssapiServerSettings::default()
    };
    ksasl::io::gss::register_server(&mut r, &settings).unwrap();
    r
}

fn login(name: &str, keytab: &str) -> Arc<KerberosLogin> {
    let login = Arc::new(
        KerberosLogin::new(
            LoginSource::Keytab {
                principal: format!("{name}@KSASL.TEST"),
                keytab: keytab.to_string(),
            },
            KerberosRefreshConfig::default(),
        )
        .unwrap(),
    );
    login
        .login(ksasl::background::wall_clock_ms(), &OsRandom)
        .unwrap();
    login
}

fn client_registry(login: &Arc<KerberosLogin>, service: &str, mutual: bool) -> MechanismRegistry {
    let mut r = MechanismRegistry::new();
    r.register_gssapi_client(
        Arc::new(GssapiClientConfig::new(service, "localhost").unwrap()),
        login.initiator_factory(mutual),
    );
    r
}

#[test]
fn alice_authenticates_with_and_without_mutual_authentication() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    for mutual in [false, true] {
        let mut client = client_registry(&alice, "kafka", mutual)
            .client("GSSAPI")
            .unwrap();
        let mut server = kafka_server().server("GSSAPI").unwrap();
        let (outcome, transcript) = exchange(&mut client, &mut server).unwrap();
        assert_eq!(outcome.principal.to_string(), "User:alice");
        assert_eq!(outcome.mechanism, "GSSAPI");
        // AP-REQ, offer, choice, empty success; mutual adds the AP-REP and its empty answer.
        assert_eq!(
            transcript.len(),
            if mutual { 6 } else { 4 },
            "mutual={mutual}"
        );
        assert!(transcript.last().unwrap().is_empty());
    }
}

#[test]
fn the_session_ends_with_the_service_ticket() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let tgt_end = alice.ticket_end_ms().unwrap();
    let mut client = client_registry(&alice, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let mut server = kafka_server().server("GSSAPI").unwrap();
    let (outcome, _) = exchange(&mut client, &mut server).unwrap();
    let end = outcome
        .credential_expiry_ms
        .expect("the ticket cap is on by default");
    // The service ticket ends with the ticket-granting ticket (5-minute realm maximum).
    assert!(
        (end - tgt_end).abs() <= 2_000,
        "service ticket end {end}, TGT end {tgt_end}"
    );
    assert_eq!(end % 1000, 0);
}

#[test]
fn without_the_cap_the_session_has_no_credential_expiry() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let cred = Arc::new(
        Credential::acceptor(
            Some(&k.keytab("kafka/localhost")),
            Some("kafka/localhost@KSASL.TEST"),
        )
        .unwrap(),
    );
    let mut config = GssapiServerConfig::new("kafka", strip_realm()).unwrap();
    config.cap_session_at_ticket = false;
    let mut servers = MechanismRegistry::new();
    servers.register_gssapi_server(Arc::new(config), Arc::new(AcceptorFactory::new(cred)));
    let mut client = client_registry(&alice, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let (outcome, _) = exchange(&mut client, &mut servers.server("GSSAPI").unwrap()).unwrap();
    assert_eq!(outcome.credential_expiry_ms, None);
}

#[test]
fn a_ticket_for_another_service_is_refused() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    // The client asks for other/localhost; the broker only has kafka/localhost's key.
    let mut client = client_registry(&alice, "other", false)
        .client("GSSAPI")
        .unwrap();
    let mut server = kafka_server().server("GSSAPI").unwrap();
    let e = exchange(&mut client, &mut server).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosWrongService, "{e:?}");

    // A server that accepts any key of its keytab still refuses a ticket whose service is
    // not its own (the JDK's protocol check).
    let both = server_registry(&k.keytab("other/localhost"), None, "kafka");
    let mut client = client_registry(&alice, "other", false)
        .client("GSSAPI")
        .unwrap();
    let e = exchange(&mut client, &mut both.server("GSSAPI").unwrap()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosWrongService, "{e:?}");
    assert!(matches!(e, Failure::Server(_)));
    assert!(
        format!("{e:?}").contains("targ name protocol error"),
        "{e:?}"
    );

    // A service the KDC does not know fails on the client.
    let mut client = client_registry(&alice, "nosuch", false)
        .client("GSSAPI")
        .unwrap();
    let e = client.start(NOW).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosWrongService, "{e:?}");
    assert!(
        e.message().contains("not found in Kerberos database"),
        "{}",
        e.message()
    );
}

#[test]
fn a_replayed_token_is_refused() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let mut client = client_registry(&alice, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let ap_req = match client.start(NOW).unwrap() {
        ksasl::ClientStep::Send(m) => m,
        other => panic!("{other:?}"),
    };
    let servers = kafka_server();
    let mut first = servers.server("GSSAPI").unwrap();
    assert!(matches!(
        first.step(&ap_req, NOW).unwrap(),
        ksasl::ServerStep::Challenge(_)
    ));
    let mut second = servers.server("GSSAPI").unwrap();
    let e = second.step(&ap_req, NOW).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosReplay, "{e:?}");
}

#[test]
fn a_wrong_keytab_is_refused_on_either_side() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let stale = server_registry(
        &k.wrong_keytab("kafka/localhost"),
        Some("kafka/localhost@KSASL.TEST"),
        "kafka",
    );
    let mut client = client_registry(&alice, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let e = exchange(&mut client, &mut stale.server("GSSAPI").unwrap()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosKeyMismatch, "{e:?}");
    // The client is told only Kafka's generic sentence.
    if let Failure::Server(e) = &e {
        assert_eq!(
            e.client_message("GSSAPI", false),
            "Authentication failed during authentication due to invalid credentials with SASL mechanism GSSAPI"
        );
    }

    let bad = KerberosLogin::new(
        LoginSource::Keytab {
            principal: "alice@KSASL.TEST".into(),
            keytab: k.wrong_keytab("alice"),
        },
        KerberosRefreshConfig::default(),
    )
    .unwrap();
    let e = bad.login(NOW, &OsRandom).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosLoginFailed, "{e:?}");
    assert_eq!(
        bad.current().unwrap_err().code(),
        ErrorCode::KerberosLoginFailed
    );
    // A retry is planned, no sooner than a second later.
    assert!(bad.next_login_ms().unwrap() >= NOW + 1_000);
    let missing = KerberosLogin::new(
        LoginSource::Keytab {
            principal: "alice@KSASL.TEST".into(),
            keytab: "/nonexistent/alice.keytab".into(),
        },
        KerberosRefreshConfig::default(),
    )
    .unwrap();
    assert_eq!(
        missing.login(NOW, &OsRandom).unwrap_err().code(),
        ErrorCode::KerberosLoginFailed
    );
}

#[test]
fn an_expired_service_ticket_is_refused() {
    let k = kdc();
    // `brief` gets 4-second tickets; the KDC and the acceptor allow 5 seconds of skew.
    let brief = login("brief", &k.keytab("brief"));
    let mut client = client_registry(&brief, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let ap_req = match client.start(NOW).unwrap() {
        ksasl::ClientStep::Send(m) => m,
        other => panic!("{other:?}"),
    };
    let end = brief.ticket_end_ms().unwrap();
    let skew_ms = k.info["clockskew"].as_i64().unwrap() * 1000;
    // Real Kerberos time: the ticket must be past its end plus the skew before it is refused.
    while ksasl::background::wall_clock_ms() < end + skew_ms + 1_000 {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let e = kafka_server()
        .server("GSSAPI")
        .unwrap()
        .step(&ap_req, NOW)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosTicketExpired, "{e:?}");
}

#[test]
fn logins_renew_short_tickets_without_kinit_and_reauthentication_uses_the_new_one() {
    let k = kdc();
    // 20-second tickets: Kafka's client would wait its 60-second minimum and let the ticket
    // expire; ksasl plans each login at 80-85 % of the ticket's life.
    let short = login("short", &k.keytab("short"));
    let servers = kafka_server();
    let clients = client_registry(&short, "kafka", false);
    let first_end = short.ticket_end_ms().unwrap();
    let mut renewals = 0;
    let mut ends = vec![first_end];
    while renewals < 2 {
        let now = ksasl::background::wall_clock_ms();
        let next = short.next_login_ms().unwrap();
        assert!(
            next < short.ticket_end_ms().unwrap(),
            "the next login is inside the ticket's life"
        );
        if short.poll(now, &OsRandom).unwrap() {
            renewals += 1;
            ends.push(short.ticket_end_ms().unwrap());
        }
        // Every (re-)authentication along the way works and its session ends with the ticket.
        let mut c = clients.client("GSSAPI").unwrap();
        let (outcome, _) = exchange(&mut c, &mut servers.server("GSSAPI").unwrap()).unwrap();
        assert_eq!(outcome.principal.to_string(), "User:short");
        let cap = outcome.credential_expiry_ms.unwrap();
        assert!(cap > now, "a fresh session's ticket is live");
        std::thread::sleep(std::time::Duration::from_millis(1_000));
    }
    assert_eq!(short.logins(), 3);
    assert!(
        ends.windows(2).all(|w| w[1] > w[0]),
        "each login got a newer ticket: {ends:?}"
    );
    // No kinit ran: the user's credential cache was never created.
    let ccache = k.info["env"]["KRB5CCNAME"]
        .as_str()
        .unwrap()
        .trim_start_matches("FILE:");
    assert!(!std::path::Path::new(ccache).exists(), "{ccache} exists");
}

fn wall() -> i64 {
    ksasl::background::wall_clock_ms()
}

#[test]
fn a_cache_login_renews_the_caches_ticket_as_kinit_r_does() {
    // A ticket cache made by kinit with a 20-second renewable ticket, as a user of Kafka's
    // client or kafka-python has: ksasl renews it at the KDC in place (no kinit -R process)
    // on the login schedule, so the client outlives the first ticket.
    let k = kdc();
    let dir = std::env::temp_dir().join(format!("ksasl-renew-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cache = format!("FILE:{}", dir.join("cc").display());
    let kinit = Command::new("kinit")
        .args([
            "-k",
            "-t",
            &k.keytab("short"),
            "-l",
            "20s",
            "-r",
            "5m",
            "-c",
            &cache,
        ])
        .arg("short@KSASL.TEST")
        .status()
        .expect("kinit runs");
    assert!(kinit.success());
    let login =
        Arc::new(KerberosLogin::from_settings(None, None, Some(&cache), None, None, None).unwrap());
    login.login(wall(), &OsRandom).unwrap();
    let first_end = login.ticket_end_ms().unwrap();
    let servers = kafka_server();
    let clients = client_registry(&login, "kafka", false);
    let mut ends = vec![first_end];
    while login.logins() < 3 {
        let now = wall();
        assert!(
            now < first_end + 30_000,
            "two renewals within 30 s after the first ticket's end"
        );
        if login.poll(now, &OsRandom).unwrap() {
            ends.push(login.ticket_end_ms().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(
        ends.windows(2).all(|w| w[1] > w[0]),
        "each login renewed the ticket: {ends:?}"
    );
    // Past the first ticket's end, a new exchange works on the renewed ticket.
    while wall() < first_end + 1_000 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        login.poll(wall(), &OsRandom).unwrap();
    }
    let mut c = clients.client("GSSAPI").unwrap();
    let (outcome, _) = exchange(&mut c, &mut servers.server("GSSAPI").unwrap()).unwrap();
    assert_eq!(outcome.principal.to_string(), "User:short");
    // A cache whose ticket cannot be renewed is reported by the renewal itself.
    let e = ksasl::io::gss::renew_cache(Some(&cache), Some("alice@KSASL.TEST")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosLoginFailed, "{e:?}");
    assert!(e.message().contains("not alice@KSASL.TEST's"), "{e:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kafka_framing_every_mode_and_reauthentication() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let server = |reauth: i64| {
        ServerConfig::builder(kafka_server())
            .set_max_reauth_ms(reauth)
            .build()
            .unwrap()
    };
    for (api_versions, known) in [
        (0, None),
        (3, None),
        (0, Some((1i64, Some(2i64)))),
        (0, Some((1, Some(0)))),
        (0, Some((0, None))),
    ] {
        let mut c = ClientConfig::builder(client_registry(&alice, "kafka", false), "GSSAPI");
        c.set_api_versions_version(api_versions);
        if let Some((h, a)) = known {
            c.set_known_versions(h, a);
        }
        let mut p = Pair::new(c.build().unwrap(), server(0));
        p.connect(wall());
        assert_eq!(p.stats.failed, None, "{api_versions} {known:?}");
        assert_eq!(p.stats.authenticated, 1, "{api_versions} {known:?}");
        assert_eq!(
            p.server.session().unwrap().outcome.principal.to_string(),
            "User:alice"
        );
        // No max_reauth: the session is the service ticket's life.
        let expiry = p.server.session_expiry_ms().unwrap();
        assert!((expiry - alice.ticket_end_ms().unwrap()).abs() <= 2_000);
    }

    // Four session lifetimes of 3 s, requests every 500 ms: re-authenticated each time.
    let mut p = Pair::new(
        ClientConfig::new(client_registry(&alice, "kafka", false), "GSSAPI").unwrap(),
        server(3_000),
    );
    let mut now = wall();
    p.connect(now);
    assert_eq!(p.client.session().unwrap().lifetime_ms, 3_000);
    for _ in 0..25 {
        now += 500;
        p.request(now);
        p.pump(now);
    }
    assert_eq!(p.stats.failed, None);
    assert!(!p.stats.closed_expired);
    assert!(
        p.stats.reauthenticated >= 4,
        "{:?}",
        p.stats.reauthenticated
    );
    assert_eq!(p.stats.received.len(), p.stats.sent.len());
}

#[test]
fn a_session_never_outlives_a_short_service_ticket() {
    let k = kdc();
    // `brief`'s tickets last 4 s, less than the 60 s max_reauth.
    let brief = login("brief", &k.keytab("brief"));
    let server = ServerConfig::builder(kafka_server())
        .set_max_reauth_ms(60_000)
        .build()
        .unwrap();
    let mut p = Pair::new(
        ClientConfig::new(client_registry(&brief, "kafka", false), "GSSAPI").unwrap(),
        server,
    );
    let now = wall();
    p.connect(now);
    assert_eq!(p.stats.failed, None);
    let ticket_end = brief.ticket_end_ms().unwrap();
    let expiry = p.server.session_expiry_ms().unwrap();
    assert!(
        expiry <= ticket_end + 1_000,
        "session until {expiry}, ticket until {ticket_end}"
    );
    assert!(p.client.session().unwrap().lifetime_ms <= 5_000);
    // Past the ticket's end the broker side refuses the connection's requests.
    assert_eq!(
        p.server.gate(0, expiry + 1),
        ksasl::session::Gate::CloseExpired
    );
}

#[test]
fn a_pre_0_10_client_sends_a_raw_gssapi_token_first() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let mut b = ServerConfig::builder(kafka_server());
    b.set_legacy_gssapi(true);
    let mut server = ServerConnection::new(b.build().unwrap());
    let mut client = client_registry(&alice, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let now = wall();
    let mut token = match client.start(now).unwrap() {
        ClientStep::Send(m) => m,
        other => panic!("{other:?}"),
    };
    let mut finished = false;
    for _ in 0..4 {
        let action = server.handle_frame(&token, now);
        let out = server.poll_transmit().unwrap_or_default();
        match action {
            ServerAction::Authenticated(session) => {
                assert_eq!(session.outcome.principal.to_string(), "User:alice");
                // Raw framing: GSSAPI's last step has no message, so nothing is sent.
                assert!(out.is_empty());
                finished = true;
                break;
            }
            ServerAction::Continue => {}
            other => panic!("{other:?}"),
        }
        let len = i32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(len + 4, out.len(), "one raw frame");
        token = match client.step(&out[4..], now).unwrap() {
            ClientStep::Send(m) | ClientStep::Done(Some(m)) => m,
            other => panic!("{other:?}"),
        };
    }
    assert!(finished);

    // Off by default, as in Kafka 4.x: the same first packet is refused.
    let mut server = ServerConnection::new(ServerConfig::new(kafka_server()).unwrap());
    let mut client = client_registry(&alice, "kafka", false)
        .client("GSSAPI")
        .unwrap();
    let ClientStep::Send(token) = client.start(now).unwrap() else {
        panic!()
    };
    let action = server.handle_frame(&token, now);
    assert!(
        !matches!(
            action,
            ServerAction::Continue | ServerAction::Authenticated(_)
        ),
        "{action:?}"
    );
}

#[test]
fn the_default_rule_takes_its_realm_from_the_kerberos_configuration() {
    // As Kafka's broker: DEFAULT strips the realm of krb5.conf's default_realm, which need not
    // be the broker principal's own.
    kdc();
    assert_eq!(
        ksasl::io::gss::default_realm().as_deref(),
        Some("KSASL.TEST")
    );
    let map = |principal: &str, default_realm: Option<&str>| {
        let settings = GssapiServerSettings {
            principal: Some(principal.into()),
            default_realm: default_realm.map(str::to_string),
            ..GssapiServerSettings::default()
        };
        (settings.mapper().unwrap())("alice@KSASL.TEST")
    };
    assert_eq!(map("kafka/broker@OTHER.REALM", None).unwrap(), "alice");
    // An explicit default realm wins; a name from another realm is then not mapped.
    let e = map("kafka/localhost@KSASL.TEST", Some("OTHER.REALM")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosNameUnmapped, "{e:?}");
}

#[test]
fn principal_to_local_rules_name_the_kafka_user() {
    let k = kdc();
    let alice = login("alice", &k.keytab("alice"));
    let run = |rules: &[&str]| {
        let mut r = MechanismRegistry::new();
        let settings = GssapiServerSettings {
            keytab: Some(k.keytab("kafka/localhost")),
            principal: Some("kafka/localhost@KSASL.TEST".into()),
            rules: rules.iter().map(|s| s.to_string()).collect(),
            ..GssapiServerSettings::default()
        };
        ksasl::io::gss::register_server(&mut r, &settings).unwrap();
        let mut client = client_registry(&alice, "kafka", false)
            .client("GSSAPI")
            .unwrap();
        exchange(&mut client, &mut r.server("GSSAPI").unwrap())
    };
    assert_eq!(
        run(&["DEFAULT"]).unwrap().0.principal.to_string(),
        "User:alice"
    );
    let (o, _) = run(&[
        "RULE:[1:$1@$0](alice@KSASL.TEST)s/.*/kafka-admin/",
        "DEFAULT",
    ])
    .unwrap();
    assert_eq!(o.principal.to_string(), "User:kafka-admin");
    let (o, _) = run(&["RULE:[1:$1](.*)s/(.*)/$1/U"]).unwrap();
    assert_eq!(o.principal.to_string(), "User:ALICE");
    // No rule applies: refused with its own code.
    let e = run(&["RULE:[2:$1](.*)s/.*/x/"]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::KerberosNameUnmapped, "{e:?}");
    // A keytab that does not exist is reported when the server is set up.
    let mut r = MechanismRegistry::new();
    let settings = GssapiServerSettings {
        keytab: Some("/nonexistent/kafka.keytab".into()),
        principal: Some("kafka/localhost@KSASL.TEST".into()),
        ..GssapiServerSettings::default()
    };
    let e = ksasl::io::gss::register_server(&mut r, &settings).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidConfig, "{e:?}");
    assert!(
        e.message()
            .contains("/nonexistent/kafka.keytab does not exist"),
        "{e:?}"
    );
    assert_eq!(r.server_mechanisms().len(), 0);
}

#[test]
fn a_gssapi_listener_of_server_properties() {
    let k = kdc();
    let text = format!(
        "listeners=SASL_PLAINTEXT://127.0.0.1:9092\n\
         sasl.enabled.mechanisms=GSSAPI,PLAIN\n\
         sasl.kerberos.service.name=kafka\n\
         connections.max.reauth.ms=60000\n\
         sasl.kerberos.principal.to.local.rules=RULE:[1:$1@$0](alice@KSASL.TEST)s/.*/kafka-admin/,DEFAULT\n\
         listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule \
         required useKeyTab=true storeKey=true keyTab=\"{}\" principal=\"kafka/localhost@KSASL.TEST\";\n\
         listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule \
         required user_bob=\"bob-secret\";\n",
        k.keytab("kafka/localhost")
    );
    let settings = ksasl::config::ServerSettings::from_text(&text, "SASL_PLAINTEXT").unwrap();
    let mut setup = settings.build(None).unwrap();
    assert!(setup.config.is_none(), "GSSAPI waits for the host");
    ksasl::io::gss::finish_listener(&mut setup).unwrap();
    let config = setup
        .config
        .clone()
        .expect("a configuration once GSSAPI is added");
    let alice = login("alice", &k.keytab("alice"));
    let mut p = Pair::new(
        ClientConfig::new(client_registry(&alice, "kafka", false), "GSSAPI").unwrap(),
        config.clone(),
    );
    p.connect(wall());
    assert_eq!(p.stats.failed, None);
    let s = p.server.session().unwrap();
    // The listener's rules name the user; the session is the listener's, capped at the ticket.
    assert_eq!(s.outcome.principal.to_string(), "User:kafka-admin");
    assert!(p.client.session().unwrap().lifetime_ms <= 60_000);
    // The listener's other mechanism still works.
    let mut plain = MechanismRegistry::new();
    plain.merge(MechanismRegistry::password_clients(Arc::new(
        ksasl::credential::PasswordCredential::new("bob", "bob-secret").unwrap(),
    )));
    let mut p = Pair::new(ClientConfig::new(plain, "PLAIN").unwrap(), config);
    p.connect(wall());
    assert_eq!(p.stats.failed, None);
    // A listener whose keytab is missing is refused when it is finished, naming it.
    let missing = text.replace(&k.keytab("kafka/localhost"), "/nonexistent/kafka.keytab");
    let settings = ksasl::config::ServerSettings::from_text(&missing, "SASL_PLAINTEXT").unwrap();
    let mut setup = settings.build(None).unwrap();
    let e = ksasl::io::gss::finish_listener(&mut setup).unwrap_err();
    assert!(
        e.message().starts_with("listener SASL_PLAINTEXT: GSSAPI: ")
            && e.message().contains("/nonexistent/kafka.keytab"),
        "{e}"
    );
    assert!(setup.config.is_none());
}
