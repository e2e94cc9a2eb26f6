//! Mechanisms written in Java (KIP-43 pluggability): `HostClientMechanism`,
//! `AsyncHostClientMechanism` and `HostServerMechanism` objects made by a `Supplier` registered
//! by name, driven by ksasl's authenticators and connection drivers like the built-ins.
//!
//! Every call goes through a static helper of `Native` (`hostCreate`, `hostClientStart`,
//! `hostServerStep`, ...) that catches whatever the host code throws and reports it in the
//! result, so no Java exception is pending when the helper returns. The result is a
//! `long[4]` out-array `{status, code, expiryMs, hasExpiry}` plus an `Object[4]`
//! `{byte[] message, String text, String[] details, Object extra}` (see `Native.java`).
//!
//! Answers that come later: an `AsyncHostClientMechanism` returns a `CompletionStage<byte[]>`,
//! and a `HostServerMechanism` may return `HostServerStep.later(stage)`. The stage becomes
//! the core's pending step (`ClientStep::Pending` / `MechServerStep::Pending`) as a
//! [`JavaWork`] inside the `HostWork`; the host waits for it and hands its value (or its
//! exception) back through a `resume` entry point, which [`resume_client`] and
//! [`resume_server`] turn into the mechanism's step.
//!
//! Unlike a credential lookup (whose exception reaches the caller unchanged), a failure of host
//! mechanism code becomes a ksasl error: a `KsaslError` thrown by the host keeps its code and
//! message, anything else is `HOST_MECHANISM_FAILED` with the host's text. The Java
//! exception is kept as the cause of the exception thrown to the caller (see [`crate::entry`]).

use std::cell::RefCell;

use jni::objects::{GlobalRef, JByteArray, JClass, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jlong, jobject};
use jni::JNIEnv;
use ksasl::mech::{
    Authenticated, ClientMechanism, ClientStep, HostWork, MechServerStep, ServerMechanism,
};
use ksasl::{Error, ErrorCode, Result};

use crate::objects::Registry;
use crate::{
    entry, locked, native_class, obj, opt_string, read_string_array, string, Fail, JResult,
};

/// The helper's status (`out[0]`).
const SEND: i64 = 0;
const DONE: i64 = 1;
const THREW: i64 = 2;
const NULL: i64 = 3;
/// The answer comes later: `extra` is the `CompletionStage`.
const LATER: i64 = 4;

thread_local! {
    /// The last Java exception a host mechanism threw on this thread, with the ksasl error it
    /// became: [`crate::entry`] sets it as the cause of the exception it throws for that error.
    static HOST_CAUSE: RefCell<Option<(ErrorCode, String, GlobalRef)>> = const { RefCell::new(None) };
}

pub(crate) fn clear_cause() {
    drop(HOST_CAUSE.with(|c| c.borrow_mut().take()));
}

/// The host exception behind `e`, if `e` is the error a host exception became on this thread.
pub(crate) fn take_cause(e: &Error) -> Option<GlobalRef> {
    HOST_CAUSE.with(|c| {
        let mut c = c.borrow_mut();
        match c.as_ref() {
            Some((code, message, _)) if *code == e.code() && message == e.message() => {
                c.take().map(|(_, _, g)| g)
            }
            _ => None,
        }
    })
}

fn host_failed(message: String) -> Error {
    Error::new(ErrorCode::HostMechanismFailed, message)
}

/// What one helper call answered.
struct Reply {
    status: i64,
    code: i64,
    expiry: Option<i64>,
    message: Option<Vec<u8>>,
    text: Option<String>,
    details: Vec<String>,
    cause: Option<GlobalRef>,
    /// `hostCreate`: the object the factory made; [`LATER`]: the `CompletionStage`.
    created: Option<GlobalRef>,
}

/// Calls `Native.<method>(args..., out)` on the current (attached) thread inside a local frame.
/// `what` names the host code in messages ("the X mechanism", "the X factory").
fn call(
    what: &str,
    method: &str,
    sig: &str,
    args: impl for<'a> FnOnce(&mut JNIEnv<'a>) -> JResult<Vec<JObject<'a>>>,
    nows: &[i64],
) -> Result<Reply> {
    let mut env = crate::attach()?;
    let r = env.with_local_frame(16, |env| -> JResult<Reply> {
        let objs = args(env)?;
        let out = env.new_long_array(4)?;
        let mut jargs: Vec<JValue> = objs.iter().map(JValue::Object).collect();
        for n in nows {
            jargs.push(JValue::Long(*n));
        }
        jargs.push(JValue::Object(&out));
        let res = env
            .call_static_method(native_class()?, method, sig, &jargs)?
            .l()?;
        let mut o = [0i64; 4];
        env.get_long_array_region(&out, 0, &mut o)?;
        let arr = JObjectArray::from(res);
        if arr.is_null() {
            return Err(Fail::Core(host_failed(format!(
                "{what}: the ksasl helper returned nothing"
            ))));
        }
        let m = JByteArray::from(env.get_object_array_element(&arr, 0)?);
        let message = if m.is_null() {
            None
        } else {
            Some(env.convert_byte_array(&m)?)
        };
        let t = JString::from(env.get_object_array_element(&arr, 1)?);
        let text = opt_string(env, &t)?;
        let d = JObjectArray::from(env.get_object_array_element(&arr, 2)?);
        let details = read_string_array(env, &d)?;
        let c = env.get_object_array_element(&arr, 3)?;
        let global = |env: &mut JNIEnv<'_>, o: JObject<'_>| -> JResult<Option<GlobalRef>> {
            Ok(if o.is_null() {
                None
            } else {
                Some(env.new_global_ref(o)?)
            })
        };
        let (cause, created) = if o[0] == THREW {
            (global(env, c)?, None)
        } else {
            (None, global(env, c)?)
        };
        Ok(Reply {
            status: o[0],
            code: o[1],
            expiry: (o[3] != 0).then_some(o[2]),
            message,
            text,
            details,
            cause,
            created,
        })
    });
    if env.exception_check().unwrap_or(true) {
        // Only an error of the JVM itself (out of memory in the helper) gets here.
        let _ = env.exception_clear();
        return Err(host_failed(format!(
            "{what} failed with a Java exception the binding could not report"
        )));
    }
    r.map_err(|f| match f {
        Fail::Core(e) => e,
        Fail::Java => host_failed(format!("{what} failed with a Java exception")),
        Fail::Jni(j) => Error::new(ErrorCode::Internal, format!("JNI failure in {what}: {j}")),
    })
}

/// The ksasl error for a reply with status [`THREW`]; remembers the cause for [`crate::entry`].
fn threw(what: &str, r: Reply) -> Error {
    let text = r.text.unwrap_or_else(|| "an exception".to_string());
    let known = u32::try_from(r.code)
        .ok()
        .filter(|c| *c != 0)
        .and_then(ErrorCode::from_u32);
    let mut e = match known {
        Some(code) => Error::new(code, text),
        None => host_failed(format!("{what} threw {text}")),
    };
    for kv in r.details.chunks(2) {
        if let [k, v] = kv {
            e = e.with_detail(k.clone(), v.clone());
        }
    }
    if let Some(g) = r.cause {
        HOST_CAUSE.with(|c| *c.borrow_mut() = Some((e.code(), e.message().to_string(), g)));
    }
    e
}

/// Makes one mechanism object with the Java factory.
fn create(name: &str, factory: &GlobalRef) -> Result<GlobalRef> {
    let what = format!("the {name} factory");
    let r = call(
        &what,
        "hostCreate",
        "(Ljava/util/function/Supplier;[J)[Ljava/lang/Object;",
        |env| Ok(vec![env.new_local_ref(factory.as_obj())?]),
        &[],
    )?;
    match r.status {
        THREW => Err(threw(&what, r)),
        _ => r
            .created
            .ok_or_else(|| host_failed(format!("{what} returned null"))),
    }
}

/// The value inside the `HostWork` of a Java mechanism that answers later.
pub(crate) struct JavaWork {
    /// The `CompletionStage` the mechanism returned (released when the work is dropped).
    stage: GlobalRef,
    /// The mechanism's name, for error messages.
    mechanism: String,
    /// Client work: the `AsyncHostClientMechanism`, asked `isComplete()` on resumption.
    client: Option<GlobalRef>,
    /// The method whose answer is awaited (`start` or `step`), for error messages.
    method: &'static str,
}

impl JavaWork {
    fn what(&self) -> String {
        format!("the {} mechanism", self.mechanism)
    }
}

/// The pending work of a [`LATER`] reply.
fn later(
    name: &str,
    r: Reply,
    client: Option<&GlobalRef>,
    method: &'static str,
) -> Result<HostWork> {
    let stage = r
        .created
        .ok_or_else(|| host_failed(format!("the {name} mechanism's {method}() returned null")))?;
    Ok(HostWork::new(JavaWork {
        stage,
        mechanism: name.to_string(),
        client: client.cloned(),
        method,
    }))
}

fn java_work(work: &HostWork) -> Result<&JavaWork> {
    work.downcast_ref::<JavaWork>().ok_or_else(|| {
        Error::new(
            ErrorCode::Internal,
            "the pending work did not come from a Java mechanism",
        )
    })
}

/// The `CompletionStage` of pending work as a new local reference, or null without work.
pub(crate) fn stage(env: &mut JNIEnv<'_>, work: Option<&HostWork>) -> JResult<jobject> {
    match work.and_then(|w| w.downcast_ref::<JavaWork>()) {
        Some(w) => Ok(env.new_local_ref(w.stage.as_obj())?.into_raw()),
        None => Ok(std::ptr::null_mut()),
    }
}

/// The refusal of a resumption when no work is pending.
pub(crate) fn nothing_pending() -> Fail {
    Fail::Core(ksasl::mech::nothing_pending())
}

/// A new local reference to `o` in the helper's frame (null stays null).
fn local<'a>(env: &mut JNIEnv<'a>, o: &JObject<'_>) -> JResult<JObject<'a>> {
    if o.is_null() {
        Ok(JObject::null())
    } else {
        Ok(env.new_local_ref(o)?)
    }
}

/// The error the exception a stage completed with (handed to `resumeWithError`) becomes.
fn failure(w: &JavaWork, error: &JObject<'_>) -> Error {
    let what = w.what();
    let r = call(
        &what,
        "hostResumeFailure",
        "(Ljava/lang/Throwable;[J)[Ljava/lang/Object;",
        |env| Ok(vec![local(env, error)?]),
        &[],
    );
    match r {
        Ok(r) if r.status == THREW => threw(&what, r),
        Ok(r) => host_failed(format!("{what}: unknown helper status {}", r.status)),
        Err(e) => e,
    }
}

/// Continues a client exchange with what an `AsyncHostClientMechanism`'s stage produced: its
/// message (`error` null), or the exception it completed with.
pub(crate) fn resume_client(
    work: &HostWork,
    message: &JObject<'_>,
    error: &JObject<'_>,
) -> Result<ClientStep> {
    let w = java_work(work)?;
    if !error.is_null() {
        return Err(failure(w, error));
    }
    let mech = w.client.as_ref().ok_or_else(|| {
        Error::new(
            ErrorCode::Internal,
            "the pending work is not a client mechanism's",
        )
    })?;
    let what = w.what();
    let r = call(
        &what,
        "hostAsyncClientAnswer",
        "(Lorg/ksasl/AsyncHostClientMechanism;[B[J)[Ljava/lang/Object;",
        |env| {
            Ok(vec![
                env.new_local_ref(mech.as_obj())?,
                local(env, message)?,
            ])
        },
        &[],
    )?;
    client_answer(&what, w.method, r)
}

/// Continues a server exchange with what a `HostServerStep.later` stage produced: its step
/// (`error` null; a null step fails, another `later` step waits again), or the exception it
/// completed with.
pub(crate) fn resume_server(
    work: &HostWork,
    step: &JObject<'_>,
    error: &JObject<'_>,
) -> Result<MechServerStep> {
    let w = java_work(work)?;
    if !error.is_null() {
        return Err(failure(w, error));
    }
    let what = w.what();
    let r = call(
        &what,
        "hostServerAnswer",
        "(Lorg/ksasl/HostServerStep;[J)[Ljava/lang/Object;",
        |env| Ok(vec![local(env, step)?]),
        &[],
    )?;
    server_answer(&w.mechanism, r)
}

/// A client mechanism's answer: a message to send, completion, or an error.
fn client_answer(what: &str, method: &str, r: Reply) -> Result<ClientStep> {
    match (r.status, r.message) {
        (THREW, _) => Err(threw(what, Reply { message: None, ..r })),
        (DONE, m) => Ok(ClientStep::Done(m)),
        (SEND, Some(m)) => Ok(ClientStep::Send(m)),
        _ => Err(host_failed(format!(
            "{what}'s {method}() returned no message before it was complete"
        ))),
    }
}

/// A server mechanism's answer: a challenge, completion, work for later, or an error.
fn server_answer(name: &str, r: Reply) -> Result<MechServerStep> {
    let what = format!("the {name} mechanism");
    match r.status {
        THREW => Err(threw(&what, r)),
        SEND => Ok(MechServerStep::Challenge(r.message.unwrap_or_default())),
        DONE => {
            let who = r.text.unwrap_or_default();
            if who.is_empty() {
                return Err(host_failed(format!(
                    "{what} authenticated nobody (empty authorization id)"
                )));
            }
            let mut a = Authenticated::new(who);
            a.credential_expiry_ms = r.expiry;
            Ok(MechServerStep::Done(r.message, a))
        }
        LATER => Ok(MechServerStep::Pending(later(name, r, None, "step")?)),
        NULL => Err(host_failed(format!("{what}'s step() returned null"))),
        s => Err(host_failed(format!("{what}: unknown helper status {s}"))),
    }
}

/// A client mechanism implemented by a Java `HostClientMechanism`, or by an
/// `AsyncHostClientMechanism` whose every answer comes later.
pub(crate) struct JavaClientMechanism {
    name: String,
    obj: GlobalRef,
    asynchronous: bool,
}

impl JavaClientMechanism {
    pub(crate) fn create(name: &str, factory: &GlobalRef, asynchronous: bool) -> Result<Self> {
        Ok(JavaClientMechanism {
            name: name.to_string(),
            obj: create(name, factory)?,
            asynchronous,
        })
    }

    fn answer(&self, method: &'static str, r: Reply) -> Result<ClientStep> {
        let what = format!("the {} mechanism", self.name);
        if !self.asynchronous || r.status == THREW {
            return client_answer(&what, method, r);
        }
        match r.status {
            LATER => Ok(ClientStep::Pending(later(
                &self.name,
                r,
                Some(&self.obj),
                method,
            )?)),
            NULL => Err(host_failed(format!("{what}'s {method}() returned null"))),
            s => Err(host_failed(format!("{what}: unknown helper status {s}"))),
        }
    }

    /// The helper and the mechanism's Java type in its signature.
    fn helper(
        &self,
        sync: &'static str,
        asynchronous: &'static str,
    ) -> (&'static str, &'static str) {
        if self.asynchronous {
            (asynchronous, "Lorg/ksasl/AsyncHostClientMechanism;")
        } else {
            (sync, "Lorg/ksasl/HostClientMechanism;")
        }
    }
}

impl ClientMechanism for JavaClientMechanism {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, now_ms: i64) -> Result<ClientStep> {
        let what = format!("the {} mechanism", self.name);
        let (method, ty) = self.helper("hostClientStart", "hostAsyncClientStart");
        let r = call(
            &what,
            method,
            &format!("({ty}J[J)[Ljava/lang/Object;"),
            |env| Ok(vec![env.new_local_ref(self.obj.as_obj())?]),
            &[now_ms],
        )?;
        self.answer("start", r)
    }

    fn step(&mut self, challenge: &[u8], now_ms: i64) -> Result<ClientStep> {
        let what = format!("the {} mechanism", self.name);
        let (method, ty) = self.helper("hostClientStep", "hostAsyncClientStep");
        let r = call(
            &what,
            method,
            &format!("({ty}[BJ[J)[Ljava/lang/Object;"),
            |env| {
                let obj = env.new_local_ref(self.obj.as_obj())?;
                let c = env.byte_array_from_slice(challenge)?;
                Ok(vec![obj, c.into()])
            },
            &[now_ms],
        )?;
        self.answer("step", r)
    }
}

/// A server mechanism implemented by a Java `HostServerMechanism`.
pub(crate) struct JavaServerMechanism {
    name: String,
    obj: GlobalRef,
}

impl JavaServerMechanism {
    pub(crate) fn create(name: &str, factory: &GlobalRef) -> Result<Self> {
        Ok(JavaServerMechanism {
            name: name.to_string(),
            obj: create(name, factory)?,
        })
    }
}

impl ServerMechanism for JavaServerMechanism {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, response: &[u8], now_ms: i64) -> Result<MechServerStep> {
        let what = format!("the {} mechanism", self.name);
        let r = call(
            &what,
            "hostServerStep",
            "(Lorg/ksasl/HostServerMechanism;[BJ[J)[Ljava/lang/Object;",
            |env| {
                let obj = env.new_local_ref(self.obj.as_obj())?;
                let c = env.byte_array_from_slice(response)?;
                Ok(vec![obj, c.into()])
            },
            &[now_ms],
        )?;
        server_answer(&self.name, r)
    }
}

/// Checks the Java factory is not null and keeps it for the registry.
fn global_factory(env: &mut JNIEnv<'_>, f: &JObject<'_>) -> JResult<GlobalRef> {
    if f.is_null() {
        return Err(Fail::Core(Error::new(
            ErrorCode::NullArgument,
            "factory must not be null",
        )));
    }
    Ok(env.new_global_ref(f)?)
}

// --- registration -------------------------------------------------------------------------

/// Registers a Java client mechanism factory under `name`: `HostClientMechanism`s, or with
/// `asynchronous` `AsyncHostClientMechanism`s.
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddHostClient<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    factory: JObject<'l>,
    asynchronous: jboolean,
) {
    entry(&mut env, (), |env| {
        let name = string(env, &name, "name")?;
        let f = global_factory(env, &factory)?;
        let n = name.clone();
        let asynchronous = asynchronous != 0;
        locked(unsafe { obj::<Registry>(h) }).register_client(&name, move || {
            let m = JavaClientMechanism::create(&n, &f, asynchronous)?;
            Ok(Box::new(m) as Box<dyn ClientMechanism>)
        })?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_registryAddHostServer<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    factory: JObject<'l>,
) {
    entry(&mut env, (), |env| {
        let name = string(env, &name, "name")?;
        let f = global_factory(env, &factory)?;
        let n = name.clone();
        locked(unsafe { obj::<Registry>(h) }).register_server(&name, move || {
            Ok(Box::new(JavaServerMechanism::create(&n, &f)?) as Box<dyn ServerMechanism>)
        })?;
        Ok(())
    })
}

/// `KsaslException.of(code, message)`: the exception object for a code and a host's message.
#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_errorNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
    code: jni::sys::jint,
    message: JString<'l>,
) -> jni::sys::jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let message = string(env, &message, "message")?;
        let c = u32::try_from(code)
            .ok()
            .and_then(ErrorCode::from_u32)
            .ok_or_else(|| crate::invalid(format!("{code} is not a ksasl error code")))?;
        Ok(crate::exception(env, &Error::new(c, message))?.into_raw())
    })
}
