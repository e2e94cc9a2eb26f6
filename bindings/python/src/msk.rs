//! Where AWS credentials come from for a client (fixed `AwsCredentials` or a `Refresher`),
//! and MSK's presigned OAUTHBEARER token; apart from `aws` so that `refresh` (whose
//! `set_aws_credentials` takes `AwsCredentials`) and this module do not import each other.

use ksasl::mech::aws_msk_iam::{AwsCredentialSource, MskTokenSource};

use crate::aws::AwsCredentials;
use crate::glue::*;
use crate::refresh::Refresher;

/// An `AwsCredentials` (fixed) or a `Refresher` (its current AWS credentials at each use).
pub(crate) fn source(v: &Any) -> PyResult<Arc<dyn AwsCredentialSource>> {
    if let Ok(r) = v.downcast::<Refresher>() {
        return Ok(r.get().0.clone());
    }
    Ok(Arc::new(v.downcast::<AwsCredentials>()?.get().0.clone()))
}

/// MSK's token source for `region`, reporting `user_agent` (None: the core's).
pub(crate) fn token_source(
    region: &str,
    credentials: &Any,
    user_agent: Option<&str>,
) -> PyResult<MskTokenSource> {
    Ok(MskTokenSource::new(
        region,
        user_agent,
        source(credentials)?,
    ))
}

/// MSK's presigned OAUTHBEARER token, as `aws-msk-iam-sasl-signer` makes it: `(token,
/// expires_at_ms)`, for a client with its own OAUTHBEARER (librdkafka's `oauth_cb`).
#[pyfunction]
#[pyo3(signature = (region, credentials, user_agent = None, now_ms = None))]
pub(crate) fn msk_token(
    region: &str,
    credentials: &Any,
    user_agent: Option<String>,
    now_ms: Now,
) -> PyResult<(String, i64)> {
    let source = token_source(region, credentials, user_agent.as_deref())?;
    let t = source.token_at(now(now_ms)).or_raise()?;
    Ok((t.value().to_string(), t.expiry_ms()))
}
