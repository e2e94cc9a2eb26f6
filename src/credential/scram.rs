//! The SCRAM variants and their key derivation, and the stored SCRAM credential with Kafka's
//! text form of it: what a server keeps for a SCRAM user, below the mechanisms that use it.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest as _, Sha256, Sha512};
use zeroize::Zeroize;

use crate::error::{Error, ErrorCode, Result};
use crate::names::{SCRAM_SHA_256, SCRAM_SHA_512};
use crate::random::{kafka_random_string, RandomSource};
use crate::secret::Secret;

/// The smallest iteration count either side accepts (Kafka's minimum).
pub const MIN_ITERATIONS: u32 = 4096;
/// The two SCRAM variants Kafka supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScramMechanism {
    /// SCRAM-SHA-256.
    Sha256,
    /// SCRAM-SHA-512.
    Sha512,
}

impl ScramMechanism {
    /// The SASL mechanism name.
    pub fn name(self) -> &'static str {
        match self {
            ScramMechanism::Sha256 => SCRAM_SHA_256,
            ScramMechanism::Sha512 => SCRAM_SHA_512,
        }
    }

    /// The variant for a mechanism name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            SCRAM_SHA_256 => Some(ScramMechanism::Sha256),
            SCRAM_SHA_512 => Some(ScramMechanism::Sha512),
            _ => None,
        }
    }

    /// The variant for a mechanism name given by a host (a binding's argument), or an
    /// `INVALID_ARGUMENT` error naming it.
    pub fn try_from_name(name: &str) -> Result<Self> {
        Self::from_name(name).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{name:?} is not a SCRAM mechanism"),
            )
        })
    }

    /// Kafka's numeric type id (in `UserScramCredentialRecord` and the admin API).
    pub fn kafka_type_id(self) -> i8 {
        match self {
            ScramMechanism::Sha256 => 1,
            ScramMechanism::Sha512 => 2,
        }
    }

    /// Hash output size in bytes.
    pub fn hash_len(self) -> usize {
        match self {
            ScramMechanism::Sha256 => 32,
            ScramMechanism::Sha512 => 64,
        }
    }

    /// H(data).
    pub(crate) fn hash(self, data: &[u8]) -> Digest {
        match self {
            ScramMechanism::Sha256 => Digest::of(&Sha256::digest(data)),
            ScramMechanism::Sha512 => Digest::of(&Sha512::digest(data)),
        }
    }

    /// HMAC(key, parts concatenated).
    pub(crate) fn hmac(self, key: &[u8], parts: &[&[u8]]) -> Digest {
        fn run<M: Mac + hmac::digest::KeyInit>(key: &[u8], parts: &[&[u8]]) -> Digest {
            let mut mac = <M as hmac::digest::KeyInit>::new_from_slice(key)
                .expect("HMAC accepts keys of any length");
            for p in parts {
                mac.update(p);
            }
            Digest::of(&mac.finalize().into_bytes())
        }
        match self {
            ScramMechanism::Sha256 => run::<Hmac<Sha256>>(key, parts),
            ScramMechanism::Sha512 => run::<Hmac<Sha512>>(key, parts),
        }
    }

    /// SaltedPassword = Hi(password, salt, i), i.e. PBKDF2-HMAC with this hash.
    pub fn salted_password(self, password: &[u8], salt: &[u8], iterations: u32) -> Secret {
        let mut out = vec![0u8; self.hash_len()];
        match self {
            ScramMechanism::Sha256 => {
                super::pbkdf2::hi::<Sha256>(password, salt, iterations, &mut out)
            }
            ScramMechanism::Sha512 => {
                super::pbkdf2::hi::<Sha512>(password, salt, iterations, &mut out)
            }
        }
        Secret::new(out)
    }

    /// (ClientKey, ServerKey) for a password.
    pub(crate) fn client_and_server_keys(
        self,
        password: &[u8],
        salt: &[u8],
        iterations: u32,
    ) -> (Secret, Secret) {
        let salted = self.salted_password(password, salt, iterations);
        let client_key = Secret::from_slice(&self.hmac(salted.expose(), &[b"Client Key"]));
        let server_key = Secret::from_slice(&self.hmac(salted.expose(), &[b"Server Key"]));
        (client_key, server_key)
    }
}

/// A hash or HMAC output (at most 64 bytes) kept on the stack, so that a login's
/// intermediate values cost no allocation; wiped when dropped, since signatures and keys pass
/// through it.
#[derive(Clone)]
pub(crate) struct Digest {
    bytes: [u8; 64],
    len: usize,
}

/// Constant time, as every comparison of keys.
impl PartialEq for Digest {
    fn eq(&self, other: &Digest) -> bool {
        crate::secret::ct_eq(self, other)
    }
}

impl Eq for Digest {}

impl Digest {
    /// A copy of `out` (a SHA-256 or SHA-512 output).
    pub(crate) fn of(out: &[u8]) -> Digest {
        let mut d = Digest {
            bytes: [0; 64],
            len: out.len(),
        };
        d.bytes[..out.len()].copy_from_slice(out);
        d
    }

    /// `self` XOR `other` (of the same length): a proof from a key and a signature, or back.
    pub(crate) fn xor(&self, other: &[u8]) -> Digest {
        let mut d = Digest::of(self);
        d.bytes.iter_mut().zip(other).for_each(|(a, b)| *a ^= b);
        d
    }
}

impl std::ops::Deref for Digest {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Drop for Digest {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

/// What a SCRAM server stores for a user: salt, StoredKey, ServerKey and iteration count.
/// The password itself is not recoverable from it. A clone is a copy of its own (so a login
/// that got a store's credential touches no memory a login on another thread writes); each
/// copy's keys are wiped when it is dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential(ScramParts);

#[derive(Clone, PartialEq, Eq)]
struct ScramParts {
    mechanism: ScramMechanism,
    salt: Vec<u8>,
    /// On the struct, not the heap: a copy (one per login) costs no allocation for them.
    stored_key: Digest,
    server_key: Digest,
    iterations: u32,
}

impl fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramCredential")
            .field("mechanism", &self.0.mechanism.name())
            .field("salt", &"<redacted>")
            .field("stored_key", &"<redacted>")
            .field("server_key", &"<redacted>")
            .field("iterations", &self.0.iterations)
            .finish()
    }
}

impl ScramCredential {
    /// A credential from its parts. Keys must be as long as the mechanism's hash; the salt
    /// must not be empty; iterations must be positive (logins additionally require at least
    /// 4096).
    pub fn new(
        mechanism: ScramMechanism,
        salt: Vec<u8>,
        stored_key: Vec<u8>,
        server_key: Vec<u8>,
        iterations: u32,
    ) -> Result<Self> {
        let bad = |what: &str| {
            Error::new(
                ErrorCode::InvalidCredentialFormat,
                format!("invalid {} credential: {what}", mechanism.name()),
            )
        };
        if salt.is_empty() {
            return Err(bad("empty salt"));
        }
        if stored_key.len() != mechanism.hash_len() || server_key.len() != mechanism.hash_len() {
            return Err(bad(&format!(
                "keys must be {} bytes long",
                mechanism.hash_len()
            )));
        }
        if iterations == 0 {
            return Err(bad("iterations must be positive"));
        }
        Ok(ScramCredential(ScramParts {
            mechanism,
            salt,
            // Copied out of vectors that are wiped when they drop.
            stored_key: Digest::of(Secret::new(stored_key).expose()),
            server_key: Digest::of(Secret::new(server_key).expose()),
            iterations,
        }))
    }

    /// Derives the credential of `password` for a given salt and iteration count.
    pub fn derive(
        mechanism: ScramMechanism,
        password: &[u8],
        salt: &[u8],
        iterations: u32,
    ) -> Result<Self> {
        if iterations < MIN_ITERATIONS {
            return Err(Error::new(
                ErrorCode::CredentialIterationsTooLow,
                format!("Too few iterations: at least {MIN_ITERATIONS} are required"),
            ));
        }
        if salt.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the salt must not be empty",
            ));
        }
        let (client_key, server_key) = mechanism.client_and_server_keys(password, salt, iterations);
        let stored_key = mechanism.hash(client_key.expose());
        ScramCredential::new(
            mechanism,
            salt.to_vec(),
            stored_key.to_vec(),
            server_key.expose().to_vec(),
            iterations,
        )
    }

    /// Derives a credential with a fresh random salt made the way Kafka makes them (the
    /// UTF-8 bytes of a random base-36 string).
    pub fn generate(
        mechanism: ScramMechanism,
        password: &[u8],
        iterations: u32,
        rng: &dyn RandomSource,
    ) -> Result<Self> {
        let salt = kafka_random_string(rng)?;
        Self::derive(mechanism, password, salt.as_bytes(), iterations)
    }

    /// Parses Kafka's `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>` form (the
    /// value `kafka-configs` shows under the mechanism's name). Exactly those four keys, in
    /// any order.
    pub fn from_kafka_string(mechanism: ScramMechanism, text: &str) -> Result<Self> {
        // The text holds key material: the errors below never quote it.
        let bad = |why: &str| {
            Error::new(
                ErrorCode::InvalidCredentialFormat,
                format!("Credentials not valid: {why}"),
            )
        };
        let (mut salt, mut stored, mut server, mut iterations) = (None, None, None, None);
        for part in text.split(',') {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad("every entry must be key=value"))?;
            let slot = match key {
                "salt" => &mut salt,
                "stored_key" => &mut stored,
                "server_key" => &mut server,
                "iterations" => &mut iterations,
                _ => {
                    return Err(bad(
                        "unexpected key; expected salt, stored_key, server_key and iterations",
                    ))
                }
            };
            if slot.replace(value).is_some() {
                return Err(bad("duplicate key"));
            }
        }
        let (Some(salt), Some(stored), Some(server), Some(iterations)) =
            (salt, stored, server, iterations)
        else {
            return Err(bad(
                "salt, stored_key, server_key and iterations are all required",
            ));
        };
        let b64 = |v: &str, what: &str| {
            STANDARD
                .decode(v)
                .map_err(|_| bad(&format!("{what} is not valid base64")))
        };
        let iterations: u32 = iterations
            .parse()
            .ok()
            .filter(|i| *i > 0 && iterations.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| bad("iterations must be a positive integer"))?;
        ScramCredential::new(
            mechanism,
            b64(salt, "salt")?,
            b64(stored, "stored_key")?,
            b64(server, "server_key")?,
            iterations,
        )
    }

    /// Kafka's text form (standard base64 with padding).
    pub fn to_kafka_string(&self) -> String {
        format!(
            "salt={},stored_key={},server_key={},iterations={}",
            STANDARD.encode(&self.0.salt),
            STANDARD.encode(&*self.0.stored_key),
            STANDARD.encode(&*self.0.server_key),
            self.0.iterations
        )
    }

    /// The mechanism.
    pub fn mechanism(&self) -> ScramMechanism {
        self.0.mechanism
    }

    /// The salt.
    pub fn salt(&self) -> &[u8] {
        &self.0.salt
    }

    /// The iteration count.
    pub fn iterations(&self) -> u32 {
        self.0.iterations
    }

    pub(crate) fn stored_key(&self) -> &[u8] {
        &self.0.stored_key
    }

    pub(crate) fn server_key(&self) -> &[u8] {
        &self.0.server_key
    }

    /// Whether `password` is the password this credential was derived from (one PBKDF2 run;
    /// the comparison is constant time).
    pub fn verify_password(&self, password: &[u8]) -> bool {
        let (client_key, _) =
            self.0
                .mechanism
                .client_and_server_keys(password, &self.0.salt, self.0.iterations);
        crate::secret::ct_eq(
            &self.0.stored_key,
            &self.0.mechanism.hash(client_key.expose()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC_KAFKA: &str = "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096";

    #[test]
    fn mechanism_names_from_hosts() {
        assert_eq!(
            ScramMechanism::try_from_name("SCRAM-SHA-512").unwrap(),
            ScramMechanism::Sha512
        );
        let e = ScramMechanism::try_from_name("PLAIN").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(e.message(), "\"PLAIN\" is not a SCRAM mechanism");
    }

    #[test]
    fn rfc7677_credential_round_trips_through_kafka_string() {
        let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let derived =
            ScramCredential::derive(ScramMechanism::Sha256, b"pencil", &salt, 4096).unwrap();
        assert_eq!(derived.to_kafka_string(), RFC_KAFKA);
        let parsed = ScramCredential::from_kafka_string(ScramMechanism::Sha256, RFC_KAFKA).unwrap();
        assert_eq!(parsed, derived);
        assert_eq!(parsed.to_kafka_string(), RFC_KAFKA);
        assert!(parsed.verify_password(b"pencil"));
        assert!(!parsed.verify_password(b"pencil "));
    }

    #[test]
    fn kafka_string_errors_do_not_quote_key_material() {
        for bad in [
            "",
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==",
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096,extra=1",
            "salt=!!,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096",
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096",
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=-1",
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,salt=W22ZaJ0SNY7soEsUEjb6gQ==,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096",
        ] {
            let e = ScramCredential::from_kafka_string(ScramMechanism::Sha256, bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidCredentialFormat, "{bad}");
            assert!(!e.message().contains("WG5d"), "{}", e.message());
            assert!(!e.message().contains("wfPL"), "{}", e.message());
        }
        // A SHA-256 credential is not a valid SHA-512 one (key length).
        assert!(ScramCredential::from_kafka_string(ScramMechanism::Sha512, RFC_KAFKA).is_err());
    }

    #[test]
    fn debug_redacts() {
        let c = ScramCredential::from_kafka_string(ScramMechanism::Sha256, RFC_KAFKA).unwrap();
        let d = format!("{c:?}");
        assert!(d.contains("<redacted>") && !d.contains("WG5d") && d.contains("4096"));
    }
}
