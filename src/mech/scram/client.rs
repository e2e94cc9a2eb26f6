//! The SCRAM client.

use std::fmt;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::messages::escape_username;
use super::messages::{server_final_error, ClientFinal, ServerFinal, ServerFirst};
use crate::credential::scram::{ScramMechanism, MIN_ITERATIONS};
use crate::credential::PasswordCredential;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{ClientMechanism, ClientStep};
use crate::random::{kafka_random_string, SharedRandom};
use crate::secret::Secret;

/// The client's default cap on the iteration count a server may ask for (Kafka's maximum
/// for stored credentials).
pub const DEFAULT_MAX_ITERATIONS: u32 = 16384;
/// Options of a SCRAM client.
#[derive(Clone, Debug)]
pub struct ScramClientOptions {
    /// The most iterations the client will run for a server (default 16384). A server asking
    /// for more fails the exchange with `ITERATIONS_TOO_HIGH`.
    pub max_iterations: u32,
    /// Where nonces come from (default: the OS CSPRNG).
    pub random: SharedRandom,
    /// A fixed client nonce, for test vectors only.
    pub fixed_nonce: Option<String>,
}

impl Default for ScramClientOptions {
    fn default() -> Self {
        ScramClientOptions {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            random: SharedRandom::default(),
            fixed_nonce: None,
        }
    }
}

enum State {
    Initial,
    SentFirst { nonce: String, bare: String },
    SentFinal { expected_signature: Secret },
    Done,
}

/// The client side of SCRAM-SHA-256 / SCRAM-SHA-512.
pub struct ScramClient {
    mechanism: ScramMechanism,
    credential: Arc<PasswordCredential>,
    options: ScramClientOptions,
    state: State,
}

impl fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramClient")
            .field("mechanism", &self.mechanism.name())
            .field("credential", &self.credential)
            .finish()
    }
}

impl ScramClient {
    /// A client for `mechanism` proving `credential`.
    pub fn new(
        mechanism: ScramMechanism,
        credential: Arc<PasswordCredential>,
        options: ScramClientOptions,
    ) -> Result<Self> {
        if options.max_iterations < MIN_ITERATIONS {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!("max_iterations must be at least {MIN_ITERATIONS}"),
            ));
        }
        if let Some(n) = &options.fixed_nonce {
            if n.is_empty() || !n.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b',') {
                return Err(Error::misuse(
                    "a fixed nonce must be non-empty printable ASCII without ','",
                ));
            }
        }
        Ok(ScramClient {
            mechanism,
            credential,
            options,
            state: State::Initial,
        })
    }

    /// Checks the server's nonce extends ours and its iteration count is within our bounds.
    fn check_server_first(&self, first: &ServerFirst, nonce: &str) -> Result<()> {
        if !first.nonce.starts_with(nonce) || first.nonce.len() == nonce.len() {
            return Err(Error::new(
                ErrorCode::NonceMismatch,
                "Invalid server nonce: it does not extend the client nonce",
            ));
        }
        if first.iterations < MIN_ITERATIONS {
            return Err(Error::new(
                ErrorCode::IterationsTooLow,
                format!(
                    "Requested iterations {} is less than the minimum {MIN_ITERATIONS} for {}",
                    first.iterations,
                    self.mechanism.name()
                ),
            ));
        }
        if first.iterations > self.options.max_iterations {
            return Err(Error::new(
                ErrorCode::IterationsTooHigh,
                format!(
                    "Requested iterations {} is more than this client's maximum {}",
                    first.iterations, self.options.max_iterations
                ),
            ));
        }
        Ok(())
    }

    /// Derives the keys and returns the client-final message with the signature to expect.
    fn client_final(
        &self,
        first: &ServerFirst,
        challenge: &[u8],
        bare: &str,
    ) -> Result<(Vec<u8>, Secret)> {
        let keys = self
            .credential
            .keys(self.mechanism, &first.salt, first.iterations);
        let m = self.mechanism;
        let without_proof = ClientFinal::without_proof("n,,", &first.nonce);
        // The server-first message is ASCII (checked by the parser), so this is exact.
        let server_first = std::str::from_utf8(challenge)
            .map_err(|_| Error::new(ErrorCode::Internal, "unreachable"))?;
        let auth_message = [
            bare.as_bytes(),
            b",",
            server_first.as_bytes(),
            b",",
            without_proof.as_bytes(),
        ];
        let stored_key = m.hash(keys.client_key.expose());
        let signature = m.hmac(&stored_key, &auth_message);
        let proof = signature.xor(keys.client_key.expose());
        let expected_signature =
            Secret::from_slice(&m.hmac(keys.server_key.expose(), &auth_message));
        let message = format!("{without_proof},p={}", STANDARD.encode(&*proof)).into_bytes();
        Ok((message, expected_signature))
    }

    /// Reads the server-final message: a reported error, or a signature that must match.
    fn verify_server_final(
        &self,
        expected_signature: &Secret,
        challenge: &[u8],
    ) -> Result<ClientStep> {
        match ServerFinal::parse(challenge)? {
            ServerFinal::Error(e) => Err(server_final_error(self.mechanism.name(), &e)),
            ServerFinal::Verifier(v) => {
                if expected_signature.ct_eq(&v) {
                    Ok(ClientStep::Done(None))
                } else {
                    Err(Error::new(
                        ErrorCode::InvalidServerSignature,
                        "Invalid server signature in server final message",
                    ))
                }
            }
        }
    }
}

impl ClientMechanism for ScramClient {
    fn name(&self) -> &str {
        self.mechanism.name()
    }

    fn start(&mut self, _now_ms: i64) -> Result<ClientStep> {
        let nonce = match &self.options.fixed_nonce {
            Some(n) => n.clone(),
            None => kafka_random_string(self.options.random.0.as_ref())?,
        };
        let mut bare = format!(
            "n={},r={}",
            escape_username(self.credential.username()),
            nonce
        );
        if self.credential.token_authenticated() {
            bare.push_str(",tokenauth=true");
        }
        let message = format!("n,,{bare}").into_bytes();
        self.state = State::SentFirst { nonce, bare };
        Ok(ClientStep::Send(message))
    }

    fn step(&mut self, challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::SentFirst { nonce, bare } => {
                let first = ServerFirst::parse(challenge)?;
                self.check_server_first(&first, &nonce)?;
                let (message, expected_signature) = self.client_final(&first, challenge, &bare)?;
                self.state = State::SentFinal { expected_signature };
                Ok(ClientStep::Send(message))
            }
            State::SentFinal { expected_signature } => {
                self.verify_server_final(&expected_signature, challenge)
            }
            // The authenticator wrapper never steps before start or after done.
            State::Initial | State::Done => Err(Error::new(
                ErrorCode::WrongState,
                "SCRAM client stepped out of order",
            )),
        }
    }
}
