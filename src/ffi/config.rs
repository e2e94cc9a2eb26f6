//! `ksasl_config_check`: a configuration read as the library reads it (`ksasl::config`),
//! reported as text.

use std::ffi::{c_char, CString};

use super::boundary::*;

/// What `ksasl_config_check` found, as text (`ksasl_config_report_text`).
pub struct ksasl_config_report {
    pub(crate) inner: CString,
}

/// Reads `.properties` text (`text`, `len` bytes: UTF-8, or ISO-8859-1 for bytes that are
/// not) as a client configuration by Kafka's or librdkafka's names, or, when it looks like a
/// broker's `server.properties`, each SASL listener of `listeners`; with `listener` (not
/// NULL), that listener of a broker configuration. On success `*out` is a report whose text
/// holds, per client or listener, a `[client]` or `[listener NAME]` line, `name=value` lines
/// for the effective settings (secrets as `[hidden]`), `unknown NAME` lines for `sasl.*` and
/// `ksasl.*` names the library does not know, and `warning TEXT` lines for settings without
/// effect. An invalid configuration is `KSASL_INVALID_CONFIG`, its detail (naming the key,
/// the expected form and Kafka's default, never a secret) in `ksasl_last_constructor_error`.
#[no_mangle]
pub extern "C" fn ksasl_config_check(
    text: *const u8,
    len: usize,
    listener: *const c_char,
    out: *mut *mut ksasl_config_report,
) -> ksasl_result {
    construct(out, || {
        let bytes = bytes(text, len, "text")?;
        let listener = opt_text(listener, "listener")?;
        let report = crate::config::check_text(bytes, listener)?;
        Ok(ksasl_config_report {
            inner: cstring(&report),
        })
    })
}

/// The report's text, owned by the report (valid until `ksasl_config_report_free`).
#[no_mangle]
pub extern "C" fn ksasl_config_report_text(r: *const ksasl_config_report) -> *const c_char {
    get(r, c"".as_ptr(), |r| r.inner.as_ptr())
}
