//! Secret bytes: zeroized on drop, compared in constant time, never printed.

use std::fmt;

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// Bytes that must not leak: passwords, salted passwords, keys, proofs, tokens.
///
/// The buffer is wiped when the value is dropped, `Debug` prints only `Secret(<redacted>)`,
/// and equality is decided in constant time for equal lengths.
#[derive(Clone, Default)]
pub struct Secret(Zeroizing<Vec<u8>>);

impl Secret {
    /// Takes ownership of the bytes.
    pub fn new(bytes: Vec<u8>) -> Self {
        Secret(Zeroizing::new(bytes))
    }

    /// Copies the bytes.
    pub fn from_slice(bytes: &[u8]) -> Self {
        Secret::new(bytes.to_vec())
    }

    /// Read access to the secret bytes.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Constant-time equality with another byte string (the length is not hidden).
    pub fn ct_eq(&self, other: &[u8]) -> bool {
        ct_eq(&self.0, other)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::from_slice(value.as_bytes())
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret::new(value.into_bytes())
    }
}

impl From<Vec<u8>> for Secret {
    fn from(value: Vec<u8>) -> Self {
        Secret::new(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other.expose())
    }
}

impl Eq for Secret {}

/// Constant-time comparison of two byte strings (lengths are compared openly).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_redacted_and_eq_works() {
        let s = Secret::from("pencil");
        assert_eq!(format!("{:?}", s), "Secret(<redacted>)");
        assert!(s.ct_eq(b"pencil"));
        assert!(!s.ct_eq(b"pencim"));
        assert!(!s.ct_eq(b"pencil2"));
        assert_eq!(s, Secret::from("pencil"));
    }
}
