//! `ksasl_client_config_builder` and `ksasl_client_config`: the validated, immutable
//! configuration of client connections.

use std::sync::Arc;

use super::boundary::*;
use crate::error::Result;
use crate::kafka::config::{ClientConfig, ClientConfigBuilder};

/// When a client re-authenticates (`KSASL_REAUTH_*`).
pub type ksasl_reauth_timing = u32;

/// The values of a client configuration; unset values keep Kafka's defaults.
pub struct ksasl_client_config_builder {
    pub(crate) inner: ClientConfigBuilder,
    err: LastError,
}
handle!(ksasl_client_config_builder(ClientConfigBuilder));

/// A built client configuration: immutable, shared by its connections and threads.
pub struct ksasl_client_config {
    pub(crate) inner: Arc<ClientConfig>,
}

pub(crate) fn set_client(
    b: *mut ksasl_client_config_builder,
    f: impl FnOnce(&mut ClientConfigBuilder) -> Result<&mut ClientConfigBuilder>,
) -> ksasl_result {
    with(b, |b| f(&mut b.inner).map(drop))
}
