//! `CredentialStore`: the core's in-memory store of users and delegation tokens.

use ksasl::credential::scram::MIN_ITERATIONS;
use ksasl::{credential, OsRandom, ScramCredential, ScramMechanism, ServerCredential};

use crate::glue::*;

/// Users and delegation tokens in memory.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct CredentialStore(pub(crate) Arc<credential::CredentialStore>);

fn scram(mechanism: &str, credential: &str) -> PyResult<ScramCredential> {
    let m = ScramMechanism::try_from_name(mechanism).or_raise()?;
    ScramCredential::from_kafka_string(m, credential).or_raise()
}

class! { CredentialStore |py, c| shared {
    new() -> Self { CredentialStore(Arc::default()) }
    /// PBKDF2 runs without the GIL; iterations default to the core's minimum (4096).
    fn add_user(username: &str, password: &str, iterations: Option<u32> = None) -> PyResult<()> {
        let n = iterations.unwrap_or(MIN_ITERATIONS);
        py.allow_threads(|| c.add_user(username, password, n, &OsRandom)).or_raise()
    }
    fn set_scram(username: &str, mechanism: &str, credential: &str) -> PyResult<()> {
        c.set_scram(username, scram(mechanism, credential)?).or_raise()
    }
    fn set_user_expiry(username: &str, expiry_ms: Option<i64>) -> PyResult<()> {
        c.set_user_expiry(username, expiry_ms).or_raise()
    }
    fn remove_user(username: &str) -> PyResult<bool> { c.remove_user(username).or_raise() }
    fn set_token(token_id: &str, mechanism: &str, credential: &str, owner: &str,
        expiry_ms: Option<i64> = None) -> PyResult<()> {
        let scram = scram(mechanism, credential)?;
        let m = scram.mechanism();
        let owned = ServerCredential::scram(scram).with_token_owner(owner).with_expiry(expiry_ms);
        c.set_token(token_id, m, owned).or_raise()
    }
    fn handle_scram_request(frame: &[u8]) -> PyResult<Bytes> {
        Ok(c.handle_scram_request(frame).or_raise()?.into())
    }
}}

/// `(api_key, min_version, max_version)` of the KIP-554 APIs `handle_scram_request` serves.
pub(crate) fn scram_credential_api_versions() -> Vec<(i16, i16, i16)> {
    ksasl::kafka::scram_credentials::SUPPORTED
        .iter()
        .map(|r| (r.api_key, r.min_version, r.max_version))
        .collect()
}
