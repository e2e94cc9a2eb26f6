//! AWS: credentials, the key store a verifying broker checks `AWS_MSK_IAM` against, and MSK's
//! presigned OAUTHBEARER tokens. The registry's and the refresher's AWS methods are in their
//! classes (one `#[pymethods]` block each) and call the helpers here.

use ksasl::aws::AwsCredentials as Credentials;
use ksasl::mech::aws_msk_iam as msk;
use ksasl::mech::aws_msk_iam::{MskIamClientConfig, MskIamServerConfig};

use crate::glue::*;

/// AWS credentials (the secret and the session token never leave the core: no getter, no
/// repr shows them).
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct AwsCredentials(pub(crate) Credentials);

class! { AwsCredentials |py, c| shared {
    new(access_key_id: &str, secret_access_key: &str, session_token: Option<String> = None,
        expires_at_ms: Option<i64> = None) -> PyResult<Self> {
        let t = session_token.as_deref();
        let c = Credentials::from_parts(access_key_id, secret_access_key, t, expires_at_ms);
        Ok(AwsCredentials(c.or_raise()?))
    }
    #[getter] fn access_key_id() -> String { c.access_key_id().to_string() }
    #[getter] fn expires_at_ms() -> Option<i64> { c.expires_at_ms() }
    #[getter] fn has_session_token() -> bool { c.session_token().is_some() }
    {
        /// The access key id and expiry; never the secret or the session token.
        fn __repr__(&self) -> String {
            let c = &self.0;
            let token = if c.session_token().is_some() { "'<redacted>'" } else { "None" };
            let expiry = c.expires_at_ms().map_or("None".to_string(), |e| e.to_string());
            format!("AwsCredentials(access_key_id='{}', secret_access_key='<redacted>', \
                session_token={token}, expires_at_ms={expiry})", c.access_key_id())
        }
    }
}}

/// The access keys a verifying server accepts; shared by the mechanisms it is given to, and
/// changeable while they serve (a rotation adds the new key, then removes the old one).
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct AwsKeyStore(pub(crate) Arc<msk::AwsKeyStore>);

class! { AwsKeyStore |py, c| shared {
    new() -> Self { AwsKeyStore(Arc::default()) }
    fn add(credentials: &AwsCredentials, principal: &str) -> PyResult<()> {
        c.add(&credentials.0, principal).or_raise()
    }
    fn remove(access_key_id: &str) -> bool { c.remove(access_key_id) }
    {
        fn __repr__(&self) -> String { format!("{:?}", self.0) }
    }
}}

/// What an `AWS_MSK_IAM` client signs for; the core's user agent and key order unless given.
pub(crate) fn client_config(
    host: &str,
    region: &str,
    user_agent: Option<String>,
    key_order: Option<&str>,
) -> PyResult<Arc<MskIamClientConfig>> {
    let c = MskIamClientConfig::with_options(host, region, user_agent.as_deref(), key_order);
    Ok(Arc::new(c.or_raise()?))
}

/// What a verifying server checks against.
pub(crate) fn server_config(
    keys: &AwsKeyStore,
    region: &str,
    hosts: Option<Vec<String>>,
) -> Arc<MskIamServerConfig> {
    Arc::new(MskIamServerConfig::new(
        keys.0.clone(),
        region,
        hosts.unwrap_or_default(),
    ))
}
