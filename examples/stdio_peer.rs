//! A ksasl client or server that speaks SASL over stdin/stdout, one base64 message per line,
//! so that independent implementations (Python's `scramp` in `tests/interop`) can drive it.
//!
//! ```text
//! stdio_peer client MECHANISM USERNAME PASSWORD
//! stdio_peer server MECHANISM USERNAME PASSWORD [ITERATIONS]
//! ```
//!
//! Output lines: `SEND <b64>` (client message), `CHALLENGE <b64>` (server message),
//! `DONE <b64 or -> [principal]` (finished; the server names the principal),
//! `ERR <code> <NAME> <message>`. Input lines: the peer's messages in base64.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ksasl::*;

fn now_ms() -> i64 {
    // The host's clock; the library itself never reads one.
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn emit(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn fail(e: &Error) -> ExitCode {
    emit(format!(
        "ERR {} {} {}",
        e.code().as_u32(),
        e.code().name(),
        e.message()
    ));
    ExitCode::from(1)
}

fn read_message(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Option<Vec<u8>> {
    let line = lines.next()?.ok()?;
    STANDARD.decode(line.trim()).ok()
}

fn run_client(mech: &str, user: &str, password: &str) -> Result<ExitCode> {
    let cred = Arc::new(PasswordCredential::new(user, password)?);
    let mut client = MechanismRegistry::password_clients(cred).client(mech)?;
    let mut lines = std::io::stdin().lock().lines();
    let mut step = client.start(now_ms())?;
    loop {
        match step {
            ClientStep::Send(m) => emit(format!("SEND {}", STANDARD.encode(m))),
            ClientStep::Done(m) => {
                emit(format!(
                    "DONE {}",
                    m.map(|m| STANDARD.encode(m)).unwrap_or_else(|| "-".into())
                ));
                return Ok(ExitCode::SUCCESS);
            }
            ClientStep::Pending(_) => {
                return Err(Error::new(
                    ErrorCode::Internal,
                    "built-in mechanisms answer at once",
                ))
            }
        }
        let Some(challenge) = read_message(&mut lines) else {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "input ended or was not base64",
            ));
        };
        step = client.step(&challenge, now_ms())?;
    }
}

fn run_server(mech: &str, user: &str, password: &str, iterations: u32) -> Result<ExitCode> {
    let store = Arc::new(CredentialStore::new());
    store.add_user(user, password, iterations, &OsRandom)?;
    let mut server = MechanismRegistry::password_servers(Some(store)).server(mech)?;
    let mut lines = std::io::stdin().lock().lines();
    loop {
        let Some(response) = read_message(&mut lines) else {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "input ended or was not base64",
            ));
        };
        match server.step(&response, now_ms())? {
            ServerStep::Challenge(c) => emit(format!("CHALLENGE {}", STANDARD.encode(c))),
            ServerStep::Done { message, outcome } => {
                let m = message
                    .map(|m| STANDARD.encode(m))
                    .unwrap_or_else(|| "-".into());
                emit(format!("DONE {m} {}", outcome.principal));
                return Ok(ExitCode::SUCCESS);
            }
            ServerStep::NeedCredential(_) => {
                return Err(Error::new(ErrorCode::Internal, "the store answers at once"))
            }
            ServerStep::Pending(_) => {
                return Err(Error::new(
                    ErrorCode::Internal,
                    "built-in mechanisms answer at once",
                ))
            }
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["client", mech, user, password] => run_client(mech, user, password),
        ["server", mech, user, password] => run_server(mech, user, password, 4096),
        ["server", mech, user, password, iterations] => match iterations.parse() {
            Ok(i) => run_server(mech, user, password, i),
            Err(_) => Err(Error::new(
                ErrorCode::InvalidArgument,
                "ITERATIONS must be a number",
            )),
        },
        _ => {
            eprintln!("usage: stdio_peer client|server MECHANISM USERNAME PASSWORD [ITERATIONS]");
            return ExitCode::from(2);
        }
    };
    result.unwrap_or_else(|e| fail(&e))
}
