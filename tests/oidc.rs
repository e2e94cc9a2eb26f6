//! Token logins and JWKS fetches against a real OpenID Connect provider: Keycloak, started
//! once for this test binary by `tests/oidc/keycloak.py` on 127.0.0.1 over HTTPS with a CA
//! made for the run (or the one named by `KSASL_OIDC_INFO`, when a suite shares one).
#![cfg(feature = "http")]

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard};
use std::time::Instant;

use ksasl::background::wall_clock_ms;
use ksasl::io::http::{HttpClient, HttpConfig, JwksFetcher, OidcLogin, OidcSettings};
use ksasl::mech::oauthbearer::{JwksValidator, JwtValidatorConfig, TokenValidator};
use ksasl::oidc::{
    AssertionConfig, ClientAuth, Grant, RetryPlan, TokenRequestConfig, TokenRequester,
};
use ksasl::{ErrorCode, SharedRandom};

struct Provider {
    info: serde_json::Value,
    _stdin: Option<Mutex<ChildStdin>>,
    _child: Option<Mutex<Child>>,
}

impl Provider {
    fn s(&self, path: &[&str]) -> String {
        let mut v = &self.info;
        for p in path {
            v = &v[*p];
        }
        v.as_str()
            .unwrap_or_else(|| panic!("{path:?} in {}", self.info))
            .to_string()
    }
    fn ca(&self) -> Vec<u8> {
        std::fs::read(self.s(&["ca_pem"])).unwrap()
    }
    fn http(&self) -> HttpClient {
        HttpClient::new(&HttpConfig {
            ca_pem: Some(self.ca()),
            ..Default::default()
        })
        .unwrap()
    }
}

fn provider() -> &'static Provider {
    static P: OnceLock<Provider> = OnceLock::new();
    P.get_or_init(|| {
        if let Ok(path) = std::env::var("KSASL_OIDC_INFO") {
            let info = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            return Provider {
                info,
                _stdin: None,
                _child: None,
            };
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc/keycloak.py");
        let mut child = Command::new("python3")
            .args([script, "--exit-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs tests/oidc/keycloak.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let info = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("Keycloak did not start ({e}): {line}"));
        Provider {
            info,
            _stdin: Some(Mutex::new(child.stdin.take().unwrap())),
            _child: Some(Mutex::new(child)),
        }
    })
}

/// The key rotation test changes the realm's keys: it runs alone (write), the others share.
static KEYS: RwLock<()> = RwLock::new(());

fn keys_stay() -> RwLockReadGuard<'static, ()> {
    KEYS.read().unwrap_or_else(|e| e.into_inner())
}

fn login(config: TokenRequestConfig, http: HttpClient, retry: RetryPlan) -> OidcLogin {
    OidcLogin::new(
        TokenRequester::new(config).unwrap(),
        http,
        retry,
        SharedRandom::default(),
    )
}

fn secret_config(p: &Provider, secret: &str) -> TokenRequestConfig {
    TokenRequestConfig::client_secret(
        &p.s(&["token_endpoint"]),
        &p.s(&["secret_client", "id"]),
        secret,
    )
}

fn validator(p: &Provider) -> Arc<JwksValidator> {
    Arc::new(
        JwksValidator::new(JwtValidatorConfig {
            expected_issuer: Some(p.s(&["issuer"])),
            expected_audiences: vec![p.s(&["audience"])],
            ..Default::default()
        })
        .unwrap(),
    )
}

/// A token from the provider validates against the provider's JWKS fetched over HTTPS.
fn assert_validates(p: &Provider, token: &ksasl::OAuthBearerToken) {
    let v = validator(p);
    let fetcher = JwksFetcher::new(&p.s(&["jwks_uri"]), p.http(), v.clone()).unwrap();
    let now = wall_clock_ms();
    assert!(fetcher.fetch(now).unwrap() >= 1);
    let ok = v
        .validate(token.value(), now)
        .unwrap_or_else(|r| panic!("{}", r.json()));
    assert_eq!(ok.principal, token.principal());
    assert_eq!(ok.expiry_ms, token.expiry_ms());
}

#[test]
fn client_secret_basic_token_validates_against_the_jwks() {
    let _keys = keys_stay();
    let p = provider();
    let secret = p.s(&["secret_client", "secret"]);
    let t = secret_login(p, &secret).fetch(wall_clock_ms()).unwrap();
    let lifespan = p.info["token_lifespan_s"].as_i64().unwrap() * 1000;
    let now = wall_clock_ms();
    assert!((t.expiry_ms() - now - lifespan).abs() < 5_000, "{t:?}");
    assert_eq!(t.expiry_ms() - t.start_ms().unwrap(), lifespan);
    assert_validates(p, &t);
}

#[test]
fn client_secret_post_and_scope() {
    let _keys = keys_stay();
    let p = provider();
    let mut c = secret_config(p, "unused");
    c.client_auth = ClientAuth::SecretPost {
        client_id: p.s(&["secret_client", "id"]),
        client_secret: p.s(&["secret_client", "secret"]).into(),
    };
    c.scope = Some("profile".into());
    let t = login(c, p.http(), RetryPlan::default())
        .fetch(wall_clock_ms())
        .unwrap();
    assert!(
        t.scope()[0].split(' ').any(|s| s == "profile"),
        "{:?}",
        t.scope()
    );
    assert_validates(p, &t);
}

fn jwt_client(p: &Provider, include_jti: bool) -> TokenRequestConfig {
    let mut assertion =
        AssertionConfig::new(std::fs::read(p.s(&["jwt_client", "key_pem"])).unwrap());
    assertion.audience = Some(p.s(&["issuer"]));
    assertion.include_jti = include_jti;
    let mut c = secret_config(p, "unused");
    c.client_auth = ClientAuth::PrivateKeyJwt {
        client_id: p.s(&["jwt_client", "id"]),
        assertion,
    };
    c
}

#[test]
fn signed_client_assertion_private_key_jwt() {
    let _keys = keys_stay();
    let p = provider();
    let l = login(jwt_client(p, true), p.http(), RetryPlan::default());
    let t = l.fetch(wall_clock_ms()).unwrap();
    assert_validates(p, &t);
    // A second login signs a new assertion (Keycloak refuses a replayed jti).
    assert!(l.fetch(wall_clock_ms()).is_ok());
    // Kafka's default leaves jti out; Keycloak says why it refuses, and it is not retried.
    let e = login(jwt_client(p, false), p.http(), RetryPlan::default())
        .fetch(wall_clock_ms())
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::OidcRequestRefused, "{e:?}");
    assert!(e.detail("error").is_some(), "{e:?}");
}

/// The JWT-bearer grant's settings as Kafka names them (KIP-1139), for the realm's assertion
/// issuer (`jwt_grant` in the provider's info), without client authentication.
fn jwt_grant_settings(p: &Provider) -> Vec<(&'static str, String)> {
    vec![
        (
            "sasl.oauthbearer.token.endpoint.url",
            p.s(&["token_endpoint"]),
        ),
        (
            "ksasl.oauthbearer.grant.type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".into(),
        ),
        (
            "sasl.oauthbearer.assertion.private.key.file",
            p.s(&["jwt_grant", "key_pem"]),
        ),
        (
            "sasl.oauthbearer.assertion.claim.iss",
            p.s(&["jwt_grant", "issuer"]),
        ),
        (
            "sasl.oauthbearer.assertion.claim.sub",
            p.s(&["jwt_grant", "subject"]),
        ),
        (
            "sasl.oauthbearer.assertion.claim.aud",
            p.s(&["jwt_grant", "audience"]),
        ),
        // Keycloak requires a jti (and refuses one it has seen).
        (
            "sasl.oauthbearer.assertion.claim.jti.include",
            "true".into(),
        ),
        ("ssl.truststore.location", p.s(&["ca_pem"])),
    ]
}

fn settings_login(pairs: &[(&str, String)]) -> OidcLogin {
    OidcSettings::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
        .unwrap()
        .login(SharedRandom::default())
        .unwrap()
}

/// The claims of a token (its payload, not verified).
fn claims_of(token: &ksasl::OAuthBearerToken) -> serde_json::Value {
    use base64::Engine;
    let payload = token.value().split('.').nth(1).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap()
}

/// KIP-1139's JWT-bearer grant (RFC 7523 §2.1) with client authentication: Keycloak checks the
/// assertion against the identity provider that trusts its issuer and issues a token for the
/// user linked to its subject, which validates against the realm's JWKS. Each login signs a
/// new assertion (Keycloak refuses a replayed jti).
#[test]
fn jwt_bearer_grant_with_client_authentication_validates_against_the_jwks() {
    let _keys = keys_stay();
    let p = provider();
    let user = p.s(&["jwt_grant", "username"]);
    // client_secret_basic (the default with a secret), configured with Kafka's names.
    let mut pairs = jwt_grant_settings(p);
    pairs.push(("clientId", p.s(&["secret_client", "id"])));
    pairs.push(("clientSecret", p.s(&["secret_client", "secret"])));
    let l = settings_login(&pairs);
    let c = l.requester().config();
    assert!(matches!(c.grant, Grant::JwtBearer(_)), "{c:?}");
    assert!(
        matches!(c.client_auth, ClientAuth::SecretBasic { .. }),
        "{c:?}"
    );
    let t = l.fetch(wall_clock_ms()).unwrap();
    assert_validates(p, &t);
    let claims = claims_of(&t);
    assert_eq!(claims["preferred_username"], user.as_str(), "{claims}");
    assert_eq!(claims["azp"], p.s(&["secret_client", "id"]).as_str());
    let lifespan = p.info["token_lifespan_s"].as_i64().unwrap() * 1000;
    assert_eq!(t.expiry_ms() - t.start_ms().unwrap(), lifespan);
    let again = l.fetch(wall_clock_ms()).unwrap();
    assert_eq!(again.principal(), t.principal());

    // private_key_jwt: a client assertion (client.key) beside the grant's (grant.key).
    let mut grant = AssertionConfig::new(std::fs::read(p.s(&["jwt_grant", "key_pem"])).unwrap());
    grant.issuer = Some(p.s(&["jwt_grant", "issuer"]));
    grant.subject = Some(p.s(&["jwt_grant", "subject"]));
    grant.audience = Some(p.s(&["jwt_grant", "audience"]));
    grant.include_jti = true;
    let mut c = jwt_client(p, true);
    c.grant = Grant::JwtBearer(grant);
    let t = login(c, p.http(), RetryPlan::default())
        .fetch(wall_clock_ms())
        .unwrap();
    assert_validates(p, &t);
    let claims = claims_of(&t);
    assert_eq!(claims["preferred_username"], user.as_str(), "{claims}");
    assert_eq!(claims["azp"], p.s(&["jwt_client", "id"]).as_str());
}

/// Kafka sends the JWT-bearer grant without client authentication (ksasl's default for it
/// without a secret); Keycloak lets only a confidential client that authenticates use the
/// grant and answers 401 invalid_client. The refusal reaches the user with Keycloak's
/// description, at once (not retried).
#[test]
fn jwt_bearer_grant_without_client_authentication_is_refused() {
    let _keys = keys_stay();
    let p = provider();
    let l = settings_login(&jwt_grant_settings(p));
    let c = l.requester().config();
    assert!(matches!(c.grant, Grant::JwtBearer(_)), "{c:?}");
    assert!(matches!(c.client_auth, ClientAuth::None), "{c:?}");
    let started = Instant::now();
    let e = l.fetch(wall_clock_ms()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::OidcRequestRefused, "{e:?}");
    assert_eq!(e.detail("error"), Some("invalid_client"), "{e:?}");
    assert_eq!(
        e.detail("error_description"),
        Some("Invalid client or Invalid client credentials")
    );
    assert!(e.message().contains("HTTP 401"), "{}", e.message());
    assert!(!e.message().contains("attempts"), "{}", e.message());
    assert!(
        started.elapsed().as_millis() < 5_000,
        "a refusal is not retried (Kafka's plan would retry for 10 s)"
    );
}

/// Assertions Keycloak does not accept for the grant are refused with its reason (400
/// invalid_grant), not retried: without a jti (Kafka's default), signed by a key the identity
/// provider does not trust, or naming a subject linked to no user.
#[test]
fn jwt_bearer_assertions_keycloak_does_not_accept_are_refused() {
    let _keys = keys_stay();
    let p = provider();
    let mut base = jwt_grant_settings(p);
    base.push(("clientId", p.s(&["secret_client", "id"])));
    base.push(("clientSecret", p.s(&["secret_client", "secret"])));
    let with = |name: &'static str, value: String| {
        let mut pairs: Vec<_> = base.iter().filter(|(k, _)| *k != name).cloned().collect();
        pairs.push((name, value));
        pairs
    };
    for (pairs, description) in [
        (
            with(
                "sasl.oauthbearer.assertion.claim.jti.include",
                "false".into(),
            ),
            "Token jti claim is required",
        ),
        (
            with(
                "sasl.oauthbearer.assertion.private.key.file",
                p.s(&["jwt_client", "key_pem"]),
            ),
            "Invalid signature",
        ),
        (
            with("sasl.oauthbearer.assertion.claim.sub", "nobody".into()),
            "User not found",
        ),
    ] {
        let started = Instant::now();
        let e = settings_login(&pairs).fetch(wall_clock_ms()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OidcRequestRefused, "{e:?}");
        assert_eq!(e.detail("error"), Some("invalid_grant"), "{e:?}");
        assert_eq!(e.detail("error_description"), Some(description), "{e:?}");
        assert!(e.message().contains("HTTP 400"), "{}", e.message());
        assert!(!e.message().contains("attempts"), "{}", e.message());
        assert!(
            started.elapsed().as_millis() < 5_000,
            "a refusal is not retried"
        );
    }
}

#[test]
fn wrong_secret_reaches_the_user_with_the_providers_description() {
    let _keys = keys_stay();
    let p = provider();
    let started = Instant::now();
    let e = secret_login(p, "wrong-secret")
        .fetch(wall_clock_ms())
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::OidcRequestRefused);
    assert_eq!(
        e.detail("error_description"),
        Some("Invalid client or Invalid client credentials")
    );
    assert!(e.message().contains("HTTP 401"), "{}", e.message());
    assert!(!e.message().contains("wrong-secret"));
    assert!(
        started.elapsed().as_millis() < 5_000,
        "a refusal is not retried"
    );
}

#[test]
fn a_certificate_from_an_unknown_ca_is_refused() {
    let _keys = keys_stay();
    let p = provider();
    let other = HttpClient::new(&HttpConfig {
        ca_pem: Some(std::fs::read(p.s(&["other_ca_pem"])).unwrap()),
        ..Default::default()
    })
    .unwrap();
    let secret = p.s(&["secret_client", "secret"]);
    let e = login(
        secret_config(p, &secret),
        other.clone(),
        RetryPlan::default(),
    )
    .fetch(wall_clock_ms())
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TlsCertificateRefused, "{e:?}");
    // Without a CA bundle, Mozilla's roots do not know the test CA either.
    let roots = HttpClient::new(&HttpConfig::default()).unwrap();
    let e = JwksFetcher::new(&p.s(&["jwks_uri"]), roots, validator(p))
        .unwrap()
        .fetch(wall_clock_ms())
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TlsCertificateRefused, "{e:?}");
}

#[test]
fn provider_down_is_retried_with_backoff_then_reported() {
    let _keys = keys_stay();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c =
        TokenRequestConfig::client_secret(&format!("https://127.0.0.1:{port}/token"), "id", "s");
    let started = Instant::now();
    let e = login(c, provider().http(), RetryPlan::new(100, 1_000).unwrap())
        .fetch(wall_clock_ms())
        .unwrap_err();
    let took = started.elapsed().as_millis();
    assert_eq!(e.code(), ErrorCode::OidcProviderUnavailable, "{e:?}");
    // 100 + 200 + 400 + 300 (what is left of the 1 s budget): 5 attempts.
    assert!(e.message().contains("5 attempts"), "{}", e.message());
    assert!((900..3_000).contains(&took), "{took} ms");
}

#[test]
fn a_jwks_endpoint_that_hangs_times_out() {
    let _keys = keys_stay();
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let http = HttpClient::new(&HttpConfig {
        read_timeout_ms: Some(500),
        ..Default::default()
    })
    .unwrap();
    let v = validator(provider());
    let f = JwksFetcher::new(&format!("http://127.0.0.1:{port}/certs"), http, v.clone()).unwrap();
    let started = Instant::now();
    let now = wall_clock_ms();
    let e = f.fetch(now).unwrap_err();
    let took = started.elapsed().as_millis();
    assert_eq!(e.code(), ErrorCode::OidcProviderUnavailable, "{e:?}");
    assert!(e.message().contains("timed out"), "{}", e.message());
    assert!((400..3_000).contains(&took), "{took} ms");
    // The failure sets the retry backoff: due again after 100 ms, then 200 ms.
    assert_eq!(v.jwks_failures().0, 1);
    assert_eq!(v.next_refresh_ms(), now + 100);
}

#[test]
fn oversized_and_non_json_answers_are_bad_responses() {
    let _keys = keys_stay();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (i, s) in listener.incoming().flatten().enumerate() {
            let mut s = s;
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let body = if i == 0 {
                "x".repeat(3_000_000)
            } else {
                "<html>".to_string()
            };
            let _ = std::io::Write::write_all(
                &mut s,
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    let http = HttpClient::new(&HttpConfig::default()).unwrap();
    let f = JwksFetcher::new(
        &format!("http://127.0.0.1:{port}/certs"),
        http,
        validator(provider()),
    )
    .unwrap();
    assert_eq!(f.fetch(0).unwrap_err().code(), ErrorCode::OidcBadResponse);
    assert_eq!(f.fetch(0).unwrap_err().code(), ErrorCode::OidcBadResponse);
}

fn keycloak_admin(p: &Provider, args: &[&str]) -> String {
    let info = std::env::temp_dir().join(format!("ksasl-oidc-info-{}.json", std::process::id()));
    std::fs::write(&info, p.info.to_string()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc/keycloak.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--attach")
        .arg(&info)
        .args(args)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&info);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn kid_of(token: &ksasl::OAuthBearerToken) -> String {
    use base64::Engine;
    let header = token.value().split('.').next().unwrap();
    let h: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .unwrap(),
    )
    .unwrap();
    h["kid"].as_str().unwrap().to_string()
}

/// The provider rotates its signing key during a run: the first token of the new key is held
/// for one JWKS refetch and accepted (not refused, as Kafka 4.4 does), tokens of the old key
/// keep validating while the provider still publishes it, and after the old key is disabled
/// a refetch drops it. Runs last among the tests that share the provider's keys.
#[test]
fn key_rotation_is_followed_without_refusing_anything() {
    let _keys = KEYS.write().unwrap_or_else(|e| e.into_inner());
    let p = provider();
    let secret = p.s(&["secret_client", "secret"]);
    let l = secret_login(p, &secret);
    let v = validator(p);
    let f = Arc::new(JwksFetcher::new(&p.s(&["jwks_uri"]), p.http(), v.clone()).unwrap());
    let now = wall_clock_ms();
    assert_eq!(
        f.poll(now),
        now + 3_600_000,
        "the first poll fetches at once"
    );
    let old = l.fetch(now).unwrap();
    f.validate(old.value(), now).unwrap();
    let old_kids = v.key_ids();
    // A bare validator with the same keys, to compare with.
    let bare = validator(p);
    let jwks = p.http().get(&p.s(&["jwks_uri"])).unwrap().body;
    bare.set_jwks(std::str::from_utf8(&jwks).unwrap(), now)
        .unwrap();

    let new_kid = keycloak_admin(p, &["--rotate-key"]);
    let new = l.fetch(wall_clock_ms()).unwrap();
    assert_eq!(
        kid_of(&new),
        new_kid,
        "Keycloak signs with the higher-priority key"
    );
    assert!(!old_kids.contains(&new_kid));
    // Held and accepted: one refetch, and the old token still validates.
    let now = wall_clock_ms();
    let g = f.generation();
    f.validate(new.value(), now)
        .unwrap_or_else(|r| panic!("{}", r.reason));
    assert_eq!(f.generation(), g + 1, "exactly one refetch");
    f.validate(old.value(), now).unwrap();
    // The bare validator refuses the new token and only asks for a refetch (Kafka 4.4's way).
    let r = bare.validate(new.value(), now).unwrap_err();
    assert_eq!(r.code, ErrorCode::TokenUnknownKey);
    assert!(bare.refresh_due(now));

    // The old key disabled: the next refetch drops it, and its tokens are refused.
    // One argument `--option=value`: a key id may start with '-', which argparse would
    // otherwise take for an option (a Keycloak kid is random base64url).
    keycloak_admin(p, &[&format!("--disable-keys-except={new_kid}")]);
    f.fetch(wall_clock_ms()).unwrap();
    assert_eq!(v.key_ids(), vec![new_kid.clone()]);
    let r = f.validate(old.value(), wall_clock_ms()).unwrap_err();
    assert_eq!(r.code, ErrorCode::TokenUnknownKey);
    f.validate(new.value(), wall_clock_ms()).unwrap();
}

/// The login as a refresher's callback: each due refresh gets a new token from the provider;
/// a failed refresh keeps the current token and records the provider's reason.
#[test]
fn the_refresher_gets_each_token_from_the_provider() {
    use ksasl::refresh::{RefreshConfig, Refresher};
    let _keys = keys_stay();
    let p = provider();
    let secret = p.s(&["secret_client", "secret"]);
    let login = Arc::new(secret_login(p, &secret));
    let refresher = Refresher::new(RefreshConfig::default(), SharedRandom::default());
    let mut ext = ksasl::SaslExtensions::new();
    ext.insert("traceId", "abc").unwrap();
    login.attach(&refresher, ext);
    let now = wall_clock_ms();
    assert!(refresher.run_due(now));
    let (first, extensions, generation) = refresher.current_token(now).unwrap();
    assert_eq!(
        (generation, extensions.map()["traceId"].as_str()),
        (1, "abc")
    );
    // The next refresh is due within the token's lifetime: run it then (a virtual clock; the
    // provider still answers at once).
    let due = refresher.next_deadline().unwrap();
    assert!(
        due > now && due < first.expiry_ms(),
        "{due} vs {}",
        first.expiry_ms()
    );
    assert!(refresher.run_due(due));
    let (second, _, generation) = refresher.current_token(due).unwrap();
    assert_eq!(generation, 2);
    assert_ne!(second.value(), first.value());
    assert_eq!(second.principal(), first.principal());

    // A wrong secret: the refresh fails, the current token stays, the reason is the provider's.
    let wrong = Arc::new(secret_login(p, "wrong"));
    wrong.attach(&refresher, ksasl::SaslExtensions::new());
    let later = refresher.next_deadline().unwrap();
    assert!(refresher.run_due(later));
    let (failures, reason) = refresher.failures();
    assert_eq!(failures, 1);
    assert!(reason
        .unwrap()
        .contains("Invalid client or Invalid client credentials"));
    assert_eq!(refresher.current_token(later).unwrap().2, 2);
}

fn secret_login(p: &Provider, secret: &str) -> OidcLogin {
    login(secret_config(p, secret), p.http(), RetryPlan::default())
}
