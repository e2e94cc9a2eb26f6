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

#[pymethods]
impl CredentialStore {
    #[new]
    fn new() -> Self {
        CredentialStore(Arc::default())
    }

    /// PBKDF2 runs without the GIL; iterations default to the core's minimum (4096).
    #[pyo3(signature = (username, password, iterations = None))]
    fn add_user(
        &self,
        py: Python<'_>,
        username: &str,
        password: &str,
        iterations: Option<u32>,
    ) -> PyResult<()> {
        let n = iterations.unwrap_or(MIN_ITERATIONS);
        py.allow_threads(|| self.0.add_user(username, password, n, &OsRandom))
            .or_raise()
    }

    fn set_scram(&self, username: &str, mechanism: &str, credential: &str) -> PyResult<()> {
        self.0
            .set_scram(username, scram(mechanism, credential)?)
            .or_raise()
    }

    #[pyo3(signature = (username, expiry_ms))]
    fn set_user_expiry(&self, username: &str, expiry_ms: Option<i64>) -> PyResult<()> {
        self.0.set_user_expiry(username, expiry_ms).or_raise()
    }

    fn remove_user(&self, username: &str) -> PyResult<bool> {
        self.0.remove_user(username).or_raise()
    }

    #[pyo3(signature = (token_id, mechanism, credential, owner, expiry_ms = None))]
    fn set_token(
        &self,
        token_id: &str,
        mechanism: &str,
        credential: &str,
        owner: &str,
        expiry_ms: Option<i64>,
    ) -> PyResult<()> {
        let c = scram(mechanism, credential)?;
        let m = c.mechanism();
        let c = ServerCredential::scram(c)
            .with_token_owner(owner)
            .with_expiry(expiry_ms);
        self.0.set_token(token_id, m, c).or_raise()
    }
}
