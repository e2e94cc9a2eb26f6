//! AWS request signing for Amazon MSK's IAM authentication, sans-IO: credentials come in as
//! values and time as `now_ms`; nothing here reads the environment, a file or the clock.
//!
//! - [`sigv4`]: Signature Version 4 (signing keys, canonical requests, strings to sign,
//!   presigned query strings), checked against AWS's published test vectors.
//! - [`msk_iam`]: the client payload of the `AWS_MSK_IAM` SASL mechanism, byte for byte as
//!   `aws-msk-iam-auth` (Java) or kafka-python 3 write it.

pub mod credentials;
pub mod msk_iam;
pub mod sigv4;

pub use credentials::AwsCredentials;
