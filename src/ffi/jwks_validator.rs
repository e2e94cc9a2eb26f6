//! `ksasl_jwks_validator`: signed JWTs (KIP-768) checked against a JWKS the host supplies.

use std::ffi::c_char;
use std::sync::Arc;

use super::boundary::*;
use crate::mech::oauthbearer::{JwksValidator, JwtValidatorConfig};

/// A signed-JWT validator whose JWKS the host fetches. Thread-safe.
pub struct ksasl_jwks_validator {
    pub(crate) inner: Arc<JwksValidator>,
    err: LastError,
}
handle!(ksasl_jwks_validator(Arc<JwksValidator>));

/// Creates a validator with Kafka's defaults; `expected_issuer` and `expected_audience` may
/// be NULL.
#[no_mangle]
pub extern "C" fn ksasl_jwks_validator_new(
    expected_issuer: *const c_char,
    expected_audience: *const c_char,
    out: *mut *mut ksasl_jwks_validator,
) -> ksasl_result {
    construct(out, || {
        let issuer = opt_text(expected_issuer, "expected_issuer")?;
        let audience = opt_text(expected_audience, "expected_audience")?;
        let inner = Arc::new(JwksValidator::new(JwtValidatorConfig {
            expected_issuer: issuer.map(str::to_string),
            expected_audiences: audience.map(str::to_string).into_iter().collect(),
            ..Default::default()
        })?);
        Ok(ksasl_jwks_validator::new(inner))
    })
}
