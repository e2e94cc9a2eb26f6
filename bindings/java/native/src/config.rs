//! `Config.check`, `Config.saslListeners`, `ServerConfig.fromProperties` and `ClientSetup`: the
//! core's reading of `.properties` text, as records and handles.

use std::sync::{Arc, Mutex};

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::JNIEnv;
use ksasl::config::{
    check, choose_listener, listener_address, sasl_listeners, ClientLogin, ClientSettings,
    ClientSetup, Properties, ServerSettings,
};
use ksasl::io::listener::{build_listener, Listener};
use ksasl::kafka::client::ClientConfig;
use ksasl::kafka::config::ServerConfig;
use ksasl::{CredentialLookup, SharedRandom};

use crate::glue::{free, get, into_handle, natives, opt_string, string, strings, JResult, Rec};
use crate::oauth::Refr;
use crate::objects::{registry, Authority, Store};
use crate::oidc::Endpoint;

/// A `ClientSetup` handle: the core's, locked for `with_registry`.
type Setup = Mutex<ClientSetup>;

/// The record of a built client: the configuration and refresher handles (0: none), the login
/// (0 ready, 1 OIDC, 2 host token, 3 Kerberos) with Kerberos' service name, principal and keytab
/// (null otherwise), mechanism, security protocol, unknown names, warnings, effective settings
/// (names and values), and the handle of the core's `ClientSetup`.
fn client_setup<'l>(env: &mut JNIEnv<'l>, props: Properties) -> JResult<JObject<'l>> {
    let s = ClientSettings::from_properties(&props)?;
    let built = s.build(SharedRandom::default())?;
    let config = built
        .config
        .clone()
        .map_or(0, into_handle::<Arc<ClientConfig>>);
    let refresher = built.refresher.clone().map_or(0, into_handle::<Refr>);
    let r = Rec::default().i64(config).i64(refresher);
    let r = match &built.login {
        ClientLogin::Ready => r.u8(0).bytes(None).bytes(None).bytes(None),
        ClientLogin::Oidc => r.u8(1).bytes(None).bytes(None).bytes(None),
        ClientLogin::HostToken(_) => r.u8(2).bytes(None).bytes(None).bytes(None),
        ClientLogin::Kerberos {
            service_name,
            principal,
            keytab,
        } => r
            .u8(3)
            .str(service_name)
            .bytes(principal.as_deref().map(str::as_bytes))
            .bytes(keytab.as_deref().map(str::as_bytes)),
    };
    let r = r.str(&s.mechanism).str(s.security_protocol.name());
    let r = r.strs(&s.unknown).strs(&s.warnings);
    let r = r.strs(s.effective().iter().flat_map(|(k, v)| [k, v]));
    r.i64(into_handle::<Setup>(Mutex::new(built))).done(env)
}

natives! {
    fn configCheck(env, text: JString<'l>, listener: JString<'l>) -> JObject<'l> {
        let text = string(env, &text, "text")?;
        let reports = check(&text, opt_string(env, &listener)?.as_deref())?;
        let r = Rec::default().i32(reports.len() as i32);
        let r = reports.iter().fold(r, |r, c| {
            let r = r.str(&c.scope).strs(c.effective.iter().flat_map(|(k, v)| [k, v]));
            r.strs(&c.unknown).strs(&c.warnings)
        });
        r.done(env)
    }
    fn configSaslListeners(env, text: JString<'l>) -> JObject<'l> {
        let props = Properties::parse(&string(env, &text, "text")?)?;
        Rec::default().strs(sasl_listeners(&props)?).done(env)
    }
    fn configChooseListener(env, text: JString<'l>, listener: JString<'l>) -> JObject<'l> {
        let props = Properties::parse(&string(env, &text, "text")?)?;
        let chosen = choose_listener(&props, opt_string(env, &listener)?.as_deref())?;
        Rec::default().str(&chosen).done(env)
    }
    fn configListenerAddress(env, text: JString<'l>, listener: JString<'l>) -> JObject<'l> {
        let props = Properties::parse(&string(env, &text, "text")?)?;
        match listener_address(&props, &string(env, &listener, "listener")?)? {
            Some((host, port)) => Rec::default().i32(1).str(&host).i32(port.into()).done(env),
            None => Rec::default().i32(0).done(env),
        }
    }
    fn serverSetupBuild(
        env, text: JString<'l>, listener: JString<'l>, store: jlong, apis: JLongArray<'l>,
    ) -> JObject<'l> {
        let text = string(env, &text, "text")?;
        let listener = string(env, &listener, "listener")?;
        let scram = (store != 0).then(|| get::<Store>(store).clone() as Arc<dyn CredentialLookup>);
        // (api key, min, max) triples, flat.
        let mut flat = vec![0i64; env.get_array_length(&apis)? as usize];
        env.get_long_array_region(&apis, 0, &mut flat)?;
        let apis: Vec<_> = flat.chunks_exact(3).map(|t| (t[0], t[1], t[2])).collect();
        let settings = ServerSettings::from_text(&text, &listener)?;
        let Listener { setup, jwks: endpoints } = build_listener(&settings, scram, &apis)?;
        let config = setup.config.map_or(0, into_handle::<Arc<ServerConfig>>);
        let r = Rec::default().i64(config).i32(endpoints.len() as i32);
        let r = endpoints.into_iter().fold(r, |r, (url, fetcher)| {
            r.str(&url).i64(into_handle::<Endpoint>(fetcher))
        });
        r.i64(setup.tokens.map_or(0, into_handle::<Authority>))
            .done(env)
    }

    fn clientSetupFromText(env, text: JString<'l>) -> JObject<'l> {
        let props = Properties::parse(&string(env, &text, "text")?)?;
        client_setup(env, props)
    }
    fn clientSetupFromPairs(env, pairs: JObjectArray<'l>) -> JObject<'l> {
        let list = strings(env, &pairs)?;
        let pairs = list.chunks_exact(2).map(|c| (c[0].as_str(), c[1].as_str()));
        client_setup(env, Properties::from_pairs(pairs))
    }
    fn clientSetupWithRegistry(env, h: jlong, r: jlong, mechanism: JString<'l>) -> i64 {
        let mechanism = string(env, &mechanism, "mechanism")?;
        let mut setup = get::<Setup>(h).lock().unwrap_or_else(|p| p.into_inner());
        setup.with_registry(registry(r).clone(), &mechanism)?;
        Ok(setup.config.clone().map_or(0, into_handle::<Arc<ClientConfig>>))
    }
    clientSetupFree(_env, h: jlong) -> () = free::<Setup>(h);
}
