//! GSSAPI on a registry in one call per side, from the settings users have (Kafka's
//! `sasl.kerberos.*` names and the JAAS `Krb5LoginModule` options): what every binding calls,
//! so that defaults, checks and the principal mapping are written once.

use std::sync::Arc;

use super::login::KerberosLogin;
use super::sys;
use super::system::{AcceptorFactory, Credential};
use crate::config::{ServerMechanism, ServerSetup};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::gssapi::client::GssapiClientConfig;
use crate::mech::gssapi::server::{GssapiServerConfig, PrincipalMapper};
use crate::mech::gssapi::short_namer::{parse_rule_list, KerberosName, KerberosShortNamer};
use crate::mech::registry::MechanismRegistry;

/// A GSSAPI server's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GssapiServerSettings {
    /// The broker's keytab (JAAS `keyTab`); `None`: the default keytab (`KRB5_KTNAME`).
    pub keytab: Option<String>,
    /// The broker's principal (JAAS `principal`, `kafka/broker1.example.com@EXAMPLE.COM`);
    /// `None`: any principal whose key the keytab holds.
    pub principal: Option<String>,
    /// `sasl.kerberos.service.name`; `None`: the first part of `principal`.
    pub service_name: Option<String>,
    /// `sasl.kerberos.principal.to.local.rules` (Kafka's default: `DEFAULT`).
    pub rules: Vec<String>,
    /// The realm `DEFAULT` rules treat as local; `None`: as Kafka, the Kerberos
    /// configuration's `default_realm` (`krb5.conf`, read when the server is added), else the
    /// realm of `principal`, else none (only names without a realm then map by `DEFAULT`).
    pub default_realm: Option<String>,
    /// End each session with the client's service ticket (on by default).
    pub cap_session_at_ticket: bool,
}

impl Default for GssapiServerSettings {
    fn default() -> Self {
        GssapiServerSettings {
            keytab: None,
            principal: None,
            service_name: None,
            rules: vec!["DEFAULT".to_string()],
            default_realm: None,
            cap_session_at_ticket: true,
        }
    }
}

impl GssapiServerSettings {
    /// Settings from the values a binding receives: `rules` is Kafka's list value
    /// (`RULE:...,DEFAULT`, read as Kafka reads the setting; `None` or empty: `DEFAULT`);
    /// empty strings count as not given.
    pub fn from_settings(
        keytab: Option<&str>,
        principal: Option<&str>,
        service_name: Option<&str>,
        rules: Option<&str>,
        cap_session_at_ticket: bool,
    ) -> Result<Self> {
        let given = |v: Option<&str>| v.filter(|s| !s.is_empty()).map(str::to_string);
        let rules = rules.map(parse_rule_list).transpose()?.unwrap_or_default();
        Ok(GssapiServerSettings {
            keytab: given(keytab),
            principal: given(principal),
            service_name: given(service_name),
            rules: if rules.is_empty() {
                vec!["DEFAULT".to_string()]
            } else {
                rules
            },
            default_realm: None,
            cap_session_at_ticket,
        })
    }

    /// The principal-to-local mapping these settings describe (reading the Kerberos
    /// configuration's default realm when `default_realm` is not given).
    pub fn mapper(&self) -> Result<PrincipalMapper> {
        let own = self
            .principal
            .as_deref()
            .map(KerberosName::parse)
            .transpose()?;
        let realm = self
            .default_realm
            .clone()
            .or_else(sys::default_realm)
            .or_else(|| own.as_ref().and_then(|p| p.realm().map(str::to_string)));
        let namer = KerberosShortNamer::new(realm.as_deref(), &self.rules)?;
        Ok(Arc::new(move |principal: &str| {
            namer.short_name(&KerberosName::parse(principal)?)
        }))
    }

    fn service(&self) -> Result<String> {
        if let Some(s) = &self.service_name {
            return Ok(s.clone());
        }
        match &self.principal {
            Some(p) => Ok(KerberosName::parse(p)?.service_name().to_string()),
            None => Err(Error::new(
                ErrorCode::InvalidConfig,
                "a GSSAPI server needs its principal or sasl.kerberos.service.name",
            )),
        }
    }
}

/// Finishes a listener of `server.properties` that enables GSSAPI
/// ([`ServerSetup::kerberos`]): adds the GSSAPI server its settings describe (the JAAS
/// `keyTab` and `principal`, `sasl.kerberos.service.name`,
/// `sasl.kerberos.principal.to.local.rules`; sessions capped at the client's ticket) and
/// rebuilds the configuration. The keytab is read now. Nothing to do without GSSAPI.
pub fn finish_listener(setup: &mut ServerSetup) -> Result<()> {
    let Some(ServerMechanism::Gssapi {
        principal,
        keytab,
        service_name,
    }) = setup.kerberos.clone()
    else {
        return Ok(());
    };
    let settings = GssapiServerSettings {
        keytab,
        principal,
        service_name,
        rules: setup.settings().principal_to_local_rules.clone(),
        ..GssapiServerSettings::default()
    };
    let mut registry = setup.registry.clone();
    register_server(&mut registry, &settings).map_err(|e| {
        Error::new(
            e.code(),
            format!(
                "listener {}: GSSAPI: {}",
                setup.settings().listener,
                e.message()
            ),
        )
    })?;
    setup.with_registry(registry)
}

/// Adds a GSSAPI server with `settings`: reads the keytab now (so a missing keytab or key is
/// reported here, not at the first client) and shares it between every exchange.
pub fn register_server(
    registry: &mut MechanismRegistry,
    settings: &GssapiServerSettings,
) -> Result<()> {
    let mut config = GssapiServerConfig::new(&settings.service()?, settings.mapper()?)?;
    config.cap_session_at_ticket = settings.cap_session_at_ticket;
    let credential =
        Credential::acceptor(settings.keytab.as_deref(), settings.principal.as_deref())?;
    registry.register_gssapi_server(
        Arc::new(config),
        Arc::new(AcceptorFactory::new(Arc::new(credential))),
    );
    Ok(())
}

/// Adds a GSSAPI client for the service `service_name@host` on `login`'s current ticket;
/// `mutual` asks the broker to authenticate itself with an extra round trip (Kafka's client
/// does not).
pub fn register_client(
    registry: &mut MechanismRegistry,
    login: &Arc<KerberosLogin>,
    service_name: &str,
    host: &str,
    mutual: bool,
) -> Result<()> {
    let config = GssapiClientConfig::new(service_name, host)?;
    registry.register_gssapi_client(Arc::new(config), login.initiator_factory(mutual));
    Ok(())
}
