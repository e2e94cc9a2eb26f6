//! From settings to the objects a client connection uses: [`ClientSettings::build`].

use std::sync::Arc;

use super::client::{invalid, ClientCredential, ClientSettings, UnsecuredLogin};
use super::properties::Properties;
use super::server::{ServerMechanism, ServerSettings};
use crate::credential::{
    CredentialLookup, CredentialRequest, CredentialStore, Lookup, PasswordCredential,
};
use crate::error::Result;
use crate::kafka::client::ClientConfig;
use crate::kafka::config::ServerConfig;
use crate::kafka::delegation_tokens::SUPPORTED_KAFKA_4 as TOKEN_APIS;
use crate::mech::oauthbearer::{JwksValidator, TokenValidator, UnsecuredValidator};
use crate::mech::plain::PlainServer;
use crate::mech::scram::{ScramMechanism, ScramServer, ScramServerOptions};
use crate::mech::MechanismRegistry;
use crate::names::{GSSAPI, OAUTHBEARER, PLAIN};
use crate::random::SharedRandom;
use crate::refresh::Refresher;
use crate::secret::Secret;
use crate::token::{TokenAuthority, TokenConfig};

/// What the host still has to do for a client built by [`ClientSettings::build`].
#[derive(Debug)]
pub enum ClientLogin {
    /// Nothing: the credential is in the configuration (PLAIN, SCRAM, unsecured tokens made
    /// by the refresher's own callback when the host calls [`Refresher::run_due`]).
    Ready,
    /// Tokens from an identity provider. With the `http` feature, the refresher's callback is
    /// already a login at the provider ([`crate::io::http::OidcLogin`], blocking the thread that
    /// runs `run_due`); without it, the host fetches tokens itself with these settings
    /// (Kafka's names) and hands them to the refresher.
    Oidc,
    /// The host supplies tokens ([`Refresher::set_token`]), as librdkafka's refresh callback
    /// does; librdkafka's `sasl.oauthbearer.config` is passed along for it.
    HostToken(Option<Secret>),
    /// Kerberos: the host registers a GSSAPI client for this service (`ksasl::io::gss`).
    Kerberos {
        /// The broker's service name.
        service_name: String,
        /// The client principal, if configured.
        principal: Option<String>,
        /// The keytab, if configured.
        keytab: Option<String>,
    },
}

/// A client built from settings: its configuration (with the mechanism registered), the
/// refresher behind OAUTHBEARER tokens, and what the host still has to do.
#[derive(Debug)]
pub struct ClientSetup {
    /// The connection configuration (`sasl.mechanism` chosen); `None` for GSSAPI until the
    /// host registers its client ([`ClientSetup::with_registry`]: the GSSAPI client needs the
    /// broker's host name, known only when connecting).
    pub config: Option<Arc<ClientConfig>>,
    /// For OAUTHBEARER: the refresher holding the current token, scheduled by
    /// `sasl.login.refresh.*`. The host runs it ([`Refresher::run_due`] at
    /// [`Refresher::next_deadline`], or a background refresher).
    pub refresher: Option<Arc<Refresher>>,
    /// What the host still has to do.
    pub login: ClientLogin,
}

fn unsecured_callback(refresher: &Refresher, u: &UnsecuredLogin, s: &ClientSettings) -> Result<()> {
    let builder = u.builder()?;
    let extensions = s.extensions.clone();
    refresher.set_refresh_callback(move |r, now_ms| {
        let made = builder.build(now_ms).and_then(|t| {
            let ext: Vec<(&str, &str)> = extensions
                .map()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let expiry = t.expiry_ms();
            r.set_token(t.value(), expiry, t.principal(), &ext, now_ms)
        });
        if let Err(e) = made {
            let _ = r.set_token_failure(e.message(), now_ms);
        }
    });
    Ok(())
}

impl ClientSettings {
    /// Builds the client these settings describe. GSSAPI is left to the host
    /// ([`ClientLogin::Kerberos`]): the configuration is built when it registers a GSSAPI
    /// client and calls [`ClientSetup::with_registry`].
    pub fn build(&self, random: SharedRandom) -> Result<ClientSetup> {
        if !self.security_protocol.uses_sasl() {
            return Err(invalid(format!(
                "security.protocol is {}: there is no SASL client to build",
                self.security_protocol.name()
            )));
        }
        let mut registry = MechanismRegistry::new();
        let mut refresher = None;
        let login = match &self.credential {
            ClientCredential::None => {
                return Err(invalid("the configuration has no SASL credential"))
            }
            ClientCredential::Password {
                username,
                password,
                token_auth,
            } => {
                let password = std::str::from_utf8(password.expose())
                    .map_err(|_| invalid("the password is not UTF-8"))?;
                let credential = if *token_auth {
                    PasswordCredential::delegation_token(username, password)?
                } else {
                    PasswordCredential::new(username, password)?
                };
                registry = MechanismRegistry::password_clients(Arc::new(credential));
                ClientLogin::Ready
            }
            ClientCredential::UnsecuredToken(u) => {
                let r = Arc::new(Refresher::new(self.refresh, random.clone()));
                unsecured_callback(&r, u, self)?;
                registry.register_oauthbearer_client(r.clone());
                refresher = Some(r);
                ClientLogin::Ready
            }
            ClientCredential::Oidc(settings) => {
                let r = Arc::new(Refresher::new(self.refresh, random.clone()));
                #[cfg(feature = "http")]
                {
                    let s = crate::io::http::OidcSettings::from_pairs(settings.iter())?;
                    Arc::new(s.login(random.clone())?).attach(&r, self.extensions.clone());
                }
                #[cfg(not(feature = "http"))]
                let _ = settings;
                registry.register_oauthbearer_client(r.clone());
                refresher = Some(r);
                ClientLogin::Oidc
            }
            ClientCredential::HostToken { config } => {
                let r = Arc::new(Refresher::new(self.refresh, random.clone()));
                registry.register_oauthbearer_client(r.clone());
                refresher = Some(r);
                ClientLogin::HostToken(config.clone())
            }
            ClientCredential::Kerberos { principal, keytab } => ClientLogin::Kerberos {
                service_name: self.kerberos_service_name.clone().unwrap_or_default(),
                principal: principal.clone(),
                keytab: keytab.clone(),
            },
        };
        let config = if self.mechanism == GSSAPI {
            None
        } else {
            Some(ClientConfig::builder(registry, &self.mechanism).build()?)
        };
        Ok(ClientSetup {
            config,
            refresher,
            login,
        })
    }
}

impl ClientSetup {
    /// The configuration again, for `mechanism` with `registry` (for GSSAPI, whose client the
    /// host registers).
    pub fn with_registry(&mut self, registry: MechanismRegistry, mechanism: &str) -> Result<()> {
        self.config = Some(ClientConfig::builder(registry, mechanism).build()?);
        Ok(())
    }
}

/// Routes credential requests: PLAIN to the users of the JAAS entry (Kafka's
/// `PlainServerCallbackHandler`), everything else to the host's lookup (SCRAM credentials live
/// in Kafka's metadata, not in JAAS), so a JAAS PLAIN user cannot log in with SCRAM.
struct ByMechanism {
    plain: Arc<CredentialStore>,
    other: Arc<dyn CredentialLookup>,
}

impl CredentialLookup for ByMechanism {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        if request.mechanism == PLAIN {
            self.plain.lookup(request)
        } else {
            self.other.lookup(request)
        }
    }
}

/// A listener built from settings by [`ServerSettings::build`].
pub struct ServerSetup {
    /// The listener's configuration; `None` until the host adds a GSSAPI server when GSSAPI
    /// is enabled ([`ServerSetup::with_registry`]).
    pub config: Option<Arc<ServerConfig>>,
    /// JWKS validators to feed, with their endpoint URLs and HTTPS settings (by Kafka's
    /// names): `ksasl::io::http::jwks_endpoint` fetches them, or the host sets the document.
    pub jwks: Vec<(String, Arc<JwksValidator>, Properties)>,
    /// GSSAPI, when enabled: the host registers a GSSAPI server for this identity and
    /// rebuilds the configuration with [`ServerSetup::with_registry`].
    pub kerberos: Option<ServerMechanism>,
    /// The registry the configuration was built with (add a GSSAPI server to it).
    pub registry: MechanismRegistry,
    /// With `delegation.token.secret.key`: the token authority SCRAM `tokenauth` logins are
    /// checked against, with `delegation.token.max.lifetime.ms` and `.expiry.time.ms`; the
    /// host serves the token APIs (38-41, listed in ApiVersions) with
    /// [`TokenAuthority::handle_request`] and sweeps expired tokens.
    pub tokens: Option<Arc<TokenAuthority>>,
    settings: ServerSettings,
    apis: Vec<(i64, i64, i64)>,
}

impl std::fmt::Debug for ServerSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSetup")
            .field("listener", &self.settings.listener)
            .field(
                "jwks",
                &self.jwks.iter().map(|(u, _, _)| u).collect::<Vec<_>>(),
            )
            .field("kerberos", &self.kerberos)
            .field("tokens", &self.tokens.is_some())
            .finish_non_exhaustive()
    }
}

impl ServerSettings {
    /// Builds the listener: PLAIN against the JAAS entry's `user_` options, SCRAM against
    /// `scram` (the host's store; `None`: no SCRAM user exists yet, every login is refused),
    /// OAUTHBEARER with Kafka's unsecured validator or a JWKS validator (verdicts cached),
    /// sessions, limits and delays as configured. GSSAPI is left to the host
    /// ([`ServerSetup::kerberos`]).
    pub fn build(&self, scram: Option<Arc<dyn CredentialLookup>>) -> Result<ServerSetup> {
        self.build_with_apis(scram, &[])
    }

    /// [`ServerSettings::build`], with the host's own APIs listed in the listener's ApiVersions
    /// answer beside the SASL ones (`(api_key, min_version, max_version)`, as
    /// [`ServerConfigBuilder::set_api_version`](crate::kafka::config::ServerConfigBuilder::set_api_version)
    /// takes them): a broker or proxy lists what it serves, such as Metadata, or Kafka's clients
    /// refuse it.
    pub fn build_with_apis(
        &self,
        scram: Option<Arc<dyn CredentialLookup>>,
        apis: &[(i64, i64, i64)],
    ) -> Result<ServerSetup> {
        let plain = Arc::new(CredentialStore::new());
        let mut registry = MechanismRegistry::new();
        let mut jwks = Vec::new();
        let mut kerberos = None;
        for m in &self.enabled_mechanisms {
            match self.mechanisms.get(m) {
                Some(ServerMechanism::Plain { users }) => {
                    for (user, password) in users {
                        let password = std::str::from_utf8(password.expose()).map_err(|_| {
                            invalid(format!("the password of PLAIN user {user} is not UTF-8"))
                        })?;
                        plain.set_password(user, password)?;
                    }
                    registry.register_server(PLAIN, || Ok(Box::new(PlainServer::new())))?;
                }
                Some(ServerMechanism::Scram) => {
                    let mechanism = ScramMechanism::try_from_name(m)?;
                    registry.register_server(m, move || {
                        Ok(Box::new(ScramServer::new(
                            mechanism,
                            ScramServerOptions::default(),
                        )))
                    })?;
                }
                Some(ServerMechanism::UnsecuredOAuthBearer(c)) => {
                    let v = UnsecuredValidator::new(c.clone())?;
                    registry.register_cached_oauthbearer_server(Arc::new(v));
                }
                Some(ServerMechanism::JwksOAuthBearer {
                    jwks_endpoint_url,
                    validator,
                    http,
                }) => {
                    let v = Arc::new(JwksValidator::new(validator.clone())?);
                    registry.register_cached_oauthbearer_server(v.clone());
                    jwks.push((jwks_endpoint_url.clone(), v, http.clone()));
                }
                Some(k @ ServerMechanism::Gssapi { .. }) => kerberos = Some(k.clone()),
                None => return Err(invalid(format!("no settings for {m}"))),
            }
        }
        let other: Arc<dyn CredentialLookup> = match scram {
            Some(l) => l,
            None => Arc::new(CredentialStore::new()),
        };
        registry.set_credential_lookup(Some(Arc::new(ByMechanism { plain, other })));
        let mut apis = apis.to_vec();
        let tokens = match &self.delegation_tokens {
            None => None,
            Some(d) => {
                let mut c = TokenConfig::new(d.secret_key.clone());
                c.max_lifetime_ms = d.max_lifetime_ms;
                c.expiry_time_ms = d.expiry_time_ms;
                let authority = Arc::new(TokenAuthority::new(c, SharedRandom::default())?);
                registry.set_token_lookup(Some(authority.clone()));
                for r in TOKEN_APIS {
                    let range = (r.api_key.into(), r.min_version.into(), r.max_version.into());
                    if !apis.iter().any(|(k, _, _)| *k == range.0) {
                        apis.push(range);
                    }
                }
                Some(authority)
            }
        };
        let mut setup = ServerSetup {
            config: None,
            jwks,
            kerberos,
            registry: registry.clone(),
            tokens,
            settings: self.clone(),
            apis,
        };
        if setup.kerberos.is_none() {
            setup.config = Some(self.server_config(registry, &setup.apis)?);
        }
        Ok(setup)
    }

    fn server_config(
        &self,
        registry: MechanismRegistry,
        apis: &[(i64, i64, i64)],
    ) -> Result<Arc<ServerConfig>> {
        let mut b = ServerConfig::builder(registry);
        for (key, min, max) in apis {
            b.set_api_version(*key, *min, *max);
        }
        b.set_enabled_mechanisms(self.enabled_mechanisms.clone())
            .set_max_receive_size(self.max_receive_size)
            .set_failed_authentication_delay_ms(self.failed_authentication_delay_ms);
        for (m, ms) in &self.max_reauth_ms {
            b.set_max_reauth_ms_for(m, *ms);
        }
        b.build()
    }
}

impl ServerSetup {
    /// Rebuilds the configuration with `registry` (the built one with a GSSAPI server added).
    pub fn with_registry(&mut self, registry: MechanismRegistry) -> Result<()> {
        self.config = Some(self.settings.server_config(registry.clone(), &self.apis)?);
        self.registry = registry;
        Ok(())
    }

    /// The settings the listener was built from.
    pub fn settings(&self) -> &ServerSettings {
        &self.settings
    }

    /// Validates OAUTHBEARER tokens with `validator` instead of the bare [`JwksValidator`] of
    /// [`ServerSetup::jwks`]: the host's fetcher around it (`ksasl::io::http::JwksFetcher`),
    /// which holds a token signed by a key it does not know yet for one refetch of the JWKS
    /// instead of refusing it. Verdicts stay cached; the configuration is rebuilt (connections
    /// made from the old one keep it).
    pub fn with_oauthbearer_validator(&mut self, validator: Arc<dyn TokenValidator>) -> Result<()> {
        if !self
            .registry
            .server_mechanisms()
            .iter()
            .any(|m| m == OAUTHBEARER)
        {
            return Err(invalid(format!(
                "listener {} does not enable OAUTHBEARER",
                self.settings.listener
            )));
        }
        let mut registry = self.registry.clone();
        registry.register_cached_oauthbearer_server(validator);
        if self.config.is_some() {
            self.config = Some(self.settings.server_config(registry.clone(), &self.apis)?);
        }
        self.registry = registry;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_from_properties_authenticates() {
        let s = ClientSettings::from_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n\
             sasl.login.refresh.buffer.seconds=0\nsasl.login.refresh.min.period.seconds=0\n\
             sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule \
             required unsecuredLoginStringClaim_sub=alice unsecuredLoginLifetimeSeconds=60 \
             unsecuredLoginExtension_traceId=t1;",
        )
        .unwrap();
        let setup = s.build(SharedRandom::default()).unwrap();
        let refresher = setup.refresher.clone().unwrap();
        let t0 = 1_800_000_000_000;
        assert!(refresher.run_due(t0));
        let (token, ext, _) = refresher.current_token(t0).unwrap();
        assert_eq!(
            (token.principal(), token.expiry_ms()),
            ("alice", t0 + 60_000)
        );
        assert_eq!(ext.map().get("traceId").map(String::as_str), Some("t1"));
        // The next refresh follows Kafka's window: at least 80% of the minute.
        let next = refresher.next_deadline().unwrap();
        assert!(next >= t0 + 48_000 && next < t0 + 60_000, "{}", next - t0);
        assert!(matches!(setup.login, ClientLogin::Ready));
    }

    #[test]
    fn password_and_token_clients() {
        let s = ClientSettings::from_text(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=tok password=\"aGVsbG8=\" tokenauth=true;",
        )
        .unwrap();
        let setup = s.build(SharedRandom::default()).unwrap();
        assert_eq!(setup.config.unwrap().mechanism(), "SCRAM-SHA-512");
        assert!(setup.refresher.is_none());
        let s =
            ClientSettings::from_text("security.protocol=SASL_SSL\nsasl.mechanisms=OAUTHBEARER\n")
                .unwrap();
        let setup = s.build(SharedRandom::default()).unwrap();
        assert!(matches!(setup.login, ClientLogin::HostToken(None)));
        let s = ClientSettings::from_text("security.protocol=SSL\n").unwrap();
        assert!(s.build(SharedRandom::default()).is_err());
    }
}
