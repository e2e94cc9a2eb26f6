//! The delegation-token admin messages of KIP-48: CreateDelegationToken (api key 38,
//! versions 0-3), RenewDelegationToken (39, 0-2), ExpireDelegationToken (40, 0-2) and
//! DescribeDelegationToken (41, 0-3), requests and responses, in every version.
//!
//! A server parses a request header with
//! [`RequestHeader::parse`](super::codec::RequestHeader::parse) and hands the body's decoder
//! to `parse_request_body` of the right type,
//! or to [`TokenRequest::parse_body`]; it answers with `encode_response`. A client builds a
//! request with `encode_request` and reads the answer with `parse_response`.
//!
//! Conventions, shared with [`messages`](super::messages):
//! - `encode_request` / `encode_response` return a whole frame: the 4-byte length, the
//!   header (request header v1, or v2 for flexible versions; response header v0, or v1 for
//!   flexible versions) and the body. `encode_body` returns the body alone.
//! - `parse_request_body` takes the [`Reader`] left after the request header;
//!   `parse_response` takes a frame *without* its length prefix (what
//!   [`FrameDecoder`](super::messages::FrameDecoder) returns) and checks nothing about the
//!   correlation id, which [`response_correlation_id`](super::messages::response_correlation_id)
//!   gives; `parse_response_body` takes the reader left after the response header.
//! - Versions 2 and later are flexible: compact strings, arrays and bytes, and a (normally
//!   empty) tagged-field section after every structure. Tagged fields received are skipped:
//!   none of these messages defines one.
//! - A version outside the supported range is an [`ErrorCode::UnsupportedVersion`] error, on
//!   both sides. So is a field set to a non-default value in a version that does not have
//!   it (an owner on a v2 CreateDelegationToken request, a requester on a v2 response), as
//!   Kafka's generated code throws `UnsupportedVersionException`. A string longer than
//!   32767 bytes is an [`ErrorCode::InvalidArgument`] error at encode time.
//! - Malformed input (truncated, trailing bytes, a null where the schema forbids one,
//!   invalid UTF-8, impossible lengths) is an [`ErrorCode::InvalidRequest`] error; no input
//!   makes a parser panic.
//! - Version 0 of every one of these APIs is byte-for-byte the same as version 1 (v1 only
//!   changed when a broker throttles). Apache Kafka 4.0 removed v0 (KIP-896): its brokers
//!   advertise 1 as the minimum, see [`SUPPORTED_KAFKA_4`].
//! - HMACs are the token's password material: they are held in [`Secret`], which is wiped
//!   on drop, compared in constant time and never printed by `Debug`.

use std::fmt;

use super::codec::{self, absent_field, invalid, Decoder, Encoder, Message, Reader};
use super::messages::ApiVersionRange;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::Principal;
use crate::secret::Secret;

/// CreateDelegationToken.
pub const CREATE_DELEGATION_TOKEN: i16 = 38;
/// RenewDelegationToken.
pub const RENEW_DELEGATION_TOKEN: i16 = 39;
/// ExpireDelegationToken.
pub const EXPIRE_DELEGATION_TOKEN: i16 = 40;
/// DescribeDelegationToken.
pub const DESCRIBE_DELEGATION_TOKEN: i16 = 41;

/// Every version this module encodes and parses, for a server's ApiVersions answer
/// (append them to [`ApiVersionsResponse::api_keys`](super::messages::ApiVersionsResponse)).
pub const SUPPORTED: [ApiVersionRange; 4] = [
    range(CREATE_DELEGATION_TOKEN, 0, 3),
    range(RENEW_DELEGATION_TOKEN, 0, 2),
    range(EXPIRE_DELEGATION_TOKEN, 0, 2),
    range(DESCRIBE_DELEGATION_TOKEN, 0, 3),
];

/// What an Apache Kafka 4.x broker advertises for these APIs: the same maxima, but minimum
/// version 1 (KIP-896 removed version 0). A server that wants to look like Kafka 4 can
/// advertise these instead of [`SUPPORTED`]; the codec still parses version 0.
pub const SUPPORTED_KAFKA_4: [ApiVersionRange; 4] = [
    range(CREATE_DELEGATION_TOKEN, 1, 3),
    range(RENEW_DELEGATION_TOKEN, 1, 2),
    range(EXPIRE_DELEGATION_TOKEN, 1, 2),
    range(DESCRIBE_DELEGATION_TOKEN, 1, 3),
];

const fn range(api_key: i16, min_version: i16, max_version: i16) -> ApiVersionRange {
    ApiVersionRange {
        api_key,
        min_version,
        max_version,
    }
}

/// Whether `api_key` is one of the four delegation-token APIs.
pub fn is_token_api(api_key: i16) -> bool {
    (CREATE_DELEGATION_TOKEN..=DESCRIBE_DELEGATION_TOKEN).contains(&api_key)
}

/// The Kafka error codes of the delegation-token APIs (the `error_code` of their responses).
pub mod error_code {
    /// No error.
    pub const NONE: i16 = 0;
    /// UNSUPPORTED_VERSION (also used by these APIs).
    pub const UNSUPPORTED_VERSION: i16 = 35;
    /// INVALID_REQUEST.
    pub const INVALID_REQUEST: i16 = 42;
    /// DELEGATION_TOKEN_AUTH_DISABLED: the broker has no `delegation.token.secret.key`.
    pub const DELEGATION_TOKEN_AUTH_DISABLED: i16 = 61;
    /// DELEGATION_TOKEN_NOT_FOUND: no token has this HMAC.
    pub const DELEGATION_TOKEN_NOT_FOUND: i16 = 62;
    /// DELEGATION_TOKEN_OWNER_MISMATCH: the caller is neither the owner nor a renewer.
    pub const DELEGATION_TOKEN_OWNER_MISMATCH: i16 = 63;
    /// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: token requests are refused on this connection
    /// (PLAINTEXT, 1-way SSL, or a connection that authenticated with a token).
    pub const DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: i16 = 64;
    /// DELEGATION_TOKEN_AUTHORIZATION_FAILED: the ACLs refuse the operation.
    pub const DELEGATION_TOKEN_AUTHORIZATION_FAILED: i16 = 65;
    /// DELEGATION_TOKEN_EXPIRED: the token has expired.
    pub const DELEGATION_TOKEN_EXPIRED: i16 = 66;
    /// INVALID_PRINCIPAL_TYPE: a renewer (or owner) is not a `User` principal.
    pub const INVALID_PRINCIPAL_TYPE: i16 = 67;

    /// Kafka's name for one of the codes above.
    pub fn name(code: i16) -> Option<&'static str> {
        Some(match code {
            NONE => "NONE",
            UNSUPPORTED_VERSION => "UNSUPPORTED_VERSION",
            INVALID_REQUEST => "INVALID_REQUEST",
            DELEGATION_TOKEN_AUTH_DISABLED => "DELEGATION_TOKEN_AUTH_DISABLED",
            DELEGATION_TOKEN_NOT_FOUND => "DELEGATION_TOKEN_NOT_FOUND",
            DELEGATION_TOKEN_OWNER_MISMATCH => "DELEGATION_TOKEN_OWNER_MISMATCH",
            DELEGATION_TOKEN_REQUEST_NOT_ALLOWED => "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
            DELEGATION_TOKEN_AUTHORIZATION_FAILED => "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
            DELEGATION_TOKEN_EXPIRED => "DELEGATION_TOKEN_EXPIRED",
            INVALID_PRINCIPAL_TYPE => "INVALID_PRINCIPAL_TYPE",
            _ => return None,
        })
    }
}

/// A principal as these messages carry it: a type (`User` for SASL) and a name.
///
/// The empty value (both strings empty) is Kafka's default for a principal field, and what
/// a field that does not exist in a version reads as.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PrincipalName {
    /// Principal type, e.g. `User`.
    pub principal_type: String,
    /// Principal name.
    pub name: String,
}

impl PrincipalName {
    /// A principal of any type.
    pub fn new(principal_type: impl Into<String>, name: impl Into<String>) -> Self {
        PrincipalName {
            principal_type: principal_type.into(),
            name: name.into(),
        }
    }

    /// `User:<name>`.
    pub fn user(name: impl Into<String>) -> Self {
        PrincipalName::new("User", name)
    }

    /// Whether both strings are empty (Kafka's default value).
    pub fn is_empty(&self) -> bool {
        self.principal_type.is_empty() && self.name.is_empty()
    }
}

impl fmt::Display for PrincipalName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

impl From<&Principal> for PrincipalName {
    fn from(p: &Principal) -> Self {
        PrincipalName::new(p.principal_type.clone(), p.name.clone())
    }
}

impl From<&PrincipalName> for Principal {
    /// A principal that did not authenticate with a token.
    fn from(p: &PrincipalName) -> Self {
        Principal {
            principal_type: p.principal_type.clone(),
            name: p.name.clone(),
            token_authenticated: false,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Principals, and the frame-level functions of each message type.

/// A principal's type and name; `what` names it in errors ("owner", "renewer").
fn write_principal(out: &mut Encoder, what: &str, p: &PrincipalName) -> Result<()> {
    out.string(what, &p.principal_type)?;
    out.string(what, &p.name)
}

/// A principal's type and name, neither of which may be null.
fn read_principal(r: &mut Decoder<'_>, what: &str) -> Result<PrincipalName> {
    let principal_type = r.nullable_string()?;
    let name = r.nullable_string()?;
    match (principal_type, name) {
        (Some(principal_type), Some(name)) => Ok(PrincipalName {
            principal_type,
            name,
        }),
        _ => Err(invalid(&format!("non-nullable {what} principal is null"))),
    }
}

/// An array of principals, each a structure of its own.
fn read_principals(r: &mut Decoder<'_>, field: &str, what: &str) -> Result<Vec<PrincipalName>> {
    let n = r.array_len(field)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(read_principal(r, what)?);
        r.end_struct()?;
    }
    Ok(v)
}

// Makes a type with `NAME`, `API_KEY`, `MAX_VERSION`, `write_body` and `read_body` a codec
// message, with the body-level functions every message type has.
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

        impl $t {
            /// The body alone (no header, no length prefix).
            pub fn encode_body(&self, version: i16) -> Result<Vec<u8>> {
                codec::encode_body(self, version)
            }
        }
    };
}

// Implements the frame-level functions of a request type.
macro_rules! request_frames {
    ($t:ty) => {
        message!($t);

        impl $t {
            /// A whole request frame: length, request header (v1, or v2 when `version` is
            /// flexible) and body.
            pub fn encode_request(
                &self,
                version: i16,
                correlation_id: i32,
                client_id: Option<&str>,
            ) -> Result<Vec<u8>> {
                codec::encode_request(self, version, correlation_id, client_id)
            }

            /// Parses a `version` request body: the bytes after the request header (the
            /// reader of the decoder [`RequestHeader::parse`](super::codec::RequestHeader::parse)
            /// returns).
            pub fn parse_request_body(version: i16, body: Reader<'_>) -> Result<Self> {
                let flexible = codec::is_flexible(<$t>::API_KEY, version);
                codec::decode_body(version, Decoder { r: body, flexible })
            }
        }
    };
}

// Implements the frame-level functions of a response type.
macro_rules! response_frames {
    ($t:ty) => {
        message!($t);

        impl $t {
            /// A whole response frame: length, response header (v0, or v1 when `version` is
            /// flexible) and body.
            pub fn encode_response(&self, version: i16, correlation_id: i32) -> Result<Vec<u8>> {
                codec::encode_response(self, version, correlation_id)
            }

            /// Parses a `version` response frame, without its length prefix (the
            /// correlation id is not checked: see
            /// [`response_correlation_id`](super::messages::response_correlation_id)).
            pub fn parse_response(version: i16, frame: &[u8]) -> Result<Self> {
                codec::decode_response(version, frame).map(|(_, m)| m)
            }

            /// Parses a `version` response body (the reader left after the response header).
            pub fn parse_response_body(version: i16, body: Reader<'_>) -> Result<Self> {
                codec::decode_response_body(version, body)
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// CreateDelegationToken (38).

/// CreateDelegationToken request (versions 0-3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateTokenRequest {
    /// The principal that should own the token (v3+, nullable). `None` (null on the wire)
    /// means the requester. Kafka also treats an empty owner name as the requester; the Java
    /// admin client sends two empty strings when no owner is set, which parses as
    /// `Some(PrincipalName::default())`: see [`CreateTokenRequest::effective_owner`].
    /// Encoding a version below 3 refuses an owner that is neither `None` nor empty.
    pub owner: Option<PrincipalName>,
    /// Who may renew the token besides its owner.
    pub renewers: Vec<PrincipalName>,
    /// The requested maximum lifetime, or -1 for the server's default.
    pub max_lifetime_ms: i64,
}

impl CreateTokenRequest {
    /// API key 38.
    pub const API_KEY: i16 = CREATE_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 3;
    const NAME: &'static str = "CreateDelegationToken request";

    /// The owner a Kafka broker would use: `None` (the requester) when the owner is null or
    /// its name is empty.
    pub fn effective_owner(&self) -> Option<&PrincipalName> {
        self.owner.as_ref().filter(|p| !p.name.is_empty())
    }

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        if version >= 3 {
            let owner = self.owner.as_ref();
            out.nullable_string(
                "owner principal type",
                owner.map(|p| p.principal_type.as_str()),
            )?;
            out.nullable_string("owner principal name", owner.map(|p| p.name.as_str()))?;
        } else if self.owner.as_ref().is_some_and(|p| !p.is_empty()) {
            return Err(absent_field(Self::NAME, "owner", version, 3));
        }
        out.array_len("renewers", Some(self.renewers.len()))?;
        for p in &self.renewers {
            write_principal(out, "renewer", p)?;
            out.end_struct();
        }
        out.w.i64(self.max_lifetime_ms);
        out.end_struct();
        Ok(())
    }

    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let owner = if version >= 3 {
            let t = r.nullable_string()?;
            let n = r.nullable_string()?;
            match (t, n) {
                // Kafka ignores the type when the name is null: the owner is the requester.
                (_, None) => None,
                (Some(principal_type), Some(name)) => Some(PrincipalName {
                    principal_type,
                    name,
                }),
                (None, Some(_)) => {
                    return Err(invalid("owner principal type is null but its name is not"))
                }
            }
        } else {
            None
        };
        let renewers = read_principals(r, "renewers", "renewer")?;
        let max_lifetime_ms = r.r.i64()?;
        r.end_struct()?;
        Ok(CreateTokenRequest {
            owner,
            renewers,
            max_lifetime_ms,
        })
    }
}
request_frames!(CreateTokenRequest);

/// CreateDelegationToken response (versions 0-3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateTokenResponse {
    /// Kafka error code (see [`error_code`]).
    pub error_code: i16,
    /// The token's owner.
    pub owner: PrincipalName,
    /// The principal that asked for the token (v3+; empty, and required to be empty when
    /// encoding, in earlier versions).
    pub requester: PrincipalName,
    /// When the token was issued (ms since the epoch).
    pub issue_timestamp_ms: i64,
    /// When the token expires unless renewed.
    pub expiry_timestamp_ms: i64,
    /// The token's hard end of life.
    pub max_timestamp_ms: i64,
    /// The token id (the SCRAM username of token authentication).
    pub token_id: String,
    /// HMAC-SHA512 of the token id (its base64 is the SCRAM password).
    pub hmac: Secret,
    /// Throttle time.
    pub throttle_time_ms: i32,
}

impl CreateTokenResponse {
    /// API key 38.
    pub const API_KEY: i16 = CREATE_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 3;
    const NAME: &'static str = "CreateDelegationToken response";

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        out.w.i16(self.error_code);
        write_principal(out, "owner", &self.owner)?;
        if version >= 3 {
            write_principal(out, "token requester", &self.requester)?;
        } else if !self.requester.is_empty() {
            return Err(absent_field(Self::NAME, "token requester", version, 3));
        }
        out.w.i64(self.issue_timestamp_ms);
        out.w.i64(self.expiry_timestamp_ms);
        out.w.i64(self.max_timestamp_ms);
        out.string("token id", &self.token_id)?;
        out.bytes("hmac", self.hmac.expose())?;
        out.w.i32(self.throttle_time_ms);
        out.end_struct();
        Ok(())
    }

    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let error_code = r.r.i16()?;
        let owner = read_principal(r, "owner")?;
        let requester = if version >= 3 {
            read_principal(r, "token requester")?
        } else {
            PrincipalName::default()
        };
        let issue_timestamp_ms = r.r.i64()?;
        let expiry_timestamp_ms = r.r.i64()?;
        let max_timestamp_ms = r.r.i64()?;
        let token_id = r.string("token id")?;
        let hmac = Secret::new(r.bytes("hmac")?.to_vec());
        let throttle_time_ms = r.r.i32()?;
        r.end_struct()?;
        Ok(CreateTokenResponse {
            error_code,
            owner,
            requester,
            issue_timestamp_ms,
            expiry_timestamp_ms,
            max_timestamp_ms,
            token_id,
            hmac,
            throttle_time_ms,
        })
    }
}
response_frames!(CreateTokenResponse);

// ---------------------------------------------------------------------------------------
// RenewDelegationToken (39) and ExpireDelegationToken (40).

/// The body shared by Renew- and ExpireDelegationToken requests: an HMAC and a period.
fn write_hmac_period(out: &mut Encoder, hmac: &Secret, period_ms: i64) -> Result<()> {
    out.bytes("hmac", hmac.expose())?;
    out.w.i64(period_ms);
    out.end_struct();
    Ok(())
}

fn read_hmac_period(r: &mut Decoder<'_>) -> Result<(Secret, i64)> {
    let hmac = Secret::new(r.bytes("hmac")?.to_vec());
    let period_ms = r.r.i64()?;
    r.end_struct()?;
    Ok((hmac, period_ms))
}

/// RenewDelegationToken request (versions 0-2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenewTokenRequest {
    /// The HMAC of the token to renew.
    pub hmac: Secret,
    /// The requested renewal period (Kafka caps it at `delegation.token.expiry.time.ms`; a
    /// value of 0 or less means that default).
    pub renew_period_ms: i64,
}

impl RenewTokenRequest {
    /// API key 39.
    pub const API_KEY: i16 = RENEW_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 2;
    const NAME: &'static str = "RenewDelegationToken request";

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        write_hmac_period(out, &self.hmac, self.renew_period_ms)
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let (hmac, renew_period_ms) = read_hmac_period(r)?;
        Ok(RenewTokenRequest {
            hmac,
            renew_period_ms,
        })
    }
}
request_frames!(RenewTokenRequest);

/// ExpireDelegationToken request (versions 0-2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpireTokenRequest {
    /// The HMAC of the token to expire.
    pub hmac: Secret,
    /// The expiry time period: negative expires the token at once, otherwise the new expiry
    /// is `now + period` (capped by the token's maximum timestamp).
    pub expiry_time_period_ms: i64,
}

impl ExpireTokenRequest {
    /// API key 40.
    pub const API_KEY: i16 = EXPIRE_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 2;
    const NAME: &'static str = "ExpireDelegationToken request";

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        write_hmac_period(out, &self.hmac, self.expiry_time_period_ms)
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let (hmac, expiry_time_period_ms) = read_hmac_period(r)?;
        Ok(ExpireTokenRequest {
            hmac,
            expiry_time_period_ms,
        })
    }
}
request_frames!(ExpireTokenRequest);

/// The response to RenewDelegationToken and to ExpireDelegationToken (versions 0-2; the two
/// schemas are identical).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpiryResponse {
    /// Kafka error code (see [`error_code`]).
    pub error_code: i16,
    /// The token's expiry timestamp after the operation (ms since the epoch).
    pub expiry_timestamp_ms: i64,
    /// Throttle time.
    pub throttle_time_ms: i32,
}

/// RenewDelegationToken response.
pub type RenewTokenResponse = ExpiryResponse;
/// ExpireDelegationToken response.
pub type ExpireTokenResponse = ExpiryResponse;

impl ExpiryResponse {
    /// API key 39 (40 has the same schema, versions and flexibility).
    pub const API_KEY: i16 = RENEW_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 2;
    const NAME: &'static str = "Renew/ExpireDelegationToken response";

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        out.w.i16(self.error_code);
        out.w.i64(self.expiry_timestamp_ms);
        out.w.i32(self.throttle_time_ms);
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let error_code = r.r.i16()?;
        let expiry_timestamp_ms = r.r.i64()?;
        let throttle_time_ms = r.r.i32()?;
        r.end_struct()?;
        Ok(ExpiryResponse {
            error_code,
            expiry_timestamp_ms,
            throttle_time_ms,
        })
    }
}
response_frames!(ExpiryResponse);

// ---------------------------------------------------------------------------------------
// DescribeDelegationToken (41).

/// DescribeDelegationToken request (versions 0-3; v3 only changes the response).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeTokensRequest {
    /// The owners whose tokens to describe; `None` (null on the wire) describes every token
    /// the caller may see, and an empty list describes none.
    pub owners: Option<Vec<PrincipalName>>,
}

impl DescribeTokensRequest {
    /// API key 41.
    pub const API_KEY: i16 = DESCRIBE_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 3;
    const NAME: &'static str = "DescribeDelegationToken request";

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        out.array_len("owners", self.owners.as_ref().map(Vec::len))?;
        for p in self.owners.iter().flatten() {
            write_principal(out, "owner", p)?;
            out.end_struct();
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let owners = match r.nullable_array_len()? {
            None => None,
            Some(n) => {
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(read_principal(r, "owner")?);
                    r.end_struct()?;
                }
                Some(v)
            }
        };
        r.end_struct()?;
        Ok(DescribeTokensRequest { owners })
    }
}
request_frames!(DescribeTokensRequest);

/// One token of a DescribeDelegationToken response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribedToken {
    /// The token's owner.
    pub owner: PrincipalName,
    /// The principal that created the token (v3+; empty, and required to be empty when
    /// encoding, in earlier versions).
    pub requester: PrincipalName,
    /// Issue timestamp (ms since the epoch).
    pub issue_timestamp_ms: i64,
    /// Expiry timestamp.
    pub expiry_timestamp_ms: i64,
    /// Maximum timestamp.
    pub max_timestamp_ms: i64,
    /// Token id.
    pub token_id: String,
    /// The token's HMAC.
    pub hmac: Secret,
    /// Who may renew the token.
    pub renewers: Vec<PrincipalName>,
}

/// DescribeDelegationToken response (versions 0-3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeTokensResponse {
    /// Kafka error code (see [`error_code`]).
    pub error_code: i16,
    /// The tokens.
    pub tokens: Vec<DescribedToken>,
    /// Throttle time.
    pub throttle_time_ms: i32,
}

impl DescribeTokensResponse {
    /// API key 41.
    pub const API_KEY: i16 = DESCRIBE_DELEGATION_TOKEN;
    /// Highest version.
    pub const MAX_VERSION: i16 = 3;
    const NAME: &'static str = "DescribeDelegationToken response";

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        out.w.i16(self.error_code);
        out.array_len("tokens", Some(self.tokens.len()))?;
        for t in &self.tokens {
            write_principal(out, "owner", &t.owner)?;
            if version >= 3 {
                write_principal(out, "token requester", &t.requester)?;
            } else if !t.requester.is_empty() {
                return Err(absent_field(Self::NAME, "token requester", version, 3));
            }
            out.w.i64(t.issue_timestamp_ms);
            out.w.i64(t.expiry_timestamp_ms);
            out.w.i64(t.max_timestamp_ms);
            out.string("token id", &t.token_id)?;
            out.bytes("hmac", t.hmac.expose())?;
            out.array_len("renewers", Some(t.renewers.len()))?;
            for p in &t.renewers {
                write_principal(out, "renewer", p)?;
                out.end_struct();
            }
            out.end_struct();
        }
        out.w.i32(self.throttle_time_ms);
        out.end_struct();
        Ok(())
    }

    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let error_code = r.r.i16()?;
        let n = r.array_len("tokens")?;
        let mut tokens = Vec::with_capacity(n);
        for _ in 0..n {
            let owner = read_principal(r, "owner")?;
            let requester = if version >= 3 {
                read_principal(r, "token requester")?
            } else {
                PrincipalName::default()
            };
            let issue_timestamp_ms = r.r.i64()?;
            let expiry_timestamp_ms = r.r.i64()?;
            let max_timestamp_ms = r.r.i64()?;
            let token_id = r.string("token id")?;
            let hmac = Secret::new(r.bytes("hmac")?.to_vec());
            let renewers = read_principals(r, "renewers", "renewer")?;
            r.end_struct()?;
            tokens.push(DescribedToken {
                owner,
                requester,
                issue_timestamp_ms,
                expiry_timestamp_ms,
                max_timestamp_ms,
                token_id,
                hmac,
                renewers,
            });
        }
        let throttle_time_ms = r.r.i32()?;
        r.end_struct()?;
        Ok(DescribeTokensResponse {
            error_code,
            tokens,
            throttle_time_ms,
        })
    }
}
response_frames!(DescribeTokensResponse);

// ---------------------------------------------------------------------------------------
// Dispatch for servers.

/// Any delegation-token request, for a server that routes on the api key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenRequest {
    /// CreateDelegationToken.
    Create(CreateTokenRequest),
    /// RenewDelegationToken.
    Renew(RenewTokenRequest),
    /// ExpireDelegationToken.
    Expire(ExpireTokenRequest),
    /// DescribeDelegationToken.
    Describe(DescribeTokensRequest),
}

impl TokenRequest {
    /// Parses the body of a token request of `api_key` and `version` (the values of
    /// [`RequestPrefix`](super::messages::RequestPrefix)). Another api key is an
    /// [`ErrorCode::InvalidArgument`] error (check with [`is_token_api`] first).
    pub fn parse_body(api_key: i16, version: i16, body: Reader<'_>) -> Result<Self> {
        Ok(match api_key {
            CREATE_DELEGATION_TOKEN => {
                TokenRequest::Create(CreateTokenRequest::parse_request_body(version, body)?)
            }
            RENEW_DELEGATION_TOKEN => {
                TokenRequest::Renew(RenewTokenRequest::parse_request_body(version, body)?)
            }
            EXPIRE_DELEGATION_TOKEN => {
                TokenRequest::Expire(ExpireTokenRequest::parse_request_body(version, body)?)
            }
            DESCRIBE_DELEGATION_TOKEN => {
                TokenRequest::Describe(DescribeTokensRequest::parse_request_body(version, body)?)
            }
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("api key {other} is not a delegation-token API"),
                ))
            }
        })
    }

    /// The api key of this request.
    pub fn api_key(&self) -> i16 {
        match self {
            TokenRequest::Create(_) => CREATE_DELEGATION_TOKEN,
            TokenRequest::Renew(_) => RENEW_DELEGATION_TOKEN,
            TokenRequest::Expire(_) => EXPIRE_DELEGATION_TOKEN,
            TokenRequest::Describe(_) => DESCRIBE_DELEGATION_TOKEN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_matches_the_types() {
        let max = [
            CreateTokenRequest::MAX_VERSION,
            RenewTokenRequest::MAX_VERSION,
            ExpireTokenRequest::MAX_VERSION,
            DescribeTokensRequest::MAX_VERSION,
        ];
        for ((s, k), m) in SUPPORTED.iter().zip(SUPPORTED_KAFKA_4).zip(max) {
            assert_eq!((s.min_version, s.max_version), (0, m));
            assert_eq!((k.api_key, k.min_version, k.max_version), (s.api_key, 1, m));
            assert!(is_token_api(s.api_key));
            for v in 0..=m {
                assert_eq!(codec::is_flexible(s.api_key, v), v >= 2);
            }
        }
        assert_eq!(CreateTokenResponse::MAX_VERSION, 3);
        assert_eq!(DescribeTokensResponse::MAX_VERSION, 3);
        assert_eq!(ExpiryResponse::MAX_VERSION, 2);
        assert!(!is_token_api(37) && !is_token_api(42));
    }

    #[test]
    fn classic_null_markers_are_seen_without_consuming() {
        let bytes = [0xff, 0xff, 0xff, 0xff];
        let mut r = Decoder {
            r: Reader::new(&bytes),
            flexible: false,
        };
        assert_eq!(r.nullable_array_len().unwrap(), None);
        assert_eq!(r.r.remaining(), 0);
        let mut r = Decoder {
            r: Reader::new(&bytes),
            flexible: false,
        };
        assert!(r.bytes("hmac").is_err());
    }
}
