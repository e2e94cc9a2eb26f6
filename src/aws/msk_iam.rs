//! The client payload of Amazon MSK's `AWS_MSK_IAM` SASL mechanism: one JSON object holding a
//! SigV4-presigned `GET https://<broker host>/?Action=kafka-cluster:Connect` (service
//! `kafka-cluster`, 900 seconds, `host` the only signed header), its query parameters as
//! lowercase keys, plus `version` (`2020_10_22`), `host` and `user-agent`. The broker answers
//! with `{"version":"2020_10_22","request-id":"..."}` or closes the connection.
//!
//! Two writers exist and their bytes differ only in key order and user agent, so both are
//! offered: [`KeyOrder::JavaHashMap`] is the order of `aws-msk-iam-auth` (Jackson writing a
//! `java.util.HashMap`), [`KeyOrder::KafkaPython`] the order kafka-python 3 writes its dict in.

use crate::aws::credentials::AwsCredentials;
use crate::aws::sigv4::{self, PresignRequest, Presigned, EMPTY_PAYLOAD_SHA256};
use crate::error::{Error, ErrorCode, Result};
use crate::java_map::JavaOrder;

/// The payload version every MSK client sends and every broker answers with.
pub const PAYLOAD_VERSION: &str = "2020_10_22";
/// The signing service.
pub const SERVICE: &str = "kafka-cluster";
/// The action a connection asks for.
pub const ACTION: &str = "kafka-cluster:Connect";
/// The user agent ksasl reports unless the host names another.
pub const USER_AGENT: &str = concat!("ksasl/", env!("CARGO_PKG_VERSION"));
/// How long the signature is valid: 15 minutes.
pub const EXPIRES_SECS: u32 = 900;

/// The order of the payload's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// `aws-msk-iam-auth` (the Java library Kafka's clients load): the iteration order of the
    /// `HashMap` it fills with the presigned query parameters, then `version`, `user-agent`
    /// and the `host` header.
    JavaHashMap,
    /// kafka-python 3: `version`, `host`, `user-agent`, `action`, then the `x-amz-*` keys,
    /// `x-amz-security-token` last.
    KafkaPython,
}

impl KeyOrder {
    /// The order named `java` ([`KeyOrder::JavaHashMap`]) or `kafka-python`.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "java" => Ok(KeyOrder::JavaHashMap),
            "kafka-python" => Ok(KeyOrder::KafkaPython),
            _ => Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "unknown AWS_MSK_IAM key order {}: java or kafka-python",
                    crate::error::quote(name.as_bytes())
                ),
            )),
        }
    }

    /// `java` or `kafka-python`.
    pub fn name(self) -> &'static str {
        match self {
            KeyOrder::JavaHashMap => "java",
            KeyOrder::KafkaPython => "kafka-python",
        }
    }
}

/// What a client signs: the broker's host name as the client connects to it, the region of
/// the cluster, the user agent it reports, and the key order of the JSON it writes.
#[derive(Clone, Debug)]
pub struct ClientPayload<'a> {
    /// The broker host (without port), as in the bootstrap or metadata address.
    pub host: &'a str,
    /// The cluster's AWS region (`us-east-1`).
    pub region: &'a str,
    /// The `user-agent` value (`aws-msk-iam-auth/2.3.6/...`, `kafka-python`, or ksasl's own).
    pub user_agent: &'a str,
    /// The key order.
    pub order: KeyOrder,
}

/// The presigned `kafka-cluster:Connect` request a payload or a presigned token carries.
pub fn presign_connect(
    host: &str,
    region: &str,
    credentials: &AwsCredentials,
    now_ms: i64,
) -> Result<Presigned> {
    sigv4::presign(
        &PresignRequest {
            method: "GET",
            host,
            path: "/",
            query: &[("Action", ACTION)],
            region,
            service: SERVICE,
            expires_secs: EXPIRES_SECS,
            payload_hash: EMPTY_PAYLOAD_SHA256,
        },
        credentials,
        now_ms,
    )
}

/// The client's `AWS_MSK_IAM` message, signed with `credentials` at `now_ms`.
///
/// Refused (`INVALID_ARGUMENT`) as [`sigv4::presign`] refuses, and for a user agent with
/// control characters.
pub fn client_payload(
    payload: &ClientPayload<'_>,
    credentials: &AwsCredentials,
    now_ms: i64,
) -> Result<Vec<u8>> {
    if payload.user_agent.chars().any(char::is_control) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the user agent has control characters",
        ));
    }
    let signed = presign_connect(payload.host, payload.region, credentials, now_ms)?;
    let lower: Vec<(String, &str)> = signed
        .query
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
        .collect();
    let entries: Vec<(String, &str)> = match payload.order {
        KeyOrder::JavaHashMap => {
            let mut map = JavaOrder::new();
            for (k, v) in &lower {
                map.put(k, *v);
            }
            map.put("version", PAYLOAD_VERSION);
            map.put("user-agent", payload.user_agent);
            map.put("host", payload.host);
            map.into_ordered()
        }
        KeyOrder::KafkaPython => {
            let get = |name: &str| -> &str {
                lower
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| *v)
                    .unwrap_or_default()
            };
            let mut v = vec![
                ("version".to_string(), PAYLOAD_VERSION),
                ("host".to_string(), payload.host),
                ("user-agent".to_string(), payload.user_agent),
            ];
            for name in [
                "action",
                "x-amz-algorithm",
                "x-amz-credential",
                "x-amz-date",
                "x-amz-signedheaders",
                "x-amz-expires",
                "x-amz-signature",
            ] {
                v.push((name.to_string(), get(name)));
            }
            if credentials.session_token().is_some() {
                v.push((
                    "x-amz-security-token".to_string(),
                    get("x-amz-security-token"),
                ));
            }
            v
        }
    };
    Ok(json_object(&entries).into_bytes())
}

/// A JSON object of string values in the given order, compact, with the escaping Jackson and
/// serde_json share (`"`, `\` and control characters escaped, everything else as is).
fn json_object(entries: &[(String, &str)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::Value::from(k.as_str()).to_string());
        out.push(':');
        out.push_str(&serde_json::Value::from(*v).to_string());
    }
    out.push('}');
    out
}

/// The broker's answer to a valid payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerResponse {
    /// The payload version (`2020_10_22`).
    pub version: String,
    /// The request id the broker assigned (MSK logs it; support asks for it).
    pub request_id: String,
}

/// Reads the broker's answer: a JSON object with string `version` and `request-id`.
///
/// Refused (`MALFORMED_MESSAGE`): anything else, or another version (`UNSUPPORTED_VERSION`).
/// Errors quote none of the peer's bytes beyond the first 40 characters of a version.
pub fn parse_server_response(bytes: &[u8]) -> Result<ServerResponse> {
    let malformed = || {
        Error::new(
            ErrorCode::MalformedMessage,
            "the broker's AWS_MSK_IAM response is not a JSON object with a version and a request-id",
        )
    };
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|_| malformed())?;
    let field = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_string);
    let (Some(version), Some(request_id)) = (field("version"), field("request-id")) else {
        return Err(malformed());
    };
    if version != PAYLOAD_VERSION {
        let shown: String = version.chars().take(40).collect();
        return Err(Error::new(
            ErrorCode::UnsupportedVersion,
            format!("the broker answered AWS_MSK_IAM version '{shown}', not {PAYLOAD_VERSION}"),
        ));
    }
    Ok(ServerResponse {
        version,
        request_id,
    })
}

/// MSK's OAUTHBEARER token (`aws-msk-iam-sasl-signer`): a presigned
/// `https://kafka.<region>.amazonaws.com/?Action=kafka-cluster:Connect...&User-Agent=...` URL,
/// base64url without padding, valid for 15 minutes from its signing second. It is a bearer
/// credential: zeroized on drop and not shown by `Debug`.
#[derive(Clone)]
pub struct PresignedToken {
    token: zeroize::Zeroizing<String>,
    expires_at_ms: i64,
}

impl PresignedToken {
    /// The token, as an OAUTHBEARER client sends it.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// When it stops being valid (ms since the epoch): the signing second plus 900 s.
    pub fn expires_at_ms(&self) -> i64 {
        self.expires_at_ms
    }
}

impl std::fmt::Debug for PresignedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PresignedToken")
            .field("token", &"<redacted>")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

/// Signs MSK's OAUTHBEARER token for a cluster in `region`, byte for byte as
/// `aws-msk-iam-sasl-signer` writes it: the URL's parameters in botocore's order (`Action`,
/// the `X-Amz-*` parameters with `X-Amz-Security-Token` after `X-Amz-SignedHeaders`, the
/// signature), then the unsigned `User-Agent`.
pub fn presigned_token(
    region: &str,
    credentials: &AwsCredentials,
    now_ms: i64,
    user_agent: &str,
) -> Result<PresignedToken> {
    if region.is_empty()
        || !region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "an AWS region is letters, digits and '-' (us-east-1)",
        ));
    }
    let host = format!("kafka.{region}.amazonaws.com");
    let signed = presign_connect(&host, region, credentials, now_ms)?;
    let mut url = format!("https://{host}/?");
    let order = [
        "Action",
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Expires",
        "X-Amz-SignedHeaders",
        "X-Amz-Security-Token",
        "X-Amz-Signature",
    ];
    for name in order {
        if let Some(value) = signed.param(name) {
            url.push_str(name);
            url.push('=');
            url.push_str(&sigv4::uri_encode(value));
            url.push('&');
        }
    }
    url.push_str("User-Agent=");
    url.push_str(&sigv4::uri_encode(user_agent));
    let token = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        url.as_bytes(),
    );
    zeroize::Zeroize::zeroize(&mut url);
    Ok(PresignedToken {
        token: zeroize::Zeroizing::new(token),
        expires_at_ms: now_ms.div_euclid(1000) * 1000 + i64::from(EXPIRES_SECS) * 1000,
    })
}
