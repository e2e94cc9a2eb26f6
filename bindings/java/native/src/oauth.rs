//! OAUTHBEARER: validators (JWKS, unsecured, Java code), unsecured tokens, the refresher and
//! the tracker.

use std::sync::Arc;

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jdouble, jlong};
use jni::JNIEnv;
use ksasl::mech::oauthbearer::HostTokenValidator;
use ksasl::refresh::{RefreshConfig, RefreshConfigBuilder, Refresher, Tracker, TrackerConfig};
use ksasl::session::ClientSession;
use ksasl::{
    Error, ErrorCode, JwksValidator, JwtValidatorConfig, OAuthBearerToken, Secret, SharedRandom,
    TokenValidator, UnsecuredTokenBuilder, UnsecuredValidator, UnsecuredValidatorConfig,
};

use crate::glue::{
    bytes, call_host, free, get, get_mut, into_handle, jstr, long, natives, obj, opt, opt_strings,
    raw, setters, string, strings, up, JResult, Rec, Up,
};
use crate::objects::registry_mut;

pub(crate) type Jwks = Arc<JwksValidator>;
pub(crate) type Refr = Arc<Refresher>;

/// A token validator written in Java: `Native.callValidate` calls it and answers an accepted
/// token through `Native.validatorAnswer`.
fn java_validator(
    env: &mut JNIEnv<'_>,
    validator: &JObject<'_>,
) -> JResult<Arc<dyn TokenValidator>> {
    let v = env.new_global_ref(validator)?;
    Ok(Arc::new(HostTokenValidator(
        move |token: &str, now_ms: i64| {
            let mut accepted: Option<(String, i64)> = None;
            let slot = &mut accepted as *mut Option<(String, i64)> as jlong;
            call_host("token validator", true, |env| {
                let t = jstr(env, token)?;
                let args = [obj(v.as_obj()), obj(&t), long(now_ms), long(slot)];
                up(env, Up::CallValidate, &args).map(drop)
            })?;
            Ok(accepted)
        },
    )))
}

/// An `OAuthBearerToken` record: value, expiry, principal, extensions (names and values),
/// generation.
pub(crate) fn token<'l>(
    env: &mut JNIEnv<'l>,
    t: &OAuthBearerToken,
    ext: &[(&String, &String)],
    generation: u64,
) -> JResult<JObject<'l>> {
    let r = Rec::default()
        .str(t.value())
        .i64(t.expiry_ms())
        .str(t.principal());
    let r = r.strs(ext.iter().flat_map(|(k, v)| [*k, *v]));
    r.i64(generation as i64).done(env)
}

natives! {
    // --- OAUTHBEARER servers and clients of a registry
    fn registryAddOAuthUnsecured(
        env, h: jlong, scope: JObjectArray<'l>, skew: jlong, skew_set: jboolean,
    ) -> () {
        let mut c = UnsecuredValidatorConfig::default();
        if let Some(scope) = opt_strings(env, &scope)? {
            c.required_scope = scope;
        }
        if skew_set != 0 {
            c.allowable_clock_skew_ms = skew;
        }
        let v = UnsecuredValidator::new(c)?;
        registry_mut(h).register_cached_oauthbearer_server(Arc::new(v));
        Ok(())
    }
    registryAddOAuthJwks(_env, h: jlong, jwks: jlong) -> ()
        = registry_mut(h).register_cached_oauthbearer_server(get::<Jwks>(jwks).clone());
    registryAddOAuthValidator(env, h: jlong, validator: JObject<'l>) -> ()
        = registry_mut(h).register_cached_oauthbearer_server(java_validator(env, &validator)?);
    fn validatorAnswer(env, slot: jlong, principal: JString<'l>, expiry: jlong) -> () {
        let principal = string(env, &principal, "principal")?;
        // SAFETY: `slot` is the answer of the `java_validator` call running on this thread.
        *unsafe { &mut *(slot as *mut Option<(String, i64)>) } = Some((principal, expiry));
        Ok(())
    }
    registryAddOAuthClient(_env, h: jlong, refresher: jlong) -> ()
        = registry_mut(h).register_oauthbearer_client(get::<Refr>(refresher).clone());

    // --- JwksValidator and its configuration
    jwtConfigNew(_env) -> i64 = into_handle(JwtValidatorConfig::default());
    jwtConfigFree(_env, c: jlong) -> () = free::<JwtValidatorConfig>(c);
}

setters! { JwtValidatorConfig:
    jwtConfigSetIssuer(env, issuer: JString<'l>)
        |c| c.expected_issuer = Some(string(env, &issuer, "issuer")?);
    jwtConfigSetAudiences(env, audiences: JObjectArray<'l>)
        |c| c.expected_audiences = strings(env, &audiences)?;
    jwtConfigSetClockSkewMs(_env, ms: jlong) |c| c.clock_skew_ms = ms;
    jwtConfigSetSubjectClaimName(env, name: JString<'l>)
        |c| c.subject_claim_name = string(env, &name, "name")?;
    jwtConfigSetScopeClaimName(env, name: JString<'l>)
        |c| c.scope_claim_name = string(env, &name, "name")?;
    jwtConfigSetValidateIat(_env, on: jboolean) |c| c.validate_iat = on != 0;
    jwtConfigSetAlgorithms(env, names: JObjectArray<'l>)
        |c| c.set_algorithm_names(&strings(env, &names)?)?;
    jwtConfigSetHmacSecret(env, secret: JByteArray<'l>)
        |c| c.hmac_secret = Some(Secret::new(bytes(env, &secret, "secret")?.to_vec()));
    // A negative size becomes 0, which the core refuses.
    jwtConfigSetMaxTokenSize(_env, n: jlong) |c| c.max_token_size = usize::try_from(n).unwrap_or(0);
    jwtConfigSetRefreshPeriodMs(_env, ms: jlong) |c| c.refresh_period_ms = ms;
    jwtConfigSetUnknownKidIntervalMs(_env, ms: jlong) |c| c.unknown_kid_interval_ms = ms;
}

natives! {
    jwksNew(_env, c: jlong) -> i64
        = into_handle::<Jwks>(Arc::new(JwksValidator::new(get::<JwtValidatorConfig>(c).clone())?));
    jwksFree(_env, h: jlong) -> () = free::<Jwks>(h);
    jwksSet(env, h: jlong, json: JString<'l>, now: jlong) -> i32
        = get::<Jwks>(h).set_jwks(&string(env, &json, "jwksJson")?, now)? as i32;
    jwksNextRefresh(_env, h: jlong) -> i64 = get::<Jwks>(h).next_refresh_ms();
    fn jwksValidate(env, h: jlong, token: JString<'l>, now: jlong) -> JObject<'l> {
        let token = string(env, &token, "token")?;
        let v = get::<Jwks>(h)
            .validate(&token, now)
            .map_err(|r| r.into_error())?;
        Rec::default()
            .str(&v.principal)
            .i64(v.expiry_ms)
            .strs(&v.scope)
            .done(env)
    }
    fn unsecuredToken(
        env, principal: JString<'l>, lifetime_seconds: jlong, scope: JObjectArray<'l>, now: jlong,
    ) -> JObject<'l> {
        let principal = string(env, &principal, "principal")?;
        let mut b =
            UnsecuredTokenBuilder::for_principal(&principal).lifetime_seconds(lifetime_seconds);
        if let Some(s) = opt_strings(env, &scope)? {
            b = b.list_claim("scope", &s.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        let t = b.build(now)?;
        token(env, &t, &[], 0)
    }

    // --- Refresher and its configuration
    refreshConfigNew(_env) -> i64 = into_handle(RefreshConfig::builder());
    refreshConfigFree(_env, c: jlong) -> () = free::<RefreshConfigBuilder>(c);
}

setters! { RefreshConfigBuilder:
    refreshConfigSetWindowFactor(_env, v: jdouble) |b| b.window_factor(v);
    refreshConfigSetWindowJitter(_env, v: jdouble) |b| b.window_jitter(v);
    refreshConfigSetMinPeriodSeconds(_env, v: jlong) |b| b.min_period_seconds(v);
    refreshConfigSetBufferSeconds(_env, v: jlong) |b| b.buffer_seconds(v);
    refreshConfigSetReloginAllowedBeforeLogout(_env, v: jboolean)
        |b| b.relogin_allowed_before_logout(v != 0);
    refreshConfigSetRetryBackoffMs(_env, v: jlong) |b| b.retry_backoff_ms(v);
    refreshConfigSetRetryBackoffMaxMs(_env, v: jlong) |b| b.retry_backoff_max_ms(v);
}

natives! {
    fn refresherNew(_env, c: jlong) -> i64 {
        let config = get_mut::<RefreshConfigBuilder>(c).build()?;
        Ok(into_handle::<Refr>(Arc::new(Refresher::new(
            config,
            SharedRandom::default(),
        ))))
    }
    refresherFree(_env, h: jlong) -> () = free::<Refr>(h);
    refresherPoll(_env, h: jlong, now: jlong) -> bool = get::<Refr>(h).poll(now);
    refresherRunDue(_env, h: jlong, now: jlong) -> bool = get::<Refr>(h).run_due(now);
    fn refresherSetToken(
        env, h: jlong, token: JString<'l>, expiry: jlong, principal: JString<'l>,
        extensions: JObjectArray<'l>, now: jlong,
    ) -> i64 {
        let token = string(env, &token, "token")?;
        let principal = string(env, &principal, "principal")?;
        let ext = strings(env, &extensions)?;
        let ext: Vec<(&str, &str)> = ext
            .chunks_exact(2)
            .map(|c| (c[0].as_str(), c[1].as_str()))
            .collect();
        Ok(get::<Refr>(h).set_token(&token, expiry, &principal, &ext, now)? as i64)
    }
    refresherSetTokenFailure(env, h: jlong, reason: JString<'l>, now: jlong) -> ()
        = get::<Refr>(h).set_token_failure(&string(env, &reason, "reason")?, now);
    refresherNextDeadline(_env, h: jlong) -> i64 = raw(get::<Refr>(h).next_deadline());
    refresherGeneration(_env, h: jlong) -> i64 = get::<Refr>(h).generation() as i64;
    fn refresherCurrent(env, h: jlong, now: jlong) -> JObject<'l> {
        let (t, e, g) = get::<Refr>(h).current_token(now)?;
        token(env, &t, &e.map().iter().collect::<Vec<_>>(), g)
    }

    // --- Tracker
    fn trackerNew(_env, refresher: jlong, spread: jlong, spread_set: jboolean) -> i64 {
        let mut c = TrackerConfig::default();
        if spread_set != 0 {
            c.spread_window_ms = spread;
        }
        let r = get::<Refr>(refresher).clone();
        Ok(into_handle(Tracker::new(r, c)?))
    }
    trackerFree(_env, h: jlong) -> () = free::<Tracker>(h);
    fn trackerAuthenticated(
        _env, h: jlong, id: jlong, generation: jlong, lifetime: jlong, reauth_at: jlong,
        expiry: jlong,
    ) -> () {
        let (Ok(id), Ok(generation)) = (u64::try_from(id), u64::try_from(generation)) else {
            let e = Error::new(
                ErrorCode::InvalidArgument,
                "connection ids and generations are not negative",
            );
            return Err(e.into());
        };
        let s = ClientSession {
            lifetime_ms: lifetime,
            reauth_at_ms: opt(reauth_at),
            expiry_ms: opt(expiry),
            latency_ms: 0,
        };
        Ok(get::<Tracker>(h).authenticated(id, generation, &s)?)
    }
    trackerForget(_env, h: jlong, id: jlong) -> () = get::<Tracker>(h).forget(id as u64);
    trackerNextDeadline(_env, h: jlong) -> i64 = raw(get::<Tracker>(h).next_deadline());
    fn trackerPoll(env, h: jlong, now: jlong) -> JObject<'l> {
        let p = get::<Tracker>(h).poll(now);
        let mut v = vec![p.refresh as i64];
        v.extend(p.reauthenticate.iter().map(|id| *id as i64));
        let a = env.new_long_array(v.len() as i32)?;
        env.set_long_array_region(&a, 0, &v)?;
        Ok(a.into())
    }
}
