//! The JWT validators: Kafka's unsecured validator (two configurations) and the signed-JWT
//! validator over the JWKS of tests/vectors/jwt.json (RSA, RSA-PSS, ECDSA, EdDSA, and HMAC
//! with a shared secret). The first byte picks the validator (low two bits) and the clock
//! (high four bits: -80 s to +70 s around the vectors' time); the rest is the token.
//!
//! Oracles: an accepted signed token's signing input (header.payload) is one the key holder
//! signed (one of the vectors'); an accepted token's principal, expiry and times are those its
//! claims give, read here independently.
#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use ksasl::*;
use ksasl_fuzz::oracle;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const VECTORS: &str = include_str!("../../tests/vectors/jwt.json");

struct Fixture {
    now_ms: i64,
    unsecured: UnsecuredValidator,
    unsecured_custom: UnsecuredValidator,
    signed: JwksValidator,
    signed_iat: JwksValidator,
    signed_inputs: HashSet<String>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let v: Value = serde_json::from_str(VECTORS).unwrap();
        let now_ms = v["now_ms"].as_i64().unwrap();
        let signed = |hmac: bool, validate_iat: bool| {
            let mut c = JwtValidatorConfig {
                expected_issuer: Some(v["issuer"].as_str().unwrap().into()),
                expected_audiences: vec![v["audience"].as_str().unwrap().into()],
                validate_iat,
                ..Default::default()
            };
            if hmac {
                c.set_algorithm_names(&[
                    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                    "EdDSA", "HS256",
                ])
                .unwrap();
                c.hmac_secret = Some(Secret::from(v["hmac_secret"].as_str().unwrap()));
            }
            let val = JwksValidator::new(c).unwrap();
            val.set_jwks(&v["jwks"].to_string(), now_ms).unwrap();
            val
        };
        let signed_inputs = v["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["token"].as_str())
            .filter_map(|t| t.rsplit_once('.').map(|(input, _)| input.to_string()))
            .collect();
        Fixture {
            now_ms,
            unsecured: UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap(),
            unsecured_custom: UnsecuredValidator::new(UnsecuredValidatorConfig {
                principal_claim_name: "user".into(),
                scope_claim_name: "roles".into(),
                required_scope: vec!["test".into()],
                allowable_clock_skew_ms: 5_000,
            })
            .unwrap(),
            signed: signed(true, false),
            signed_iat: signed(false, true),
            signed_inputs,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, token)) = data.split_first() else {
        return;
    };
    let Ok(token) = std::str::from_utf8(token) else {
        return;
    };
    let f = fixture();
    let now = f.now_ms + ((sel >> 4) as i64 - 8) * 10_000;
    let (validator, principal_claim, skew, signed): (&dyn TokenValidator, &str, i64, bool) =
        match sel & 3 {
            0 => (&f.unsecured, "sub", 0, false),
            1 => (&f.unsecured_custom, "user", 5_000, false),
            2 => (&f.signed, "sub", 30_000, true),
            _ => (&f.signed_iat, "sub", 30_000, true),
        };
    let r = validator.validate(token, now);
    let Ok(t) = r else {
        let rejection = r.unwrap_err();
        let json: Value = serde_json::from_str(&rejection.json()).expect("the rejection is JSON");
        assert!(json.get("status").is_some());
        assert_ne!(rejection.into_error().code(), ErrorCode::Panic);
        return;
    };
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "an accepted token has three parts");
    if signed {
        let input = &token[..parts[0].len() + 1 + parts[1].len()];
        assert!(
            f.signed_inputs.contains(input),
            "a signed token nobody signed was accepted: {input}"
        );
    }
    let claims: Value =
        serde_json::from_slice(&oracle::jwt_part(parts[1]).expect("base64 payload"))
            .expect("a JSON payload");
    assert_eq!(claims[principal_claim].as_str(), Some(t.principal.as_str()));
    let exp = claims["exp"].as_f64().expect("an accepted token has exp");
    assert!(
        exp * 1000.0 + skew as f64 > now as f64,
        "an expired token was accepted"
    );
    // Milliseconds, rounded as Java's Math.round does (saturating at the ends of a long).
    let expected = (exp * 1000.0).clamp(i64::MIN as f64, i64::MAX as f64);
    assert!(
        (t.expiry_ms as f64 - expected).abs() <= 1.0,
        "expiry {} vs exp {exp}",
        t.expiry_ms
    );
    assert!(t.valid_until_ms as f64 >= expected);
    if let Some(nbf) = claims.get("nbf").and_then(Value::as_f64) {
        assert!(
            nbf * 1000.0 <= now as f64 + skew as f64,
            "a token not yet valid was accepted"
        );
    }
});
