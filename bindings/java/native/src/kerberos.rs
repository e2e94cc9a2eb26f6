//! GSSAPI (Kerberos): logins and their background renewal, and the GSSAPI clients and servers
//! of a registry.

use std::sync::Arc;

use jni::objects::JString;
use jni::sys::{jboolean, jdouble, jlong};
use ksasl::background::BackgroundRefresher;
use ksasl::io::gss::{self, GssapiServerSettings, KerberosLogin};
use ksasl::OsRandom;

use crate::glue::{free, get, into_handle, natives, opt_string, raw, string};
use crate::objects::registry_mut;

type Login = Arc<KerberosLogin>;

/// A value Java passed with its "given" flag (a null boxed value: not given).
fn given<T>(v: T, set: jboolean) -> Option<T> {
    (set != 0).then_some(v)
}

natives! {
    gssapiAvailable(_env) -> bool = gss::available();
    fn kerberosLoginNew(
        env, principal: JString<'l>, keytab: JString<'l>, ccache: JString<'l>, factor: jdouble,
        factor_set: jboolean, jitter: jdouble, jitter_set: jboolean, min_ms: jlong,
        min_set: jboolean,
    ) -> i64 {
        let (p, k) = (opt_string(env, &principal)?, opt_string(env, &keytab)?);
        let c = opt_string(env, &ccache)?;
        let login = KerberosLogin::from_settings(
            p.as_deref(),
            k.as_deref(),
            c.as_deref(),
            given(factor, factor_set),
            given(jitter, jitter_set),
            given(min_ms, min_set),
        )?;
        Ok(into_handle::<Login>(Arc::new(login)))
    }
    kerberosLoginFree(_env, h: jlong) -> () = free::<Login>(h);
    kerberosLoginLogin(_env, h: jlong, now: jlong) -> () = get::<Login>(h).login(now, &OsRandom);
    kerberosLoginPoll(_env, h: jlong, now: jlong) -> bool = get::<Login>(h).poll(now, &OsRandom);
    kerberosLoginNextLogin(_env, h: jlong) -> i64 = raw(get::<Login>(h).next_login_ms());
    kerberosLoginTicketEnd(_env, h: jlong) -> i64 = raw(get::<Login>(h).ticket_end_ms());
    kerberosLoginLogins(_env, h: jlong) -> i64 = get::<Login>(h).logins() as i64;
    kerberosLoginFailures(_env, h: jlong) -> i64 = get::<Login>(h).failures() as i64;
    fn kerberosRenewalStart(_env, h: jlong) -> i64 {
        Ok(into_handle(BackgroundRefresher::start_kerberos(get::<Login>(h).clone())?))
    }
    kerberosRenewalStop(_env, h: jlong) -> () = free::<BackgroundRefresher>(h);

    // --- GSSAPI clients and servers of a registry
    fn registryAddGssapiClient(
        env, h: jlong, login: jlong, service_name: JString<'l>, host: JString<'l>,
        mutual: jboolean,
    ) -> () {
        let service = string(env, &service_name, "serviceName")?;
        let host = string(env, &host, "host")?;
        let login = get::<Login>(login);
        Ok(gss::register_client(&mut registry_mut(h), login, &service, &host, mutual != 0)?)
    }
    fn registryAddGssapiServer(
        env, h: jlong, keytab: JString<'l>, principal: JString<'l>, service_name: JString<'l>,
        rules: JString<'l>, cap: jboolean,
    ) -> () {
        let (k, p) = (opt_string(env, &keytab)?, opt_string(env, &principal)?);
        let (s, r) = (opt_string(env, &service_name)?, opt_string(env, &rules)?);
        let settings = GssapiServerSettings::from_settings(
            k.as_deref(),
            p.as_deref(),
            s.as_deref(),
            r.as_deref(),
            cap != 0,
        )?;
        Ok(gss::register_server(&mut registry_mut(h), &settings)?)
    }
}
