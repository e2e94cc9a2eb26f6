//! Generates `include/ksasl.h` from the C ABI in `src/ffi` and gives the shared library its
//! soname. The header is committed; CI fails if it is stale.
//!
//! The result codes and the numbered enums of the header come from the core's own tables
//! (`src/tables/*.in`), which this script includes with macros of its own: the same source
//! defines the Rust enums and the C constants, so they cannot disagree.

use std::env;
use std::fmt::Write;
use std::path::PathBuf;

/// Collects the C constants of the result codes.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $value:literal, $text:literal => $kind:ident, )*) => {
        fn error_defines(out: &mut String) {
            $(
                let doc: &[&str] = &[$($doc),*];
                let _ = writeln!(out, "/**{} */", doc.join(" "));
                let _ = writeln!(out, "#define KSASL_{} {}", $text, $value);
            )*
        }
    };
}

/// Collects the C constants of the numbered enums.
macro_rules! wire_enums {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident $prefix:literal $ctype:ident {
            $( $(#[doc = $vdoc:literal])* $variant:ident = $value:literal, $text:literal, )*
        }
    )*) => {
        fn wire_defines(out: &mut String) {
            $(
                let doc: &[&str] = &[$($doc),*];
                let _ = writeln!(out, "\n/* {} (type {}) */", doc.join(" ").trim(), stringify!($ctype));
                $(
                    let vdoc: &[&str] = &[$($vdoc),*];
                    let name = $text.to_uppercase().replace('-', "_");
                    let _ = writeln!(out, "/**{} */", vdoc.join(" "));
                    let _ = writeln!(out, "#define KSASL_{}_{} {}", $prefix, name, $value);
                )*
            )*
        }
    };
}

/// Writes the handles' free and last-error functions as stubs for cbindgen, which does not
/// expand the macros src/ffi/accessors.rs generates them with.
macro_rules! handles {
    ($($t:ident $what:literal $($err:ident)?;)*) => {
        fn handle_stubs(out: &mut String) {
            $(
                let t = stringify!($t);
                let _ = writeln!(out, "/// Frees {} (NULL is a no-op).\n#[no_mangle]\npub extern \"C\" fn {t}_free(p: *mut {t}) {{}}", $what);
                $(
                    let e = stringify!($err);
                    let _ = writeln!(out, "/// The detail of the handle's last failure (\"\" for NULL).\n#[no_mangle]\npub extern \"C\" fn {t}_{e}(p: *const {t}) -> *const c_char {{}}");
                )?
            )*
        }
    };
}

/// Writes the one-expression accessors as stubs for cbindgen, as [`handles`] does.
macro_rules! exports {
    ($( $(#[doc = $doc:literal])* fn $name:ident($($p:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block )*) => {
        fn export_stubs(out: &mut String) {
            $(
                $(let _ = writeln!(out, "///{}", $doc);)*
                let params: &[&str] = &[$(concat!(stringify!($p), ": ", stringify!($ty))),*];
                let ret = concat!($(" -> ", stringify!($ret))?);
                let _ = writeln!(out, "#[no_mangle]\npub extern \"C\" fn {}({}){ret} {{}}", stringify!($name), params.join(", "));
            )*
        }
    };
}

include!("src/ffi/accessors.in");
include!("src/tables/error_codes.in");
include!("src/tables/wire_enums.in");

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let patch = env::var("CARGO_PKG_VERSION_PATCH").unwrap_or_default();
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=src/tables");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libksasl.so.{major}");
    // The Python and Java bindings build the crate without the C ABI: no header then.
    if env::var_os("CARGO_FEATURE_CAPI").is_none() {
        return;
    }
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut defs = format!(
        "\n#define KSASL_VERSION_MAJOR {major}\n#define KSASL_VERSION_MINOR {minor}\n#define KSASL_VERSION_PATCH {patch}\n#define KSASL_VERSION_STRING \"{major}.{minor}.{patch}\"\n\n/* Result codes (src/tables/error_codes.in): 1xx misuse, 2xx protocol, 3xx authentication, 4xx credential, 5xx internal. */\n#define KSASL_OK 0\n"
    );
    error_defines(&mut defs);
    defs.push_str("\n/* The numbered enums (src/tables/wire_enums.in). */");
    wire_defines(&mut defs);
    config.after_includes = Some(defs);
    let mut stubs = String::new();
    handle_stubs(&mut stubs);
    export_stubs(&mut stubs);
    let stubs_file =
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("accessors.rs");
    std::fs::write(&stubs_file, stubs).expect("write the accessor stubs");
    // Only the C ABI (src/ffi/mod.rs and the modules it declares): the rest of the crate's
    // public items are Rust API.
    let builder = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/ffi/mod.rs"))
        .with_src(stubs_file);
    match builder.generate() {
        Ok(bindings) => {
            bindings.write_to_file(dir.join("include/ksasl.h"));
        }
        Err(e) => panic!("cbindgen failed to generate include/ksasl.h: {e}"),
    }
}
