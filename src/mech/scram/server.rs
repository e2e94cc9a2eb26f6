//! The SCRAM server.

use super::messages::{ClientFinal, ClientFirst, ServerFinal, ServerFirst};
use crate::credential::scram::{ScramCredential, ScramMechanism, MIN_ITERATIONS};
use crate::credential::{CredentialAnswer, CredentialRequest, CredentialSecret, ServerCredential};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{Authenticated, MechServerStep, ServerMechanism};
use crate::random::{kafka_random_string, SharedRandom};
use crate::secret::ct_eq;

/// Options of a SCRAM server.
#[derive(Clone, Debug, Default)]
pub struct ScramServerOptions {
    /// Where server nonces (and salts for password credentials) come from.
    pub random: SharedRandom,
    /// A fixed server nonce, for test vectors only.
    pub fixed_nonce: Option<String>,
}

enum State {
    Initial,
    WaitingForCredential(ClientFirst),
    SentFirst(Box<Pending>),
    Done,
}

struct Pending {
    first: ClientFirst,
    /// `r=<nonce>,s=...`: the combined nonce is `server_first[2..2 + nonce_len]`.
    server_first: String,
    nonce_len: usize,
    /// The user's credential (this login's own copy).
    scram: ScramCredential,
    identity: Authenticated,
}

/// The server side of SCRAM-SHA-256 / SCRAM-SHA-512. It asks for the user's credential
/// with a [`CredentialRequest`] after the client's first message.
pub struct ScramServer {
    mechanism: ScramMechanism,
    options: ScramServerOptions,
    state: State,
}

impl ScramServer {
    /// A server for `mechanism`.
    pub fn new(mechanism: ScramMechanism, options: ScramServerOptions) -> Self {
        ScramServer {
            mechanism,
            options,
            state: State::Initial,
        }
    }

    /// Answers the client's first message once the credential lookup has answered.
    fn first_reply(
        &mut self,
        first: ClientFirst,
        answer: CredentialAnswer,
    ) -> Result<MechServerStep> {
        let token_authenticated = first.token_authenticated();
        let credential = found_credential(answer, token_authenticated)?;
        check_authzid(&first)?;
        let identity = identity_for(&first, token_authenticated, &credential)?;
        let scram = self.scram_credential(credential)?;
        self.send_first(first, scram, identity)
    }

    /// The stored SCRAM credential to check the login against (derived from a password).
    fn scram_credential(&self, credential: ServerCredential) -> Result<ScramCredential> {
        let scram = match credential.into_secret() {
            CredentialSecret::Scram(c) => {
                if c.mechanism() != self.mechanism {
                    return Err(Error::new(
                        ErrorCode::CredentialMechanismMismatch,
                        format!(
                            "a {} credential cannot serve {}",
                            c.mechanism().name(),
                            self.mechanism.name()
                        ),
                    ));
                }
                c
            }
            CredentialSecret::Password(p) => ScramCredential::generate(
                self.mechanism,
                p.expose(),
                MIN_ITERATIONS,
                self.options.random.0.as_ref(),
            )?,
        };
        if scram.iterations() < MIN_ITERATIONS {
            return Err(Error::new(
                ErrorCode::CredentialIterationsTooLow,
                format!("the stored credential has fewer than {MIN_ITERATIONS} iterations"),
            ));
        }
        Ok(scram)
    }

    /// Builds the server-first message and waits for the client's final message.
    fn send_first(
        &mut self,
        first: ClientFirst,
        scram: ScramCredential,
        identity: Authenticated,
    ) -> Result<MechServerStep> {
        let server_nonce = match &self.options.fixed_nonce {
            Some(n) => n.clone(),
            None => kafka_random_string(self.options.random.0.as_ref())?,
        };
        let nonce_len = first.nonce.len() + server_nonce.len();
        let server_first = ServerFirst::format(
            [&first.nonce, &server_nonce],
            scram.salt(),
            scram.iterations(),
        );
        let challenge = server_first.clone().into_bytes();
        self.state = State::SentFirst(Box::new(Pending {
            first,
            server_first,
            nonce_len,
            scram,
            identity,
        }));
        Ok(MechServerStep::Challenge(challenge))
    }

    fn final_reply(&mut self, p: Pending, response: &[u8]) -> Result<MechServerStep> {
        let fin = ClientFinal::parse(response)?;
        if fin.nonce != p.server_first[2..2 + p.nonce_len] {
            return Err(Error::new(
                ErrorCode::NonceMismatch,
                "Invalid client nonce in the final client message.",
            ));
        }
        if fin.channel_binding != p.first.gs2_header.as_bytes() {
            return Err(Error::malformed(
                "the channel binding attribute does not repeat the GS2 header",
            ));
        }
        let m = self.mechanism;
        if fin.proof.len() != m.hash_len() {
            return Err(Error::new(
                ErrorCode::InvalidCredentials,
                "Invalid client credentials",
            ));
        }
        let auth_message = [
            p.first.bare.as_bytes(),
            b",",
            p.server_first.as_bytes(),
            b",",
            fin.without_proof.as_bytes(),
        ];
        let signature = m.hmac(p.scram.stored_key(), &auth_message);
        let client_key = signature.xor(&fin.proof);
        if !ct_eq(&m.hash(&client_key), p.scram.stored_key()) {
            return Err(Error::new(
                ErrorCode::InvalidCredentials,
                "Invalid client credentials",
            ));
        }
        let verifier = m.hmac(p.scram.server_key(), &auth_message);
        self.state = State::Done;
        Ok(MechServerStep::Done(
            Some(ServerFinal::format(&verifier).into_bytes()),
            p.identity,
        ))
    }
}

impl ServerMechanism for ScramServer {
    fn name(&self) -> &str {
        self.mechanism.name()
    }

    fn step(&mut self, response: &[u8], _now_ms: i64) -> Result<MechServerStep> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Initial => {
                let first = ClientFirst::parse(response)?;
                let request = CredentialRequest {
                    mechanism: self.mechanism.name().to_string(),
                    username: first.username.clone(),
                    token_authenticated: first.token_authenticated(),
                };
                self.state = State::WaitingForCredential(first);
                Ok(MechServerStep::NeedCredential(request))
            }
            State::SentFirst(p) => self.final_reply(*p, response),
            State::WaitingForCredential(_) | State::Done => Err(Error::new(
                ErrorCode::WrongState,
                "SCRAM server stepped out of order",
            )),
        }
    }

    fn provide_credential(
        &mut self,
        answer: CredentialAnswer,
        _now_ms: i64,
    ) -> Result<MechServerStep> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::WaitingForCredential(first) => self.first_reply(first, answer),
            _ => Err(Error::new(
                ErrorCode::WrongState,
                "no credential was requested",
            )),
        }
    }
}

/// The credential of a lookup answer; an unknown user or token, or a failed lookup, is an error.
fn found_credential(
    answer: CredentialAnswer,
    token_authenticated: bool,
) -> Result<ServerCredential> {
    match answer {
        CredentialAnswer::Found(c) => Ok(c),
        CredentialAnswer::Unknown if token_authenticated => Err(Error::new(
            ErrorCode::UnknownToken,
            "Token Authentication failed: Invalid tokenId",
        )),
        CredentialAnswer::Unknown => Err(Error::new(
            ErrorCode::UnknownUser,
            "Authentication failed: Invalid user credentials",
        )),
        CredentialAnswer::Unavailable(why) => Err(Error::new(
            ErrorCode::CredentialLookupFailed,
            format!("credential lookup failed: {why}"),
        )),
    }
}

/// Refuses an authorization id that differs from the username (as Kafka does).
fn check_authzid(first: &ClientFirst) -> Result<()> {
    if let Some(authzid) = &first.authzid {
        if authzid != &first.username {
            return Err(Error::disclosed(
                ErrorCode::AuthzidMismatch,
                "Authentication failed: Client requested an authorization id that is different from username",
            ));
        }
    }
    Ok(())
}

/// Whom the login authenticates: a token's owner for `tokenauth`, else the username.
fn identity_for(
    first: &ClientFirst,
    token_authenticated: bool,
    credential: &ServerCredential,
) -> Result<Authenticated> {
    let mut identity = match (token_authenticated, credential.token_owner()) {
        (true, Some(owner)) => {
            let mut who = Authenticated::new(owner);
            who.token_authenticated = true;
            who.extensions.insert("tokenauth".into(), "true".into());
            who
        }
        (true, None) => {
            return Err(Error::new(
                ErrorCode::UnknownToken,
                "Token Authentication failed: the credential is not a token's",
            ))
        }
        (false, Some(_)) => {
            return Err(Error::new(
                ErrorCode::CredentialMechanismMismatch,
                "a delegation-token credential was supplied for a password login",
            ))
        }
        (false, None) => Authenticated::new(first.username.clone()),
    };
    identity.credential_expiry_ms = credential.expiry_ms();
    Ok(identity)
}
