//! Enumeration resistance: a server option that answers a login for an unknown user as if the
//! user existed (RFC 5802 §5.1), so that a client cannot tell unknown users from wrong
//! passwords.
//!
//! Kafka fails a SCRAM login for an unknown user at the client's first message, and a known
//! user's at the last one. With a mask, an unknown user gets a stand-in credential instead:
//! a salt derived from the name under a server secret (the same salt every time, on every
//! server sharing the secret, and shaped like Kafka's random salts), the configured iteration
//! count, and keys no proof can match. The exchange then runs exactly as for a known user and
//! fails at the final message with the error and text of a wrong password. The stand-in can
//! never authenticate: the exchange refuses it even if its check passed.
//!
//! Delegation-token logins are not masked: token ids are random, so there is nothing to
//! enumerate.

use std::fmt;

use super::request::ServerCredential;
use super::scram::{ScramCredential, ScramMechanism, MIN_ITERATIONS};
use crate::error::{Error, ErrorCode, Result};
use crate::random::{kafka_random_string, RandomSource};
use crate::secret::Secret;

/// The shortest secret accepted (bytes).
pub const MIN_SECRET_LEN: usize = 16;
/// The most iterations accepted (the most Kafka's clients run).
pub const MAX_ITERATIONS: u32 = 16384;

/// Stand-in credentials for unknown users. See the module documentation.
pub struct UnknownUserMask {
    secret: Secret,
    iterations: u32,
}

impl fmt::Debug for UnknownUserMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownUserMask")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// Random bytes that are not random: a derived seed handed to the code that shapes salts
/// like Kafka's, so a stand-in salt looks like a real one.
struct Seed<'a>(&'a [u8]);

impl RandomSource for Seed<'_> {
    fn fill(&self, buf: &mut [u8]) -> Result<()> {
        buf.copy_from_slice(&self.0[..buf.len()]);
        Ok(())
    }
}

impl UnknownUserMask {
    /// A mask with a server secret (at least [`MIN_SECRET_LEN`] bytes; keep it stable and
    /// shared by every server of a cluster, or an unknown user's salt changes between
    /// servers while a real one does not) and the iteration count unknown users are given
    /// (4096 to 16384; use the count of the real credentials).
    pub fn new(secret: &[u8], iterations: u32) -> Result<Self> {
        if secret.len() < MIN_SECRET_LEN {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!("the unknown-user secret must be at least {MIN_SECRET_LEN} bytes"),
            ));
        }
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!(
                    "the unknown-user iterations must be {MIN_ITERATIONS} to {MAX_ITERATIONS}, not {iterations}"
                ),
            ));
        }
        Ok(UnknownUserMask {
            secret: Secret::from_slice(secret),
            iterations,
        })
    }

    /// The iteration count unknown users are given.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    /// The stand-in credential of `username` for `mechanism` (PLAIN, SCRAM-SHA-256 or
    /// SCRAM-SHA-512; `None` for others).
    pub fn credential(&self, mechanism: &str, username: &str) -> Option<ServerCredential> {
        let seed = ScramMechanism::Sha256.hmac(
            self.secret.expose(),
            &[mechanism.as_bytes(), b"\0", username.as_bytes()],
        );
        if mechanism == crate::names::PLAIN {
            // A password nobody can send without the secret.
            return Some(ServerCredential::password(Secret::from_slice(&seed)));
        }
        let m = ScramMechanism::from_name(mechanism)?;
        let salt = kafka_random_string(&Seed(&seed)).ok()?;
        // No proof matches a zero stored key (it would need a hash preimage); the check
        // still does all of its work, as for a wrong password.
        let zero = vec![0u8; m.hash_len()];
        let scram =
            ScramCredential::new(m, salt.into_bytes(), zero.clone(), zero, self.iterations).ok()?;
        Some(ServerCredential::scram(scram))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credential::CredentialSecret;

    fn salt(c: &ServerCredential) -> Vec<u8> {
        match c.secret() {
            CredentialSecret::Scram(s) => s.salt().to_vec(),
            CredentialSecret::Password(_) => panic!("not SCRAM"),
        }
    }

    #[test]
    fn stand_ins_are_deterministic_per_name_and_mechanism() {
        let mask = UnknownUserMask::new(&[7; 32], 8192).unwrap();
        let a = mask.credential("SCRAM-SHA-256", "mallory").unwrap();
        let b = mask.credential("SCRAM-SHA-256", "mallory").unwrap();
        assert_eq!(salt(&a), salt(&b));
        assert_ne!(
            salt(&a),
            salt(&mask.credential("SCRAM-SHA-256", "eve").unwrap())
        );
        assert_ne!(
            salt(&a),
            salt(&mask.credential("SCRAM-SHA-512", "mallory").unwrap())
        );
        let other = UnknownUserMask::new(&[8; 32], 8192).unwrap();
        assert_ne!(
            salt(&a),
            salt(&other.credential("SCRAM-SHA-256", "mallory").unwrap())
        );
        // Shaped like Kafka's salts: base 36, no leading zero, at most 26 characters.
        let s = String::from_utf8(salt(&a)).unwrap();
        assert!(s.len() <= 26 && !s.starts_with('0'));
        assert!(s
            .bytes()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
        match a.secret() {
            CredentialSecret::Scram(s) => assert_eq!(s.iterations(), 8192),
            _ => unreachable!(),
        }
        assert!(mask.credential("PLAIN", "mallory").is_some());
        assert!(mask.credential("OAUTHBEARER", "mallory").is_none());
    }

    #[test]
    fn weak_settings_are_refused_and_the_secret_is_not_shown() {
        assert_eq!(
            UnknownUserMask::new(&[1; 15], 4096).unwrap_err().code(),
            ErrorCode::InvalidConfig
        );
        assert!(UnknownUserMask::new(&[1; 16], 4095).is_err());
        assert!(UnknownUserMask::new(&[1; 16], 16385).is_err());
        let mask = UnknownUserMask::new(b"0123456789abcdef-secret", 4096).unwrap();
        assert!(!format!("{mask:?}").contains("0123"));
    }
}
