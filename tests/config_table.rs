//! Real-world client and broker configurations (`tests/vectors/config_table.json`) through
//! `ksasl::config`: every valid one must give the expected effective settings, unknown names
//! and number of warnings; every invalid one must fail with `INVALID_CONFIG` and a message
//! containing the expected text. No password of the table may appear in any output (effective
//! settings, warnings, unknown names, `Debug`, error messages).
//!
//! All mismatches are collected and reported together, each with its entry's name.

use ksasl::config::{ClientSettings, ServerSettings};
use ksasl::ErrorCode;
use serde_json::Value;

/// Every password, secret and key in the table contains this marker.
const SECRET: &str = "hunter2-secret-XYZ";

fn table() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/config_table.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn s<'a>(entry: &'a Value, key: &str) -> &'a str {
    entry[key]
        .as_str()
        .unwrap_or_else(|| panic!("entry {}: no string {key:?}", entry["name"]))
}

/// What a configuration produced, whichever side it was read for.
struct Outcome {
    effective: Vec<(String, String)>,
    unknown: Vec<String>,
    warnings: Vec<String>,
    debug: String,
}

fn run(entry: &Value) -> ksasl::Result<Outcome> {
    let outcome = run_direct(entry);
    // `ksasl::config::check`, which every binding calls, reads the same.
    let listener = (s(entry, "side") == "server").then(|| s(entry, "listener"));
    let via_check = ksasl::config::check(s(entry, "properties"), listener);
    match (&outcome, &via_check) {
        (Ok(o), Ok(r)) => {
            assert_eq!(r.len(), 1, "entry {}", entry["name"]);
            assert_eq!(
                (&o.effective, &o.unknown, &o.warnings),
                (&r[0].effective, &r[0].unknown, &r[0].warnings),
                "entry {}: check() differs",
                entry["name"]
            );
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "entry {}: check() differs", entry["name"]),
        _ => panic!("entry {}: check() differs: {via_check:?}", entry["name"]),
    }
    outcome
}

fn run_direct(entry: &Value) -> ksasl::Result<Outcome> {
    let text = s(entry, "properties");
    match s(entry, "side") {
        "client" => ClientSettings::from_text(text).map(|c| Outcome {
            effective: c.effective(),
            unknown: c.unknown.clone(),
            warnings: c.warnings.clone(),
            debug: format!("{c:?}"),
        }),
        "server" => ServerSettings::from_text(text, s(entry, "listener")).map(|c| Outcome {
            effective: c.effective(),
            unknown: c.unknown.clone(),
            warnings: c.warnings.clone(),
            debug: format!("{c:?}"),
        }),
        other => panic!("entry {}: side {other:?}", entry["name"]),
    }
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .expect("effective is a list")
        .iter()
        .map(|p| {
            let p = p.as_array().expect("a [key, value] pair");
            assert_eq!(p.len(), 2, "a [key, value] pair: {p:?}");
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list of strings")
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The differing lines of two pair lists, for a readable report.
fn diff(expected: &[(String, String)], actual: &[(String, String)]) -> String {
    let mut out = String::new();
    let n = expected.len().max(actual.len());
    for i in 0..n {
        let e = expected.get(i);
        let a = actual.get(i);
        if e != a {
            out.push_str(&format!(
                "\n      [{i}] expected {e:?}\n      [{i}]   actual {a:?}"
            ));
        }
    }
    out
}

fn check_secret(name: &str, what: &str, text: &str, problems: &mut Vec<String>) {
    if text.contains(SECRET) {
        problems.push(format!("{name}: a password appears in {what}: {text}"));
    }
}

fn check_valid(entry: &Value, problems: &mut Vec<String>) {
    let name = s(entry, "name");
    let out = match run(entry) {
        Ok(o) => o,
        Err(e) => {
            problems.push(format!(
                "{name}: expected a valid configuration, got {:?}: {}",
                e.code(),
                e.message()
            ));
            check_secret(name, "the error", e.message(), problems);
            return;
        }
    };
    let expected = pairs(&entry["effective"]);
    if out.effective != expected {
        problems.push(format!(
            "{name}: effective settings differ:{}",
            diff(&expected, &out.effective)
        ));
    }
    let unknown = strings(&entry["unknown"]);
    if out.unknown != unknown {
        problems.push(format!(
            "{name}: unknown names: expected {unknown:?}, actual {:?}",
            out.unknown
        ));
    }
    let warnings = entry["warnings"].as_u64().expect("warnings is a count") as usize;
    if out.warnings.len() != warnings {
        problems.push(format!(
            "{name}: expected {warnings} warning(s), got {}: {:?}",
            out.warnings.len(),
            out.warnings
        ));
    }
    for (k, v) in &out.effective {
        check_secret(name, &format!("effective {k}"), v, problems);
    }
    for w in &out.warnings {
        check_secret(name, "a warning", w, problems);
    }
    for u in &out.unknown {
        check_secret(name, "the unknown names", u, problems);
    }
    check_secret(name, "Debug", &out.debug, problems);
}

fn check_invalid(entry: &Value, problems: &mut Vec<String>) {
    let name = s(entry, "name");
    let want = s(entry, "error");
    match run(entry) {
        Ok(o) => problems.push(format!(
            "{name}: expected an error containing {want:?}, got a valid configuration: {:?} \
             (warnings {:?})",
            o.effective, o.warnings
        )),
        Err(e) => {
            if e.code() != ErrorCode::InvalidConfig {
                problems.push(format!(
                    "{name}: expected INVALID_CONFIG, got {:?}: {}",
                    e.code(),
                    e.message()
                ));
            }
            if !e.message().contains(want) {
                problems.push(format!(
                    "{name}: expected an error containing {want:?}, got: {}",
                    e.message()
                ));
            }
            check_secret(name, "the error", e.message(), problems);
            check_secret(name, "the error's Display", &e.to_string(), problems);
            check_secret(name, "the error's Debug", &format!("{e:?}"), problems);
        }
    }
}

#[test]
fn config_table() {
    let t = table();
    let valid = t["valid"].as_array().expect("valid");
    let invalid = t["invalid"].as_array().expect("invalid");
    assert!(valid.len() >= 32, "only {} valid entries", valid.len());
    assert!(
        invalid.len() >= 32,
        "only {} invalid entries",
        invalid.len()
    );

    // Names must be unique, so a report names one entry.
    let mut names: Vec<&str> = valid.iter().chain(invalid).map(|e| s(e, "name")).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "duplicate entry names");

    let mut problems = Vec::new();
    for entry in valid {
        check_valid(entry, &mut problems);
    }
    for entry in invalid {
        check_invalid(entry, &mut problems);
    }
    if !problems.is_empty() {
        panic!(
            "{} mismatch(es) in config_table.json ({} valid, {} invalid entries):\n  {}",
            problems.len(),
            valid.len(),
            invalid.len(),
            problems.join("\n  ")
        );
    }
}
