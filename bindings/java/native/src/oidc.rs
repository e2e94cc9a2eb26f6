//! OIDC: token logins at an identity provider and JWKS endpoints over HTTPS, configured by
//! Kafka's property names (the core's `OidcSettings::set` and `HttpSettings::set`).

use std::sync::Arc;

use jni::objects::{JObject, JObjectArray, JString};
use jni::sys::jlong;
use ksasl::background::BackgroundRefresher;
use ksasl::io::http::{jwks_endpoint, HttpSettings, JwksFetcher, OidcLogin, OidcSettings};
use ksasl::mech::oauthbearer::SaslExtensions;
use ksasl::SharedRandom;

use crate::glue::{free, get, into_handle, natives, string, strings};
use crate::oauth::{token, Jwks, Refr};
use crate::objects::registry_mut;

type Login = Arc<OidcLogin>;
pub(crate) type Endpoint = Arc<JwksFetcher>;

/// Name/value pairs from a flat array (`[name0, value0, name1, value1, ...]`).
fn pairs(list: &[String]) -> impl Iterator<Item = (&str, &str)> {
    list.chunks_exact(2).map(|c| (c[0].as_str(), c[1].as_str()))
}

natives! {
    fn oidcLoginNew(env, settings: JObjectArray<'l>) -> i64 {
        let list = strings(env, &settings)?;
        let s = OidcSettings::from_pairs(pairs(&list))?;
        Ok(into_handle::<Login>(Arc::new(s.login(SharedRandom::default())?)))
    }
    oidcLoginFree(_env, h: jlong) -> () = free::<Login>(h);
    fn oidcLoginFetch(env, h: jlong, now: jlong) -> JObject<'l> {
        let t = get::<Login>(h).fetch(now)?;
        token(env, &t, &[], 0)
    }
    fn oidcLoginStart(env, h: jlong, refresher: jlong, extensions: JObjectArray<'l>) -> i64 {
        let list = strings(env, &extensions)?;
        let ext = SaslExtensions::from_pairs(pairs(&list))?;
        let (login, r) = (get::<Login>(h).clone(), get::<Refr>(refresher).clone());
        Ok(into_handle(BackgroundRefresher::start_oidc(login, r, ext)?))
    }
    oidcRefreshStop(_env, h: jlong) -> () = free::<BackgroundRefresher>(h);

    fn jwksEndpointNew(env, url: JString<'l>, validator: jlong, settings: JObjectArray<'l>) -> i64 {
        let url = string(env, &url, "url")?;
        let list = strings(env, &settings)?;
        let http = HttpSettings::from_pairs(pairs(&list))?;
        let v = get::<Jwks>(validator).clone();
        Ok(into_handle::<Endpoint>(Arc::new(jwks_endpoint(&url, &http, v)?)))
    }
    jwksEndpointFree(_env, h: jlong) -> () = free::<Endpoint>(h);
    jwksEndpointFetch(_env, h: jlong, now: jlong) -> i64
        = get::<Endpoint>(h).fetch(now).map(|n| n as i64);
    jwksEndpointPoll(_env, h: jlong, now: jlong) -> i64 = get::<Endpoint>(h).poll(now);
    fn jwksEndpointStart(_env, h: jlong) -> i64 {
        Ok(into_handle(BackgroundRefresher::start_jwks(get::<Endpoint>(h).clone())?))
    }
    jwksFetchingStop(_env, h: jlong) -> () = free::<BackgroundRefresher>(h);
    registryAddOAuthJwksEndpoint(_env, h: jlong, e: jlong) -> ()
        = registry_mut(h).register_cached_oauthbearer_server(get::<Endpoint>(e).clone());
}
