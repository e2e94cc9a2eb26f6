//! The `ksasl` command-line tool, run as a user runs it: exit codes, what it prints, and that
//! no secret it is given ever appears in its output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use ksasl::{ScramCredential, ScramMechanism};

const SECRET: &str = "hunter2-secret-XYZ";

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksasl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ksasl runs");
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        // The tool may exit (a usage error) before it reads its input.
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(SECRET), "the secret leaked: {all}");
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn help_and_usage_errors() {
    for args in [
        &["--help"][..],
        &["config", "--help"],
        &["scram-credential", "--help"],
        &["token", "--help"],
    ] {
        let o = run(args, "");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(stdout(&o).contains("Usage"), "{args:?}");
    }
    assert_eq!(run(&["version"], "").status.code(), Some(0));
    for args in [
        &["nope"][..],
        &["config", "check"],
        &["config", "check", "-", "--bogus", "x"],
        &["token", "decode"],
    ] {
        let o = run(args, "");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).starts_with("ksasl: "), "{args:?}");
    }
    // A password on the command line is refused.
    let o = run(
        &["scram-credential", "--mechanism", "SCRAM-SHA-256", SECRET],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn config_check() {
    let clean = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"alice\" password=\"{SECRET}\";\n"
    );
    let o = run(&["config", "check", "-"], &clean);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[client]\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\ncredential=password\n\
         username=alice\npassword=[hidden]\ntokenauth=false\n"
    );
    let o = run(
        &["config", "check", "-"],
        &format!("{clean}sasl.mechansim=PLAIN\n"),
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stdout(&o).ends_with("unknown sasl.mechansim\n"));
    let o = run(&["config", "check", "-"], &clean.replace(";\n", "\n"));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "ksasl: INVALID_CONFIG: sasl.jaas.config: JAAS config entry not terminated by semi-colon\n"
    );
    // A broker's file: every SASL listener, or the one named.
    let broker = format!(
        "listeners=A://127.0.0.1:9092,B://127.0.0.1:9093\n\
         listener.security.protocol.map=A:SASL_PLAINTEXT,B:SASL_SSL\n\
         sasl.enabled.mechanisms=PLAIN\n\
         listener.name.a.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"{SECRET}\";\n\
         listener.name.b.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_bob=\"{SECRET}\";\n"
    );
    let dir = std::env::temp_dir().join(format!("ksasl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("server.properties");
    std::fs::write(&file, &broker).unwrap();
    let o = run(&["config", "check", file.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("[listener A]\n") && out.contains("[listener B]\nlistener=B\n"),
        "{out}"
    );
    assert!(out.contains("PLAIN.users=bob\n"));
    let o = run(
        &["config", "check", file.to_str().unwrap(), "--listener", "b"],
        "",
    );
    assert!(stdout(&o).starts_with("[listener b]\n") && !stdout(&o).contains("alice"));
    let o = run(
        &["config", "check", dir.join("missing").to_str().unwrap()],
        "",
    );
    assert_eq!(o.status.code(), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn field<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name} in {out}"))
}

#[test]
fn scram_credential() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    for (mechanism, iterations) in [
        (ScramMechanism::Sha256, "4096"),
        (ScramMechanism::Sha512, "8192"),
    ] {
        let o = run(
            &[
                "scram-credential",
                "--mechanism",
                mechanism.name(),
                "--iterations",
                iterations,
                "--user",
                "alice",
            ],
            &format!("{SECRET}\n"),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        let credential =
            ScramCredential::from_kafka_string(mechanism, field(&out, "credential")).unwrap();
        assert!(credential.verify_password(SECRET.as_bytes()));
        assert!(!credential.verify_password(b"another"));
        assert_eq!(credential.iterations().to_string(), iterations);
        let salt = b64.decode(field(&out, "salt")).unwrap();
        assert_eq!(salt, credential.salt());
        let salted = b64.decode(field(&out, "salted_password")).unwrap();
        let iterations: u32 = iterations.parse().unwrap();
        assert_eq!(
            salted,
            mechanism
                .salted_password(SECRET.as_bytes(), &salt, iterations)
                .expose()
        );
        assert!(field(&out, "kafka-storage").contains(&format!(
            "{}=[name=alice,iterations={iterations},",
            mechanism.name()
        )));
    }
    // Two runs never share a salt.
    let a = stdout(&run(
        &["scram-credential", "--mechanism", "SCRAM-SHA-256"],
        "pw\n",
    ));
    let b = stdout(&run(
        &["scram-credential", "--mechanism", "SCRAM-SHA-256"],
        "pw\n",
    ));
    assert_ne!(field(&a, "salt"), field(&b, "salt"));
    for (args, stdin) in [
        (
            &["scram-credential", "--mechanism", "SCRAM-SHA-1"][..],
            "pw\n",
        ),
        (
            &[
                "scram-credential",
                "--mechanism",
                "SCRAM-SHA-256",
                "--iterations",
                "100",
            ],
            "pw\n",
        ),
    ] {
        assert_ne!(run(args, stdin).status.code(), Some(0), "{args:?}");
    }
    let o = run(&["scram-credential", "--mechanism", "SCRAM-SHA-256"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no password"));
    // Setting it remotely needs the whole target: a user, a bootstrap and a configuration
    // (usage errors, before any password is read or connection made).
    for (args, says) in [
        (
            &["--bootstrap", "127.0.0.1:1", "--config", "x.properties"][..],
            "--user",
        ),
        (
            &["--bootstrap", "127.0.0.1:1", "--user", "u"][..],
            "go together",
        ),
        (
            &["--config", "x.properties", "--user", "u"][..],
            "go together",
        ),
    ] {
        let mut all = vec!["scram-credential", "--mechanism", "SCRAM-SHA-256"];
        all.extend_from_slice(args);
        let o = run(&all, "pw\n");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // A broker that cannot be reached: an error, exit 1, after the credential was printed.
    let dir = std::env::temp_dir().join(format!("ksasl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let props = dir.join("admin.properties");
    std::fs::write(
        &props,
        "sasl.mechanism=PLAIN\nsecurity.protocol=SASL_PLAINTEXT\nsasl.username=a\nsasl.password=b\n",
    )
    .unwrap();
    let o = run(
        &[
            "scram-credential",
            "--mechanism",
            "SCRAM-SHA-256",
            "--user",
            "u",
            "--bootstrap",
            "127.0.0.1:1",
            "--config",
            props.to_str().unwrap(),
        ],
        "pw\n",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn token_decode_and_validate() {
    let vectors: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/vectors/jwt.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let now = vectors["now_ms"].as_i64().unwrap().to_string();
    let dir = std::env::temp_dir().join(format!("ksasl-cli-jwks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, vectors["jwks"].to_string()).unwrap();
    let issuer = vectors["issuer"].as_str().unwrap();
    let audience = vectors["audience"].as_str().unwrap();
    let mut accepted = 0;
    let mut refused = 0;
    for t in vectors["tokens"].as_array().unwrap() {
        let token = t["token"].as_str().unwrap();
        let expect = t["expect"].as_str().unwrap();
        let o = run(
            &[
                "token",
                "validate",
                "-",
                "--jwks",
                jwks.to_str().unwrap(),
                "--issuer",
                issuer,
                "--audience",
                audience,
                "--now-ms",
                &now,
            ],
            token,
        );
        let out = stdout(&o);
        assert!(!out.contains(token), "the token is never printed");
        match expect {
            // No HMAC secret is given, and iat is not checked (Kafka's defaults).
            "ok" | "ok-unless-iat-validation" => {
                assert_eq!(
                    o.status.code(),
                    Some(0),
                    "{}: {out}{}",
                    t["name"],
                    stderr(&o)
                );
                assert!(out.contains("verdict: accepted\nprincipal: "), "{out}");
                accepted += 1;
            }
            code => {
                let code = if code == "ok-with-hmac-secret" {
                    "TOKEN_ALGORITHM_REFUSED"
                } else {
                    code
                };
                assert_eq!(o.status.code(), Some(1), "{}: {out}", t["name"]);
                assert!(
                    out.contains(&format!("verdict: refused\ncode: {code}\n")),
                    "{}: {out}",
                    t["name"]
                );
                refused += 1;
            }
        }
        // decode shows the claims of any well-formed token without judging it.
        let o = run(&["token", "decode", "-", "--now-ms", &now], token);
        if o.status.code() == Some(0) {
            assert!(stdout(&o).starts_with("header: {"));
        }
    }
    assert!(
        accepted >= 1 && refused >= 5,
        "{accepted} accepted, {refused} refused"
    );
    // Unsecured tokens: decode says so; the JWKS validator refuses them.
    let u = vectors["unsecured"][0]["token"].as_str().unwrap();
    let o = run(&["token", "decode", u, "--now-ms", &now], "");
    assert!(stdout(&o).contains("signed: no"), "{}", stdout(&o));
    let o = run(
        &[
            "token",
            "validate",
            u,
            "--jwks",
            jwks.to_str().unwrap(),
            "--now-ms",
            &now,
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["token", "decode", "-"], "not-a-token");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("TOKEN_MALFORMED") && !stderr(&o).contains("not-a-token"));
    std::fs::remove_dir_all(&dir).unwrap();
}
