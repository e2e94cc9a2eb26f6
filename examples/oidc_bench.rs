//! What an OIDC login and a JWKS refresh cost against a real identity provider: Keycloak,
//! described by the JSON file `KSASL_OIDC_INFO` names (`make bench-oidc` starts one with
//! tests/oidc/keycloak.py). Release build; figures in BENCHMARKS.md.
//!
//! Each figure is the median (and 90th percentile) of ROUNDS calls, one after another:
//! - a token fetch (client secret, then a signed client assertion) on a new HTTPS connection
//!   each time, as a refresh an hour apart makes it, and on a kept-alive connection;
//! - a JWKS fetch (GET, parse, keys installed in the validator), both ways;
//! - validating a token of the provider against the fetched keys.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ksasl::io::http::{jwks_endpoint, HttpSettings, OidcSettings};
use ksasl::{JwksValidator, JwtValidatorConfig, SharedRandom, TokenValidator};
use serde_json::Value;

const ROUNDS: usize = 60;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn s(v: &Value, path: &[&str]) -> String {
    let mut v = v;
    for p in path {
        v = &v[*p];
    }
    v.as_str()
        .unwrap_or_else(|| panic!("{path:?} missing"))
        .to_string()
}

/// Median and 90th percentile of `ROUNDS` runs of `f`.
fn measure(mut f: impl FnMut()) -> (Duration, Duration) {
    f(); // warm-up (loads the CA, JIT on the provider's side)
    let mut t: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    (t[ROUNDS / 2], t[ROUNDS * 9 / 10])
}

fn row(what: &str, (median, p90): (Duration, Duration)) {
    println!(
        "| {what} | {:.2} ms | {:.2} ms |",
        median.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3
    );
}

fn main() {
    let path = std::env::var("KSASL_OIDC_INFO")
        .expect("KSASL_OIDC_INFO: run under tests/oidc/keycloak.py --exec (make bench-oidc)");
    let info: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let http = HttpSettings {
        ca_file: Some(s(&info, &["ca_pem"])),
        ..Default::default()
    };
    let secret = OidcSettings {
        token_endpoint_url: s(&info, &["token_endpoint"]),
        client_id: Some(s(&info, &["secret_client", "id"])),
        client_secret: Some(s(&info, &["secret_client", "secret"]).as_str().into()),
        http: http.clone(),
        ..Default::default()
    };
    let assertion = OidcSettings {
        token_endpoint_url: s(&info, &["token_endpoint"]),
        client_id: Some(s(&info, &["jwt_client", "id"])),
        assertion_private_key_file: Some(s(&info, &["jwt_client", "key_pem"])),
        assertion_audience: Some(s(&info, &["issuer"])),
        assertion_include_jti: Some(true),
        http: http.clone(),
        ..Default::default()
    };
    let validator = || {
        Arc::new(
            JwksValidator::new(JwtValidatorConfig {
                expected_issuer: Some(s(&info, &["issuer"])),
                expected_audiences: vec![s(&info, &["audience"])],
                ..Default::default()
            })
            .unwrap(),
        )
    };
    let jwks_uri = s(&info, &["jwks_uri"]);

    println!(
        "Keycloak at {}; {ROUNDS} rounds each\n",
        s(&info, &["issuer"])
    );
    println!("| operation | median | p90 |\n|---|---|---|");
    for (name, settings) in [("client secret", &secret), ("signed assertion", &assertion)] {
        row(&format!("token fetch, {name}, new connection"), {
            measure(|| {
                let login = settings.login(SharedRandom::default()).unwrap();
                login.fetch(now_ms()).unwrap();
            })
        });
        let login = settings.login(SharedRandom::default()).unwrap();
        row(&format!("token fetch, {name}, kept-alive connection"), {
            measure(|| {
                login.fetch(now_ms()).unwrap();
            })
        });
    }
    row("JWKS fetch and install, new connection", {
        measure(|| {
            jwks_endpoint(&jwks_uri, &http, validator())
                .unwrap()
                .fetch(now_ms())
                .unwrap();
        })
    });
    let v = validator();
    let endpoint = jwks_endpoint(&jwks_uri, &http, v.clone()).unwrap();
    row("JWKS fetch and install, kept-alive connection", {
        measure(|| {
            endpoint.fetch(now_ms()).unwrap();
        })
    });
    let token = secret
        .login(SharedRandom::default())
        .unwrap()
        .fetch(now_ms())
        .unwrap();
    let start = Instant::now();
    let n = 2000;
    for _ in 0..n {
        v.validate(token.value(), now_ms()).unwrap();
    }
    println!(
        "| validate one of the provider's tokens (RS256, {} keys in the set) | {:.1} µs (mean of {n}) | |",
        endpoint.fetch(now_ms()).unwrap(),
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}
