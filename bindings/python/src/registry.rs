//! `MechanismRegistry`: the core's registry, with Python callables, stores, validators and
//! refreshers as credential sources.

use ksasl::credential::{CredentialLookup, CredentialRequest, HostLookup};
use ksasl::io::gss::{self, GssapiServerSettings};
use ksasl::mech::{HostClientCalls, HostServerCalls};
use ksasl::{MechanismRegistry as Registry, PasswordCredential};

use crate::aws::{self, AwsKeyStore};
use crate::dicts::decode;
use crate::glue::*;
use crate::hostmech::PyMechanism;
use crate::kerberos::KerberosLogin;
use crate::msk;
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
}

/// Adds PLAIN and SCRAM clients with `credential` (`c`: the locked registry).
fn clients(c: &mut Arc<Registry>, credential: ksasl::Result<PasswordCredential>) -> PyResult<()> {
    let credential = Arc::new(credential.or_raise()?);
    Arc::make_mut(c).merge(Registry::password_clients(credential));
    Ok(())
}

/// A lookup calling `f(mechanism, username, token_authenticated)`; its exception reaches the
/// caller of the step unchanged.
fn lookup(f: PyObject) -> Arc<dyn CredentialLookup> {
    Arc::new(HostLookup(move |req: &CredentialRequest| {
        Python::with_gil(|py| {
            let args = (&req.mechanism, &req.username, req.token_authenticated);
            match f.call1(py, args).and_then(|v| decode(req, v.bind(py))) {
                Ok(answer) => answer,
                Err(e) => Err(keep(py, e, ErrorCode::CredentialLookupFailed)),
            }
        })
    }))
}

class! { MechanismRegistry |py, c| lock {
    new() -> Self { MechanismRegistry(Mutex::default()) }
    /// Users from a `CredentialStore`, a lookup callable or None (the pull form); token
    /// logins from a `TokenAuthority`.
    fn add_password_servers(credentials: Option<Any> = None,
        tokens: Option<PyRef<TokenAuthority>> = None) -> PyResult<()> {
        let users: Option<Arc<dyn CredentialLookup>> = match credentials {
            None => None,
            Some(v) => match v.downcast::<CredentialStore>() {
                Ok(store) => Some(store.get().0.clone()),
                Err(_) if v.is_callable() => Some(lookup(v.unbind())),
                Err(e) => return Err(e.into()),
            },
        };
        let r = Arc::make_mut(c);
        r.merge(Registry::password_servers(None));
        if users.is_some() {
            r.set_credential_lookup(users);
        }
        if let Some(t) = tokens {
            r.set_token_lookup(Some(t.0.clone()));
        }
        Ok(())
    }
    fn add_password_clients(username: &str, password: &str) -> PyResult<()> {
        clients(c, PasswordCredential::new(username, password))
    }
    fn add_token_clients(token_id: &str, token_hmac: &str) -> PyResult<()> {
        clients(c, PasswordCredential::delegation_token(token_id, token_hmac))
    }
    fn add_refreshing_password_clients(refresher: &Refresher) {
        Arc::make_mut(c).register_refreshing_password_clients(refresher.0.clone())
    }
    /// Verdicts are cached (the core's cache).
    fn add_oauthbearer_server(validator: Option<Any> = None,
        required_scope: Option<Vec<String>> = None, clock_skew_ms: Option<i64> = None)
        -> PyResult<()> {
        let v = server_validator(validator, required_scope, clock_skew_ms)?;
        Arc::make_mut(c).register_cached_oauthbearer_server(v);
        Ok(())
    }
    fn add_oauthbearer_client(refresher: &Refresher) {
        Arc::make_mut(c).register_oauthbearer_client(refresher.0.clone())
    }
    /// `credentials`: an `AwsCredentials` or a `Refresher` holding AWS credentials; the
    /// user agent and key order ("java" or "kafka-python") are the core's unless given.
    fn add_aws_msk_iam_client(host: &str, region: &str, credentials: Any,
        user_agent: Option<String> = None, key_order: Option<String> = None) -> PyResult<()> {
        let config = aws::client_config(host, region, user_agent, key_order.as_deref())?;
        Arc::make_mut(c).register_aws_msk_iam_client(config, msk::source(&credentials)?);
        Ok(())
    }
    /// `hosts`: the names clients may sign for (None or empty: any).
    fn add_aws_msk_iam_server(keys: &AwsKeyStore, region: &str,
        hosts: Option<Vec<String>> = None) {
        Arc::make_mut(c).register_aws_msk_iam_server(aws::server_config(keys, region, hosts))
    }
    /// An OAUTHBEARER client presenting MSK's tokens, signed at each (re-)authentication.
    fn add_msk_oauthbearer_client(region: &str, credentials: Any,
        user_agent: Option<String> = None) -> PyResult<()> {
        let source = msk::source(&credentials)?;
        Arc::make_mut(c).register_msk_oauthbearer_client(region, user_agent.as_deref(), source);
        Ok(())
    }
    /// An OAUTHBEARER server taking MSK's tokens (each checked against the keys as they are).
    fn add_msk_oauthbearer_server(keys: &AwsKeyStore, region: &str) {
        Arc::make_mut(c).register_msk_oauthbearer_server(keys.0.clone(), region)
    }
    fn add_gssapi_client(login: &KerberosLogin, service_name: &str, host: &str,
        mutual: bool = false) -> PyResult<()> {
        gss::register_client(Arc::make_mut(c), &login.0, service_name, host, mutual).or_raise()
    }
    /// Reads the keytab now.
    fn add_gssapi_server(keytab: Option<String> = None, principal: Option<String> = None,
        service_name: Option<String> = None, rules: Option<String> = None,
        cap_session_at_ticket: bool = true) -> PyResult<()> {
        let (k, p, s, r) = (keytab.as_deref(), principal.as_deref(), service_name.as_deref(),
            rules.as_deref());
        let settings = GssapiServerSettings::from_settings(k, p, s, r, cap_session_at_ticket);
        let settings = settings.or_raise()?;
        py.allow_threads(|| gss::register_server(Arc::make_mut(c), &settings)).or_raise()
    }
    /// `factory()` makes one object per exchange, with `start(now_ms)`, `step(bytes, now_ms)`.
    fn add_client_mechanism(name: &str, factory: PyObject) -> PyResult<()> {
        let n = name.to_string();
        let make = move || PyMechanism::make(&n, &factory).map(|m| m as Box<dyn HostClientCalls>);
        Arc::make_mut(c).register_host_client(name, make).or_raise()
    }
    /// `factory()` makes one object per exchange, with `step(bytes, now_ms)`.
    fn add_server_mechanism(name: &str, factory: PyObject) -> PyResult<()> {
        let n = name.to_string();
        let make = move || PyMechanism::make(&n, &factory).map(|m| m as Box<dyn HostServerCalls>);
        Arc::make_mut(c).register_host_server(name, make).or_raise()
    }
    fn client_mechanisms() -> Vec<String> { c.client_mechanisms() }
    fn server_mechanisms() -> Vec<String> { c.server_mechanisms() }
}}
