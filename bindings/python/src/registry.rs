//! `MechanismRegistry`: the core's registry, with Python callables, stores, validators and
//! refreshers as the mechanisms' credential sources.

use ksasl::credential::{CredentialLookup, CredentialRequest, HostLookup};
use ksasl::mech::{HostClientCalls, HostServerCalls};
use ksasl::{MechanismRegistry as Registry, PasswordCredential};

use crate::dicts::decode;
use crate::glue::*;
use crate::hostmech::PyMechanism;
use crate::oauth::server_validator;
use crate::refresh::Refresher;
use crate::store::CredentialStore;
use crate::tokens::TokenAuthority;

/// Client and server mechanisms by name, with their credentials.
#[pyclass(module = "ksasl._ksasl", frozen)]
pub(crate) struct MechanismRegistry(Mutex<Registry>);

impl MechanismRegistry {
    /// The registry as it is now (configurations and exchanges keep their own copy).
    pub(crate) fn snapshot(&self, py: Python<'_>) -> Registry {
        lock(py, &self.0).clone()
    }
}

/// A lookup calling `callback(mechanism, username, token_authenticated)`; the core decodes its
/// answer, and an exception it raises reaches the caller of the step unchanged.
fn lookup(callback: PyObject) -> Arc<dyn CredentialLookup> {
    Arc::new(HostLookup(move |req: &CredentialRequest| {
        Python::with_gil(|py| {
            let args = (&req.mechanism, &req.username, req.token_authenticated);
            match callback
                .call1(py, args)
                .and_then(|v| decode(req, v.bind(py)))
            {
                Ok(answer) => answer,
                Err(e) => Err(keep(py, e, ErrorCode::CredentialLookupFailed)),
            }
        })
    }))
}

#[pymethods]
impl MechanismRegistry {
    #[new]
    fn new() -> Self {
        MechanismRegistry(Mutex::default())
    }

    /// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. Users come from `credentials`: a
    /// `CredentialStore`, a callable `(mechanism, username, token_authenticated) -> answer`, or
    /// None (the host answers each request: the pull form); delegation-token logins from
    /// `tokens`, a `TokenAuthority`, if given.
    #[pyo3(signature = (credentials = None, tokens = None))]
    fn add_password_servers(
        &self,
        py: Python<'_>,
        credentials: Option<Any>,
        tokens: Option<PyRef<TokenAuthority>>,
    ) -> PyResult<()> {
        let users: Option<Arc<dyn CredentialLookup>> = match credentials {
            None => None,
            Some(c) => match c.downcast::<CredentialStore>() {
                Ok(store) => Some(store.get().0.clone()),
                Err(_) if c.is_callable() => Some(lookup(c.unbind())),
                Err(e) => return Err(e.into()),
            },
        };
        let mut r = lock(py, &self.0);
        r.merge(Registry::password_servers(None));
        if users.is_some() {
            r.set_credential_lookup(users);
        }
        if let Some(t) = tokens {
            r.set_token_lookup(Some(t.0.clone()));
        }
        Ok(())
    }

    /// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password.
    fn add_password_clients(&self, py: Python<'_>, username: &str, password: &str) -> PyResult<()> {
        let c = PasswordCredential::new(username, password).or_raise()?;
        lock(py, &self.0).merge(Registry::password_clients(Arc::new(c)));
        Ok(())
    }

    /// Adds SCRAM clients that log in with a delegation token (`tokenauth=true`).
    fn add_token_clients(&self, py: Python<'_>, token_id: &str, token_hmac: &str) -> PyResult<()> {
        let c = PasswordCredential::delegation_token(token_id, token_hmac).or_raise()?;
        lock(py, &self.0).merge(Registry::password_clients(Arc::new(c)));
        Ok(())
    }

    /// Adds PLAIN and SCRAM clients that log in with the refresher's current password
    /// credential (a delegation token installed with `Refresher.set_delegation_token`).
    fn add_refreshing_password_clients(&self, py: Python<'_>, refresher: &Refresher) {
        lock(py, &self.0).register_refreshing_password_clients(refresher.0.clone());
    }

    /// Adds an OAUTHBEARER server. `validator`: None (Kafka's unsecured validator, with
    /// `required_scope` and `clock_skew_ms`), a `JwksValidator`, or a callable `(token,
    /// now_ms) -> (principal, expiry_ms) | None`. Verdicts are cached.
    #[pyo3(signature = (validator = None, required_scope = None, clock_skew_ms = None))]
    fn add_oauthbearer_server(
        &self,
        py: Python<'_>,
        validator: Option<Any>,
        required_scope: Option<Vec<String>>,
        clock_skew_ms: Option<i64>,
    ) -> PyResult<()> {
        let v = server_validator(validator, required_scope, clock_skew_ms)?;
        lock(py, &self.0).register_cached_oauthbearer_server(v);
        Ok(())
    }

    /// Adds an OAUTHBEARER client presenting the refresher's current token.
    fn add_oauthbearer_client(&self, py: Python<'_>, refresher: &Refresher) {
        lock(py, &self.0).register_oauthbearer_client(refresher.0.clone());
    }

    /// Registers a client mechanism written in Python: `factory()` makes one object per
    /// exchange, whose `start(now_ms)` and `step(challenge, now_ms)` return `(message or None,
    /// done)` (or are `async def`).
    fn add_client_mechanism(&self, py: Python<'_>, name: &str, factory: PyObject) -> PyResult<()> {
        let n = name.to_string();
        let make = move || -> ksasl::Result<Box<dyn HostClientCalls>> {
            Ok(Box::new(PyMechanism::make(&n, &factory)?))
        };
        lock(py, &self.0)
            .register_host_client(name, make)
            .or_raise()
    }

    /// Registers a server mechanism written in Python: `factory()` makes one object per
    /// exchange, whose `step(response, now_ms)` returns `("challenge", bytes)` or `("done",
    /// message or None, authorization id, credential expiry ms or None)` (or is `async def`).
    fn add_server_mechanism(&self, py: Python<'_>, name: &str, factory: PyObject) -> PyResult<()> {
        let n = name.to_string();
        let make = move || -> ksasl::Result<Box<dyn HostServerCalls>> {
            Ok(Box::new(PyMechanism::make(&n, &factory)?))
        };
        lock(py, &self.0)
            .register_host_server(name, make)
            .or_raise()
    }

    /// The client mechanism names.
    fn client_mechanisms(&self, py: Python<'_>) -> Vec<String> {
        lock(py, &self.0).client_mechanisms()
    }

    /// The server mechanism names.
    fn server_mechanisms(&self, py: Python<'_>) -> Vec<String> {
        lock(py, &self.0).server_mechanisms()
    }
}
