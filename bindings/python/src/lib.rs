//! The Python binding: a thin translation of the Rust facade into Python objects. Rules live
//! in the Rust core; this file only converts types, errors and callbacks.

use std::sync::{Arc, Mutex};

use ksasl::credential::{CredentialAnswer, CredentialLookup, Lookup};
use ksasl::mech::{
    ClientAuthenticator, ClientStep, CredentialRequest, ServerAuthenticator, ServerStep,
};
use ksasl::{
    Error, MechanismRegistry, MemoryCredentialStore, OsRandom, ScramCredential, ScramMechanism,
    ServerCredential,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

mod conn;
mod hostmech;
mod tokens;

/// Milliseconds since the epoch from the wall clock: the binding's default `now`.
pub(crate) fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub(crate) fn now_or_wall(now_ms: Option<i64>) -> i64 {
    now_ms.unwrap_or_else(wall_ms)
}

/// Converts a library error into the matching `ksasl.errors` exception.
pub(crate) fn py_err(py: Python<'_>, e: Error) -> PyErr {
    let class = match e.kind() {
        ksasl::ErrorKind::Misuse => "MisuseError",
        ksasl::ErrorKind::Protocol => "ProtocolError",
        ksasl::ErrorKind::Authentication => "AuthenticationError",
        ksasl::ErrorKind::Credential => "CredentialError",
        ksasl::ErrorKind::Internal => "InternalError",
    };
    let build = || -> PyResult<PyErr> {
        let module = py.import("ksasl.errors")?;
        let details = PyDict::new(py);
        for (k, v) in e.details() {
            details.set_item(k, v)?;
        }
        let exc = module.getattr(class)?.call1((
            e.message(),
            e.code().as_u32(),
            e.code().name(),
            e.kind().name(),
            details,
        ))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|err| err)
}

pub(crate) fn wrap<T>(py: Python<'_>, r: ksasl::Result<T>) -> PyResult<T> {
    r.map_err(|e| py_err(py, e))
}

fn scram_mechanism(py: Python<'_>, name: &str) -> PyResult<ScramMechanism> {
    ScramMechanism::from_name(name).ok_or_else(|| {
        py_err(
            py,
            Error::new(
                ksasl::ErrorCode::InvalidArgument,
                format!("{name} is not a SCRAM mechanism"),
            ),
        )
    })
}

/// An in-memory credential store (users and delegation tokens); thread-safe.
#[pyclass(module = "ksasl._ksasl", frozen)]
struct Store {
    inner: Arc<MemoryCredentialStore>,
}

#[pymethods]
impl Store {
    #[new]
    fn new() -> Self {
        Store {
            inner: Arc::new(MemoryCredentialStore::new()),
        }
    }

    /// Adds or replaces a user for PLAIN and both SCRAM mechanisms (PBKDF2 runs without the GIL).
    #[pyo3(signature = (username, password, iterations = 4096))]
    fn add_user(
        &self,
        py: Python<'_>,
        username: &str,
        password: &str,
        iterations: u32,
    ) -> PyResult<()> {
        let r = py.allow_threads(|| {
            self.inner
                .add_user(username, password, iterations, &OsRandom)
        });
        wrap(py, r)
    }

    /// Sets a user's SCRAM credential from Kafka's `salt=...,stored_key=...,server_key=...,iterations=...`.
    fn set_scram(
        &self,
        py: Python<'_>,
        username: &str,
        mechanism: &str,
        credential: &str,
    ) -> PyResult<()> {
        let m = scram_mechanism(py, mechanism)?;
        let c = wrap(py, ScramCredential::from_kafka_string(m, credential))?;
        wrap(py, self.inner.set_scram(username, c))
    }

    /// Sets (or with None clears) an absolute expiry (ms) on a user's credentials.
    #[pyo3(signature = (username, expiry_ms))]
    fn set_user_expiry(
        &self,
        py: Python<'_>,
        username: &str,
        expiry_ms: Option<i64>,
    ) -> PyResult<()> {
        wrap(py, self.inner.set_user_expiry(username, expiry_ms))
    }

    /// Removes a user; returns whether it existed.
    fn remove_user(&self, py: Python<'_>, username: &str) -> PyResult<bool> {
        wrap(py, self.inner.remove_user(username))
    }

    /// Adds a delegation token's SCRAM credential, owned by `owner`.
    #[pyo3(signature = (token_id, mechanism, credential, owner, expiry_ms = None))]
    fn set_token(
        &self,
        py: Python<'_>,
        token_id: &str,
        mechanism: &str,
        credential: &str,
        owner: &str,
        expiry_ms: Option<i64>,
    ) -> PyResult<()> {
        let m = scram_mechanism(py, mechanism)?;
        let c = wrap(py, ScramCredential::from_kafka_string(m, credential))?;
        let mut sc = ServerCredential::scram(c).with_token_owner(owner);
        if let Some(e) = expiry_ms {
            sc = sc.with_expiry_ms(e);
        }
        wrap(py, self.inner.set_token(token_id, m, sc))
    }
}

/// The exception raised by a credential callback, kept until the step that called it returns.
pub(crate) type Pending = Arc<Mutex<Option<PyErr>>>;

/// A credential lookup that calls a Python callable `(mechanism, username, token_auth)`.
/// It returns None (unknown user), a password string, or a tuple
/// `(kind, value[, expiry_ms[, token_owner]])` with kind "password", "scram",
/// "unavailable" or "later".
struct PyLookup {
    callback: PyObject,
    pending: Pending,
}

pub(crate) fn parse_answer(
    py: Python<'_>,
    request: &CredentialRequest,
    v: &Bound<'_, PyAny>,
) -> PyResult<Option<CredentialAnswer>> {
    if v.is_none() {
        return Ok(Some(CredentialAnswer::Unknown));
    }
    if let Ok(password) = v.extract::<String>() {
        return Ok(Some(CredentialAnswer::Found(ServerCredential::password(
            password,
        ))));
    }
    let t = v.downcast::<PyTuple>().map_err(|_| PyValueError::new_err("a credential callback returns None, a password, or (kind, value[, expiry_ms[, token_owner]])"))?;
    let kind: String = t.get_item(0)?.extract()?;
    let value: Option<String> = if t.len() > 1 {
        t.get_item(1)?.extract()?
    } else {
        None
    };
    let expiry: Option<i64> = if t.len() > 2 {
        t.get_item(2)?.extract()?
    } else {
        None
    };
    let owner: Option<String> = if t.len() > 3 {
        t.get_item(3)?.extract()?
    } else {
        None
    };
    let finish = |c: ServerCredential| {
        let c = match expiry {
            Some(e) => c.with_expiry_ms(e),
            None => c,
        };
        CredentialAnswer::Found(match &owner {
            Some(o) => c.with_token_owner(o.clone()),
            None => c,
        })
    };
    let value_or = |what: &str| {
        value
            .clone()
            .ok_or_else(|| PyValueError::new_err(format!("a {what} answer needs a value")))
    };
    Ok(Some(match kind.as_str() {
        "password" => finish(ServerCredential::password(value_or("password")?)),
        "scram" => finish(ServerCredential::scram(wrap(
            py,
            request.scram_credential(&value_or("scram")?),
        )?)),
        "unknown" => CredentialAnswer::Unknown,
        "unavailable" => {
            CredentialAnswer::Unavailable(value.unwrap_or_else(|| "unavailable".into()))
        }
        "later" => return Ok(None),
        k => {
            return Err(PyValueError::new_err(format!(
                "unknown credential kind {k:?}"
            )))
        }
    }))
}

impl CredentialLookup for PyLookup {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        Python::with_gil(|py| {
            let r = self
                .callback
                .call1(
                    py,
                    (
                        request.mechanism.as_str(),
                        request.username.as_str(),
                        request.token_auth,
                    ),
                )
                .and_then(|v| parse_answer(py, request, v.bind(py)));
            match r {
                Ok(Some(a)) => Lookup::Now(a),
                Ok(None) => Lookup::Later,
                Err(e) => {
                    if let Ok(mut p) = self.pending.lock() {
                        *p = Some(e);
                    }
                    Lookup::Now(CredentialAnswer::Unavailable(
                        "the credential callback raised an exception".into(),
                    ))
                }
            }
        })
    }
}

/// Client and server mechanisms by name, with their credentials.
#[pyclass(module = "ksasl._ksasl")]
pub(crate) struct Registry {
    pub(crate) inner: MechanismRegistry,
    pub(crate) pending: Pending,
}

#[pymethods]
impl Registry {
    #[new]
    fn new() -> Self {
        Registry {
            inner: MechanismRegistry::new(),
            pending: Arc::new(Mutex::new(None)),
        }
    }

    /// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. Credentials come from `store`,
    /// from a callable `(mechanism, username, token_auth) -> answer`, or (None) from the host
    /// through `Server.provide_credential` (the pull form). With `tokens` (a
    /// `TokenAuthority`), `tokenauth` logins are answered by the authority.
    #[pyo3(signature = (credentials = None, tokens = None))]
    fn add_password_servers(
        &mut self,
        py: Python<'_>,
        credentials: Option<PyObject>,
        tokens: Option<PyRef<'_, tokens::TokenAuthority>>,
    ) -> PyResult<()> {
        self.inner.merge(MechanismRegistry::password_servers(None));
        let users: Option<Arc<dyn CredentialLookup>> = match credentials {
            None => None,
            Some(c) => {
                let bound = c.bind(py);
                if let Ok(store) = bound.downcast::<Store>() {
                    Some(store.get().inner.clone())
                } else if bound.is_callable() {
                    Some(Arc::new(PyLookup {
                        callback: c,
                        pending: self.pending.clone(),
                    }))
                } else {
                    return Err(PyValueError::new_err(
                        "credentials must be a Store, a callable or None",
                    ));
                }
            }
        };
        let lookup: Option<Arc<dyn CredentialLookup>> = match (users, tokens) {
            (users, Some(t)) => Some(Arc::new(ksasl::token::UsersAndTokens {
                users: users.unwrap_or_else(|| Arc::new(ksasl::credential::AskHost)),
                tokens: t.inner.clone(),
            })),
            (Some(u), None) => Some(u),
            (None, None) => None,
        };
        if lookup.is_some() {
            self.inner.set_credential_lookup(lookup);
        }
        Ok(())
    }

    /// Adds PLAIN and SCRAM clients that log in with the refresher's current password
    /// credential: a delegation token installed with `Refresher.set_delegation_token`.
    fn add_refreshing_password_clients(&mut self, refresher: &conn::Refresher) {
        self.inner
            .register_refreshing_password_clients(refresher.inner.clone());
    }

    /// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password.
    fn add_password_clients(
        &mut self,
        py: Python<'_>,
        username: &str,
        password: &str,
    ) -> PyResult<()> {
        let c = wrap(py, ksasl::PasswordCredential::new(username, password))?;
        self.inner
            .merge(MechanismRegistry::password_clients(Arc::new(c)));
        Ok(())
    }

    /// Adds SCRAM clients that log in with a delegation token (`tokenauth=true`).
    fn add_token_clients(
        &mut self,
        py: Python<'_>,
        token_id: &str,
        token_hmac: &str,
    ) -> PyResult<()> {
        let c = wrap(
            py,
            ksasl::PasswordCredential::delegation_token(token_id, token_hmac),
        )?;
        self.inner
            .merge(MechanismRegistry::password_clients(Arc::new(c)));
        Ok(())
    }

    /// Adds an OAUTHBEARER server. `validator`: None for Kafka's unsecured validator (with
    /// `required_scope` and `clock_skew_ms`), a `JwksValidator`, or a callable
    /// `(token, now_ms) -> (principal, expiry_ms) | None`. Verdicts are cached.
    #[pyo3(signature = (validator = None, required_scope = Vec::new(), clock_skew_ms = 0))]
    fn add_oauthbearer_server(
        &mut self,
        py: Python<'_>,
        validator: Option<Bound<'_, PyAny>>,
        required_scope: Vec<String>,
        clock_skew_ms: i64,
    ) -> PyResult<()> {
        conn::add_oauth(self, py, validator.as_ref(), required_scope, clock_skew_ms)
    }

    /// Adds an OAUTHBEARER client presenting the refresher's current token.
    fn add_oauthbearer_client(&mut self, refresher: &conn::Refresher) {
        self.inner
            .register_oauthbearer_client(refresher.inner.clone());
    }

    /// Registers a client mechanism written in Python: `factory()` makes one object per
    /// exchange, with `start(now_ms)` and `step(challenge, now_ms)` returning
    /// `(message or None, done)`.
    fn add_client_mechanism(
        &mut self,
        py: Python<'_>,
        name: &str,
        factory: PyObject,
    ) -> PyResult<()> {
        let n = name.to_string();
        wrap(
            py,
            self.inner.register_client(name, move || {
                Ok(Box::new(hostmech::PyClientMechanism {
                    name: n.clone(),
                    obj: hostmech::instantiate(&n, &factory)?,
                }))
            }),
        )
    }

    /// Registers a server mechanism written in Python: `factory()` makes one object per
    /// exchange, whose `step(response, now_ms)` returns `("challenge", bytes)` or
    /// `("done", final message or None, authorization id, credential expiry ms or None)`.
    /// The principal is `User:<authorization id>`; the expiry bounds the KIP-368 session.
    fn add_server_mechanism(
        &mut self,
        py: Python<'_>,
        name: &str,
        factory: PyObject,
    ) -> PyResult<()> {
        let n = name.to_string();
        wrap(
            py,
            self.inner.register_server(name, move || {
                Ok(Box::new(hostmech::PyServerMechanism {
                    name: n.clone(),
                    obj: hostmech::instantiate(&n, &factory)?,
                }))
            }),
        )
    }

    /// The client mechanism names.
    fn client_mechanisms(&self) -> Vec<String> {
        self.inner.client_mechanisms()
    }

    /// The server mechanism names.
    fn server_mechanisms(&self) -> Vec<String> {
        self.inner.server_mechanisms()
    }
}

/// A client step for Python: `(message or None, done)`, or None when the mechanism answers
/// later.
type PyClientStep = Option<(Option<Py<PyBytes>>, bool)>;

/// One client exchange: `start()` and `step(challenge)` return `(message or None, done)`, or
/// None while an `async` mechanism method runs (await `pending_work()`, then `resume`).
#[pyclass(module = "ksasl._ksasl")]
struct Client {
    // A Mutex makes the object shareable between Python threads; one exchange is still
    // stepped by one thread at a time.
    inner: Mutex<ClientAuthenticator>,
}

impl Client {
    fn out(&self, py: Python<'_>, r: ksasl::Result<ClientStep>) -> PyResult<PyClientStep> {
        Ok(match wrap(py, r)? {
            ClientStep::Send(b) => Some((Some(PyBytes::new(py, &b).unbind()), false)),
            ClientStep::Done(b) => Some((b.map(|b| PyBytes::new(py, &b).unbind()), true)),
            ClientStep::Pending(_) => None,
        })
    }
}

pub(crate) fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[pymethods]
impl Client {
    #[new]
    fn new(py: Python<'_>, registry: &Registry, mechanism: &str) -> PyResult<Self> {
        Ok(Client {
            inner: Mutex::new(wrap(py, registry.inner.client(mechanism))?),
        })
    }

    /// The first message.
    #[pyo3(signature = (now_ms = None))]
    fn start(&mut self, py: Python<'_>, now_ms: Option<i64>) -> PyResult<PyClientStep> {
        let now = now_or_wall(now_ms);
        let r = py.allow_threads(|| locked(&self.inner).start(now));
        self.out(py, r)
    }

    /// After a step returned None: the awaitable the mechanism returned.
    fn pending_work(&self, py: Python<'_>) -> Option<PyObject> {
        locked(&self.inner)
            .pending_work()
            .and_then(|w| hostmech::awaitable(py, w))
    }

    /// Continues with the awaited result (or the exception the awaitable raised); returns
    /// as `step`.
    fn resume(&mut self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<PyClientStep> {
        let work = locked(&self.inner)
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(py, ksasl::mech::nothing_pending()))?;
        let step = hostmech::resume_client(py, &work, result);
        let r = locked(&self.inner).resume(step);
        self.out(py, r)
    }

    /// Evaluates a server challenge (PBKDF2 and signature checks run without the GIL).
    #[pyo3(signature = (challenge, now_ms = None))]
    fn step(
        &mut self,
        py: Python<'_>,
        challenge: &[u8],
        now_ms: Option<i64>,
    ) -> PyResult<PyClientStep> {
        let now = now_or_wall(now_ms);
        let r = py.allow_threads(|| locked(&self.inner).step(challenge, now));
        self.out(py, r)
    }

    /// Reports that the server failed the exchange; raises the resulting error.
    #[pyo3(signature = (server_message = None))]
    fn server_failed(&mut self, py: Python<'_>, server_message: Option<&str>) -> PyResult<()> {
        let e = locked(&self.inner).server_failed(server_message);
        Err(py_err(py, e))
    }

    /// The mechanism name.
    #[getter]
    fn mechanism(&self) -> String {
        locked(&self.inner).mechanism().to_string()
    }

    /// Whether the client side has completed.
    #[getter]
    fn complete(&self) -> bool {
        locked(&self.inner).is_complete()
    }
}

/// One server exchange: `step(response)` returns `(status, message or None)` where status is
/// "challenge", "need_credential", "pending" (an `async` mechanism method runs: await
/// `pending_work()`, then `resume`) or "done".
#[pyclass(module = "ksasl._ksasl")]
struct Server {
    inner: Mutex<ServerAuthenticator>,
    request: Option<CredentialRequest>,
    pending: Pending,
    client_message: String,
}

impl Server {
    fn out(
        &mut self,
        py: Python<'_>,
        r: ksasl::Result<ServerStep>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        // An exception raised by a credential callback reaches the caller unchanged.
        if let Some(e) = self.pending.lock().ok().and_then(|mut p| p.take()) {
            if let Err(err) = &r {
                self.client_message = err.client_message(locked(&self.inner).mechanism(), false);
            }
            return Err(e);
        }
        let step = match r {
            Ok(s) => s,
            Err(e) => {
                self.client_message = e.client_message(locked(&self.inner).mechanism(), false);
                return Err(py_err(py, e));
            }
        };
        Ok(match step {
            ServerStep::Challenge(b) => ("challenge", Some(PyBytes::new(py, &b).unbind())),
            ServerStep::NeedCredential(req) => {
                self.request = Some(req);
                ("need_credential", None)
            }
            ServerStep::Done { message, .. } => {
                ("done", message.map(|m| PyBytes::new(py, &m).unbind()))
            }
            ServerStep::Pending(_) => ("pending", None),
        })
    }
}

#[pymethods]
impl Server {
    #[new]
    fn new(py: Python<'_>, registry: &Registry, mechanism: &str) -> PyResult<Self> {
        Ok(Server {
            inner: Mutex::new(wrap(py, registry.inner.server(mechanism))?),
            request: None,
            pending: registry.pending.clone(),
            client_message: String::new(),
        })
    }

    /// Evaluates one client message.
    #[pyo3(signature = (response, now_ms = None))]
    fn step(
        &mut self,
        py: Python<'_>,
        response: &[u8],
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        let now = now_or_wall(now_ms);
        let r = py.allow_threads(|| locked(&self.inner).step(response, now));
        self.out(py, r)
    }

    /// After "pending": the awaitable the mechanism returned.
    fn pending_work(&self, py: Python<'_>) -> Option<PyObject> {
        locked(&self.inner)
            .pending_work()
            .and_then(|w| hostmech::awaitable(py, w))
    }

    /// Continues after "pending" with the awaited result (or the exception the awaitable
    /// raised); returns as `step`.
    #[pyo3(signature = (result, now_ms = None))]
    fn resume(
        &mut self,
        py: Python<'_>,
        result: &Bound<'_, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        let work = locked(&self.inner)
            .pending_work()
            .cloned()
            .ok_or_else(|| py_err(py, ksasl::mech::nothing_pending()))?;
        let step = hostmech::resume_server(py, &work, result);
        let now = now_or_wall(now_ms);
        let r = locked(&self.inner).resume(step, now);
        self.out(py, r)
    }

    /// The pending credential request: `{"mechanism", "username", "token_auth"}` or None.
    fn credential_request<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = &self.request else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("mechanism", &r.mechanism)?;
        d.set_item("username", &r.username)?;
        d.set_item("token_auth", r.token_auth)?;
        Ok(Some(d))
    }

    /// Answers the pending request: `answer` as for a credential callback.
    #[pyo3(signature = (answer, now_ms = None))]
    fn provide_credential(
        &mut self,
        py: Python<'_>,
        answer: &Bound<'_, PyAny>,
        now_ms: Option<i64>,
    ) -> PyResult<(&'static str, Option<Py<PyBytes>>)> {
        let request = self.request.clone().ok_or_else(|| {
            py_err(
                py,
                Error::new(
                    ksasl::ErrorCode::WrongState,
                    "no credential has been requested",
                ),
            )
        })?;
        let a = parse_answer(py, &request, answer)?
            .ok_or_else(|| PyValueError::new_err("'later' is not an answer"))?;
        self.request = None;
        let now = now_or_wall(now_ms);
        let r = py.allow_threads(|| locked(&self.inner).provide_credential(a, now));
        self.out(py, r)
    }

    /// After "done": principal, mechanism, credential expiry, extensions, token flag.
    fn outcome<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let inner = locked(&self.inner);
        let Some(o) = inner.outcome() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("principal", o.principal.to_string())?;
        d.set_item("principal_name", &o.principal.name)?;
        d.set_item("mechanism", &o.mechanism)?;
        d.set_item("credential_expiry_ms", o.credential_expiry_ms)?;
        d.set_item("extensions", o.extensions.clone())?;
        d.set_item("token_authenticated", o.principal.token_authenticated)?;
        Ok(Some(d))
    }

    /// After a failure: the text a Kafka broker sends the client.
    #[getter]
    fn client_message(&self) -> String {
        self.client_message.clone()
    }
}

/// The native module behind `import ksasl`.
#[pymodule]
fn _ksasl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", ksasl::VERSION)?;
    m.add_class::<Store>()?;
    m.add_class::<Registry>()?;
    m.add_class::<Client>()?;
    m.add_class::<Server>()?;
    conn::register(m)?;
    tokens::register(m)?;
    Ok(())
}
