//! The SCRAM credential admin messages of KIP-554: DescribeUserScramCredentials (api key 50)
//! and AlterUserScramCredentials (51), requests and responses. Both APIs have one version,
//! 0, and it is flexible (compact strings, arrays and bytes, tagged fields).
//!
//! Conventions are those of [`delegation_tokens`](super::delegation_tokens): `encode_request`
//! / `encode_response` return a whole frame with its length prefix, `parse_response` takes a
//! frame without it, and the body parsers take the decoder left after the request header.
//! Malformed input is an [`ErrorCode::InvalidRequest`] error, never a panic.
//!
//! The salted password of an upsertion is the user's password equivalent: it is held in a
//! [`Secret`] (wiped on drop, never printed by `Debug`).

use std::fmt;

use super::codec::{self, check_version, Decoder, Encoder, Message, RequestHeader};
use super::messages::ApiVersionRange;
use crate::credential::scram::ScramMechanism;
use crate::error::{Error, ErrorCode, Result};
use crate::random::RandomSource;
use crate::secret::Secret;

/// DescribeUserScramCredentials.
pub const DESCRIBE_USER_SCRAM_CREDENTIALS: i16 = 50;
/// AlterUserScramCredentials.
pub const ALTER_USER_SCRAM_CREDENTIALS: i16 = 51;

/// The versions of both APIs, as a Kafka 4 broker advertises them (version 0 only).
pub const SUPPORTED: [ApiVersionRange; 2] = [
    ApiVersionRange {
        api_key: DESCRIBE_USER_SCRAM_CREDENTIALS,
        min_version: 0,
        max_version: 0,
    },
    ApiVersionRange {
        api_key: ALTER_USER_SCRAM_CREDENTIALS,
        min_version: 0,
        max_version: 0,
    },
];

/// Whether `api_key` is one of the two SCRAM credential APIs.
pub fn is_scram_credentials_api(api_key: i16) -> bool {
    api_key == DESCRIBE_USER_SCRAM_CREDENTIALS || api_key == ALTER_USER_SCRAM_CREDENTIALS
}

/// The Kafka error codes these APIs answer with.
pub mod error_code {
    /// No error.
    pub const NONE: i16 = 0;
    /// CLUSTER_AUTHORIZATION_FAILED: the caller may not describe or alter credentials.
    pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
    /// UNSUPPORTED_SASL_MECHANISM: the mechanism byte is not SCRAM-SHA-256 or -512.
    pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
    /// RESOURCE_NOT_FOUND: the user (or its credential for a mechanism) does not exist.
    pub const RESOURCE_NOT_FOUND: i16 = 91;
    /// DUPLICATE_RESOURCE: the same user twice in one request.
    pub const DUPLICATE_RESOURCE: i16 = 92;
    /// UNACCEPTABLE_CREDENTIAL: an empty user name, or iterations out of range.
    pub const UNACCEPTABLE_CREDENTIAL: i16 = 93;

    /// Kafka's name for one of the codes above.
    pub fn name(code: i16) -> Option<&'static str> {
        Some(match code {
            NONE => "NONE",
            CLUSTER_AUTHORIZATION_FAILED => "CLUSTER_AUTHORIZATION_FAILED",
            UNSUPPORTED_SASL_MECHANISM => "UNSUPPORTED_SASL_MECHANISM",
            RESOURCE_NOT_FOUND => "RESOURCE_NOT_FOUND",
            DUPLICATE_RESOURCE => "DUPLICATE_RESOURCE",
            UNACCEPTABLE_CREDENTIAL => "UNACCEPTABLE_CREDENTIAL",
            _ => return None,
        })
    }
}

/// The wire value of a mechanism (Kafka's `ScramMechanism.type()`): 1 SCRAM-SHA-256,
/// 2 SCRAM-SHA-512; 0 is UNKNOWN, and so is any other value.
pub fn mechanism_from_wire(value: i8) -> Option<ScramMechanism> {
    match value {
        1 => Some(ScramMechanism::Sha256),
        2 => Some(ScramMechanism::Sha512),
        _ => None,
    }
}

fn unsupported_top_level(api: &str, version: i16) -> Result<()> {
    check_version(api, version, 0)
}

// --- DescribeUserScramCredentials ----------------------------------------------------------

/// DescribeUserScramCredentials request: the users to describe; `None` (or an empty list)
/// asks for every user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeScramRequest {
    /// User names, or `None` for all users.
    pub users: Option<Vec<String>>,
}

impl DescribeScramRequest {
    const NAME: &'static str = "DescribeUserScramCredentialsRequest";
    const API_KEY: i16 = DESCRIBE_USER_SCRAM_CREDENTIALS;
    const MAX_VERSION: i16 = 0;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        unsupported_top_level(Self::NAME, version)?;
        out.array_len("Users", self.users.as_ref().map(Vec::len))?;
        for u in self.users.iter().flatten() {
            out.string("Name", u)?;
            out.end_struct();
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let users = match r.nullable_array_len()? {
            None => None,
            Some(n) => {
                let mut v = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    v.push(r.string("Name")?);
                    r.end_struct()?;
                }
                Some(v)
            }
        };
        r.end_struct()?;
        Ok(DescribeScramRequest { users })
    }

    /// A whole request frame.
    pub fn encode_request(&self, correlation_id: i32, client_id: Option<&str>) -> Result<Vec<u8>> {
        codec::encode_request(self, 0, correlation_id, client_id)
    }
}

/// One mechanism of a described user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialInfo {
    /// The mechanism's wire value (1 or 2).
    pub mechanism: i8,
    /// The iteration count of the stored credential.
    pub iterations: i32,
}

/// One user of a DescribeUserScramCredentials response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribeScramResult {
    /// The user name.
    pub user: String,
    /// The user-level error code.
    pub error_code: i16,
    /// The user-level error message.
    pub error_message: Option<String>,
    /// The user's credentials (empty on error).
    pub credential_infos: Vec<CredentialInfo>,
}

/// DescribeUserScramCredentials response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeScramResponse {
    /// Throttle time, ms.
    pub throttle_time_ms: i32,
    /// The request-level error code (0 unless the caller may not describe).
    pub error_code: i16,
    /// The request-level error message.
    pub error_message: Option<String>,
    /// One result per user.
    pub results: Vec<DescribeScramResult>,
}

impl DescribeScramResponse {
    const NAME: &'static str = "DescribeUserScramCredentialsResponse";
    const API_KEY: i16 = DESCRIBE_USER_SCRAM_CREDENTIALS;
    const MAX_VERSION: i16 = 0;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        unsupported_top_level(Self::NAME, version)?;
        out.w.i32(self.throttle_time_ms);
        out.w.i16(self.error_code);
        out.nullable_string("ErrorMessage", self.error_message.as_deref())?;
        out.array_len("Results", Some(self.results.len()))?;
        for r in &self.results {
            out.string("User", &r.user)?;
            out.w.i16(r.error_code);
            out.nullable_string("ErrorMessage", r.error_message.as_deref())?;
            out.array_len("CredentialInfos", Some(r.credential_infos.len()))?;
            for c in &r.credential_infos {
                out.w.i8(c.mechanism);
                out.w.i32(c.iterations);
                out.end_struct();
            }
            out.end_struct();
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let throttle_time_ms = r.r.i32()?;
        let error_code = r.r.i16()?;
        let error_message = r.nullable_string()?;
        let n = r.array_len("Results")?;
        let mut results = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            let user = r.string("User")?;
            let error_code = r.r.i16()?;
            let error_message = r.nullable_string()?;
            let m = r.array_len("CredentialInfos")?;
            let mut credential_infos = Vec::with_capacity(m.min(16));
            for _ in 0..m {
                credential_infos.push(CredentialInfo {
                    mechanism: r.r.i8()?,
                    iterations: r.r.i32()?,
                });
                r.end_struct()?;
            }
            r.end_struct()?;
            results.push(DescribeScramResult {
                user,
                error_code,
                error_message,
                credential_infos,
            });
        }
        r.end_struct()?;
        Ok(DescribeScramResponse {
            throttle_time_ms,
            error_code,
            error_message,
            results,
        })
    }

    /// A whole response frame.
    pub fn encode_response(&self, correlation_id: i32) -> Result<Vec<u8>> {
        codec::encode_response(self, 0, correlation_id)
    }

    /// Reads a response frame (without its length prefix): correlation id and response.
    pub fn parse_response(frame: &[u8]) -> Result<(i32, Self)> {
        codec::decode_response(0, frame)
    }
}

// --- AlterUserScramCredentials -------------------------------------------------------------

/// A credential to remove.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScramDeletion {
    /// The user name.
    pub name: String,
    /// The mechanism's wire value.
    pub mechanism: i8,
}

/// A credential to add or replace: the client salts the password itself, so the broker
/// never sees it.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramUpsertion {
    /// The user name.
    pub name: String,
    /// The mechanism's wire value.
    pub mechanism: i8,
    /// The iteration count.
    pub iterations: i32,
    /// The salt the client chose.
    pub salt: Vec<u8>,
    /// Hi(password, salt, iterations): a password equivalent.
    pub salted_password: Secret,
}

impl fmt::Debug for ScramUpsertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramUpsertion")
            .field("name", &self.name)
            .field("mechanism", &self.mechanism)
            .field("iterations", &self.iterations)
            .field("salt", &"<redacted>")
            .field("salted_password", &"<redacted>")
            .finish()
    }
}

impl ScramUpsertion {
    /// The upsertion that sets `password` for `name`: a fresh 32-byte random salt (what
    /// Kafka's Admin client makes) and Hi(password, salt, iterations). `iterations` must be
    /// within Kafka's bounds (4096-16384), checked here so that no PBKDF2 runs for nothing.
    pub fn from_password(
        name: &str,
        mechanism: ScramMechanism,
        iterations: u32,
        password: &str,
        rng: &dyn RandomSource,
    ) -> Result<Self> {
        if !(crate::credential::scram::MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "iterations must be between {} and {MAX_ITERATIONS} (Kafka's bounds), not {iterations}",
                    crate::credential::scram::MIN_ITERATIONS
                ),
            ));
        }
        if name.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the user name must not be empty",
            ));
        }
        let mut salt = vec![0u8; 32];
        rng.fill(&mut salt)?;
        let salted_password = mechanism.salted_password(password.as_bytes(), &salt, iterations);
        Ok(ScramUpsertion {
            name: name.to_string(),
            mechanism: mechanism.kafka_type_id(),
            iterations: iterations as i32,
            salt,
            salted_password,
        })
    }
}

/// The most iterations Kafka's controller accepts in an upsertion.
pub const MAX_ITERATIONS: u32 = 16384;

/// AlterUserScramCredentials request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlterScramRequest {
    /// Credentials to remove.
    pub deletions: Vec<ScramDeletion>,
    /// Credentials to add or replace.
    pub upsertions: Vec<ScramUpsertion>,
}

impl AlterScramRequest {
    const NAME: &'static str = "AlterUserScramCredentialsRequest";
    const API_KEY: i16 = ALTER_USER_SCRAM_CREDENTIALS;
    const MAX_VERSION: i16 = 0;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        unsupported_top_level(Self::NAME, version)?;
        out.array_len("Deletions", Some(self.deletions.len()))?;
        for d in &self.deletions {
            out.string("Name", &d.name)?;
            out.w.i8(d.mechanism);
            out.end_struct();
        }
        out.array_len("Upsertions", Some(self.upsertions.len()))?;
        for u in &self.upsertions {
            out.string("Name", &u.name)?;
            out.w.i8(u.mechanism);
            out.w.i32(u.iterations);
            out.bytes("Salt", &u.salt)?;
            out.bytes("SaltedPassword", u.salted_password.expose())?;
            out.end_struct();
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let n = r.array_len("Deletions")?;
        let mut deletions = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            deletions.push(ScramDeletion {
                name: r.string("Name")?,
                mechanism: r.r.i8()?,
            });
            r.end_struct()?;
        }
        let n = r.array_len("Upsertions")?;
        let mut upsertions = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            let name = r.string("Name")?;
            let mechanism = r.r.i8()?;
            let iterations = r.r.i32()?;
            let salt = r.bytes("Salt")?.to_vec();
            let salted_password = Secret::from_slice(r.bytes("SaltedPassword")?);
            r.end_struct()?;
            upsertions.push(ScramUpsertion {
                name,
                mechanism,
                iterations,
                salt,
                salted_password,
            });
        }
        r.end_struct()?;
        Ok(AlterScramRequest {
            deletions,
            upsertions,
        })
    }

    /// A whole request frame.
    pub fn encode_request(&self, correlation_id: i32, client_id: Option<&str>) -> Result<Vec<u8>> {
        codec::encode_request(self, 0, correlation_id, client_id)
    }
}

/// One user of an AlterUserScramCredentials response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlterScramResult {
    /// The user name.
    pub user: String,
    /// The error code.
    pub error_code: i16,
    /// The error message.
    pub error_message: Option<String>,
}

/// AlterUserScramCredentials response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlterScramResponse {
    /// Throttle time, ms.
    pub throttle_time_ms: i32,
    /// One result per user named in the request.
    pub results: Vec<AlterScramResult>,
}

impl AlterScramResponse {
    const NAME: &'static str = "AlterUserScramCredentialsResponse";
    const API_KEY: i16 = ALTER_USER_SCRAM_CREDENTIALS;
    const MAX_VERSION: i16 = 0;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        unsupported_top_level(Self::NAME, version)?;
        out.w.i32(self.throttle_time_ms);
        out.array_len("Results", Some(self.results.len()))?;
        for r in &self.results {
            out.string("User", &r.user)?;
            out.w.i16(r.error_code);
            out.nullable_string("ErrorMessage", r.error_message.as_deref())?;
            out.end_struct();
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let throttle_time_ms = r.r.i32()?;
        let n = r.array_len("Results")?;
        let mut results = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            results.push(AlterScramResult {
                user: r.string("User")?,
                error_code: r.r.i16()?,
                error_message: r.nullable_string()?,
            });
            r.end_struct()?;
        }
        r.end_struct()?;
        Ok(AlterScramResponse {
            throttle_time_ms,
            results,
        })
    }

    /// A whole response frame.
    pub fn encode_response(&self, correlation_id: i32) -> Result<Vec<u8>> {
        codec::encode_response(self, 0, correlation_id)
    }

    /// Reads a response frame (without its length prefix): correlation id and response.
    pub fn parse_response(frame: &[u8]) -> Result<(i32, Self)> {
        codec::decode_response(0, frame)
    }
}

macro_rules! message {
    ($t:ty) => {
        impl Message for $t {
            const NAME: &'static str = <$t>::NAME;
            const API_KEY: i16 = <$t>::API_KEY;
            const MAX_VERSION: i16 = <$t>::MAX_VERSION;
            fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
                <$t>::write_body(self, version, out)
            }
            fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
                <$t>::read_body(version, r)
            }
        }
    };
}

message!(DescribeScramRequest);
message!(DescribeScramResponse);
message!(AlterScramRequest);
message!(AlterScramResponse);

/// A parsed request of either API.
#[derive(Debug)]
pub enum ScramCredentialsRequest {
    /// DescribeUserScramCredentials.
    Describe(DescribeScramRequest),
    /// AlterUserScramCredentials.
    Alter(AlterScramRequest),
}

/// Parses a request frame (without its length prefix) of API 50 or 51: its header and body.
/// A version other than 0 is [`ErrorCode::UnsupportedVersion`]; another API or malformed
/// bytes are [`ErrorCode::InvalidRequest`].
pub fn parse_request(frame: &[u8]) -> Result<(RequestHeader, ScramCredentialsRequest)> {
    let (h, body) = RequestHeader::parse(frame)?;
    let request = match h.api_key {
        DESCRIBE_USER_SCRAM_CREDENTIALS => {
            ScramCredentialsRequest::Describe(codec::decode_body(h.api_version, body)?)
        }
        ALTER_USER_SCRAM_CREDENTIALS => {
            ScramCredentialsRequest::Alter(codec::decode_body(h.api_version, body)?)
        }
        other => {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("api key {other} is not a SCRAM credential API (50 or 51)"),
            ))
        }
    };
    Ok((h, request))
}
