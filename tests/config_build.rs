//! Clients and listeners built from the configurations users already have
//! (`ClientSettings::build`, `ServerSettings::build`), authenticating each other in memory
//! through the Kafka drivers: the mechanism, the principal, the session lifetime and the
//! refresh schedule come from the properties.

mod kafka_pair;

use std::sync::Arc;

use kafka_pair::Pair;
use ksasl::config::{ClientLogin, ClientSettings, ServerSettings};
use ksasl::{CredentialStore, OsRandom, SharedRandom};

const T0: i64 = 1_800_000_000_000;

const BROKER: &str = "\
listeners=SASL_PLAINTEXT://127.0.0.1:9092
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,OAUTHBEARER
connections.max.reauth.ms=600000
listener.name.sasl_plaintext.plain.connections.max.reauth.ms=60000
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    user_alice=\"alice-secret\" user_bob=\"bob-secret\";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\
    unsecuredValidatorRequiredScope=\"kafka\";
";

fn listener(scram: Option<Arc<CredentialStore>>) -> Arc<ksasl::kafka::config::ServerConfig> {
    let settings = ServerSettings::from_text(BROKER, "SASL_PLAINTEXT").unwrap();
    let lookup = scram.map(|s| s as Arc<dyn ksasl::CredentialLookup>);
    settings.build(lookup).unwrap().config.unwrap()
}

fn client(text: &str) -> ksasl::config::ClientSetup {
    ClientSettings::from_text(text)
        .unwrap()
        .build(SharedRandom::default())
        .unwrap()
}

fn plain_client(user: &str, password: &str, mechanism: &str) -> String {
    let module = if mechanism == "PLAIN" {
        "plain.PlainLoginModule"
    } else {
        "scram.ScramLoginModule"
    };
    format!(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n\
         sasl.jaas.config=org.apache.kafka.common.security.{module} required \
         username=\"{user}\" password=\"{password}\";\n"
    )
}

#[test]
fn plain_users_come_from_the_listener_jaas_entry() {
    let mut p = Pair::new(
        client(&plain_client("alice", "alice-secret", "PLAIN"))
            .config
            .unwrap(),
        listener(None),
    );
    p.connect(T0);
    assert_eq!(p.stats.failed, None);
    let s = p.server.session().unwrap();
    assert_eq!(s.outcome.principal.to_string(), "User:alice");
    assert_eq!(
        s.expiry_ms,
        Some(T0 + 60_000),
        "the mechanism-prefixed session lifetime"
    );
    assert_eq!(p.client.session().unwrap().lifetime_ms, 60_000);
    let mut p = Pair::new(
        client(&plain_client("alice", "wrong", "PLAIN"))
            .config
            .unwrap(),
        listener(None),
    );
    p.connect(T0);
    assert!(p.stats.failed.is_some());
}

#[test]
fn scram_users_come_from_the_host_store_only() {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("carol", "carol-secret", 4096, &OsRandom)
        .unwrap();
    let mut p = Pair::new(
        client(&plain_client("carol", "carol-secret", "SCRAM-SHA-256"))
            .config
            .unwrap(),
        listener(Some(store.clone())),
    );
    p.connect(T0);
    assert_eq!(p.stats.failed, None);
    assert_eq!(
        p.server.session().unwrap().outcome.principal.to_string(),
        "User:carol"
    );
    assert_eq!(
        p.server.session().unwrap().expiry_ms,
        Some(T0 + 600_000),
        "the listener's lifetime"
    );
    // A JAAS PLAIN user has no SCRAM credential, as in Kafka.
    let mut p = Pair::new(
        client(&plain_client("alice", "alice-secret", "SCRAM-SHA-256"))
            .config
            .unwrap(),
        listener(Some(store)),
    );
    p.connect(T0);
    assert!(p.stats.failed.is_some());
    // No store: every SCRAM login is refused (fail closed).
    let mut p = Pair::new(
        client(&plain_client("carol", "carol-secret", "SCRAM-SHA-256"))
            .config
            .unwrap(),
        listener(None),
    );
    p.connect(T0);
    assert!(p.stats.failed.is_some());
}

#[test]
fn unsecured_tokens_refresh_and_reauthenticate() {
    let setup = client(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n\
         sasl.login.refresh.min.period.seconds=0\nsasl.login.refresh.buffer.seconds=0\n\
         sasl.login.refresh.window.jitter=0\n\
         sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \
         unsecuredLoginStringClaim_sub=\"dave\" unsecuredLoginListClaim_scope=\",kafka\" \
         unsecuredLoginLifetimeSeconds=\"120\";\n",
    );
    assert!(matches!(setup.login, ClientLogin::Ready));
    let refresher = setup.refresher.clone().unwrap();
    assert!(refresher.run_due(T0));
    // window.factor 0.8 without jitter: the next token is due at 96 s of the 120.
    assert_eq!(refresher.next_deadline(), Some(T0 + 96_000));
    let mut p = Pair::new(setup.config.unwrap(), listener(None));
    p.connect(T0);
    assert_eq!(p.stats.failed, None);
    let s = p.server.session().unwrap();
    assert_eq!(s.outcome.principal.to_string(), "User:dave");
    assert_eq!(
        s.expiry_ms,
        Some(T0 + 120_000),
        "the token's expiry bounds the session"
    );
    // The refresher makes the next token when it is due; the connection re-authenticates with it.
    let t1 = T0 + 96_000;
    assert!(refresher.run_due(t1));
    assert!(p.client.start_reauthentication(t1).unwrap());
    p.pump(t1);
    assert_eq!(p.stats.reauthenticated, 1, "{:?}", p.stats.failed);
    assert_eq!(p.server.session().unwrap().expiry_ms, Some(t1 + 120_000));
}

#[test]
fn the_hosts_apis_are_listed_beside_sasls() {
    use ksasl::kafka::codec::{decode_response, encode_request};
    use ksasl::kafka::messages::{ApiVersionsRequest, ApiVersionsResponse};
    let settings = ServerSettings::from_text(BROKER, "SASL_PLAINTEXT").unwrap();
    let setup = settings
        .build_with_apis(None, &[(3, 0, 12), (0, 3, 11)])
        .unwrap();
    let request = encode_request(&ApiVersionsRequest::default(), 0, 7, Some("c")).unwrap();
    let (answer, _) = setup
        .config
        .unwrap()
        .api_versions_response(&request[4..])
        .unwrap();
    let (_, r) = decode_response::<ApiVersionsResponse>(0, &answer[4..]).unwrap();
    assert_eq!(r.max_version(3), Some(12), "Metadata");
    assert_eq!(r.max_version(0), Some(11), "Produce");
    assert_eq!(r.max_version(17), Some(1), "SaslHandshake");
    assert!(
        settings.build_with_apis(None, &[(3, 5, 1)]).is_err(),
        "checked by the builder"
    );
}

#[test]
fn gssapi_listeners_wait_for_the_host() {
    let text = "sasl.enabled.mechanisms=GSSAPI\nsasl.kerberos.service.name=kafka\n\
        listener.name.l.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required \
        useKeyTab=true keyTab=\"/k/kafka.keytab\" principal=\"kafka/broker@EXAMPLE.COM\";\n";
    let setup = ServerSettings::from_text(text, "L")
        .unwrap()
        .build(None)
        .unwrap();
    assert!(setup.kerberos.is_some() && setup.config.is_none());
}

#[test]
fn delegation_tokens_from_the_listener_settings_log_in_with_tokenauth() {
    let text = format!(
        "{BROKER}delegation.token.secret.key=a-secret-shared-by-the-cluster\n\
         delegation.token.expiry.time.ms=120000\n"
    );
    let settings = ServerSettings::from_text(&text, "SASL_PLAINTEXT").unwrap();
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("carol", "carol-secret", 4096, &OsRandom)
        .unwrap();
    let setup = settings
        .build(Some(store as Arc<dyn ksasl::CredentialLookup>))
        .unwrap();
    let tokens = setup.tokens.clone().expect("a token authority");
    let config = setup.config.clone().unwrap();
    // The token APIs are listed in ApiVersions, as a Kafka 4 broker lists them.
    let apis = config.api_versions();
    for key in 38..=41 {
        assert!(apis.iter().any(|r| r.api_key == key), "api {key}: {apis:?}");
    }
    let carol = ksasl::mech::Principal::user("carol");
    let token = tokens.create(&carol, Some(&carol), &[], -1, T0).unwrap();
    let hmac = std::str::from_utf8(token.hmac_base64().expose())
        .unwrap()
        .to_string();
    let login = format!(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"{}\" password=\"{hmac}\" tokenauth=\"true\";\n",
        token.info.token_id
    );
    let mut p = Pair::new(client(&login).config.unwrap(), config.clone());
    p.connect(T0 + 1000);
    assert_eq!(p.stats.failed, None);
    let s = p.server.session().unwrap();
    assert_eq!(s.outcome.principal.to_string(), "User:carol");
    // The session ends with the token (expiry.time.ms 120000 after creation), not at the
    // listener's 600000.
    assert_eq!(s.expiry_ms, Some(T0 + 120_000));
    // A wrong HMAC is refused; without the secret key no authority exists.
    let bad = login.replace(&hmac, "bm90LXRoZS1obWFj");
    let mut p = Pair::new(client(&bad).config.unwrap(), config);
    p.connect(T0 + 1000);
    assert!(p.stats.failed.is_some());
    let plain = ServerSettings::from_text(BROKER, "SASL_PLAINTEXT").unwrap();
    assert!(plain.build(None).unwrap().tokens.is_none());
}
