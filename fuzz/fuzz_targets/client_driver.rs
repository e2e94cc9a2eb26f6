//! The client-side connection driver fed arbitrary broker frames, timeouts and requests with
//! arbitrary time steps (see `ClientHarness` in `fuzz/src/lib.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ksasl_fuzz::ClientHarness::run(data);
});
