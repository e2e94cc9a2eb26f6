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

thread_local! {
    /// The last answer of `ksasl_credential_store_handle_scram_request` on this thread: the
    /// store is shared between threads, so its answers cannot live in the handle.
    static SCRAM_ANSWER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Serves one KIP-554 request, DescribeUserScramCredentials (api key 50) or
/// AlterUserScramCredentials (51), `frame` without its length prefix, from a connection the
/// host has authenticated and authorized (Kafka requires DESCRIBE or ALTER on the cluster).
/// `*out`/`*out_len` are the response frame with its length prefix, borrowed until the next
/// call of this function on the same thread; refusals are Kafka error codes inside it, with
/// Kafka's texts. A changed credential is what the next login or re-authentication of that
/// user is checked against. A request that cannot be parsed is an error (`KSASL_INVALID_REQUEST`,
/// or `KSASL_UNSUPPORTED_VERSION`; close the connection, as Kafka does) and changes nothing.
#[no_mangle]
pub extern "C" fn ksasl_credential_store_handle_scram_request(
    store: *mut ksasl_credential_store,
    frame: *const u8,
    frame_len: usize,
    out: *mut *const u8,
    out_len: *mut usize,
) -> ksasl_result {
    with(store, |s| {
        need!(out, out_len);
        let response = s
            .inner
            .handle_scram_request(bytes(frame, frame_len, "frame")?)?;
        SCRAM_ANSWER.with(|a| {
            let mut a = a.borrow_mut();
            *a = response;
            put_bytes(Some(&a), out, out_len);
        });
        Ok(())
    })
}
