//! Randomness for nonces and salts, injectable so tests can be deterministic.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};

/// A source of cryptographically secure random bytes.
pub trait RandomSource: Send + Sync {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]) -> Result<()>;
}

/// The operating system's CSPRNG (`getrandom(2)` on Linux).
#[derive(Clone, Copy, Debug, Default)]
pub struct OsRandom;

impl RandomSource for OsRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<()> {
        getrandom::getrandom(buf).map_err(|e| {
            Error::new(
                ErrorCode::RandomSourceFailed,
                format!("the operating system's random source failed: {e}"),
            )
        })
    }
}

/// A shared random source.
#[derive(Clone)]
pub struct SharedRandom(pub Arc<dyn RandomSource>);

impl Default for SharedRandom {
    /// The operating system's source, one instance per thread: an exchange's default options
    /// allocate nothing for it, and the exchanges of different threads do not count their
    /// references on one cache line.
    fn default() -> Self {
        thread_local! {
            static OS: Arc<dyn RandomSource> = Arc::new(OsRandom);
        }
        SharedRandom(
            OS.try_with(Arc::clone)
                .unwrap_or_else(|_| Arc::new(OsRandom)),
        )
    }
}

impl fmt::Debug for SharedRandom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedRandom")
    }
}

/// A random string the way Kafka makes nonces and salts: a 130-bit random integer written in
/// base 36 (digits and lower-case letters, no leading zeros), usually 25 or 26 characters.
pub fn kafka_random_string(rng: &dyn RandomSource) -> Result<String> {
    // 17 bytes = 136 bits; keep the low 130 (the first byte keeps only 2 bits).
    let mut n = [0u8; 17];
    rng.fill(&mut n)?;
    n[0] &= 0x03;
    Ok(base36(&n))
}

/// The base-36 digits of a big-endian number of 17 bytes, without leading zeros. The number is
/// divided by 36^12 (which fits in a `u64`) a few times, and each remainder gives 12 digits,
/// instead of dividing the whole number by 36 once per digit.
fn base36(bytes: &[u8; 17]) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    const CHUNK: u128 = 36u128.pow(12);
    let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    let mut limbs = [u64::from(bytes[0]), word(&bytes[1..9]), word(&bytes[9..17])];
    // The digits, least significant first.
    let mut digits = Vec::with_capacity(26);
    loop {
        let mut rem: u128 = 0;
        for limb in limbs.iter_mut() {
            let cur = (rem << 64) | u128::from(*limb);
            *limb = (cur / CHUNK) as u64;
            rem = cur % CHUNK;
        }
        let last = limbs.iter().all(|&l| l == 0);
        let mut r = rem as u64;
        for _ in 0..12 {
            if last && r == 0 {
                break;
            }
            digits.push(DIGITS[(r % 36) as usize]);
            r /= 36;
        }
        if last {
            break;
        }
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    digits.reverse();
    String::from_utf8(digits).expect("base-36 digits are ASCII")
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::sync::Mutex;

    /// Deterministic bytes for tests: a counter-driven xorshift.
    pub struct FixedRandom(pub Mutex<u64>);

    impl RandomSource for FixedRandom {
        fn fill(&self, buf: &mut [u8]) -> Result<()> {
            let mut s = self.0.lock().unwrap();
            for b in buf.iter_mut() {
                *s ^= *s << 13;
                *s ^= *s >> 7;
                *s ^= *s << 17;
                *b = (*s >> 24) as u8;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::FixedRandom;
    use super::*;
    use std::sync::Mutex;

    struct Bytes(Vec<u8>);
    impl RandomSource for Bytes {
        fn fill(&self, buf: &mut [u8]) -> Result<()> {
            buf.copy_from_slice(&self.0[..buf.len()]);
            Ok(())
        }
    }

    #[test]
    fn base36_of_known_values() {
        assert_eq!(kafka_random_string(&Bytes(vec![0; 17])).unwrap(), "0");
        let mut one = vec![0; 17];
        one[16] = 35;
        assert_eq!(kafka_random_string(&Bytes(one)).unwrap(), "z");
        let mut v = vec![0; 17];
        v[15] = 1; // 256
        assert_eq!(kafka_random_string(&Bytes(v)).unwrap(), "74");
        // 2^130 - 1 is the largest value: 26 base-36 digits.
        let max = kafka_random_string(&Bytes(vec![0xff; 17])).unwrap();
        assert_eq!(max.len(), 26);
    }

    /// The digits by long division of the whole number by 36, one digit at a time.
    fn base36_by_long_division(bytes: &[u8; 17]) -> String {
        let mut n = *bytes;
        let mut digits = Vec::new();
        while n.iter().any(|&b| b != 0) {
            let mut rem: u32 = 0;
            for byte in n.iter_mut() {
                let acc = (rem << 8) | u32::from(*byte);
                *byte = (acc / 36) as u8;
                rem = acc % 36;
            }
            digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[rem as usize]);
        }
        if digits.is_empty() {
            digits.push(b'0');
        }
        digits.reverse();
        String::from_utf8(digits).unwrap()
    }

    #[test]
    fn chunked_base36_equals_long_division() {
        let f = FixedRandom(Mutex::new(11));
        let mut cases = vec![[0u8; 17], [0xff; 17]];
        for i in 0..17 {
            let mut one = [0u8; 17];
            one[i] = 1;
            cases.push(one);
        }
        for _ in 0..20_000 {
            let mut n = [0u8; 17];
            f.fill(&mut n).unwrap();
            cases.push(n);
            // Small numbers too: leading zero bytes.
            let mut small = [0u8; 17];
            small[12..].copy_from_slice(&n[12..]);
            cases.push(small);
        }
        for mut n in cases {
            n[0] &= 0x03;
            assert_eq!(base36(&n), base36_by_long_division(&n), "{n:?}");
        }
    }

    #[test]
    fn os_random_strings_differ() {
        let a = kafka_random_string(&OsRandom).unwrap();
        let b = kafka_random_string(&OsRandom).unwrap();
        assert_ne!(a, b);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
        let f = FixedRandom(Mutex::new(7));
        assert_ne!(
            kafka_random_string(&f).unwrap(),
            kafka_random_string(&f).unwrap()
        );
    }
}
