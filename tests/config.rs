//! Configuration validation: every invalid value of `tests/vectors/config_invalid.json` gets
//! its error code from the builders. The C, Python and Java tests feed the same table through
//! their bindings and expect the same codes.

use std::sync::Arc;

use ksasl::kafka::client::ClientConfig;
use ksasl::kafka::server::ServerConfig;
use ksasl::refresh::RefreshConfig;
use ksasl::*;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/config_invalid.json"
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn clients() -> MechanismRegistry {
    let c = PasswordCredential::new("alice", "alice-secret").unwrap();
    MechanismRegistry::password_clients(Arc::new(c))
}

fn servers() -> MechanismRegistry {
    MechanismRegistry::password_servers(Some(Arc::new(CredentialStore::new())))
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

fn client(set: &str, v: &Value) -> Result<()> {
    if set == "mechanism" {
        return ClientConfig::builder(clients(), v.as_str().unwrap())
            .build()
            .map(drop);
    }
    let mut b = ClientConfig::builder(clients(), "PLAIN");
    match set {
        "api_versions_version" => b.set_api_versions_version(int(v)),
        "reauth_retry_ms" => b.set_reauth_retry_ms(int(v)),
        "reauth_min_delay_ms" => b.set_reauth_min_delay_ms(int(v)),
        "max_receive_size" => b.set_max_receive_size(int(v)),
        "known_versions" => b.set_known_versions(int(&v[0]), v[1].as_i64()),
        "software" => b.set_software(v[0].as_str().unwrap(), v[1].as_str().unwrap()),
        other => panic!("no client setter {other}"),
    };
    b.build().map(drop)
}

fn server(set: &str, v: &Value) -> Result<()> {
    let mut b = ServerConfig::builder(servers());
    match set {
        "max_reauth_ms" => b.set_max_reauth_ms(int(v)),
        "max_reauth_ms_for" => b.set_max_reauth_ms_for(v[0].as_str().unwrap(), int(&v[1])),
        "failed_authentication_delay_ms" => b.set_failed_authentication_delay_ms(int(v)),
        "reauth_retry_ms" => b.set_reauth_retry_ms(int(v)),
        "max_receive_size" => b.set_max_receive_size(int(v)),
        "max_request_size" => b.set_max_request_size(int(v)),
        "unknown_user_mask" => {
            b.set_unknown_user_mask(v[0].as_str().unwrap().as_bytes(), int(&v[1]))
        }
        "api_version" => b.set_api_version(int(&v[0]), int(&v[1]), int(&v[2])),
        "enabled_mechanisms" => b.set_enabled_mechanisms(
            v.as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_string())
                .collect(),
        ),
        other => panic!("no server setter {other}"),
    };
    b.build().map(drop)
}

fn refresher(set: &str, v: &Value) -> Result<()> {
    let mut b = RefreshConfig::builder();
    match set {
        "window_factor" => b.window_factor(v.as_f64().unwrap()),
        "window_jitter" => b.window_jitter(v.as_f64().unwrap()),
        "min_period_seconds" => b.min_period_seconds(int(v)),
        "buffer_seconds" => b.buffer_seconds(int(v)),
        "retry_backoff_ms" => b.retry_backoff_ms(int(v)),
        "retry_backoff_max_ms" => b.retry_backoff_max_ms(int(v)),
        other => panic!("no refresher setter {other}"),
    };
    b.build().map(drop)
}

#[test]
fn every_invalid_value_gets_its_code() {
    let cases = cases();
    assert!(cases.len() >= 30);
    for c in &cases {
        let (config, set, value) = (
            c["config"].as_str().unwrap(),
            c["set"].as_str().unwrap(),
            &c["value"],
        );
        let r = match config {
            "client" => client(set, value),
            "server" => server(set, value),
            "refresher" => refresher(set, value),
            other => panic!("no config {other}"),
        };
        let e = r.expect_err(&format!("{config}.{set}({value}) was accepted"));
        assert_eq!(
            e.code().name(),
            c["code"].as_str().unwrap(),
            "{config}.{set}({value}): {e}"
        );
    }
}

#[test]
fn defaults_and_valid_edges_build() {
    let c = ClientConfig::new(clients(), "SCRAM-SHA-256").unwrap();
    assert_eq!(c.api_versions_version(), 0);
    assert_eq!(c.max_receive_size(), 512 * 1024);
    assert_eq!(c.software().0, "ksasl");
    let s = ServerConfig::new(servers()).unwrap();
    assert_eq!(s.failed_authentication_delay_ms(), 100);
    assert_eq!(s.max_reauth_ms("PLAIN"), 0);
    assert_eq!(
        s.enabled_mechanisms(),
        ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    );
    let mut b = ServerConfig::builder(servers());
    b.set_max_reauth_ms(0)
        .set_failed_authentication_delay_ms(0)
        .set_max_receive_size(i64::from(i32::MAX))
        .set_api_version(18, 0, 5)
        .set_api_version(0, 3, 11)
        .set_max_reauth_ms_for("PLAIN", 1_000)
        .set_enabled_mechanisms(vec!["SCRAM-SHA-512".into()]);
    let s = b.build().unwrap();
    assert_eq!(s.max_reauth_ms("PLAIN"), 1_000);
    assert_eq!(s.max_reauth_ms("SCRAM-SHA-512"), 0);
    assert_eq!(s.enabled_mechanisms(), ["SCRAM-SHA-512"]);
    let mut b = ClientConfig::builder(clients(), "PLAIN");
    b.set_known_versions(0, None);
    assert_eq!(b.build().unwrap().known_versions(), Some((0, None)));
    b.set_known_versions(1, Some(2)).set_api_versions_version(5);
    assert_eq!(b.build().unwrap().known_versions(), Some((1, Some(2))));
    let r = RefreshConfig::builder()
        .window_factor(1.0)
        .window_jitter(0.25)
        .min_period_seconds(900)
        .buffer_seconds(3600)
        .retry_backoff_ms(1)
        .retry_backoff_max_ms(1)
        .build()
        .unwrap();
    assert_eq!(r.window_factor(), 1.0);
}

#[test]
fn a_failed_build_leaves_the_builder_usable() {
    let mut b = ServerConfig::builder(servers());
    b.set_max_reauth_ms(-1);
    assert_eq!(b.build().unwrap_err().code(), ErrorCode::InvalidConfig);
    b.set_max_reauth_ms(60_000);
    assert_eq!(b.build().unwrap().max_reauth_ms("PLAIN"), 60_000);
}
