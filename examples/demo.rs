//! `make demo`: a ksasl client and server authenticate in one process with every built-in
//! mechanism (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER), printing each message with its secrets
//! redacted, and show how failures look on both sides.

use std::sync::Arc;

use ksasl::mech::redact;
use ksasl::*;

#[path = "demo_kafka.rs"]
mod demo_kafka;

const NOW: i64 = 1_795_000_000_000; // the host supplies time; the library never reads a clock

fn show(from_client: bool, mech: &str, bytes: &[u8]) {
    let arrow = if from_client {
        "client -> server"
    } else {
        "server -> client"
    };
    let text = redact(mech, bytes, from_client);
    println!(
        "  {arrow}  {}",
        if text.is_empty() {
            "(empty)".to_string()
        } else {
            text
        }
    );
}

/// The built-in mechanisms never hand work to the host.
const NOT_DEFERRED: &str = "built-in mechanisms answer at once";

/// Runs one exchange, printing every message. Returns the server's outcome, or what the
/// client learns when the server fails it (as it would from a Kafka broker's error 58).
fn run(
    client: &mut ClientExchange,
    server: &mut ServerExchange,
) -> std::result::Result<AuthOutcome, String> {
    let mech = client.mechanism().to_string();
    let (mut msg, mut client_done) = match client.start(NOW).map_err(|e| e.to_string())? {
        ClientStep::Send(m) => (m, false),
        ClientStep::Done(m) => (m.unwrap_or_default(), true),
        ClientStep::Pending(_) => return Err(NOT_DEFERRED.into()),
    };
    loop {
        show(true, &mech, &msg);
        let step = match server.step(&msg, NOW) {
            Ok(step) => step,
            Err(e) => {
                let told = e.client_message(&mech, false);
                let seen = client.server_failed(Some(&told));
                let details: Vec<String> = seen
                    .details()
                    .iter()
                    .filter(|(k, _)| k != "server_message")
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                return Err(format!(
                    "server: {e}\n     client: {} \"{told}\"{}",
                    seen.code(),
                    if details.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", details.join(", "))
                    }
                ));
            }
        };
        match step {
            ServerStep::Challenge(c) => {
                show(false, &mech, &c);
                match client.step(&c, NOW).map_err(|e| e.to_string())? {
                    ClientStep::Send(m) => msg = m,
                    ClientStep::Done(m) => {
                        client_done = true;
                        msg = m.unwrap_or_default();
                    }
                    ClientStep::Pending(_) => return Err(NOT_DEFERRED.into()),
                }
            }
            ServerStep::Done { message, outcome } => {
                let message = message.unwrap_or_default();
                show(false, &mech, &message);
                if !client_done {
                    client.step(&message, NOW).map_err(|e| e.to_string())?;
                }
                return Ok(outcome);
            }
            ServerStep::NeedCredential(r) => {
                return Err(format!("unexpected credential request for {}", r.username))
            }
            ServerStep::Pending(_) => return Err(NOT_DEFERRED.into()),
        }
    }
}

fn report(r: std::result::Result<AuthOutcome, String>) {
    match r {
        Ok(o) => {
            let expiry = o
                .credential_expiry_ms
                .map(|e| format!(", credential expires in {} s", (e - NOW) / 1000))
                .unwrap_or_default();
            let token = if o.principal.token_authenticated {
                " (delegation token)"
            } else {
                ""
            };
            println!(
                "  => authenticated {}{token} with {}{expiry}\n",
                o.principal, o.mechanism
            );
        }
        Err(e) => println!("  => refused: {e}\n"),
    }
}

fn main() -> Result<()> {
    println!(
        "ksasl {} demo: client and server in one process, secrets redacted\n",
        VERSION
    );

    // The broker side: one user, and a delegation token owned by that user.
    let store = Arc::new(CredentialStore::new());
    store.add_user("alice", "alice-secret", 4096, &OsRandom)?;
    let token_hmac =
        "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==";
    let token_cred = ScramCredential::generate(
        ScramMechanism::Sha256,
        token_hmac.as_bytes(),
        4096,
        &OsRandom,
    )?;
    store.set_token(
        "AAECAwQFBgcICQoLDA0ODw",
        ScramMechanism::Sha256,
        ServerCredential::scram(token_cred)
            .with_token_owner("alice")
            .with_expiry_ms(NOW + 86_400_000),
    )?;
    let servers = MechanismRegistry::password_servers(Some(store));
    println!(
        "server mechanisms: {}\n",
        servers.server_mechanisms().join(", ")
    );

    // The client side.
    let alice = Arc::new(PasswordCredential::new("alice", "alice-secret")?);
    let clients = MechanismRegistry::password_clients(alice.clone());
    for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        println!("== {mech} ==");
        report(run(&mut clients.client(mech)?, &mut servers.server(mech)?));
    }

    println!("== SCRAM-SHA-256 re-authentication (keys cached: no PBKDF2 on the client) ==");
    report(run(
        &mut clients.client("SCRAM-SHA-256")?,
        &mut servers.server("SCRAM-SHA-256")?,
    ));
    println!("  client key sets cached: {}\n", alice.cached_key_sets());

    println!("== SCRAM-SHA-256 with a delegation token (tokenauth=true) ==");
    let token = MechanismRegistry::password_clients(Arc::new(
        PasswordCredential::delegation_token("AAECAwQFBgcICQoLDA0ODw", token_hmac)?,
    ));
    report(run(
        &mut token.client("SCRAM-SHA-256")?,
        &mut servers.server("SCRAM-SHA-256")?,
    ));

    // OAUTHBEARER with Kafka's unsecured (alg: none) tokens and validator.
    let mut oauth_servers = MechanismRegistry::new();
    let validator = UnsecuredValidator::new(UnsecuredValidatorConfig {
        required_scope: vec!["kafka".into()],
        ..Default::default()
    })?;
    oauth_servers
        .register_oauthbearer_server(Arc::new(CachingValidator::new(Arc::new(validator), 1024)));
    let good = UnsecuredTokenBuilder::for_principal("alice")
        .list_claim("scope", &["kafka"])?
        .build(NOW)?;
    let ext = SaslExtensions::from_pairs([
        ("logicalCluster", "lkc-demo"),
        ("identityPoolId", "pool-demo"),
    ])?;
    println!("== OAUTHBEARER (unsecured JWT, SASL extensions) ==");
    let mut c = ClientExchange::new(Box::new(OAuthBearerClient::new(good, ext)));
    report(run(&mut c, &mut oauth_servers.server("OAUTHBEARER")?));

    println!("== OAUTHBEARER with a token lacking the required scope (RFC 7628 error flow) ==");
    let unscoped = UnsecuredTokenBuilder::for_principal("alice").build(NOW)?;
    let mut c = ClientExchange::new(Box::new(OAuthBearerClient::new(
        unscoped,
        SaslExtensions::new(),
    )));
    report(run(&mut c, &mut oauth_servers.server("OAUTHBEARER")?));

    println!("== OAUTHBEARER with an expired token ==");
    let expired = UnsecuredTokenBuilder::for_principal("alice")
        .list_claim("scope", &["kafka"])?
        .lifetime_seconds(60)
        .build(NOW - 120_000)?;
    let mut c = ClientExchange::new(Box::new(OAuthBearerClient::new(
        expired,
        SaslExtensions::new(),
    )));
    report(run(&mut c, &mut oauth_servers.server("OAUTHBEARER")?));

    let wrong =
        MechanismRegistry::password_clients(Arc::new(PasswordCredential::new("alice", "guess")?));
    for mech in ["PLAIN", "SCRAM-SHA-512"] {
        println!("== {mech} with a wrong password ==");
        report(run(&mut wrong.client(mech)?, &mut servers.server(mech)?));
    }

    demo_kafka::run()
}
