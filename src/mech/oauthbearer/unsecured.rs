//! Unsecured (`alg: none`) tokens: Kafka's development login and validation
//! (`OAuthBearerUnsecuredLoginCallbackHandler`, `OAuthBearerUnsecuredValidatorCallbackHandler`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};

use super::token::OAuthBearerToken;
use super::validator::{TokenRejection, TokenValidator, ValidatedToken};
use crate::error::{Error, ErrorCode, Result};

/// Formats a number the way Java's `Double.toString` does (Kafka writes unsecured token
/// dates with it): `1.7E9`, `1.7000036E9`, `123.0`, `0.001`, `1.0E-4`.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let a = x.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{x:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}

/// Java's `Math.round` for the products Kafka rounds.
fn java_round(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

#[derive(Clone, Debug)]
enum Claim {
    Str(String),
    Num(f64),
    List(Vec<String>),
}

/// Builds unsecured tokens with Kafka's `unsecuredLogin*` options: header `{"alg":"none"}`,
/// claims `exp` and `iat` first (Java double format), then the configured claims in the
/// order they were added, base64url without padding, empty signature.
#[derive(Clone, Debug)]
pub struct UnsecuredTokenBuilder {
    principal_claim_name: String,
    scope_claim_name: String,
    lifetime_seconds: i64,
    claims: Vec<(String, Claim)>,
}

impl Default for UnsecuredTokenBuilder {
    fn default() -> Self {
        UnsecuredTokenBuilder {
            principal_claim_name: "sub".into(),
            scope_claim_name: "scope".into(),
            lifetime_seconds: 3600,
            claims: Vec::new(),
        }
    }
}

impl UnsecuredTokenBuilder {
    /// A builder with Kafka's defaults (principal claim `sub`, scope claim `scope`, one hour).
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder for a token whose principal claim (`sub`) is `principal`.
    pub fn for_principal(principal: &str) -> Self {
        let mut b = Self::new();
        b.claims.push(("sub".into(), Claim::Str(principal.into())));
        b
    }

    /// `unsecuredLoginPrincipalClaimName` (default `sub`).
    pub fn principal_claim_name(mut self, name: &str) -> Self {
        self.principal_claim_name = name.trim().to_string();
        self
    }

    /// `unsecuredLoginScopeClaimName` (default `scope`).
    pub fn scope_claim_name(mut self, name: &str) -> Self {
        self.scope_claim_name = name.trim().to_string();
        self
    }

    /// `unsecuredLoginLifetimeSeconds` (default 3600).
    pub fn lifetime_seconds(mut self, seconds: i64) -> Self {
        self.lifetime_seconds = seconds;
        self
    }

    fn add(mut self, name: &str, claim: Claim) -> Result<Self> {
        if name == "iat" || name == "exp" {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!("Cannot explicitly set the '{name}' claim"),
            ));
        }
        if name.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "claim names must not be empty",
            ));
        }
        self.claims.retain(|(n, _)| n != name);
        self.claims.push((name.to_string(), claim));
        Ok(self)
    }

    /// `unsecuredLoginStringClaim_<name>`.
    pub fn string_claim(self, name: &str, value: &str) -> Result<Self> {
        self.add(name, Claim::Str(value.into()))
    }

    /// `unsecuredLoginNumberClaim_<name>`.
    pub fn number_claim(self, name: &str, value: f64) -> Result<Self> {
        if !value.is_finite() {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "number claims must be finite",
            ));
        }
        self.add(name, Claim::Num(value))
    }

    /// `unsecuredLoginListClaim_<name>`.
    pub fn list_claim(self, name: &str, values: &[&str]) -> Result<Self> {
        self.add(
            name,
            Claim::List(values.iter().map(|s| s.to_string()).collect()),
        )
    }

    /// The token, issued at `now_ms`.
    pub fn build(&self, now_ms: i64) -> Result<OAuthBearerToken> {
        let now_s = now_ms as f64 / 1000.0;
        let exp = now_s + self.lifetime_seconds as f64;
        let claims = self.claims_json(exp, now_s);
        let principal = self.principal()?;
        let scope = self.scope();
        let value = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
            URL_SAFE_NO_PAD.encode(&claims)
        );
        Ok(
            OAuthBearerToken::new(&value, &principal, java_round(exp * 1000.0))?
                .with_start_ms(java_round(now_s * 1000.0))
                .with_scope(scope),
        )
    }

    /// The claims object as JSON text: `exp` and `iat` first, then the claims in added order.
    fn claims_json(&self, exp: f64, now_s: f64) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut claims = format!(
            "{{\"exp\":{},\"iat\":{}",
            java_double(exp),
            java_double(now_s)
        );
        for (name, c) in &self.claims {
            let v = match c {
                Claim::Str(s) => q(s),
                Claim::Num(n) => java_double(*n),
                Claim::List(l) => {
                    format!("[{}]", l.iter().map(|s| q(s)).collect::<Vec<_>>().join(","))
                }
            };
            claims.push_str(&format!(",{}:{v}", q(name)));
        }
        claims.push('}');
        claims
    }

    /// The principal claim's value, which must be a string that is not blank.
    fn principal(&self) -> Result<String> {
        self.claims
            .iter()
            .find(|(n, _)| *n == self.principal_claim_name)
            .and_then(|(_, c)| match c {
                Claim::Str(s) if !s.trim().is_empty() => Some(s.clone()),
                _ => None,
            })
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidConfig,
                    format!(
                        "the principal claim '{}' must be a non-blank string claim",
                        self.principal_claim_name
                    ),
                )
            })
    }

    /// The scope claim as trimmed, non-empty entries; empty if absent or of another type.
    fn scope(&self) -> Vec<String> {
        match self
            .claims
            .iter()
            .find(|(n, _)| *n == self.scope_claim_name)
            .map(|(_, c)| c)
        {
            Some(Claim::Str(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
            Some(Claim::List(l)) => l
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Decodes a JWT part: base64url or standard alphabet, padding optional (librdkafka, Kafka
/// and most IdPs differ here).
pub(crate) fn decode_part(part: &str) -> Option<Vec<u8>> {
    use base64::alphabet::URL_SAFE;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &URL_SAFE,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let standard = part.contains(['+', '/']);
    if !standard {
        return LENIENT.decode(part).ok();
    }
    if part.contains(['-', '_']) {
        return None;
    }
    let url: String = part
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect();
    LENIENT.decode(url).ok()
}

pub(crate) fn json_object(
    part: &str,
    what: &str,
) -> std::result::Result<Map<String, Value>, TokenRejection> {
    let bytes = decode_part(part).ok_or_else(|| {
        TokenRejection::invalid_token(
            ErrorCode::TokenMalformed,
            format!("the token {what} is not valid base64"),
        )
    })?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(TokenRejection::invalid_token(
            ErrorCode::TokenMalformed,
            format!("the token {what} is not a JSON object"),
        )),
    }
}

/// A JWT part that is a base64 JSON object, or `None`.
pub(crate) fn jwt_payload(part: &str) -> Option<Map<String, Value>> {
    match serde_json::from_slice::<Value>(&decode_part(part)?) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// A claim that must be a number (JSON integer or fraction).
pub(crate) fn number(
    claims: &Map<String, Value>,
    name: &str,
) -> std::result::Result<Option<f64>, TokenRejection> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| {
            TokenRejection::invalid_token(
                ErrorCode::TokenInvalidClaim,
                format!("the '{name}' claim is not a number"),
            )
        }),
    }
}

/// Options of the unsecured validator (`unsecuredValidator*` JAAS options).
#[derive(Clone, Debug)]
pub struct UnsecuredValidatorConfig {
    /// `unsecuredValidatorPrincipalClaimName` (default `sub`).
    pub principal_claim_name: String,
    /// `unsecuredValidatorScopeClaimName` (default `scope`).
    pub scope_claim_name: String,
    /// `unsecuredValidatorRequiredScope` (default none).
    pub required_scope: Vec<String>,
    /// `unsecuredValidatorAllowableClockSkewMs` (default 0, at least 0).
    pub allowable_clock_skew_ms: i64,
}

impl Default for UnsecuredValidatorConfig {
    fn default() -> Self {
        UnsecuredValidatorConfig {
            principal_claim_name: "sub".into(),
            scope_claim_name: "scope".into(),
            required_scope: Vec::new(),
            allowable_clock_skew_ms: 0,
        }
    }
}

/// Kafka's validator for unsecured tokens: `alg` must be `none` and the signature empty;
/// checks the principal, `iat`, `exp` and the required scope. Accepts fractional dates.
#[derive(Clone, Debug)]
pub struct UnsecuredValidator {
    config: UnsecuredValidatorConfig,
}

impl UnsecuredValidator {
    /// A validator; the configuration is checked with Kafka's rules.
    pub fn new(config: UnsecuredValidatorConfig) -> Result<Self> {
        if config.allowable_clock_skew_ms < 0 {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "unsecuredValidatorAllowableClockSkewMs must be at least 0",
            ));
        }
        for s in &config.required_scope {
            let ok = !s.is_empty()
                && s.bytes()
                    .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b));
            if !ok {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    format!("invalid required scope item {s:?}"),
                ));
            }
        }
        if config.principal_claim_name.trim().is_empty()
            || config.scope_claim_name.trim().is_empty()
        {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "claim names must not be blank",
            ));
        }
        Ok(UnsecuredValidator { config })
    }
}

pub(crate) fn scope_of(claims: &Map<String, Value>, name: &str) -> Vec<String> {
    match claims.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

impl TokenValidator for UnsecuredValidator {
    fn validate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> std::result::Result<ValidatedToken, TokenRejection> {
        let claims = unsecured_claims(token)?;
        let c = &self.config;
        let skew = c.allowable_clock_skew_ms as f64;
        let principal = principal_claim(c, &claims)?;
        let (iat, exp) = check_times(&claims, now_ms, skew)?;
        let scope = scope_of(&claims, &c.scope_claim_name);
        check_required_scope(c, &scope)?;
        Ok(ValidatedToken {
            principal,
            expiry_ms: java_round(exp * 1000.0),
            start_ms: iat.map(|i| java_round(i * 1000.0)),
            scope,
            valid_from_ms: iat.map(|i| (i * 1000.0 - skew).ceil() as i64),
            valid_until_ms: (exp * 1000.0 + skew).ceil() as i64,
        })
    }
}

/// Checks the token's shape (three parts, `alg: none`, no signature) and reads its claims.
fn unsecured_claims(token: &str) -> std::result::Result<Map<String, Value>, TokenRejection> {
    let malformed =
        |why: &str| TokenRejection::invalid_token(ErrorCode::TokenMalformed, why.to_string());
    if token.contains("..") {
        return Err(malformed("the token contains '..'"));
    }
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err(malformed("the token does not have three parts"));
    }
    let header = json_object(parts[0], "header")?;
    match header.get("alg").and_then(Value::as_str) {
        None => return Err(malformed("the token header has no 'alg'")),
        Some("none") => {}
        Some(_) => {
            return Err(TokenRejection::invalid_token(
                ErrorCode::TokenAlgorithmRefused,
                "an unsecured token must have alg 'none'",
            ))
        }
    }
    if !parts[2].is_empty() {
        return Err(malformed("an unsecured token must have an empty signature"));
    }
    json_object(parts[1], "payload")
}

/// The principal: the configured principal claim, which must be a non-blank string.
fn principal_claim(
    c: &UnsecuredValidatorConfig,
    claims: &Map<String, Value>,
) -> std::result::Result<String, TokenRejection> {
    match claims.get(&c.principal_claim_name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(TokenRejection::invalid_token(
            ErrorCode::TokenMissingClaim,
            format!(
                "the principal claim '{}' is missing or blank",
                c.principal_claim_name
            ),
        )),
    }
}

/// Reads `iat` (optional) and `exp` (required) and checks them against the clock and each
/// other, with the allowed skew (ms).
fn check_times(
    claims: &Map<String, Value>,
    now_ms: i64,
    skew: f64,
) -> std::result::Result<(Option<f64>, f64), TokenRejection> {
    let now = now_ms as f64;
    let iat = number(claims, "iat")?;
    if let Some(iat) = iat {
        if iat * 1000.0 > now + skew {
            return Err(TokenRejection::invalid_token(
                ErrorCode::TokenNotYetValid,
                "the token's 'iat' is in the future",
            ));
        }
    }
    let exp = number(claims, "exp")?.ok_or_else(|| {
        TokenRejection::invalid_token(ErrorCode::TokenMissingClaim, "the 'exp' claim is missing")
    })?;
    if now - skew >= exp * 1000.0 {
        return Err(TokenRejection::invalid_token(
            ErrorCode::TokenExpired,
            "the token has expired",
        ));
    }
    if let Some(iat) = iat {
        if exp <= iat {
            return Err(TokenRejection::invalid_token(
                ErrorCode::TokenInvalidClaim,
                "the token's 'exp' is not after its 'iat'",
            ));
        }
    }
    Ok((iat, exp))
}

/// Refuses a token whose scope lacks one of the required scope values.
fn check_required_scope(
    c: &UnsecuredValidatorConfig,
    scope: &[String],
) -> std::result::Result<(), TokenRejection> {
    let missing = c.required_scope.iter().any(|r| !scope.contains(r));
    if missing {
        return Err(TokenRejection {
            code: ErrorCode::InsufficientScope,
            reason: "the token lacks a required scope".into(),
            status: "insufficient_scope".into(),
            scope: Some(format!("[{}]", c.required_scope.join(", "))),
            openid_configuration: None,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_double_formatting() {
        assert_eq!(java_double(1.7e9), "1.7E9");
        assert_eq!(java_double(1_700_003_600.0), "1.7000036E9");
        assert_eq!(java_double(1_795_974_628.63), "1.79597462863E9");
        assert_eq!(java_double(123.0), "123.0");
        assert_eq!(java_double(0.001), "0.001");
        assert_eq!(java_double(0.0001), "1.0E-4");
        assert_eq!(java_double(9_999_999.0), "9999999.0");
        assert_eq!(java_double(10_000_000.0), "1.0E7");
        assert_eq!(java_double(-2.5), "-2.5");
        assert_eq!(java_double(0.0), "0.0");
    }

    #[test]
    fn kafka_reference_token() {
        // Reference §5.3: {"exp":1.7000036E9,"iat":1.7E9,"sub":"alice"} at now = 1.7e12 ms.
        let t = UnsecuredTokenBuilder::for_principal("alice")
            .build(1_700_000_000_000)
            .unwrap();
        assert_eq!(
            t.value(),
            "eyJhbGciOiJub25lIn0.eyJleHAiOjEuNzAwMDAzNkU5LCJpYXQiOjEuN0U5LCJzdWIiOiJhbGljZSJ9."
        );
        assert_eq!(t.principal(), "alice");
        assert_eq!(t.expiry_ms(), 1_700_003_600_000);
        assert_eq!(t.start_ms(), Some(1_700_000_000_000));
    }

    #[test]
    fn builder_rules() {
        assert!(UnsecuredTokenBuilder::new()
            .string_claim("iat", "1")
            .is_err());
        assert!(UnsecuredTokenBuilder::new()
            .number_claim("exp", 1.0)
            .is_err());
        assert_eq!(
            UnsecuredTokenBuilder::new().build(0).unwrap_err().code(),
            ErrorCode::InvalidConfig
        );
        let t = UnsecuredTokenBuilder::new()
            .principal_claim_name("user")
            .string_claim("user", "bob")
            .unwrap()
            .list_claim("scope", &["a", " b "])
            .unwrap()
            .number_claim("n", 42.0)
            .unwrap()
            .lifetime_seconds(60)
            .build(1_000)
            .unwrap();
        assert_eq!(t.principal(), "bob");
        assert_eq!(t.scope(), ["a", "b"]);
        assert_eq!(t.expiry_ms(), 61_000);
        let claims = String::from_utf8(
            URL_SAFE_NO_PAD
                .decode(t.value().split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            claims,
            r#"{"exp":61.0,"iat":1.0,"user":"bob","scope":["a"," b "],"n":42.0}"#
        );
    }
}
