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
    call_host, free, get, get_mut, into_handle, jstr, long, natives, obj, opt, opt_strings, raw,
    string, strings, up, JResult, Rec, Up,
};
use crate::objects::registry_mut;

type Jwks = Arc<JwksValidator>;
pub(crate) type Refr = Arc<Refresher>;

/// A token validator written in Java: `Native.callValidate` calls it and answers an accepted
/// token through `Native.validatorAnswer`.
fn java_validator(
    env: &mut JNIEnv<'_>,
    validator: &JObject<'_>,
) -> JResult<Arc<dyn TokenValidator>> {
    let v = env.new_global_ref(validator)?;
    Ok(Arc::new(HostTokenValidator(move |token: &str, now_ms: i64| {
        let mut accepted: Option<(String, i64)> = None;
        let slot = &mut accepted as *mut Option<(String, i64)> as jlong;
        call_host("token validator", true, |env| {
            let t = jstr(env, token)?;
            up(env, Up::CallValidate, &[obj(v.as_obj()), obj(&t), long(now_ms), long(slot)])?;
            Ok(())
        })?;
        Ok(accepted)
    })))
}

/// An `OAuthBearerToken` record: value, expiry, principal, extensions (names and values),
/// generation.
fn token<'l>(
    env: &mut JNIEnv<'l>,
    t: &OAuthBearerToken,
    ext: &[(&String, &String)],
    generation: u64,
) -> JResult<JObject<'l>> {
    let r = Rec::default().str(t.value()).i64(t.expiry_ms()).str(t.principal());
    let r = r.strs(ext.iter().flat_map(|(k, v)| [*k, *v]));
    r.i64(generation as i64).done(env)
}

/// A deadline for Java: the core's `i64::MIN` ("now") is NONE there, and any past time
/// means "now" as well.
fn deadline(d: Option<i64>) -> i64 {
    raw(d.map(|d| d.max(0)))
}

fn jwt<'a>(c: jlong) -> &'a mut JwtValidatorConfig {
    get_mut::<JwtValidatorConfig>(c)
}

fn refresh<'a>(c: jlong) -> &'a mut RefreshConfigBuilder {
    get_mut::<RefreshConfigBuilder>(c)
}

natives! {
    // --- OAUTHBEARER servers and clients of a registry

    fn Java_org_ksasl_Native_registryAddOAuthUnsecured(env, h: jlong, scope: JObjectArray<'l>, skew: jlong, skew_set: jboolean) -> () {
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

    fn Java_org_ksasl_Native_registryAddOAuthJwks(_env, h: jlong, jwks: jlong) -> () {
        let v = get::<Jwks>(jwks).clone();
        registry_mut(h).register_cached_oauthbearer_server(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_registryAddOAuthValidator(env, h: jlong, validator: JObject<'l>) -> () {
        let v = java_validator(env, &validator)?;
        registry_mut(h).register_cached_oauthbearer_server(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_validatorAnswer(env, slot: jlong, principal: JString<'l>, expiry: jlong) -> () {
        let principal = string(env, &principal, "principal")?;
        // SAFETY: `slot` is the answer of the `java_validator` call running on this thread.
        *unsafe { &mut *(slot as *mut Option<(String, i64)>) } = Some((principal, expiry));
        Ok(())
    }

    fn Java_org_ksasl_Native_registryAddOAuthClient(_env, h: jlong, refresher: jlong) -> () {
        let r = get::<Refr>(refresher).clone();
        registry_mut(h).register_oauthbearer_client(r);
        Ok(())
    }

    // --- JwksValidator and its configuration

    fn Java_org_ksasl_Native_jwtConfigNew(_env) -> i64 {
        Ok(into_handle(JwtValidatorConfig::default()))
    }

    fn Java_org_ksasl_Native_jwtConfigFree(_env, c: jlong) -> () { free::<JwtValidatorConfig>(c) }

    fn Java_org_ksasl_Native_jwtConfigSetIssuer(env, c: jlong, issuer: JString<'l>) -> () {
        jwt(c).expected_issuer = Some(string(env, &issuer, "issuer")?);
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetAudiences(env, c: jlong, audiences: JObjectArray<'l>) -> () {
        jwt(c).expected_audiences = strings(env, &audiences)?;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetClockSkewMs(_env, c: jlong, ms: jlong) -> () {
        jwt(c).clock_skew_ms = ms;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetSubjectClaimName(env, c: jlong, name: JString<'l>) -> () {
        jwt(c).subject_claim_name = string(env, &name, "name")?;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetScopeClaimName(env, c: jlong, name: JString<'l>) -> () {
        jwt(c).scope_claim_name = string(env, &name, "name")?;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetValidateIat(_env, c: jlong, on: jboolean) -> () {
        jwt(c).validate_iat = on != 0;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetAlgorithms(env, c: jlong, names: JObjectArray<'l>) -> () {
        let names = strings(env, &names)?;
        Ok(jwt(c).set_algorithm_names(&names)?)
    }

    fn Java_org_ksasl_Native_jwtConfigSetHmacSecret(env, c: jlong, secret: JByteArray<'l>) -> () {
        jwt(c).hmac_secret = Some(Secret::new(crate::glue::bytes(env, &secret, "secret")?));
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetMaxTokenSize(_env, c: jlong, bytes: jlong) -> () {
        // A negative size becomes 0, which the core refuses.
        jwt(c).max_token_size = usize::try_from(bytes).unwrap_or(0);
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetRefreshPeriodMs(_env, c: jlong, ms: jlong) -> () {
        jwt(c).refresh_period_ms = ms;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwtConfigSetUnknownKidIntervalMs(_env, c: jlong, ms: jlong) -> () {
        jwt(c).unknown_kid_interval_ms = ms;
        Ok(())
    }

    fn Java_org_ksasl_Native_jwksNew(_env, c: jlong) -> i64 {
        Ok(into_handle::<Jwks>(Arc::new(JwksValidator::new(jwt(c).clone())?)))
    }

    fn Java_org_ksasl_Native_jwksFree(_env, h: jlong) -> () { free::<Jwks>(h) }

    fn Java_org_ksasl_Native_jwksSet(env, h: jlong, json: JString<'l>, now: jlong) -> i32 {
        let json = string(env, &json, "jwksJson")?;
        Ok(get::<Jwks>(h).set_jwks(&json, now)? as i32)
    }

    fn Java_org_ksasl_Native_jwksNextRefresh(_env, h: jlong) -> i64 {
        Ok(get::<Jwks>(h).next_refresh_ms())
    }

    fn Java_org_ksasl_Native_jwksValidate(env, h: jlong, token: JString<'l>, now: jlong) -> JObject<'l> {
        let token = string(env, &token, "token")?;
        let v = get::<Jwks>(h)
            .validate(&token, now)
            .map_err(|r| Error::new(r.code, r.reason).with_detail("status", r.status))?;
        Rec::default().str(&v.principal).i64(v.expiry_ms).strs(&v.scope).done(env)
    }

    fn Java_org_ksasl_Native_unsecuredToken(env, principal: JString<'l>, lifetime_seconds: jlong, scope: JObjectArray<'l>, now: jlong) -> JObject<'l> {
        let principal = string(env, &principal, "principal")?;
        let mut b = UnsecuredTokenBuilder::for_principal(&principal).lifetime_seconds(lifetime_seconds);
        if let Some(s) = opt_strings(env, &scope)? {
            b = b.list_claim("scope", &s.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        let t = b.build(now)?;
        token(env, &t, &[], 0)
    }

    // --- Refresher and its configuration

    fn Java_org_ksasl_Native_refreshConfigNew(_env) -> i64 {
        Ok(into_handle(RefreshConfig::builder()))
    }

    fn Java_org_ksasl_Native_refreshConfigFree(_env, c: jlong) -> () { free::<RefreshConfigBuilder>(c) }

    fn Java_org_ksasl_Native_refreshConfigSetWindowFactor(_env, c: jlong, v: jdouble) -> () {
        refresh(c).window_factor(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_refreshConfigSetWindowJitter(_env, c: jlong, v: jdouble) -> () {
        refresh(c).window_jitter(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_refreshConfigSetMinPeriodSeconds(_env, c: jlong, v: jlong) -> () {
        refresh(c).min_period_seconds(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_refreshConfigSetBufferSeconds(_env, c: jlong, v: jlong) -> () {
        refresh(c).buffer_seconds(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_refreshConfigSetReloginAllowedBeforeLogout(_env, c: jlong, v: jboolean) -> () {
        refresh(c).relogin_allowed_before_logout(v != 0);
        Ok(())
    }

    fn Java_org_ksasl_Native_refreshConfigSetRetryBackoffMs(_env, c: jlong, v: jlong) -> () {
        refresh(c).retry_backoff_ms(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_refreshConfigSetRetryBackoffMaxMs(_env, c: jlong, v: jlong) -> () {
        refresh(c).retry_backoff_max_ms(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_refresherNew(_env, c: jlong) -> i64 {
        let config = refresh(c).build()?;
        Ok(into_handle::<Refr>(Arc::new(Refresher::new(config, SharedRandom::default()))))
    }

    fn Java_org_ksasl_Native_refresherFree(_env, h: jlong) -> () { free::<Refr>(h) }

    fn Java_org_ksasl_Native_refresherPoll(_env, h: jlong, now: jlong) -> bool {
        Ok(get::<Refr>(h).poll(now))
    }

    fn Java_org_ksasl_Native_refresherSetToken(env, h: jlong, token: JString<'l>, expiry: jlong, principal: JString<'l>, extensions: JObjectArray<'l>, now: jlong) -> i64 {
        let token = string(env, &token, "token")?;
        let principal = string(env, &principal, "principal")?;
        let ext = strings(env, &extensions)?;
        let ext: Vec<(&str, &str)> = ext.chunks_exact(2).map(|c| (c[0].as_str(), c[1].as_str())).collect();
        Ok(get::<Refr>(h).set_token(&token, expiry, &principal, &ext, now)? as i64)
    }

    fn Java_org_ksasl_Native_refresherSetTokenFailure(env, h: jlong, reason: JString<'l>, now: jlong) -> () {
        let reason = string(env, &reason, "reason")?;
        Ok(get::<Refr>(h).set_token_failure(&reason, now)?)
    }

    fn Java_org_ksasl_Native_refresherNextDeadline(_env, h: jlong) -> i64 {
        Ok(deadline(get::<Refr>(h).next_deadline()))
    }

    fn Java_org_ksasl_Native_refresherGeneration(_env, h: jlong) -> i64 {
        Ok(get::<Refr>(h).generation() as i64)
    }

    fn Java_org_ksasl_Native_refresherCurrent(env, h: jlong, now: jlong) -> JObject<'l> {
        let (t, e, g) = get::<Refr>(h).current_token(now)?;
        token(env, &t, &e.map().iter().collect::<Vec<_>>(), g)
    }

    // --- Tracker

    fn Java_org_ksasl_Native_trackerNew(_env, refresher: jlong, spread: jlong, spread_set: jboolean) -> i64 {
        let mut c = TrackerConfig::default();
        if spread_set != 0 {
            c.spread_window_ms = spread;
        }
        let r = get::<Refr>(refresher).clone();
        Ok(into_handle(Tracker::new(r, c)?))
    }

    fn Java_org_ksasl_Native_trackerFree(_env, h: jlong) -> () { free::<Tracker>(h) }

    fn Java_org_ksasl_Native_trackerAuthenticated(_env, h: jlong, id: jlong, generation: jlong, lifetime: jlong, reauth_at: jlong, expiry: jlong) -> () {
        let (Ok(id), Ok(generation)) = (u64::try_from(id), u64::try_from(generation)) else {
            let e = Error::new(ErrorCode::InvalidArgument, "connection ids and generations are not negative");
            return Err(e.into());
        };
        let s = ClientSession { lifetime_ms: lifetime, reauth_at_ms: opt(reauth_at), expiry_ms: opt(expiry), latency_ms: 0 };
        Ok(get::<Tracker>(h).authenticated(id, generation, &s)?)
    }

    fn Java_org_ksasl_Native_trackerForget(_env, h: jlong, id: jlong) -> () {
        get::<Tracker>(h).forget(id as u64);
        Ok(())
    }

    fn Java_org_ksasl_Native_trackerNextDeadline(_env, h: jlong) -> i64 {
        Ok(deadline(get::<Tracker>(h).next_deadline()))
    }

    fn Java_org_ksasl_Native_trackerPoll(env, h: jlong, now: jlong) -> JObject<'l> {
        let p = get::<Tracker>(h).poll(now);
        let mut v = vec![p.refresh as i64];
        v.extend(p.reauthenticate.iter().map(|id| *id as i64));
        let a = env.new_long_array(v.len() as i32)?;
        env.set_long_array_region(&a, 0, &v)?;
        Ok(a.into())
    }
}
