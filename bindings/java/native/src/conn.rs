//! The Kafka connection drivers: configuration builders, configurations and connections.

use std::sync::Arc;

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jshort};
use jni::JNIEnv;
use ksasl::kafka::client::{ClientConnection, ClientEvent};
use ksasl::kafka::config::{ClientConfig, ClientConfigBuilder, ServerConfig, ServerConfigBuilder};
use ksasl::kafka::server::{RefusedRequest, ServerAction, ServerConnection};
use ksasl::mech::HostTask;
use ksasl::session::{ClientSession, ReauthTiming, SaslMetrics};
use ksasl::{Error, ErrorCode, ErrorKind};

use crate::glue::{
    bytes, exception, free, get, get_mut, int, into_handle, jbytes, keep_host_cause, long, natives,
    obj, opt_string, or_null, raw, restore_host_cause, setters, string, strings, up, HostCause,
    JResult, Rec, Up,
};
use crate::hostmech;
use crate::objects::{answer, registry, request, session};

type ClientCfg = Arc<ClientConfig>;
type ServerCfg = Arc<ServerConfig>;

/// A client connection, and the failure of its last re-authentication (with the host
/// exception behind it) until Java reads it.
struct ClientConn {
    conn: ClientConnection,
    failed: Option<(Error, Option<i64>, Option<HostCause>)>,
}

/// A server connection, and the last action of a frame an asynchronous host is settling
/// (`hold`) with the host exception behind its failure, if any.
struct ServerConn {
    conn: ServerConnection,
    held: Option<(ServerAction, Option<HostCause>)>,
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
            c.failed = Some((error, retry_at_ms, keep_host_cause()));
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
    let error = or_null(env, a.error(), exception)?;
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
    s.held = Some((a, keep_host_cause()));
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
    clientConfigBuilderNew(env, r: jlong, m: JString<'l>) -> i64
        = into_handle(ClientConfig::builder(registry(r).clone(), &string(env, &m, "mechanism")?));
    clientConfigBuilderFree(_env, b: jlong) -> () = free::<ClientConfigBuilder>(b);
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
    clientConfigBuilderBuild(_env, b: jlong) -> i64
        = into_handle::<ClientCfg>(get_mut::<ClientConfigBuilder>(b).build()?);
    clientConfigFree(_env, h: jlong) -> () = free::<ClientCfg>(h);
    clientConfigMetrics(env, h: jlong, now: jlong) -> JObject<'l>
        = metrics(env, get::<ClientCfg>(h).metrics(), now);

    // --- client connection
    clientConnNew(_env, c: jlong) -> i64
        = into_handle(ClientConn { conn: ClientConnection::new(Arc::clone(get(c))), failed: None });
    clientConnFree(_env, h: jlong) -> () = free::<ClientConn>(h);
    clientConnStart(_env, h: jlong, now: jlong) -> () = client(h).conn.start(now);
    clientConnTransmit(env, h: jlong) -> JObject<'l>
        = jbytes(env, &client(h).conn.poll_transmit().unwrap_or_default());
    fn clientConnHandleFrame(env, h: jlong, frame: JByteArray<'l>, now: jlong) -> i32 {
        let c = client(h);
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
        let failure = client(h).failed.take();
        let (e, retry, cause) = failure
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "no re-authentication failed"))?;
        restore_host_cause(cause);
        let e = exception(env, &e)?;
        up(env, Up::ReauthFailed, &[obj(&e), long(raw(retry))])
    }
    clientConnPendingWork(env, h: jlong) -> JObject<'l>
        = hostmech::stage(env, client(h).conn.pending_work());
    fn clientConnResume(
        _env, h: jlong, message: JByteArray<'l>, error: JObject<'l>, now: jlong,
    ) -> i32 {
        let c = client(h);
        let step = hostmech::resume_client(c.conn.pending_work(), &message, &error)?;
        let ev = c.conn.resume(step, now);
        client_event(c, ev)
    }
    clientConnClosed(env, h: jlong, now: jlong) -> JObject<'l>
        = exception(env, &client(h).conn.connection_closed(now));
    clientConnNextDeadline(_env, h: jlong) -> i64 = raw(client(h).conn.next_deadline());
    clientConnHandleTimeout(_env, h: jlong, now: jlong) -> bool
        = client(h).conn.handle_timeout(now);
    clientConnReauthPending(_env, h: jlong, now: jlong) -> bool
        = client(h).conn.reauth_pending(now);
    clientConnBeforeRequest(_env, h: jlong, now: jlong) -> bool
        = client(h).conn.before_request(now);
    clientConnStartReauth(_env, h: jlong, now: jlong) -> bool
        = client(h).conn.start_reauthentication(now);
    clientConnSession(env, h: jlong) -> JObject<'l> = client_session(env, client(h).conn.session());
    clientConnReauthenticating(_env, h: jlong) -> bool = client(h).conn.is_reauthenticating();
    clientConnReady(_env, h: jlong) -> bool = client(h).conn.is_ready();

    // --- server configuration
    serverConfigBuilderNew(_env, r: jlong) -> i64
        = into_handle(ServerConfig::builder(registry(r).clone()));
    serverConfigBuilderFree(_env, b: jlong) -> () = free::<ServerConfigBuilder>(b);
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
    serverConfigBuilderSetLegacyGssapi(_env, on: jboolean) |b| b.set_legacy_gssapi(on != 0);
}

natives! {
    serverConfigBuilderBuild(_env, b: jlong) -> i64
        = into_handle::<ServerCfg>(get_mut::<ServerConfigBuilder>(b).build()?);
    serverConfigFree(_env, h: jlong) -> () = free::<ServerCfg>(h);
    serverConfigMetrics(env, h: jlong, now: jlong) -> JObject<'l>
        = metrics(env, get::<ServerCfg>(h).metrics(), now);
    fn serverConfigApiVersionsResponse(env, h: jlong, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let (answer, _) = get::<ServerCfg>(h).api_versions_response(&frame)?;
        jbytes(env, &answer)
    }

    // --- server connection
    serverConnNew(_env, c: jlong) -> i64
        = into_handle(ServerConn { conn: ServerConnection::new(Arc::clone(get(c))), held: None });
    serverConnFree(_env, h: jlong) -> () = free::<ServerConn>(h);
    fn serverConnHandleFrame(
        env, h: jlong, frame: JByteArray<'l>, now: jlong, hold: jboolean,
    ) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let s = server(h);
        let a = s.conn.handle_frame(&frame, now);
        deliver(env, s, a, hold)
    }
    fn serverConnProvide(
        env, h: jlong, kind: jint, value: JString<'l>, expiry: jlong, owner: JString<'l>,
        now: jlong, hold: jboolean,
    ) -> JObject<'l> {
        let s = server(h);
        let a = answer(env, s.conn.pending_request(), kind, &value, expiry, &owner)?.now()?;
        let a = s.conn.provide_credential(a, now);
        deliver(env, s, a, hold)
    }
    fn serverConnResume(
        env, h: jlong, step: JObject<'l>, error: JObject<'l>, now: jlong, hold: jboolean,
    ) -> JObject<'l> {
        let s = server(h);
        let r = hostmech::resume_server(s.conn.pending_work(), &step, &error)?;
        let a = s.conn.resume(r, now);
        deliver(env, s, a, hold)
    }
    fn serverConnHostTask(env, h: jlong) -> JObject<'l> {
        match server(h).conn.host_task() {
            Some(HostTask::Credential(r)) => request(env, r),
            Some(HostTask::Mechanism(w)) => hostmech::stage(env, Some(w)),
            None => Ok(JObject::null()),
        }
    }
    fn serverConnTakeHeld(env, h: jlong) -> JObject<'l> {
        let s = server(h);
        let (a, cause) = s
            .held
            .take()
            .ok_or_else(|| Error::new(ErrorCode::WrongState, "no output is held"))?;
        restore_host_cause(cause);
        server_output(env, s, a)
    }
    serverConnPendingRequest(env, h: jlong) -> JObject<'l>
        = or_null(env, server(h).conn.pending_request(), request);
    serverConnPendingWork(env, h: jlong) -> JObject<'l>
        = hostmech::stage(env, server(h).conn.pending_work());
    serverConnCheckFrameSize(_env, h: jlong, declared: jint, now: jlong) -> i64
        = server(h).conn.check_frame_size(declared, now)? as i64;
    serverConnRefusedRequest(env, h: jlong) -> JObject<'l>
        = or_null(env, server(h).conn.refused_request(), refused);
    serverConnGate(_env, h: jlong, api_key: jshort, now: jlong) -> i32
        = server(h).conn.gate(api_key, now).as_u32() as i32;
    fn serverConnIllegalState(env, frame: JByteArray<'l>) -> JObject<'l> {
        let frame = bytes(env, &frame, "frame")?;
        let answer = ServerConnection::illegal_state_response(&frame);
        or_null(env, answer, |env, b| jbytes(env, &b))
    }
    serverConnReady(_env, h: jlong) -> bool = server(h).conn.is_ready();
    serverConnNextDeadline(_env, h: jlong) -> i64 = raw(server(h).conn.next_deadline());
    serverConnSession(env, h: jlong) -> JObject<'l>
        = or_null(env, server(h).conn.session(), session);
}
