//! Credential refresh and the tracker, on a virtual clock; the background driver on the real
//! clock; and a simulation of 10,000 connections for one hour.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ksasl::kafka::client::ClientSession;
use ksasl::refresh::*;
use ksasl::session::{session_lifetime, ReauthPolicy, ReauthTiming};
use ksasl::*;

const T: i64 = 1_795_000_000_000;

/// A random source that always yields the same bytes: uniform() returns `x`.
struct Fixed(f64);
impl RandomSource for Fixed {
    fn fill(&self, buf: &mut [u8]) -> Result<()> {
        let v = ((self.0 * (1u64 << 53) as f64) as u64) << 11;
        buf.copy_from_slice(&v.to_be_bytes()[..buf.len()]);
        Ok(())
    }
}

fn refresher(config: RefreshConfig, r: f64) -> Arc<Refresher> {
    Arc::new(Refresher::new(config, SharedRandom(Arc::new(Fixed(r)))))
}

fn token_for(now: i64, lifetime_ms: i64) -> (String, i64) {
    let t = UnsecuredTokenBuilder::for_principal("alice")
        .lifetime_seconds(lifetime_ms / 1000)
        .build(now)
        .unwrap();
    (t.value().to_string(), t.expiry_ms())
}

#[test]
fn one_hour_token_is_refreshed_at_48_to_51_minutes() {
    for (r, expected) in [(0.0, 2_880_000), (0.5, 2_970_000), (0.999_999, 3_059_999)] {
        let rf = refresher(RefreshConfig::default(), r);
        assert_eq!(rf.next_deadline(), Some(0), "nothing held: due at once");
        assert!(rf.poll(T));
        assert!(!rf.poll(T), "one outstanding request at a time");
        assert_eq!(rf.next_deadline(), None);
        let (tok, exp) = token_for(T, 3_600_000);
        assert_eq!(
            rf.set_token(&tok, exp, "alice", &[("logicalCluster", "lkc-1")], T)
                .unwrap(),
            1
        );
        let due = rf.next_deadline().unwrap();
        assert!((due - T - expected).abs() <= 1, "{} vs {expected}", due - T);
        assert!(!rf.poll(due - 1));
        assert!(rf.poll(due));
        let (t, e, g) = rf.current_token(due).unwrap();
        assert_eq!((t.value(), g), (tok.as_str(), 1));
        assert_eq!(
            e.map().get("logicalCluster").map(String::as_str),
            Some("lkc-1")
        );
    }
}

#[test]
fn failures_keep_the_old_token_and_retry_until_it_expires() {
    let rf = refresher(RefreshConfig::default(), 0.0);
    rf.poll(T);
    let (tok, exp) = token_for(T, 3_600_000);
    rf.set_token(&tok, exp, "alice", &[], T).unwrap();
    let mut now = rf.next_deadline().unwrap();
    let mut attempts = 0;
    // The token endpoint is down for two hours.
    while now < T + 7_200_000 {
        if rf.poll(now) {
            rf.set_token_failure("token endpoint unreachable", now)
                .unwrap();
            attempts += 1;
            assert_eq!(
                rf.next_deadline(),
                Some(now + 10_000),
                "Kafka retries 10 s after a failure"
            );
        }
        match rf.current(now) {
            Ok(c) => assert!(
                now < exp && c.generation == 1,
                "the old token is offered while valid"
            ),
            Err(e) => {
                assert!(now >= exp);
                assert_eq!(e.code(), ErrorCode::NoValidCredential);
            }
        }
        now += 5_000;
    }
    assert_eq!(
        attempts,
        (7_200_000 - 2_880_000) / 10_000,
        "a retry every 10 s for the whole outage"
    );
    assert_eq!(
        rf.failures().1.as_deref(),
        Some("token endpoint unreachable")
    );
    // A client built on the refresher refuses to present the expired token.
    let mut c = ClientExchange::new(Box::new(OAuthBearerClient::from_source(rf.clone())));
    assert_eq!(
        c.start(now).unwrap_err().code(),
        ErrorCode::NoValidCredential
    );
    // Recovery.
    let (tok2, exp2) = token_for(now, 3_600_000);
    assert!(rf.poll(now + 10_000));
    assert_eq!(
        rf.set_token(&tok2, exp2, "alice", &[], now + 10_000)
            .unwrap(),
        2
    );
    assert_eq!(rf.failures().0, 0);
    let mut c = ClientExchange::new(Box::new(OAuthBearerClient::from_source(rf)));
    assert!(
        matches!(c.start(now + 10_000).unwrap(), ClientStep::Send(m) if m.windows(tok2.len()).any(|w| w == tok2.as_bytes()))
    );
}

fn session(lifetime: i64, reauth_at: i64) -> ClientSession {
    ClientSession {
        lifetime_ms: lifetime,
        reauth_at_ms: Some(reauth_at),
        expiry_ms: Some(reauth_at + lifetime / 10),
        latency_ms: 0,
    }
}

#[test]
fn short_server_sessions_pull_the_refresh_forward() {
    // Refresh point at 95 % of a 60 s token (57 s); the broker caps sessions at 30 s.
    let cfg = RefreshConfig::builder()
        .window_factor(0.95)
        .window_jitter(0.0)
        .build()
        .unwrap();
    let rf = refresher(cfg, 0.0);
    rf.poll(T);
    let (tok, exp) = token_for(T, 60_000);
    rf.set_token(&tok, exp, "alice", &[], T).unwrap();
    assert_eq!(rf.next_deadline(), Some(T + 57_000));
    let tracker = Tracker::new(rf.clone(), TrackerConfig::default()).unwrap();
    // First session: re-authentication at 27 s, the token still has 33 s: nothing to do.
    tracker
        .authenticated(1, 1, &session(30_000, T + 27_000))
        .unwrap();
    assert_eq!(tracker.next_deadline(), Some(T + 57_000));
    // Second session: re-authentication at 54 s, when only 6 s of the token are left.
    tracker
        .authenticated(1, 1, &session(30_000, T + 54_000))
        .unwrap();
    assert_eq!(
        tracker.next_deadline(),
        Some(T + 53_000),
        "refresh pulled forward to one lead before 54 s"
    );
    assert!(!tracker.poll(T + 52_999).refresh);
    assert!(tracker.poll(T + 53_000).refresh);
    // A connection that closes no longer pulls anything.
    let rf2 = refresher(cfg, 0.0);
    rf2.poll(T);
    rf2.set_token(&tok, exp, "alice", &[], T).unwrap();
    let t2 = Tracker::new(rf2, TrackerConfig::default()).unwrap();
    t2.authenticated(9, 1, &session(30_000, T + 54_000))
        .unwrap();
    t2.forget(9);
    assert_eq!(t2.next_deadline(), Some(T + 57_000));
    assert!(t2.is_empty());
}

#[test]
fn a_refresh_marks_exactly_the_connections_on_the_old_credential() {
    let rf = refresher(RefreshConfig::default(), 0.0);
    rf.poll(T);
    let (tok, exp) = token_for(T, 3_600_000);
    rf.set_token(&tok, exp, "alice", &[], T).unwrap();
    let tracker = Tracker::new(
        rf.clone(),
        TrackerConfig {
            spread_window_ms: 10_000,
            early_refresh_lead_ms: 1_000,
        },
    )
    .unwrap();
    for c in [30, 10, 20, 40] {
        tracker
            .authenticated(c, 1, &session(600_000, T + 540_000))
            .unwrap();
    }
    tracker.forget(40);
    let now = rf.next_deadline().unwrap();
    assert!(tracker.poll(now).refresh);
    let (tok2, exp2) = token_for(now, 3_600_000);
    rf.set_token(&tok2, exp2, "alice", &[], now).unwrap();
    // Connection 50 authenticates with the new token before the tracker looks.
    tracker
        .authenticated(50, 2, &session(600_000, now + 540_000))
        .unwrap();
    assert_eq!(
        tracker.next_deadline(),
        Some(0),
        "a new credential: fan out at once"
    );
    let p = tracker.poll(now);
    assert_eq!(
        p,
        TrackerPoll {
            refresh: false,
            reauthenticate: vec![10]
        }
    );
    // The other two follow, spread over the window; 20 re-authenticates on its own first.
    assert_eq!(tracker.next_deadline(), Some(now + 3_333));
    tracker
        .authenticated(20, 2, &session(600_000, now + 540_000))
        .unwrap();
    assert_eq!(tracker.poll(now + 3_333).reauthenticate, Vec::<u64>::new());
    assert_eq!(tracker.poll(now + 6_666).reauthenticate, vec![30]);
    assert_eq!(
        tracker.poll(now + 100_000).reauthenticate,
        Vec::<u64>::new()
    );
}

#[test]
fn bad_answers_get_clear_errors() {
    let rf = refresher(RefreshConfig::default(), 0.0);
    let (tok, _) = token_for(T, 3_600_000);
    for (exp, needle) in [
        (T - 1, "in the past"),
        (0, "positive"),
        (-1, "positive"),
        (T / 1000 + 3600, "seconds"),
        (3_600_000, "relative"),
        (T * 1000, "microseconds"),
    ] {
        let e = rf.set_token(&tok, exp, "alice", &[], T).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidCredentialExpiry);
        assert!(e.message().contains(needle), "{}", e.message());
    }
    let exp = T + 3_600_000;
    for ext in [
        &[("auth", "x")][..],
        &[("1x", "v")],
        &[("", "v")],
        &[("ok", "")],
        &[("ok", "a\u{1}b")],
        &[("dup", "1"), ("dup", "2")],
    ] {
        let e = rf.set_token(&tok, exp, "alice", ext, T).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidExtension, "{ext:?}");
    }
    assert_eq!(
        rf.set_token("not a token", exp, "alice", &[], T)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        rf.set_token(&tok, exp, "", &[], T).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(rf.generation(), 0, "nothing was installed");
    // Answers after the refresher is gone.
    let handle = rf.handle();
    drop(rf);
    assert_eq!(
        handle
            .set_token(&tok, exp, "alice", &[], T)
            .unwrap_err()
            .code(),
        ErrorCode::RefresherGone
    );
    assert_eq!(
        handle.set_token_failure("late", T).unwrap_err().code(),
        ErrorCode::RefresherGone
    );
    // Configuration ranges.
    assert_eq!(
        RefreshConfig::builder()
            .window_jitter(-0.1)
            .build()
            .unwrap_err()
            .code(),
        ErrorCode::InvalidConfig
    );
}

#[test]
fn callback_form_and_pull_form() {
    let rf = refresher(RefreshConfig::default(), 0.0);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    rf.set_refresh_callback(move |r, now| {
        c.fetch_add(1, Ordering::SeqCst);
        let (tok, exp) = token_for(now, 3_600_000);
        r.set_token(&tok, exp, "alice", &[], now).unwrap();
    });
    assert!(rf.run_due(T));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(!rf.run_due(T + 1));
    let due = rf.next_deadline().unwrap();
    assert!(rf.run_due(due));
    assert_eq!((calls.load(Ordering::SeqCst), rf.generation()), (2, 2));
    // A callback that defers its answer: the request stays outstanding until the handle answers.
    let rf = refresher(RefreshConfig::default(), 0.0);
    let pending = Arc::new(std::sync::Mutex::new(None));
    let p = pending.clone();
    let h = rf.handle();
    rf.set_refresh_callback(move |_, now| *p.lock().unwrap() = Some((h.clone(), now)));
    assert!(rf.run_due(T));
    assert_eq!(rf.next_deadline(), None);
    let (h, now) = pending.lock().unwrap().take().unwrap();
    let (tok, exp) = token_for(now, 3_600_000);
    h.set_token(&tok, exp, "alice", &[], now + 5).unwrap();
    assert_eq!(rf.generation(), 1);
}

/// Threads of this process named like the driver's.
fn driver_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|t| t.ok())
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "ksasl-refresh")
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn background_driver_on_the_real_clock() {
    assert_eq!(driver_threads(), 0);
    let rf = Arc::new(Refresher::new(
        RefreshConfig::default(),
        SharedRandom::default(),
    ));
    let (tx, rx) = std::sync::mpsc::channel();
    rf.set_refresh_callback(move |r, now| {
        // Two-second tokens: the next refresh is due 1.6-1.7 s later.
        let (tok, exp) = token_for(now, 2_000);
        r.set_token(&tok, exp, "alice", &[], now).unwrap();
        let _ = tx.send(now);
    });
    let driver = ksasl::background::BackgroundRefresher::start(rf.clone()).unwrap();
    let first = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("initial fetch");
    assert_eq!(driver_threads(), 1);
    let second = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("one refresh");
    // Not before the refresh point (1.6-1.7 s after the first fetch); a busy machine may run
    // it later, which is fine. The schedule itself is checked on the virtual clock.
    let gap = second - first;
    assert!(gap >= 1_500, "refreshed after {gap} ms");
    driver.stop();
    assert_eq!(rf.generation(), 2);
    assert_eq!(driver_threads(), 0, "the driver's thread has ended");
}

/// Events of the simulation: a connection's own re-authentication time, with a version so that
/// superseded times are ignored.
type Event = Reverse<(i64, u64, u64)>;

#[test]
fn ten_thousand_connections_for_one_hour() {
    const N: u64 = 10_000;
    const CAP: i64 = 30_000; // connections.max.reauth.ms on the broker
    const TOKEN: i64 = 60_000;
    let rf = refresher(RefreshConfig::default(), 0.5);
    let tracker = Tracker::new(
        rf.clone(),
        TrackerConfig {
            spread_window_ms: 5_000,
            early_refresh_lead_ms: 1_000,
        },
    )
    .unwrap();
    let policy = ReauthPolicy {
        timing: ReauthTiming::Librdkafka,
        min_delay_ms: 1000,
    };
    let rng = Fixed(0.5);

    struct Conn {
        version: u64,
        session_expiry: i64,
        reauths: u64,
        auth_times: Vec<i64>,
    }
    let mut conns: HashMap<u64, Conn> = HashMap::new();
    let mut heap: BinaryHeap<Event> = BinaryHeap::new();
    let mut total_reauths = 0u64;

    let authenticate = |id: u64,
                        now: i64,
                        conns: &mut HashMap<u64, Conn>,
                        heap: &mut BinaryHeap<Event>,
                        first: bool| {
        let (token, _, generation) = rf
            .current_token(now)
            .expect("a valid credential is always available");
        assert!(
            token.expiry_ms() > now,
            "never present an expired credential"
        );
        let c = conns.entry(id).or_insert(Conn {
            version: 0,
            session_expiry: i64::MAX,
            reauths: 0,
            auth_times: vec![],
        });
        assert!(
            first || now <= c.session_expiry,
            "connection {id} re-authenticated after its session expired"
        );
        let life = session_lifetime(Some(token.expiry_ms()), CAP, now);
        let delay = policy.delay_ms(life.lifetime_ms, 0, &rng).unwrap().unwrap();
        let s = ClientSession {
            lifetime_ms: life.lifetime_ms,
            reauth_at_ms: Some(now + delay),
            expiry_ms: life.expiry_ms,
            latency_ms: 0,
        };
        c.session_expiry = life.expiry_ms.unwrap();
        c.version += 1;
        c.auth_times.push(now);
        if !first {
            c.reauths += 1;
        }
        heap.push(Reverse((now + delay, id, c.version)));
        tracker.authenticated(id, generation, &s).unwrap();
    };

    // The identity provider answers at once with a fresh 60-second token.
    let mut now = T;
    assert!(tracker.poll(now).refresh);
    let (tok, exp) = token_for(now, TOKEN);
    rf.set_token(&tok, exp, "alice", &[], now).unwrap();
    tracker.poll(now);
    for id in 0..N {
        authenticate(id, now, &mut conns, &mut heap, true);
    }
    let end = T + 3_600_000;
    loop {
        let next_conn = heap.peek().map(|Reverse((t, _, _))| *t).unwrap_or(i64::MAX);
        let next_tracker = tracker.next_deadline().unwrap_or(i64::MAX);
        now = next_conn.min(next_tracker).max(now);
        if now > end {
            break;
        }
        if next_tracker <= now {
            let p = tracker.poll(now);
            if p.refresh {
                let (tok, exp) = token_for(now, TOKEN);
                rf.set_token(&tok, exp, "alice", &[], now).unwrap();
            }
            for id in p.reauthenticate {
                authenticate(id, now, &mut conns, &mut heap, false);
                total_reauths += 1;
            }
            continue;
        }
        let Reverse((_, id, version)) = heap.pop().unwrap();
        if conns[&id].version == version {
            authenticate(id, now, &mut conns, &mut heap, false);
            total_reauths += 1;
        }
    }

    // The schedule's prediction, computed per connection from the refresh instants alone:
    // a connection re-authenticates at 90 % of each session, or when the tracker's wave
    // reaches it after a refresh if it still holds an older token.
    let refreshes = rf.refresh_times();
    assert!(
        refreshes.len() > 60,
        "one refresh about every 48 s: {}",
        refreshes.len()
    );
    let mut predicted = 0u64;
    for id in 0..N {
        let mut t = T;
        let mut token_gen = 1usize; // index into refreshes of the token in use
        loop {
            let token_exp = refreshes[token_gen - 1] + TOKEN;
            let life = (token_exp - t).min(CAP);
            let kip = t + policy.delay_ms(life, 0, &rng).unwrap().unwrap();
            // Waves: refreshes after t, for connections on an older token, at their slot.
            let wave = refreshes
                .iter()
                .enumerate()
                .skip(token_gen)
                .map(|(k, r)| (k, r + 5_000 * id as i64 / N as i64))
                .find(|_| true);
            let (next, gen_at_next) = match wave {
                Some((k, w)) if w < kip => (w, k + 1),
                _ => {
                    let g = refreshes.iter().filter(|r| **r <= kip).count();
                    (kip, g)
                }
            };
            if next > end {
                break;
            }
            predicted += 1;
            t = next;
            token_gen = gen_at_next;
        }
        assert_eq!(conns[&id].reauths as usize, conns[&id].auth_times.len() - 1);
    }
    assert_eq!(
        total_reauths, predicted,
        "re-authentications match the schedule"
    );
    assert!(total_reauths > N * 100, "{total_reauths}");
}

#[test]
fn rotated_passwords_are_used_by_the_next_authentication() {
    let rf = refresher(RefreshConfig::default(), 0.0);
    let store = Arc::new(CredentialStore::new());
    store.add_user("alice", "first", 4096, &OsRandom).unwrap();
    let servers = MechanismRegistry::password_servers(Some(store.clone()));
    let mut clients = MechanismRegistry::new();
    clients.register_refreshing_password_clients(rf.clone());
    // No credential yet: creating a client fails clearly.
    assert_eq!(
        clients.client("SCRAM-SHA-256").unwrap_err().code(),
        ErrorCode::NoValidCredential
    );
    let lifetime = ExpiringCredential {
        start_ms: Some(T),
        expiry_ms: T + 86_400_000,
        absolute_last_refresh_ms: None,
    };
    let pw =
        |p: &str| CredentialValue::Password(Arc::new(PasswordCredential::new("alice", p).unwrap()));
    rf.poll(T);
    rf.set_credential("alice", lifetime, pw("first"), T)
        .unwrap();
    let run = |mech: &str| -> Result<AuthOutcome> {
        let mut c = clients.client(mech)?;
        let mut s = servers.server(mech)?;
        let mut msg = match c.start(T)? {
            ClientStep::Send(m) | ClientStep::Done(Some(m)) => m,
            ClientStep::Done(None) => vec![],
            ClientStep::Pending(_) => unreachable!(),
        };
        loop {
            match s.step(&msg, T)? {
                ServerStep::Challenge(ch) => match c.step(&ch, T)? {
                    ClientStep::Send(m) | ClientStep::Done(Some(m)) => msg = m,
                    ClientStep::Done(None) | ClientStep::Pending(_) => unreachable!(),
                },
                ServerStep::Done { outcome, .. } => return Ok(outcome),
                ServerStep::NeedCredential(_) | ServerStep::Pending(_) => unreachable!(),
            }
        }
    };
    for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        assert_eq!(run(mech).unwrap().principal.name, "alice");
    }
    // The password is rotated on both sides; the next authentications use the new one.
    store.add_user("alice", "second", 4096, &OsRandom).unwrap();
    rf.set_credential("alice", lifetime, pw("second"), T + 1)
        .unwrap();
    for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        assert!(run(mech).is_ok(), "{mech}");
    }
    let (_, g) = rf.current_password().unwrap();
    assert_eq!(g, 2);
    // A credential starting after it expires is refused.
    let backwards = ExpiringCredential {
        start_ms: Some(T + 10),
        expiry_ms: T + 5,
        absolute_last_refresh_ms: None,
    };
    assert!(rf.set_credential("alice", backwards, pw("x"), T).is_err());
}

#[test]
fn extreme_times_and_windows_saturate_instead_of_panicking() {
    // Found by the C test suite: these used to overflow, and the caught panic poisoned the
    // refresher or tracker lock for good.
    let rf = refresher(RefreshConfig::default(), 0.5);
    assert!(rf.poll(i64::MAX - 1));
    assert!(matches!(
        ksasl::refresh::next_refresh(
            Some(&ExpiringCredential {
                start_ms: None,
                expiry_ms: i64::MAX,
                absolute_last_refresh_ms: None
            }),
            i64::MAX - 1,
            &RefreshConfig::default(),
            0.5
        ),
        RefreshAt::At(_)
    ));
    let (tok, _) = token_for(T, 3_600_000);
    rf.set_token(&tok, i64::MAX, "alice", &[], i64::MAX - 1)
        .unwrap();
    assert!(rf.next_deadline().is_some(), "the refresher still works");
    let tracker = Tracker::new(
        rf.clone(),
        TrackerConfig {
            spread_window_ms: i64::MAX / 2,
            early_refresh_lead_ms: 0,
        },
    )
    .unwrap();
    tracker
        .authenticated(9, rf.generation(), &session(600_000, i64::MAX - 100_000))
        .unwrap();
    assert!(
        tracker.poll(i64::MAX).reauthenticate.is_empty(),
        "a connection on the current credential is left alone, even at the end of time"
    );
    let rf2 = refresher(RefreshConfig::default(), 0.5);
    rf2.poll(T);
    let (tok, exp) = token_for(T, 3_600_000);
    rf2.set_token(&tok, exp, "alice", &[], T).unwrap();
    let tracker2 = Tracker::new(
        rf2.clone(),
        TrackerConfig {
            spread_window_ms: i64::MAX / 2,
            early_refresh_lead_ms: 0,
        },
    )
    .unwrap();
    for id in 0..4 {
        tracker2
            .authenticated(id, 1, &session(600_000, T + 540_000))
            .unwrap();
    }
    rf2.poll(exp - 1);
    let (tok2, exp2) = token_for(exp - 1, 3_600_000);
    rf2.set_token(&tok2, exp2, "alice", &[], exp - 1).unwrap();
    assert_eq!(
        tracker2.poll(exp - 1).reauthenticate,
        vec![0],
        "the first is due at once, the others spread far away"
    );
    assert!(tracker2.poll(exp).reauthenticate.is_empty());
}

#[test]
fn background_sleep_rule_on_a_virtual_clock() {
    use ksasl::background::{sleep_ms, MAX_SLEEP_MS};
    assert_eq!(
        sleep_ms(None, T),
        MAX_SLEEP_MS,
        "nothing due: look again soon"
    );
    assert_eq!(sleep_ms(Some(T + 250), T), 250);
    assert_eq!(sleep_ms(Some(T + 60_000), T), MAX_SLEEP_MS);
    assert_eq!(sleep_ms(Some(T - 5), T), 0, "overdue: at once");
    assert_eq!(sleep_ms(Some(i64::MIN), T), 0);
    assert_eq!(sleep_ms(Some(i64::MAX), i64::MIN), MAX_SLEEP_MS);
    // A refresher's first deadline is "now" (nothing held yet), then Kafka's window.
    let rf = refresher(RefreshConfig::default(), 0.5);
    assert_eq!(sleep_ms(rf.next_deadline(), T), 0);
    assert!(rf.poll(T));
    assert_eq!(sleep_ms(rf.next_deadline(), T), MAX_SLEEP_MS, "outstanding");
    let (tok, exp) = token_for(T, 2_000);
    rf.set_token(&tok, exp, "alice", &[], T).unwrap();
    let due = rf.next_deadline().unwrap();
    assert!((T + 1_600..T + 1_700).contains(&due), "{}", due - T);
    assert_eq!(sleep_ms(Some(due), due - 300), 300);
}
