//! One error type for the whole library.
//!
//! Every failure carries a stable numeric [`ErrorCode`] (never reused, grouped by
//! [`ErrorKind`] in blocks of one hundred) and a human-readable message. Messages are
//! written so that they never contain a password, token, salt, key, proof or signature;
//! the tests in `tests/secrets.rs` hold the library to that.
//!
//! A server also needs to know what it may tell an unauthenticated peer. Kafka sends the
//! text of some failures to the client verbatim (for example "Invalid username or password")
//! and replaces every other failure by a generic sentence. [`Error::client_message`] gives
//! that text.

use std::fmt;

/// The broad class of a failure; bindings map these to their own exception families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The caller used the API wrongly (bad argument, wrong state, unknown mechanism).
    Misuse,
    /// The peer sent bytes that break the protocol.
    Protocol,
    /// The exchange was well formed but authentication failed.
    Authentication,
    /// A stored or supplied credential is unusable.
    Credential,
    /// A fault inside the library or its environment (randomness, a panic).
    Internal,
}

impl ErrorKind {
    /// Stable lower-case name, used by bindings and logs.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Misuse => "misuse",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Credential => "credential",
            ErrorKind::Internal => "internal",
        }
    }
}

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $value:literal, $text:literal => $kind:ident, )*) => {
        /// Stable numeric error codes. A code is never reused for another meaning.
        ///
        /// Blocks: 1xx misuse, 2xx protocol, 3xx authentication, 4xx credential, 5xx internal.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant = $value, )*
        }

        impl ErrorCode {
            /// Every code, in numeric order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The kind this code belongs to.
            pub fn kind(self) -> ErrorKind {
                match self { $( ErrorCode::$variant => ErrorKind::$kind, )* }
            }

            /// The stable upper-case name of the code (`KSASL_` is not part of it).
            pub fn name(self) -> &'static str {
                match self { $( ErrorCode::$variant => $text, )* }
            }

            /// The name as a NUL-terminated string, for the C ABI.
            pub fn name_cstr(self) -> &'static std::ffi::CStr {
                let bytes: &'static [u8] = match self { $( ErrorCode::$variant => concat!($text, "\0").as_bytes(), )* };
                std::ffi::CStr::from_bytes_with_nul(bytes).expect("names have no inner NUL")
            }

            /// The code for a number, if it is one.
            pub fn from_u32(value: u32) -> Option<ErrorCode> {
                match value { $( $value => Some(ErrorCode::$variant), )* _ => None }
            }
        }
    };
}

include!("tables/error_codes.in");

impl ErrorCode {
    /// The numeric value of the code.
    pub fn as_u32(self) -> u32 {
        self as u32
    }

    /// Whether this misuse is about the state of an object rather than an argument (a step
    /// after the end or after a failure, a call at the wrong time): Java reports these as
    /// `IllegalStateException`s.
    pub fn is_state_misuse(self) -> bool {
        matches!(
            self,
            ErrorCode::StepAfterDone | ErrorCode::StepAfterFailure | ErrorCode::WrongState
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name(), self.as_u32())
    }
}

/// A failure: a stable code, a message without secrets, and the text (if any) a server may
/// show the unauthenticated peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
    client_text: Option<String>,
    disclosed: bool,
    details: Vec<(String, String)>,
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error whose message stays on this side of the connection.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            client_text: None,
            disclosed: false,
            details: Vec::new(),
        }
    }

    /// A new error whose message a server sends to the client as is (Kafka's
    /// `SaslAuthenticationException`).
    pub fn disclosed(code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        Error {
            code,
            client_text: Some(message.clone()),
            disclosed: true,
            message,
            details: Vec::new(),
        }
    }

    /// Sets the text a server sends to the client instead of the generic one, keeping the
    /// (possibly more detailed) message for the host.
    pub fn with_client_text(mut self, text: impl Into<String>) -> Self {
        self.client_text = Some(text.into());
        self.disclosed = true;
        self
    }

    /// Adds a structured detail (for example the OAUTHBEARER `status` a server sent).
    pub fn with_detail(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.details.push((key.into(), value.into()));
        self
    }

    /// Structured details, in the order they were added.
    pub fn details(&self) -> &[(String, String)] {
        &self.details
    }

    /// One structured detail.
    pub fn detail(&self, key: &str) -> Option<&str> {
        self.details
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The kind of the code.
    pub fn kind(&self) -> ErrorKind {
        self.code.kind()
    }

    /// The message (never contains secrets).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether a server sends a specific text to the client (rather than the generic one).
    pub fn is_disclosed(&self) -> bool {
        self.disclosed
    }

    /// The text a server sends (or sent) the client for this error, when known: a disclosed
    /// message, or the sentence a server put in its response (see [`Error::for_client`]).
    pub fn client_text(&self) -> Option<&str> {
        self.client_text.as_deref()
    }

    /// The error with the text a Kafka broker sends the client for it recorded (the
    /// [`Error::client_message`] for `mechanism`), so that whoever logs the failure sees
    /// what the client was told.
    pub fn for_client(mut self, mechanism: &str, reauthenticating: bool) -> Self {
        if !self.disclosed {
            self.client_text = Some(self.client_message(mechanism, reauthenticating));
        }
        self
    }

    /// The text a Kafka broker puts in the `error_message` of a failed `SaslAuthenticate`
    /// response for this error: the message itself when Kafka discloses it, otherwise Kafka's
    /// generic sentence naming the mechanism.
    pub fn client_message(&self, mechanism: &str, reauthenticating: bool) -> String {
        if let (true, Some(text)) = (self.disclosed, &self.client_text) {
            text.clone()
        } else {
            format!(
                "Authentication failed during {} due to invalid credentials with SASL mechanism {}",
                if reauthenticating {
                    "re-authentication"
                } else {
                    "authentication"
                },
                mechanism
            )
        }
    }

    pub(crate) fn misuse(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::MalformedMessage, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_grouped_by_kind() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_u32()), "duplicate {}", code);
            let block = code.as_u32() / 100;
            let expected = match code.kind() {
                ErrorKind::Misuse => 1,
                ErrorKind::Protocol => 2,
                ErrorKind::Authentication => 3,
                ErrorKind::Credential => 4,
                ErrorKind::Internal => 5,
            };
            assert_eq!(block, expected, "{} is in the wrong block", code);
            assert_eq!(ErrorCode::from_u32(code.as_u32()), Some(*code));
        }
        assert_eq!(ErrorCode::from_u32(0), None);
        assert_eq!(ErrorCode::from_u32(299), None);
    }

    #[test]
    fn client_message_is_generic_unless_disclosed() {
        let hidden = Error::new(ErrorCode::UnknownUser, "no such user alice");
        assert_eq!(
            hidden.client_message("SCRAM-SHA-256", false),
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
        );
        assert!(hidden
            .client_message("PLAIN", true)
            .contains("during re-authentication"));
        let shown = Error::disclosed(
            ErrorCode::InvalidCredentials,
            "Authentication failed: Invalid username or password",
        );
        assert_eq!(
            shown.client_message("PLAIN", false),
            "Authentication failed: Invalid username or password"
        );
    }
}

/// At most this many characters of anything a peer sent appear in an error message, a
/// detail or a log line (issue 17): a peer cannot bloat a host's logs.
pub const QUOTE_LIMIT: usize = 64;

/// Lossy text of bytes for logs, with control characters written as `\xNN`.
pub(crate) fn printable(bytes: &[u8]) -> String {
    let mut s = String::new();
    for ch in String::from_utf8_lossy(bytes).chars() {
        if (ch as u32) < 0x20 || ch as u32 == 0x7f {
            s.push_str(&format!("\\x{:02x}", ch as u32));
        } else if ch.is_control() {
            s.extend(ch.escape_default());
        } else {
            s.push(ch);
        }
    }
    s
}

/// The one exception to [`QUOTE_LIMIT`]: the error text a broker sends its client
/// (SaslAuthenticate's `error_message`) is meant for the user and Kafka's own run to 150
/// characters ("Authentication failed during authentication due to invalid credentials with
/// SASL mechanism SCRAM-SHA-512", principal-change texts), so a client quotes up to this many.
pub const SERVER_TEXT_LIMIT: usize = 256;

/// Bytes a peer sent, as text for an error or a log: [`printable`], cut after
/// [`QUOTE_LIMIT`] characters with the full size noted (`abc... (30000 bytes)`).
pub(crate) fn quote(bytes: &[u8]) -> String {
    quote_at_most(bytes, QUOTE_LIMIT)
}

/// [`quote`] with another limit (see [`SERVER_TEXT_LIMIT`]).
pub(crate) fn quote_at_most(bytes: &[u8], limit: usize) -> String {
    // Only a prefix is ever shown, so only a prefix is converted (4 bytes per character at most).
    let head = &bytes[..bytes.len().min(limit * 4)];
    let text = printable(head);
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], bytes.len()),
        None if head.len() < bytes.len() => format!("{text}... ({} bytes)", bytes.len()),
        None => text,
    }
}

#[cfg(test)]
mod quote_tests {
    use super::*;

    #[test]
    fn quotes_are_short_and_escaped() {
        assert_eq!(quote(b"abc"), "abc");
        assert_eq!(quote(b"a\x01b"), "a\\x01b");
        let long = vec![b'x'; 30_000];
        let q = quote(&long);
        assert_eq!(q, format!("{}... (30000 bytes)", "x".repeat(QUOTE_LIMIT)));
        assert_eq!(quote(&[b'y'; QUOTE_LIMIT]), "y".repeat(QUOTE_LIMIT));
        // Escapes and multi-byte characters count as characters, never split.
        let q = quote("é".repeat(100).as_bytes());
        assert!(q.starts_with(&"é".repeat(QUOTE_LIMIT)) && q.ends_with("(200 bytes)"));
        let q = quote(&[1u8; 300]);
        assert!(q.len() < 120 && q.ends_with("(300 bytes)"), "{q}");
    }
}
