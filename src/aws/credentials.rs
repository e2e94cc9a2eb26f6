//! AWS credentials, as the host hands them in.

use std::fmt;

use crate::error::{Error, ErrorCode, Result};
use crate::secret::Secret;

/// AWS credentials as the host obtained them (static keys, STS, an instance role): the access
/// key id, the secret access key, the session token of temporary credentials, and when they
/// expire. The secret and the token are zeroized on drop and never shown by `Debug`; the
/// access key id is an identifier that every signed request carries in clear.
#[derive(Clone)]
pub struct AwsCredentials {
    access_key_id: String,
    secret_access_key: Secret,
    session_token: Option<Secret>,
    expires_at_ms: Option<i64>,
}

impl AwsCredentials {
    /// Long-term credentials (an access key pair without a session token or expiry).
    ///
    /// Refused (`INVALID_ARGUMENT`): an empty access key id or secret, or an access key id
    /// with characters other than ASCII letters and digits (it is written into the credential
    /// scope, where `/` would change its meaning).
    pub fn new(access_key_id: &str, secret_access_key: &str) -> Result<Self> {
        if access_key_id.is_empty() || !access_key_id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "an AWS access key id must be non-empty ASCII letters and digits",
            ));
        }
        if secret_access_key.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the AWS secret access key is empty",
            ));
        }
        Ok(AwsCredentials {
            access_key_id: access_key_id.to_string(),
            secret_access_key: Secret::from(secret_access_key),
            session_token: None,
            expires_at_ms: None,
        })
    }

    /// Credentials from their parts as a binding receives them: the session token and the
    /// expiry (ms since the epoch) when there are.
    pub fn from_parts(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<&str>,
        expires_at_ms: Option<i64>,
    ) -> Result<Self> {
        let mut c = AwsCredentials::new(access_key_id, secret_access_key)?;
        if let Some(t) = session_token {
            c = c.with_session_token(t)?;
        }
        if let Some(e) = expires_at_ms {
            c = c.with_expiry(e);
        }
        Ok(c)
    }

    /// The same credentials with the session token of temporary credentials (STS).
    pub fn with_session_token(mut self, token: &str) -> Result<Self> {
        if token.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the AWS session token is empty",
            ));
        }
        self.session_token = Some(Secret::from(token));
        Ok(self)
    }

    /// The same credentials with the time they expire (ms since the epoch).
    pub fn with_expiry(mut self, expires_at_ms: i64) -> Self {
        self.expires_at_ms = Some(expires_at_ms);
        self
    }

    /// The access key id.
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// The secret access key.
    pub fn secret_access_key(&self) -> &[u8] {
        self.secret_access_key.expose()
    }

    /// The session token, for temporary credentials (UTF-8: it came in as a `&str`).
    pub fn session_token(&self) -> Option<&str> {
        self.session_token
            .as_ref()
            .map(|t| std::str::from_utf8(t.expose()).unwrap_or_default())
    }

    /// When the credentials expire (ms since the epoch), if they do.
    pub fn expires_at_ms(&self) -> Option<i64> {
        self.expires_at_ms
    }
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}
