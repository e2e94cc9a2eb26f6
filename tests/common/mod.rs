//! Helpers shared by the integration tests.
#![allow(dead_code)]

use ksasl::{AuthOutcome, ClientExchange, ClientStep, Error, ServerExchange, ServerStep};

pub const NOW: i64 = 1_700_000_000_000;

/// Which side failed an exchange.
#[derive(Debug)]
pub enum Failure {
    Client(Error),
    Server(Error),
}

impl Failure {
    pub fn code(&self) -> ksasl::ErrorCode {
        match self {
            Failure::Client(e) | Failure::Server(e) => e.code(),
        }
    }
}

/// Runs a whole exchange in memory. Returns the outcome and every message in order
/// (client messages at even positions).
pub fn exchange(
    client: &mut ClientExchange,
    server: &mut ServerExchange,
) -> Result<(AuthOutcome, Vec<Vec<u8>>), Failure> {
    let mut transcript = Vec::new();
    let (mut to_server, mut client_done) = match client.start(NOW).map_err(Failure::Client)? {
        ClientStep::Send(m) => (m, false),
        ClientStep::Done(m) => (m.unwrap_or_default(), true),
        ClientStep::Pending(_) => panic!("built-in mechanisms answer at once"),
    };
    loop {
        transcript.push(to_server.clone());
        let step = server.step(&to_server, NOW).map_err(Failure::Server)?;
        match step {
            ServerStep::Challenge(c) => {
                transcript.push(c.clone());
                assert!(!client_done, "server challenged a finished client");
                match client.step(&c, NOW).map_err(Failure::Client)? {
                    ClientStep::Send(m) => to_server = m,
                    ClientStep::Done(m) => {
                        client_done = true;
                        to_server = m.unwrap_or_default();
                    }
                    ClientStep::Pending(_) => panic!("built-in mechanisms answer at once"),
                }
            }
            ServerStep::Done { message, outcome } => {
                let message = message.unwrap_or_default();
                transcript.push(message.clone());
                if !client_done {
                    match client.step(&message, NOW).map_err(Failure::Client)? {
                        ClientStep::Done(None) => {}
                        other => {
                            panic!("client did not finish on the server's last message: {other:?}")
                        }
                    }
                }
                return Ok((outcome, transcript));
            }
            ServerStep::NeedCredential(r) => panic!("unexpected credential request {r:?}"),
            ServerStep::Pending(_) => panic!("built-in mechanisms answer at once"),
        }
    }
}

/// Lower-case hex of bytes.
pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of an even-length hex string.
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0);
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
