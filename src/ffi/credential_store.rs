//! `ksasl_credential_store`: users and delegation tokens in memory.

use std::ffi::c_char;
use std::sync::Arc;

use super::boundary::*;
use crate::credential::scram::{ScramCredential, ScramMechanism};
use crate::credential::{CredentialStore, ServerCredential};
use crate::error::Result;

/// An in-memory credential store (users and delegation tokens). Thread-safe.
pub struct ksasl_credential_store {
    pub(crate) inner: Arc<CredentialStore>,
    err: LastError,
}
handle!(ksasl_credential_store(Arc<CredentialStore>));

pub(crate) fn scram(
    mechanism: *const c_char,
    credential: *const c_char,
) -> Result<ScramCredential> {
    let m = ScramMechanism::try_from_name(text(mechanism, "mechanism")?)?;
    ScramCredential::from_kafka_string(m, text(credential, "credential")?)
}

/// Adds a delegation token's SCRAM credential (Kafka's text form) for `mechanism`, owned by
/// `owner`, expiring at `expiry_ms` (< 0: never).
#[no_mangle]
pub extern "C" fn ksasl_credential_store_set_token(
    store: *mut ksasl_credential_store,
    token_id: *const c_char,
    mechanism: *const c_char,
    credential: *const c_char,
    owner: *const c_char,
    expiry_ms: i64,
) -> ksasl_result {
    with(store, |s| {
        let (c, owner) = (scram(mechanism, credential)?, text(owner, "owner")?);
        let m = c.mechanism();
        let c = ServerCredential::scram(c)
            .with_token_owner(owner)
            .with_expiry(opt_ms(expiry_ms));
        s.inner.set_token(text(token_id, "token_id")?, m, c)
    })
}
