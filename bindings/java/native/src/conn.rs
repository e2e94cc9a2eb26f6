//! The Kafka connection drivers: configuration builders, configurations and connections.

use std::sync::{Arc, Mutex};

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jshort};
use jni::JNIEnv;
use ksasl::kafka::client::{ClientConnection, ClientEvent};
use ksasl::kafka::config::{ClientConfig, ClientConfigBuilder, ServerConfig, ServerConfigBuilder};
use ksasl::kafka::server::{ServerConnection, ServerOutput};
use ksasl::mech::HostTask;
use ksasl::session::{ClientSession, ReauthTiming, SaslMetrics};
use ksasl::{Error, ErrorCode, ErrorKind};

use crate::glue::{
    bytes, exception, free, get, get_mut, int, into_handle, jbytes, jstrings, keep_host_cause,
    lock, long, natives, obj, opt_string, raw, restore_host_cause, string, strings, up, HostCause,
    JResult, Up,
};
use crate::hostmech;
use crate::objects::{answer, registry, request, session};

type ClientCfg = Arc<ClientConfig>;
type ServerCfg = Arc<ServerConfig>;
type ClientConn = Mutex<ClientConnection>;

/// A server connection, and the output an asynchronous host is settling (`hold`) with the
/// host exception behind its failure, if any.
struct ServerConn {
    conn: ServerConnection,
    held: Option<ServerOutput>,
    held_cause: Option<HostCause>,
}

type ServerConnHandle = Mutex<ServerConn>;

fn metrics<'l>(env: &mut JNIEnv<'l>, m: &SaslMetrics, now: i64) -> JResult<JObject<'l>> {
    let snap = m.snapshot(now);
    let names = jstrings(env, snap.keys())?;
    let values: Vec<f64> = snap.values().copied().collect();
    let v = env.new_double_array(values.len() as i32)?;
    env.set_double_array_region(&v, 0, &values)?;
    up(env, Up::Metrics, &[obj(&names), obj(&v)])
}

fn client_session<'l>(env: &mut JNIEnv<'l>, s: Option<&ClientSession>) -> JResult<JObject<'l>> {
    let Some(s) = s else {
        return Ok(JObject::null());
    };
    let args = [
        long(s.lifetime_ms),
        long(raw(s.reauth_at_ms)),
        long(raw(s.expiry_ms)),
        long(s.latency_ms),
    ];
    up(env, Up::ClientSession, &args)
}

/// The `ClientEvent` object; a failure is thrown. An application response is the frame the
/// caller passed in (not copied).
fn client_event<'l>(
    env: &mut JNIEnv<'l>,
    ev: ClientEvent,
    frame: &JObject<'_>,
) -> JResult<JObject<'l>> {
    let kind = ev.kind().as_u32() as i32;
    let (session, error, retry) = match ev {
        ClientEvent::Failed(e) => return Err(e.into()),
        ClientEvent::Authenticated(s) | ClientEvent::Reauthenticated(s) => (Some(s), None, None),
        ClientEvent::ReauthenticationFailed { error, retry_at_ms } => {
            (None, Some(error), retry_at_ms)
        }
        _ => (None, None, None),
    };
    let session = client_session(env, session.as_ref())?;
    let error = error.map_or(Ok(JObject::null()), |e| exception(env, &e))?;
    let frame = match ev_is_application(kind) {
        true => env.new_local_ref(frame)?,
        false => JObject::null(),
    };
    up(
        env,
        Up::ClientEvent,
        &[
            int(kind),
            obj(&frame),
            obj(&session),
            obj(&error),
            long(raw(retry)),
        ],
    )
}

fn ev_is_application(kind: i32) -> bool {
    kind == ClientEvent::Application.kind().as_u32() as i32
}

/// The `ServerOutput` object. An output that refuses a call (a misuse: a frame for a failed
/// connection, an answer nobody asked for) is thrown instead, as for any call.
fn server_output<'l>(env: &mut JNIEnv<'l>, o: ServerOutput) -> JResult<JObject<'l>> {
    refuse_misuse(&o)?;
    let frames = jbytes(env, &o.frames)?;
    let error = o
        .action
        .error()
        .map_or(Ok(JObject::null()), |e| exception(env, e))?;
    let args = [
        int(o.action.kind().as_u32() as i32),
        obj(&frames),
        long(o.action.deadline_ms().unwrap_or(0)),
        obj(&error),
    ];
    up(env, Up::ServerOutput, &args)
}

fn refuse_misuse(o: &ServerOutput) -> JResult<()> {
    match o.action.error() {
        Some(e) if e.kind() == ErrorKind::Misuse => Err(e.clone().into()),
        _ => Ok(()),
    }
}

/// Returns `o` to Java, or with `hold` keeps it (joined to the output held so far, with the
/// core's `ServerOutput::then`) and returns null.
fn deliver<'l>(
    env: &mut JNIEnv<'l>,
    s: &mut ServerConn,
    o: ServerOutput,
    hold: jboolean,
    first: bool,
) -> JResult<JObject<'l>> {
    if hold == 0 {
        return server_output(env, o);
    }
    refuse_misuse(&o)?;
    s.held = match (s.held.take(), first) {
        (Some(before), false) => Some(before.then(o)),
        _ => Some(o),
    };
    s.held_cause = keep_host_cause();
    Ok(JObject::null())
}

fn client_builder<'a>(b: jlong) -> &'a mut ClientConfigBuilder {
    get_mut::<ClientConfigBuilder>(b)
}

fn server_builder<'a>(b: jlong) -> &'a mut ServerConfigBuilder {
    get_mut::<ServerConfigBuilder>(b)
}

natives! {
    // --- client configuration

    fn Java_org_ksasl_Native_clientConfigBuilderNew(env, registry_h: jlong, mechanism: JString<'l>) -> i64 {
        let m = string(env, &mechanism, "mechanism")?;
        Ok(into_handle(ClientConfig::builder(registry(registry_h).clone(), &m)))
    }

    fn Java_org_ksasl_Native_clientConfigBuilderFree(_env, b: jlong) -> () { free::<ClientConfigBuilder>(b) }

    fn Java_org_ksasl_Native_clientConfigBuilderSetClientId(env, b: jlong, id: JString<'l>) -> () {
        let id = opt_string(env, &id)?;
        client_builder(b).set_client_id(id.as_deref());
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetApiVersionsVersion(_env, b: jlong, v: jlong) -> () {
        client_builder(b).set_api_versions_version(v);
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetKnownVersions(_env, b: jlong, handshake: jlong, authenticate: jlong, legacy: jboolean) -> () {
        client_builder(b).set_known_versions(handshake, (legacy == 0).then_some(authenticate));
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetSoftware(env, b: jlong, name: JString<'l>, version: JString<'l>) -> () {
        let name = string(env, &name, "name")?;
        let version = string(env, &version, "version")?;
        client_builder(b).set_software(&name, &version);
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetReauthTiming(_env, b: jlong, timing: jint) -> () {
        client_builder(b).set_reauth_timing(ReauthTiming::try_from_u32(timing as u32)?);
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetReauthMinDelayMs(_env, b: jlong, ms: jlong) -> () {
        client_builder(b).set_reauth_min_delay_ms(ms);
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetReauthRetryMs(_env, b: jlong, ms: jlong) -> () {
        client_builder(b).set_reauth_retry_ms(ms);
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderSetMaxReceiveSize(_env, b: jlong, bytes: jlong) -> () {
        client_builder(b).set_max_receive_size(bytes);
        Ok(())
    }

    fn Java_org_ksasl_Native_clientConfigBuilderBuild(_env, b: jlong) -> i64 {
        Ok(into_handle::<ClientCfg>(client_builder(b).build()?))
    }

    fn Java_org_ksasl_Native_clientConfigFree(_env, h: jlong) -> () { free::<ClientCfg>(h) }

    fn Java_org_ksasl_Native_clientConfigMetrics(env, h: jlong, now: jlong) -> JObject<'l> {
        metrics(env, get::<ClientCfg>(h).metrics(), now)
    }

    // --- client connection

    fn Java_org_ksasl_Native_clientConnNew(_env, config: jlong) -> i64 {
        let c = get::<ClientCfg>(config).clone();
        Ok(into_handle::<ClientConn>(Mutex::new(ClientConnection::new(c))))
    }

    fn Java_org_ksasl_Native_clientConnFree(_env, h: jlong) -> () { free::<ClientConn>(h) }

    fn Java_org_ksasl_Native_clientConnStart(_env, h: jlong, now: jlong) -> () {
        Ok(lock(get::<ClientConn>(h)).start(now)?)
    }

    fn Java_org_ksasl_Native_clientConnTransmit(env, h: jlong) -> JObject<'l> {
        let out = lock(get::<ClientConn>(h)).poll_transmit().unwrap_or_default();
        jbytes(env, &out)
    }

    fn Java_org_ksasl_Native_clientConnHandleFrame(env, h: jlong, frame: JByteArray<'l>, now: jlong) -> JObject<'l> {
        let mut c = lock(get::<ClientConn>(h));
        // While the connection is ready the core answers Application without reading the
        // frame (ClientConnection::is_ready): its bytes need not cross into Rust.
        let ev = match c.is_ready() {
            true => ClientEvent::Application,
            false => {
                let f = bytes(env, &frame, "frame")?;
                c.handle_frame(&f, now)
            }
        };
        client_event(env, ev, &frame)
    }

    fn Java_org_ksasl_Native_clientConnPendingWork(env, h: jlong) -> JObject<'l> {
        let c = lock(get::<ClientConn>(h));
        hostmech::stage(env, c.pending_work())
    }

    fn Java_org_ksasl_Native_clientConnResume(env, h: jlong, message: JByteArray<'l>, error: JObject<'l>, now: jlong) -> JObject<'l> {
        let mut c = lock(get::<ClientConn>(h));
        let work = c.pending_work().cloned().ok_or_else(hostmech::nothing_pending)?;
        let step = hostmech::resume_client(&work, &message, &error)?;
        let ev = c.resume(step, now);
        client_event(env, ev, &JObject::null())
    }

    fn Java_org_ksasl_Native_clientConnClosed(env, h: jlong, now: jlong) -> JObject<'l> {
        let e = lock(get::<ClientConn>(h)).connection_closed(now);
        exception(env, &e)
    }

    fn Java_org_ksasl_Native_clientConnNextDeadline(_env, h: jlong) -> i64 {
        Ok(raw(lock(get::<ClientConn>(h)).next_deadline()))
    }

    fn Java_org_ksasl_Native_clientConnHandleTimeout(_env, h: jlong, now: jlong) -> bool {
        Ok(lock(get::<ClientConn>(h)).handle_timeout(now)?)
    }

    fn Java_org_ksasl_Native_clientConnReauthPending(_env, h: jlong, now: jlong) -> bool {
        Ok(lock(get::<ClientConn>(h)).reauth_pending(now))
    }

    fn Java_org_ksasl_Native_clientConnBeforeRequest(_env, h: jlong, now: jlong) -> bool {
        Ok(lock(get::<ClientConn>(h)).before_request(now)?)
    }

    fn Java_org_ksasl_Native_clientConnStartReauth(_env, h: jlong, now: jlong) -> bool {
        Ok(lock(get::<ClientConn>(h)).start_reauthentication(now)?)
    }

    fn Java_org_ksasl_Native_clientConnSession(env, h: jlong) -> JObject<'l> {
        let s = lock(get::<ClientConn>(h)).session().copied();
        client_session(env, s.as_ref())
    }

    fn Java_org_ksasl_Native_clientConnReauthenticating(_env, h: jlong) -> bool {
        Ok(lock(get::<ClientConn>(h)).is_reauthenticating())
    }

    fn Java_org_ksasl_Native_clientConnReady(_env, h: jlong) -> bool {
        Ok(lock(get::<ClientConn>(h)).is_ready())
    }

    // --- server configuration

    fn Java_org_ksasl_Native_serverConfigBuilderNew(_env, registry_h: jlong) -> i64 {
        Ok(into_handle(ServerConfig::builder(registry(registry_h).clone())))
    }

    fn Java_org_ksasl_Native_serverConfigBuilderFree(_env, b: jlong) -> () { free::<ServerConfigBuilder>(b) }

    fn Java_org_ksasl_Native_serverConfigBuilderSetEnabledMechanisms(env, b: jlong, names: JObjectArray<'l>) -> () {
        let names = strings(env, &names)?;
        server_builder(b).set_enabled_mechanisms(names);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderSetMaxReauthMs(_env, b: jlong, ms: jlong) -> () {
        server_builder(b).set_max_reauth_ms(ms);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderSetMaxReauthMsFor(env, b: jlong, mechanism: JString<'l>, ms: jlong) -> () {
        let m = string(env, &mechanism, "mechanism")?;
        server_builder(b).set_max_reauth_ms_for(&m, ms);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderSetMaxReceiveSize(_env, b: jlong, bytes: jlong) -> () {
        server_builder(b).set_max_receive_size(bytes);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderSetFailedAuthenticationDelayMs(_env, b: jlong, ms: jlong) -> () {
        server_builder(b).set_failed_authentication_delay_ms(ms);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderSetReauthRetryMs(_env, b: jlong, ms: jlong) -> () {
        server_builder(b).set_reauth_retry_ms(ms);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderSetApiVersion(_env, b: jlong, key: jlong, min: jlong, max: jlong) -> () {
        server_builder(b).set_api_version(key, min, max);
        Ok(())
    }

    fn Java_org_ksasl_Native_serverConfigBuilderBuild(_env, b: jlong) -> i64 {
        Ok(into_handle::<ServerCfg>(server_builder(b).build()?))
    }

    fn Java_org_ksasl_Native_serverConfigFree(_env, h: jlong) -> () { free::<ServerCfg>(h) }

    fn Java_org_ksasl_Native_serverConfigMetrics(env, h: jlong, now: jlong) -> JObject<'l> {
        metrics(env, get::<ServerCfg>(h).metrics(), now)
    }

    fn Java_org_ksasl_Native_serverConfigApiVersionsResponse(env, h: jlong, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let (answer, _) = get::<ServerCfg>(h).api_versions_response(&frame)?;
        jbytes(env, &answer)
    }

    // --- server connection

    fn Java_org_ksasl_Native_serverConnNew(_env, config: jlong) -> i64 {
        let conn = ServerConnection::new(get::<ServerCfg>(config).clone());
        Ok(into_handle::<ServerConnHandle>(Mutex::new(ServerConn { conn, held: None, held_cause: None })))
    }

    fn Java_org_ksasl_Native_serverConnFree(_env, h: jlong) -> () { free::<ServerConnHandle>(h) }

    fn Java_org_ksasl_Native_serverConnHandleFrame(env, h: jlong, frame: JByteArray<'l>, now: jlong, hold: jboolean) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let mut s = lock(get::<ServerConnHandle>(h));
        let o = s.conn.handle_frame(&frame, now);
        deliver(env, &mut s, o, hold, true)
    }

    fn Java_org_ksasl_Native_serverConnProvide(env, h: jlong, kind: jint, value: JString<'l>, expiry: jlong, owner: JString<'l>, now: jlong, hold: jboolean) -> JObject<'l> {
        let mut s = lock(get::<ServerConnHandle>(h));
        let Some(request) = s.conn.pending_request().cloned() else {
            return Err(Error::new(ErrorCode::WrongState, "no credential was requested").into());
        };
        let a = answer(env, &request, kind, &value, expiry, &owner)?.now()?;
        let o = s.conn.provide_credential(a, now);
        deliver(env, &mut s, o, hold, false)
    }

    fn Java_org_ksasl_Native_serverConnResume(env, h: jlong, step: JObject<'l>, error: JObject<'l>, now: jlong, hold: jboolean) -> JObject<'l> {
        let mut s = lock(get::<ServerConnHandle>(h));
        let work = s.conn.pending_work().cloned().ok_or_else(hostmech::nothing_pending)?;
        let r = hostmech::resume_server(&work, &step, &error)?;
        let o = s.conn.resume(r, now);
        deliver(env, &mut s, o, hold, false)
    }

    fn Java_org_ksasl_Native_serverConnHostTask(env, h: jlong) -> JObject<'l> {
        let s = lock(get::<ServerConnHandle>(h));
        match s.conn.host_task() {
            Some(HostTask::Credential(r)) => request(env, r),
            Some(HostTask::Mechanism(w)) => hostmech::stage(env, Some(w)),
            None => Ok(JObject::null()),
        }
    }

    fn Java_org_ksasl_Native_serverConnTakeHeld(env, h: jlong) -> JObject<'l> {
        let mut s = lock(get::<ServerConnHandle>(h));
        if let Some(cause) = s.held_cause.take() {
            restore_host_cause(cause);
        }
        let o = s.held.take().ok_or_else(|| Error::new(ErrorCode::WrongState, "no output is held"))?;
        server_output(env, o)
    }

    fn Java_org_ksasl_Native_serverConnPendingRequest(env, h: jlong) -> JObject<'l> {
        let r = lock(get::<ServerConnHandle>(h)).conn.pending_request().cloned();
        r.map_or(Ok(JObject::null()), |r| request(env, &r))
    }

    fn Java_org_ksasl_Native_serverConnPendingWork(env, h: jlong) -> JObject<'l> {
        let s = lock(get::<ServerConnHandle>(h));
        hostmech::stage(env, s.conn.pending_work())
    }

    fn Java_org_ksasl_Native_serverConnGate(_env, h: jlong, api_key: jshort, now: jlong) -> i32 {
        Ok(lock(get::<ServerConnHandle>(h)).conn.gate(api_key, now).as_u32() as i32)
    }

    fn Java_org_ksasl_Native_serverConnIllegalState(env, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        ServerConnection::illegal_state_response(&frame).map_or(Ok(JObject::null()), |b| jbytes(env, &b))
    }

    fn Java_org_ksasl_Native_serverConnReady(_env, h: jlong) -> bool {
        Ok(lock(get::<ServerConnHandle>(h)).conn.is_ready())
    }

    fn Java_org_ksasl_Native_serverConnNextDeadline(_env, h: jlong) -> i64 {
        Ok(raw(lock(get::<ServerConnHandle>(h)).conn.next_deadline()))
    }

    fn Java_org_ksasl_Native_serverConnSession(env, h: jlong) -> JObject<'l> {
        let s = lock(get::<ServerConnHandle>(h)).conn.session().cloned();
        s.map_or(Ok(JObject::null()), |s| session(env, &s))
    }
}
