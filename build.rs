//! Generates `include/ksasl.h` from the C ABI in `src/ffi` and gives the shared library its
//! soname. The header is committed; CI fails if it is stale.

use std::env;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let patch = env::var("CARGO_PKG_VERSION_PATCH").unwrap_or_default();
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libksasl.so.{major}");

    println!("cargo:rerun-if-changed=src/error.rs");
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut defs = format!(
        "\n#define KSASL_VERSION_MAJOR {major}\n#define KSASL_VERSION_MINOR {minor}\n#define KSASL_VERSION_PATCH {patch}\n#define KSASL_VERSION_STRING \"{major}.{minor}.{patch}\"\n\n/* Result codes (src/error.rs): 1xx misuse, 2xx protocol, 3xx authentication, 4xx credential, 5xx internal. */\n#define KSASL_OK 0\n"
    );
    // The error codes, read from the table in src/error.rs (`Variant = 123, "NAME" => Kind,`).
    let errors = std::fs::read_to_string(dir.join("src/error.rs")).expect("src/error.rs");
    for line in errors.lines() {
        let l = line.trim();
        if let Some((_, rest)) = l.split_once(" = ") {
            if let Some((num, rest)) = rest.split_once(", \"") {
                if let (Ok(n), Some((name, _))) = (num.trim().parse::<u32>(), rest.split_once('"'))
                {
                    defs.push_str(&format!("#define KSASL_{name} {n}\n"));
                }
            }
        }
    }
    config.after_includes = Some(defs);
    // Only the C ABI (src/ffi/mod.rs and the modules it declares): the rest of the crate's
    // public items are Rust API.
    let builder = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/ffi/mod.rs"));
    match builder.generate() {
        Ok(bindings) => {
            bindings.write_to_file(dir.join("include/ksasl.h"));
        }
        Err(e) => panic!("cbindgen failed to generate include/ksasl.h: {e}"),
    }
}
