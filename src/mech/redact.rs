//! Loggable renderings of SASL messages, secrets removed.

use crate::names::{OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512};

/// A loggable rendering of a SASL message with every secret replaced by `<redacted>`.
///
/// `from_client` tells which side wrote the message. Known mechanisms are rendered
/// field by field; anything else is shown only by its length.
pub fn redact(mechanism: &str, message: &[u8], from_client: bool) -> String {
    match mechanism {
        PLAIN if from_client => super::plain::redact(message),
        OAUTHBEARER => super::oauthbearer::redact(message),
        SCRAM_SHA_256 | SCRAM_SHA_512 => super::scram::messages::redact(message),
        _ if message.is_empty() => String::new(),
        _ => format!("<{} bytes>", message.len()),
    }
}
