//! The PBKDF2-HMAC-SHA-256 iteration loop on the x86-64 SHA extensions.
//!
//! `sha2::compress256` takes its message as bytes and its state as eight words in memory, so
//! in PBKDF2's chain, where each compression's message is the previous compression's output,
//! every compression ends by shuffling its state out and storing it, and the next one begins
//! by loading it again, byte-swapping it and shuffling it back into the two-register form the
//! `sha256rnds2` instruction works on. On this chain that round trip is about 15% of the
//! time. Here the state stays in that two-register form from the first iteration to the
//! last: a compression's output becomes the next message by two shuffles, a blend and an
//! align, with no memory in between.
//!
//! Only the loop after the key set-up is here; U1 and the ipad/opad states still come from
//! the `sha2` and `hmac` crates (see `super::hi`). The results are checked against the
//! portable path for many lengths and iteration counts in the tests of `super`.

use std::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_alignr_epi8, _mm_blend_epi16, _mm_extract_epi32, _mm_set_epi32,
    _mm_sha256msg1_epu32, _mm_sha256msg2_epu32, _mm_sha256rnds2_epu32, _mm_shuffle_epi32,
    _mm_xor_si128,
};

/// The SHA-256 round constants (FIPS 180-4, section 4.2.2).
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// Whether this CPU has what [`iterate`] needs. Checked on every derivation; the standard
/// library caches the answer after the first call.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("sha")
        && std::arch::is_x86_feature_detected!("sse4.1")
        && std::arch::is_x86_feature_detected!("ssse3")
}

/// A SHA-256 state as `sha256rnds2` wants it: words a, b, e, f in one register (a in the
/// highest lane) and c, d, g, h in the other.
#[derive(Clone, Copy)]
struct State {
    abef: __m128i,
    cdgh: __m128i,
}

/// Four consecutive message words, the first in the lowest lane.
type Words = __m128i;

#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn words(w: &[u32]) -> Words {
    _mm_set_epi32(w[3] as i32, w[2] as i32, w[1] as i32, w[0] as i32)
}

/// From hash words a..h (a in the lowest lane of `abcd`) to the round form.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn to_rounds(abcd: Words, efgh: Words) -> State {
    let badc = _mm_shuffle_epi32::<0xB1>(abcd); // lanes low to high: b a d c
    let hgfe = _mm_shuffle_epi32::<0x1B>(efgh); // lanes low to high: h g f e
    State {
        abef: _mm_alignr_epi8::<8>(badc, hgfe),    // f e b a
        cdgh: _mm_blend_epi16::<0xF0>(hgfe, badc), // h g d c
    }
}

/// Back from the round form to hash words, which are also the next message's first eight.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn to_words(s: State) -> (Words, Words) {
    let abef = _mm_shuffle_epi32::<0x1B>(s.abef); // a b e f
    let ghcd = _mm_shuffle_epi32::<0xB1>(s.cdgh); // g h c d
    (
        _mm_blend_epi16::<0xF0>(abef, ghcd), // a b c d
        _mm_alignr_epi8::<8>(ghcd, abef),    // e f g h
    )
}

/// Message words 16 onwards: the next four from the last sixteen.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn schedule(w0: Words, w1: Words, w2: Words, w3: Words) -> Words {
    let partial = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8::<4>(w3, w2));
    _mm_sha256msg2_epu32(partial, w3)
}

/// Four rounds, `group` counting from 0 to 15.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn rounds(s: &mut State, w: Words, group: usize) {
    let k = &K[group * 4..group * 4 + 4];
    let wk = _mm_add_epi32(
        w,
        _mm_set_epi32(k[3] as i32, k[2] as i32, k[1] as i32, k[0] as i32),
    );
    s.cdgh = _mm_sha256rnds2_epu32(s.cdgh, s.abef, wk);
    s.abef = _mm_sha256rnds2_epu32(s.abef, s.cdgh, _mm_shuffle_epi32::<0x0E>(wk));
}

/// One compression of the 64-byte block whose words are `m`, from `start`.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn compress(start: State, m: [Words; 4]) -> State {
    let mut s = start;
    let [mut w0, mut w1, mut w2, mut w3] = m;
    rounds(&mut s, w0, 0);
    rounds(&mut s, w1, 1);
    rounds(&mut s, w2, 2);
    rounds(&mut s, w3, 3);
    let mut group = 4;
    while group < 16 {
        w0 = schedule(w0, w1, w2, w3);
        rounds(&mut s, w0, group);
        w1 = schedule(w1, w2, w3, w0);
        rounds(&mut s, w1, group + 1);
        w2 = schedule(w2, w3, w0, w1);
        rounds(&mut s, w2, group + 2);
        w3 = schedule(w3, w0, w1, w2);
        rounds(&mut s, w3, group + 3);
        group += 4;
    }
    State {
        abef: _mm_add_epi32(s.abef, start.abef),
        cdgh: _mm_add_epi32(s.cdgh, start.cdgh),
    }
}

/// PBKDF2's iterations 2 to `iterations`: `inner` and `outer` are the states after the
/// key's ipad and opad blocks, and `acc` holds U1 on entry and U1 ^ U2 ^ ... ^ U(iterations)
/// on return, all as hash words.
///
/// # Safety
///
/// The CPU must have the SHA extensions, SSSE3 and SSE4.1 ([`available`]).
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
pub(super) fn iterate(inner: &[u32; 8], outer: &[u32; 8], iterations: u32, acc: &mut [u32; 8]) {
    let inner = to_rounds(words(&inner[..4]), words(&inner[4..]));
    let outer = to_rounds(words(&outer[..4]), words(&outer[4..]));
    // Every message here is 32 bytes after one 64-byte key block: a 0x80 byte, zeros, and
    // the length in bits, 768.
    let pad = words(&[0x8000_0000, 0, 0, 0]);
    let len = words(&[0, 0, 0, 768]);
    let (mut lo, mut hi) = (words(&acc[..4]), words(&acc[4..]));
    let (mut acc_lo, mut acc_hi) = (lo, hi);
    for _ in 1..iterations {
        (lo, hi) = to_words(compress(inner, [lo, hi, pad, len]));
        (lo, hi) = to_words(compress(outer, [lo, hi, pad, len]));
        acc_lo = _mm_xor_si128(acc_lo, lo);
        acc_hi = _mm_xor_si128(acc_hi, hi);
    }
    *acc = [
        _mm_extract_epi32::<0>(acc_lo) as u32,
        _mm_extract_epi32::<1>(acc_lo) as u32,
        _mm_extract_epi32::<2>(acc_lo) as u32,
        _mm_extract_epi32::<3>(acc_lo) as u32,
        _mm_extract_epi32::<0>(acc_hi) as u32,
        _mm_extract_epi32::<1>(acc_hi) as u32,
        _mm_extract_epi32::<2>(acc_hi) as u32,
        _mm_extract_epi32::<3>(acc_hi) as u32,
    ];
}
