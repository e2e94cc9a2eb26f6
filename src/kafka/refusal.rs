//! Kafka's answer to a request that is not SaslAuthenticate while a SASL exchange is under
//! way: the request's own error response with ILLEGAL_SASL_STATE (34), then a close.
//!
//! Kafka 4.4 reads the whole request first. When it cannot (a version its schema lacks, a
//! truncated body, an API it does not have) it closes without answering; otherwise it sends
//! the API's generic error response. ksasl builds that response for every API whose schema
//! it has (ApiVersions, SaslHandshake, Metadata and the four delegation-token APIs). For
//! any other API the host builds it, from the [`RefusedRequest`] the connection keeps.
//!
//! What each answer holds was read off a real Kafka 4.4 broker (`tests/broker`), which
//! `tests/broker/test_wire_compare.py` checks byte for byte: trailing bytes after a readable
//! body are ignored, a negative array length counts as null where the array may be null,
//! ApiVersions above the highest version gets the version-0 answer, and version 0 of the
//! delegation-token APIs (removed by KIP-896) is not read at all.

use super::codec::{encode_response, Decoder, Encoder, Message, RequestHeader, Writer};
use super::delegation_tokens::{
    CreateTokenRequest, CreateTokenResponse, DescribeTokensRequest, DescribeTokensResponse,
    ExpireTokenRequest, ExpiryResponse, PrincipalName, RenewTokenRequest, CREATE_DELEGATION_TOKEN,
    DESCRIBE_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN, RENEW_DELEGATION_TOKEN,
};
use super::messages::{
    error_code::ILLEGAL_SASL_STATE, ApiVersionsRequest, ApiVersionsResponse, SaslHandshakeRequest,
    SaslHandshakeResponse, API_VERSIONS, MAX_API_VERSIONS_VERSION, MAX_SASL_HANDSHAKE_VERSION,
    SASL_HANDSHAKE,
};
use crate::error::{Error, Result};

/// The Metadata API.
pub const METADATA: i16 = 3;
/// The highest Metadata version Kafka 4.4 reads (it still reads 0-3).
pub const MAX_METADATA_VERSION: i16 = 13;

/// A request refused with ILLEGAL_SASL_STATE during a SASL exchange whose error response
/// the host must build, because ksasl does not have the API's schema. Kafka answers with
/// the API's generic error response carrying `error_code` when it can read the request, and
/// closes without answering when it cannot (an API or version it does not have).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedRequest {
    /// The request's API key.
    pub api_key: i16,
    /// The request's API version.
    pub api_version: i16,
    /// The correlation id the response must carry.
    pub correlation_id: i32,
    /// The Kafka error code of the response: ILLEGAL_SASL_STATE (34).
    pub error_code: i16,
    /// Kafka's exception text, for the responses that carry an error message.
    pub error_message: String,
}

/// What the connection does with a request that interrupts an exchange.
pub(crate) enum Refusal {
    /// Write this error response (at the failure deadline), then close.
    Answer(Vec<u8>),
    /// Kafka cannot read the request: close without answering.
    Unreadable(Error),
    /// ksasl does not have the API's schema: the host answers.
    HostAnswers,
}

/// Kafka's answer to `h` (whose body is `body`) during a SASL exchange.
pub(crate) fn during_exchange(h: &RequestHeader, body: Decoder<'_>) -> Refusal {
    let (v, corr) = (h.api_version, h.correlation_id);
    let answer = match h.api_key {
        API_VERSIONS => api_versions(v, corr, body),
        SASL_HANDSHAKE => handshake(v, corr, body),
        METADATA => metadata(v, corr, body),
        CREATE_DELEGATION_TOKEN => {
            let anonymous = PrincipalName::new("User", "ANONYMOUS");
            let r = CreateTokenResponse {
                error_code: ILLEGAL_SASL_STATE,
                requester: if v >= 3 {
                    anonymous.clone()
                } else {
                    Default::default()
                },
                owner: anonymous,
                issue_timestamp_ms: -1,
                expiry_timestamp_ms: -1,
                max_timestamp_ms: -1,
                ..Default::default()
            };
            token_api::<CreateTokenRequest, _>(v, corr, body, r)
        }
        RENEW_DELEGATION_TOKEN => token_api::<RenewTokenRequest, _>(v, corr, body, expiry()),
        EXPIRE_DELEGATION_TOKEN => token_api::<ExpireTokenRequest, _>(v, corr, body, expiry()),
        DESCRIBE_DELEGATION_TOKEN => {
            let r = DescribeTokensResponse {
                error_code: ILLEGAL_SASL_STATE,
                ..Default::default()
            };
            token_api::<DescribeTokensRequest, _>(v, corr, body, r)
        }
        _ => return Refusal::HostAnswers,
    };
    match answer {
        Ok(frames) => Refusal::Answer(frames),
        Err(e) => Refusal::Unreadable(e),
    }
}

/// Reads the body of `M` at `version`, ignoring trailing bytes as Kafka does.
fn read<M: Message>(version: i16, mut body: Decoder<'_>) -> Result<M> {
    M::read_body(version, &mut body)
}

fn unreadable(what: &str, version: i16) -> Error {
    super::codec::invalid(&format!("{what} version {version} is not readable"))
}

fn api_versions(v: i16, corr: i32, body: Decoder<'_>) -> Result<Vec<u8>> {
    // Kafka answers a version it does not have in version 0, without reading the body.
    let version = if (0..=MAX_API_VERSIONS_VERSION).contains(&v) {
        read::<ApiVersionsRequest>(v, body)?;
        v
    } else {
        0
    };
    let r = ApiVersionsResponse {
        error_code: ILLEGAL_SASL_STATE,
        api_keys: vec![],
        throttle_time_ms: 0,
    };
    encode_response(&r, version, corr)
}

fn handshake(v: i16, corr: i32, body: Decoder<'_>) -> Result<Vec<u8>> {
    if !(0..=MAX_SASL_HANDSHAKE_VERSION).contains(&v) {
        return Err(unreadable("SaslHandshake", v));
    }
    read::<SaslHandshakeRequest>(v, body)?;
    let r = SaslHandshakeResponse {
        error_code: ILLEGAL_SASL_STATE,
        mechanisms: vec![],
    };
    encode_response(&r, v, corr)
}

fn expiry() -> ExpiryResponse {
    ExpiryResponse {
        error_code: ILLEGAL_SASL_STATE,
        ..Default::default()
    }
}

/// A delegation-token API: versions 1 to the schema's highest (Kafka 4 no longer reads 0).
fn token_api<Q: Message, R: Message>(
    v: i16,
    corr: i32,
    body: Decoder<'_>,
    response: R,
) -> Result<Vec<u8>> {
    if !(1..=Q::MAX_VERSION).contains(&v) {
        return Err(unreadable(Q::NAME, v));
    }
    read::<Q>(v, body)?;
    encode_response(&response, v, corr)
}

/// One topic of a Metadata request, as its error response echoes it.
struct MetadataTopic {
    /// v10+.
    topic_id: [u8; 16],
    /// Null (v12+, asking by id) is answered as "".
    name: String,
}

/// Reads a Metadata request (v0-13) as Kafka does: `None` for a null topic list.
fn read_metadata(v: i16, d: &mut Decoder<'_>) -> Result<Option<Vec<MetadataTopic>>> {
    // Kafka's generated reader takes any negative length as null, and refuses null where the
    // schema does not allow it (the topic list before v1, the name before v10).
    let n = if d.flexible {
        d.r.uvarint()? as i64 - 1
    } else {
        i64::from(d.r.i32()?)
    };
    let topics = if n < 0 {
        if v < 1 {
            return Err(super::codec::invalid(
                "non-nullable field topics was serialized as null",
            ));
        }
        None
    } else {
        let n = n as usize;
        if n > d.r.remaining() {
            return Err(super::codec::invalid("topics is longer than the request"));
        }
        let mut topics = Vec::with_capacity(n);
        for _ in 0..n {
            let mut topic_id = [0u8; 16];
            if v >= 10 {
                for b in &mut topic_id {
                    *b = d.r.i8()? as u8;
                }
            }
            let name = match read_name(d)? {
                Some(s) => s,
                None if v >= 10 => String::new(),
                None => {
                    return Err(super::codec::invalid(
                        "non-nullable field name was serialized as null",
                    ))
                }
            };
            d.end_struct()?;
            topics.push(MetadataTopic { topic_id, name });
        }
        Some(topics)
    };
    if v >= 4 {
        d.r.i8()?; // allow_auto_topic_creation
    }
    if (8..=10).contains(&v) {
        d.r.i8()?; // include_cluster_authorized_operations
    }
    if v >= 8 {
        d.r.i8()?; // include_topic_authorized_operations
    }
    d.end_struct()?;
    Ok(topics)
}

/// A topic name: any negative length is null; bytes that are not UTF-8 are replaced, as
/// Java's decoder does.
fn read_name(d: &mut Decoder<'_>) -> Result<Option<String>> {
    let len = if d.flexible {
        d.r.uvarint()? as i64 - 1
    } else {
        i64::from(d.r.i16()?)
    };
    if len < 0 {
        return Ok(None);
    }
    if len > i64::from(i16::MAX) || len as usize > d.r.remaining() {
        return Err(super::codec::invalid(
            "topic name is longer than the request",
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    for _ in 0..len {
        bytes.push(d.r.i8()? as u8);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Kafka's generic Metadata error response: every topic asked for with the error, no
/// brokers, no partitions, unknown authorized operations.
fn metadata(v: i16, corr: i32, mut body: Decoder<'_>) -> Result<Vec<u8>> {
    if !(0..=MAX_METADATA_VERSION).contains(&v) {
        return Err(unreadable("Metadata", v));
    }
    let topics = read_metadata(v, &mut body)?.unwrap_or_default();
    const UNKNOWN_OPERATIONS: i32 = i32::MIN;
    let mut out = Encoder {
        w: Writer::framed(),
        flexible: v >= 9,
    };
    out.w.i32(corr);
    out.end_struct(); // the response header's tagged fields in flexible versions
    if v >= 3 {
        out.w.i32(0); // throttle_time_ms
    }
    out.array_len("brokers", Some(0))?;
    if v >= 2 {
        out.nullable_string("cluster_id", None)?;
    }
    if v >= 1 {
        out.w.i32(-1); // controller_id
    }
    out.array_len("topics", Some(topics.len()))?;
    for t in &topics {
        out.w.i16(ILLEGAL_SASL_STATE);
        out.string("name", &t.name)?;
        if v >= 10 {
            out.w.buf.extend_from_slice(&t.topic_id);
        }
        if v >= 1 {
            out.w.i8(0); // is_internal
        }
        out.array_len("partitions", Some(0))?;
        if v >= 8 {
            out.w.i32(UNKNOWN_OPERATIONS);
        }
        out.end_struct();
    }
    if (8..=10).contains(&v) {
        out.w.i32(UNKNOWN_OPERATIONS); // cluster_authorized_operations
    }
    if v >= 13 {
        out.w.i16(ILLEGAL_SASL_STATE);
    }
    out.end_struct();
    Ok(out.w.finish_frame())
}
