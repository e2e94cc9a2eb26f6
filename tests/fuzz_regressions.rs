//! Crashes found by the coverage-guided fuzz targets (`fuzz/`, see FUZZING.md): one test per
//! crash, each replaying the minimized input through the public API.

use ksasl::*;

/// `credentials` target: an unknown algorithm name longer than 32 bytes whose 32nd byte fell
/// inside a multi-byte character panicked while its error message was built (a byte slice of
/// the name). The name is now quoted like any other outside text.
#[test]
fn an_unknown_algorithm_name_with_wide_characters_is_refused_without_a_panic() {
    let mut c = JwtValidatorConfig::default();
    // Eleven 3-byte characters: byte 32 is inside the eleventh.
    let name = "\u{20ac}".repeat(11) + "\u{3d2}";
    let e = c.set_algorithm_names(&[name.as_str()]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidConfig);
    assert!(e.message().contains("\u{20ac}"), "{}", e.message());
    // The fuzzer's own input: invalid UTF-8 read lossily, then a Greek upsilon.
    let fuzzed = String::from_utf8_lossy(&[0xcc; 12]).to_string() + "\u{3d2}";
    let e = c.set_algorithm_names(&[fuzzed.as_str()]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidConfig);
    // A 30,000-character name is quoted short.
    let long = "\u{20ac}".repeat(30_000);
    let e = c.set_algorithm_names(&[long.as_str()]).unwrap_err();
    assert!(e.message().len() < 600, "{} bytes", e.message().len());
}
