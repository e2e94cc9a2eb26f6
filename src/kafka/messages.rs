//! The Kafka messages SASL needs: request and response headers, ApiVersions (v0-5),
//! SaslHandshake (v0-1) and SaslAuthenticate (v0-2), and bounded framing.
//!
//! Header rules: a request uses header v2 when its API version is flexible, else v1; a
//! response uses header v1 when flexible, else v0, except that ApiVersions responses always
//! use v0. `client_id` is always a classic int16-length string, even in header v2.

use super::codec::{invalid, Reader, Writer};
use crate::error::{Error, ErrorCode, Result};

/// SaslHandshake.
pub const SASL_HANDSHAKE: i16 = 17;
/// ApiVersions.
pub const API_VERSIONS: i16 = 18;
/// SaslAuthenticate.
pub const SASL_AUTHENTICATE: i16 = 36;

/// Kafka error codes used here.
pub mod error_code {
    /// No error.
    pub const NONE: i16 = 0;
    /// UNSUPPORTED_SASL_MECHANISM.
    pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
    /// ILLEGAL_SASL_STATE.
    pub const ILLEGAL_SASL_STATE: i16 = 34;
    /// UNSUPPORTED_VERSION.
    pub const UNSUPPORTED_VERSION: i16 = 35;
    /// INVALID_REQUEST.
    pub const INVALID_REQUEST: i16 = 42;
    /// SASL_AUTHENTICATION_FAILED.
    pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
}

/// Whether `version` of `api_key` is a flexible (tagged-field) version, for the APIs whose
/// schemas this module knows.
pub fn is_flexible(api_key: i16, version: i16) -> bool {
    match api_key {
        API_VERSIONS => version >= 3,
        SASL_AUTHENTICATE => version >= 2,
        // The delegation-token APIs, 38-41 (`kafka::tokens`).
        38..=41 => version >= 2,
        _ => false,
    }
}

/// The fixed start of every request header: enough to route and gate a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestPrefix {
    /// API key.
    pub api_key: i16,
    /// API version.
    pub api_version: i16,
    /// Correlation id.
    pub correlation_id: i32,
}

impl RequestPrefix {
    /// Reads the first eight bytes of a request (no allocation).
    pub fn parse(body: &[u8]) -> Result<RequestPrefix> {
        if body.len() < 8 {
            return Err(invalid("truncated request header"));
        }
        Ok(RequestPrefix {
            api_key: i16::from_be_bytes([body[0], body[1]]),
            api_version: i16::from_be_bytes([body[2], body[3]]),
            correlation_id: i32::from_be_bytes([body[4], body[5], body[6], body[7]]),
        })
    }
}

/// A parsed request header and the rest of the request.
pub struct ParsedRequest<'a> {
    /// The header's fixed part.
    pub prefix: RequestPrefix,
    /// `client_id` (null read as none).
    pub client_id: Option<String>,
    /// The request body.
    pub body: Reader<'a>,
}

/// Parses a request header (v1, or v2 for flexible versions of the APIs known here).
pub fn parse_request(frame: &[u8]) -> Result<ParsedRequest<'_>> {
    let prefix = RequestPrefix::parse(frame)?;
    let mut r = Reader::new(frame);
    r.i16()?;
    r.i16()?;
    r.i32()?;
    let client_id = r.nullable_string()?;
    if is_flexible(prefix.api_key, prefix.api_version) {
        r.tagged_fields()?;
    }
    Ok(ParsedRequest {
        prefix,
        client_id,
        body: r,
    })
}

fn request_frame(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: impl FnOnce(&mut Writer),
) -> Vec<u8> {
    let mut w = Writer::framed();
    w.i16(api_key);
    w.i16(version);
    w.i32(correlation_id);
    w.nullable_string(client_id);
    if is_flexible(api_key, version) {
        w.no_tagged_fields();
    }
    body(&mut w);
    w.finish_frame()
}

fn response_frame(
    correlation_id: i32,
    flexible_header: bool,
    body: impl FnOnce(&mut Writer),
) -> Vec<u8> {
    let mut w = Writer::framed();
    w.i32(correlation_id);
    if flexible_header {
        w.no_tagged_fields();
    }
    body(&mut w);
    w.finish_frame()
}

/// Reads a response header; returns the correlation id and the body reader.
pub fn parse_response_header(frame: &[u8], flexible_header: bool) -> Result<(i32, Reader<'_>)> {
    let mut r = Reader::new(frame);
    let correlation_id = r.i32()?;
    if flexible_header {
        r.tagged_fields()?;
    }
    Ok((correlation_id, r))
}

/// The correlation id of a response (its first four bytes), if it has one.
pub fn response_correlation_id(frame: &[u8]) -> Option<i32> {
    frame
        .get(..4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// One entry of an ApiVersions response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiVersionRange {
    /// API key.
    pub api_key: i16,
    /// Lowest supported version.
    pub min_version: i16,
    /// Highest supported version.
    pub max_version: i16,
}

/// ApiVersions request (v0-5). Software name and version exist from v3 on; v5's cluster id and
/// node id (the broker the client means to reach) are sent unset (null, -1).
pub fn api_versions_request(
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    software: (&str, &str),
) -> Vec<u8> {
    request_frame(API_VERSIONS, version, correlation_id, client_id, |w| {
        if version >= 3 {
            w.compact_nullable_string(Some(software.0));
            w.compact_nullable_string(Some(software.1));
            if version >= 5 {
                w.compact_nullable_string(None);
                w.i32(-1);
            }
            w.no_tagged_fields();
        }
    })
}

/// The body of an ApiVersions request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiVersionsRequestBody {
    /// Client software name and version (v3+).
    pub software: Option<(String, String)>,
    /// The cluster the client expects to reach (v5+; None when unset).
    pub cluster_id: Option<String>,
    /// The node the client expects to reach (v5+; -1 when unset).
    pub node_id: i32,
}

impl ApiVersionsRequestBody {
    /// Kafka's validity rule for the v5 fields: the cluster id and the node id are given
    /// together or not at all.
    pub fn target_is_consistent(&self) -> bool {
        self.cluster_id.is_some() == (self.node_id != -1)
    }
}

/// The body of an ApiVersions request: software name and version (v3+), target cluster and
/// node (v5+).
pub fn parse_api_versions_request_body(
    version: i16,
    mut r: Reader<'_>,
) -> Result<ApiVersionsRequestBody> {
    let mut body = ApiVersionsRequestBody {
        node_id: -1,
        ..ApiVersionsRequestBody::default()
    };
    if version >= 3 {
        let name = r.compact_string()?;
        let ver = r.compact_string()?;
        body.software = Some((name, ver));
        if version >= 5 {
            body.cluster_id = r.compact_nullable_string()?;
            body.node_id = r.i32()?;
        }
        r.tagged_fields()?;
    }
    r.finish("ApiVersions request")?;
    Ok(body)
}

/// ApiVersions response (header v0 whatever the version).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiVersionsResponse {
    /// Error code.
    pub error_code: i16,
    /// Supported APIs.
    pub api_keys: Vec<ApiVersionRange>,
    /// Throttle time (v1+).
    pub throttle_time_ms: i32,
}

impl ApiVersionsResponse {
    /// Encodes as `version` (header v0; flexible body from v3).
    pub fn encode(&self, version: i16, correlation_id: i32) -> Vec<u8> {
        response_frame(correlation_id, false, |w| {
            w.i16(self.error_code);
            if version >= 3 {
                w.uvarint(self.api_keys.len() as u32 + 1);
            } else {
                w.i32(self.api_keys.len() as i32);
            }
            for k in &self.api_keys {
                w.i16(k.api_key);
                w.i16(k.min_version);
                w.i16(k.max_version);
                if version >= 3 {
                    w.no_tagged_fields();
                }
            }
            if version >= 1 {
                w.i32(self.throttle_time_ms);
            }
            if version >= 3 {
                w.no_tagged_fields();
            }
        })
    }

    /// Parses a `version` response body (after the v0 header).
    pub fn parse(version: i16, mut r: Reader<'_>) -> Result<Self> {
        let error_code = r.i16()?;
        let n = if version >= 3 {
            r.compact_array_len()?
        } else {
            r.array_len()?
        };
        let mut api_keys = Vec::with_capacity(n);
        for _ in 0..n {
            let api_key = r.i16()?;
            let min_version = r.i16()?;
            let max_version = r.i16()?;
            if version >= 3 {
                r.tagged_fields()?;
            }
            api_keys.push(ApiVersionRange {
                api_key,
                min_version,
                max_version,
            });
        }
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        if version >= 3 {
            r.tagged_fields()?;
        }
        r.finish("ApiVersions response")?;
        Ok(ApiVersionsResponse {
            error_code,
            api_keys,
            throttle_time_ms,
        })
    }

    /// The highest version of `api_key` the peer supports.
    pub fn max_version(&self, api_key: i16) -> Option<i16> {
        self.api_keys
            .iter()
            .find(|k| k.api_key == api_key)
            .map(|k| k.max_version)
    }
}

/// SaslHandshake request (v0-1).
pub fn sasl_handshake_request(
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    mechanism: &str,
) -> Vec<u8> {
    request_frame(SASL_HANDSHAKE, version, correlation_id, client_id, |w| {
        w.string(mechanism)
    })
}

/// SaslHandshake response (header v0 in both versions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslHandshakeResponse {
    /// Error code.
    pub error_code: i16,
    /// The server's enabled mechanisms.
    pub mechanisms: Vec<String>,
}

impl SaslHandshakeResponse {
    /// Encodes.
    pub fn encode(&self, correlation_id: i32) -> Vec<u8> {
        response_frame(correlation_id, false, |w| {
            w.i16(self.error_code);
            w.i32(self.mechanisms.len() as i32);
            for m in &self.mechanisms {
                w.string(m);
            }
        })
    }

    /// Parses a response body.
    pub fn parse(mut r: Reader<'_>) -> Result<Self> {
        let error_code = r.i16()?;
        let n = r.array_len()?;
        let mut mechanisms = Vec::with_capacity(n);
        for _ in 0..n {
            mechanisms.push(r.string()?);
        }
        r.finish("SaslHandshake response")?;
        Ok(SaslHandshakeResponse {
            error_code,
            mechanisms,
        })
    }
}

/// SaslAuthenticate request (v0-2).
pub fn sasl_authenticate_request(
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    auth_bytes: &[u8],
) -> Vec<u8> {
    request_frame(SASL_AUTHENTICATE, version, correlation_id, client_id, |w| {
        if version >= 2 {
            w.compact_bytes(auth_bytes);
            w.no_tagged_fields();
        } else {
            w.bytes(auth_bytes);
        }
    })
}

/// The auth bytes of a SaslAuthenticate request body.
pub fn parse_sasl_authenticate_request_body(version: i16, mut r: Reader<'_>) -> Result<&[u8]> {
    let b = if version >= 2 {
        r.compact_bytes()?
    } else {
        r.bytes()?
    };
    if version >= 2 {
        r.tagged_fields()?;
    }
    r.finish("SaslAuthenticate request")?;
    Ok(b)
}

/// SaslAuthenticate response (v0-2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslAuthenticateResponse {
    /// Error code.
    pub error_code: i16,
    /// Error message (null on success).
    pub error_message: Option<String>,
    /// The server's SASL bytes.
    pub auth_bytes: Vec<u8>,
    /// Session lifetime (v1+; 0 unless this is the final successful response).
    pub session_lifetime_ms: i64,
}

impl SaslAuthenticateResponse {
    /// Encodes as `version` (header v1 for v2).
    pub fn encode(&self, version: i16, correlation_id: i32) -> Vec<u8> {
        response_frame(correlation_id, version >= 2, |w| {
            w.i16(self.error_code);
            if version >= 2 {
                w.compact_nullable_string(self.error_message.as_deref());
                w.compact_bytes(&self.auth_bytes);
            } else {
                w.nullable_string(self.error_message.as_deref());
                w.bytes(&self.auth_bytes);
            }
            if version >= 1 {
                w.i64(self.session_lifetime_ms);
            }
            if version >= 2 {
                w.no_tagged_fields();
            }
        })
    }

    /// Parses a `version` response body.
    pub fn parse(version: i16, mut r: Reader<'_>) -> Result<Self> {
        let error_code = r.i16()?;
        let (error_message, auth_bytes) = if version >= 2 {
            (r.compact_nullable_string()?, r.compact_bytes()?.to_vec())
        } else {
            (r.nullable_string()?, r.bytes()?.to_vec())
        };
        let session_lifetime_ms = if version >= 1 { r.i64()? } else { 0 };
        if version >= 2 {
            r.tagged_fields()?;
        }
        r.finish("SaslAuthenticate response")?;
        Ok(SaslAuthenticateResponse {
            error_code,
            error_message,
            auth_bytes,
            session_lifetime_ms,
        })
    }
}

/// A raw length-prefixed frame (legacy SASL tokens after SaslHandshake v0).
pub fn raw_frame(token: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(token.len() + 4);
    f.extend_from_slice(&(token.len() as i32).to_be_bytes());
    f.extend_from_slice(token);
    f
}

/// Splits a byte stream into frames, refusing negative lengths and lengths over a bound.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    max: usize,
}

impl FrameDecoder {
    /// A decoder accepting frames of at most `max` bytes (Kafka's
    /// `sasl.server.max.receive.size`, 512 KiB, during authentication).
    pub fn new(max: usize) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            max,
        }
    }

    /// Changes the bound (after authentication a broker allows `socket.request.max.bytes`).
    pub fn set_max(&mut self, max: usize) {
        self.max = max;
    }

    /// Adds received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as frames.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next complete frame body, if one has arrived. A bad length is an error as soon as
    /// its four bytes are in, before the body is buffered.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let n = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        if n < 0 {
            return Err(Error::new(
                ErrorCode::InvalidFrameSize,
                format!("Invalid receive (size = {n})"),
            ));
        }
        if n as usize > self.max {
            return Err(Error::new(
                ErrorCode::MessageTooLarge,
                format!("Invalid receive (size = {n} larger than {})", self.max),
            ));
        }
        let n = n as usize;
        if self.buf.len() < 4 + n {
            return Ok(None);
        }
        let frame = self.buf[4..4 + n].to_vec();
        self.buf.drain(..4 + n);
        Ok(Some(frame))
    }
}
