//! Delegation tokens (KIP-48): the token authority, tokens as Java objects, tokens installed in
//! a refresher, and the Kafka codec of the token APIs (38-41) for clients.
//!
//! A token goes in as `(tokenId, hmac, String[] {owner, requester, renewers...}, long[] {issue,
//! expiry, max})` and comes back as a `DelegationToken`. Principals are `TYPE:NAME`; a bare
//! name means `User:<name>` (the core's `principal_from_str`).

use std::sync::Arc;

use jni::objects::{JByteArray, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jshort};
use jni::JNIEnv;
use ksasl::kafka::delegation_tokens::{is_token_api, SUPPORTED, SUPPORTED_KAFKA_4};
use ksasl::token::{
    change_token_request, create_token_request, describe_tokens_request, expiry_from_response,
    token_from_create_frame, tokens_from_describe_response, DelegationToken, TokenAuthority,
    TokenConfig,
};
use ksasl::{Error, ErrorCode, SharedRandom};

use crate::glue::{
    api_ranges, bytes, free, get, into_handle, jbytes, jstr, natives, opt_string, opt_strings,
    string, strings, JResult, Rec,
};
use crate::oauth::Refr;
use crate::objects::{registry_mut, Authority};

/// A `DelegationToken`'s fields: id, HMAC, its base64, owner, requester, renewers, issue,
/// expiry and maximum times.
fn token_fields(r: Rec, t: &DelegationToken) -> Rec {
    let r = r.str(&t.info.token_id).bytes(Some(t.hmac()));
    let r = r.bytes(Some(t.hmac_base64().expose()));
    let r = r
        .str(&t.info.owner.to_string())
        .str(&t.info.requester.to_string());
    let r = r.strs(t.info.renewers.iter().map(|p| p.to_string()));
    r.i64(t.info.issue_ms)
        .i64(t.info.expiry_ms)
        .i64(t.info.max_ms)
}

/// A `DelegationToken` record.
fn token_object<'l>(env: &mut JNIEnv<'l>, t: &DelegationToken) -> JResult<JObject<'l>> {
    token_fields(Rec::default(), t).done(env)
}

/// A record of a count, then the tokens.
fn token_array<'l>(env: &mut JNIEnv<'l>, tokens: &[DelegationToken]) -> JResult<JObject<'l>> {
    let r = Rec::default().i32(tokens.len() as i32);
    tokens.iter().fold(r, token_fields).done(env)
}

/// A core token from its Java form.
fn core_token(
    env: &mut JNIEnv<'_>,
    id: &JString<'_>,
    hmac: &JByteArray<'_>,
    names: &JObjectArray<'_>,
    times: &JLongArray<'_>,
) -> JResult<DelegationToken> {
    let (id, hmac) = (
        string(env, id, "tokenId")?,
        bytes(env, hmac, "hmac")?.to_vec(),
    );
    let (names, mut t) = (strings(env, names)?, [0i64; 3]);
    env.get_long_array_region(times, 0, &mut t)?;
    let [owner, requester, renewers @ ..] = names.as_slice() else {
        let e = Error::new(
            ErrorCode::InvalidArgument,
            "a token needs an owner and a requester",
        );
        return Err(e.into());
    };
    Ok(DelegationToken::from_parts(
        &id,
        hmac,
        (owner, Some(requester), renewers),
        t,
    )?)
}

/// An API version from Java's int: one outside `i16` becomes the nearest `i16`, which the
/// core refuses as an unsupported version.
fn v(version: jint) -> i16 {
    version.clamp(i16::MIN.into(), i16::MAX.into()) as i16
}

fn authority<'a>(h: jlong) -> &'a TokenAuthority {
    get::<Authority>(h)
}

natives! {
    // --- TokenAuthority
    fn tokenAuthorityDefaults(env) -> JObject<'l> {
        let c = TokenConfig::new("");
        let a = env.new_long_array(3)?;
        let defaults = [c.max_lifetime_ms, c.expiry_time_ms, c.expiry_check_interval_ms];
        env.set_long_array_region(&a, 0, &defaults)?;
        Ok(a.into())
    }
    fn tokenAuthorityNew(env, key: JString<'l>, settings: JLongArray<'l>) -> i64 {
        let mut given = [None; 3];
        if !settings.is_null() {
            let mut s = [0i64; 3];
            env.get_long_array_region(&settings, 0, &mut s)?;
            given = s.map(Some);
        }
        let c = TokenConfig::with_settings(string(env, &key, "secretKey")?.as_str(), given);
        let a = TokenAuthority::new(c, SharedRandom::default())?;
        Ok(into_handle::<Authority>(Arc::new(a)))
    }
    tokenAuthorityFree(_env, h: jlong) -> () = free::<Authority>(h);
    fn tokenAuthorityCreate(
        env, h: jlong, owner: JString<'l>, requester: JString<'l>, renewers: JObjectArray<'l>,
        max_lifetime_ms: jlong, now: jlong,
    ) -> JObject<'l> {
        let (o, r) = (string(env, &owner, "owner")?, opt_string(env, &requester)?);
        let renewers = strings(env, &renewers)?;
        let t = authority(h).create_by_name(&o, r.as_deref(), &renewers, max_lifetime_ms, now)?;
        token_object(env, &t)
    }
    fn tokenAuthorityRenew(
        env, h: jlong, hmac: JByteArray<'l>, caller: JString<'l>, period_ms: jlong, now: jlong,
    ) -> i64 {
        let (hmac, caller) = (bytes(env, &hmac, "hmac")?, string(env, &caller, "caller")?);
        Ok(authority(h).change_by_name(false, &hmac, &caller, period_ms, now)?)
    }
    fn tokenAuthorityExpire(
        env, h: jlong, hmac: JByteArray<'l>, caller: JString<'l>, period_ms: jlong, now: jlong,
    ) -> i64 {
        let (hmac, caller) = (bytes(env, &hmac, "hmac")?, string(env, &caller, "caller")?);
        Ok(authority(h).change_by_name(true, &hmac, &caller, period_ms, now)?)
    }
    fn tokenAuthorityDescribe(env, h: jlong, owners: JObjectArray<'l>) -> JObject<'l> {
        let tokens = authority(h).describe_by_name(opt_strings(env, &owners)?.as_deref())?;
        token_array(env, &tokens)
    }
    tokenAuthoritySweep(env, h: jlong, now: jlong) -> JObject<'l> =
        Rec::default().strs(authority(h).sweep(now)?).done(env);
    tokenAuthorityNextSweep(_env, h: jlong) -> i64 = authority(h).next_sweep_ms();
    fn tokenAuthorityHmac(env, h: jlong, id: JString<'l>) -> JObject<'l> {
        let id = string(env, &id, "tokenId")?;
        jbytes(env, authority(h).hmac(&id).expose())
    }
    tokenAuthorityExport(env, h: jlong) -> JObject<'l> = jstr(env, &authority(h).export_records()?);
    fn tokenAuthorityImport(env, h: jlong, records: JString<'l>) -> i32 {
        let text = string(env, &records, "records")?;
        Ok(authority(h).import_records(&text)?.min(i32::MAX as usize) as i32)
    }
    fn tokenAuthorityHandleRequest(
        env, h: jlong, frame: JByteArray<'l>, caller: JString<'l>, token_authenticated: jboolean,
        now: jlong,
    ) -> JObject<'l> {
        let (frame, p) = (bytes(env, &frame, "frame")?, string(env, &caller, "principal")?);
        let out = authority(h).handle_request_by_name(&frame, &p, token_authenticated != 0, now)?;
        jbytes(env, &out)
    }

    // --- Tokens in Java, in refreshers and in client registries
    fn tokenNew(
        env, id: JString<'l>, hmac: JByteArray<'l>, names: JObjectArray<'l>, times: JLongArray<'l>,
    ) -> JObject<'l> {
        let t = core_token(env, &id, &hmac, &names, &times)?;
        token_object(env, &t)
    }
    fn refresherSetDelegationToken(
        env, h: jlong, id: JString<'l>, hmac: JByteArray<'l>, names: JObjectArray<'l>,
        times: JLongArray<'l>, now: jlong,
    ) -> i64 {
        let t = core_token(env, &id, &hmac, &names, &times)?;
        Ok(t.install(get::<Refr>(h), now)? as i64)
    }
    registryAddRefreshingPasswordClients(_env, h: jlong, refresher: jlong) -> () =
        registry_mut(h).register_refreshing_password_clients(get::<Refr>(refresher).clone());

    // --- The token APIs' codec for clients
    fn tokenCreateRequest(
        env, version: jint, correlation_id: jint, renewers: JObjectArray<'l>,
        max_lifetime_ms: jlong, owner: JString<'l>, client_id: JString<'l>,
    ) -> JObject<'l> {
        let (owner, renewers) = (opt_string(env, &owner)?, strings(env, &renewers)?);
        let client_id = opt_string(env, &client_id)?;
        let header = (v(version), correlation_id, client_id.as_deref());
        jbytes(env, &create_token_request(header, owner.as_deref(), &renewers, max_lifetime_ms)?)
    }
    fn tokenRenewOrExpireRequest(
        env, version: jint, correlation_id: jint, hmac: JByteArray<'l>, period_ms: jlong,
        expire: jboolean, client_id: JString<'l>,
    ) -> JObject<'l> {
        let (hmac, client_id) = (bytes(env, &hmac, "hmac")?, opt_string(env, &client_id)?);
        let header = (v(version), correlation_id, client_id.as_deref());
        jbytes(env, &change_token_request(header, expire != 0, &hmac, period_ms)?)
    }
    fn tokenDescribeRequest(
        env, version: jint, correlation_id: jint, owners: JObjectArray<'l>, client_id: JString<'l>,
    ) -> JObject<'l> {
        let (owners, client_id) = (opt_strings(env, &owners)?, opt_string(env, &client_id)?);
        let header = (v(version), correlation_id, client_id.as_deref());
        jbytes(env, &describe_tokens_request(header, owners.as_deref())?)
    }
    fn tokenParseCreateResponse(env, version: jint, frame: JByteArray<'l>) -> JObject<'l> {
        let t = token_from_create_frame(v(version), &bytes(env, &frame, "frame")?)?;
        token_object(env, &t)
    }
    tokenParseExpiryResponse(env, version: jint, frame: JByteArray<'l>) -> i64 =
        expiry_from_response(v(version), &bytes(env, &frame, "frame")?);
    fn tokenParseDescribeResponse(env, version: jint, frame: JByteArray<'l>) -> JObject<'l> {
        let tokens = tokens_from_describe_response(v(version), &bytes(env, &frame, "frame")?)?;
        token_array(env, &tokens)
    }
    tokenIsTokenApi(_env, api_key: jshort) -> bool = is_token_api(api_key);
    tokenApiVersions(env, kafka4: jboolean) -> JObject<'l> =
        api_ranges(env, if kafka4 != 0 { &SUPPORTED_KAFKA_4 } else { &SUPPORTED });
}
