//! Mechanisms written in Java (KIP-43 pluggability): `HostClientMechanism`,
//! `AsyncHostClientMechanism` and `HostServerMechanism` objects made by a `Supplier`, called
//! through the core's `HostClientCalls` / `HostServerCalls`.
//!
//! A Java helper of `Native` (`hostClientCall`, `hostServerCall`, ...) calls the host's code and
//! answers through the `hostSet*` entry points below, which fill the core's `HostOutput` whose
//! address it is given: the core alone decides what an answer means and how a wrong one fails.
//! A stage the host answers later (`CompletionStage`) becomes the pending work; its result
//! comes back through `resume`, again as a `HostOutput` (the core's late answer).

use jni::objects::{GlobalRef, JByteArray, JObject, JString};
use jni::sys::{jint, jlong};
use jni::JNIEnv;
use ksasl::mech::{
    host_failure, nothing_pending, ClientStep, HostClientCalls, HostOutput, HostServerCalls,
    HostWork, MechServerStep, MechanismRegistry,
};
use ksasl::{ErrorCode, Result};

use crate::glue::{
    bytes, call_host, long, natives, obj, opt, opt_string, restore_host_cause, string, up, JResult,
    Up,
};

/// The pending work of a Java mechanism: the stage it returned and, for an asynchronous client,
/// the mechanism (asked `isComplete()` when the stage's message comes back).
pub(crate) struct Stage {
    stage: GlobalRef,
    mechanism: Option<GlobalRef>,
}

/// Calls one Java helper for a host mechanism with `objects` (references of the calling
/// thread), then for a step the message (a `byte[]`, or null) and the time, and the address of
/// `out`; the helper answers through the setters below. If the helper cannot run, the step
/// fails.
fn call(
    out: &mut HostOutput,
    which: Up,
    objects: &[&JObject<'_>],
    step: Option<(Option<&[u8]>, i64)>,
) {
    let ptr = out as *mut HostOutput as jlong;
    let r = call_host("mechanism", false, |env| {
        let m = match step.and_then(|(m, _)| m) {
            Some(m) => env.byte_array_from_slice(m)?.into(),
            None => JObject::null(),
        };
        let mut a: Vec<_> = objects.iter().map(|o| obj(o)).collect();
        a.extend(step.into_iter().flat_map(|(_, now)| [obj(&m), long(now)]));
        a.push(long(ptr));
        up(env, which, &a).map(drop)
    });
    if let Err(e) = r {
        out.set_error(
            None,
            &format!("the binding could not call it: {}", e.message()),
        );
    }
}

/// One exchange of a Java mechanism: the object, and the helper that calls it (`HostClient`,
/// `HostAsyncClient` or `HostServer`: each takes the message as a `byte[]` and the time).
struct JavaMechanism(GlobalRef, Up);

impl HostClientCalls for JavaMechanism {
    fn call(&mut self, challenge: Option<&[u8]>, now_ms: i64, out: &mut HostOutput) -> i64 {
        call(out, self.1, &[self.0.as_obj()], Some((challenge, now_ms)));
        0
    }
}

impl HostServerCalls for JavaMechanism {
    fn call(&mut self, response: &[u8], now_ms: i64, out: &mut HostOutput) -> i64 {
        HostClientCalls::call(self, Some(response), now_ms, out)
    }
}

/// Makes one mechanism object with the Java factory; a failure (an exception, `null`) is the
/// core's error for the factory.
fn create(name: &str, factory: &GlobalRef, server: bool) -> Result<GlobalRef> {
    let mut out = HostOutput::new(server);
    let ptr = &mut out as *mut HostOutput as jlong;
    let made = call_host("factory", false, |env| {
        let m = up(env, Up::HostCreate, &[obj(factory.as_obj()), long(ptr)])?;
        Ok((!m.is_null()).then(|| env.new_global_ref(m)).transpose()?)
    })
    .map_err(|e| host_failure(name, "factory", None, e.message()))?;
    if let Some(m) = made {
        return Ok(m);
    }
    let failed = if server {
        out.server_step(name, "factory", 0).err()
    } else {
        out.client_step(name, "factory", 0).err()
    };
    Err(failed.unwrap_or_else(|| host_failure(name, "factory", None, "returned null")))
}

/// Registers a Java client mechanism factory (of `AsyncHostClientMechanism`s when
/// `asynchronous`) under `name`.
pub(crate) fn register_client(
    env: &mut JNIEnv<'_>,
    r: &mut MechanismRegistry,
    name: &JString<'_>,
    factory: &JObject<'_>,
    asynchronous: bool,
) -> JResult<()> {
    let helper = match asynchronous {
        true => Up::HostAsyncClient,
        false => Up::HostClient,
    };
    let n = string(env, name, "name")?;
    let f = env.new_global_ref(factory)?;
    Ok(r.register_host_client(&n.clone(), move || {
        let m = JavaMechanism(create(&n, &f, false)?, helper);
        Ok(Box::new(m) as Box<dyn HostClientCalls>)
    })?)
}

/// Registers a Java server mechanism factory under `name`.
pub(crate) fn register_server(
    env: &mut JNIEnv<'_>,
    r: &mut MechanismRegistry,
    name: &JString<'_>,
    factory: &JObject<'_>,
) -> JResult<()> {
    let n = string(env, name, "name")?;
    let f = env.new_global_ref(factory)?;
    Ok(r.register_host_server(&n.clone(), move || {
        let m = JavaMechanism(create(&n, &f, true)?, Up::HostServer);
        Ok(Box::new(m) as Box<dyn HostServerCalls>)
    })?)
}

/// The stage of pending work (a new local reference), or null.
pub(crate) fn stage<'l>(env: &mut JNIEnv<'l>, work: Option<&HostWork>) -> JResult<JObject<'l>> {
    match work.and_then(|w| w.downcast_ref::<Stage>()) {
        Some(s) => Ok(env.new_local_ref(s.stage.as_obj())?),
        None => Ok(JObject::null()),
    }
}

/// The late answer to a Java client mechanism's `work` (none: nothing is pending): the message
/// its stage completed with (`error` null) or the exception it completed with.
pub(crate) fn resume_client(
    work: Option<&HostWork>,
    message: &JObject<'_>,
    error: &JObject<'_>,
) -> Result<Result<ClientStep>> {
    let work = &work.cloned().ok_or_else(nothing_pending)?;
    let mut out = HostOutput::new(false);
    let mechanism = work
        .downcast_ref::<Stage>()
        .and_then(|s| s.mechanism.as_ref());
    match (error.is_null(), mechanism) {
        (false, _) => call(&mut out, Up::HostFail, &[error], None),
        (true, Some(m)) => call(&mut out, Up::HostClientAnswer, &[m.as_obj(), message], None),
        (true, None) => {
            drop(out.refuse(ErrorCode::HostMechanismFailed, "left no client mechanism"))
        }
    }
    out.late_client_step(work, 0)
}

/// The late answer to a Java server mechanism's `work` (none: nothing is pending): the
/// `HostServerStep` its stage completed with (`error` null) or the exception it completed with.
pub(crate) fn resume_server(
    work: Option<&HostWork>,
    step: &JObject<'_>,
    error: &JObject<'_>,
) -> Result<Result<MechServerStep>> {
    let work = &work.cloned().ok_or_else(nothing_pending)?;
    let mut out = HostOutput::new(true);
    match error.is_null() {
        false => call(&mut out, Up::HostFail, &[error], None),
        true => call(&mut out, Up::HostServerAnswer, &[step], None),
    }
    out.late_server_step(work, 0)
}

/// The `HostOutput` a Java helper answers into.
fn output<'a>(out: jlong) -> &'a mut HostOutput {
    // SAFETY: `out` is the address of a `HostOutput` that the native frame calling the helper
    // owns and does not touch until the helper returns; the helper runs on the same thread.
    unsafe { &mut *(out as *mut HostOutput) }
}

// A wrong use of the output is recorded in it by the core (and fails the step), so the
// setters ignore their results.
natives! {
    hostSetMessage(env, out: jlong, message: JByteArray<'l>) -> ()
        = drop(output(out).set_message(&bytes(env, &message, "message")?));
    hostSetDone(_env, out: jlong) -> () = drop(output(out).set_done());
    hostSetAuthenticated(env, out: jlong, id: JString<'l>, expiry: jlong) -> ()
        = drop(output(out).set_authenticated(&string(env, &id, "authorizationId")?, opt(expiry)));
    fn hostSetPending(env, out: jlong, stage: JObject<'l>, mechanism: JObject<'l>) -> () {
        let stage = env.new_global_ref(stage)?;
        let mechanism = (!mechanism.is_null())
            .then(|| env.new_global_ref(mechanism))
            .transpose()?;
        let _ = output(out).set_pending(Stage { stage, mechanism });
        Ok(())
    }
    fn hostSetError(env, out: jlong, code: jint, text: JString<'l>, cause: JObject<'l>) -> () {
        let text = opt_string(env, &text)?.unwrap_or_default();
        let o = output(out);
        let known = u32::try_from(code).ok().and_then(ErrorCode::from_u32);
        match code {
            0 => o.set_error(None, &text),
            c => drop(o.set_error_code(c as u32, &text)),
        }
        if !cause.is_null() {
            let code = known.unwrap_or(ErrorCode::HostMechanismFailed);
            restore_host_cause(Some((code, text, env.new_global_ref(cause)?)));
        }
        Ok(())
    }
    hostRefuse(env, out: jlong, what: JString<'l>) -> ()
        = drop(output(out).refuse(ErrorCode::HostMechanismFailed, string(env, &what, "what")?));
}
