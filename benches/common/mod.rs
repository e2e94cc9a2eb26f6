//! What the bench targets that validate JWTs share (each includes this with `mod common;`).
// Not every target uses every function.
#![allow(dead_code)]

use std::sync::Arc;

use ksasl::{JwksValidator, JwtValidatorConfig};
use serde_json::Value;

/// `tests/vectors/jwt.json`: the PyJWT-made tokens, their JWKS, issuer, audience and `now_ms`.
pub fn jwt_vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/jwt.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A validator expecting the `issuer` and `audience` that `meta` names (the vectors' or the
/// storm tokens' metadata), everything else at its default.
pub fn validator_config(meta: &Value) -> JwtValidatorConfig {
    JwtValidatorConfig {
        expected_issuer: Some(meta["issuer"].as_str().unwrap().into()),
        expected_audiences: vec![meta["audience"].as_str().unwrap().into()],
        ..Default::default()
    }
}

/// A `JwksValidator` configured from `meta` and holding the key set `jwks` (JSON) from
/// `now_ms`.
pub fn jwks_validator(meta: &Value, jwks: &str, now_ms: i64) -> Arc<JwksValidator> {
    let validator = Arc::new(JwksValidator::new(validator_config(meta)).unwrap());
    validator.set_jwks(jwks, now_ms).unwrap();
    validator
}
