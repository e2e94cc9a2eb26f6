//! AWS Signature Version 4 (`AWS4-HMAC-SHA256`), the parts a presigned request needs: the
//! date stamps, URI encoding, the signing key, the canonical request, the string to sign and
//! the presigned query string. Written from AWS's specification ("Create a signed AWS API
//! request") and checked against the published `aws-sig-v4-test-suite` vectors and AWS's
//! documented examples (tests/aws_sigv4.rs).

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::aws::credentials::AwsCredentials;
use crate::error::{Error, ErrorCode, Result};

/// The algorithm name SigV4 writes into every signature.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The hex SHA-256 of an empty body: the payload hash of a GET.
pub const EMPTY_PAYLOAD_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The longest validity a presigned request may ask for (7 days), as AWS enforces.
pub const MAX_EXPIRES_SECS: u32 = 604_800;

type HmacSha256 = Hmac<Sha256>;

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// HMAC-SHA256.
pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// The hex SHA-256 of bytes (canonical request hashes, payload hashes).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// The two date forms of a signature: `YYYYMMDD` (the credential scope) and
/// `YYYYMMDDTHHMMSSZ` (`X-Amz-Date`), in UTC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmzDate {
    date: String,
    timestamp: String,
}

impl AmzDate {
    /// The date of `now_ms` (ms since the epoch, UTC), to the second (milliseconds are
    /// dropped, as AWS's signers do). Refused outside the years 1970 to 9999.
    pub fn from_ms(now_ms: i64) -> Result<Self> {
        const MAX_MS: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
        if !(0..=MAX_MS).contains(&now_ms) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("time {now_ms} ms is outside the years 1970 to 9999"),
            ));
        }
        let secs = now_ms / 1000;
        let (days, rem) = (secs / 86_400, secs % 86_400);
        let (y, m, d) = civil_from_days(days);
        let date = format!("{y:04}{m:02}{d:02}");
        let timestamp = format!(
            "{date}T{:02}{:02}{:02}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
        Ok(AmzDate { date, timestamp })
    }

    /// Parses an `X-Amz-Date` (`YYYYMMDDTHHMMSSZ`): the date and the time in ms since the
    /// epoch. `None` for anything else, including impossible dates.
    pub fn parse(timestamp: &str) -> Option<(Self, i64)> {
        let b = timestamp.as_bytes();
        if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
            return None;
        }
        let digits = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = timestamp.get(r)?;
            if !s.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        let (y, mo, d) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
        let (h, mi, s) = (digits(9..11)?, digits(11..13)?, digits(13..15)?);
        if y < 1970 || !(1..=12).contains(&mo) || d < 1 || h > 23 || mi > 59 || s > 59 {
            return None;
        }
        let days = days_from_civil(y, mo as u32, d as u32);
        if civil_from_days(days) != (y, mo as u32, d as u32) {
            return None; // 31 April, 29 February of a common year
        }
        let ms = ((days * 86_400) + h * 3600 + mi * 60 + s) * 1000;
        Some((AmzDate::from_ms(ms).ok()?, ms))
    }

    /// `YYYYMMDD`.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// `YYYYMMDDTHHMMSSZ`.
    pub fn timestamp(&self) -> &str {
        &self.timestamp
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar (the
/// era-based method: 400-year eras of 146,097 days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// SigV4's URI encoding: every byte but the unreserved `A-Z a-z 0-9 - . _ ~` as `%XX` with
/// uppercase hex (so `/` and `:` are encoded too, as query names and values need).
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The credential scope: `date/region/service/aws4_request`.
pub fn credential_scope(date: &AmzDate, region: &str, service: &str) -> String {
    format!("{}/{region}/{service}/aws4_request", date.date())
}

/// The signing key: HMAC chained over the date, region, service and `aws4_request`, keyed
/// first by `AWS4` + the secret access key. Zeroized on drop.
pub fn signing_key(
    secret_access_key: &[u8],
    date: &str,
    region: &str,
    service: &str,
) -> Zeroizing<[u8; 32]> {
    let mut k0 = Zeroizing::new(Vec::with_capacity(4 + secret_access_key.len()));
    k0.extend_from_slice(b"AWS4");
    k0.extend_from_slice(secret_access_key);
    let k_date = Zeroizing::new(hmac_sha256(&k0, date.as_bytes()));
    let k_region = Zeroizing::new(hmac_sha256(&*k_date, region.as_bytes()));
    let k_service = Zeroizing::new(hmac_sha256(&*k_region, service.as_bytes()));
    Zeroizing::new(hmac_sha256(&*k_service, b"aws4_request"))
}

/// A request in SigV4's canonical form.
#[derive(Clone, Debug)]
pub struct CanonicalRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The absolute path, already URI-encoded (`/` for MSK).
    pub path: String,
    /// Query parameters, unencoded, in any order.
    pub query: Vec<(String, String)>,
    /// Headers to sign, in any order and case; values are trimmed and inner runs of spaces
    /// folded as SigV4 requires.
    pub headers: Vec<(String, String)>,
    /// The hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
    pub payload_hash: String,
}

impl CanonicalRequest {
    /// The canonical query string: names and values URI-encoded, sorted by name then value,
    /// joined by `&`.
    pub fn canonical_query(&self) -> String {
        let mut pairs: Vec<(String, String)> = self
            .query
            .iter()
            .map(|(k, v)| (uri_encode(k), uri_encode(v)))
            .collect();
        pairs.sort();
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn sorted_headers(&self) -> Vec<(String, String)> {
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let folded = v.split_whitespace().collect::<Vec<_>>().join(" ");
                (k.to_ascii_lowercase(), folded)
            })
            .collect();
        headers.sort_by(|a, b| a.0.cmp(&b.0));
        headers
    }

    /// The signed header names: lowercase, sorted, joined by `;`.
    pub fn signed_headers(&self) -> String {
        self.sorted_headers()
            .into_iter()
            .map(|(k, _)| k)
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The canonical request text: method, path, query, headers (each `name:value\n`), the
    /// signed header names and the payload hash, one per line.
    pub fn render(&self) -> String {
        let headers: String = self
            .sorted_headers()
            .iter()
            .map(|(k, v)| format!("{k}:{v}\n"))
            .collect();
        format!(
            "{}\n{}\n{}\n{}\n{}\n{}",
            self.method,
            self.path,
            self.canonical_query(),
            headers,
            self.signed_headers(),
            self.payload_hash
        )
    }
}

/// The string to sign: the algorithm, the timestamp, the credential scope and the hex
/// SHA-256 of the canonical request, one per line.
pub fn string_to_sign(date: &AmzDate, scope: &str, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{}\n{scope}\n{}",
        date.timestamp(),
        sha256_hex(canonical_request.as_bytes())
    )
}

/// What to presign: a request whose authentication travels in its query string.
#[derive(Clone, Debug)]
pub struct PresignRequest<'a> {
    /// `GET` for MSK.
    pub method: &'a str,
    /// The host the request is for (signed as the `host` header).
    pub host: &'a str,
    /// The absolute path, URI-encoded.
    pub path: &'a str,
    /// The request's own query parameters (MSK: `Action=kafka-cluster:Connect`).
    pub query: &'a [(&'a str, &'a str)],
    /// The AWS region (`us-east-1`).
    pub region: &'a str,
    /// The service (`kafka-cluster`).
    pub service: &'a str,
    /// `X-Amz-Expires`: how long the signature is valid, 1 to 604,800 seconds.
    pub expires_secs: u32,
    /// The hex SHA-256 of the body ([`EMPTY_PAYLOAD_SHA256`] for a GET), or
    /// `UNSIGNED-PAYLOAD`.
    pub payload_hash: &'a str,
}

/// A presigned request.
#[derive(Clone, Debug)]
pub struct Presigned {
    /// The query parameters, unencoded, in the order a signer appends them: the request's own,
    /// then `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`,
    /// `X-Amz-Security-Token` (temporary credentials), `X-Amz-SignedHeaders`,
    /// `X-Amz-Signature`.
    pub query: Vec<(String, String)>,
    /// The canonical request that was signed.
    pub canonical_request: String,
    /// The string that was signed.
    pub string_to_sign: String,
    /// The hex signature.
    pub signature: String,
    /// The date of the signature.
    pub date: AmzDate,
}

impl Presigned {
    /// The query string with the signature: the canonical (sorted, encoded) query, then
    /// `&X-Amz-Signature=...`, as AWS's presigners write URLs.
    pub fn query_string(&self) -> String {
        let unsigned = CanonicalRequest {
            method: String::new(),
            path: String::new(),
            query: self
                .query
                .iter()
                .filter(|(k, _)| k != "X-Amz-Signature")
                .cloned()
                .collect(),
            headers: Vec::new(),
            payload_hash: String::new(),
        };
        format!(
            "{}&X-Amz-Signature={}",
            unsigned.canonical_query(),
            self.signature
        )
    }

    /// The value of a query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Presigns `request` with `credentials` at `now_ms`: the query-string form of SigV4, with
/// `host` as the only signed header.
///
/// Refused (`INVALID_ARGUMENT`): an empty host, region or service, a path not starting with
/// `/`, an expiry outside 1..=604,800 seconds, a time outside the years 1970 to 9999.
pub fn presign(
    request: &PresignRequest<'_>,
    credentials: &AwsCredentials,
    now_ms: i64,
) -> Result<Presigned> {
    let bad = |what: &str| Err(Error::new(ErrorCode::InvalidArgument, what.to_string()));
    if request.host.is_empty() || request.host.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return bad("the host to sign for is empty or has spaces or control characters");
    }
    if request.region.is_empty() || request.service.is_empty() {
        return bad("the AWS region and service must not be empty");
    }
    if !request.path.starts_with('/') {
        return bad("the path to sign must start with '/'");
    }
    if request.expires_secs == 0 || request.expires_secs > MAX_EXPIRES_SECS {
        return bad("X-Amz-Expires must be 1 to 604800 seconds");
    }
    let date = AmzDate::from_ms(now_ms)?;
    let scope = credential_scope(&date, request.region, request.service);
    let mut query: Vec<(String, String)> = request
        .query
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    query.push(("X-Amz-Algorithm".into(), ALGORITHM.into()));
    query.push((
        "X-Amz-Credential".into(),
        format!("{}/{scope}", credentials.access_key_id()),
    ));
    query.push(("X-Amz-Date".into(), date.timestamp().into()));
    query.push(("X-Amz-Expires".into(), request.expires_secs.to_string()));
    if let Some(token) = credentials.session_token() {
        query.push(("X-Amz-Security-Token".into(), token.to_string()));
    }
    query.push(("X-Amz-SignedHeaders".into(), "host".into()));
    let canonical = CanonicalRequest {
        method: request.method.to_string(),
        path: request.path.to_string(),
        query: query.clone(),
        headers: vec![("host".into(), request.host.to_string())],
        payload_hash: request.payload_hash.to_string(),
    };
    let canonical_request = canonical.render();
    let string_to_sign = string_to_sign(&date, &scope, &canonical_request);
    let key = signing_key(
        credentials.secret_access_key(),
        date.date(),
        request.region,
        request.service,
    );
    let signature = hex(&hmac_sha256(&*key, string_to_sign.as_bytes()));
    query.push(("X-Amz-Signature".into(), signature.clone()));
    Ok(Presigned {
        query,
        canonical_request,
        string_to_sign,
        signature,
        date,
    })
}
