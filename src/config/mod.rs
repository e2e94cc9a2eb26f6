//! Configuration by the names users already have: Java `.properties` files, Kafka's
//! `sasl.jaas.config` strings, Kafka's client and broker property names and librdkafka's.
//!
//! - [`Properties`]: `.properties` text as Java reads it.
//! - [`jaas`]: Kafka's JAAS grammar and error texts.
//! - [`ClientSettings`]: a client's mechanism, credential, extensions and refresh schedule
//!   from Kafka's or librdkafka's names.
//! - [`ServerSettings`]: one broker listener's mechanisms, JAAS entries, session lifetimes
//!   and limits from `server.properties`, with Kafka's listener and mechanism prefixes.
//!
//! Everything here is pure: no file is read (the caller hands in the text), no clock.

pub mod build;
pub mod client;
pub mod jaas;
pub mod properties;
pub mod server;

pub use build::{ClientLogin, ClientSetup, ServerSetup};
pub use client::{
    ClientCredential, ClientSettings, SecurityProtocol, UnsecuredClaim, UnsecuredLogin,
};
pub use jaas::{ControlFlag, JaasEntry};
pub use properties::{is_secret_key, Properties};
pub use server::{
    choose_listener, listener_address, sasl_listeners, DelegationTokenSettings, ServerMechanism,
    ServerSettings,
};

use crate::error::Result;

/// Every property name the parsers read, with where it comes from: `kafka` (a name of Kafka
/// 4.4's client or broker configuration), `librdkafka` (a name of librdkafka's), or `ksasl`
/// (ksasl's own, always prefixed `ksasl.`). A name of both Kafka and librdkafka is listed
/// under each. Sorted, without duplicates within a namespace.
pub fn known_names() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    let mut kafka: Vec<&'static str> = client::KAFKA_CLIENT_NAMES
        .iter()
        .chain(server::KAFKA_BROKER_NAMES)
        .copied()
        .collect();
    kafka.sort_unstable();
    kafka.dedup();
    out.extend(kafka.into_iter().map(|n| ("kafka", n)));
    let mut rd: Vec<&'static str> = client::LIBRDKAFKA_CLIENT_NAMES.to_vec();
    rd.sort_unstable();
    rd.dedup();
    out.extend(rd.into_iter().map(|n| ("librdkafka", n)));
    let mut own: Vec<&'static str> = client::KSASL_CLIENT_NAMES.to_vec();
    own.sort_unstable();
    out.extend(own.into_iter().map(|n| ("ksasl", n)));
    out
}

/// What [`check`] found in a configuration: its effective settings, the names it did not
/// know and the settings without effect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigReport {
    /// `client`, or `listener <NAME>` for a listener of a broker configuration.
    pub scope: String,
    /// The effective settings, secrets shown as `[hidden]`.
    pub effective: Vec<(String, String)>,
    /// `sasl.*` and `ksasl.*` names not known.
    pub unknown: Vec<String>,
    /// Settings without effect.
    pub warnings: Vec<String>,
}

impl ConfigReport {
    /// The report as lines: `[scope]`, then `name=value` for each effective setting, then
    /// `unknown <name>` and `warning <text>` lines. The form `ksasl config check` prints and
    /// every binding's tests read.
    pub fn to_text(&self) -> String {
        let mut out = format!("[{}]\n", self.scope);
        for (k, v) in &self.effective {
            out.push_str(&format!("{k}={v}\n"));
        }
        for u in &self.unknown {
            out.push_str(&format!("unknown {u}\n"));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning {w}\n"));
        }
        out
    }
}

/// Whether `.properties` look like a broker's: they name listeners or enabled mechanisms, or
/// a node's role.
pub fn is_server_config(props: &Properties) -> bool {
    props.keys().any(|k| {
        k == "listeners"
            || k == "sasl.enabled.mechanisms"
            || k == "process.roles"
            || k == "node.id"
            || k == "broker.id"
            || k.starts_with("listener.name.")
    })
}

/// Checks a configuration as the library would read it. `listener`: `None` reads a client
/// configuration, unless the text looks like a broker's ([`is_server_config`]), in which
/// case every SASL listener of `listeners` is read; `Some(name)` reads that listener of a
/// broker configuration.
pub fn check(text: &str, listener: Option<&str>) -> Result<Vec<ConfigReport>> {
    check_properties(&Properties::parse(text)?, listener)
}

/// [`check`] for properties already read.
pub fn check_properties(props: &Properties, listener: Option<&str>) -> Result<Vec<ConfigReport>> {
    let server = |name: &str| -> Result<ConfigReport> {
        let s = ServerSettings::from_properties(props, name)?;
        Ok(ConfigReport {
            scope: format!("listener {}", s.listener),
            effective: s.effective(),
            unknown: s.unknown.clone(),
            warnings: s.warnings.clone(),
        })
    };
    match listener {
        Some(name) => Ok(vec![server(name)?]),
        None if is_server_config(props) => {
            let listeners = sasl_listeners(props)?;
            if listeners.is_empty() {
                return Err(client::invalid(
                    "this broker configuration has no SASL listener in listeners (with \
                     listener.security.protocol.map); name one to check",
                ));
            }
            listeners.iter().map(|l| server(l)).collect()
        }
        None => {
            let s = ClientSettings::from_properties(props)?;
            Ok(vec![ConfigReport {
                scope: "client".into(),
                effective: s.effective(),
                unknown: s.unknown.clone(),
                warnings: s.warnings.clone(),
            }])
        }
    }
}

/// [`check`] of a file's bytes ([`Properties::parse_bytes`]), as text: the reports'
/// [`ConfigReport::to_text`] one after the other (what the C ABI hands out).
pub fn check_text(bytes: &[u8], listener: Option<&str>) -> Result<String> {
    Ok(
        check_properties(&Properties::parse_bytes(bytes)?, listener)?
            .iter()
            .map(ConfigReport::to_text)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_namespace() {
        let names = known_names();
        assert!(names.contains(&("kafka", "sasl.jaas.config")));
        assert!(names.contains(&("kafka", "connections.max.reauth.ms")));
        assert!(names.contains(&("librdkafka", "sasl.username")));
        assert!(names
            .iter()
            .all(|(ns, n)| (*ns == "ksasl") == n.starts_with("ksasl.")));
    }

    #[test]
    fn reports_as_text() {
        let t = check_text(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.typo=1\n\
             sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=\"p-XYZ\";"
                .as_bytes(),
            None,
        )
        .unwrap();
        assert_eq!(
            t,
            "[client]\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN\ncredential=password\n\
             username=u\npassword=[hidden]\nunknown sasl.typo\n"
        );
        let broker = "listeners=A://:1,B://:2\nlistener.security.protocol.map=A:SASL_SSL,B:PLAINTEXT\n\
             sasl.enabled.mechanisms=SCRAM-SHA-256\n\
             listener.name.a.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;";
        let r = check(broker, None).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].scope, "listener A");
        assert!(check(broker, Some("B")).is_err());
        assert!(check("listeners=P://:1", None).is_err());
    }
}
