//! The Kafka connection drivers: configuration builders, configurations and connections.

use std::sync::Arc;

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jshort};
use jni::JNIEnv;
use ksasl::kafka::client::{ClientConnection, ClientEvent};
use ksasl::kafka::config::{ClientConfig, ClientConfigBuilder, ServerConfig, ServerConfigBuilder};
use ksasl::kafka::server::{RefusedRequest, ServerAction, ServerConnection};
use ksasl::mech::{nothing_pending, nothing_requested, HostTask};
use ksasl::session::{ClientSession, ReauthTiming, SaslMetrics};
use ksasl::{Error, ErrorCode, ErrorKind};

use crate::glue::{
    bytes, exception, free, get, get_mut, int, into_handle, jbytes, keep_host_cause, long, natives,
    obj, opt_string, raw, restore_host_cause, setters, string, strings, up, HostCause, JResult,
    Rec, Up,
};
use crate::hostmech;
use crate::objects::{answer, registry, request, session};

type ClientCfg = Arc<ClientConfig>;
type ServerCfg = Arc<ServerConfig>;

/// A client connection, and the failure of its last re-authentication (with the host
/// exception behind it) until Java reads it.
struct ClientConn {
    conn: ClientConnection,
    failure: Option<(Error, Option<i64>, Option<HostCause>)>,
}

/// A server connection, and the last action of a frame an asynchronous host is settling
/// (`hold`) with the host exception behind its failure, if any.
struct ServerConn {
    conn: ServerConnection,
    held: Option<ServerAction>,
    held_cause: Option<HostCause>,
}

fn metrics<'l>(env: &mut JNIEnv<'l>, m: &SaslMetrics, now: i64) -> JResult<JObject<'l>> {
    let snap = m.snapshot(now);
    let r = Rec::default().strs(snap.keys());
    snap.values()
        .fold(r, |r, v| r.i64(v.to_bits() as i64))
        .done(env)
}

/// A `ClientSession` record: lifetime, re-authentication time, expiry, latency.
fn client_session<'l>(env: &mut JNIEnv<'l>, s: Option<&ClientSession>) -> JResult<JObject<'l>> {
    let Some(s) = s else {
        return Ok(JObject::null());
    };
    let r = Rec::default()
        .i64(s.lifetime_ms)
        .i64(raw(s.reauth_at_ms))
        .i64(raw(s.expiry_ms));
    r.i64(s.latency_ms).done(env)
}

/// A `RefusedRequest` record: API key, version, correlation id, error code, error message.
fn refused<'l>(env: &mut JNIEnv<'l>, r: &RefusedRequest) -> JResult<JObject<'l>> {
    let rec = Rec::default()
        .i32(r.api_key.into())
        .i32(r.api_version.into())
        .i32(r.correlation_id);
    rec.i32(r.error_code.into()).str(&r.error_message).done(env)
}

/// The event's kind number; a failure is thrown, a failed re-authentication kept for
/// `clientConnReauthFailure`.
fn client_event(c: &mut ClientConn, ev: ClientEvent) -> JResult<i32> {
    let kind = ev.kind().as_u32() as i32;
    match ev {
        ClientEvent::Failed(e) => Err(e.into()),
        ClientEvent::ReauthenticationFailed { error, retry_at_ms } => {
            c.failure = Some((error, retry_at_ms, keep_host_cause()));
            Ok(kind)
        }
        _ => Ok(kind),
    }
}

/// The Java `ServerOutput`: the action, with the frames the connection queued for it (its
/// outbox). An action that refuses a call (a misuse: a frame for a failed connection, an answer
/// nobody asked for) is thrown instead, as for any call.
fn server_output<'l>(
    env: &mut JNIEnv<'l>,
    s: &mut ServerConn,
    a: ServerAction,
) -> JResult<JObject<'l>> {
    refuse_misuse(&a)?;
    let frames = jbytes(env, &s.conn.poll_transmit().unwrap_or_default())?;
    let error = a
        .error()
        .map_or(Ok(JObject::null()), |e| exception(env, e))?;
    let args = [
        int(a.kind().as_u32() as i32),
        obj(&frames),
        long(a.deadline_ms().unwrap_or(0)),
        obj(&error),
    ];
    up(env, Up::ServerOutput, &args)
}

fn refuse_misuse(a: &ServerAction) -> JResult<()> {
    match a.error() {
        Some(e) if e.kind() == ErrorKind::Misuse => Err(e.clone().into()),
        _ => Ok(()),
    }
}

/// Returns the output of `a` to Java, or with `hold` keeps `a` (the frames stay in the
/// outbox) and returns null: an asynchronous host settling a frame reads the output once, at
/// the end.
fn deliver<'l>(
    env: &mut JNIEnv<'l>,
    s: &mut ServerConn,
    a: ServerAction,
    hold: jboolean,
) -> JResult<JObject<'l>> {
    if hold == 0 {
        return server_output(env, s, a);
    }
    refuse_misuse(&a)?;
    s.held = Some(a);
    s.held_cause = keep_host_cause();
    Ok(JObject::null())
}

fn client<'a>(h: jlong) -> &'a mut ClientConn {
    get_mut::<ClientConn>(h)
}

fn server<'a>(h: jlong) -> &'a mut ServerConn {
    get_mut::<ServerConn>(h)
}

natives! {
    // --- client configuration

    fn clientConfigBuilderNew(env, registry_h: jlong, mechanism: JString<'l>) -> i64 {
        let m = string(env, &mechanism, "mechanism")?;
        Ok(into_handle(ClientConfig::builder(
            registry(registry_h).clone(),
            &m,
        )))
    }

    fn clientConfigBuilderFree(_env, b: jlong) -> () {
        free::<ClientConfigBuilder>(b)
    }
}

setters! { ClientConfigBuilder:
    clientConfigBuilderSetClientId(env, id: JString<'l>)
        |b| b.set_client_id(opt_string(env, &id)?.as_deref());
    clientConfigBuilderSetApiVersionsVersion(_env, v: jlong) |b| b.set_api_versions_version(v);
    clientConfigBuilderSetKnownVersions(_env, hs: jlong, auth: jlong, legacy: jboolean)
        |b| b.set_known_versions(hs, (legacy == 0).then_some(auth));
    clientConfigBuilderSetSoftware(env, name: JString<'l>, version: JString<'l>)
        |b| b.set_software(&string(env, &name, "name")?, &string(env, &version, "version")?);
    clientConfigBuilderSetReauthTiming(_env, timing: jint)
        |b| b.set_reauth_timing(ReauthTiming::try_from_u32(timing as u32)?);
    clientConfigBuilderSetReauthMinDelayMs(_env, ms: jlong) |b| b.set_reauth_min_delay_ms(ms);
    clientConfigBuilderSetReauthRetryMs(_env, ms: jlong) |b| b.set_reauth_retry_ms(ms);
    clientConfigBuilderSetMaxReceiveSize(_env, n: jlong) |b| b.set_max_receive_size(n);
}

natives! {
    fn clientConfigBuilderBuild(_env, b: jlong) -> i64 {
        Ok(into_handle::<ClientCfg>(
            get_mut::<ClientConfigBuilder>(b).build()?,
        ))
    }

    fn clientConfigFree(_env, h: jlong) -> () {
        free::<ClientCfg>(h)
    }

    fn clientConfigMetrics(env, h: jlong, now: jlong) -> JObject<'l> {
        metrics(env, get::<ClientCfg>(h).metrics(), now)
    }

    // --- client connection

    fn clientConnNew(_env, config: jlong) -> i64 {
        let conn = ClientConnection::new(get::<ClientCfg>(config).clone());
        Ok(into_handle(ClientConn {
            conn,
            failure: None,
        }))
    }

    fn clientConnFree(_env, h: jlong) -> () {
        free::<ClientConn>(h)
    }

    fn clientConnStart(_env, h: jlong, now: jlong) -> () {
        Ok(client(h).conn.start(now)?)
    }

    fn clientConnTransmit(env, h: jlong) -> JObject<'l> {
        let out = client(h).conn.poll_transmit().unwrap_or_default();
        jbytes(env, &out)
    }

    fn clientConnHandleFrame(env, h: jlong, frame: JByteArray<'l>, now: jlong) -> i32 {
        let mut c = client(h);
        // While the connection is ready the core answers Application without reading the
        // frame (ClientConnection::is_ready): its bytes need not cross into Rust.
        let ev = match c.conn.is_ready() {
            true => ClientEvent::Application,
            false => {
                let f = bytes(env, &frame, "frame")?;
                c.conn.handle_frame(&f, now)
            }
        };
        client_event(c, ev)
    }

    fn clientConnReauthFailure(env, h: jlong) -> JObject<'l> {
        let failure = client(h).failure.take();
        let (e, retry, cause) = failure
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "no re-authentication failed"))?;
        if let Some(cause) = cause {
            restore_host_cause(cause);
        }
        let e = exception(env, &e)?;
        up(env, Up::ReauthFailed, &[obj(&e), long(raw(retry))])
    }

    fn clientConnPendingWork(env, h: jlong) -> JObject<'l> {
        let c = client(h);
        hostmech::stage(env, c.conn.pending_work())
    }

    fn clientConnResume(
        _env,
        h: jlong,
        message: JByteArray<'l>,
        error: JObject<'l>,
        now: jlong,
    ) -> i32 {
        let mut c = client(h);
        let work = c.conn.pending_work().cloned().ok_or_else(nothing_pending)?;
        let step = hostmech::resume_client(&work, &message, &error)?;
        let ev = c.conn.resume(step, now);
        client_event(c, ev)
    }

    fn clientConnClosed(env, h: jlong, now: jlong) -> JObject<'l> {
        let e = client(h).conn.connection_closed(now);
        exception(env, &e)
    }

    fn clientConnNextDeadline(_env, h: jlong) -> i64 {
        Ok(raw(client(h).conn.next_deadline()))
    }

    fn clientConnHandleTimeout(_env, h: jlong, now: jlong) -> bool {
        Ok(client(h).conn.handle_timeout(now)?)
    }

    fn clientConnReauthPending(_env, h: jlong, now: jlong) -> bool {
        Ok(client(h).conn.reauth_pending(now))
    }

    fn clientConnBeforeRequest(_env, h: jlong, now: jlong) -> bool {
        Ok(client(h).conn.before_request(now)?)
    }

    fn clientConnStartReauth(_env, h: jlong, now: jlong) -> bool {
        Ok(client(h).conn.start_reauthentication(now)?)
    }

    fn clientConnSession(env, h: jlong) -> JObject<'l> {
        let c = client(h);
        client_session(env, c.conn.session())
    }

    fn clientConnReauthenticating(_env, h: jlong) -> bool {
        Ok(client(h).conn.is_reauthenticating())
    }

    fn clientConnReady(_env, h: jlong) -> bool {
        Ok(client(h).conn.is_ready())
    }

    // --- server configuration

    fn serverConfigBuilderNew(_env, registry_h: jlong) -> i64 {
        Ok(into_handle(ServerConfig::builder(
            registry(registry_h).clone(),
        )))
    }

    fn serverConfigBuilderFree(_env, b: jlong) -> () {
        free::<ServerConfigBuilder>(b)
    }
}

setters! { ServerConfigBuilder:
    serverConfigBuilderSetEnabledMechanisms(env, names: JObjectArray<'l>)
        |b| b.set_enabled_mechanisms(strings(env, &names)?);
    serverConfigBuilderSetMaxReauthMs(_env, ms: jlong) |b| b.set_max_reauth_ms(ms);
    serverConfigBuilderSetMaxReauthMsFor(env, mechanism: JString<'l>, ms: jlong)
        |b| b.set_max_reauth_ms_for(&string(env, &mechanism, "mechanism")?, ms);
    serverConfigBuilderSetMaxReceiveSize(_env, n: jlong) |b| b.set_max_receive_size(n);
    serverConfigBuilderSetMaxRequestSize(_env, n: jlong) |b| b.set_max_request_size(n);
    serverConfigBuilderSetUnknownUserMask(env, secret: JByteArray<'l>, iterations: jlong)
        |b| b.set_unknown_user_mask(&bytes(env, &secret, "secret")?, iterations);
    serverConfigBuilderSetFailedAuthenticationDelayMs(_env, ms: jlong)
        |b| b.set_failed_authentication_delay_ms(ms);
    serverConfigBuilderSetReauthRetryMs(_env, ms: jlong) |b| b.set_reauth_retry_ms(ms);
    serverConfigBuilderSetApiVersion(_env, key: jlong, min: jlong, max: jlong)
        |b| b.set_api_version(key, min, max);
}

natives! {
    fn serverConfigBuilderBuild(_env, b: jlong) -> i64 {
        Ok(into_handle::<ServerCfg>(
            get_mut::<ServerConfigBuilder>(b).build()?,
        ))
    }

    fn serverConfigFree(_env, h: jlong) -> () {
        free::<ServerCfg>(h)
    }

    fn serverConfigMetrics(env, h: jlong, now: jlong) -> JObject<'l> {
        metrics(env, get::<ServerCfg>(h).metrics(), now)
    }

    fn serverConfigApiVersionsResponse(env, h: jlong, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let (answer, _) = get::<ServerCfg>(h).api_versions_response(&frame)?;
        jbytes(env, &answer)
    }

    // --- server connection

    fn serverConnNew(_env, config: jlong) -> i64 {
        let conn = ServerConnection::new(get::<ServerCfg>(config).clone());
        Ok(into_handle(ServerConn {
            conn,
            held: None,
            held_cause: None,
        }))
    }

    fn serverConnFree(_env, h: jlong) -> () {
        free::<ServerConn>(h)
    }

    fn serverConnHandleFrame(
        env,
        h: jlong,
        frame: JByteArray<'l>,
        now: jlong,
        hold: jboolean,
    ) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let mut s = server(h);
        let a = s.conn.handle_frame(&frame, now);
        deliver(env, s, a, hold)
    }

    fn serverConnProvide(
        env,
        h: jlong,
        kind: jint,
        value: JString<'l>,
        expiry: jlong,
        owner: JString<'l>,
        now: jlong,
        hold: jboolean,
    ) -> JObject<'l> {
        let mut s = server(h);
        let request = s
            .conn
            .pending_request()
            .cloned()
            .ok_or_else(nothing_requested)?;
        let a = answer(env, &request, kind, &value, expiry, &owner)?.now()?;
        let a = s.conn.provide_credential(a, now);
        deliver(env, s, a, hold)
    }

    fn serverConnResume(
        env,
        h: jlong,
        step: JObject<'l>,
        error: JObject<'l>,
        now: jlong,
        hold: jboolean,
    ) -> JObject<'l> {
        let mut s = server(h);
        let work = s.conn.pending_work().cloned().ok_or_else(nothing_pending)?;
        let r = hostmech::resume_server(&work, &step, &error)?;
        let a = s.conn.resume(r, now);
        deliver(env, s, a, hold)
    }

    fn serverConnHostTask(env, h: jlong) -> JObject<'l> {
        let s = server(h);
        match s.conn.host_task() {
            Some(HostTask::Credential(r)) => request(env, r),
            Some(HostTask::Mechanism(w)) => hostmech::stage(env, Some(w)),
            None => Ok(JObject::null()),
        }
    }

    fn serverConnTakeHeld(env, h: jlong) -> JObject<'l> {
        let mut s = server(h);
        if let Some(cause) = s.held_cause.take() {
            restore_host_cause(cause);
        }
        let a = s
            .held
            .take()
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "no output is held"))?;
        server_output(env, s, a)
    }

    fn serverConnPendingRequest(env, h: jlong) -> JObject<'l> {
        let s = server(h);
        s.conn
            .pending_request()
            .map_or(Ok(JObject::null()), |r| request(env, r))
    }

    fn serverConnPendingWork(env, h: jlong) -> JObject<'l> {
        let s = server(h);
        hostmech::stage(env, s.conn.pending_work())
    }

    fn serverConnCheckFrameSize(_env, h: jlong, declared: jint, now: jlong) -> i64 {
        Ok(server(h).conn.check_frame_size(declared, now)? as i64)
    }

    fn serverConnRefusedRequest(env, h: jlong) -> JObject<'l> {
        let s = server(h);
        s.conn
            .refused_request()
            .map_or(Ok(JObject::null()), |r| refused(env, r))
    }

    fn serverConnGate(_env, h: jlong, api_key: jshort, now: jlong) -> i32 {
        Ok(server(h).conn.gate(api_key, now).as_u32() as i32)
    }

    fn serverConnIllegalState(env, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        ServerConnection::illegal_state_response(&frame)
            .map_or(Ok(JObject::null()), |b| jbytes(env, &b))
    }

    fn serverConnReady(_env, h: jlong) -> bool {
        Ok(server(h).conn.is_ready())
    }

    fn serverConnNextDeadline(_env, h: jlong) -> i64 {
        Ok(raw(server(h).conn.next_deadline()))
    }

    fn serverConnSession(env, h: jlong) -> JObject<'l> {
        let s = server(h);
        s.conn
            .session()
            .map_or(Ok(JObject::null()), |s| session(env, s))
    }
}
