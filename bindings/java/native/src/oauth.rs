//! OAUTHBEARER: validators (JWKS, unsecured, host code), unsecured tokens, the refresher and
//! the tracker.

use std::sync::Arc;

use jni::objects::{GlobalRef, JClass, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jdouble, jint, jlong, jlongArray, jobjectArray};
use jni::JNIEnv;
use ksasl::kafka::client::ClientSession;
use ksasl::refresh::{RefreshConfig, Refresher, Tracker, TrackerConfig};
use ksasl::{
    CachingValidator, Error, ErrorCode, JwksValidator, JwtValidatorConfig, SharedRandom,
    TokenRejection, TokenValidator, UnsecuredTokenBuilder, UnsecuredValidator,
    UnsecuredValidatorConfig, ValidatedToken,
};

use crate::objects::{read_pairs, Registry};
use crate::{
    callback, entry, into_handle, jlong_box, jstring, locked, native_class, obj, object_array, opt,
    opt_string, raw, read_string_array, string, string_array,
};

type Jwks = Arc<JwksValidator>;
pub(crate) type Refr = Arc<Refresher>;

/// How many validated tokens an OAUTHBEARER server caches.
const VALIDATION_CACHE: usize = 4096;

fn register_validator(registry: jlong, v: Arc<dyn TokenValidator>) {
    locked(unsafe { obj::<Registry>(registry) })
        .register_oauthbearer_server(Arc::new(CachingValidator::new(v, VALIDATION_CACHE)));
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddOAuthUnsecured<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    scope: JObjectArray<'l>,
    skew: jlong,
) {
    entry(&mut env, (), |env| {
        let required_scope = read_string_array(env, &scope)?;
        let v = UnsecuredValidator::new(UnsecuredValidatorConfig {
            required_scope,
            allowable_clock_skew_ms: skew,
            ..Default::default()
        })?;
        register_validator(h, Arc::new(v));
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddOAuthJwks<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    jwks: jlong,
) {
    entry(&mut env, (), |_| {
        let v = unsafe { obj::<Jwks>(jwks) }.clone();
        register_validator(h, v);
        Ok(())
    })
}

/// A token validator implemented by a Java `TokenValidator`.
struct JavaValidator {
    validator: GlobalRef,
}

impl TokenValidator for JavaValidator {
    fn validate(&self, token: &str, now_ms: i64) -> Result<ValidatedToken, TokenRejection> {
        let r = callback("token validator", |env| {
            let t = env.new_string(token)?;
            let out = env
                .call_static_method(
                    native_class()?,
                    "callValidate",
                    "(Lorg/ksasl/TokenValidator;Ljava/lang/String;J)[Ljava/lang/Object;",
                    &[
                        JValue::Object(self.validator.as_obj()),
                        JValue::Object(&t),
                        JValue::Long(now_ms),
                    ],
                )?
                .l()?;
            if out.is_null() {
                return Ok(None);
            }
            let arr = JObjectArray::from(out);
            let p = JString::from(env.get_object_array_element(&arr, 0)?);
            let principal = string(env, &p, "principal")?;
            let e = env.get_object_array_element(&arr, 1)?;
            let expiry_ms = env.call_method(&e, "longValue", "()J", &[])?.j()?;
            Ok(Some((principal, expiry_ms)))
        });
        match r {
            Ok(Some((principal, expiry_ms))) => Ok(ValidatedToken {
                principal,
                expiry_ms,
                start_ms: None,
                scope: vec![],
                valid_from_ms: None,
                valid_until_ms: expiry_ms,
            }),
            Ok(None) => Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                "rejected by the host's validator",
            )),
            Err(e) => Err(TokenRejection::invalid_token(
                ErrorCode::TokenRejected,
                e.message(),
            )),
        }
    }
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddOAuthValidator<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    validator: JObject<'l>,
) {
    entry(&mut env, (), |env| {
        let validator = env.new_global_ref(&validator)?;
        register_validator(h, Arc::new(JavaValidator { validator }));
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddOAuthClient<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    refresher: jlong,
) {
    entry(&mut env, (), |_| {
        let r = unsafe { obj::<Refr>(refresher) }.clone();
        locked(unsafe { obj::<Registry>(h) }).register_oauthbearer_client(r);
        Ok(())
    })
}

// --- JwksValidator ----------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_jwksNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    issuer: JString<'l>,
    audience: JString<'l>,
    skew: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c = JwtValidatorConfig {
            expected_issuer: opt_string(env, &issuer)?,
            expected_audiences: opt_string(env, &audience)?.into_iter().collect(),
            clock_skew_ms: skew,
            ..Default::default()
        };
        Ok(into_handle::<Jwks>(Arc::new(JwksValidator::new(c)?)))
    })
}

crate::free_entry!(Java_org_ksasl_Native_jwksFree, Jwks);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_jwksSet<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    json: JString<'l>,
    now: jlong,
) -> jint {
    entry(&mut env, 0, |env| {
        let json = string(env, &json, "jwksJson")?;
        let n = unsafe { obj::<Jwks>(h) }.set_jwks(&json, now)?;
        Ok(n as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_jwksNextRefresh<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(unsafe { obj::<Jwks>(h) }.next_refresh_ms())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_jwksValidate<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    token: JString<'l>,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let token = string(env, &token, "token")?;
        let v = unsafe { obj::<Jwks>(h) }
            .validate(&token, now)
            .map_err(|rej| Error::new(rej.code, rej.reason).with_detail("status", rej.status))?;
        let items = vec![
            jstring(env, &v.principal)?,
            jlong_box(env, Some(v.expiry_ms))?,
            string_array(env, &v.scope)?.into(),
        ];
        Ok(object_array(env, items)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_unsecuredToken<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    principal: JString<'l>,
    lifetime_seconds: jlong,
    scope: JObjectArray<'l>,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let principal = string(env, &principal, "principal")?;
        let mut b =
            UnsecuredTokenBuilder::for_principal(&principal).lifetime_seconds(lifetime_seconds);
        if !scope.is_null() {
            let s = read_string_array(env, &scope)?;
            let items: Vec<&str> = s.iter().map(String::as_str).collect();
            b = b.list_claim("scope", &items)?;
        }
        let t = b.build(now)?;
        let items = vec![
            jstring(env, t.value())?,
            jlong_box(env, Some(t.expiry_ms()))?,
            jstring(env, t.principal())?,
        ];
        Ok(object_array(env, items)?.into_raw())
    })
}

// --- Refresher --------------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    window_factor: jdouble,
    window_jitter: jdouble,
    min_period_seconds: jlong,
    buffer_seconds: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        let c = RefreshConfig {
            window_factor,
            window_jitter,
            min_period_seconds,
            buffer_seconds,
            ..Default::default()
        };
        Ok(into_handle::<Refr>(Arc::new(Refresher::new(
            c,
            SharedRandom::default(),
        )?)))
    })
}

crate::free_entry!(Java_org_ksasl_Native_refresherFree, Refr);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherPoll<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(unsafe { obj::<Refr>(h) }.poll(now).into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherSetToken<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    token: JString<'l>,
    expiry: jlong,
    principal: JString<'l>,
    extensions: JObjectArray<'l>,
    now: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let token = string(env, &token, "token")?;
        let principal = string(env, &principal, "principal")?;
        let ext = read_pairs(env, &extensions)?;
        let pairs: Vec<(&str, &str)> = ext.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let g = unsafe { obj::<Refr>(h) }.set_token(&token, expiry, &principal, &pairs, now)?;
        Ok(g as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherSetTokenFailure<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    reason: JString<'l>,
    now: jlong,
) {
    entry(&mut env, (), |env| {
        let reason = string(env, &reason, "reason")?;
        Ok(unsafe { obj::<Refr>(h) }.set_token_failure(&reason, now)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherNextDeadline<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(raw(unsafe { obj::<Refr>(h) }
            .next_deadline()
            .map(|d| d.max(0))))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherGeneration<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(unsafe { obj::<Refr>(h) }.generation() as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherCurrent<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let (t, e, g) = unsafe { obj::<Refr>(h) }.current_token(now)?;
        let mut kv = Vec::new();
        for (k, v) in e.map() {
            kv.push(k.clone());
            kv.push(v.clone());
        }
        let items = vec![
            jstring(env, t.value())?,
            jlong_box(env, Some(t.expiry_ms()))?,
            jstring(env, t.principal())?,
            string_array(env, &kv)?.into(),
            jlong_box(env, Some(g as i64))?,
        ];
        Ok(object_array(env, items)?.into_raw())
    })
}

// --- Tracker ----------------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_trackerNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    refresher: jlong,
    spread: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        let r = unsafe { obj::<Refr>(refresher) }.clone();
        let c = TrackerConfig {
            spread_window_ms: spread,
            ..Default::default()
        };
        Ok(into_handle::<Tracker>(Tracker::new(r, c)?))
    })
}

crate::free_entry!(Java_org_ksasl_Native_trackerFree, Tracker);

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_trackerAuthenticated<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    id: jlong,
    generation: jlong,
    lifetime: jlong,
    reauth_at: jlong,
    expiry: jlong,
) {
    entry(&mut env, (), |_| {
        if id < 0 || generation < 0 {
            return Err(crate::invalid(
                "connection ids and generations are not negative",
            ));
        }
        let s = ClientSession {
            lifetime_ms: lifetime,
            reauth_at_ms: opt(reauth_at),
            expiry_ms: opt(expiry),
            latency_ms: 0,
        };
        Ok(unsafe { obj::<Tracker>(h) }.authenticated(id as u64, generation as u64, &s)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_trackerForget<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    id: jlong,
) {
    entry(&mut env, (), |_| {
        unsafe { obj::<Tracker>(h) }.forget(id as u64);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_trackerNextDeadline<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(raw(unsafe { obj::<Tracker>(h) }
            .next_deadline()
            .map(|d| d.max(0))))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_trackerPoll<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let p = unsafe { obj::<Tracker>(h) }.poll(now);
        let mut v = vec![p.refresh as i64];
        v.extend(p.reauthenticate.iter().map(|id| *id as i64));
        let a = env.new_long_array(v.len() as i32)?;
        env.set_long_array_region(&a, 0, &v)?;
        Ok(a.into_raw())
    })
}
