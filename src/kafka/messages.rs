//! The Kafka messages SASL needs, on the schema layer of [`codec`](super::codec):
//! ApiVersions (v0-5), SaslHandshake (v0-1) and SaslAuthenticate (v0-2), requests and
//! responses; the protocol's constants; and bounded framing.
//!
//! Build a frame with [`encode_request`](super::codec::encode_request) or
//! [`encode_response`](super::codec::encode_response); read one with
//! [`RequestHeader::parse`](super::codec::RequestHeader::parse) and
//! [`decode_body`](super::codec::decode_body), or
//! [`decode_response`](super::codec::decode_response).

use super::codec::{invalid, Decoder, Encoder, Message};
use crate::error::{Error, ErrorCode, Result};

/// SaslHandshake.
pub const SASL_HANDSHAKE: i16 = 17;
/// ApiVersions.
pub const API_VERSIONS: i16 = 18;
/// SaslAuthenticate.
pub const SASL_AUTHENTICATE: i16 = 36;

/// The highest ApiVersions version ksasl speaks (on both sides).
pub const MAX_API_VERSIONS_VERSION: i16 = 5;
/// SaslHandshake must never be advertised above v1 (KAFKA-9577).
pub const MAX_SASL_HANDSHAKE_VERSION: i16 = 1;
/// SaslAuthenticate v0-2.
pub const MAX_SASL_AUTHENTICATE_VERSION: i16 = 2;

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

/// An ApiVersions request (v0-5). Software name and version exist from v3 on; v5's cluster
/// id and node id name the broker the client means to reach (unset: none and -1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiVersionsRequest {
    /// Client software name and version (v3+).
    pub software: Option<(String, String)>,
    /// The cluster the client expects to reach (v5+; None when unset).
    pub cluster_id: Option<String>,
    /// The node the client expects to reach (v5+; -1 when unset).
    pub node_id: i32,
}

impl Default for ApiVersionsRequest {
    fn default() -> Self {
        ApiVersionsRequest {
            software: None,
            cluster_id: None,
            node_id: -1,
        }
    }
}

impl ApiVersionsRequest {
    /// Kafka's validity rule (`ApiVersionsRequest.isValid`): v5's cluster id and node id
    /// given together or not at all, and v3+'s software fields well formed (alphanumeric,
    /// then alphanumerics, `-` and `.`, ending alphanumeric).
    pub fn is_valid(&self) -> bool {
        let target = self.cluster_id.is_some() == (self.node_id != -1);
        let software = self.software.as_ref().map_or(true, |(n, v)| {
            valid_software_field(n) && valid_software_field(v)
        });
        target && software
    }
}

/// Software names and versions in ApiVersions v3+: alphanumeric, then alphanumerics, `-` and
/// `.`, ending alphanumeric.
pub fn valid_software_field(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'.')
}

impl Message for ApiVersionsRequest {
    const NAME: &'static str = "ApiVersions request";
    const API_KEY: i16 = API_VERSIONS;
    const MAX_VERSION: i16 = MAX_API_VERSIONS_VERSION;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        if version >= 3 {
            let (name, ver) = self
                .software
                .as_ref()
                .map_or(("", ""), |(n, v)| (n.as_str(), v.as_str()));
            out.string("client_software_name", name)?;
            out.string("client_software_version", ver)?;
            if version >= 5 {
                out.nullable_string("cluster_id", self.cluster_id.as_deref())?;
                out.w.i32(self.node_id);
            }
            out.end_struct();
        }
        Ok(())
    }

    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let mut body = ApiVersionsRequest::default();
        if version >= 3 {
            let name = r.string("client_software_name")?;
            let ver = r.string("client_software_version")?;
            body.software = Some((name, ver));
            if version >= 5 {
                body.cluster_id = r.nullable_string()?;
                body.node_id = r.r.i32()?;
            }
            r.end_struct()?;
        }
        Ok(body)
    }
}

/// An ApiVersions response (header v0 whatever the version).
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
    /// The highest version of `api_key` the peer supports.
    pub fn max_version(&self, api_key: i16) -> Option<i16> {
        self.api_keys
            .iter()
            .find(|k| k.api_key == api_key)
            .map(|k| k.max_version)
    }
}

impl Message for ApiVersionsResponse {
    const NAME: &'static str = "ApiVersions response";
    const API_KEY: i16 = API_VERSIONS;
    const MAX_VERSION: i16 = MAX_API_VERSIONS_VERSION;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        out.w.i16(self.error_code);
        out.array_len("api_keys", Some(self.api_keys.len()))?;
        for k in &self.api_keys {
            out.w.i16(k.api_key);
            out.w.i16(k.min_version);
            out.w.i16(k.max_version);
            out.end_struct();
        }
        if version >= 1 {
            out.w.i32(self.throttle_time_ms);
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let error_code = r.r.i16()?;
        let n = r.nullable_array_len()?.unwrap_or(0);
        let mut api_keys = Vec::with_capacity(n);
        for _ in 0..n {
            let api_key = r.r.i16()?;
            let min_version = r.r.i16()?;
            let max_version = r.r.i16()?;
            r.end_struct()?;
            api_keys.push(ApiVersionRange {
                api_key,
                min_version,
                max_version,
            });
        }
        let throttle_time_ms = if version >= 1 { r.r.i32()? } else { 0 };
        r.end_struct()?;
        Ok(ApiVersionsResponse {
            error_code,
            api_keys,
            throttle_time_ms,
        })
    }
}

/// A SaslHandshake request (v0-1): the mechanism the client wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslHandshakeRequest {
    /// The SASL mechanism name.
    pub mechanism: String,
}

impl Message for SaslHandshakeRequest {
    const NAME: &'static str = "SaslHandshake request";
    const API_KEY: i16 = SASL_HANDSHAKE;
    const MAX_VERSION: i16 = MAX_SASL_HANDSHAKE_VERSION;

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        out.string("mechanism", &self.mechanism)
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        Ok(SaslHandshakeRequest {
            mechanism: r.string("mechanism")?,
        })
    }
}

/// A SaslHandshake response (header v0 in both versions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslHandshakeResponse {
    /// Error code.
    pub error_code: i16,
    /// The server's enabled mechanisms.
    pub mechanisms: Vec<String>,
}

impl Message for SaslHandshakeResponse {
    const NAME: &'static str = "SaslHandshake response";
    const API_KEY: i16 = SASL_HANDSHAKE;
    const MAX_VERSION: i16 = MAX_SASL_HANDSHAKE_VERSION;

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        out.w.i16(self.error_code);
        out.array_len("mechanisms", Some(self.mechanisms.len()))?;
        for m in &self.mechanisms {
            out.string("mechanism", m)?;
        }
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let error_code = r.r.i16()?;
        let n = r.nullable_array_len()?.unwrap_or(0);
        let mut mechanisms = Vec::with_capacity(n);
        for _ in 0..n {
            mechanisms.push(r.string("mechanism")?);
        }
        Ok(SaslHandshakeResponse {
            error_code,
            mechanisms,
        })
    }
}

/// A SaslAuthenticate request (v0-2): the mechanism's bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslAuthenticateRequest {
    /// The client's SASL message (a null one reads as empty).
    pub auth_bytes: Vec<u8>,
}

impl std::fmt::Debug for SaslAuthenticateRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The bytes may hold a password (PLAIN) or a token: sizes only.
        write!(
            f,
            "SaslAuthenticateRequest(<{} bytes>)",
            self.auth_bytes.len()
        )
    }
}

impl Message for SaslAuthenticateRequest {
    const NAME: &'static str = "SaslAuthenticate request";
    const API_KEY: i16 = SASL_AUTHENTICATE;
    const MAX_VERSION: i16 = MAX_SASL_AUTHENTICATE_VERSION;

    fn write_body(&self, _version: i16, out: &mut Encoder) -> Result<()> {
        out.bytes("auth_bytes", &self.auth_bytes)?;
        out.end_struct();
        Ok(())
    }

    fn read_body(_version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let auth_bytes = r.bytes_or_empty()?.to_vec();
        r.end_struct()?;
        Ok(SaslAuthenticateRequest { auth_bytes })
    }
}

/// A SaslAuthenticate response (v0-2; header v1 for v2).
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

impl Message for SaslAuthenticateResponse {
    const NAME: &'static str = "SaslAuthenticate response";
    const API_KEY: i16 = SASL_AUTHENTICATE;
    const MAX_VERSION: i16 = MAX_SASL_AUTHENTICATE_VERSION;

    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()> {
        out.w.i16(self.error_code);
        out.nullable_string("error_message", self.error_message.as_deref())?;
        out.bytes("auth_bytes", &self.auth_bytes)?;
        if version >= 1 {
            out.w.i64(self.session_lifetime_ms);
        }
        out.end_struct();
        Ok(())
    }

    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self> {
        let error_code = r.r.i16()?;
        let error_message = r.nullable_string()?;
        let auth_bytes = r.bytes_or_empty()?.to_vec();
        let session_lifetime_ms = if version >= 1 { r.r.i64()? } else { 0 };
        r.end_struct()?;
        Ok(SaslAuthenticateResponse {
            error_code,
            error_message,
            auth_bytes,
            session_lifetime_ms,
        })
    }
}

/// A raw length-prefixed frame (legacy SASL messages after SaslHandshake v0).
pub fn raw_frame(message: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(message.len() + 4);
    f.extend_from_slice(&(message.len() as i32).to_be_bytes());
    f.extend_from_slice(message);
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
