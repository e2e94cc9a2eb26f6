//! A broker listener of `server.properties`, ready to serve: what every binding builds.

use std::sync::Arc;

use super::http::{jwks_endpoint, HttpSettings, JwksFetcher};
use crate::config::{ServerSettings, ServerSetup};
use crate::credential::CredentialLookup;
use crate::error::Result;

/// A listener built by [`build_listener`].
#[derive(Debug)]
pub struct Listener {
    /// The listener (its configuration is always set; its `jwks` list is empty: the
    /// validators are behind the endpoints below).
    pub setup: ServerSetup,
    /// `(sasl.oauthbearer.jwks.endpoint.url, endpoint)` of a listener validating OAUTHBEARER
    /// tokens at an identity provider: the configuration validates through the endpoint, so a
    /// token signed by a key not fetched yet waits for one fetch instead of being refused. Not
    /// fetched yet: the host fetches (or not) and keeps them fresh.
    pub jwks: Vec<(String, Arc<JwksFetcher>)>,
}

/// Builds `settings`' listener ([`ServerSettings::build_with_apis`]: SCRAM users from `scram`,
/// the host's `apis` in ApiVersions), finishes its GSSAPI server
/// ([`super::gss::finish_listener`]: the keytab is read now) and puts each JWKS validator
/// behind an endpoint built with the JAAS entry's HTTPS settings.
pub fn build_listener(
    settings: &ServerSettings,
    scram: Option<Arc<dyn CredentialLookup>>,
    apis: &[(i64, i64, i64)],
) -> Result<Listener> {
    let mut setup = settings.build_with_apis(scram, apis)?;
    super::gss::finish_listener(&mut setup)?;
    let mut jwks = Vec::with_capacity(setup.jwks.len());
    for (url, validator, http) in std::mem::take(&mut setup.jwks) {
        let http = HttpSettings::from_pairs(http.iter())?;
        let fetcher = Arc::new(jwks_endpoint(&url, &http, validator)?);
        setup.with_oauthbearer_validator(fetcher.clone())?;
        jwks.push((url, fetcher));
    }
    Ok(Listener { setup, jwks })
}
