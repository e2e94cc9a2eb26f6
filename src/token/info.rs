//! What a delegation token is: its configuration, its information (owner, renewers,
//! timestamps) and persisted record, its id and HMAC, the principals it names, and Kafka's
//! error codes of the token APIs.

use std::fmt;
use std::sync::Arc;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha512;

use crate::credential::PasswordCredential;
use crate::error::{Error, ErrorCode, Result};
use crate::kafka::delegation_tokens::error_code;
use crate::mech::Principal;
use crate::random::RandomSource;
use crate::refresh::{CredentialValue, ExpiringCredential, Refresher};
use crate::secret::Secret;

/// The SCRAM iteration count of token credentials (Kafka's fixed value).
pub const TOKEN_SCRAM_ITERATIONS: u32 = 4096;

/// The Kafka error code to put in a token response for a ksasl error from the authority.
pub fn kafka_error_code(e: &Error) -> i16 {
    match e.code() {
        ErrorCode::DelegationTokenNotFound => error_code::DELEGATION_TOKEN_NOT_FOUND,
        ErrorCode::DelegationTokenOwnerMismatch => error_code::DELEGATION_TOKEN_OWNER_MISMATCH,
        ErrorCode::DelegationTokenRequestNotAllowed => {
            error_code::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
        }
        ErrorCode::DelegationTokenExpired => error_code::DELEGATION_TOKEN_EXPIRED,
        ErrorCode::InvalidPrincipalType => error_code::INVALID_PRINCIPAL_TYPE,
        _ => UNKNOWN_SERVER_ERROR,
    }
}

/// The ksasl error for a Kafka error code in a token response (0 is not an error).
pub fn error_from_kafka(code: i16, what: &str) -> Error {
    let name = error_code::name(code).unwrap_or("UNKNOWN");
    let e = match code {
        error_code::DELEGATION_TOKEN_NOT_FOUND => ErrorCode::DelegationTokenNotFound,
        error_code::DELEGATION_TOKEN_OWNER_MISMATCH => ErrorCode::DelegationTokenOwnerMismatch,
        error_code::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
        | error_code::DELEGATION_TOKEN_AUTHORIZATION_FAILED
        | error_code::DELEGATION_TOKEN_AUTH_DISABLED => ErrorCode::DelegationTokenRequestNotAllowed,
        error_code::DELEGATION_TOKEN_EXPIRED => ErrorCode::DelegationTokenExpired,
        error_code::INVALID_PRINCIPAL_TYPE => ErrorCode::InvalidPrincipalType,
        _ => ErrorCode::KafkaError,
    };
    // The Kafka name only when it says more than the code's own name (shown with the message).
    let text = if name == e.name() {
        format!("{what} failed with Kafka error {code}")
    } else {
        format!("{what} failed with Kafka error {code} ({name})")
    };
    Error::new(e, text).with_detail("kafka_error_code", code.to_string())
}

/// Kafka's UNKNOWN_SERVER_ERROR.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;

/// `delegation.token.*` settings.
#[derive(Clone)]
pub struct TokenConfig {
    /// `delegation.token.secret.key`: must be identical on every broker of a cluster.
    pub secret_key: Secret,
    /// `delegation.token.max.lifetime.ms` (default 7 days): the hard cap from issue time.
    pub max_lifetime_ms: i64,
    /// `delegation.token.expiry.time.ms` (default 1 day): the default and largest renewal.
    pub expiry_time_ms: i64,
    /// `delegation.token.expiry.check.interval.ms` (default 1 hour): the sweep period.
    pub expiry_check_interval_ms: i64,
}

impl fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenConfig")
            .field("secret_key", &"<redacted>")
            .field("max_lifetime_ms", &self.max_lifetime_ms)
            .field("expiry_time_ms", &self.expiry_time_ms)
            .field("expiry_check_interval_ms", &self.expiry_check_interval_ms)
            .finish()
    }
}

impl TokenConfig {
    /// Kafka's defaults with `secret_key`.
    pub fn new(secret_key: impl Into<Secret>) -> Self {
        TokenConfig {
            secret_key: secret_key.into(),
            max_lifetime_ms: 7 * 24 * 3600 * 1000,
            expiry_time_ms: 24 * 3600 * 1000,
            expiry_check_interval_ms: 3600 * 1000,
        }
    }

    /// `secret_key` with `[max_lifetime_ms, expiry_time_ms, expiry_check_interval_ms]`, each
    /// `None` taking Kafka's default (how every binding receives the settings).
    pub fn with_settings(secret_key: impl Into<Secret>, settings: [Option<i64>; 3]) -> Self {
        let mut c = TokenConfig::new(secret_key);
        let fields = [
            &mut c.max_lifetime_ms,
            &mut c.expiry_time_ms,
            &mut c.expiry_check_interval_ms,
        ];
        for (field, given) in fields.into_iter().zip(settings) {
            *field = given.unwrap_or(*field);
        }
        c
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.secret_key.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "delegation.token.secret.key must not be empty (delegation tokens are disabled without it)",
            ));
        }
        for (name, v) in [
            ("delegation.token.max.lifetime.ms", self.max_lifetime_ms),
            ("delegation.token.expiry.time.ms", self.expiry_time_ms),
            (
                "delegation.token.expiry.check.interval.ms",
                self.expiry_check_interval_ms,
            ),
        ] {
            if v < 1 {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    format!("{name} must be at least 1, not {v}"),
                ));
            }
        }
        Ok(())
    }
}

/// What the authority knows about a token (Kafka's `TokenInformation`); holds no secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    /// The token id (the SCRAM username for `tokenauth`).
    pub token_id: String,
    /// Whom a login with the token authenticates as.
    pub owner: Principal,
    /// Who asked for the token (the owner unless created on someone's behalf).
    pub requester: Principal,
    /// Who else may renew or expire it.
    pub renewers: Vec<Principal>,
    /// When it was issued (ms since the epoch).
    pub issue_ms: i64,
    /// When it expires unless renewed.
    pub expiry_ms: i64,
    /// The latest expiry any renewal can reach.
    pub max_ms: i64,
}

impl TokenInfo {
    /// Whether the token has expired at `now_ms` (Kafka: either timestamp in the past).
    pub fn is_expired(&self, now_ms: i64) -> bool {
        self.max_ms < now_ms || self.expiry_ms < now_ms
    }

    pub(crate) fn may_manage(&self, caller: &Principal) -> bool {
        self.owner == *caller || self.renewers.iter().any(|r| r == caller)
    }

    /// The token as a JSON record (Kafka's `DelegationTokenRecord` fields, camel-cased);
    /// no secret is included.
    pub fn to_record(&self) -> Value {
        json!({
            "tokenId": self.token_id,
            "owner": self.owner.to_string(),
            "requester": self.requester.to_string(),
            "renewers": self.renewers.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            "issueTimestamp": self.issue_ms,
            "maxTimestamp": self.max_ms,
            "expirationTimestamp": self.expiry_ms,
        })
    }

    /// Reads a record written by [`TokenInfo::to_record`].
    pub fn from_record(v: &Value) -> Result<Self> {
        let bad = |what: &str| {
            Error::new(
                ErrorCode::InvalidCredentialFormat,
                format!("invalid delegation token record: {what}"),
            )
        };
        let obj = v.as_object().ok_or_else(|| bad("not a JSON object"))?;
        let text = |k: &str| {
            obj.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| bad(&format!("\"{k}\" is missing or not a string")))
        };
        let num = |k: &str| {
            obj.get(k)
                .and_then(Value::as_i64)
                .ok_or_else(|| bad(&format!("\"{k}\" is missing or not an integer")))
        };
        let principal = |s: &str, k: &str| {
            parse_principal(s).ok_or_else(|| bad(&format!("\"{k}\" is not a TYPE:NAME principal")))
        };
        let token_id = text("tokenId")?.to_string();
        if !valid_token_id(&token_id) {
            return Err(bad("\"tokenId\" is not a 22-character base64url id"));
        }
        let renewers = obj
            .get("renewers")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("\"renewers\" is missing or not an array"))?
            .iter()
            .map(|r| {
                r.as_str()
                    .and_then(parse_principal)
                    .ok_or_else(|| bad("a renewer is not a TYPE:NAME principal"))
            })
            .collect::<Result<Vec<_>>>()?;
        let info = TokenInfo {
            owner: principal(text("owner")?, "owner")?,
            requester: principal(text("requester")?, "requester")?,
            renewers,
            issue_ms: num("issueTimestamp")?,
            max_ms: num("maxTimestamp")?,
            expiry_ms: num("expirationTimestamp")?,
            token_id,
        };
        if info.expiry_ms > info.max_ms || info.issue_ms > info.max_ms {
            return Err(bad("the timestamps are out of order"));
        }
        Ok(info)
    }
}

/// Reads a principal given by a user of a binding: `TYPE:NAME`, or a bare name meaning
/// `User:<name>`. Anything with a colon goes through [`parse_principal`].
pub fn principal_from_str(s: &str) -> Result<Principal> {
    if s.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "a principal name must not be empty",
        ));
    }
    if !s.contains(':') {
        return Ok(Principal::user(s));
    }
    parse_principal(s).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{s:?} is not a TYPE:NAME principal"),
        )
    })
}

/// Parses `TYPE:NAME` (the type is everything before the first colon; neither part may be
/// empty). The only `TYPE:NAME` parser: [`principal_from_str`] and the record reader use it.
pub fn parse_principal(s: &str) -> Option<Principal> {
    let (t, n) = s.split_once(':')?;
    if t.is_empty() || n.is_empty() {
        return None;
    }
    Some(Principal {
        principal_type: t.to_string(),
        name: n.to_string(),
        token_authenticated: false,
    })
}

pub(crate) fn valid_token_id(id: &str) -> bool {
    id.len() == 22
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A token with its HMAC: what a create (or a describe) hands to the client.
#[derive(Clone)]
pub struct DelegationToken {
    /// Who, when, how long.
    pub info: TokenInfo,
    pub(crate) hmac: Secret,
}

impl fmt::Debug for DelegationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegationToken")
            .field("info", &self.info)
            .field("hmac", &"<redacted>")
            .finish()
    }
}

impl DelegationToken {
    /// A token received from a broker (CreateDelegationToken or DescribeDelegationToken).
    pub fn new(info: TokenInfo, hmac: Vec<u8>) -> Self {
        DelegationToken {
            info,
            hmac: Secret::new(hmac),
        }
    }

    /// The 64-byte HMAC (a secret).
    pub fn hmac(&self) -> &[u8] {
        self.hmac.expose()
    }

    /// The SCRAM password of the token: standard base64 of the HMAC, with padding (a
    /// secret).
    pub fn hmac_base64(&self) -> Secret {
        Secret::from(STANDARD.encode(self.hmac.expose()).as_str())
    }

    /// The token id: the SCRAM username with `tokenauth=true`.
    pub fn token_id(&self) -> &str {
        &self.info.token_id
    }

    /// The client's credential: the token id and the base64 HMAC, for SCRAM with
    /// `tokenauth=true`.
    pub fn client_credential(&self) -> Result<PasswordCredential> {
        let password = zeroize::Zeroizing::new(STANDARD.encode(self.hmac.expose()));
        PasswordCredential::delegation_token(&self.info.token_id, &password)
    }

    /// Installs the token in `refresher` as an expiring credential (refreshed on Kafka's
    /// schedule before its expiry, never past its maximum lifetime): clients registered with
    /// [`crate::MechanismRegistry::register_refreshing_password_clients`] log in with it.
    /// The host answers each refresh with a renewed token (or a new one). Returns the
    /// refresher's generation.
    pub fn install(&self, refresher: &Refresher, now_ms: i64) -> Result<u64> {
        let expiring = ExpiringCredential {
            start_ms: Some(self.info.issue_ms),
            expiry_ms: self.info.expiry_ms,
            absolute_last_refresh_ms: Some(self.info.max_ms),
        };
        refresher.set_credential(
            &self.info.owner.name,
            expiring,
            CredentialValue::Password(Arc::new(self.client_credential()?)),
            now_ms,
        )
    }

    /// The same token with a new expiry (after a renew).
    pub fn renewed(&self, expiry_ms: i64) -> Self {
        let mut t = self.clone();
        t.info.expiry_ms = expiry_ms;
        t
    }
}

/// HMAC-SHA512 of `token_id` under `secret_key`: a token's HMAC.
pub fn token_hmac(secret_key: &[u8], token_id: &str) -> Secret {
    let mut mac = <Hmac<Sha512> as Mac>::new_from_slice(secret_key).expect("any key length");
    mac.update(token_id.as_bytes());
    Secret::new(mac.finalize().into_bytes().to_vec())
}

/// Generates a fresh random secret key suitable for `delegation.token.secret.key` tests.
pub fn random_secret_key(rng: &dyn RandomSource) -> Result<Secret> {
    let mut b = [0u8; 32];
    rng.fill(&mut b)?;
    Ok(Secret::from(URL_SAFE_NO_PAD.encode(b).as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kafka_error_is_named_once() {
        let same = error_from_kafka(
            error_code::DELEGATION_TOKEN_NOT_FOUND,
            "RenewDelegationToken",
        );
        assert_eq!(same.code(), ErrorCode::DelegationTokenNotFound);
        assert_eq!(
            same.message(),
            "RenewDelegationToken failed with Kafka error 62"
        );
        let other = error_from_kafka(error_code::DELEGATION_TOKEN_AUTH_DISABLED, "x");
        assert_eq!(other.code(), ErrorCode::DelegationTokenRequestNotAllowed);
        assert!(
            other
                .message()
                .ends_with("(DELEGATION_TOKEN_AUTH_DISABLED)"),
            "{other}"
        );
        assert_eq!(
            other
                .to_string()
                .matches("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")
                .count(),
            1
        );
    }
}
