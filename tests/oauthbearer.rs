//! OAUTHBEARER: validators against vectors made by PyJWT (tests/vectors/jwt.json), unsecured
//! tokens from Kafka and librdkafka, byte-exact client/server round trips including the
//! `%x01` error flow, and the validated-token cache.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{exchange, Failure};
use jsonwebtoken::Algorithm;
use ksasl::*;
use serde_json::Value;

/// The committed vectors, or freshly generated ones when `KSASL_JWT_VECTORS` names a file
/// (`make test` regenerates them with PyJWT on every run).
fn vectors() -> Value {
    let path = std::env::var("KSASL_JWT_VECTORS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/jwt.json").into());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn jwks_validator(v: &Value, hmac: bool) -> JwksValidator {
    jwks_validator_with(v, hmac, false)
}

fn jwks_validator_with(v: &Value, hmac: bool, validate_iat: bool) -> JwksValidator {
    let mut config = JwtValidatorConfig {
        expected_issuer: Some(v["issuer"].as_str().unwrap().into()),
        expected_audiences: vec![v["audience"].as_str().unwrap().into()],
        validate_iat,
        ..Default::default()
    };
    if hmac {
        config.algorithms.push(Algorithm::HS256);
        config.hmac_secret = Some(Secret::from(v["hmac_secret"].as_str().unwrap()));
    }
    let val = JwksValidator::new(config).unwrap();
    let n = val
        .set_jwks(&v["jwks"].to_string(), v["now_ms"].as_i64().unwrap())
        .unwrap();
    assert_eq!(n, 4, "the encryption key and the symmetric key are skipped");
    val
}

#[test]
fn signed_vectors_from_pyjwt() {
    let v = vectors();
    let now = v["now_ms"].as_i64().unwrap();
    let plain = jwks_validator(&v, false);
    let hmac = jwks_validator(&v, true);
    let strict_iat = jwks_validator_with(&v, false, true);
    let mut failures = Vec::new();
    for t in v["tokens"].as_array().unwrap() {
        let (name, token, expect) = (
            t["name"].as_str().unwrap(),
            t["token"].as_str().unwrap(),
            t["expect"].as_str().unwrap(),
        );
        let (validator, expect) = match expect {
            "ok-with-hmac-secret" => {
                // Without a configured secret, HMAC is refused outright.
                let e = plain.validate(token, now).unwrap_err();
                assert_eq!(e.code, ErrorCode::TokenAlgorithmRefused, "{name}");
                (&hmac, "ok")
            }
            "ok-unless-iat-validation" => {
                // Kafka accepts a future iat; with validate_iat it is refused past the skew.
                assert_eq!(
                    strict_iat.validate(token, now).unwrap_err().code,
                    ErrorCode::TokenNotYetValid,
                    "{name}"
                );
                (&plain, "ok")
            }
            e => (&plain, e),
        };
        match (validator.validate(token, now), expect) {
            (Ok(ok), "ok") => {
                if t["expect"] == "ok" {
                    assert!(
                        strict_iat.validate(token, now).is_ok(),
                        "{name}: refused with validate_iat"
                    );
                }
                assert_eq!(ok.principal, "alice", "{name}");
                assert!(ok.expiry_ms + 30_000 > now, "{name}");
                assert!(!ok.scope.is_empty(), "{name}");
            }
            (Err(rej), code) if rej.code.name() == code => {
                assert_eq!(rej.status, "invalid_token");
                assert_eq!(rej.json(), r#"{"status":"invalid_token"}"#);
                assert!(
                    !rej.reason.contains(&token[..20.min(token.len())]),
                    "{name}: the reason quotes the token"
                );
            }
            (got, _) => failures.push(format!("{name}: expected {expect}, got {got:?}")),
        }
        // The HMAC-enabled validator still refuses the key-confusion token: its HMAC secret
        // is not the RSA public key.
        if name == "hs256-rsa-public-key-as-secret" {
            assert_eq!(
                hmac.validate(token, now).unwrap_err().code,
                ErrorCode::TokenBadSignature
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fractional_dates_and_expiry_in_ms() {
    let v = vectors();
    let now = v["now_ms"].as_i64().unwrap();
    let val = jwks_validator(&v, false);
    let t = v["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "rs256-fractional-dates")
        .unwrap();
    let ok = val.validate(t["token"].as_str().unwrap(), now).unwrap();
    assert_eq!(ok.expiry_ms, now + 3_600_500);
    assert_eq!(ok.start_ms, Some(now - 10_250));
    assert_eq!(ok.valid_until_ms, now + 3_600_500 + 30_000);
}

#[test]
fn oversized_token_is_refused_before_any_parsing() {
    let v = vectors();
    let val = jwks_validator(&v, false);
    let big = format!("eyJhbGciOiJSUzI1NiJ9.{}.c2ln", "A".repeat(512 * 1024));
    assert_eq!(
        val.validate(&big, 0).unwrap_err().code,
        ErrorCode::TokenTooLarge
    );
}

#[test]
fn jwks_refresh_schedule_and_unknown_kid_rate_limit() {
    let v = vectors();
    let t0 = v["now_ms"].as_i64().unwrap();
    let fresh = JwksValidator::new(JwtValidatorConfig::default()).unwrap();
    assert!(fresh.refresh_due(i64::MIN + 1), "no JWKS yet: due at once");
    let val = jwks_validator(&v, false);
    assert_eq!(val.next_refresh_ms(), t0 + 3_600_000);
    assert!(!val.refresh_due(t0 + 1));
    let unknown = v["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "unknown-kid")
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        val.validate(&unknown, t0 + 5).unwrap_err().code,
        ErrorCode::TokenUnknownKey
    );
    assert_eq!(
        val.next_refresh_ms(),
        t0 + 5,
        "an unknown kid asks for a fetch now"
    );
    let gen = val.generation();
    val.set_jwks(&v["jwks"].to_string(), t0 + 10).unwrap();
    assert!(val.generation() > gen);
    assert_eq!(val.next_refresh_ms(), t0 + 10 + 3_600_000);
    // The same kid again within a minute: no new fetch request.
    val.validate(&unknown, t0 + 20).unwrap_err();
    assert_eq!(val.next_refresh_ms(), t0 + 10 + 3_600_000);
    // A minute after the first request it may ask again.
    val.validate(&unknown, t0 + 5 + 60_000).unwrap_err();
    assert_eq!(val.next_refresh_ms(), t0 + 5 + 60_000);
    // A bad JWKS changes nothing.
    assert_eq!(
        val.set_jwks("{}", t0 + 70_000).unwrap_err().code(),
        ErrorCode::InvalidConfig
    );
    assert_eq!(
        val.set_jwks(r#"{"keys":[{"kty":"oct","k":"AAAA"}]}"#, t0)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidConfig
    );
    assert_eq!(val.key_ids().len(), 4);
}

#[test]
fn validator_configuration_is_checked() {
    let hs_without_secret = JwtValidatorConfig {
        algorithms: vec![Algorithm::HS256],
        ..Default::default()
    };
    assert_eq!(
        JwksValidator::new(hs_without_secret).unwrap_err().code(),
        ErrorCode::InvalidConfig
    );
    let none = JwtValidatorConfig {
        algorithms: vec![],
        ..Default::default()
    };
    assert_eq!(
        JwksValidator::new(none).unwrap_err().code(),
        ErrorCode::InvalidConfig
    );
    let bad = UnsecuredValidatorConfig {
        allowable_clock_skew_ms: -1,
        ..Default::default()
    };
    assert_eq!(
        UnsecuredValidator::new(bad).unwrap_err().code(),
        ErrorCode::InvalidConfig
    );
    let bad = UnsecuredValidatorConfig {
        required_scope: vec!["a\"b".into()],
        ..Default::default()
    };
    assert_eq!(
        UnsecuredValidator::new(bad).unwrap_err().code(),
        ErrorCode::InvalidConfig
    );
}

fn unsecured(skew: i64, scope: &[&str]) -> UnsecuredValidator {
    UnsecuredValidator::new(UnsecuredValidatorConfig {
        allowable_clock_skew_ms: skew,
        required_scope: scope.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .unwrap()
}

fn token(claims: &str) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
        URL_SAFE_NO_PAD.encode(claims)
    )
}

#[test]
fn unsecured_vectors_from_kafka_and_librdkafka() {
    let v = vectors();
    let now = v["now_ms"].as_i64().unwrap();
    for t in v["unsecured"].as_array().unwrap() {
        let ok = unsecured(0, &[])
            .validate(t["token"].as_str().unwrap(), now)
            .unwrap();
        match t["name"].as_str().unwrap() {
            "librdkafka-fractional" => {
                assert_eq!(ok.principal, "alice");
                assert_eq!(ok.expiry_ms, now + 3_599_630);
                assert_eq!(ok.start_ms, Some(now - 370));
                assert_eq!(ok.scope, ["test"]);
            }
            "kafka-java-double" => {
                assert_eq!(ok.principal, "bob");
                assert_eq!(ok.expiry_ms, now + 3_600_000);
            }
            other => panic!("unexpected vector {other}"),
        }
    }
    // Kafka's own builder output validates too.
    let built = UnsecuredTokenBuilder::for_principal("carol")
        .build(now)
        .unwrap();
    assert_eq!(
        unsecured(0, &[])
            .validate(built.value(), now)
            .unwrap()
            .principal,
        "carol"
    );
}

#[test]
fn unsecured_clock_skew_edges() {
    let n: i64 = 1_795_000_000_000;
    let s = n / 1000;
    // iat one second ahead: refused without skew, accepted with exactly 1000 ms of skew.
    let ahead = token(&format!(
        r#"{{"sub":"a","iat":{},"exp":{}}}"#,
        s + 1,
        s + 60
    ));
    assert_eq!(
        unsecured(0, &[]).validate(&ahead, n).unwrap_err().code,
        ErrorCode::TokenNotYetValid
    );
    assert_eq!(
        unsecured(999, &[]).validate(&ahead, n).unwrap_err().code,
        ErrorCode::TokenNotYetValid
    );
    assert!(unsecured(1000, &[]).validate(&ahead, n).is_ok());
    // exp exactly now: expired; one ms of skew saves it; exp a ms later also passes.
    let at = token(&format!(r#"{{"sub":"a","exp":{s}}}"#));
    assert_eq!(
        unsecured(0, &[]).validate(&at, n).unwrap_err().code,
        ErrorCode::TokenExpired
    );
    assert!(unsecured(1, &[]).validate(&at, n).is_ok());
    assert!(unsecured(0, &[]).validate(&at, n - 1).is_ok());
    // exp must be after iat.
    let backwards = token(&format!(r#"{{"sub":"a","iat":{s},"exp":{s}}}"#));
    assert_eq!(
        unsecured(1000, &[])
            .validate(&backwards, n - 1000)
            .unwrap_err()
            .code,
        ErrorCode::TokenInvalidClaim
    );
    // Missing and malformed pieces.
    assert_eq!(
        unsecured(0, &[])
            .validate(&token(&format!(r#"{{"exp":{}}}"#, s + 9)), n)
            .unwrap_err()
            .code,
        ErrorCode::TokenMissingClaim
    );
    assert_eq!(
        unsecured(0, &[])
            .validate(&token(r#"{"sub":"a"}"#), n)
            .unwrap_err()
            .code,
        ErrorCode::TokenMissingClaim
    );
    assert_eq!(
        unsecured(0, &[])
            .validate(&token(r#"{"sub":"a","exp":"soon"}"#), n)
            .unwrap_err()
            .code,
        ErrorCode::TokenInvalidClaim
    );
    let signed = format!("{}sig", token(&format!(r#"{{"sub":"a","exp":{}}}"#, s + 9)));
    assert_eq!(
        unsecured(0, &[]).validate(&signed, n).unwrap_err().code,
        ErrorCode::TokenMalformed
    );
    assert_eq!(
        unsecured(0, &[]).validate("a..b", n).unwrap_err().code,
        ErrorCode::TokenMalformed
    );
    let rs = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.";
    assert_eq!(
        unsecured(0, &[]).validate(rs, n).unwrap_err().code,
        ErrorCode::TokenAlgorithmRefused
    );
}

#[test]
fn unsecured_scope_rules() {
    let n: i64 = 1_795_000_000_000;
    let exp = n / 1000 + 60;
    let listed = token(&format!(
        r#"{{"sub":"a","exp":{exp},"scope":["a"," b ",""]}}"#
    ));
    assert_eq!(
        unsecured(0, &["a", "b"])
            .validate(&listed, n)
            .unwrap()
            .scope,
        ["a", "b"]
    );
    let r = unsecured(0, &["c"]).validate(&listed, n).unwrap_err();
    assert_eq!(r.code, ErrorCode::InsufficientScope);
    assert_eq!(
        r.json(),
        r#"{"status":"insufficient_scope", "scope":"[c]"}"#
    );
    let r = unsecured(0, &["a", "LOGIN_TO_KAFKA"])
        .validate(&listed, n)
        .unwrap_err();
    assert_eq!(
        r.json(),
        r#"{"status":"insufficient_scope", "scope":"[a, LOGIN_TO_KAFKA]"}"#
    );
    // A string scope is one element, not split on spaces.
    let single = token(&format!(r#"{{"sub":"a","exp":{exp},"scope":" a b "}}"#));
    assert_eq!(
        unsecured(0, &[]).validate(&single, n).unwrap().scope,
        ["a b"]
    );
    assert!(unsecured(0, &["a"]).validate(&single, n).is_err());
}

fn unsecured_servers() -> MechanismRegistry {
    let mut r = MechanismRegistry::new();
    r.register_oauthbearer_server(Arc::new(unsecured(0, &[])));
    r
}

fn client(token: OAuthBearerToken, ext: &[(&str, &str)]) -> ClientExchange {
    ClientExchange::new(Box::new(OAuthBearerClient::new(
        token,
        SaslExtensions::from_pairs(ext.iter().copied()).unwrap(),
    )))
}

#[test]
fn round_trip_with_extensions_is_byte_exact() {
    let now = common::NOW;
    let tok = UnsecuredTokenBuilder::for_principal("alice")
        .build(now)
        .unwrap();
    let mut c = client(
        tok.clone(),
        &[("logicalCluster", "lkc-abc"), ("identityPoolId", "pool-Xy")],
    );
    let mut s = unsecured_servers().server("OAUTHBEARER").unwrap();
    let (outcome, t) = exchange(&mut c, &mut s).unwrap();
    let expected = format!(
        "n,,\x01auth=Bearer {}\x01identityPoolId=pool-Xy\x01logicalCluster=lkc-abc\x01\x01",
        tok.value()
    );
    assert_eq!(t[0], expected.as_bytes());
    assert_eq!(t[1], b"");
    assert_eq!(t.len(), 2);
    assert_eq!(outcome.principal.to_string(), "User:alice");
    assert_eq!(outcome.mechanism, "OAUTHBEARER");
    assert_eq!(outcome.credential_expiry_ms, Some(now + 3_600_000));
    let ext: BTreeMap<String, String> =
        [("identityPoolId", "pool-Xy"), ("logicalCluster", "lkc-abc")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(outcome.extensions, ext);
    assert!(c.is_complete());
}

#[test]
fn authzid_must_be_the_principal() {
    let now = common::NOW;
    let tok = UnsecuredTokenBuilder::for_principal("alice")
        .build(now)
        .unwrap();
    let mut c = ClientExchange::new(Box::new(
        OAuthBearerClient::new(tok.clone(), SaslExtensions::new())
            .with_authzid("alice")
            .unwrap(),
    ));
    let (_, t) = exchange(
        &mut c,
        &mut unsecured_servers().server("OAUTHBEARER").unwrap(),
    )
    .unwrap();
    assert!(t[0].starts_with(b"n,a=alice,\x01auth=Bearer "));
    let mut c = ClientExchange::new(Box::new(
        OAuthBearerClient::new(tok, SaslExtensions::new())
            .with_authzid("admin")
            .unwrap(),
    ));
    let e = match exchange(
        &mut c,
        &mut unsecured_servers().server("OAUTHBEARER").unwrap(),
    ) {
        Err(Failure::Server(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.code(), ErrorCode::AuthzidMismatch);
    assert_eq!(
        e.client_message("OAUTHBEARER", false),
        "Authentication failed: Client requested an authorization id (admin) that is different from the token's principal name (alice)"
    );
}

#[test]
fn error_flow_round_trip_is_byte_exact() {
    let now = common::NOW;
    let expired = UnsecuredTokenBuilder::for_principal("alice")
        .lifetime_seconds(10)
        .build(now - 20_000)
        .unwrap();
    for (validator, json, code) in [
        (
            unsecured(0, &[]),
            r#"{"status":"invalid_token"}"#,
            ErrorCode::TokenExpired,
        ),
        (
            unsecured(0, &["LOGIN"]),
            r#"{"status":"insufficient_scope", "scope":"[LOGIN]"}"#,
            ErrorCode::InsufficientScope,
        ),
    ] {
        let token = if code == ErrorCode::TokenExpired {
            expired.clone()
        } else {
            UnsecuredTokenBuilder::for_principal("alice")
                .build(now)
                .unwrap()
        };
        let mut c = client(token, &[]);
        let mut s = ServerExchange::new(Box::new(OAuthBearerServer::new(Arc::new(validator))));
        let ClientStep::Send(first) = c.start(now).unwrap() else {
            panic!()
        };
        let ServerStep::Challenge(challenge) = s.step(&first, now).unwrap() else {
            panic!()
        };
        assert_eq!(challenge, json.as_bytes());
        assert_eq!(
            c.step(&challenge, now).unwrap(),
            ClientStep::Send(vec![0x01])
        );
        let e = s.step(&[0x01], now).unwrap_err();
        assert_eq!(e.code(), code);
        assert_eq!(
            e.client_message("OAUTHBEARER", false),
            json,
            "Kafka sends the JSON as error_message"
        );
        assert_eq!(
            e.detail("status"),
            Some(if code == ErrorCode::TokenExpired {
                "invalid_token"
            } else {
                "insufficient_scope"
            })
        );
        // The client reports the server's verdict with its fields.
        let ce = c.server_failed(Some(&e.client_message("OAUTHBEARER", false)));
        assert_eq!(ce.code(), ErrorCode::ServerRejectedAuthentication);
        assert_eq!(ce.detail("status"), e.detail("status"));
        assert_eq!(ce.detail("scope"), e.detail("scope"));
        assert_eq!(c.state(), ExchangeState::Failed);
        assert_eq!(
            c.step(b"", now).unwrap_err().code(),
            ErrorCode::StepAfterFailure
        );
    }
}

#[test]
fn server_refuses_anything_but_the_acknowledgement() {
    let now = common::NOW;
    let tok = UnsecuredTokenBuilder::for_principal("alice")
        .lifetime_seconds(1)
        .build(now - 5_000)
        .unwrap();
    let mut s = unsecured_servers().server("OAUTHBEARER").unwrap();
    let first = match client(tok, &[]).start(now).unwrap() {
        ClientStep::Send(m) => m,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        s.step(&first, now).unwrap(),
        ServerStep::Challenge(_)
    ));
    assert_eq!(
        s.step(&first, now).unwrap_err().code(),
        ErrorCode::MalformedMessage
    );
}

struct Refuse(&'static str);
impl ExtensionValidator for Refuse {
    fn validate(
        &self,
        _: &ValidatedToken,
        ext: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, Vec<(String, String)>> {
        if ext.contains_key(self.0) {
            Err(vec![(self.0.to_string(), "not allowed here".to_string())])
        } else {
            Ok(ext
                .iter()
                .filter(|(k, _)| k.as_str() != "ignored")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect())
        }
    }
}

#[test]
fn extension_validator_keeps_or_refuses() {
    let now = common::NOW;
    let tok = UnsecuredTokenBuilder::for_principal("alice")
        .build(now)
        .unwrap();
    let server = || {
        ServerExchange::new(Box::new(
            OAuthBearerServer::new(Arc::new(unsecured(0, &[])))
                .with_extension_validator(Arc::new(Refuse("bad"))),
        ))
    };
    let (o, _) = exchange(
        &mut client(tok.clone(), &[("ignored", "x"), ("kept", "y")]),
        &mut server(),
    )
    .unwrap();
    assert_eq!(o.extensions.keys().collect::<Vec<_>>(), ["kept"]);
    let e = exchange(&mut client(tok, &[("bad", "x")]), &mut server()).unwrap_err();
    let Failure::Server(e) = e else { panic!() };
    assert_eq!(e.code(), ErrorCode::InvalidExtensions);
    assert_eq!(
        e.client_message("OAUTHBEARER", false),
        "Authentication failed: 1 extensions are invalid! They are: bad: not allowed here"
    );
}

#[test]
fn host_supplied_validator() {
    let now = common::NOW;
    let host = |token: &str, now_ms: i64| -> Result<ValidatedToken, TokenRejection> {
        if token == "opaque-token-123" {
            Ok(ValidatedToken {
                principal: "svc".into(),
                expiry_ms: now_ms + 1000,
                start_ms: None,
                scope: vec![],
                valid_from_ms: None,
                valid_until_ms: now_ms + 1000,
            })
        } else {
            let mut r =
                TokenRejection::invalid_token(ErrorCode::TokenRejected, "unknown opaque token");
            r.openid_configuration =
                Some("https://idp.example.com/.well-known/openid-configuration".into());
            Err(r)
        }
    };
    let mut r = MechanismRegistry::new();
    r.register_oauthbearer_server(Arc::new(host));
    let ok = OAuthBearerToken::new("opaque-token-123", "svc", now + 1000).unwrap();
    let (o, _) = exchange(&mut client(ok, &[]), &mut r.server("OAUTHBEARER").unwrap()).unwrap();
    assert_eq!(o.principal.name, "svc");
    let bad = OAuthBearerToken::new("other", "svc", now + 1000).unwrap();
    let mut c = client(bad, &[]);
    let mut s = r.server("OAUTHBEARER").unwrap();
    let ClientStep::Send(first) = c.start(now).unwrap() else {
        panic!()
    };
    let ServerStep::Challenge(ch) = s.step(&first, now).unwrap() else {
        panic!()
    };
    assert_eq!(
        ch,
        br#"{"status":"invalid_token", "openid-configuration":"https://idp.example.com/.well-known/openid-configuration"}"#
    );
    c.step(&ch, now).unwrap();
    let e = c.server_failed(None);
    assert_eq!(
        e.detail("openid-configuration"),
        Some("https://idp.example.com/.well-known/openid-configuration")
    );
}

struct Counting(AtomicUsize, UnsecuredValidator);
impl TokenValidator for Counting {
    fn validate(&self, token: &str, now_ms: i64) -> Result<ValidatedToken, TokenRejection> {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.1.validate(token, now_ms)
    }
}

#[test]
fn cache_keeps_verdicts_within_validity_and_capacity() {
    let now = common::NOW;
    let inner = Arc::new(Counting(AtomicUsize::new(0), unsecured(0, &[])));
    let cache = CachingValidator::new(inner.clone(), 2);
    let t1 = UnsecuredTokenBuilder::for_principal("a")
        .lifetime_seconds(60)
        .build(now)
        .unwrap();
    let a = cache.validate(t1.value(), now).unwrap();
    assert_eq!(cache.validate(t1.value(), now + 59_999).unwrap(), a);
    assert_eq!(
        inner.0.load(Ordering::SeqCst),
        1,
        "second validation came from the cache"
    );
    // At expiry the cached verdict is not used: the inner validator refuses.
    assert_eq!(
        cache.validate(t1.value(), now + 60_000).unwrap_err().code,
        ErrorCode::TokenExpired
    );
    assert_eq!(inner.0.load(Ordering::SeqCst), 2);
    // Bounded: three tokens, capacity two.
    for p in ["x", "y", "z"] {
        let t = UnsecuredTokenBuilder::for_principal(p).build(now).unwrap();
        cache.validate(t.value(), now).unwrap();
    }
    assert!(cache.len() <= 2);
    // Rejections are not cached.
    let before = inner.0.load(Ordering::SeqCst);
    let _ = cache.validate("bad", now);
    let _ = cache.validate("bad", now);
    assert_eq!(inner.0.load(Ordering::SeqCst), before + 2);
}

/// A large cache is split into shards by token hash (one lock each): still bounded by its
/// capacity, every token still found, from several threads at once.
#[test]
fn a_sharded_cache_is_bounded_and_shared_by_threads() {
    let now = common::NOW;
    let inner = Arc::new(Counting(AtomicUsize::new(0), unsecured(0, &[])));
    let cache = Arc::new(CachingValidator::new(inner.clone(), 64));
    let tokens: Vec<String> = (0..48)
        .map(|i| {
            UnsecuredTokenBuilder::for_principal(&format!("p{i}"))
                .build(now)
                .unwrap()
                .value()
                .to_string()
        })
        .collect();
    std::thread::scope(|scope| {
        for half in tokens.chunks(24) {
            let cache = cache.clone();
            scope.spawn(move || {
                for _ in 0..3 {
                    for (i, t) in half.iter().enumerate() {
                        let v = cache.validate(t, now).unwrap();
                        assert!(v.principal.starts_with('p'), "{i}");
                    }
                }
            });
        }
    });
    // Each token was validated once, or again only if its shard was full and evicted it.
    let calls = inner.0.load(Ordering::SeqCst);
    assert!((48..=144).contains(&calls), "{calls}");
    assert!(cache.len() <= 64 && !cache.is_empty(), "{}", cache.len());
    // Many more tokens than room: the bound holds.
    for i in 0..500 {
        let t = UnsecuredTokenBuilder::for_principal(&format!("q{i}"))
            .build(now)
            .unwrap();
        cache.validate(t.value(), now).unwrap();
    }
    assert!(cache.len() <= 64, "{}", cache.len());
    cache.clear();
    assert!(cache.is_empty());
}

#[test]
fn cache_drops_verdicts_when_the_jwks_changes() {
    let v = vectors();
    let now = v["now_ms"].as_i64().unwrap();
    let jwks = Arc::new(jwks_validator(&v, false));
    let cache = CachingValidator::new(jwks.clone(), 16);
    let rs = v["tokens"][0]["token"].as_str().unwrap();
    cache.validate(rs, now).unwrap();
    assert_eq!(cache.len(), 1);
    // Rotate to a JWKS without the RSA key: the cached verdict must not survive.
    let mut rotated = v["jwks"].clone();
    rotated["keys"]
        .as_array_mut()
        .unwrap()
        .retain(|k| k["kid"] != "rsa-1");
    jwks.set_jwks(&rotated.to_string(), now).unwrap();
    assert_eq!(
        cache.validate(rs, now).unwrap_err().code,
        ErrorCode::TokenUnknownKey
    );
}
