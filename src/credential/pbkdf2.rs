//! PBKDF2-HMAC-SHA-256 and PBKDF2-HMAC-SHA-512 for SCRAM's `Hi()`: one output block, as long
//! as the hash.
//!
//! PBKDF2 with `i` iterations chains `i` HMACs: U1 = HMAC(P, S || INT(1)), then
//! Uj = HMAC(P, U(j-1)), and the result is U1 ^ U2 ^ ... ^ Ui. Only U1 has an input of
//! arbitrary length (the salt); it goes through the `hmac` crate. Every later HMAC hashes a
//! message of exactly one hash length, appended to a key block whose hash state is the same
//! each time. So the two states after the key's ipad and opad blocks are computed once, and
//! each further iteration is two calls of the bare compression function on one block whose
//! padding never changes: the inner hash over U(j-1), then the outer hash over the inner
//! result. That is the least work PBKDF2 allows (2 compressions per iteration, one after the
//! other); what remains per iteration is copying the two precomputed states, writing the
//! state words out big-endian, and the XOR, which is done on words and converted to bytes
//! once at the end.
//!
//! Each compression here waits for the previous one's output as its message (PBKDF2's own
//! data dependency). Through the byte interface of `sha2::compress256`, every link of that
//! chain stores the state, writes it out big-endian and loads, swaps and shuffles it again;
//! on the SHA-NI path that costs SHA-256 about 15% over a chain of compressions on a fixed
//! block. So where the CPU has the SHA extensions, iterations 2 onwards of SHA-256 run in
//! `sha_ni`, which keeps the state in registers from the first iteration to the last and
//! reaches the fixed-block figure. On the portable path and for SHA-512 (AVX2), where a
//! compression takes longer, the round trip is lost in the noise and the `sha2` loop below
//! runs.
//!
//! Every buffer here that holds key material (the key block, both precomputed states, the
//! working state, the message block, the accumulator) is wiped when it goes out of scope.
//! The `sha_ni` loop keeps its working values in vector registers; like the `sha2` crate's
//! own compression functions, it does not wipe what the compiler may spill of them to the
//! stack.

use std::ops::BitXorAssign;

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256, Sha512};
use zeroize::{Zeroize, Zeroizing};

#[cfg(all(target_arch = "x86_64", not(feature = "bench-soft-sha")))]
mod sha_ni;

/// The largest block (SHA-512's), so that one stack buffer serves both hashes.
const MAX_BLOCK_LEN: usize = 128;

/// What PBKDF2 needs to know about a SHA-2 hash beyond its `Digest` API (which hashes keys
/// longer than a block): the compression function, its state words, its initial state and
/// its block geometry.
pub(crate) trait Sha2Prf: Digest {
    /// A state word: `u32` for SHA-256, `u64` for SHA-512.
    type Word: Copy + BitXorAssign + Zeroize;
    /// HMAC with this hash, for U1.
    type Mac: Mac + KeyInit;
    /// Bytes per compression-function block.
    const BLOCK_LEN: usize;
    /// Bytes of hash output (8 state words).
    const OUT_LEN: usize;
    /// Bytes of the message-length field at the end of the final block.
    const LENGTH_FIELD_LEN: usize;
    /// The initial hash value (FIPS 180-4, section 5.3).
    const IV: [Self::Word; 8];

    /// Run the compression function over `block` (exactly `BLOCK_LEN` bytes).
    fn compress(state: &mut [Self::Word; 8], block: &[u8]);
    /// Write the state words out big-endian into `out` (exactly `OUT_LEN` bytes).
    fn store(state: &[Self::Word; 8], out: &mut [u8]);
    /// Read `OUT_LEN` big-endian bytes into state words.
    fn load(bytes: &[u8], state: &mut [Self::Word; 8]);

    /// Run iterations 2 to `iterations` on a loop made for this CPU, if there is one, and
    /// say whether it ran. `inner` and `outer` are the states after the key's ipad and opad
    /// blocks; `acc` holds U1 on entry and the XOR of all the U on return.
    fn accelerated(
        _inner: &[Self::Word; 8],
        _outer: &[Self::Word; 8],
        _iterations: u32,
        _acc: &mut [Self::Word; 8],
    ) -> bool {
        false
    }
}

impl Sha2Prf for Sha256 {
    type Word = u32;
    type Mac = Hmac<Sha256>;
    const BLOCK_LEN: usize = 64;
    const OUT_LEN: usize = 32;
    const LENGTH_FIELD_LEN: usize = 8;
    const IV: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];

    #[inline(always)]
    fn compress(state: &mut [u32; 8], block: &[u8]) {
        sha2::compress256(state, std::slice::from_ref(GenericArray::from_slice(block)));
    }

    // Not inlined on purpose: on its own, this compiles to two 16-byte vector stores (byte
    // swaps in SSE2 shuffles), which the compression function's 16-byte loads of the block
    // can take straight from the store buffer. Inlined into the loop, LLVM has chosen eight
    // scalar 4-byte stores instead, whose forwarding into a 16-byte load fails; measured on
    // the SHA-NI path that cost about 2% of the whole derivation.
    #[inline(never)]
    fn store(state: &[u32; 8], out: &mut [u8]) {
        for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
    }

    #[inline(always)]
    fn load(bytes: &[u8], state: &mut [u32; 8]) {
        for (word, chunk) in state.iter_mut().zip(bytes.chunks_exact(4)) {
            *word = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
    }

    #[cfg(all(target_arch = "x86_64", not(feature = "bench-soft-sha")))]
    fn accelerated(
        inner: &[u32; 8],
        outer: &[u32; 8],
        iterations: u32,
        acc: &mut [u32; 8],
    ) -> bool {
        if !sha_ni::available() {
            return false;
        }
        #[allow(unsafe_code)]
        // SAFETY: `available()` has just confirmed the CPU features `iterate` is compiled
        // for; it takes no pointers and touches no memory but its arguments.
        unsafe {
            sha_ni::iterate(inner, outer, iterations, acc)
        };
        true
    }
}

impl Sha2Prf for Sha512 {
    type Word = u64;
    type Mac = Hmac<Sha512>;
    const BLOCK_LEN: usize = 128;
    const OUT_LEN: usize = 64;
    const LENGTH_FIELD_LEN: usize = 16;
    const IV: [u64; 8] = [
        0x6a09e667f3bcc908,
        0xbb67ae8584caa73b,
        0x3c6ef372fe94f82b,
        0xa54ff53a5f1d36f1,
        0x510e527fade682d1,
        0x9b05688c2b3e6c1f,
        0x1f83d9abfb41bd6b,
        0x5be0cd19137e2179,
    ];

    #[inline(always)]
    fn compress(state: &mut [u64; 8], block: &[u8]) {
        sha2::compress512(state, std::slice::from_ref(GenericArray::from_slice(block)));
    }

    #[inline(always)]
    fn store(state: &[u64; 8], out: &mut [u8]) {
        for (bytes, word) in out.chunks_exact_mut(8).zip(state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
    }

    #[inline(always)]
    fn load(bytes: &[u8], state: &mut [u64; 8]) {
        for (word, chunk) in state.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut be = [0u8; 8];
            be.copy_from_slice(chunk);
            *word = u64::from_be_bytes(be);
        }
    }
}

/// `Hi(password, salt, iterations)`: the first `H::OUT_LEN` bytes of
/// PBKDF2-HMAC-H(password, salt, iterations), written to `out` (which must be exactly that
/// long). As with the `pbkdf2` crate, 0 iterations give the same result as 1 (just U1).
pub(crate) fn hi<H: Sha2Prf>(password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
    hi_on::<H>(password, salt, iterations, out, true)
}

/// [`hi`], with the CPU-specific loop allowed or not (the tests check both).
fn hi_on<H: Sha2Prf>(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    out: &mut [u8],
    accelerate: bool,
) {
    assert_eq!(out.len(), H::OUT_LEN, "Hi() output is one hash length");

    // U1, with the salt of any length: through the ordinary HMAC.
    let mut mac = <H::Mac as Mac>::new_from_slice(password).expect("HMAC takes any key length");
    mac.update(salt);
    mac.update(&1u32.to_be_bytes());
    let mut u1 = mac.finalize().into_bytes();
    out.copy_from_slice(&u1);
    u1.as_mut_slice().zeroize();
    if iterations <= 1 {
        return;
    }

    // The key block K0 (RFC 2104): the password, or its hash if longer than a block, padded
    // with zeros; then the states after K0 ^ ipad and K0 ^ opad.
    let mut buf = Zeroizing::new([0u8; MAX_BLOCK_LEN]);
    let block = &mut buf[..H::BLOCK_LEN];
    if password.len() > H::BLOCK_LEN {
        let mut hashed = <H as Digest>::digest(password);
        block[..hashed.len()].copy_from_slice(&hashed);
        hashed.as_mut_slice().zeroize();
    } else {
        block[..password.len()].copy_from_slice(password);
    }
    let mut inner = Zeroizing::new(H::IV);
    let mut outer = Zeroizing::new(H::IV);
    block.iter_mut().for_each(|b| *b ^= 0x36);
    H::compress(&mut inner, block);
    block.iter_mut().for_each(|b| *b ^= 0x36 ^ 0x5c);
    H::compress(&mut outer, block);

    // From now on every hash (inner and outer alike) covers one key block plus one hash
    // length, so its final block is always: the message (U or the inner result), 0x80, zeros,
    // and the same bit length. Only the message part is rewritten per compression.
    block.zeroize();
    block[..H::OUT_LEN].copy_from_slice(out);
    block[H::OUT_LEN] = 0x80;
    let bits = ((H::BLOCK_LEN + H::OUT_LEN) * 8) as u64;
    block[H::BLOCK_LEN - 8..].copy_from_slice(&bits.to_be_bytes());
    debug_assert!(H::OUT_LEN < H::BLOCK_LEN - H::LENGTH_FIELD_LEN);

    let mut acc = Zeroizing::new(H::IV);
    H::load(out, &mut acc);
    if accelerate && H::accelerated(&inner, &outer, iterations, &mut acc) {
        H::store(&acc, out);
        return;
    }
    let mut state = Zeroizing::new(H::IV);
    for _ in 1..iterations {
        *state = *inner;
        H::compress(&mut state, block);
        H::store(&state, &mut block[..H::OUT_LEN]);
        *state = *outer;
        H::compress(&mut state, block);
        H::store(&state, &mut block[..H::OUT_LEN]);
        for (a, s) in acc.iter_mut().zip(state.iter()) {
            *a ^= *s;
        }
    }
    H::store(&acc, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `hi`, after checking that the portable loop gives the same bytes as the loop chosen
    /// for this CPU (they are the same loop where there is no faster one).
    fn ours<H: Sha2Prf>(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut out = vec![0u8; H::OUT_LEN];
        hi::<H>(password, salt, iterations, &mut out);
        let mut portable = vec![0u8; H::OUT_LEN];
        hi_on::<H>(password, salt, iterations, &mut portable, false);
        assert_eq!(out, portable, "{iterations} iterations");
        out
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", not(feature = "bench-soft-sha")))]
    fn sha_ni_loop_runs_where_the_cpu_has_it() {
        // So that the comparisons above are known to cover it on this machine.
        let (inner, outer, mut acc) = ([1u32; 8], [2u32; 8], [3u32; 8]);
        let ran = <Sha256 as Sha2Prf>::accelerated(&inner, &outer, 5, &mut acc);
        assert_eq!(ran, sha_ni::available());
        assert_eq!(ran, acc != [3u32; 8]);
        assert!(!<Sha512 as Sha2Prf>::accelerated(
            &[1; 8],
            &[2; 8],
            5,
            &mut [3; 8]
        ));
    }

    #[test]
    fn both_loops_agree_on_many_iteration_counts() {
        for iterations in [2, 3, 4, 5, 17, 100, 1000, 4095, 4096, 4097, 10_000] {
            for (p, s) in [(0, 0), (6, 24), (64, 56), (65, 300)] {
                ours::<Sha256>(&filler(p, 3), &filler(s, 9), iterations);
                ours::<Sha512>(&filler(p, 3), &filler(s, 9), iterations);
            }
        }
    }

    fn reference_256(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        ::pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password, salt, iterations).to_vec()
    }

    fn reference_512(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        ::pbkdf2::pbkdf2_hmac_array::<Sha512, 64>(password, salt, iterations).to_vec()
    }

    /// Deterministic bytes that differ from one position to the next.
    fn filler(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn published_sha256_vectors() {
        // PBKDF2-HMAC-SHA256, P = "password", S = "salt", dkLen = 32 (the widely published
        // vectors; also what OpenSSL gives).
        for (c, want) in [
            (
                1,
                "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b",
            ),
            (
                2,
                "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43",
            ),
            (
                4096,
                "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a",
            ),
        ] {
            assert_eq!(hex(&ours::<Sha256>(b"password", b"salt", c)), want, "c={c}");
        }
        assert_eq!(
            hex(&ours::<Sha256>(
                b"passwordPASSWORDpassword",
                b"saltSALTsaltSALTsaltSALTsaltSALTsalt",
                4096
            )),
            "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1"
        );
    }

    #[test]
    fn published_sha512_vectors() {
        // PBKDF2-HMAC-SHA512, P = "password", S = "salt", dkLen = 64.
        for (c, want) in [
            (
                1,
                "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252\
                 c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce",
            ),
            (
                2,
                "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c\
                 f76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e",
            ),
            (
                4096,
                "d197b1b33db0143e018b12f3d1d1479e6cdebdcc97c5c0f87f6902e072f457b5\
                 143f30602641b3d55cd335988cb36b84376060ecd532e039b742a239434af2d5",
            ),
        ] {
            assert_eq!(hex(&ours::<Sha512>(b"password", b"salt", c)), want, "c={c}");
        }
    }

    fn compare(password_lens: &[usize], salt_lens: &[usize], iterations: u32) {
        for &p in password_lens {
            for &s in salt_lens {
                let (password, salt) = (filler(p, 7), filler(s, 101));
                let what = format!("password {p} bytes, salt {s} bytes, {iterations} iterations");
                assert_eq!(
                    ours::<Sha256>(&password, &salt, iterations),
                    reference_256(&password, &salt, iterations),
                    "SHA-256, {what}"
                );
                assert_eq!(
                    ours::<Sha512>(&password, &salt, iterations),
                    reference_512(&password, &salt, iterations),
                    "SHA-512, {what}"
                );
            }
        }
    }

    /// Passwords around both block sizes (64 and 128 bytes; longer keys are hashed first).
    const PASSWORD_LENS: [usize; 10] = [0, 1, 6, 63, 64, 65, 127, 128, 129, 200];
    /// Salts around the padding boundaries of U1's message (salt + 4 bytes of block index).
    const SALT_LENS: [usize; 8] = [0, 1, 55, 56, 64, 119, 128, 300];

    #[test]
    fn matches_pbkdf2_crate_for_few_iterations() {
        for iterations in [1, 2, 3] {
            compare(&PASSWORD_LENS, &SALT_LENS, iterations);
        }
    }

    #[test]
    fn matches_pbkdf2_crate_for_4096_iterations() {
        // Fewer combinations: the reference is slow in debug builds, and the iteration loop
        // does not depend on the lengths beyond the key block set up before it.
        compare(&[0, 6, 65, 129, 200], &[0, 56, 300], 4096);
    }

    #[test]
    fn zero_iterations_behave_as_one() {
        for (password, salt) in [
            (&b""[..], &b""[..]),
            (b"pencil", b"W22ZaJ0SNY7soEsUEjb6gQ=="),
        ] {
            assert_eq!(
                ours::<Sha256>(password, salt, 0),
                ours::<Sha256>(password, salt, 1)
            );
            assert_eq!(
                ours::<Sha256>(password, salt, 0),
                reference_256(password, salt, 0)
            );
            assert_eq!(
                ours::<Sha512>(password, salt, 0),
                reference_512(password, salt, 0)
            );
        }
    }
}
