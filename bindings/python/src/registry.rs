//! `MechanismRegistry`: the core's registry, with Python callables, stores, validators and
//! refreshers as credential sources.

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
pub(crate) struct MechanismRegistry(Mutex<Arc<Registry>>);

impl MechanismRegistry {
    /// The registry as it is now, for a configuration or exchange.
    pub(crate) fn snapshot(&self, py: Python<'_>) -> Arc<Registry> {
        lock(py, &self.0).clone()
    }

    /// Changes the registry (a copy if a configuration or exchange still uses this one).
    fn edit<R>(&self, py: Python<'_>, f: impl FnOnce(&mut Registry) -> R) -> R {
        f(Arc::make_mut(&mut lock(py, &self.0)))
    }
}

/// A lookup calling `callback(mechanism, username, token_authenticated)`; its exception
/// reaches the caller of the step unchanged.
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

    /// Users from a `CredentialStore`, a lookup callable or None (the pull form); token
    /// logins from a `TokenAuthority`.
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
        self.edit(py, |r| {
            r.merge(Registry::password_servers(None));
            if users.is_some() {
                r.set_credential_lookup(users);
            }
            if let Some(t) = tokens {
                r.set_token_lookup(Some(t.0.clone()));
            }
        });
        Ok(())
    }

    fn add_password_clients(&self, py: Python<'_>, username: &str, password: &str) -> PyResult<()> {
        let c = PasswordCredential::new(username, password).or_raise()?;
        self.edit(py, |r| r.merge(Registry::password_clients(Arc::new(c))));
        Ok(())
    }

    fn add_token_clients(&self, py: Python<'_>, token_id: &str, token_hmac: &str) -> PyResult<()> {
        let c = PasswordCredential::delegation_token(token_id, token_hmac).or_raise()?;
        self.edit(py, |r| r.merge(Registry::password_clients(Arc::new(c))));
        Ok(())
    }

    fn add_refreshing_password_clients(&self, py: Python<'_>, refresher: &Refresher) {
        self.edit(py, |r| {
            r.register_refreshing_password_clients(refresher.0.clone())
        });
    }

    /// Verdicts are cached (the core's cache).
    #[pyo3(signature = (validator = None, required_scope = None, clock_skew_ms = None))]
    fn add_oauthbearer_server(
        &self,
        py: Python<'_>,
        validator: Option<Any>,
        required_scope: Option<Vec<String>>,
        clock_skew_ms: Option<i64>,
    ) -> PyResult<()> {
        let v = server_validator(validator, required_scope, clock_skew_ms)?;
        self.edit(py, |r| r.register_cached_oauthbearer_server(v));
        Ok(())
    }

    fn add_oauthbearer_client(&self, py: Python<'_>, refresher: &Refresher) {
        self.edit(py, |r| r.register_oauthbearer_client(refresher.0.clone()));
    }

    /// `factory()` makes one object per exchange, with `start(now_ms)`, `step(bytes, now_ms)`.
    fn add_client_mechanism(&self, py: Python<'_>, name: &str, factory: PyObject) -> PyResult<()> {
        let n = name.to_string();
        let make = move || PyMechanism::make(&n, &factory).map(|m| m as Box<dyn HostClientCalls>);
        self.edit(py, |r| r.register_host_client(name, make))
            .or_raise()
    }

    /// `factory()` makes one object per exchange, with `step(bytes, now_ms)`.
    fn add_server_mechanism(&self, py: Python<'_>, name: &str, factory: PyObject) -> PyResult<()> {
        let n = name.to_string();
        let make = move || PyMechanism::make(&n, &factory).map(|m| m as Box<dyn HostServerCalls>);
        self.edit(py, |r| r.register_host_server(name, make))
            .or_raise()
    }

    fn client_mechanisms(&self, py: Python<'_>) -> Vec<String> {
        lock(py, &self.0).client_mechanisms()
    }

    fn server_mechanisms(&self, py: Python<'_>) -> Vec<String> {
        lock(py, &self.0).server_mechanisms()
    }
}
