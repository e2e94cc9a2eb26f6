//! Credential stores, registries, and the mechanism-level authenticators.

use std::sync::{Arc, Mutex};

use jni::objects::{
    GlobalRef, JBooleanArray, JByteArray, JClass, JIntArray, JObject, JObjectArray, JString, JValue,
};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jobject, jobjectArray, jstring};
use jni::JNIEnv;
use ksasl::credential::{CredentialAnswer, CredentialLookup, Lookup};
use ksasl::mech::{
    ClientAuthenticator, ClientStep, CredentialRequest, ServerAuthenticator, ServerStep,
};
use ksasl::{
    Error, ErrorCode, MechanismRegistry, MemoryCredentialStore, OsRandom, ScramCredential,
    ScramMechanism, ServerCredential,
};

use crate::hostmech;
use crate::{
    byte_array, bytes, callback, entry, into_handle, jbool_box, jlong_box, jstring, locked,
    native_class, null_bytes, obj, object_array, opt, opt_string, read_string_array, string,
    string_array, JResult,
};

pub(crate) type Store = Arc<MemoryCredentialStore>;
pub(crate) type Registry = Mutex<MechanismRegistry>;

fn scram_mechanism(name: &str) -> Result<ScramMechanism, Error> {
    ScramMechanism::from_name(name).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{name} is not a SCRAM mechanism"),
        )
    })
}

/// Builds the core answer from the Java form (kind ordinal of `CredentialAnswer.Kind`).
pub(crate) fn answer(
    request: &CredentialRequest,
    kind: i32,
    value: Option<String>,
    expiry_ms: Option<i64>,
    owner: Option<String>,
) -> Result<CredentialAnswer, Error> {
    let need = |v: Option<String>| {
        v.ok_or_else(|| {
            Error::new(
                ErrorCode::NullArgument,
                "the credential answer has no value",
            )
        })
    };
    let found = |c: ServerCredential| {
        let c = match expiry_ms {
            Some(e) => c.with_expiry_ms(e),
            None => c,
        };
        CredentialAnswer::Found(match &owner {
            Some(o) => c.with_token_owner(o.clone()),
            None => c,
        })
    };
    Ok(match kind {
        0 => CredentialAnswer::Unknown,
        1 => found(ServerCredential::password(need(value)?)),
        2 => found(ServerCredential::scram(
            request.scram_credential(&need(value)?)?,
        )),
        3 => CredentialAnswer::Unavailable(value.unwrap_or_else(|| "unavailable".into())),
        k => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("unknown credential answer kind {k}"),
            ))
        }
    })
}

/// Answers a pending credential request from the Java form of an answer, and clears it.
pub(crate) fn take_answer(
    env: &mut JNIEnv<'_>,
    pending: &mut Option<CredentialRequest>,
    kind: jint,
    value: &JString<'_>,
    expiry: jlong,
    owner: &JString<'_>,
) -> JResult<CredentialAnswer> {
    let value = opt_string(env, value)?;
    let owner = opt_string(env, owner)?;
    let request = pending
        .as_ref()
        .ok_or_else(|| Error::new(ErrorCode::WrongState, "no credential has been requested"))?;
    let a = answer(request, kind, value, opt(expiry), owner)?;
    *pending = None;
    Ok(a)
}

/// A credential lookup implemented by a Java `CredentialLookup`.
pub(crate) struct JavaLookup {
    pub(crate) lookup: GlobalRef,
}

impl CredentialLookup for JavaLookup {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        let r = callback("credential lookup", |env| {
            let mech = env.new_string(&request.mechanism)?;
            let user = env.new_string(&request.username)?;
            let out = env
                .call_static_method(
                    native_class()?,
                    "callLookup",
                    "(Lorg/ksasl/CredentialLookup;Ljava/lang/String;Ljava/lang/String;Z)[Ljava/lang/String;",
                    &[
                        JValue::Object(self.lookup.as_obj()),
                        JValue::Object(&mech),
                        JValue::Object(&user),
                        JValue::Bool(request.token_auth.into()),
                    ],
                )?
                .l()?;
            let arr = JObjectArray::from(out);
            let mut fields: Vec<Option<String>> = Vec::with_capacity(4);
            for i in 0..4 {
                let o = JString::from(env.get_object_array_element(&arr, i)?);
                fields.push(opt_string(env, &o)?);
            }
            let kind: i32 = fields[0]
                .as_deref()
                .and_then(|k| k.parse().ok())
                .unwrap_or(-1);
            let expiry = fields[2].as_deref().and_then(|e| e.parse().ok());
            Ok(answer(
                request,
                kind,
                fields[1].take(),
                expiry,
                fields[3].take(),
            )?)
        });
        Lookup::Now(match r {
            Ok(a) => a,
            Err(e) => CredentialAnswer::Unavailable(e.message().to_string()),
        })
    }
}

// --- CredentialStore --------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_storeNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(into_handle::<Store>(Arc::new(MemoryCredentialStore::new())))
    })
}

crate::free_entry!(Java_org_ksasl_Native_storeFree, Store);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_storeAddUser<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    user: JString<'l>,
    password: JString<'l>,
    iterations: jint,
) {
    entry(&mut env, (), |env| {
        let user = string(env, &user, "username")?;
        let password = string(env, &password, "password")?;
        if iterations < 0 {
            return Err(crate::invalid("iterations must not be negative"));
        }
        let store = unsafe { obj::<Store>(h) };
        Ok(store.add_user(&user, &password, iterations as u32, &OsRandom)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_storeSetScram<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    user: JString<'l>,
    mechanism: JString<'l>,
    credential: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let user = string(env, &user, "username")?;
        let m = scram_mechanism(&string(env, &mechanism, "mechanism")?)?;
        let c = ScramCredential::from_kafka_string(m, &string(env, &credential, "credential")?)?;
        Ok(unsafe { obj::<Store>(h) }.set_scram(&user, c)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_storeSetUserExpiry<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    user: JString<'l>,
    expiry: jlong,
) {
    entry(&mut env, (), |env| {
        let user = string(env, &user, "username")?;
        Ok(unsafe { obj::<Store>(h) }.set_user_expiry(&user, opt(expiry))?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_storeRemoveUser<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    user: JString<'l>,
) -> jboolean {
    entry(&mut env, 0, |env| {
        let user = string(env, &user, "username")?;
        Ok(unsafe { obj::<Store>(h) }.remove_user(&user)?.into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_storeSetToken<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    token_id: JString<'l>,
    mechanism: JString<'l>,
    credential: JString<'l>,
    owner: JString<'l>,
    expiry: jlong,
) {
    entry(&mut env, (), |env| {
        let id = string(env, &token_id, "tokenId")?;
        let m = scram_mechanism(&string(env, &mechanism, "mechanism")?)?;
        let c = ScramCredential::from_kafka_string(m, &string(env, &credential, "credential")?)?;
        let owner = string(env, &owner, "owner")?;
        let mut sc = ServerCredential::scram(c).with_token_owner(owner);
        if let Some(e) = opt(expiry) {
            sc = sc.with_expiry_ms(e);
        }
        Ok(unsafe { obj::<Store>(h) }.set_token(&id, m, sc)?)
    })
}

// --- MechanismRegistry ------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(into_handle::<Registry>(
            Mutex::new(MechanismRegistry::new()),
        ))
    })
}

crate::free_entry!(Java_org_ksasl_Native_registryFree, Registry);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddPasswordServersStore<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    store: jlong,
) {
    entry(&mut env, (), |_| {
        let store = unsafe { obj::<Store>(store) }.clone();
        let mut r = locked(unsafe { obj::<Registry>(h) });
        r.merge(MechanismRegistry::password_servers(None));
        r.set_credential_lookup(Some(store));
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddPasswordServersLookup<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    lookup: JObject<'l>,
) {
    entry(&mut env, (), |env| {
        let mut r = locked(unsafe { obj::<Registry>(h) });
        r.merge(MechanismRegistry::password_servers(None));
        if !lookup.is_null() {
            let lookup = env.new_global_ref(&lookup)?;
            r.set_credential_lookup(Some(Arc::new(JavaLookup { lookup })));
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddPasswordClients<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    user: JString<'l>,
    password: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let user = string(env, &user, "username")?;
        let password = string(env, &password, "password")?;
        let c = ksasl::PasswordCredential::new(&user, &password)?;
        locked(unsafe { obj::<Registry>(h) })
            .merge(MechanismRegistry::password_clients(Arc::new(c)));
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddTokenClients<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    token_id: JString<'l>,
    hmac: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let id = string(env, &token_id, "tokenId")?;
        let hmac = string(env, &hmac, "tokenHmac")?;
        let c = ksasl::PasswordCredential::delegation_token(&id, &hmac)?;
        locked(unsafe { obj::<Registry>(h) })
            .merge(MechanismRegistry::password_clients(Arc::new(c)));
        Ok(())
    })
}

fn names<'l>(env: &mut JNIEnv<'l>, v: Vec<String>) -> JResult<jobjectArray> {
    Ok(string_array(env, &v)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryClientMechanisms<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let v = locked(unsafe { obj::<Registry>(h) }).client_mechanisms();
        names(env, v)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryServerMechanisms<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let v = locked(unsafe { obj::<Registry>(h) }).server_mechanisms();
        names(env, v)
    })
}

// --- ClientAuthenticator ----------------------------------------------------------------------

struct ClientAuthState {
    auth: ClientAuthenticator,
}

type ClientAuth = Mutex<ClientAuthState>;

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    registry: jlong,
    mechanism: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let m = string(env, &mechanism, "mechanism")?;
        let auth = locked(unsafe { obj::<Registry>(registry) }).client(&m)?;
        Ok(into_handle::<ClientAuth>(Mutex::new(ClientAuthState {
            auth,
        })))
    })
}

crate::free_entry!(Java_org_ksasl_Native_clientAuthFree, ClientAuth);

/// Writes `{done, pending}` to `flags`; returns the message (or null).
fn client_step<'l>(
    env: &mut JNIEnv<'l>,
    step: ClientStep,
    flags: &JBooleanArray<'l>,
) -> JResult<jbyteArray> {
    let (msg, done, pending) = match step {
        ClientStep::Send(b) => (Some(b), false, false),
        ClientStep::Done(b) => (b, true, false),
        ClientStep::Pending(_) => (None, false, true),
    };
    env.set_boolean_array_region(flags, 0, &[done.into(), pending.into()])?;
    Ok(match msg {
        Some(b) => byte_array(env, &b)?.into_raw(),
        None => std::ptr::null_mut(),
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthStart<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
    flags: JBooleanArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ClientAuth>(h) });
        let step = s.auth.start(now)?;
        client_step(env, step, &flags)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthStep<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    challenge: JByteArray<'l>,
    now: jlong,
    flags: JBooleanArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let challenge = bytes(env, &challenge, "challenge")?;
        let mut s = locked(unsafe { obj::<ClientAuth>(h) });
        let step = s.auth.step(&challenge, now)?;
        client_step(env, step, &flags)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthPendingWork<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let work = locked(unsafe { obj::<ClientAuth>(h) })
            .auth
            .pending_work()
            .cloned();
        hostmech::stage(env, work.as_ref())
    })
}

/// Resumes with the stage's message (`error` null) or the exception it completed with.
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthResume<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    message: JByteArray<'l>,
    error: JObject<'l>,
    flags: JBooleanArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ClientAuth>(h) });
        let work = s.auth.pending_work().cloned();
        let work = work.ok_or_else(hostmech::nothing_pending)?;
        let r = hostmech::resume_client(&work, &message, &error);
        let step = s.auth.resume(r)?;
        client_step(env, step, &flags)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthServerFailed<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    message: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let m = opt_string(env, &message)?;
        let e = locked(unsafe { obj::<ClientAuth>(h) })
            .auth
            .server_failed(m.as_deref());
        Err(e.into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthMechanism<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let m = locked(unsafe { obj::<ClientAuth>(h) })
            .auth
            .mechanism()
            .to_string();
        Ok(env.new_string(m)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientAuthComplete<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientAuth>(h) })
            .auth
            .is_complete()
            .into())
    })
}

// --- ServerAuthenticator ----------------------------------------------------------------------

struct ServerAuthState {
    auth: ServerAuthenticator,
    request: Option<CredentialRequest>,
    client_message: String,
}

type ServerAuth = Mutex<ServerAuthState>;

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    registry: jlong,
    mechanism: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let m = string(env, &mechanism, "mechanism")?;
        let auth = locked(unsafe { obj::<Registry>(registry) }).server(&m)?;
        Ok(into_handle::<ServerAuth>(Mutex::new(ServerAuthState {
            auth,
            request: None,
            client_message: String::new(),
        })))
    })
}

crate::free_entry!(Java_org_ksasl_Native_serverAuthFree, ServerAuth);

fn server_step<'l>(
    env: &mut JNIEnv<'l>,
    s: &mut ServerAuthState,
    r: Result<ServerStep, Error>,
    kind: &JIntArray<'l>,
) -> JResult<jbyteArray> {
    let step = match r {
        Ok(step) => step,
        Err(e) => {
            s.client_message = e.client_message(s.auth.mechanism(), false);
            return Err(e.into());
        }
    };
    let (k, msg) = match step {
        ServerStep::Challenge(b) => (0, Some(b)),
        ServerStep::NeedCredential(req) => {
            s.request = Some(req);
            (1, None)
        }
        ServerStep::Done { message, .. } => (2, message),
        ServerStep::Pending(_) => (3, None),
    };
    env.set_int_array_region(kind, 0, &[k])?;
    Ok(match msg {
        Some(b) => byte_array(env, &b)?.into_raw(),
        None => null_bytes().into_raw(),
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthStep<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    response: JByteArray<'l>,
    now: jlong,
    kind: JIntArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let response = bytes(env, &response, "response")?;
        let mut s = locked(unsafe { obj::<ServerAuth>(h) });
        let r = s.auth.step(&response, now);
        server_step(env, &mut s, r, &kind)
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthProvide<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    answer_kind: jint,
    value: JString<'l>,
    expiry: jlong,
    owner: JString<'l>,
    now: jlong,
    kind: JIntArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ServerAuth>(h) });
        let a = take_answer(env, &mut s.request, answer_kind, &value, expiry, &owner)?;
        let r = s.auth.provide_credential(a, now);
        server_step(env, &mut s, r, &kind)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthPendingWork<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let work = locked(unsafe { obj::<ServerAuth>(h) })
            .auth
            .pending_work()
            .cloned();
        hostmech::stage(env, work.as_ref())
    })
}

/// Resumes with the stage's `HostServerStep` (`error` null) or the exception it completed with.
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthResume<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    step: JObject<'l>,
    error: JObject<'l>,
    now: jlong,
    kind: JIntArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ServerAuth>(h) });
        let work = s.auth.pending_work().cloned();
        let work = work.ok_or_else(hostmech::nothing_pending)?;
        let r = hostmech::resume_server(&work, &step, &error);
        let r = s.auth.resume(r, now);
        server_step(env, &mut s, r, &kind)
    })
}

pub(crate) fn request_array<'l>(
    env: &mut JNIEnv<'l>,
    r: &CredentialRequest,
) -> JResult<jobjectArray> {
    let items = vec![
        jstring(env, &r.mechanism)?,
        jstring(env, &r.username)?,
        jbool_box(env, r.token_auth)?,
    ];
    Ok(object_array(env, items)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let r = locked(unsafe { obj::<ServerAuth>(h) }).request.clone();
        match r {
            Some(r) => request_array(env, &r),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// `{principal, principalName, mechanism, Long credentialExpiry, String[] extensions, Boolean token}`.
pub(crate) fn outcome_items<'l>(
    env: &mut JNIEnv<'l>,
    o: &ksasl::mech::AuthOutcome,
) -> JResult<Vec<JObject<'l>>> {
    let mut kv = Vec::new();
    for (k, v) in &o.extensions {
        kv.push(k.clone());
        kv.push(v.clone());
    }
    Ok(vec![
        jstring(env, &o.principal.to_string())?,
        jstring(env, &o.principal.name)?,
        jstring(env, &o.mechanism)?,
        jlong_box(env, o.credential_expiry_ms)?,
        string_array(env, &kv)?.into(),
        jbool_box(env, o.principal.token_authenticated)?,
    ])
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthOutcome<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let o = locked(unsafe { obj::<ServerAuth>(h) })
            .auth
            .outcome()
            .cloned();
        match o {
            Some(o) => {
                let items = outcome_items(env, &o)?;
                Ok(object_array(env, items)?.into_raw())
            }
            None => Ok(std::ptr::null_mut()),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverAuthClientMessage<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let m = locked(unsafe { obj::<ServerAuth>(h) })
            .client_message
            .clone();
        Ok(env.new_string(m)?.into_raw())
    })
}

pub(crate) fn read_pairs(
    env: &mut JNIEnv<'_>,
    arr: &JObjectArray<'_>,
) -> JResult<Vec<(String, String)>> {
    let flat = read_string_array(env, arr)?;
    Ok(flat
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect())
}
