//! `ksasl_server_config_builder` and `ksasl_server_config`: the validated, immutable
//! configuration of one listener's server connections.

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use super::boundary::*;
use crate::error::Result;
use crate::kafka::config::{ServerConfig, ServerConfigBuilder};
use crate::kafka::delegation_tokens::{SUPPORTED, SUPPORTED_KAFKA_4};

/// The values of a listener's configuration; unset values keep Kafka's defaults.
pub struct ksasl_server_config_builder {
    pub(crate) inner: ServerConfigBuilder,
    err: LastError,
}
handle!(ksasl_server_config_builder(ServerConfigBuilder));

/// A built listener configuration: immutable, shared by its connections and threads.
pub struct ksasl_server_config {
    pub(crate) inner: Arc<ServerConfig>,
}

pub(crate) fn set_server(
    b: *mut ksasl_server_config_builder,
    f: impl FnOnce(&mut ServerConfigBuilder) -> Result<&mut ServerConfigBuilder>,
) -> ksasl_result {
    with(b, |b| f(&mut b.inner).map(drop))
}

/// `connections.max.reauth.ms` for every mechanism (`mechanism` NULL) or for one (default 0:
/// sessions are bounded by credentials only).
#[no_mangle]
pub extern "C" fn ksasl_server_config_builder_set_max_reauth_ms(
    b: *mut ksasl_server_config_builder,
    mechanism: *const c_char,
    ms: i64,
) -> ksasl_result {
    set_server(b, |b| match opt_text(mechanism, "mechanism")? {
        Some(m) => Ok(b.set_max_reauth_ms_for(m, ms)),
        None => Ok(b.set_max_reauth_ms(ms)),
    })
}

/// Adds the delegation-token APIs (38-41) served by `ksasl_token_authority_handle_request`:
/// every version the codec speaks (`kafka4` 0), or what Apache Kafka 4 advertises (1).
#[no_mangle]
pub extern "C" fn ksasl_server_config_builder_add_token_api_versions(
    b: *mut ksasl_server_config_builder,
    kafka4: c_int,
) -> ksasl_result {
    set_server(b, |b| {
        for r in if kafka4 != 0 {
            SUPPORTED_KAFKA_4
        } else {
            SUPPORTED
        } {
            let v = |x: i16| i64::from(x);
            b.set_api_version(v(r.api_key), v(r.min_version), v(r.max_version));
        }
        Ok(b)
    })
}

/// Adds the SCRAM credential APIs of KIP-554 (DescribeUserScramCredentials 50 and
/// AlterUserScramCredentials 51, version 0 as Kafka 4 advertises them) served by
/// `ksasl_credential_store_handle_scram_request`.
#[no_mangle]
pub extern "C" fn ksasl_server_config_builder_add_scram_credential_api_versions(
    b: *mut ksasl_server_config_builder,
) -> ksasl_result {
    set_server(b, |b| {
        for r in crate::kafka::scram_credentials::SUPPORTED {
            let v = |x: i16| i64::from(x);
            b.set_api_version(v(r.api_key), v(r.min_version), v(r.max_version));
        }
        Ok(b)
    })
}
