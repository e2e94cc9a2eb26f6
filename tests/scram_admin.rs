//! KIP-554 served by a CredentialStore: AlterUserScramCredentials and
//! DescribeUserScramCredentials frames in, Kafka's answers out, and the credentials they set
//! used by real SCRAM logins and re-authentications through the Kafka drivers.
//! (Byte-for-byte comparison with a Kafka 4.4 broker: tests/broker/test_scram_admin.py.)

mod kafka_pair;

use std::sync::Arc;

use kafka_pair::Pair;
use ksasl::config::{ClientSettings, ServerSettings};
use ksasl::credential::scram::ScramMechanism;
use ksasl::java_map::{java_string_hash, JavaOrder};
use ksasl::kafka::scram_credentials::{
    error_code, AlterScramRequest, AlterScramResponse, DescribeScramRequest, DescribeScramResponse,
    ScramDeletion, ScramUpsertion,
};
use ksasl::{CredentialStore, ErrorCode, OsRandom, SharedRandom};

const T0: i64 = 1_800_000_000_000;
const REAUTH_MS: i64 = 60_000;

fn broker() -> String {
    format!(
        "listeners=SASL_PLAINTEXT://127.0.0.1:9092\n\
         sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512\n\
         connections.max.reauth.ms={REAUTH_MS}\n\
         listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n\
         listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n"
    )
}

fn listener(store: &Arc<CredentialStore>) -> Arc<ksasl::kafka::config::ServerConfig> {
    let settings = ServerSettings::from_text(&broker(), "SASL_PLAINTEXT").unwrap();
    let lookup = store.clone() as Arc<dyn ksasl::CredentialLookup>;
    settings.build(Some(lookup)).unwrap().config.unwrap()
}

fn client(user: &str, password: &str, mechanism: &str) -> Arc<ksasl::kafka::client::ClientConfig> {
    let text = format!(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"{user}\" password=\"{password}\";\n"
    );
    ClientSettings::from_text(&text)
        .unwrap()
        .build(SharedRandom::default())
        .unwrap()
        .config
        .unwrap()
}

fn login(store: &Arc<CredentialStore>, user: &str, password: &str, mechanism: &str) -> Pair {
    let mut p = Pair::new(client(user, password, mechanism), listener(store));
    p.connect(T0);
    p
}

fn upsert(name: &str, m: ScramMechanism, iterations: u32, password: &str) -> ScramUpsertion {
    ScramUpsertion::from_password(name, m, iterations, password, &OsRandom).unwrap()
}

/// The request as a frame, through the store, and the answer parsed back.
fn alter(store: &CredentialStore, request: &AlterScramRequest) -> AlterScramResponse {
    let frame = request.encode_request(7, Some("admin")).unwrap();
    let answer = store.handle_scram_request(&frame[4..]).unwrap();
    let (corr, response) = AlterScramResponse::parse_response(&answer[4..]).unwrap();
    assert_eq!(corr, 7);
    response
}

fn describe(store: &CredentialStore, users: Option<&[&str]>) -> DescribeScramResponse {
    let request = DescribeScramRequest {
        users: users.map(|u| u.iter().map(|s| s.to_string()).collect()),
    };
    let frame = request.encode_request(9, None).unwrap();
    let answer = store.handle_scram_request(&frame[4..]).unwrap();
    let (corr, response) = DescribeScramResponse::parse_response(&answer[4..]).unwrap();
    assert_eq!(corr, 9);
    response
}

fn codes(r: &AlterScramResponse) -> Vec<(String, i16, Option<String>)> {
    r.results
        .iter()
        .map(|r| (r.user.clone(), r.error_code, r.error_message.clone()))
        .collect()
}

#[test]
fn an_upserted_credential_logs_in_and_is_described() {
    let store = Arc::new(CredentialStore::new());
    let r = alter(
        &store,
        &AlterScramRequest {
            deletions: vec![],
            upsertions: vec![upsert(
                "carol",
                ScramMechanism::Sha512,
                8192,
                "carol-secret",
            )],
        },
    );
    assert_eq!(codes(&r), vec![("carol".into(), 0, None)]);
    let p = login(&store, "carol", "carol-secret", "SCRAM-SHA-512");
    assert_eq!(p.stats.failed, None);
    assert_eq!(
        p.server.session().unwrap().outcome.principal.to_string(),
        "User:carol"
    );
    // Only the mechanism that was set: SCRAM-SHA-256 has no credential for carol.
    assert!(login(&store, "carol", "carol-secret", "SCRAM-SHA-256")
        .stats
        .failed
        .is_some());
    assert!(login(&store, "carol", "wrong", "SCRAM-SHA-512")
        .stats
        .failed
        .is_some());
    let d = describe(&store, Some(&["carol"]));
    assert_eq!(d.error_code, 0);
    assert_eq!(d.results.len(), 1);
    assert_eq!(d.results[0].error_code, 0);
    assert_eq!(
        d.results[0]
            .credential_infos
            .iter()
            .map(|c| (c.mechanism, c.iterations))
            .collect::<Vec<_>>(),
        vec![(2, 8192)]
    );
}

#[test]
fn a_rotated_password_is_what_the_next_reauthentication_must_present() {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "old-secret", 4096, &OsRandom)
        .unwrap();
    let mut old = login(&store, "alice", "old-secret", "SCRAM-SHA-256");
    assert_eq!(old.stats.failed, None);
    let r = alter(
        &store,
        &AlterScramRequest {
            deletions: vec![],
            upsertions: vec![upsert("alice", ScramMechanism::Sha256, 4096, "new-secret")],
        },
    );
    assert_eq!(codes(&r), vec![("alice".into(), 0, None)]);
    // Live sessions keep running until they end, as in Kafka.
    old.request(T0 + 1000);
    old.pump(T0 + 1000);
    assert_eq!(old.stats.received.len(), 1);
    // At the re-authentication the old password is refused and the connection closed.
    let later = T0 + REAUTH_MS;
    old.request(later);
    old.pump(later);
    assert!(old.stats.failed.is_some() || old.stats.reauth_failed > 0);
    assert!(old.closed, "{:?}", old.stats);
    assert!(old.stats.server_failed.is_some());
    // New logins: the old password is refused, the new one accepted.
    assert!(login(&store, "alice", "old-secret", "SCRAM-SHA-256")
        .stats
        .failed
        .is_some());
    let fresh = login(&store, "alice", "new-secret", "SCRAM-SHA-256");
    assert_eq!(fresh.stats.failed, None);
    // The other mechanism was not touched.
    assert_eq!(
        login(&store, "alice", "old-secret", "SCRAM-SHA-512")
            .stats
            .failed,
        None
    );
}

#[test]
fn deleting_the_last_credential_removes_the_user() {
    let store = Arc::new(CredentialStore::new());
    let r = alter(
        &store,
        &AlterScramRequest {
            deletions: vec![],
            upsertions: vec![upsert("dave", ScramMechanism::Sha256, 4096, "d")],
        },
    );
    assert_eq!(r.results[0].error_code, 0);
    let r = alter(
        &store,
        &AlterScramRequest {
            deletions: vec![ScramDeletion {
                name: "dave".into(),
                mechanism: 1,
            }],
            upsertions: vec![],
        },
    );
    assert_eq!(codes(&r), vec![("dave".into(), 0, None)]);
    assert!(login(&store, "dave", "d", "SCRAM-SHA-256")
        .stats
        .failed
        .is_some());
    let d = describe(&store, Some(&["dave"]));
    assert_eq!(
        (
            d.results[0].error_code,
            d.results[0].error_message.as_deref()
        ),
        (
            error_code::RESOURCE_NOT_FOUND,
            Some("Attempt to describe a user credential that does not exist: dave")
        )
    );
    // Deleting it again: Kafka's RESOURCE_NOT_FOUND.
    let r = alter(
        &store,
        &AlterScramRequest {
            deletions: vec![ScramDeletion {
                name: "dave".into(),
                mechanism: 1,
            }],
            upsertions: vec![],
        },
    );
    assert_eq!(
        codes(&r),
        vec![(
            "dave".into(),
            error_code::RESOURCE_NOT_FOUND,
            Some("Attempt to delete a user credential that does not exist".into())
        )]
    );
}

#[test]
fn kafkas_rules_refuse_what_kafka_refuses_and_apply_the_rest() {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("erin", "erin-secret", 4096, &OsRandom)
        .unwrap();
    let mut low = upsert("low", ScramMechanism::Sha256, 4096, "x");
    low.iterations = 4095;
    let mut high = upsert("high", ScramMechanism::Sha256, 4096, "x");
    high.iterations = 16385;
    let mut unknown = upsert("unknown", ScramMechanism::Sha256, 4096, "x");
    unknown.mechanism = 3;
    let mut empty = upsert("x", ScramMechanism::Sha256, 4096, "x");
    empty.name = String::new();
    let r = alter(
        &store,
        &AlterScramRequest {
            deletions: vec![
                ScramDeletion {
                    name: "erin".into(),
                    mechanism: 2,
                },
                ScramDeletion {
                    name: "twice".into(),
                    mechanism: 0,
                },
            ],
            upsertions: vec![
                upsert("erin", ScramMechanism::Sha256, 4096, "new"),
                upsert("frank", ScramMechanism::Sha256, 16384, "frank-secret"),
                low,
                high,
                unknown,
                empty,
                upsert("twice", ScramMechanism::Sha256, 4096, "x"),
            ],
        },
    );
    let mut got = codes(&r);
    got.sort();
    let dup = Some("A user credential cannot be altered twice in the same request".to_string());
    let mut want = vec![
        (
            "".to_string(),
            error_code::UNACCEPTABLE_CREDENTIAL,
            Some("Username must not be empty".into()),
        ),
        ("erin".into(), error_code::DUPLICATE_RESOURCE, dup),
        ("frank".into(), 0, None),
        (
            "high".into(),
            error_code::UNACCEPTABLE_CREDENTIAL,
            Some("Too many iterations".into()),
        ),
        (
            "low".into(),
            error_code::UNACCEPTABLE_CREDENTIAL,
            Some("Too few iterations".into()),
        ),
        // A deletion with an unknown mechanism is an error first; the upsertion of the same
        // user is then skipped (one result per user).
        (
            "twice".into(),
            error_code::UNSUPPORTED_SASL_MECHANISM,
            Some("Unknown SCRAM mechanism".into()),
        ),
        (
            "unknown".into(),
            error_code::UNSUPPORTED_SASL_MECHANISM,
            Some("Unknown SCRAM mechanism".into()),
        ),
    ];
    want.sort();
    assert_eq!(got, want);
    // Successes come first (deletions, then upsertions), errors after.
    assert_eq!(r.results[0].user, "frank");
    // erin's two changes were both dropped: her old SCRAM-SHA-512 credential remains.
    assert_eq!(
        login(&store, "erin", "erin-secret", "SCRAM-SHA-512")
            .stats
            .failed,
        None
    );
    assert_eq!(
        login(&store, "erin", "erin-secret", "SCRAM-SHA-256")
            .stats
            .failed,
        None
    );
    assert_eq!(
        login(&store, "frank", "frank-secret", "SCRAM-SHA-256")
            .stats
            .failed,
        None
    );
}

#[test]
fn describe_lists_every_user_or_the_named_ones_with_kafkas_errors() {
    let store = Arc::new(CredentialStore::new());
    store.add_user("alice", "a", 4096, &OsRandom).unwrap();
    store.set_password("plain-only", "p").unwrap();
    alter(
        &store,
        &AlterScramRequest {
            deletions: vec![],
            upsertions: vec![upsert("bob", ScramMechanism::Sha256, 10000, "b")],
        },
    );
    for users in [None, Some(&[][..])] {
        let d = describe(&store, users);
        let mut got: Vec<(String, Vec<(i8, i32)>)> = d
            .results
            .iter()
            .map(|r| {
                (
                    r.user.clone(),
                    r.credential_infos
                        .iter()
                        .map(|c| (c.mechanism, c.iterations))
                        .collect(),
                )
            })
            .collect();
        got.sort();
        // A user with only a PLAIN password has no SCRAM credential to describe.
        assert_eq!(
            got,
            vec![
                ("alice".into(), vec![(1, 4096), (2, 4096)]),
                ("bob".into(), vec![(1, 10000)]),
            ]
        );
    }
    let d = describe(&store, Some(&["bob", "nobody", "bob", "bob"]));
    let mut got: Vec<(String, i16, Option<String>)> = d
        .results
        .iter()
        .map(|r| (r.user.clone(), r.error_code, r.error_message.clone()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "bob".into(),
                error_code::DUPLICATE_RESOURCE,
                Some("Cannot describe SCRAM credentials for the same user twice in a single request: bob".into())
            ),
            (
                "nobody".into(),
                error_code::RESOURCE_NOT_FOUND,
                Some("Attempt to describe a user credential that does not exist: nobody".into())
            ),
        ]
    );
}

#[test]
fn results_come_in_the_order_of_javas_hash_map() {
    // String.hashCode values from Java.
    assert_eq!(java_string_hash(""), 0);
    assert_eq!(java_string_hash("hello"), 99162322);
    assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    // "Aa" and "BB" collide in Java: the bucket keeps insertion order.
    let mut m = JavaOrder::new();
    for k in ["BB", "Aa", "user1", "user10", "user2"] {
        m.put(k, ());
    }
    let order: Vec<String> = m.into_ordered().into_iter().map(|(k, _)| k).collect();
    // Buckets (16 slots) of these names: user1 and user10 and user2 hash to 3, 13 and 4;
    // BB and Aa to 0 (BB first, as inserted).
    let bucket = |s: &str| {
        let h = java_string_hash(s) as u32;
        (h ^ (h >> 16)) & 15
    };
    let mut want = vec!["BB", "Aa", "user1", "user10", "user2"];
    want.sort_by_key(|s| bucket(s));
    assert_eq!(order, want);
    // Past 12 entries the table doubles, and the order follows 32 buckets.
    let mut m = JavaOrder::new();
    let names: Vec<String> = (0..13).map(|i| format!("u{i}")).collect();
    for n in &names {
        m.put(n, ());
    }
    let order: Vec<String> = m.into_ordered().into_iter().map(|(k, _)| k).collect();
    let mut want = names.clone();
    want.sort_by_key(|s| {
        let h = java_string_hash(s) as u32;
        ((h ^ (h >> 16)) & 31, names.iter().position(|n| n == s))
    });
    assert_eq!(order, want);
}

#[test]
fn bad_frames_are_errors_not_panics() {
    let store = CredentialStore::new();
    let frame = AlterScramRequest {
        deletions: vec![],
        upsertions: vec![upsert("g", ScramMechanism::Sha256, 4096, "g")],
    }
    .encode_request(1, None)
    .unwrap();
    let body = &frame[4..];
    for cut in 0..body.len() {
        assert!(
            store.handle_scram_request(&body[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut v1 = body.to_vec();
    v1[3] = 1; // version 1 does not exist
    assert_eq!(
        store.handle_scram_request(&v1).unwrap_err().code(),
        ErrorCode::UnsupportedVersion
    );
    let mut other = body.to_vec();
    other[1] = 40;
    assert!(store.handle_scram_request(&other).is_err());
    let mut trailing = body.to_vec();
    trailing.push(0);
    assert!(store.handle_scram_request(&trailing).is_err());
    // Nothing was applied by any of them.
    assert!(describe(&store, None).results.is_empty());
}

#[test]
fn salted_passwords_and_salts_never_show() {
    let u = upsert("h", ScramMechanism::Sha256, 4096, "hunter2");
    let shown = format!("{u:?}");
    assert!(shown.contains("<redacted>"));
    let hex: String = u
        .salted_password
        .expose()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(!shown.contains(&hex[..8]));
    let r = ScramUpsertion::from_password("h", ScramMechanism::Sha256, 100, "hunter2", &OsRandom)
        .unwrap_err();
    assert!(r.to_string().contains("4096") && !r.to_string().contains("hunter2"));
}
