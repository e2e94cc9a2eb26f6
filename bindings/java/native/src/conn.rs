//! The Kafka connection drivers: client and server configurations and connections.

use std::sync::{Arc, Mutex};

use jni::objects::{
    JByteArray, JClass, JIntArray, JLongArray, JObject, JObjectArray, JShortArray, JString,
};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jlongArray, jobject, jobjectArray, jshort};
use jni::JNIEnv;
use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent, ClientSession};
use ksasl::kafka::server::{ServerConfig, ServerConnection, ServerOutput, ServerStatus};
use ksasl::mech::CredentialRequest;
use ksasl::session::{FailedReauthPolicy, Gate, ReauthTiming, SaslMetrics};
use ksasl::{Error, ErrorCode};

use crate::hostmech;
use crate::objects::{outcome_items, request_array, Registry};
use crate::{
    byte_array, bytes, entry, exception, into_handle, locked, obj, object_array, opt_string, raw,
    read_string_array, string, string_array, JResult,
};

type ClientCfg = Arc<ClientConfig>;
type ServerCfg = Arc<ServerConfig>;

struct ClientConnState {
    conn: ClientConnection,
}

type ClientConn = Mutex<ClientConnState>;

struct ServerConnState {
    conn: ServerConnection,
    request: Option<CredentialRequest>,
}

type ServerConn = Mutex<ServerConnState>;

/// `{String[] names, double[] values}`.
fn metrics<'l>(env: &mut JNIEnv<'l>, m: &SaslMetrics, now: i64) -> JResult<jobjectArray> {
    let snap = m.snapshot(now);
    let names: Vec<String> = snap.keys().map(|k| k.to_string()).collect();
    let values: Vec<f64> = snap.values().copied().collect();
    let n = string_array(env, &names)?;
    let v = env.new_double_array(values.len() as i32)?;
    env.set_double_array_region(&v, 0, &values)?;
    Ok(object_array(env, vec![n.into(), v.into()])?.into_raw())
}

// --- client -----------------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConfigNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    registry: jlong,
    mechanism: JString<'l>,
    client_id: JString<'l>,
    timing: jint,
    api_versions_version: jint,
    retry_ms: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let mechanism = string(env, &mechanism, "mechanism")?;
        let client_id = opt_string(env, &client_id)?;
        let registry = locked(unsafe { obj::<Registry>(registry) }).clone();
        if !registry.client_mechanisms().contains(&mechanism) {
            return Err(Error::new(
                ErrorCode::UnknownMechanism,
                format!("no client mechanism {mechanism} in the registry"),
            )
            .into());
        }
        let mut c = ClientConfig::new(registry, &mechanism);
        c.client_id = client_id;
        c.reauth_policy.timing = match timing {
            0 => ReauthTiming::Kafka,
            1 => ReauthTiming::Librdkafka,
            2 => ReauthTiming::FranzGo,
            3 => ReauthTiming::Disabled,
            t => {
                return Err(crate::invalid(format!(
                    "unknown re-authentication timing {t}"
                )))
            }
        };
        c.set_api_versions_version(api_versions_version.into())?;
        c.failed_reauth_policy = FailedReauthPolicy::from_initial_delay_ms(retry_ms)?;
        Ok(into_handle::<ClientCfg>(Arc::new(c)))
    })
}

crate::free_entry!(Java_org_ksasl_Native_clientConfigFree, ClientCfg);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConfigMetrics<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let c = unsafe { obj::<ClientCfg>(h) }.clone();
        metrics(env, &c.metrics, now)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    config: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        let c = unsafe { obj::<ClientCfg>(config) }.clone();
        Ok(into_handle::<ClientConn>(Mutex::new(ClientConnState {
            conn: ClientConnection::new(c),
        })))
    })
}

crate::free_entry!(Java_org_ksasl_Native_clientConnFree, ClientConn);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnStart<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) {
    entry(&mut env, (), |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) }).conn.start(now)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnTransmit<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let out = locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .poll_transmit()
            .unwrap_or_default();
        Ok(byte_array(env, &out)?.into_raw())
    })
}

/// Writes the event kind to `event` (and, for a failed re-authentication, its error and retry
/// time). An application response is the frame the Java side passed in, so nothing is copied
/// back. A failure is thrown.
fn client_event<'l>(
    env: &mut JNIEnv<'l>,
    ev: ClientEvent,
    event: &JIntArray<'l>,
    times: &JLongArray<'l>,
    err: &JObjectArray<'l>,
) -> JResult<()> {
    let kind = match ev {
        ClientEvent::Continue => 0,
        ClientEvent::Application => 1,
        ClientEvent::Authenticated(_) => 2,
        ClientEvent::Reauthenticated(_) => 3,
        ClientEvent::ReauthenticationFailed { error, retry_at_ms } => {
            let e = exception(env, &error)?;
            env.set_object_array_element(err, 0, e)?;
            env.set_long_array_region(times, 0, &[raw(retry_at_ms)])?;
            4
        }
        ClientEvent::Failed(e) => return Err(e.into()),
        ClientEvent::Pending(_) => 5,
    };
    env.set_int_array_region(event, 0, &[kind])?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnHandleFrame<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    frame: JByteArray<'l>,
    now: jlong,
    event: JIntArray<'l>,
    times: JLongArray<'l>,
    err: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        let mut s = locked(unsafe { obj::<ClientConn>(h) });
        // While the connection is ready, the core answers Application for any frame without
        // reading it (ClientConnection::is_ready): the bytes need not cross into Rust at all
        // (they may be megabytes of a Fetch).
        let ev = if s.conn.is_ready() {
            ClientEvent::Application
        } else {
            let frame = bytes(env, &frame, "frame")?;
            s.conn.handle_frame(&frame, now)
        };
        client_event(env, ev, &event, &times, &err)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnPendingWork<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let work = locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .pending_work()
            .cloned();
        hostmech::stage(env, work.as_ref())
    })
}

/// Resumes with the stage's message (`error` null) or the exception it completed with.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnResume<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    message: JByteArray<'l>,
    error: JObject<'l>,
    now: jlong,
    event: JIntArray<'l>,
    times: JLongArray<'l>,
    err: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        let mut s = locked(unsafe { obj::<ClientConn>(h) });
        let work = s.conn.pending_work().cloned();
        let work = work.ok_or_else(hostmech::nothing_pending)?;
        let step = hostmech::resume_client(&work, &message, &error);
        let ev = s.conn.resume(step, now);
        client_event(env, ev, &event, &times, &err)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnClosed<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ClientConn>(h) });
        let e = s.conn.connection_closed(now);
        Ok(exception(env, &e)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnNextDeadline<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(raw(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .next_deadline()))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnHandleTimeout<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .handle_timeout(now)?
            .into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnReauthPending<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .reauth_pending(now)
            .into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnBeforeRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .before_request(now)?
            .into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnStartReauth<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .start_reauthentication(now)?
            .into())
    })
}

pub(crate) fn session_array<'l>(env: &mut JNIEnv<'l>, s: &ClientSession) -> JResult<jlongArray> {
    let v = [
        s.lifetime_ms,
        raw(s.reauth_at_ms),
        raw(s.expiry_ms),
        s.latency_ms,
    ];
    let a = env.new_long_array(4)?;
    env.set_long_array_region(&a, 0, &v)?;
    Ok(a.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnSession<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let s = locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .session()
            .copied();
        match s {
            Some(s) => session_array(env, &s),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnReauthenticating<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .is_reauthenticating()
            .into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_clientConnReady<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ClientConn>(h) })
            .conn
            .is_ready()
            .into())
    })
}

// --- server -----------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConfigNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    registry: jlong,
    max_reauth_ms: jlong,
    mechanisms: JObjectArray<'l>,
    by_mechanism: JLongArray<'l>,
    failed_delay_ms: jlong,
    retry_ms: jlong,
    api_versions: JShortArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let registry = locked(unsafe { obj::<Registry>(registry) }).clone();
        let mut c = ServerConfig::new(registry);
        if max_reauth_ms < 0 {
            return Err(crate::invalid("maxReauthMs must not be negative"));
        }
        c.max_reauth_ms = max_reauth_ms;
        let names = read_string_array(env, &mechanisms)?;
        let mut ms = vec![0i64; names.len()];
        if !names.is_empty() {
            env.get_long_array_region(&by_mechanism, 0, &mut ms)?;
        }
        for (n, m) in names.into_iter().zip(ms) {
            if m < 0 {
                return Err(crate::invalid(format!(
                    "maxReauthMs for {n} must not be negative"
                )));
            }
            c.max_reauth_ms_by_mechanism.insert(n, m);
        }
        if failed_delay_ms < 0 {
            return Err(crate::invalid("failedAuthDelayMs must not be negative"));
        }
        c.failed_authentication_delay_ms = failed_delay_ms;
        c.failed_reauth_policy = FailedReauthPolicy::from_initial_delay_ms(retry_ms)?;
        let n = env.get_array_length(&api_versions)? as usize;
        let mut v = vec![0 as jshort; n];
        env.get_short_array_region(&api_versions, 0, &mut v)?;
        for t in v.chunks(3).filter(|t| t.len() == 3) {
            c.set_api_version(t[0], t[1], t[2])?;
        }
        Ok(into_handle::<ServerCfg>(Arc::new(c)))
    })
}

crate::free_entry!(Java_org_ksasl_Native_serverConfigFree, ServerCfg);

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConfigMetrics<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let c = unsafe { obj::<ServerCfg>(h) }.clone();
        metrics(env, &c.metrics, now)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConfigApiVersionsResponse<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    frame: JByteArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let frame = bytes(env, &frame, "frame")?;
        let (answer, _) = unsafe { obj::<ServerCfg>(h) }.api_versions_response(&frame)?;
        Ok(byte_array(env, &answer)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    config: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        let c = unsafe { obj::<ServerCfg>(config) }.clone();
        Ok(into_handle::<ServerConn>(Mutex::new(ServerConnState {
            conn: ServerConnection::new(c),
            request: None,
        })))
    })
}

crate::free_entry!(Java_org_ksasl_Native_serverConnFree, ServerConn);

/// Writes the action and deadline to `out`, the error of a failure to `err`; returns the frames.
fn server_output<'l>(
    env: &mut JNIEnv<'l>,
    s: &mut ServerConnState,
    o: ServerOutput,
    out: &JLongArray<'l>,
    err: &JObjectArray<'l>,
) -> JResult<jbyteArray> {
    let (action, deadline, error) = match o.status {
        ServerStatus::Continue => (0, 0, None),
        ServerStatus::NeedCredential(r) => {
            s.request = Some(r);
            (1, 0, None)
        }
        ServerStatus::Authenticated(_) => (2, 0, None),
        ServerStatus::Reauthenticated(_) => (3, 0, None),
        ServerStatus::ReauthenticationFailed(e) => (4, 0, Some(e)),
        ServerStatus::FailAt { deadline_ms, error } => (5, deadline_ms, Some(error)),
        ServerStatus::CloseNow(e) => (6, 0, Some(e)),
        ServerStatus::Pending(_) => (7, 0, None),
    };
    if let Some(e) = error {
        let x = exception(env, &e)?;
        env.set_object_array_element(err, 0, x)?;
    }
    env.set_long_array_region(out, 0, &[action, deadline])?;
    Ok(byte_array(env, &o.frames)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnHandleFrame<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    frame: JByteArray<'l>,
    now: jlong,
    out: JLongArray<'l>,
    err: JObjectArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let frame = bytes(env, &frame, "frame")?;
        let mut s = locked(unsafe { obj::<ServerConn>(h) });
        let o = s.conn.handle_frame(&frame, now);
        server_output(env, &mut s, o, &out, &err)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnRequest<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let r = locked(unsafe { obj::<ServerConn>(h) }).request.clone();
        match r {
            Some(r) => request_array(env, &r),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnProvide<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    answer_kind: jint,
    value: JString<'l>,
    expiry: jlong,
    owner: JString<'l>,
    now: jlong,
    out: JLongArray<'l>,
    err: JObjectArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ServerConn>(h) });
        let a =
            crate::objects::take_answer(env, &mut s.request, answer_kind, &value, expiry, &owner)?;
        let o = s.conn.provide_credential(a, now);
        server_output(env, &mut s, o, &out, &err)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnPendingWork<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let work = locked(unsafe { obj::<ServerConn>(h) })
            .conn
            .pending_work()
            .cloned();
        hostmech::stage(env, work.as_ref())
    })
}

/// Resumes with the stage's `HostServerStep` (`error` null) or the exception it completed with.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnResume<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    step: JObject<'l>,
    error: JObject<'l>,
    now: jlong,
    out: JLongArray<'l>,
    err: JObjectArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let mut s = locked(unsafe { obj::<ServerConn>(h) });
        let work = s.conn.pending_work().cloned();
        let work = work.ok_or_else(hostmech::nothing_pending)?;
        let r = hostmech::resume_server(&work, &step, &error);
        let o = s.conn.resume(r, now);
        server_output(env, &mut s, o, &out, &err)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnGate<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    api_key: jshort,
    now: jlong,
) -> jint {
    entry(&mut env, 0, |_| {
        Ok(
            match locked(unsafe { obj::<ServerConn>(h) })
                .conn
                .gate(api_key, now)
            {
                Gate::Process => 0,
                Gate::BeginReauthentication => 1,
                Gate::CloseExpired => 2,
            },
        )
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnIllegalState<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    frame: JByteArray<'l>,
) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let frame = bytes(env, &frame, "frame")?;
        Ok(match ServerConnection::illegal_state_response(&frame) {
            Some(b) => byte_array(env, &b)?.into_raw(),
            None => std::ptr::null_mut(),
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnReady<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jboolean {
    entry(&mut env, 0, |_| {
        Ok(locked(unsafe { obj::<ServerConn>(h) })
            .conn
            .is_ready()
            .into())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnNextDeadline<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(raw(locked(unsafe { obj::<ServerConn>(h) })
            .conn
            .next_deadline()))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_serverConnSession<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let s = locked(unsafe { obj::<ServerConn>(h) })
            .conn
            .session()
            .cloned();
        let Some(s) = s else {
            return Ok(std::ptr::null_mut());
        };
        let mut items = outcome_items(env, &s.outcome)?;
        let times = env.new_long_array(3)?;
        env.set_long_array_region(
            &times,
            0,
            &[
                s.lifetime_ms,
                raw(s.expiry_ms),
                raw(s.outcome.credential_expiry_ms),
            ],
        )?;
        // Same layout as the outcome, with the times inserted at index 3.
        let ext = items.remove(4);
        let token = items.remove(4);
        items.truncate(3);
        items.push(JObject::from(times));
        items.push(ext);
        items.push(token);
        Ok(object_array(env, items)?.into_raw())
    })
}
