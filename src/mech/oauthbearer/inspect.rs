//! A bearer token's parts, decoded for display (`ksasl token decode`) without any check of its
//! signature: what a user needs to see when a broker refuses a token.

use serde_json::{Map, Value};

use super::unsecured::json_object;
use crate::error::{Error, ErrorCode, Result};

/// A compact JWS token's header and claims. The signature is never kept.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedJwt {
    /// The JOSE header.
    pub header: Map<String, Value>,
    /// The claims.
    pub claims: Map<String, Value>,
    /// Whether the token has a non-empty signature part (unsecured tokens have none).
    pub signed: bool,
}

impl DecodedJwt {
    /// A string claim.
    pub fn string_claim(&self, name: &str) -> Option<&str> {
        self.claims.get(name).and_then(Value::as_str)
    }

    /// A numeric date claim (`exp`, `iat`, `nbf`) in ms since the epoch.
    pub fn time_claim_ms(&self, name: &str) -> Option<i64> {
        self.claims
            .get(name)
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite())
            .map(|s| (s * 1000.0).round() as i64)
    }
}

fn malformed(what: &str) -> Error {
    Error::new(ErrorCode::TokenMalformed, format!("the token {what}"))
}

/// Decodes `token` (`header.claims.signature`, base64url or standard alphabet, padding
/// optional). Errors never quote the token.
pub fn decode_jwt(token: &str) -> Result<DecodedJwt> {
    let token = token.trim();
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err(malformed(&format!(
            "has {} dot-separated parts, not 3 (header.claims.signature)",
            parts.len()
        )));
    }
    // The validators' reading of a part, its refusal as an error.
    let object =
        |part: &str, what: &str| json_object(part, what).map_err(|r| Error::new(r.code, r.reason));
    Ok(DecodedJwt {
        header: object(parts[0], "header")?,
        claims: object(parts[1], "claims")?,
        signed: !parts[2].is_empty(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mech::oauthbearer::UnsecuredTokenBuilder;

    #[test]
    fn decodes_and_refuses() {
        let t = UnsecuredTokenBuilder::for_principal("alice")
            .build(1_700_000_000_000)
            .unwrap();
        let d = decode_jwt(t.value()).unwrap();
        assert_eq!(d.header.get("alg").and_then(Value::as_str), Some("none"));
        assert_eq!(d.string_claim("sub"), Some("alice"));
        assert_eq!(d.time_claim_ms("iat"), Some(1_700_000_000_000));
        assert_eq!(d.time_claim_ms("exp"), Some(1_700_003_600_000));
        assert!(!d.signed);
        let e = decode_jwt("abc.def").unwrap_err();
        assert_eq!(e.code(), ErrorCode::TokenMalformed);
        assert!(decode_jwt("!!.e30.x").is_err());
        assert!(decode_jwt("e30.W10.x")
            .unwrap_err()
            .message()
            .contains("claims"));
        assert!(!decode_jwt("secret-token.x.y")
            .unwrap_err()
            .message()
            .contains("secret"));
    }
}
