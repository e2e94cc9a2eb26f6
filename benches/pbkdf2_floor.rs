//! PBKDF2 against its floor, interleaved: the speed of SHA-2 on this VM drifts by tens of
//! percent over seconds (SHA-512 most), so criterion's one-benchmark-after-another figures
//! cannot give a ratio within a few percent. Here every round times, one right after the
//! other, the floor (8192 calls of the hash crate's compression function on a fixed block,
//! the state carried through), the chained floor (the same calls, each block made of the
//! previous output, as PBKDF2's data dependency forces), ksasl's PBKDF2 with 4096 iterations
//! and the RustCrypto `pbkdf2` crate it replaced; the figures are medians over the rounds.
//!
//! Run with `cargo bench --bench pbkdf2_floor` (`make bench` runs it), and with
//! `--features bench-soft-sha` for the portable compression functions.

use std::hint::black_box;
use std::time::Instant;

use ksasl::ScramMechanism;
use sha2::digest::generic_array::GenericArray;

const ROUNDS: usize = 201;
const SALT: &[u8] = b"W22ZaJ0SNY7soEsUEjb6gQ==";

fn floor256() {
    let block = GenericArray::from([0x5au8; 64]);
    let mut state = black_box([0x6a09_e667u32; 8]);
    for _ in 0..8192 {
        sha2::compress256(&mut state, std::slice::from_ref(&block));
    }
    black_box(state);
}

fn chained256() {
    let mut block = GenericArray::from([0x5au8; 64]);
    let start = black_box([0x6a09_e667u32; 8]);
    for _ in 0..8192 {
        let mut state = start;
        sha2::compress256(&mut state, std::slice::from_ref(&block));
        write_be32(&state, &mut block[..32]);
    }
    black_box(block);
}

/// As src/credential/pbkdf2.rs writes state words out (not inlined: two 16-byte stores).
#[inline(never)]
fn write_be32(state: &[u32; 8], out: &mut [u8]) {
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
}

fn floor512() {
    let block = GenericArray::from([0x5au8; 128]);
    let mut state = black_box([0x6a09_e667_f3bc_c908u64; 8]);
    for _ in 0..8192 {
        sha2::compress512(&mut state, std::slice::from_ref(&block));
    }
    black_box(state);
}

fn chained512() {
    let mut block = GenericArray::from([0x5au8; 128]);
    let start = black_box([0x6a09_e667_f3bc_c908u64; 8]);
    for _ in 0..8192 {
        let mut state = start;
        sha2::compress512(&mut state, std::slice::from_ref(&block));
        for (bytes, word) in block[..64].chunks_exact_mut(8).zip(state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
    }
    black_box(block);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let path = if cfg!(feature = "bench-soft-sha") {
        "portable code (bench-soft-sha)"
    } else {
        "SHA-NI or AVX2 where the CPU has them"
    };
    println!("pbkdf2_floor: SHA-2 compression: {path}; medians of {ROUNDS} interleaved rounds");
    for mech in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let (floor, chained): (fn(), fn()) = match mech {
            ScramMechanism::Sha256 => (floor256, chained256),
            ScramMechanism::Sha512 => (floor512, chained512),
        };
        let ksasl = || {
            black_box(mech.salted_password(b"pencil", SALT, 4096));
        };
        let crate_pbkdf2 = || {
            let mut out = vec![0u8; mech.hash_len()];
            match mech {
                ScramMechanism::Sha256 => {
                    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(b"pencil", SALT, 4096, &mut out)
                }
                ScramMechanism::Sha512 => {
                    pbkdf2::pbkdf2_hmac::<sha2::Sha512>(b"pencil", SALT, 4096, &mut out)
                }
            }
            black_box(out);
        };
        let runs: [&dyn Fn(); 4] = [&floor, &chained, &ksasl, &crate_pbkdf2];
        let mut times: [Vec<f64>; 4] = Default::default();
        for round in 0..ROUNDS + 5 {
            for (run, t) in runs.iter().zip(times.iter_mut()) {
                let start = Instant::now();
                run();
                if round >= 5 {
                    t.push(start.elapsed().as_secs_f64() * 1e6); // the first 5: warm-up
                }
            }
        }
        let [f, c, k, p] = times.map(median);
        println!(
            "{}: floor {f:.0} us, chained floor {c:.0} us, ksasl pbkdf2_4096 {k:.0} us ({:.2}x the floor, {:.2}x the chained floor), pbkdf2 crate {p:.0} us ({:.2}x the floor)",
            mech.name(),
            k / f,
            k / c,
            p / f
        );
    }
}
