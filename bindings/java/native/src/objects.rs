//! Credential stores, registries, credential lookups written in Java, and the single
//! exchanges (`ClientExchange`, `ServerExchange`).

use std::sync::Arc;

use crossbeam_utils::sync::{ShardedLock, ShardedLockReadGuard, ShardedLockWriteGuard};

use jni::objects::{JByteArray, JObject, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::JNIEnv;
use ksasl::credential::scram::MIN_ITERATIONS;
use ksasl::credential::{CredentialAnswerKind, HostLookup};
use ksasl::kafka::scram_credentials;
use ksasl::mech::{nothing_requested, AuthOutcome, ClientStep, ServerSession, ServerStep};
use ksasl::{
    ClientExchange, CredentialAnswer, CredentialLookup, CredentialRequest, CredentialStore, Error,
    ErrorCode, Lookup, MechanismRegistry, OsRandom, PasswordCredential, ScramCredential,
    ScramMechanism, ServerCredential, ServerExchange,
};

use crate::glue::{
    api_ranges, bytes, call_host, free, get, get_mut, into_handle, jbytes, jstr, long, natives,
    obj, opt, opt_string, or_null, raw, string, up, utf8, Fail, JResult, Rec, Up,
};
use crate::hostmech;

pub(crate) type Store = Arc<CredentialStore>;
pub(crate) type Registry = ShardedLock<MechanismRegistry>;
/// A `TokenAuthority` handle (made and used by `tokens`; named here, where registries take one,
/// so that this module does not import `tokens`, which imports it).
pub(crate) type Authority = Arc<ksasl::token::TokenAuthority>;

pub(crate) fn registry<'a>(h: jlong) -> ShardedLockReadGuard<'a, MechanismRegistry> {
    get::<Registry>(h).read().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn registry_mut<'a>(h: jlong) -> ShardedLockWriteGuard<'a, MechanismRegistry> {
    get::<Registry>(h)
        .write()
        .unwrap_or_else(|p| p.into_inner())
}

/// A host's answer to `request` (none: nothing was requested) in the Java form (kind number,
/// value, expiry or NONE, owner).
pub(crate) fn answer(
    env: &mut JNIEnv<'_>,
    request: Option<&CredentialRequest>,
    kind: jint,
    value: &JString<'_>,
    expiry: jlong,
    owner: &JString<'_>,
) -> JResult<Lookup> {
    let request = request.ok_or_else(nothing_requested)?;
    let kind = CredentialAnswerKind::try_from_u32(kind as u32)?;
    let value = opt_string(env, value)?;
    let owner = opt_string(env, owner)?;
    Ok(CredentialAnswer::decode(
        request,
        kind,
        value.as_deref(),
        opt(expiry),
        owner.as_deref(),
    )?)
}

/// A `CredentialRequest` record: mechanism, username, token flag.
pub(crate) fn request<'l>(env: &mut JNIEnv<'l>, r: &CredentialRequest) -> JResult<JObject<'l>> {
    let rec = Rec::default().str(&r.mechanism).str(&r.username);
    rec.u8(r.token_authenticated.into()).done(env)
}

/// Where `Native.callLookup` hands the Java lookup's answer (`Native.lookupAnswer`).
struct LookupSlot<'a> {
    request: &'a CredentialRequest,
    answer: Option<JResult<Lookup>>,
}

/// A credential lookup written in Java, called on the thread that steps the exchange.
fn java_lookup(env: &mut JNIEnv<'_>, lookup: &JObject<'_>) -> JResult<Arc<dyn CredentialLookup>> {
    let lookup = env.new_global_ref(lookup)?;
    Ok(Arc::new(HostLookup(move |request: &CredentialRequest| {
        let mut slot = LookupSlot {
            request,
            answer: None,
        };
        let ptr = &mut slot as *mut LookupSlot as jlong;
        call_host("credential lookup", true, |env| {
            let r = self::request(env, request)?;
            let args = [obj(lookup.as_obj()), obj(&r), long(ptr)];
            up(env, Up::CallLookup, &args).map(drop)
        })?;
        match slot.answer {
            Some(Ok(l)) => Ok(l),
            Some(Err(Fail::Core(e))) => Err(e),
            _ => Err(Error::new(
                ErrorCode::CredentialLookupFailed,
                "the Java lookup gave no answer",
            )),
        }
    })))
}

/// The fields of an `AuthOutcome`: principal, name, mechanism, credential expiry, token flag,
/// extensions (alternating names and values).
fn outcome_fields(r: Rec, o: &AuthOutcome) -> Rec {
    let p = &o.principal;
    let r = r
        .joined(&[&p.principal_type, ":", &p.name])
        .str(&p.name)
        .str(&o.mechanism);
    let r = r
        .i64(raw(o.credential_expiry_ms))
        .u8(o.principal.token_authenticated.into());
    r.strs(o.extensions.iter().flat_map(|(k, v)| [k, v]))
}

/// The fields of a `ServerSession`: the outcome's, the lifetime and the expiry.
fn session_fields(r: Rec, s: &ServerSession) -> Rec {
    outcome_fields(r, &s.outcome)
        .i64(s.lifetime_ms)
        .i64(raw(s.expiry_ms))
}

/// A `ServerSession` record.
pub(crate) fn session<'l>(env: &mut JNIEnv<'l>, s: &ServerSession) -> JResult<JObject<'l>> {
    session_fields(Rec::default(), s).done(env)
}

/// A `ClientStep` record: done, pending, message.
fn client_step<'l>(env: &mut JNIEnv<'l>, step: ClientStep) -> JResult<JObject<'l>> {
    let (message, done, pending) = match step {
        ClientStep::Send(m) => (Some(m), false, false),
        ClientStep::Done(m) => (m, true, false),
        ClientStep::Pending(_) => (None, false, true),
    };
    let r = Rec::default().u8(done.into()).u8(pending.into());
    r.bytes(message.as_deref()).done(env)
}

/// A `ServerStep` record: the kind's number, the message, and after the last step the
/// exchange's session (`ServerExchange` keeps it for `outcome()` and `session()`).
fn server_step<'l>(
    env: &mut JNIEnv<'l>,
    ex: &ServerExchange,
    step: ServerStep,
) -> JResult<JObject<'l>> {
    let r = Rec::default().u8(step.kind().as_u32() as u8);
    let r = match step {
        ServerStep::Challenge(m)
        | ServerStep::Done {
            message: Some(m), ..
        } => r.bytes(Some(&m)),
        _ => r.bytes(None),
    };
    match ex.session() {
        Some(s) => session_fields(r.u8(1), s),
        None => r.u8(0),
    }
    .done(env)
}

natives! {
    // --- CredentialStore
    storeNew(_env) -> i64 = into_handle::<Store>(Arc::new(CredentialStore::new()));
    storeFree(_env, h: jlong) -> () = free::<Store>(h);
    fn storeAddUser(
        env, h: jlong, user: JString<'l>, password: JString<'l>, iterations: jint, set: jboolean,
    ) -> () {
        let user = string(env, &user, "username")?;
        let password = string(env, &password, "password")?;
        // A negative count becomes 0, which the core refuses as too low.
        let iterations = if set != 0 {
            u32::try_from(iterations).unwrap_or(0)
        } else {
            MIN_ITERATIONS
        };
        Ok(get::<Store>(h).add_user(&user, &password, iterations, &OsRandom)?)
    }
    fn storeSetScram(
        env, h: jlong, user: JString<'l>, mechanism: JString<'l>, credential: JString<'l>,
    ) -> () {
        let user = string(env, &user, "username")?;
        let m = ScramMechanism::try_from_name(&string(env, &mechanism, "mechanism")?)?;
        let c = ScramCredential::from_kafka_string(m, &string(env, &credential, "credential")?)?;
        Ok(get::<Store>(h).set_scram(&user, c)?)
    }
    storeSetUserExpiry(env, h: jlong, user: JString<'l>, expiry: jlong) -> ()
        = get::<Store>(h).set_user_expiry(&string(env, &user, "username")?, opt(expiry));
    storeRemoveUser(env, h: jlong, user: JString<'l>) -> bool
        = get::<Store>(h).remove_user(&string(env, &user, "username")?);
    fn storeSetToken(
        env, h: jlong, id: JString<'l>, mechanism: JString<'l>, credential: JString<'l>,
        owner: JString<'l>, expiry: jlong,
    ) -> () {
        let id = string(env, &id, "tokenId")?;
        let m = ScramMechanism::try_from_name(&string(env, &mechanism, "mechanism")?)?;
        let c = ScramCredential::from_kafka_string(m, &string(env, &credential, "credential")?)?;
        let owner = string(env, &owner, "owner")?;
        let c = ServerCredential::scram(c)
            .with_token_owner(owner)
            .with_expiry(opt(expiry));
        Ok(get::<Store>(h).set_token(&id, m, c)?)
    }
    fn storeHandleScramRequest(env, h: jlong, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        jbytes(env, &get::<Store>(h).handle_scram_request(&frame)?)
    }
    storeScramApiVersions(env) -> JObject<'l> = api_ranges(env, &scram_credentials::SUPPORTED);

    // --- MechanismRegistry
    registryNew(_env) -> i64 = into_handle::<Registry>(ShardedLock::new(MechanismRegistry::new()));
    registryFree(_env, h: jlong) -> () = free::<Registry>(h);
    fn registryAddPasswordServers(
        env, h: jlong, store: jlong, lookup: JObject<'l>, tokens: jlong,
    ) -> () {
        let users: Option<Arc<dyn CredentialLookup>> = match (store, lookup.is_null()) {
            (0, true) => None,
            (0, false) => Some(java_lookup(env, &lookup)?),
            (s, _) => Some(get::<Store>(s).clone()),
        };
        let tokens = (tokens != 0)
            .then(|| get::<Authority>(tokens).clone() as Arc<dyn CredentialLookup>);
        let mut r = registry_mut(h);
        r.merge(MechanismRegistry::password_servers(None));
        r.set_credential_lookup(users);
        r.set_token_lookup(tokens);
        Ok(())
    }
    fn lookupAnswer(
        env, slot: jlong, kind: jint, value: JString<'l>, expiry: jlong, owner: JString<'l>,
    ) -> () {
        // SAFETY: `slot` is the `LookupSlot` of the `java_lookup` call running on this thread.
        let slot = unsafe { &mut *(slot as *mut LookupSlot) };
        slot.answer = Some(answer(env, Some(slot.request), kind, &value, expiry, &owner));
        Ok(())
    }
    fn registryAddPasswordClients(
        env, h: jlong, user: JString<'l>, password: JString<'l>, token: jboolean,
    ) -> () {
        let user = string(env, &user, "username")?;
        let password = string(env, &password, "password")?;
        let c = match token != 0 {
            true => PasswordCredential::delegation_token(&user, &password)?,
            false => PasswordCredential::new(&user, &password)?,
        };
        registry_mut(h).merge(MechanismRegistry::password_clients(Arc::new(c)));
        Ok(())
    }
    registryAddHostClient(env, h: jlong, name: JString<'l>, factory: JObject<'l>, a: jboolean) -> ()
        = hostmech::register_client(env, &mut registry_mut(h), &name, &factory, a != 0);
    registryAddHostServer(env, h: jlong, name: JString<'l>, factory: JObject<'l>) -> ()
        = hostmech::register_server(env, &mut registry_mut(h), &name, &factory);
    registryClientMechanisms(env, h: jlong) -> JObject<'l>
        = Rec::default().strs(registry(h).client_mechanisms()).done(env);
    registryServerMechanisms(env, h: jlong) -> JObject<'l>
        = Rec::default().strs(registry(h).server_mechanisms()).done(env);

    // --- ClientExchange
    clientExchangeNew(env, r: jlong, mechanism: JByteArray<'l>) -> i64
        = into_handle(registry(r).client(utf8(&bytes(env, &mechanism, "mechanism")?)?)?);
    clientExchangeFree(_env, h: jlong) -> () = free::<ClientExchange>(h);
    clientExchangeStart(env, h: jlong, now: jlong) -> JObject<'l>
        = client_step(env, get_mut::<ClientExchange>(h).start(now)?);
    fn clientExchangeStep(env, h: jlong, challenge: JByteArray<'l>, now: jlong) -> JObject<'l> {
        let challenge = bytes(env, &challenge, "challenge")?;
        let step = get_mut::<ClientExchange>(h).step(&challenge, now)?;
        client_step(env, step)
    }
    clientExchangePendingWork(env, h: jlong) -> JObject<'l>
        = hostmech::stage(env, get_mut::<ClientExchange>(h).pending_work());
    fn clientExchangeResume(
        env, h: jlong, message: JByteArray<'l>, error: JObject<'l>,
    ) -> JObject<'l> {
        let ex = get_mut::<ClientExchange>(h);
        let step = hostmech::resume_client(ex.pending_work(), &message, &error)?;
        let step = ex.resume(step)?;
        client_step(env, step)
    }
    clientExchangeServerFailed(env, h: jlong, message: JString<'l>) -> ()
        = Err(get_mut::<ClientExchange>(h).server_failed(opt_string(env, &message)?.as_deref()));
    clientExchangeMechanism(env, h: jlong) -> JObject<'l>
        = jstr(env, get_mut::<ClientExchange>(h).mechanism());
    clientExchangeComplete(_env, h: jlong) -> bool = get_mut::<ClientExchange>(h).is_complete();

    // --- ServerExchange
    serverExchangeNew(env, r: jlong, mechanism: JByteArray<'l>) -> i64
        = into_handle(registry(r).server(utf8(&bytes(env, &mechanism, "mechanism")?)?)?);
    serverExchangeFree(_env, h: jlong) -> () = free::<ServerExchange>(h);
    serverExchangeSetMaxReauthMs(_env, h: jlong, ms: jlong) -> ()
        = get_mut::<ServerExchange>(h).set_max_reauth_ms(ms);
    fn serverExchangeStep(env, h: jlong, response: JByteArray<'l>, now: jlong) -> JObject<'l> {
        let response = bytes(env, &response, "response")?;
        let ex = get_mut::<ServerExchange>(h);
        let step = ex.step(&response, now)?;
        server_step(env, ex, step)
    }
    fn serverExchangeProvide(
        env, h: jlong, kind: jint, value: JString<'l>, expiry: jlong, owner: JString<'l>,
        now: jlong,
    ) -> JObject<'l> {
        let ex = get_mut::<ServerExchange>(h);
        let a = answer(env, ex.pending_request(), kind, &value, expiry, &owner)?.now()?;
        let step = ex.provide_credential(a, now)?;
        server_step(env, ex, step)
    }
    serverExchangePendingRequest(env, h: jlong) -> JObject<'l>
        = or_null(env, get_mut::<ServerExchange>(h).pending_request(), request);
    serverExchangePendingWork(env, h: jlong) -> JObject<'l>
        = hostmech::stage(env, get_mut::<ServerExchange>(h).pending_work());
    fn serverExchangeResume(
        env, h: jlong, step: JObject<'l>, error: JObject<'l>, now: jlong,
    ) -> JObject<'l> {
        let ex = get_mut::<ServerExchange>(h);
        let r = hostmech::resume_server(ex.pending_work(), &step, &error)?;
        let step = ex.resume(r, now)?;
        server_step(env, ex, step)
    }
    serverExchangeClientMessage(env, h: jlong) -> JObject<'l>
        = or_null(env, get_mut::<ServerExchange>(h).client_message(), |env, m| jstr(env, &m));
}
