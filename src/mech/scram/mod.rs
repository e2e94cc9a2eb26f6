//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Apache Kafka speaks them.
//!
//! Kafka's profile: gs2 flag `n` only (no channel binding), `c=biws`, no SASLprep (the
//! password is its UTF-8 bytes), at least 4096 iterations on both sides, the `tokenauth`
//! extension for delegation tokens, and a server that reports failures through the Kafka
//! framing rather than `e=`. On top of Kafka, the client caps the iterations a server may
//! demand (a hostile broker could ask for 2^31), and both sides check nonces strictly.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

use crate::secret::Secret;

mod client;
mod credential;
pub(crate) mod messages;
mod server;

pub use client::{ScramClient, ScramClientOptions};
pub use credential::ScramCredential;
pub use server::{ScramServer, ScramServerOptions};

/// The smallest iteration count either side accepts (Kafka's minimum).
pub const MIN_ITERATIONS: u32 = 4096;
/// The client's default cap on the iteration count a server may ask for (Kafka's maximum
/// for stored credentials).
pub const DEFAULT_MAX_ITERATIONS: u32 = 16384;

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
            ScramMechanism::Sha256 => super::SCRAM_SHA_256,
            ScramMechanism::Sha512 => super::SCRAM_SHA_512,
        }
    }

    /// The variant for a mechanism name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            super::SCRAM_SHA_256 => Some(ScramMechanism::Sha256),
            super::SCRAM_SHA_512 => Some(ScramMechanism::Sha512),
            _ => None,
        }
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
    pub(crate) fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            ScramMechanism::Sha256 => Sha256::digest(data).to_vec(),
            ScramMechanism::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// HMAC(key, parts concatenated).
    pub(crate) fn hmac(self, key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        fn run<M: Mac + hmac::digest::KeyInit>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
            let mut mac = <M as hmac::digest::KeyInit>::new_from_slice(key)
                .expect("HMAC accepts keys of any length");
            for p in parts {
                mac.update(p);
            }
            mac.finalize().into_bytes().to_vec()
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
                pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out)
            }
            ScramMechanism::Sha512 => {
                pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut out)
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
        let client_key = Secret::new(self.hmac(salted.expose(), &[b"Client Key"]));
        let server_key = Secret::new(self.hmac(salted.expose(), &[b"Server Key"]));
        (client_key, server_key)
    }
}

/// Escapes a username for the `n=` attribute: `=` becomes `=3D`, then `,` becomes `=2C`.
pub fn escape_username(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// Reverses [`escape_username`]; any `=` not starting `=2C` or `=3D` is an error.
pub fn unescape_username(escaped: &str) -> Option<String> {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3)?;
        match code {
            "2C" => out.push(','),
            "3D" => out.push('='),
            _ => return None,
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// A SCRAM message with proofs, signatures and salts replaced by `<redacted>`.
pub(crate) fn redact(message: &[u8]) -> String {
    let text = super::printable(message);
    text.split(',')
        .map(|attr| match attr.get(..2) {
            Some("p=") | Some("v=") | Some("s=") => format!("{}<redacted>", &attr[..2]),
            _ => attr.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        assert_eq!(escape_username("a=b,c"), "a=3Db=2Cc");
        assert_eq!(unescape_username("a=3Db=2Cc").as_deref(), Some("a=b,c"));
        assert_eq!(unescape_username("=3D2C").as_deref(), Some("=2C"));
        assert_eq!(unescape_username("a=b"), None);
        assert_eq!(unescape_username("a="), None);
        assert_eq!(unescape_username("a=2"), None);
        assert_eq!(unescape_username("plain").as_deref(), Some("plain"));
    }

    #[test]
    fn redaction_hides_proofs() {
        let r = redact(b"c=biws,r=abc,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
        assert_eq!(r, "c=biws,r=abc,p=<redacted>");
        assert_eq!(
            redact(b"r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
            "r=abc,s=<redacted>,i=4096"
        );
    }
}
