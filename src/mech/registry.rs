//! Mechanisms by name, for each side, and the presets of the built-in mechanisms.

use std::fmt;
use std::sync::Arc;

use super::aws_msk_iam::{
    AwsCredentialSource, AwsKeyStore, AwsMskIamClient, AwsMskIamServer, MskIamClientConfig,
    MskIamServerConfig, MskTokenSource, MskTokenValidator,
};
use super::exchange::{ClientExchange, ServerExchange};
use super::gssapi::client::{GssapiClient, GssapiClientConfig};
use super::gssapi::context::{GssAcceptorFactory, GssInitiatorFactory};
use super::gssapi::server::{GssapiServer, GssapiServerConfig};
use super::host::{HostClient, HostClientCalls, HostServer, HostServerCalls};
use super::mechanism::{ClientMechanism, ServerMechanism};
use super::named::Named;
use super::oauthbearer::{
    CachingValidator, OAuthBearerClient, OAuthBearerServer, TokenSource, TokenValidator,
};
use super::plain::{PlainClient, PlainServer};
use super::scram::{ScramClient, ScramClientOptions, ScramServer, ScramServerOptions};
use crate::credential::scram::ScramMechanism;
use crate::credential::{
    AskHost, CredentialLookup, CredentialRequest, Lookup, PasswordCredential, PasswordSource,
};
use crate::error::{Error, ErrorCode, Result};
use crate::names::{AWS_MSK_IAM, GSSAPI, OAUTHBEARER, PLAIN};
use crate::sync::{Padded, Striped};

/// How many token verdicts [`MechanismRegistry::register_cached_oauthbearer_server`] keeps.
pub const DEFAULT_VERDICT_CACHE: usize = 4096;

/// Makes the client side of one exchange.
trait MakeClient: Send + Sync {
    fn make(&self) -> Result<Box<dyn ClientMechanism>>;
}

/// Makes the server side of one exchange.
trait MakeServer: Send + Sync {
    fn make(&self) -> Result<Box<dyn ServerMechanism>>;
}

// A factory is a closure kept `Padded`: what it holds (a striped validator, a credential) is
// read by every exchange, on lines no other allocation shares.
impl<F: Fn() -> Result<Box<dyn ClientMechanism>> + Send + Sync> MakeClient for Padded<F> {
    fn make(&self) -> Result<Box<dyn ClientMechanism>> {
        (self.0)()
    }
}

impl<F: Fn() -> Result<Box<dyn ServerMechanism>> + Send + Sync> MakeServer for Padded<F> {
    fn make(&self) -> Result<Box<dyn ServerMechanism>> {
        (self.0)()
    }
}

/// Mechanisms by name, for each side. Cheap to clone; shared by all connections of a host.
// Aligned (and so sized) to 128 bytes: every new exchange reads it, so wherever a host or a
// binding keeps it, no other allocation shares its cache lines.
#[repr(align(128))]
#[derive(Clone, Default)]
pub struct MechanismRegistry {
    clients: Named<dyn MakeClient>,
    servers: Named<dyn MakeServer>,
    /// Where user logins are looked up (None: the host answers through the pull form).
    users: Option<Arc<dyn CredentialLookup>>,
    /// Where delegation-token logins (`tokenauth`) are looked up, if anywhere.
    tokens: Option<Arc<dyn CredentialLookup>>,
    /// The lookup server exchanges get: the users', or both sides by the request's kind; a
    /// handle per thread slot, so that the exchanges of different threads do not count their
    /// references on one cache line.
    lookup: Option<Striped<dyn CredentialLookup>>,
}

/// Users and delegation tokens in one lookup: a `tokenauth` request goes to the tokens, any
/// other to the users.
struct UsersAndTokens {
    users: Arc<dyn CredentialLookup>,
    tokens: Arc<dyn CredentialLookup>,
}

impl CredentialLookup for UsersAndTokens {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        if request.token_authenticated {
            self.tokens.lookup(request)
        } else {
            self.users.lookup(request)
        }
    }
}

/// Handles on a token validator, one per thread slot.
fn striped_validator(v: Arc<dyn TokenValidator>) -> Striped<dyn TokenValidator> {
    Striped::new(v, |v| Arc::new(Padded(v)))
}

/// Handles on a credential lookup, one per thread slot.
fn striped_lookup(l: Arc<dyn CredentialLookup>) -> Striped<dyn CredentialLookup> {
    Striped::new(l, |l| Arc::new(Padded(l)))
}

impl fmt::Debug for MechanismRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MechanismRegistry")
            .field("clients", &self.clients.names())
            .field("servers", &self.servers.names())
            .finish()
    }
}

/// Checks a SASL mechanism name (RFC 4422 §3.1: 1 to 20 of `A-Z 0-9 - _`).
pub fn validate_mechanism_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 20
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "invalid SASL mechanism name {name:?}: 1 to 20 characters of A-Z, 0-9, '-' and '_'"
            ),
        ))
    }
}

impl MechanismRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets where the server exchanges this registry creates look up users (a store, a host
    /// callback); `None` leaves every user login to the host (the pull form).
    pub fn set_credential_lookup(&mut self, lookup: Option<Arc<dyn CredentialLookup>>) {
        self.users = lookup;
        self.combine();
    }

    /// Sets where delegation-token logins (`tokenauth=true`) are looked up (a
    /// [`TokenAuthority`](crate::token::TokenAuthority)); user logins still go to the
    /// credential lookup. `None`: token logins go to the credential lookup too.
    pub fn set_token_lookup(&mut self, tokens: Option<Arc<dyn CredentialLookup>>) {
        self.tokens = tokens;
        self.combine();
    }

    fn combine(&mut self) {
        let lookup: Option<Arc<dyn CredentialLookup>> = match (&self.users, &self.tokens) {
            (users, Some(tokens)) => Some(Arc::new(UsersAndTokens {
                users: users.clone().unwrap_or_else(|| Arc::new(AskHost)),
                tokens: tokens.clone(),
            })),
            (users, None) => users.clone(),
        };
        self.lookup = lookup.map(striped_lookup);
    }

    /// Registers (or replaces) a client mechanism.
    pub fn register_client<F>(&mut self, name: &str, factory: F) -> Result<()>
    where
        F: Fn() -> Result<Box<dyn ClientMechanism>> + Send + Sync + 'static,
    {
        validate_mechanism_name(name)?;
        // A valid name always fits.
        self.clients.insert(name, Arc::new(Padded(factory)));
        Ok(())
    }

    /// Registers (or replaces) a client mechanism written by the host: `factory` makes the
    /// calls of one exchange (for example by instantiating the host's class).
    pub fn register_host_client<F>(&mut self, name: &str, factory: F) -> Result<()>
    where
        F: Fn() -> Result<Box<dyn HostClientCalls>> + Send + Sync + 'static,
    {
        let n = name.to_string();
        self.register_client(name, move || {
            Ok(Box::new(HostClient {
                name: n.clone(),
                calls: factory()?,
            }))
        })
    }

    /// Registers (or replaces) a server mechanism written by the host (see
    /// [`MechanismRegistry::register_host_client`]). The host looks credentials up itself.
    pub fn register_host_server<F>(&mut self, name: &str, factory: F) -> Result<()>
    where
        F: Fn() -> Result<Box<dyn HostServerCalls>> + Send + Sync + 'static,
    {
        let n = name.to_string();
        self.register_server(name, move || {
            Ok(Box::new(HostServer {
                name: n.clone(),
                calls: factory()?,
            }))
        })
    }

    /// Registers (or replaces) a server mechanism.
    pub fn register_server<F>(&mut self, name: &str, factory: F) -> Result<()>
    where
        F: Fn() -> Result<Box<dyn ServerMechanism>> + Send + Sync + 'static,
    {
        validate_mechanism_name(name)?;
        // A valid name always fits.
        self.servers.insert(name, Arc::new(Padded(factory)));
        Ok(())
    }

    /// Adds every mechanism of `other` (replacing same-named ones); the credential lookup of
    /// `self` is kept unless it has none.
    pub fn merge(&mut self, other: MechanismRegistry) {
        self.clients.extend(other.clients);
        self.servers.extend(other.servers);
        if self.users.is_none() {
            self.users = other.users;
        }
        if self.tokens.is_none() {
            self.tokens = other.tokens;
        }
        self.combine();
    }

    /// Removes a mechanism from both sides; returns whether it was registered.
    pub fn unregister(&mut self, name: &str) -> bool {
        let a = self.clients.remove(name);
        let b = self.servers.remove(name);
        a || b
    }

    /// Names of the client mechanisms, sorted.
    pub fn client_mechanisms(&self) -> Vec<String> {
        self.clients.names()
    }

    /// Names of the server mechanisms, sorted.
    pub fn server_mechanisms(&self) -> Vec<String> {
        self.servers.names()
    }

    /// A new client exchange for the named mechanism.
    pub fn client(&self, name: &str) -> Result<ClientExchange> {
        let f = self
            .clients
            .get(name)
            .ok_or_else(|| unknown(name, self.client_mechanisms()))?;
        let mech = f.make()?;
        check_factory_name(name, mech.name())?;
        Ok(ClientExchange::new(mech))
    }

    /// A new server exchange for the named mechanism.
    pub fn server(&self, name: &str) -> Result<ServerExchange> {
        let f = self
            .servers
            .get(name)
            .ok_or_else(|| unknown(name, self.server_mechanisms()))?;
        let mech = f.make()?;
        check_factory_name(name, mech.name())?;
        let mut server = ServerExchange::new(mech);
        server.set_credential_lookup(self.lookup.as_ref().map(Striped::get));
        Ok(server)
    }
}

impl MechanismRegistry {
    /// A server registry with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, consulting `lookup`
    /// for credentials (or, with `None`, always asking the host through the pull form).
    pub fn password_servers(lookup: Option<Arc<dyn CredentialLookup>>) -> Self {
        let mut r = MechanismRegistry::new();
        r.register_server(PLAIN, || Ok(Box::new(PlainServer::new())))
            .expect("valid name");
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            r.register_server(m.name(), move || {
                Ok(Box::new(ScramServer::new(m, ScramServerOptions::default())))
            })
            .expect("valid name");
        }
        r.set_credential_lookup(lookup);
        r
    }

    /// Registers an OAUTHBEARER server validating tokens with `validator` (wrap it in a
    /// [`CachingValidator`] to keep verdicts across re-authentications).
    pub fn register_oauthbearer_server(&mut self, validator: Arc<dyn TokenValidator>) {
        // A handle per thread slot: the exchanges of a broker's network threads do not count
        // their references to the validator on one cache line.
        let validators = striped_validator(validator);
        self.register_server(OAUTHBEARER, move || {
            Ok(Box::new(OAuthBearerServer::new(validators.get())))
        })
        .expect("valid name");
    }

    /// Registers an OAUTHBEARER server whose verdicts are kept in a cache of
    /// [`DEFAULT_VERDICT_CACHE`] tokens in front of `validator`, so a re-authentication with
    /// the same token costs no second validation (what every binding registers).
    pub fn register_cached_oauthbearer_server(&mut self, validator: Arc<dyn TokenValidator>) {
        self.register_oauthbearer_server(Arc::new(CachingValidator::new(
            validator,
            DEFAULT_VERDICT_CACHE,
        )));
    }

    /// Registers an OAUTHBEARER client that presents the source's current token (a
    /// [`Refresher`](crate::refresh::Refresher)'s) at the start of every (re-)authentication.
    pub fn register_oauthbearer_client(&mut self, source: Arc<dyn TokenSource>) {
        self.register_client(OAUTHBEARER, move || {
            Ok(Box::new(OAuthBearerClient::from_source(source.clone())))
        })
        .expect("valid name");
    }

    /// Registers an `AWS_MSK_IAM` client signing for `config`'s broker with the credentials
    /// `source` holds at the start of every (re-)authentication.
    pub fn register_aws_msk_iam_client(
        &mut self,
        config: Arc<MskIamClientConfig>,
        source: Arc<dyn AwsCredentialSource>,
    ) {
        self.register_client(AWS_MSK_IAM, move || {
            Ok(Box::new(AwsMskIamClient::new(
                config.clone(),
                source.clone(),
            )))
        })
        .expect("valid name");
    }

    /// Registers an `AWS_MSK_IAM` server verifying payloads against `config`'s keys.
    pub fn register_aws_msk_iam_server(&mut self, config: Arc<MskIamServerConfig>) {
        self.register_server(AWS_MSK_IAM, move || {
            Ok(Box::new(AwsMskIamServer::new(config.clone())))
        })
        .expect("valid name");
    }

    /// Registers an OAUTHBEARER client presenting MSK's presigned tokens for `region`, signed
    /// with `source`'s credentials at every (re-)authentication (`user_agent` `None`: ksasl's).
    pub fn register_msk_oauthbearer_client(
        &mut self,
        region: &str,
        user_agent: Option<&str>,
        source: Arc<dyn AwsCredentialSource>,
    ) {
        self.register_oauthbearer_client(Arc::new(MskTokenSource::new(region, user_agent, source)));
    }

    /// Registers an OAUTHBEARER server accepting MSK's presigned tokens for `region` signed
    /// with a key of `keys`. Verdicts are not cached: checking a token is one HMAC chain, and
    /// a key removed from the store must refuse its tokens at once.
    pub fn register_msk_oauthbearer_server(&mut self, keys: Arc<AwsKeyStore>, region: &str) {
        let config = MskIamServerConfig::new(keys, region, Vec::new());
        self.register_oauthbearer_server(Arc::new(MskTokenValidator::new(Arc::new(config))));
    }

    /// Registers a GSSAPI client: every (re-)authentication makes a fresh context with
    /// `factory` (so it uses the credential current at that moment) for `config`'s service.
    pub fn register_gssapi_client(
        &mut self,
        config: Arc<GssapiClientConfig>,
        factory: Arc<dyn GssInitiatorFactory>,
    ) {
        self.register_client(GSSAPI, move || {
            Ok(Box::new(GssapiClient::new(config.clone(), factory.clone())))
        })
        .expect("valid name");
    }

    /// Registers a GSSAPI server accepting with contexts from `factory`.
    pub fn register_gssapi_server(
        &mut self,
        config: Arc<GssapiServerConfig>,
        factory: Arc<dyn GssAcceptorFactory>,
    ) {
        self.register_server(GSSAPI, move || {
            Ok(Box::new(GssapiServer::new(
                config.clone(),
                factory.as_ref(),
            )?))
        })
        .expect("valid name");
    }

    /// Registers PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients that use the source's newest
    /// password credential (a [`Refresher`](crate::refresh::Refresher)'s rotated password or
    /// renewed delegation token) at the start of every (re-)authentication.
    pub fn register_refreshing_password_clients(&mut self, source: Arc<dyn PasswordSource>) {
        let s = source.clone();
        self.register_client(PLAIN, move || Ok(Box::new(PlainClient::new(s.password()?))))
            .expect("valid name");
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            let s = source.clone();
            self.register_client(m.name(), move || {
                Ok(Box::new(ScramClient::new(
                    m,
                    s.password()?,
                    ScramClientOptions::default(),
                )?))
            })
            .expect("valid name");
        }
    }

    /// A client registry with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for one credential
    /// (for a delegation-token credential, only the SCRAM mechanisms).
    pub fn password_clients(credential: Arc<PasswordCredential>) -> Self {
        let mut r = MechanismRegistry::new();
        if !credential.token_authenticated() {
            let c = credential.clone();
            r.register_client(PLAIN, move || Ok(Box::new(PlainClient::new(c.clone()))))
                .expect("valid name");
        }
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            let c = credential.clone();
            r.register_client(m.name(), move || {
                Ok(Box::new(ScramClient::new(
                    m,
                    c.clone(),
                    ScramClientOptions::default(),
                )?))
            })
            .expect("valid name");
        }
        r
    }
}

fn unknown(name: &str, known: Vec<String>) -> Error {
    Error::new(
        ErrorCode::UnknownMechanism,
        format!(
            "SASL mechanism \"{}\" is not registered; registered: [{}]",
            crate::error::quote(name.as_bytes()),
            known.join(", ")
        ),
    )
}

fn check_factory_name(asked: &str, got: &str) -> Result<()> {
    if asked != got {
        return Err(Error::new(
            ErrorCode::InvalidConfig,
            format!("the factory registered for {asked} produced a {got} mechanism"),
        ));
    }
    Ok(())
}
