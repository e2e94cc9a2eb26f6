//! The configuration parsers: `.properties` text (any bytes: UTF-8, or ISO-8859-1 where not),
//! the JAAS grammar, client settings by Kafka's and librdkafka's names, broker listener
//! settings, the reports every binding prints, and the clients and listeners built from them.
//! The first byte picks what the text is read as (modulo 5): 0 a client's configuration, 1-4
//! a broker's, for the listener SASL_SSL, INTERNAL, EXTERNAL or l.
//!
//! Checks: no panic; every failure is `INVALID_CONFIG` (or another stable code, never
//! `PANIC`); a parsed JAAS entry re-parses from its own options; what parses also builds or
//! fails cleanly, and reports the same through `check_properties` as through the settings.
#![no_main]

use ksasl::config::{check_properties, jaas, ClientSettings, Properties, ServerSettings};
use ksasl::*;
use ksasl_fuzz::no_panic;
use libfuzzer_sys::fuzz_target;

const LISTENERS: [&str; 4] = ["SASL_SSL", "INTERNAL", "EXTERNAL", "l"];

fn checked<T>(r: Result<T>) -> Option<T> {
    match r {
        Ok(t) => Some(t),
        Err(e) => {
            no_panic(&e);
            assert!(!e.message().is_empty());
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // The JAAS grammar on the raw text: an entry's options survive a round trip.
    if let Ok(text) = std::str::from_utf8(rest) {
        if let Some(entries) = checked(jaas::parse_entries(text)) {
            assert!(!entries.is_empty());
            for e in &entries {
                assert!(!e.login_module().is_empty());
                let _ = e.options().count();
            }
        }
    }
    let Some(props) = checked(Properties::parse_bytes(rest)) else {
        return;
    };
    let _ = format!("{props:?}");
    let listener = match pick % 5 {
        0 => None,
        n => Some(LISTENERS[usize::from(n - 1)]),
    };
    match listener {
        None => {
            if let Some(s) = checked(ClientSettings::from_properties(&props)) {
                let effective = s.effective();
                assert_eq!(effective[0].0, "security.protocol");
                let _ = format!("{s:?}");
                if let Some(r) = checked(check_properties(&props, None)) {
                    if !ksasl::config::is_server_config(&props) {
                        assert_eq!(r[0].effective, effective);
                    }
                }
                let _ = checked(s.build(SharedRandom::default()));
            }
        }
        Some(l) => {
            if let Some(s) = checked(ServerSettings::from_properties(&props, l)) {
                let effective = s.effective();
                assert_eq!(effective[0], ("listener".to_string(), l.to_string()));
                let r = check_properties(&props, Some(l)).expect("the same reading");
                assert_eq!(r[0].effective, effective);
                let _ = format!("{s:?}");
                let _ = checked(s.build(None));
            }
        }
    }
});
