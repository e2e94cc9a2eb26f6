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

error_codes! {
    /// An argument is out of range or malformed.
    InvalidArgument = 100, "INVALID_ARGUMENT" => Misuse,
    /// `step` was called after the exchange completed.
    StepAfterDone = 101, "STEP_AFTER_DONE" => Misuse,
    /// `step` was called after the exchange failed.
    StepAfterFailure = 102, "STEP_AFTER_FAILURE" => Misuse,
    /// A call that does not fit the current state (for example supplying a credential
    /// nobody asked for, or stepping while a credential is awaited).
    WrongState = 103, "WRONG_STATE" => Misuse,
    /// No mechanism of that name is registered.
    UnknownMechanism = 104, "UNKNOWN_MECHANISM" => Misuse,
    /// A configuration value is invalid.
    InvalidConfig = 105, "INVALID_CONFIG" => Misuse,
    /// A required pointer argument was NULL (C ABI).
    NullArgument = 106, "NULL_ARGUMENT" => Misuse,

    /// The message does not follow the mechanism's grammar (empty, truncated, attributes
    /// missing or out of order).
    MalformedMessage = 200, "MALFORMED_MESSAGE" => Protocol,
    /// A field that must be base64 is not valid standard base64.
    InvalidBase64 = 201, "INVALID_BASE64" => Protocol,
    /// The message is not valid UTF-8, or not ASCII where the protocol requires ASCII.
    InvalidEncoding = 202, "INVALID_ENCODING" => Protocol,
    /// The client asked for channel binding (gs2 flag `y` or `p=`), which Kafka does not use.
    UnsupportedChannelBinding = 203, "UNSUPPORTED_CHANNEL_BINDING" => Protocol,
    /// A SCRAM nonce does not continue or repeat the agreed nonce.
    NonceMismatch = 204, "NONCE_MISMATCH" => Protocol,
    /// The server asked for fewer than the minimum number of PBKDF2 iterations.
    IterationsTooLow = 205, "ITERATIONS_TOO_LOW" => Protocol,
    /// The server asked for more PBKDF2 iterations than the client's cap allows.
    IterationsTooHigh = 206, "ITERATIONS_TOO_HIGH" => Protocol,
    /// A message is larger than the configured maximum.
    MessageTooLarge = 207, "MESSAGE_TOO_LARGE" => Protocol,
    /// A username is empty, not ASCII, or wrongly escaped.
    InvalidUsername = 208, "INVALID_USERNAME" => Protocol,
    /// A PLAIN message does not have exactly three NUL-separated fields.
    InvalidPlainMessage = 209, "INVALID_PLAIN_MESSAGE" => Protocol,
    /// A challenge arrived where the mechanism expects none (or an empty one).
    UnexpectedChallenge = 210, "UNEXPECTED_CHALLENGE" => Protocol,
    /// The SCRAM server ended the exchange with an `e=` error attribute.
    ServerReportedError = 211, "SERVER_REPORTED_ERROR" => Protocol,
    /// A nonce is empty or holds characters outside printable ASCII.
    InvalidNonce = 212, "INVALID_NONCE" => Protocol,
    /// A SASL extension name or value is invalid.
    InvalidExtension = 213, "INVALID_EXTENSION" => Protocol,
    /// The mechanism is not enabled (Kafka error 33, UNSUPPORTED_SASL_MECHANISM).
    UnsupportedSaslMechanism = 214, "UNSUPPORTED_SASL_MECHANISM" => Protocol,
    /// A request arrived in a state that does not allow it (Kafka error 34, ILLEGAL_SASL_STATE).
    IllegalSaslState = 215, "ILLEGAL_SASL_STATE" => Protocol,
    /// The peer used an API version the other side does not support (Kafka error 35).
    UnsupportedVersion = 216, "UNSUPPORTED_VERSION" => Protocol,
    /// A Kafka request or response is malformed: truncated, garbage after the body, bad
    /// lengths (Kafka error 42, INVALID_REQUEST, on the server side).
    InvalidRequest = 217, "INVALID_REQUEST" => Protocol,
    /// A frame length is negative.
    InvalidFrameSize = 218, "INVALID_FRAME_SIZE" => Protocol,
    /// A response does not answer the request it should (correlation id or API mismatch).
    CorrelationMismatch = 219, "CORRELATION_MISMATCH" => Protocol,
    /// The peer closed the connection during (re-)authentication.
    ConnectionClosed = 220, "CONNECTION_CLOSED" => Protocol,
    /// The broker answered with a Kafka error code ksasl has no more specific code for.
    KafkaError = 221, "KAFKA_ERROR" => Protocol,

    /// The password or proof is wrong.
    InvalidCredentials = 300, "INVALID_CREDENTIALS" => Authentication,
    /// The user is not known to the server.
    UnknownUser = 301, "UNKNOWN_USER" => Authentication,
    /// The client asked to act as an identity other than the one it authenticated as.
    AuthzidMismatch = 302, "AUTHZID_MISMATCH" => Authentication,
    /// The server's SCRAM signature does not verify: the server does not know the password
    /// (or is an impostor).
    InvalidServerSignature = 303, "INVALID_SERVER_SIGNATURE" => Authentication,
    /// The client sent an empty username.
    UsernameNotSpecified = 304, "USERNAME_NOT_SPECIFIED" => Authentication,
    /// The client sent an empty password.
    PasswordNotSpecified = 305, "PASSWORD_NOT_SPECIFIED" => Authentication,
    /// A delegation token id (`tokenauth=true`) is not known.
    UnknownToken = 306, "UNKNOWN_TOKEN" => Authentication,
    /// The server reported that authentication failed (client side; the server's text and,
    /// for OAUTHBEARER, its `status`, `scope` and `openid-configuration` are in the details).
    ServerRejectedAuthentication = 307, "SERVER_REJECTED_AUTHENTICATION" => Authentication,
    /// The token's `exp` has passed (allowing for clock skew).
    TokenExpired = 308, "TOKEN_EXPIRED" => Authentication,
    /// The token is not valid yet (`nbf`, or for unsecured tokens `iat`, in the future).
    TokenNotYetValid = 309, "TOKEN_NOT_YET_VALID" => Authentication,
    /// The token's issuer is not the expected one.
    TokenInvalidIssuer = 310, "TOKEN_INVALID_ISSUER" => Authentication,
    /// The token's audience holds none of the expected audiences.
    TokenInvalidAudience = 311, "TOKEN_INVALID_AUDIENCE" => Authentication,
    /// A required claim (subject, `exp`, `iat`) is missing or blank.
    TokenMissingClaim = 312, "TOKEN_MISSING_CLAIM" => Authentication,
    /// A claim has the wrong type or an impossible value.
    TokenInvalidClaim = 313, "TOKEN_INVALID_CLAIM" => Authentication,
    /// No key of the JWKS matches the token's `kid`: the host should refetch the JWKS.
    TokenUnknownKey = 314, "TOKEN_UNKNOWN_KEY" => Authentication,
    /// The token's signature does not verify.
    TokenBadSignature = 315, "TOKEN_BAD_SIGNATURE" => Authentication,
    /// The token's algorithm is not allowed (`none` on the signed path, HMAC without a
    /// configured secret, an algorithm the key cannot serve).
    TokenAlgorithmRefused = 316, "TOKEN_ALGORITHM_REFUSED" => Authentication,
    /// The token is not a well-formed JWT (parts, base64, JSON, header without `alg`).
    TokenMalformed = 317, "TOKEN_MALFORMED" => Authentication,
    /// The token is larger than the validator accepts.
    TokenTooLarge = 318, "TOKEN_TOO_LARGE" => Authentication,
    /// The token lacks a required scope.
    InsufficientScope = 319, "INSUFFICIENT_SCOPE" => Authentication,
    /// The server's extension validator refused some SASL extensions.
    InvalidExtensions = 320, "INVALID_EXTENSIONS" => Authentication,
    /// A host-supplied validator rejected the token.
    TokenRejected = 321, "TOKEN_REJECTED" => Authentication,
    /// The session expired: the broker closes the connection on its next request.
    SessionExpired = 322, "SESSION_EXPIRED" => Authentication,
    /// Re-authentication tried to change the principal (KIP-368 forbids it).
    PrincipalChanged = 323, "PRINCIPAL_CHANGED" => Authentication,
    /// Re-authentication tried to change the mechanism (KIP-368 forbids it).
    MechanismChanged = 324, "MECHANISM_CHANGED" => Authentication,
    /// A mechanism written by the host (in C, Python or Java) failed: it raised, or answered
    /// in a way the protocol does not allow. The message is the host's.
    HostMechanismFailed = 325, "HOST_MECHANISM_FAILED" => Authentication,

    /// A credential string or record cannot be parsed.
    InvalidCredentialFormat = 400, "INVALID_CREDENTIAL_FORMAT" => Credential,
    /// A stored SCRAM credential has fewer than the minimum number of iterations.
    CredentialIterationsTooLow = 401, "CREDENTIAL_ITERATIONS_TOO_LOW" => Credential,
    /// The credential store failed to answer a lookup.
    CredentialLookupFailed = 402, "CREDENTIAL_LOOKUP_FAILED" => Credential,
    /// The supplied credential cannot serve this mechanism.
    CredentialMechanismMismatch = 403, "CREDENTIAL_MECHANISM_MISMATCH" => Credential,
    /// No valid credential is available (none yet, or the last one expired).
    NoValidCredential = 404, "NO_VALID_CREDENTIAL" => Credential,
    /// A credential's expiry is in the past, looks relative or in seconds, or is absurdly far
    /// in the future.
    InvalidCredentialExpiry = 405, "INVALID_CREDENTIAL_EXPIRY" => Credential,
    /// A refresh answer reached a refresher that no longer exists.
    RefresherGone = 406, "REFRESHER_GONE" => Credential,
    /// No delegation token has this id or HMAC (Kafka's DELEGATION_TOKEN_NOT_FOUND, 62).
    DelegationTokenNotFound = 407, "DELEGATION_TOKEN_NOT_FOUND" => Credential,
    /// Only the token's owner or a renewer may do this (DELEGATION_TOKEN_OWNER_MISMATCH, 63).
    DelegationTokenOwnerMismatch = 408, "DELEGATION_TOKEN_OWNER_MISMATCH" => Credential,
    /// The delegation token has expired (DELEGATION_TOKEN_EXPIRED, 66).
    DelegationTokenExpired = 409, "DELEGATION_TOKEN_EXPIRED" => Credential,
    /// A renewer or owner is not a `User` principal (INVALID_PRINCIPAL_TYPE, 67).
    InvalidPrincipalType = 410, "INVALID_PRINCIPAL_TYPE" => Credential,
    /// Delegation-token requests are not allowed on this connection, e.g. one that itself
    /// authenticated with a token (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 64).
    DelegationTokenRequestNotAllowed = 411, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED" => Credential,

    /// An invariant of the library failed.
    Internal = 500, "INTERNAL" => Internal,
    /// A panic was caught at an API boundary.
    Panic = 501, "PANIC" => Internal,
    /// The operating system's random source failed.
    RandomSourceFailed = 502, "RANDOM_SOURCE_FAILED" => Internal,
}

impl ErrorCode {
    /// The numeric value of the code.
    pub fn as_u32(self) -> u32 {
        self as u32
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
            message,
            details: Vec::new(),
        }
    }

    /// Sets the text a server sends to the client instead of the generic one, keeping the
    /// (possibly more detailed) message for the host.
    pub fn with_client_text(mut self, text: impl Into<String>) -> Self {
        self.client_text = Some(text.into());
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
        self.client_text.is_some()
    }

    /// The text a Kafka broker puts in the `error_message` of a failed `SaslAuthenticate`
    /// response for this error: the message itself when Kafka discloses it, otherwise Kafka's
    /// generic sentence naming the mechanism.
    pub fn client_message(&self, mechanism: &str, reauthenticating: bool) -> String {
        if let Some(text) = &self.client_text {
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
