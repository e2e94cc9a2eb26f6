//! Request frames in any version, as the old free functions built them, for the tests that
//! craft SASL traffic by hand.
#![allow(dead_code)]

use ksasl::kafka::codec::{encode_request, Message, Reader};
use ksasl::kafka::messages::*;
use ksasl::Result;

pub fn api_versions_request(
    version: i16,
    corr: i32,
    client_id: Option<&str>,
    software: (&str, &str),
) -> Vec<u8> {
    let body = ApiVersionsRequest {
        software: (version >= 3).then(|| (software.0.to_string(), software.1.to_string())),
        ..ApiVersionsRequest::default()
    };
    any_version(&body, version, corr, client_id)
}

/// A request frame in any version, even one ksasl does not speak (the layout of the highest
/// version it knows, under the other number), for the server's refusals.
pub fn any_version<M: Message>(m: &M, version: i16, corr: i32, client_id: Option<&str>) -> Vec<u8> {
    let known = version.clamp(0, M::MAX_VERSION);
    let mut f = encode_request(m, known, corr, client_id).unwrap();
    f[6..8].copy_from_slice(&version.to_be_bytes());
    f
}

pub fn sasl_handshake_request(
    version: i16,
    corr: i32,
    client_id: Option<&str>,
    m: &str,
) -> Vec<u8> {
    let body = SaslHandshakeRequest {
        mechanism: m.to_string(),
    };
    any_version(&body, version, corr, client_id)
}

pub fn sasl_authenticate_request(
    version: i16,
    corr: i32,
    client_id: Option<&str>,
    bytes: &[u8],
) -> Vec<u8> {
    let body = SaslAuthenticateRequest {
        auth_bytes: bytes.to_vec(),
    };
    any_version(&body, version, corr, client_id)
}

/// A response's correlation id and the reader of its body.
pub fn parse_response_header(frame: &[u8], flexible: bool) -> Result<(i32, Reader<'_>)> {
    let mut r = Reader::new(frame);
    let corr = r.i32()?;
    if flexible {
        r.tagged_fields()?;
    }
    Ok((corr, r))
}

/// What a server connection answered to one frame: the action and the frames it queued.
pub struct Output {
    /// The frames to write.
    pub frames: Vec<u8>,
    /// The action.
    pub action: ksasl::kafka::server::ServerAction,
}

/// `handle_frame` with the frames it queued, for tests that look at both.
pub trait Answers {
    /// Handles `frame` and takes the frames it queued.
    fn frame(&mut self, frame: &[u8], now_ms: i64) -> Output;
}

impl Answers for ksasl::kafka::server::ServerConnection {
    fn frame(&mut self, frame: &[u8], now_ms: i64) -> Output {
        let action = self.handle_frame(frame, now_ms);
        let frames = self.poll_transmit().unwrap_or_default();
        Output { frames, action }
    }
}
