//! The names of the built-in SASL mechanisms, as sent in `SaslHandshake`.

/// `PLAIN` (RFC 4616).
pub const PLAIN: &str = "PLAIN";
/// `SCRAM-SHA-256` (RFC 7677).
pub const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
/// `SCRAM-SHA-512`.
pub const SCRAM_SHA_512: &str = "SCRAM-SHA-512";
/// `OAUTHBEARER` (RFC 7628).
pub const OAUTHBEARER: &str = "OAUTHBEARER";
/// `GSSAPI` (Kerberos V5, RFC 4752).
pub const GSSAPI: &str = "GSSAPI";
/// `AWS_MSK_IAM` (Amazon MSK's IAM authentication).
pub const AWS_MSK_IAM: &str = "AWS_MSK_IAM";
