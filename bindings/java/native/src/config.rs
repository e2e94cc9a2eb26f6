//! `Config.check`, `Config.saslListeners` and `ServerConfig.fromProperties`: the core's reading
//! of `.properties` text, as records and handles.

use std::sync::Arc;

use jni::objects::{JLongArray, JObject, JString};
use jni::sys::jlong;
use ksasl::config::{check, choose_listener, sasl_listeners, Properties, ServerSettings};
use ksasl::kafka::config::ServerConfig;
use ksasl::CredentialLookup;

use crate::glue::{get, into_handle, natives, opt_string, string, Rec};
use crate::oauth::Jwks;
use crate::objects::Store;

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
        let setup = ServerSettings::from_text(&text, &listener)?.build_with_apis(scram, &apis)?;
        let config = setup.config.map_or(0, into_handle::<Arc<ServerConfig>>);
        let r = Rec::default().i64(config).i32(setup.jwks.len() as i32);
        let r = setup.jwks.into_iter().fold(r, |r, (url, validator, http)| {
            let r = r.str(&url).i64(into_handle::<Jwks>(validator));
            r.strs(http.iter().flat_map(|(k, v)| [k, v]))
        });
        r.done(env)
    }
}
