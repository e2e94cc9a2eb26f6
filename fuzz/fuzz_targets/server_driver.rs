//! The broker-side connection driver fed arbitrary frame sequences with arbitrary time steps
//! (see `ServerHarness` in `fuzz/src/lib.rs` for the input format and the invariants).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ksasl_fuzz::ServerHarness::run(data);
});
