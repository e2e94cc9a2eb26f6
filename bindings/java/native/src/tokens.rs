//! Delegation tokens (KIP-48): the token authority, tokens as Java objects, token logins
//! (`UsersAndTokens`), tokens installed in a refresher, and the Kafka codec of the token APIs
//! (38-41) for clients. Every rule is the core's (`ksasl::token`, `ksasl::kafka::tokens`).
//!
//! A token crosses the boundary as `Object[] {String tokenId, byte[] hmac, String hmacBase64,
//! String owner, String requester, String[] renewers, long[] {issue, expiry, max}}`, and comes
//! back as `(tokenId, hmac, String[] {owner, requester, renewers...}, long[] {issue, expiry,
//! max})`. Principals are `TYPE:NAME`; a bare name means `User:<name>`.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jobjectArray, jshort, jshortArray, jstring};
use jni::JNIEnv;
use ksasl::credential::CredentialLookup;
use ksasl::kafka::tokens::{
    CreateTokenRequest, CreateTokenResponse, DescribeTokensRequest, ExpireTokenRequest,
    PrincipalName, RenewTokenRequest, SUPPORTED, SUPPORTED_KAFKA_4,
};
use ksasl::mech::Principal;
use ksasl::token::{
    expiry_from_response, token_from_create_response, tokens_from_describe_response,
    DelegationToken, TokenAuthority, TokenConfig, TokenInfo, UsersAndTokens,
};
use ksasl::{Error, MechanismRegistry, Secret, SharedRandom};

use crate::oauth::Refr;
use crate::objects::{JavaLookup, Registry, Store};
use crate::{
    byte_array, bytes, entry, into_handle, jstring, locked, obj, object_array, opt_string,
    read_string_array, string, string_array, JResult,
};

type Authority = Arc<TokenAuthority>;

/// `User:alice`, `Group:x`, or a bare name meaning `User:<name>` (as the Python binding).
fn principal(s: &str) -> Result<Principal, Error> {
    ksasl::token::principal_from_str(s)
}

fn principals(names: &[String]) -> Result<Vec<Principal>, Error> {
    names.iter().map(|n| principal(n)).collect()
}

fn wire_names(names: &[String]) -> Result<Vec<PrincipalName>, Error> {
    Ok(principals(names)?.iter().map(PrincipalName::from).collect())
}

/// A nullable `String[]`: `None` for null.
fn opt_string_array(env: &mut JNIEnv<'_>, arr: &JObjectArray<'_>) -> JResult<Option<Vec<String>>> {
    if arr.is_null() {
        return Ok(None);
    }
    Ok(Some(read_string_array(env, arr)?))
}

/// The Java form of a token (see the module comment), made in its own local frame so that a
/// list of many tokens does not pile up local references.
fn token_object<'l>(env: &mut JNIEnv<'l>, t: &DelegationToken) -> JResult<JObject<'l>> {
    env.with_local_frame_returning_local(16, |env| -> JResult<JObject<'_>> {
        let renewers: Vec<String> = t.info.renewers.iter().map(|r| r.to_string()).collect();
        let base64 = t.hmac_base64();
        let times = env.new_long_array(3)?;
        env.set_long_array_region(
            &times,
            0,
            &[t.info.issue_ms, t.info.expiry_ms, t.info.max_ms],
        )?;
        let items = vec![
            jstring(env, &t.info.token_id)?,
            byte_array(env, t.hmac())?.into(),
            jstring(env, &String::from_utf8_lossy(base64.expose()))?,
            jstring(env, &t.info.owner.to_string())?,
            jstring(env, &t.info.requester.to_string())?,
            string_array(env, &renewers)?.into(),
            times.into(),
        ];
        Ok(object_array(env, items)?.into())
    })
}

fn token_array<'l>(env: &mut JNIEnv<'l>, tokens: &[DelegationToken]) -> JResult<jobjectArray> {
    let arr = env.new_object_array(tokens.len() as i32, "java/lang/Object", JObject::null())?;
    for (i, t) in tokens.iter().enumerate() {
        let o = token_object(env, t)?;
        env.set_object_array_element(&arr, i as i32, &o)?;
        env.delete_local_ref(o)?;
    }
    Ok(arr.into_raw())
}

/// A core token from its Java form.
fn core_token(
    env: &mut JNIEnv<'_>,
    token_id: &JString<'_>,
    hmac: &JByteArray<'_>,
    names: &JObjectArray<'_>,
    times: &JLongArray<'_>,
) -> JResult<DelegationToken> {
    let token_id = string(env, token_id, "tokenId")?;
    let hmac = bytes(env, hmac, "hmac")?;
    let names = read_string_array(env, names)?;
    if names.len() < 2 {
        return Err(crate::invalid("a token needs an owner and a requester"));
    }
    if times.is_null() || env.get_array_length(times)? != 3 {
        return Err(crate::invalid(
            "a token needs its issue, expiry and max times",
        ));
    }
    let mut t = [0i64; 3];
    env.get_long_array_region(times, 0, &mut t)?;
    let info = TokenInfo {
        token_id,
        owner: principal(&names[0])?,
        requester: principal(&names[1])?,
        renewers: principals(&names[2..])?,
        issue_ms: t[0],
        expiry_ms: t[1],
        max_ms: t[2],
    };
    Ok(DelegationToken::new(info, hmac))
}

// --- TokenAuthority ---------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    secret_key: JString<'l>,
    max_lifetime_ms: jlong,
    expiry_time_ms: jlong,
    check_interval_ms: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let key = string(env, &secret_key, "secretKey")?;
        let mut c = TokenConfig::new(key.as_str());
        c.max_lifetime_ms = max_lifetime_ms;
        c.expiry_time_ms = expiry_time_ms;
        c.expiry_check_interval_ms = check_interval_ms;
        let a = TokenAuthority::new(c, SharedRandom::default())?;
        Ok(into_handle::<Authority>(Arc::new(a)))
    })
}

crate::free_entry!(Java_org_ksasl_Native_tokenAuthorityFree, Authority);

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityCreate<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    owner: JString<'l>,
    requester: JString<'l>,
    renewers: JObjectArray<'l>,
    max_lifetime_ms: jlong,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let owner = principal(&string(env, &owner, "owner")?)?;
        let requester = match opt_string(env, &requester)? {
            Some(r) => principal(&r)?,
            None => owner.clone(),
        };
        let renewers = principals(&read_string_array(env, &renewers)?)?;
        let t = unsafe { obj::<Authority>(h) }.create(
            &owner,
            &requester,
            &renewers,
            max_lifetime_ms,
            now,
        )?;
        Ok(JObjectArray::from(token_object(env, &t)?).into_raw())
    })
}

fn renew_or_expire<'l>(
    env: &mut JNIEnv<'l>,
    h: jlong,
    hmac: &JByteArray<'l>,
    caller: &JString<'l>,
    period_ms: jlong,
    now: jlong,
    expire: bool,
) -> JResult<jlong> {
    let hmac = bytes(env, hmac, "hmac")?;
    let caller = principal(&string(env, caller, "caller")?)?;
    let a = unsafe { obj::<Authority>(h) };
    Ok(if expire {
        a.expire(&hmac, &caller, period_ms, now)?
    } else {
        a.renew(&hmac, &caller, period_ms, now)?
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityRenew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    hmac: JByteArray<'l>,
    caller: JString<'l>,
    period_ms: jlong,
    now: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        renew_or_expire(env, h, &hmac, &caller, period_ms, now, false)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityExpire<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    hmac: JByteArray<'l>,
    caller: JString<'l>,
    period_ms: jlong,
    now: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        renew_or_expire(env, h, &hmac, &caller, period_ms, now, true)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityDescribe<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    owners: JObjectArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let owners = match opt_string_array(env, &owners)? {
            Some(o) => Some(principals(&o)?),
            None => None,
        };
        let tokens = unsafe { obj::<Authority>(h) }.describe(owners.as_deref())?;
        token_array(env, &tokens)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthoritySweep<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let ids = unsafe { obj::<Authority>(h) }.sweep(now)?;
        Ok(string_array(env, &ids)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityNextSweep<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(unsafe { obj::<Authority>(h) }.next_sweep_ms())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityHmac<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    token_id: JString<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let id = string(env, &token_id, "tokenId")?;
        let mac = unsafe { obj::<Authority>(h) }.hmac(&id);
        Ok(byte_array(env, mac.expose())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityExport<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let text = unsafe { obj::<Authority>(h) }.export_records()?;
        Ok(env.new_string(text)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityImport<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    records: JString<'l>,
) -> jint {
    entry(&mut env, 0, |env| {
        let text = string(env, &records, "records")?;
        let n = unsafe { obj::<Authority>(h) }.import_records(&text)?;
        Ok(n.min(jint::MAX as usize) as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenAuthorityHandleRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    frame: JByteArray<'l>,
    caller: JString<'l>,
    token_authenticated: jboolean,
    now: jlong,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let frame = bytes(env, &frame, "frame")?;
        let mut p = principal(&string(env, &caller, "principal")?)?;
        p.token_authenticated = token_authenticated != 0;
        let out = unsafe { obj::<Authority>(h) }.handle_request(&frame, &p, now)?;
        Ok(byte_array(env, &out)?.into_raw())
    })
}

// --- Tokens, registries and refreshers --------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    token_id: JString<'l>,
    hmac: JByteArray<'l>,
    names: JObjectArray<'l>,
    times: JLongArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let t = core_token(env, &token_id, &hmac, &names, &times)?;
        Ok(JObjectArray::from(token_object(env, &t)?).into_raw())
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_refresherSetDelegationToken<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    token_id: JString<'l>,
    hmac: JByteArray<'l>,
    names: JObjectArray<'l>,
    times: JLongArray<'l>,
    now: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let t = core_token(env, &token_id, &hmac, &names, &times)?;
        let g = t.install(unsafe { obj::<Refr>(h) }, now)?;
        Ok(g as jlong)
    })
}

/// PLAIN and SCRAM servers whose `tokenauth` logins the authority answers; users come from the
/// store (a handle, or 0), else from the Java lookup (or null: the pull form).
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddPasswordServersTokens<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    store: jlong,
    lookup: JObject<'l>,
    tokens: jlong,
) {
    entry(&mut env, (), |env| {
        let users: Arc<dyn CredentialLookup> = if store != 0 {
            unsafe { obj::<Store>(store) }.clone()
        } else if !lookup.is_null() {
            Arc::new(JavaLookup {
                lookup: env.new_global_ref(&lookup)?,
            })
        } else {
            Arc::new(ksasl::credential::AskHost)
        };
        let both = UsersAndTokens {
            users,
            tokens: unsafe { obj::<Authority>(tokens) }.clone(),
        };
        let mut r = locked(unsafe { obj::<Registry>(h) });
        r.merge(MechanismRegistry::password_servers(None));
        r.set_credential_lookup(Some(Arc::new(both)));
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddRefreshingPasswordClients<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    refresher: jlong,
) {
    entry(&mut env, (), |_| {
        let r = unsafe { obj::<Refr>(refresher) }.clone();
        locked(unsafe { obj::<Registry>(h) }).register_refreshing_password_clients(r);
        Ok(())
    })
}

// --- The token APIs' codec for clients ------------------------------------------------------

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenCreateRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    version: jshort,
    correlation_id: jint,
    renewers: JObjectArray<'l>,
    max_lifetime_ms: jlong,
    owner: JString<'l>,
    client_id: JString<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let owner = match opt_string(env, &owner)? {
            Some(o) => Some(PrincipalName::from(&principal(&o)?)),
            None => None,
        };
        let r = CreateTokenRequest {
            owner,
            renewers: wire_names(&read_string_array(env, &renewers)?)?,
            max_lifetime_ms,
        };
        let client_id = opt_string(env, &client_id)?;
        let f = r.encode_request(version, correlation_id, client_id.as_deref())?;
        Ok(byte_array(env, &f)?.into_raw())
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenRenewOrExpireRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    version: jshort,
    correlation_id: jint,
    hmac: JByteArray<'l>,
    period_ms: jlong,
    expire: jboolean,
    client_id: JString<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let hmac = Secret::new(bytes(env, &hmac, "hmac")?);
        let client_id = opt_string(env, &client_id)?;
        let f = if expire != 0 {
            ExpireTokenRequest {
                hmac,
                expiry_time_period_ms: period_ms,
            }
            .encode_request(version, correlation_id, client_id.as_deref())?
        } else {
            RenewTokenRequest {
                hmac,
                renew_period_ms: period_ms,
            }
            .encode_request(version, correlation_id, client_id.as_deref())?
        };
        Ok(byte_array(env, &f)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenDescribeRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    version: jshort,
    correlation_id: jint,
    owners: JObjectArray<'l>,
    client_id: JString<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let owners = match opt_string_array(env, &owners)? {
            Some(o) => Some(wire_names(&o)?),
            None => None,
        };
        let client_id = opt_string(env, &client_id)?;
        let f = DescribeTokensRequest { owners }.encode_request(
            version,
            correlation_id,
            client_id.as_deref(),
        )?;
        Ok(byte_array(env, &f)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenParseCreateResponse<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    version: jshort,
    frame: JByteArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let frame = bytes(env, &frame, "frame")?;
        let r = CreateTokenResponse::parse_response(version, &frame)?;
        let t = token_from_create_response(&r)?;
        Ok(JObjectArray::from(token_object(env, &t)?).into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenParseExpiryResponse<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    version: jshort,
    frame: JByteArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let frame = bytes(env, &frame, "frame")?;
        Ok(expiry_from_response(version, &frame)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenParseDescribeResponse<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    version: jshort,
    frame: JByteArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let frame = bytes(env, &frame, "frame")?;
        let tokens = tokens_from_describe_response(version, &frame)?;
        token_array(env, &tokens)
    })
}

/// The token APIs' version ranges as `{apiKey, min, max}` triples: what the codec speaks, or
/// (`kafka4`) what an Apache Kafka 4 broker advertises.
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_tokenApiVersions<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    kafka4: jboolean,
) -> jshortArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let ranges = if kafka4 != 0 {
            SUPPORTED_KAFKA_4
        } else {
            SUPPORTED
        };
        let flat: Vec<jshort> = ranges
            .iter()
            .flat_map(|r| [r.api_key, r.min_version, r.max_version])
            .collect();
        let arr = env.new_short_array(flat.len() as i32)?;
        env.set_short_array_region(&arr, 0, &flat)?;
        Ok(arr.into_raw())
    })
}
