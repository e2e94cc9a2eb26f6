//! Signed JWT validation against a JWKS (KIP-768's `OAuthBearerValidatorCallbackHandler`).
//!
//! Signatures are checked by `jsonwebtoken` 9 on `ring`; everything else (header, key
//! selection, time claims with an injected clock, issuer, audience, subject, scope) is done
//! here, so the core never reads the clock and every rejection has its own code. The JWKS is
//! given as JSON and can be replaced at any time; the validator never fetches it, but tells
//! the host when a fetch is due (periodic refresh, or an unknown `kid`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::unsecured::{json_object, number};
use super::validator::{TokenRejection, TokenValidator, ValidatedToken};
use crate::error::{quote, Error, ErrorCode, Result};
use crate::secret::Secret;
use crate::sync::Padded;

/// Kafka's default clock skew for signed tokens (`sasl.oauthbearer.clock.skew.seconds`).
pub const DEFAULT_CLOCK_SKEW_MS: i64 = 30_000;
/// Kafka's default JWKS refresh period (`sasl.oauthbearer.jwks.endpoint.refresh.ms`).
pub const DEFAULT_REFRESH_PERIOD_MS: i64 = 3_600_000;
/// Kafka's first wait after a failed JWKS fetch (`sasl.oauthbearer.jwks.endpoint.retry.backoff.ms`).
pub const DEFAULT_JWKS_RETRY_BACKOFF_MS: i64 = 100;
/// Kafka's longest wait (`sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms`).
pub const DEFAULT_JWKS_RETRY_BACKOFF_MAX_MS: i64 = 10_000;
/// Kafka refetches the JWKS for an unknown `kid` at most once a minute per `kid`.
pub const DEFAULT_UNKNOWN_KID_INTERVAL_MS: i64 = 60_000;
const MAX_TRACKED_KIDS: usize = 16;
const MAX_KID_LEN: usize = 1000;

/// Configuration of a [`JwksValidator`], with Kafka's defaults.
#[derive(Clone, Debug)]
pub struct JwtValidatorConfig {
    /// Allowed skew for `exp` and `nbf` (default 30 s).
    pub clock_skew_ms: i64,
    /// The required `iss`, if any (`sasl.oauthbearer.expected.issuer`).
    pub expected_issuer: Option<String>,
    /// Accepted audiences (`sasl.oauthbearer.expected.audience`). As in Kafka, a token that
    /// carries `aud` is refused when this is empty.
    pub expected_audiences: Vec<String>,
    /// The principal claim (`sasl.oauthbearer.sub.claim.name`, default `sub`).
    pub subject_claim_name: String,
    /// The scope claim (`sasl.oauthbearer.scope.claim.name`, default `scope`).
    pub scope_claim_name: String,
    /// Accepted signature algorithms (default: RS256/384/512, PS256/384/512, ES256/384,
    /// EdDSA). HMAC algorithms are accepted only together with `hmac_secret`.
    pub algorithms: Vec<Algorithm>,
    /// A shared secret for HS256/384/512. Without it HMAC tokens are always refused, which
    /// closes the RSA-public-key-as-HMAC-secret confusion.
    pub hmac_secret: Option<Secret>,
    /// How often the JWKS should be refreshed (default one hour).
    pub refresh_period_ms: i64,
    /// Minimum interval between JWKS refetches requested for the same unknown `kid`.
    pub unknown_kid_interval_ms: i64,
    /// The first wait after a failed fetch (default 100 ms); each further failure doubles it.
    pub retry_backoff_ms: i64,
    /// The longest wait between failed fetches (default 10 s). Unlike Kafka, which gives up
    /// on a refresh after this budget and waits for the next period, ksasl keeps retrying at
    /// this interval: a listener without current keys refuses every new token.
    pub retry_backoff_max_ms: i64,
    /// The largest token accepted (default 512 KiB).
    pub max_token_size: usize,
    /// Also refuse tokens whose `iat` lies further in the future than the clock skew. Off by
    /// default, as in Kafka, whose validator (jose4j) only requires `iat` to be present; Kafka
    /// has no property for this check, it is ksasl's own.
    pub validate_iat: bool,
}

impl Default for JwtValidatorConfig {
    fn default() -> Self {
        use Algorithm::*;
        JwtValidatorConfig {
            clock_skew_ms: DEFAULT_CLOCK_SKEW_MS,
            expected_issuer: None,
            expected_audiences: Vec::new(),
            subject_claim_name: "sub".into(),
            scope_claim_name: "scope".into(),
            algorithms: vec![
                RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA,
            ],
            hmac_secret: None,
            refresh_period_ms: DEFAULT_REFRESH_PERIOD_MS,
            unknown_kid_interval_ms: DEFAULT_UNKNOWN_KID_INTERVAL_MS,
            retry_backoff_ms: DEFAULT_JWKS_RETRY_BACKOFF_MS,
            retry_backoff_max_ms: DEFAULT_JWKS_RETRY_BACKOFF_MAX_MS,
            max_token_size: 512 * 1024,
            validate_iat: false,
        }
    }
}

impl JwtValidatorConfig {
    /// Sets the accepted algorithms by their JOSE names (`RS256`, `ES384`, `EdDSA`, ...), as
    /// the bindings pass them; an unknown name is an `INVALID_CONFIG` error.
    pub fn set_algorithm_names<S: AsRef<str>>(&mut self, names: &[S]) -> Result<()> {
        let mut algorithms = Vec::with_capacity(names.len());
        for n in names {
            let n = n.as_ref();
            algorithms.push(n.parse::<Algorithm>().map_err(|_| {
                Error::new(
                    ErrorCode::InvalidConfig,
                    // Quoted like every peer or host text (a byte slice could split a character).
                    format!("\"{}\" is not a JWS algorithm", quote(n.as_bytes())),
                )
            })?);
        }
        self.algorithms = algorithms;
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Rsa,
    Ec(bool), // true = P-256, false = P-384
    Ed,
    Hmac,
}

fn family_of(alg: Algorithm) -> Family {
    use Algorithm::*;
    match alg {
        HS256 | HS384 | HS512 => Family::Hmac,
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 => Family::Rsa,
        ES256 => Family::Ec(true),
        ES384 => Family::Ec(false),
        EdDSA => Family::Ed,
    }
}

struct Key {
    kid: Option<String>,
    declared_alg: Option<String>,
    family: Family,
    key: DecodingKey,
}

#[derive(Default)]
struct Refetch {
    loaded_at_ms: Option<i64>,
    requested_at_ms: Option<i64>,
    recent_kids: Vec<(String, i64)>,
    failures: u32,
    failed_at_ms: i64,
    last_failure: Option<String>,
}

/// Validates signed JWTs against a JWKS. Share one per listener (`Arc`); the key set can be
/// replaced at any time from any thread.
pub struct JwksValidator {
    config: JwtValidatorConfig,
    keys: RwLock<Arc<Vec<Key>>>,
    /// Read by every cache hit in front of this validator: on lines of its own, away from the
    /// lock that every signature check writes.
    generation: Padded<AtomicU64>,
    refetch: Mutex<Refetch>,
}

impl std::fmt::Debug for JwksValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksValidator")
            .field("keys", &self.key_ids())
            .field("generation", &self.generation())
            .finish()
    }
}

impl JwksValidator {
    /// A validator with no keys yet: load them with [`JwksValidator::set_jwks`].
    pub fn new(config: JwtValidatorConfig) -> Result<Self> {
        if config.algorithms.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "at least one algorithm must be allowed",
            ));
        }
        let hmac = config
            .algorithms
            .iter()
            .any(|a| family_of(*a) == Family::Hmac);
        if hmac && config.hmac_secret.as_ref().map_or(true, |s| s.is_empty()) {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "HMAC algorithms need a configured shared secret",
            ));
        }
        if config.clock_skew_ms < 0
            || config.refresh_period_ms <= 0
            || config.unknown_kid_interval_ms < 0
            || config.retry_backoff_ms < 0
            || config.retry_backoff_max_ms < config.retry_backoff_ms
            || config.max_token_size == 0
        {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "clock skew, intervals and backoffs must not be negative, the backoff not above its \
                 maximum, nor the maximum token size zero",
            ));
        }
        if config.subject_claim_name.trim().is_empty() || config.scope_claim_name.trim().is_empty()
        {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "claim names must not be blank",
            ));
        }
        Ok(JwksValidator {
            config,
            keys: RwLock::new(Arc::new(Vec::new())),
            generation: Padded(AtomicU64::new(1)),
            refetch: Mutex::new(Refetch::default()),
        })
    }

    /// Replaces the key set with the JWKS (RFC 7517) in `json`, fetched at `now_ms`. Keys of
    /// unsupported types, encryption keys and symmetric keys are skipped. Returns the number
    /// of usable keys; a JWKS that is not JSON or has none is an error and changes nothing.
    pub fn set_jwks(&self, json: &str, now_ms: i64) -> Result<usize> {
        let bad = |why: &str| Error::new(ErrorCode::InvalidConfig, format!("invalid JWKS: {why}"));
        let doc: Value = serde_json::from_str(json).map_err(|_| bad("not JSON"))?;
        let entries = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no 'keys' array"))?;
        let mut keys = Vec::new();
        for entry in entries {
            let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
                continue;
            };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let family = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => Family::Rsa,
                AlgorithmParameters::EllipticCurve(p) => match p.curve {
                    EllipticCurve::P256 => Family::Ec(true),
                    EllipticCurve::P384 => Family::Ec(false),
                    _ => continue,
                },
                AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
                    Family::Ed
                }
                _ => continue,
            };
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            let declared_alg = entry.get("alg").and_then(Value::as_str).map(str::to_string);
            keys.push(Key {
                kid: jwk.common.key_id.clone(),
                declared_alg,
                family,
                key,
            });
        }
        if keys.is_empty() {
            return Err(bad("no usable signature verification keys"));
        }
        let n = keys.len();
        *self.keys.write().map_err(|_| poisoned())? = Arc::new(keys);
        self.generation.0.fetch_add(1, Ordering::SeqCst);
        let mut r = self.refetch.lock().map_err(|_| poisoned())?;
        r.loaded_at_ms = Some(now_ms);
        r.requested_at_ms = None;
        r.failures = 0;
        r.last_failure = None;
        Ok(n)
    }

    /// Records a failed fetch at `now_ms` (the provider unreachable, a bad document): the
    /// keys loaded so far stay in use, and the next fetch is due after the retry backoff
    /// (100 ms, doubling, at most 10 s by default).
    pub fn jwks_fetch_failed(&self, reason: &str, now_ms: i64) {
        if let Ok(mut r) = self.refetch.lock() {
            r.failures = r.failures.saturating_add(1);
            r.failed_at_ms = now_ms;
            r.last_failure = Some(reason.to_string());
        }
    }

    /// Failed fetches since the last good one, and the last reason.
    pub fn jwks_failures(&self) -> (u32, Option<String>) {
        self.refetch
            .lock()
            .map(|r| (r.failures, r.last_failure.clone()))
            .unwrap_or((0, None))
    }

    /// The `kid`s of the loaded keys.
    pub fn key_ids(&self) -> Vec<String> {
        self.keys
            .read()
            .map(|k| k.iter().filter_map(|k| k.kid.clone()).collect())
            .unwrap_or_default()
    }

    /// When the host should fetch the JWKS next (ms): after a failed fetch, when its retry
    /// backoff ends; at once if none is loaded, or after an unknown `kid` was seen
    /// (rate-limited per `kid`); else one refresh period after the last load.
    pub fn next_refresh_ms(&self) -> i64 {
        let Ok(r) = self.refetch.lock() else { return 0 };
        if r.failures > 0 {
            let shift = (r.failures - 1).min(40);
            let wait = self
                .config
                .retry_backoff_ms
                .saturating_mul(1i64 << shift)
                .min(self.config.retry_backoff_max_ms);
            return r.failed_at_ms.saturating_add(wait);
        }
        let periodic = r.loaded_at_ms.map_or(i64::MIN, |t| {
            t.saturating_add(self.config.refresh_period_ms)
        });
        match r.requested_at_ms {
            Some(t) => t.min(periodic),
            None => periodic,
        }
    }

    /// Whether a JWKS fetch is due at `now_ms`.
    pub fn refresh_due(&self, now_ms: i64) -> bool {
        now_ms >= self.next_refresh_ms()
    }

    fn note_unknown_kid(&self, kid: &str, now_ms: i64) {
        if kid.len() > MAX_KID_LEN {
            return;
        }
        let Ok(mut r) = self.refetch.lock() else {
            return;
        };
        let interval = self.config.unknown_kid_interval_ms;
        match r.recent_kids.iter().position(|(k, _)| k == kid) {
            Some(i) if now_ms.saturating_sub(r.recent_kids[i].1) < interval => return,
            Some(i) => r.recent_kids[i].1 = now_ms,
            None => {
                if r.recent_kids.len() == MAX_TRACKED_KIDS {
                    r.recent_kids.remove(0);
                }
                r.recent_kids.push((kid.to_string(), now_ms));
            }
        }
        r.requested_at_ms = Some(r.requested_at_ms.map_or(now_ms, |t| t.min(now_ms)));
    }

    /// Verifies an asymmetric signature with the JWKS keys that match the `kid` and `alg`.
    fn verify_with_jwks(
        &self,
        signature: &str,
        message: &str,
        alg: Algorithm,
        kid: Option<&str>,
        now_ms: i64,
    ) -> std::result::Result<bool, TokenRejection> {
        let keys = self.keys.read().map(|k| k.clone()).unwrap_or_default();
        let matches_kid = |k: &&Key| kid.map_or(true, |id| k.kid.as_deref() == Some(id));
        if !keys.iter().any(|k| matches_kid(&k)) {
            return Err(self.unknown_key(kid, now_ms));
        }
        let family = family_of(alg);
        let alg_name = alg_str(alg);
        let mut usable = keys
            .iter()
            .filter(matches_kid)
            .filter(|k| {
                k.family == family && k.declared_alg.as_deref().map_or(true, |a| a == alg_name)
            })
            .peekable();
        if usable.peek().is_none() {
            return Err(reject(
                ErrorCode::TokenAlgorithmRefused,
                format!("no key of the JWKS may verify '{alg_name}'"),
            ));
        }
        for k in usable {
            if verify(signature, message, &k.key, alg)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The rejection for a token no loaded key matches; an unknown `kid` asks for a refetch.
    fn unknown_key(&self, kid: Option<&str>, now_ms: i64) -> TokenRejection {
        if let Some(kid) = kid {
            self.note_unknown_kid(kid, now_ms);
        }
        reject(
            ErrorCode::TokenUnknownKey,
            match kid {
                Some(k) => format!(
                    "no key in the JWKS has kid '{}'",
                    crate::mech::mechanism::quote(k.as_bytes())
                ),
                None => "the JWKS is empty".to_string(),
            },
        )
    }
}

fn poisoned() -> Error {
    Error::new(ErrorCode::Internal, "JWKS lock poisoned")
}

fn reject(code: ErrorCode, reason: impl Into<String>) -> TokenRejection {
    TokenRejection::invalid_token(code, reason)
}

impl TokenValidator for JwksValidator {
    fn generation(&self) -> u64 {
        self.generation.0.load(Ordering::SeqCst)
    }

    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        let c = &self.config;
        let (h, p, s) = split_token(c, token)?;
        let (alg, kid) = read_header(token, h)?;
        let alg_name = alg_str(alg);
        if !c.algorithms.contains(&alg) {
            return Err(reject(
                ErrorCode::TokenAlgorithmRefused,
                format!("algorithm '{alg_name}' is not accepted"),
            ));
        }
        if s.is_empty() {
            return Err(reject(
                ErrorCode::TokenMalformed,
                "the token has no signature",
            ));
        }
        let message = &token[..h.len() + 1 + p.len()];
        let verified = if family_of(alg) == Family::Hmac {
            verify_hmac(c, s, message, alg)?
        } else {
            self.verify_with_jwks(s, message, alg, kid.as_deref(), now_ms)?
        };
        if !verified {
            return Err(reject(
                ErrorCode::TokenBadSignature,
                "the token signature does not verify",
            ));
        }
        let claims = json_object(p, "payload")?;
        check_claims(c, &claims, now_ms)
    }
}

/// Checks the token's size and splits it into its header, payload and signature parts.
fn split_token<'t>(
    c: &JwtValidatorConfig,
    token: &'t str,
) -> std::result::Result<(&'t str, &'t str, &'t str), TokenRejection> {
    if token.len() > c.max_token_size {
        return Err(reject(
            ErrorCode::TokenTooLarge,
            format!("the token is larger than {} bytes", c.max_token_size),
        ));
    }
    let mut parts = token.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(h), Some(p), Some(s), None) => Ok((h, p, s)),
        _ => Err(reject(
            ErrorCode::TokenMalformed,
            "the token does not have three parts",
        )),
    }
}

/// Reads the header's `alg` and `kid`, saying which rule a header breaks when it is refused.
fn read_header(
    token: &str,
    h: &str,
) -> std::result::Result<(Algorithm, Option<String>), TokenRejection> {
    // Fast path: jsonwebtoken's typed header. On failure, a slower look at the JSON tells
    // which rule the header breaks.
    if let Ok(header) = jsonwebtoken::decode_header(token) {
        return Ok((header.alg, header.kid));
    }
    let header = json_object(h, "header")?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or_else(|| reject(ErrorCode::TokenMalformed, "the token header has no 'alg'"))?;
    Err(match alg.parse::<Algorithm>() {
        Err(_) => reject(
            ErrorCode::TokenAlgorithmRefused,
            format!(
                "algorithm '{}' is not accepted",
                crate::mech::mechanism::quote(alg.as_bytes())
            ),
        ),
        Ok(_) => reject(ErrorCode::TokenMalformed, "the token header is malformed"),
    })
}

/// Verifies an HMAC signature with the configured shared secret (refused without one).
fn verify_hmac(
    c: &JwtValidatorConfig,
    signature: &str,
    message: &str,
    alg: Algorithm,
) -> std::result::Result<bool, TokenRejection> {
    let key = c
        .hmac_secret
        .as_ref()
        .map(|s| DecodingKey::from_secret(s.expose()))
        .ok_or_else(|| {
            reject(
                ErrorCode::TokenAlgorithmRefused,
                "no HMAC secret configured",
            )
        })?;
    verify(signature, message, &key, alg)
}

fn alg_str(alg: Algorithm) -> &'static str {
    use Algorithm::*;
    match alg {
        HS256 => "HS256",
        HS384 => "HS384",
        HS512 => "HS512",
        RS256 => "RS256",
        RS384 => "RS384",
        RS512 => "RS512",
        PS256 => "PS256",
        PS384 => "PS384",
        PS512 => "PS512",
        ES256 => "ES256",
        ES384 => "ES384",
        EdDSA => "EdDSA",
    }
}

fn verify(
    signature: &str,
    message: &str,
    key: &DecodingKey,
    alg: Algorithm,
) -> std::result::Result<bool, TokenRejection> {
    jsonwebtoken::crypto::verify(signature, message.as_bytes(), key, alg).map_err(|e| {
        match e.kind() {
            jsonwebtoken::errors::ErrorKind::Base64(_) => reject(
                ErrorCode::TokenMalformed,
                "the token signature is not valid base64url",
            ),
            _ => reject(
                ErrorCode::TokenBadSignature,
                "the token signature does not verify",
            ),
        }
    })
}

/// The time claims of a token, in seconds since the epoch as the token gives them.
struct TimeClaims {
    exp: f64,
    iat: f64,
    nbf: Option<f64>,
}

/// Checks the claims of a token whose signature verified, and reads what the session needs.
fn check_claims(
    c: &JwtValidatorConfig,
    claims: &serde_json::Map<String, Value>,
    now_ms: i64,
) -> std::result::Result<ValidatedToken, TokenRejection> {
    let skew = c.clock_skew_ms as f64;
    let TimeClaims { exp, iat, nbf } = check_times(c, claims, now_ms)?;
    check_issuer(c, claims)?;
    check_audience(c, claims)?;
    let principal = subject_claim(c, claims)?;
    let scope = scope_claim(c, claims)?;
    Ok(ValidatedToken {
        principal,
        expiry_ms: (exp * 1000.0 + 0.5).floor() as i64,
        start_ms: Some((iat * 1000.0 + 0.5).floor() as i64),
        scope,
        valid_from_ms: match (nbf, c.validate_iat) {
            (Some(n), true) => Some((n.max(iat) * 1000.0 - skew).ceil() as i64),
            (Some(n), false) => Some((n * 1000.0 - skew).ceil() as i64),
            (None, true) => Some((iat * 1000.0 - skew).ceil() as i64),
            (None, false) => None,
        },
        valid_until_ms: (exp * 1000.0 + skew).ceil() as i64,
    })
}

/// Reads `exp`, `iat` and `nbf` and checks them against the clock, with the allowed skew.
fn check_times(
    c: &JwtValidatorConfig,
    claims: &serde_json::Map<String, Value>,
    now_ms: i64,
) -> std::result::Result<TimeClaims, TokenRejection> {
    let skew = c.clock_skew_ms as f64;
    let now = now_ms as f64;
    let exp = number(claims, "exp")?
        .ok_or_else(|| reject(ErrorCode::TokenMissingClaim, "the 'exp' claim is missing"))?;
    let iat = number(claims, "iat")?
        .ok_or_else(|| reject(ErrorCode::TokenMissingClaim, "the 'iat' claim is missing"))?;
    let nbf = number(claims, "nbf")?;
    if exp < 0.0 || iat < 0.0 {
        return Err(reject(
            ErrorCode::TokenInvalidClaim,
            "'exp' and 'iat' must not be negative",
        ));
    }
    if now >= exp * 1000.0 + skew {
        return Err(reject(ErrorCode::TokenExpired, "the token has expired"));
    }
    if c.validate_iat && iat * 1000.0 - skew > now {
        return Err(reject(
            ErrorCode::TokenNotYetValid,
            "the token was issued in the future ('iat')",
        ));
    }
    if let Some(nbf) = nbf {
        if nbf * 1000.0 - skew > now {
            return Err(reject(
                ErrorCode::TokenNotYetValid,
                "the token is not valid yet ('nbf')",
            ));
        }
    }
    Ok(TimeClaims { exp, iat, nbf })
}

/// Checks `iss` against the expected issuer, when one is configured.
fn check_issuer(
    c: &JwtValidatorConfig,
    claims: &serde_json::Map<String, Value>,
) -> std::result::Result<(), TokenRejection> {
    if let Some(expected) = &c.expected_issuer {
        if claims.get("iss").and_then(Value::as_str) != Some(expected.as_str()) {
            return Err(reject(
                ErrorCode::TokenInvalidIssuer,
                "the token's issuer is not the expected one",
            ));
        }
    }
    Ok(())
}

/// Checks `aud` against the expected audiences (a token with `aud` needs some configured).
fn check_audience(
    c: &JwtValidatorConfig,
    claims: &serde_json::Map<String, Value>,
) -> std::result::Result<(), TokenRejection> {
    let audiences: Vec<&str> = match claims.get("aud") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(a)) => vec![a.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        Some(_) => {
            return Err(reject(
                ErrorCode::TokenInvalidClaim,
                "the 'aud' claim is neither a string nor a list",
            ))
        }
    };
    if !c.expected_audiences.is_empty() {
        if !audiences
            .iter()
            .any(|a| c.expected_audiences.iter().any(|e| e == a))
        {
            return Err(reject(
                ErrorCode::TokenInvalidAudience,
                "the token's audience holds none of the expected audiences",
            ));
        }
    } else if claims.contains_key("aud") {
        return Err(reject(
            ErrorCode::TokenInvalidAudience,
            "the token has an audience but no expected audience is configured",
        ));
    }
    Ok(())
}

/// The principal: the subject claim, which must be a non-blank string.
fn subject_claim(
    c: &JwtValidatorConfig,
    claims: &serde_json::Map<String, Value>,
) -> std::result::Result<String, TokenRejection> {
    match claims.get(&c.subject_claim_name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(reject(
            ErrorCode::TokenMissingClaim,
            format!("the '{}' claim is missing or blank", c.subject_claim_name),
        )),
    }
}

/// The scope claim as trimmed values, refusing blank and duplicate ones.
fn scope_claim(
    c: &JwtValidatorConfig,
    claims: &serde_json::Map<String, Value>,
) -> std::result::Result<Vec<String>, TokenRejection> {
    let scope: Vec<String> = match claims.get(&c.scope_claim_name) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.trim().to_string()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().unwrap_or("").trim().to_string())
            .collect(),
        Some(_) => {
            return Err(reject(
                ErrorCode::TokenInvalidClaim,
                "the scope claim is neither a string nor a list",
            ))
        }
    };
    if scope.iter().any(String::is_empty) {
        return Err(reject(
            ErrorCode::TokenInvalidClaim,
            "the scope holds a blank value",
        ));
    }
    if scope
        .iter()
        .enumerate()
        .any(|(i, s)| scope[..i].contains(s))
    {
        return Err(reject(
            ErrorCode::TokenInvalidClaim,
            "the scope holds a duplicate value",
        ));
    }
    Ok(scope)
}
