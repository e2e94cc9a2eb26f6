//! `AWS_MSK_IAM`, Amazon MSK's IAM authentication, on both sides.
//!
//! The client sends one JSON payload: a SigV4-presigned `kafka-cluster:Connect` request for the
//! broker's host (`aws::msk_iam`), signed with the credentials its source holds at that moment,
//! so every re-authentication signs with the current ones. The server answers
//! `{"version":"2020_10_22","request-id":"..."}` and the exchange is complete.
//!
//! The server side here is a verifier for development and tests: the host lists the access
//! keys it knows (with their secrets, session tokens, expiries and the principal each one
//! authenticates as) in an [`AwsKeyStore`], and a payload is accepted when its signature
//! verifies under that key for the configured region and host, its action is
//! `kafka-cluster:Connect` and its date is within AWS's 15 minutes of the server's clock. The
//! session ends no later than the credentials expire. Refusals tell the client only
//! `[<request id>]: Access denied`, as MSK does; the reason stays in the server's error.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::aws::credentials::AwsCredentials;
use crate::aws::msk_iam::{
    client_payload, parse_server_response, presigned_token, ClientPayload, KeyOrder,
    ServerResponse, ACTION, EXPIRES_SECS, PAYLOAD_VERSION, SERVICE, USER_AGENT,
};
use crate::aws::sigv4::{
    self, hex, hmac_sha256, signing_key, AmzDate, CanonicalRequest, ALGORITHM, EMPTY_PAYLOAD_SHA256,
};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::mechanism::{
    Authenticated, ClientMechanism, ClientStep, MechServerStep, ServerMechanism,
};
use crate::mech::oauthbearer::{
    OAuthBearerToken, SaslExtensions, TokenRejection, TokenSource, TokenValidator, ValidatedToken,
};
use crate::names::AWS_MSK_IAM;
use crate::random::{OsRandom, RandomSource};
use crate::secret::{ct_eq, Secret};

/// AWS's allowance for clocks that disagree: a signature dated up to 15 minutes ahead of the
/// server is accepted.
pub const MAX_CLOCK_SKEW_MS: i64 = 15 * 60 * 1000;

/// The largest payload the server reads (a real one is about 1 KiB, 2 KiB with a session
/// token).
pub const MAX_PAYLOAD: usize = 16 * 1024;

/// Where a client gets the AWS credentials to sign with, at the start of every
/// (re-)authentication: fixed credentials, or a refresher holding the current ones.
pub trait AwsCredentialSource: Send + Sync {
    /// The credentials to sign with at `now_ms` (an error, such as `NO_VALID_CREDENTIAL`,
    /// fails the exchange before anything is sent).
    fn aws_credentials(&self, now_ms: i64) -> Result<AwsCredentials>;
}

impl AwsCredentialSource for AwsCredentials {
    fn aws_credentials(&self, now_ms: i64) -> Result<AwsCredentials> {
        match self.expires_at_ms() {
            Some(expiry) if expiry <= now_ms => Err(Error::new(
                ErrorCode::NoValidCredential,
                "the AWS credentials have expired",
            )),
            _ => Ok(self.clone()),
        }
    }
}

/// MSK's OAUTHBEARER tokens (`aws-msk-iam-sasl-signer`) as a token source: every exchange
/// presents a token freshly presigned with the credentials `source` holds, valid 15 minutes
/// (or until the credentials expire, if sooner), so an OAUTHBEARER client (and librdkafka
/// through an `oauth_cb`) authenticates to MSK. The token's principal is the access key id.
pub struct MskTokenSource {
    region: String,
    user_agent: String,
    source: Arc<dyn AwsCredentialSource>,
}

impl std::fmt::Debug for MskTokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MskTokenSource")
            .field("region", &self.region)
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

impl MskTokenSource {
    /// Tokens for a cluster in `region`, reporting `user_agent` (`None`: ksasl's
    /// [`USER_AGENT`]), signed with `source`'s credentials.
    pub fn new(
        region: &str,
        user_agent: Option<&str>,
        source: Arc<dyn AwsCredentialSource>,
    ) -> Self {
        MskTokenSource {
            region: region.to_string(),
            user_agent: user_agent.unwrap_or(USER_AGENT).to_string(),
            source,
        }
    }

    /// The token to present at `now_ms`. Its lifetime is the signature's 15 minutes, or less
    /// when the credentials expire sooner (temporary credentials signed into a token stop
    /// working with them), so a host that refreshes tokens at a fraction of their lifetime, as
    /// librdkafka does at 80 %, signs again with the new credentials in time.
    pub fn token_at(&self, now_ms: i64) -> Result<OAuthBearerToken> {
        let credentials = self.source.aws_credentials(now_ms)?;
        let signed = presigned_token(&self.region, &credentials, now_ms, &self.user_agent)?;
        let expires_at_ms = credentials
            .expires_at_ms()
            .map_or(signed.expires_at_ms(), |e| e.min(signed.expires_at_ms()));
        OAuthBearerToken::new(signed.token(), credentials.access_key_id(), expires_at_ms)
    }
}

impl TokenSource for MskTokenSource {
    fn token(&self, now_ms: i64) -> Result<(OAuthBearerToken, SaslExtensions)> {
        Ok((self.token_at(now_ms)?, SaslExtensions::new()))
    }
}

/// What an `AWS_MSK_IAM` client signs for.
#[derive(Clone, Debug)]
pub struct MskIamClientConfig {
    /// The broker's host name, as the client connects to it (each broker is signed for by
    /// its own name).
    pub host: String,
    /// The cluster's region.
    pub region: String,
    /// The `user-agent` the payload reports.
    pub user_agent: String,
    /// The key order of the JSON ([`KeyOrder::JavaHashMap`], as `aws-msk-iam-auth`).
    pub order: KeyOrder,
}

impl MskIamClientConfig {
    /// A configuration as a binding receives it: the user agent (`None`: ksasl's) and the key
    /// order by name (`None`: `java`; see [`KeyOrder::from_name`]).
    pub fn with_options(
        host: &str,
        region: &str,
        user_agent: Option<&str>,
        key_order: Option<&str>,
    ) -> Result<Self> {
        let mut c = MskIamClientConfig::new(host, region);
        if let Some(ua) = user_agent {
            c.user_agent = ua.to_string();
        }
        if let Some(order) = key_order {
            c.order = KeyOrder::from_name(order)?;
        }
        Ok(c)
    }

    /// A configuration with ksasl's user agent and the Java library's key order.
    pub fn new(host: &str, region: &str) -> Self {
        MskIamClientConfig {
            host: host.to_string(),
            region: region.to_string(),
            user_agent: USER_AGENT.to_string(),
            order: KeyOrder::JavaHashMap,
        }
    }
}

/// The client side of `AWS_MSK_IAM`.
pub struct AwsMskIamClient {
    config: Arc<MskIamClientConfig>,
    source: Arc<dyn AwsCredentialSource>,
    response: Option<ServerResponse>,
}

impl std::fmt::Debug for AwsMskIamClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsMskIamClient")
            .field("config", &self.config)
            .field("response", &self.response)
            .finish()
    }
}

impl AwsMskIamClient {
    /// A client signing with what `source` holds when each exchange starts.
    pub fn new(config: Arc<MskIamClientConfig>, source: Arc<dyn AwsCredentialSource>) -> Self {
        AwsMskIamClient {
            config,
            source,
            response: None,
        }
    }

    /// The broker's answer (its request id), once it arrived.
    pub fn response(&self) -> Option<&ServerResponse> {
        self.response.as_ref()
    }
}

impl ClientMechanism for AwsMskIamClient {
    fn name(&self) -> &str {
        AWS_MSK_IAM
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        let credentials = self.source.aws_credentials(now_ms)?;
        let payload = client_payload(
            &ClientPayload {
                host: &self.config.host,
                region: &self.config.region,
                user_agent: &self.config.user_agent,
                order: self.config.order,
            },
            &credentials,
            now_ms,
        )?;
        Ok(ClientStep::Send(payload))
    }

    fn step(&mut self, challenge: &[u8], _now_ms: i64) -> Result<ClientStep> {
        if self.response.is_some() {
            return Err(Error::new(
                ErrorCode::UnexpectedChallenge,
                "a challenge arrived after the broker's AWS_MSK_IAM response",
            ));
        }
        self.response = Some(parse_server_response(challenge)?);
        Ok(ClientStep::Done(None))
    }
}

/// An access key the verifying server knows.
#[derive(Clone)]
struct AwsKey {
    secret: Secret,
    session_token: Option<Secret>,
    expires_at_ms: Option<i64>,
    principal: String,
}

/// The access keys a verifying server accepts, shared by every connection and changeable
/// while they run (a rotation adds the new key, then removes the old one).
#[derive(Default)]
pub struct AwsKeyStore {
    keys: RwLock<HashMap<String, AwsKey>>,
}

impl std::fmt::Debug for AwsKeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.keys.read().map(|k| k.len()).unwrap_or(0);
        write!(f, "AwsKeyStore({n} keys)")
    }
}

impl AwsKeyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) `credentials`, which authenticate as `principal` (the name of
    /// `User:<principal>`, an IAM ARN for instance).
    pub fn add(&self, credentials: &AwsCredentials, principal: &str) -> Result<()> {
        if principal.is_empty() || principal.chars().any(char::is_control) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the principal of an AWS key must be non-empty without control characters",
            ));
        }
        let key = AwsKey {
            secret: Secret::from_slice(credentials.secret_access_key()),
            session_token: credentials.session_token().map(Secret::from),
            expires_at_ms: credentials.expires_at_ms(),
            principal: principal.to_string(),
        };
        self.keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(credentials.access_key_id().to_string(), key);
        Ok(())
    }

    /// Removes an access key; whether it was there.
    pub fn remove(&self, access_key_id: &str) -> bool {
        self.keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(access_key_id)
            .is_some()
    }

    fn get(&self, access_key_id: &str) -> Option<AwsKey> {
        self.keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(access_key_id)
            .cloned()
    }
}

/// What a verifying server checks payloads against.
#[derive(Clone, Debug)]
pub struct MskIamServerConfig {
    /// The known keys.
    pub keys: Arc<AwsKeyStore>,
    /// The region signatures must be scoped to.
    pub region: String,
    /// The host names clients may sign for (compared without case); empty: any.
    pub hosts: Vec<String>,
}

impl MskIamServerConfig {
    /// Payloads and tokens signed for `region` with a key of `keys`; AWS_MSK_IAM payloads
    /// for one of `hosts` (empty: any).
    pub fn new(keys: Arc<AwsKeyStore>, region: &str, hosts: Vec<String>) -> Self {
        MskIamServerConfig {
            keys,
            region: region.to_string(),
            hosts,
        }
    }
}

/// The server side of `AWS_MSK_IAM` (a verifier; see the module documentation).
pub struct AwsMskIamServer {
    config: Arc<MskIamServerConfig>,
    random: Arc<dyn RandomSource>,
}

impl AwsMskIamServer {
    /// A server verifying against `config`.
    pub fn new(config: Arc<MskIamServerConfig>) -> Self {
        AwsMskIamServer {
            config,
            random: Arc::new(OsRandom),
        }
    }

    /// A request id as MSK's: a random UUID (version 4).
    fn request_id(&self) -> Result<String> {
        let mut b = [0u8; 16];
        self.random.fill(&mut b)?;
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = hex(&b);
        Ok(format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        ))
    }

    /// Checks a payload; the principal and the credentials' expiry, or why not (never shown
    /// to the client).
    fn verify(&self, response: &[u8], now_ms: i64) -> std::result::Result<AwsKeyMatch, String> {
        if response.len() > MAX_PAYLOAD {
            return Err(format!("the payload has {} bytes", response.len()));
        }
        let value: serde_json::Value =
            serde_json::from_slice(response).map_err(|_| "the payload is not JSON".to_string())?;
        let object = value
            .as_object()
            .ok_or_else(|| "the payload is not a JSON object".to_string())?;
        let mut fields = Vec::with_capacity(object.len());
        for (k, v) in object {
            match v {
                serde_json::Value::String(s) => fields.push((k.as_str(), s.as_str())),
                _ => {
                    return Err(format!(
                        "{} is not a string",
                        crate::error::quote(k.as_bytes())
                    ))
                }
            }
        }
        let get = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        if get("version") != Some(PAYLOAD_VERSION) {
            return Err("the payload version is not 2020_10_22".into());
        }
        check_signed(&self.config, &self.config.hosts, &get, now_ms)
    }
}

/// The key names of a presigned request's fields, as the payload spells them (lowercase).
type Fields<'a> = dyn Fn(&str) -> Option<&'a str> + 'a;

/// Checks a presigned `kafka-cluster:Connect` request given by its fields (`action`,
/// `x-amz-*`, `host`): every rule of the module documentation, then the signature under the
/// key it names.
fn check_signed<'a>(
    config: &MskIamServerConfig,
    allowed_hosts: &[String],
    get: &Fields<'a>,
    now_ms: i64,
) -> std::result::Result<AwsKeyMatch, String> {
    let field = |name: &str| get(name).ok_or_else(|| format!("'{name}' is missing"));
    if field("action")? != ACTION {
        return Err("the action is not kafka-cluster:Connect".into());
    }
    if field("x-amz-algorithm")? != ALGORITHM {
        return Err("the algorithm is not AWS4-HMAC-SHA256".into());
    }
    if field("x-amz-signedheaders")? != "host" {
        return Err("the signed headers are not 'host'".into());
    }
    let host = field("host")?;
    if !allowed_hosts.is_empty() && !allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err("the request is signed for another host".into());
    }
    let timestamp = field("x-amz-date")?;
    let (date, signed_ms) =
        AmzDate::parse(timestamp).ok_or_else(|| "x-amz-date is not a date".to_string())?;
    let expires = field("x-amz-expires")?;
    let expires_secs: i64 = match expires.parse::<u32>() {
        Ok(n) if (1..=EXPIRES_SECS).contains(&n) && !expires.starts_with('0') => n.into(),
        _ => return Err("x-amz-expires is not 1 to 900 seconds".into()),
    };
    if signed_ms > now_ms + MAX_CLOCK_SKEW_MS {
        return Err("the signature is dated more than 15 minutes ahead".into());
    }
    if now_ms > signed_ms + expires_secs * 1000 {
        return Err("the signature has expired".into());
    }
    let credential = field("x-amz-credential")?;
    let parts: Vec<&str> = credential.split('/').collect();
    let [access_key_id, scope_date, region, service, terminator] = parts[..] else {
        return Err("x-amz-credential is not key/date/region/service/aws4_request".into());
    };
    if scope_date != date.date() {
        return Err("the credential scope's date is not the signature's".into());
    }
    if region != config.region {
        return Err("the credential scope names another region".into());
    }
    if service != SERVICE || terminator != "aws4_request" {
        return Err("the credential scope is not for kafka-cluster".into());
    }
    let key = config
        .keys
        .get(access_key_id)
        .ok_or_else(|| "the access key is unknown".to_string())?;
    if key.expires_at_ms.is_some_and(|e| e <= now_ms) {
        return Err("the access key's credentials have expired".into());
    }
    let token = get("x-amz-security-token");
    match (&key.session_token, token) {
        (None, None) => {}
        (Some(want), Some(got)) if want.ct_eq(got.as_bytes()) => {}
        (Some(_), Some(_)) => return Err("the session token is not the key's".into()),
        (Some(_), None) => return Err("the session token is missing".into()),
        (None, Some(_)) => return Err("a session token came with a long-term key".into()),
    }
    let mut query = vec![
        ("Action".to_string(), ACTION.to_string()),
        ("X-Amz-Algorithm".into(), ALGORITHM.into()),
        ("X-Amz-Credential".into(), credential.into()),
        ("X-Amz-Date".into(), timestamp.into()),
        ("X-Amz-Expires".into(), expires.into()),
        ("X-Amz-SignedHeaders".into(), "host".into()),
    ];
    if let Some(t) = token {
        query.push(("X-Amz-Security-Token".into(), t.into()));
    }
    let canonical = CanonicalRequest {
        method: "GET".into(),
        path: "/".into(),
        query,
        headers: vec![("host".into(), host.into())],
        payload_hash: EMPTY_PAYLOAD_SHA256.into(),
    }
    .render();
    let scope = sigv4::credential_scope(&date, region, SERVICE);
    let to_sign = sigv4::string_to_sign(&date, &scope, &canonical);
    let signing = signing_key(key.secret.expose(), date.date(), region, SERVICE);
    let expected = hex(&hmac_sha256(&*signing, to_sign.as_bytes()));
    if !ct_eq(expected.as_bytes(), field("x-amz-signature")?.as_bytes()) {
        return Err("the signature does not verify".into());
    }
    Ok(AwsKeyMatch {
        principal: key.principal,
        expires_at_ms: key.expires_at_ms,
    })
}

struct AwsKeyMatch {
    principal: String,
    expires_at_ms: Option<i64>,
}

impl ServerMechanism for AwsMskIamServer {
    fn name(&self) -> &str {
        AWS_MSK_IAM
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        let request_id = self.request_id()?;
        match self.verify(response, now_ms) {
            Ok(found) => {
                let mut who = Authenticated::new(found.principal);
                who.credential_expiry_ms = found.expires_at_ms;
                let answer = format!(
                    "{{\"version\":\"{PAYLOAD_VERSION}\",\"request-id\":\"{request_id}\"}}"
                );
                Ok(MechServerStep::Done(Some(answer.into_bytes()), who))
            }
            Err(reason) => Err(Error::new(
                ErrorCode::InvalidCredentials,
                format!("AWS_MSK_IAM request {request_id} refused: {reason}"),
            )
            .with_client_text(format!("[{request_id}]: Access denied"))
            .with_detail("request_id", request_id)),
        }
    }
}

/// Verifies MSK's presigned OAUTHBEARER tokens (what [`MskTokenSource`] and
/// `aws-msk-iam-sasl-signer` make) against an [`AwsKeyStore`], for an OAUTHBEARER server: the
/// URL must be `https://kafka.<region>.amazonaws.com/?...` for the configured region, and its
/// parameters pass the same checks as an `AWS_MSK_IAM` payload. The session ends when the
/// signature does (15 minutes after signing) or the credentials expire, whichever is first.
#[derive(Debug)]
pub struct MskTokenValidator {
    config: Arc<MskIamServerConfig>,
}

impl MskTokenValidator {
    /// A validator checking against `config` (its `hosts` do not apply: tokens are signed for
    /// the regional `kafka.<region>.amazonaws.com`).
    pub fn new(config: Arc<MskIamServerConfig>) -> Self {
        MskTokenValidator { config }
    }

    fn check(&self, token: &str, now_ms: i64) -> std::result::Result<ValidatedToken, String> {
        if token.len() > MAX_PAYLOAD {
            return Err(format!("the token has {} bytes", token.len()));
        }
        let bytes = base64::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            token.trim_end_matches('='),
        )
        .map_err(|_| "the token is not base64url".to_string())?;
        let url = String::from_utf8(bytes).map_err(|_| "the token is not a URL".to_string())?;
        let host = format!("kafka.{}.amazonaws.com", self.config.region);
        let query = url
            .strip_prefix("https://")
            .and_then(|rest| rest.strip_prefix(host.as_str()))
            .and_then(|rest| rest.strip_prefix("/?"))
            .ok_or_else(|| "the token is not a URL of the region's kafka endpoint".to_string())?;
        let mut fields: Vec<(String, String)> = vec![("host".into(), host.clone())];
        for pair in query.split('&') {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| "a query parameter has no value".to_string())?;
            let (k, v) = (percent_decode(k)?, percent_decode(v)?);
            let name = match k.as_str() {
                "User-Agent" => continue,
                "Action" => "action".to_string(),
                k if k.starts_with("X-Amz-") => k.to_ascii_lowercase(),
                _ => return Err("the token has a parameter MSK does not sign".into()),
            };
            if fields.iter().any(|(n, _)| *n == name) {
                return Err("a query parameter appears twice".into());
            }
            fields.push((name, v));
        }
        let get = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let found = check_signed(&self.config, std::slice::from_ref(&host), &get, now_ms)?;
        let (_, signed_ms) = get("x-amz-date")
            .and_then(AmzDate::parse)
            .ok_or_else(|| "x-amz-date is not a date".to_string())?;
        let expires: i64 = get("x-amz-expires")
            .and_then(|e| e.parse().ok())
            .unwrap_or_default();
        let mut expiry = signed_ms + expires * 1000;
        if let Some(e) = found.expires_at_ms {
            expiry = expiry.min(e);
        }
        ValidatedToken::from_host(&found.principal, expiry).map_err(|r| r.reason)
    }
}

impl TokenValidator for MskTokenValidator {
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        self.check(token, now_ms)
            .map_err(|reason| TokenRejection::invalid_token(ErrorCode::TokenRejected, reason))
    }
}

/// Strict percent-decoding of a query name or value: `%XX` with hex digits, UTF-8 result.
fn percent_decode(s: &str) -> std::result::Result<String, String> {
    let bad = || "a query parameter is not percent-encoded UTF-8".to_string();
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or_else(bad)?;
            if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad());
            }
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}
