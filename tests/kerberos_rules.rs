//! Kafka's Kerberos principal-to-local rules: every case of `tests/vectors/kerberos_rules.json`
//! (the table the Java binding's tests check against kafka-clients) through ksasl.

use ksasl::error::{Error, ErrorCode};
use ksasl::mech::gssapi::short_namer::{
    parse_rule_list, KerberosName, KerberosShortNamer, REASON_DETAIL,
};
use serde_json::Value;

fn table(key: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/kerberos_rules.json"
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v[key].as_array().unwrap().clone()
}

fn cases() -> Vec<Value> {
    table("cases")
}

fn run(case: &Value) -> Result<String, Error> {
    let rules: Vec<&str> = case["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let namer = KerberosShortNamer::new(case["default_realm"].as_str(), &rules)?;
    let name = KerberosName::parse(case["principal"].as_str().unwrap())?;
    namer.short_name(&name)
}

/// The code ksasl gives each kind of failure in the table.
fn code_of(kind: &str) -> ErrorCode {
    match kind {
        "malformed_name" => ErrorCode::InvalidArgument,
        "no_matching_rule" => ErrorCode::KerberosNameUnmapped,
        "invalid_rule" | "bad_format" | "bad_replacement" | "unsupported_regex" => {
            ErrorCode::InvalidConfig
        }
        other => panic!("unknown error kind {other}"),
    }
}

#[test]
fn every_case_maps_as_the_table_says() {
    let cases = cases();
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let outcome = run(case);
        let want_error = case["ksasl_error"].as_str().or(case["error"].as_str());
        match (want_error, &outcome) {
            (None, Ok(short)) if Some(short.as_str()) == case["expected"].as_str() => {}
            (Some(kind), Err(e))
                if e.code() == code_of(kind) && e.detail(REASON_DETAIL) == Some(kind) =>
            {
                // Kafka's own texts, where the table records one (not for ksasl-only errors).
                let message = case["message"]
                    .as_str()
                    .filter(|_| case["ksasl_error"].is_null());
                if let Some(message) = message {
                    if e.message() != message {
                        failures.push(format!("{name}: message {:?}", e.message()));
                    }
                }
            }
            _ => failures.push(format!("{name}: got {outcome:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn names_print_back_as_parsed() {
    for case in cases() {
        if let Ok(name) = KerberosName::parse(case["principal"].as_str().unwrap()) {
            assert_eq!(name.to_string(), case["principal"].as_str().unwrap());
        }
    }
}

#[test]
fn config_values_read_as_kafka_reads_them() {
    for case in table("config_values") {
        let got = parse_rule_list(case["value"].as_str().unwrap());
        match (case["rules"].as_array(), got) {
            (Some(rules), Ok(got)) => {
                let want: Vec<&str> = rules.iter().map(|r| r.as_str().unwrap()).collect();
                assert_eq!(got, want, "{case}");
            }
            (None, Err(e)) => {
                assert_eq!(e.code(), ErrorCode::InvalidConfig);
                assert_eq!(Some(e.message()), case["error"].as_str());
            }
            (_, got) => panic!("{case}: got {got:?}"),
        }
    }
}
