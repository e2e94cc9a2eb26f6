//! Signed JWT assertions (RFC 7523): the client assertion of `private_key_jwt` and the
//! assertion of the JWT-bearer grant, with the claims Kafka 4.4 puts in them
//! (`sasl.oauthbearer.assertion.*`).

use std::fmt;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Map, Value};

use crate::error::{quote, Error, ErrorCode, Result};
use crate::random::RandomSource;
use crate::secret::Secret;

/// Kafka's default lifetime of an assertion (`sasl.oauthbearer.assertion.claim.exp.seconds`).
pub const DEFAULT_EXP_SECONDS: i64 = 300;
/// Kafka's default back-dating of `nbf` (`sasl.oauthbearer.assertion.claim.nbf.seconds`).
pub const DEFAULT_NBF_SECONDS: i64 = 60;

/// What goes into an assertion and how it is signed.
#[derive(Clone)]
pub struct AssertionConfig {
    /// The private key, PEM (PKCS#8 `PRIVATE KEY`; RSA keys also as `RSA PRIVATE KEY`;
    /// `sasl.oauthbearer.assertion.private.key.file`'s contents).
    pub private_key_pem: Secret,
    /// The JWS algorithm (`sasl.oauthbearer.assertion.algorithm`, default `RS256`; also
    /// RS384/512, PS256/384/512, ES256/384 and EdDSA).
    pub algorithm: String,
    /// A `kid` for the header, if the provider selects the key by it.
    pub key_id: Option<String>,
    /// `iss` (`sasl.oauthbearer.assertion.claim.iss`; for `private_key_jwt` the client id).
    pub issuer: Option<String>,
    /// `sub` (`sasl.oauthbearer.assertion.claim.sub`; for `private_key_jwt` the client id).
    pub subject: Option<String>,
    /// `aud` (`sasl.oauthbearer.assertion.claim.aud`: the token endpoint or the issuer).
    pub audience: Option<String>,
    /// Seconds from `iat` to `exp` (default 300).
    pub exp_seconds: i64,
    /// Seconds `nbf` lies before `iat` (default 60).
    pub nbf_seconds: i64,
    /// Whether to add a random `jti` (`sasl.oauthbearer.assertion.claim.jti.include`, default
    /// false as in Kafka; Keycloak requires one).
    pub include_jti: bool,
}

impl fmt::Debug for AssertionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssertionConfig")
            .field("private_key_pem", &"<redacted>")
            .field("algorithm", &self.algorithm)
            .field("key_id", &self.key_id)
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("audience", &self.audience)
            .field("exp_seconds", &self.exp_seconds)
            .field("nbf_seconds", &self.nbf_seconds)
            .field("include_jti", &self.include_jti)
            .finish()
    }
}

impl AssertionConfig {
    /// An RS256 assertion signed with `private_key_pem`, Kafka's default claims timing.
    pub fn new(private_key_pem: impl Into<Secret>) -> Self {
        AssertionConfig {
            private_key_pem: private_key_pem.into(),
            algorithm: "RS256".into(),
            key_id: None,
            issuer: None,
            subject: None,
            audience: None,
            exp_seconds: DEFAULT_EXP_SECONDS,
            nbf_seconds: DEFAULT_NBF_SECONDS,
            include_jti: false,
        }
    }
}

/// Signs assertions; the key is parsed once, when the signer is made.
pub struct AssertionSigner {
    config: AssertionConfig,
    algorithm: Algorithm,
    key: EncodingKey,
}

impl fmt::Debug for AssertionSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssertionSigner")
            .field("config", &self.config)
            .finish()
    }
}

fn invalid(why: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidConfig, why.into())
}

impl AssertionSigner {
    /// Checks the configuration and parses the key; a key that does not fit the algorithm,
    /// an encrypted key, or a symmetric algorithm is `INVALID_CONFIG`.
    pub fn new(config: AssertionConfig) -> Result<Self> {
        use Algorithm::*;
        let algorithm: Algorithm = config.algorithm.parse().map_err(|_| {
            invalid(format!(
                "sasl.oauthbearer.assertion.algorithm: \"{}\" is not a JWS algorithm (default RS256)",
                quote(config.algorithm.as_bytes())
            ))
        })?;
        let pem = config.private_key_pem.expose();
        if pem.windows(9).any(|w| w == b"ENCRYPTED") {
            return Err(invalid(
                "the assertion's private key is encrypted: give it decrypted (for example with \
                 `openssl pkcs8 -topk8 -nocrypt`)",
            ));
        }
        let key =
            match algorithm {
                RS256 | RS384 | RS512 | PS256 | PS384 | PS512 => EncodingKey::from_rsa_pem(pem),
                ES256 | ES384 => EncodingKey::from_ec_pem(pem),
                EdDSA => EncodingKey::from_ed_pem(pem),
                HS256 | HS384 | HS512 => return Err(invalid(
                    "an assertion is signed with a private key: HMAC algorithms are not accepted",
                )),
            }
            .map_err(|_| {
                invalid(format!(
                    "the assertion's private key is not a PEM key for {}",
                    config.algorithm
                ))
            })?;
        if config.exp_seconds <= 0 || config.nbf_seconds < 0 {
            return Err(invalid(format!(
                "assertion exp seconds must be positive and nbf seconds at least 0 (got {} and \
                 {}; Kafka's defaults are {DEFAULT_EXP_SECONDS} and {DEFAULT_NBF_SECONDS})",
                config.exp_seconds, config.nbf_seconds
            )));
        }
        let signer = AssertionSigner {
            config,
            algorithm,
            key,
        };
        // A key of the wrong kind for the algorithm only shows when signing.
        signer.sign(0, &crate::random::OsRandom).map(|_| signer)
    }

    /// The configuration.
    pub fn config(&self) -> &AssertionConfig {
        &self.config
    }

    /// A fresh assertion at `now_ms`: `iat` = now in whole seconds, `exp` = iat + exp
    /// seconds, `nbf` = iat − nbf seconds, then `iss`, `sub`, `aud` and `jti` when set.
    pub fn sign(&self, now_ms: i64, random: &dyn RandomSource) -> Result<Secret> {
        let c = &self.config;
        let iat = now_ms.div_euclid(1000);
        let mut claims = Map::new();
        claims.insert("iat".into(), iat.into());
        claims.insert("exp".into(), iat.saturating_add(c.exp_seconds).into());
        claims.insert("nbf".into(), iat.saturating_sub(c.nbf_seconds).into());
        for (name, value) in [
            ("iss", &c.issuer),
            ("sub", &c.subject),
            ("aud", &c.audience),
        ] {
            if let Some(v) = value {
                claims.insert(name.into(), Value::String(v.clone()));
            }
        }
        if c.include_jti {
            claims.insert("jti".into(), Value::String(uuid_v4(random)?));
        }
        let mut header = Header::new(self.algorithm);
        header.kid = c.key_id.clone();
        jsonwebtoken::encode(&header, &Value::Object(claims), &self.key)
            .map(Secret::from)
            .map_err(|_| {
                invalid(format!(
                    "the assertion's private key cannot sign {}",
                    c.algorithm
                ))
            })
    }
}

/// A random (version 4) UUID in its text form.
fn uuid_v4(random: &dyn RandomSource) -> Result<String> {
    let mut b = [0u8; 16];
    random.fill(&mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::testing::FixedRandom;

    #[test]
    fn uuids_are_version_4() {
        let u = uuid_v4(&FixedRandom(std::sync::Mutex::new(7))).unwrap();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    }

    #[test]
    fn bad_keys_and_algorithms_are_config_errors() {
        let e = AssertionSigner::new(AssertionConfig::new("not a key")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        assert!(!e.message().contains("not a key"));
        let mut c = AssertionConfig::new("x");
        c.algorithm = "HS256".into();
        assert!(AssertionSigner::new(c.clone())
            .unwrap_err()
            .message()
            .contains("HMAC"));
        c.algorithm = "XX1".into();
        assert!(AssertionSigner::new(c)
            .unwrap_err()
            .message()
            .contains("XX1"));
        let enc =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAA==\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert!(AssertionSigner::new(AssertionConfig::new(enc))
            .unwrap_err()
            .message()
            .contains("encrypted"));
    }
}
