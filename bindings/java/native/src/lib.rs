//! JNI glue of the Java binding (`org.ksasl`). It only translates: handles, strings, arrays,
//! exceptions and callbacks. Every rule lives in the ksasl crate.
//!
//! Conventions shared with `org/ksasl/Native.java`:
//! - a handle is a `Box` turned into a `jlong`; the Java object that owns it guarantees that it
//!   is live and of the right type for every call, and frees it exactly once;
//! - `Native.NONE` (`i64::MIN`) stands for "no value" in `long` times;
//! - every entry point runs inside [`entry`], which catches panics, turns ksasl errors into
//!   the Java exception for their code, and rethrows an exception a Java callback threw.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use jni::objects::{
    GlobalRef, JByteArray, JClass, JObject, JObjectArray, JStaticMethodID, JString, JThrowable,
    JValue,
};
use jni::signature::ReturnType;
use jni::sys::{jint, jlong, JNI_VERSION_1_8};
use jni::{JNIEnv, JavaVM};
use ksasl::{Error, ErrorCode};

mod conn;
mod hostmech;
mod oauth;
mod objects;
mod tokens;

/// "No value" for a `long` time on the Java side.
pub(crate) const NONE: i64 = i64::MIN;

static VM: OnceLock<JavaVM> = OnceLock::new();
static NATIVE_CLASS: OnceLock<GlobalRef> = OnceLock::new();
static CACHE: OnceLock<Cache> = OnceLock::new();

/// Classes and method ids looked up once, in `JNI_OnLoad`, instead of by name on every call.
struct Cache {
    errors: GlobalRef,
    errors_create: JStaticMethodID,
    string: GlobalRef,
    object: GlobalRef,
    long: GlobalRef,
    long_value_of: JStaticMethodID,
    boolean: GlobalRef,
    boolean_value_of: JStaticMethodID,
}

fn cache() -> JResult<&'static Cache> {
    CACHE
        .get()
        .ok_or_else(|| Fail::Core(Error::new(ErrorCode::Internal, "JNI_OnLoad did not run")))
}

fn class_of(g: &GlobalRef) -> &JClass<'static> {
    <&JClass>::from(g.as_obj())
}

thread_local! {
    /// The exception a Java callback threw during the current native call, kept (cleared from
    /// the JNI environment) until the call returns, then rethrown unchanged.
    static CALLBACK_EXCEPTION: RefCell<Option<GlobalRef>> = const { RefCell::new(None) };
}

/// Caches the VM and the classes the native code calls back into.
#[no_mangle]
pub extern "system" fn JNI_OnLoad(vm: JavaVM, _reserved: *mut std::ffi::c_void) -> jint {
    let r = catch_unwind(AssertUnwindSafe(|| -> jni::errors::Result<()> {
        let mut env = vm.get_env()?;
        let native = env.find_class("org/ksasl/Native")?;
        let _ = NATIVE_CLASS.set(env.new_global_ref(native)?);
        let mut global = |name: &str| -> jni::errors::Result<GlobalRef> {
            let c = env.find_class(name)?;
            env.new_global_ref(c)
        };
        let errors = global("org/ksasl/Errors")?;
        let string = global("java/lang/String")?;
        let object = global("java/lang/Object")?;
        let long = global("java/lang/Long")?;
        let boolean = global("java/lang/Boolean")?;
        let errors_create = env.get_static_method_id(
            class_of(&errors),
            "create",
            "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;)Ljava/lang/Throwable;",
        )?;
        let long_value_of =
            env.get_static_method_id(class_of(&long), "valueOf", "(J)Ljava/lang/Long;")?;
        let boolean_value_of =
            env.get_static_method_id(class_of(&boolean), "valueOf", "(Z)Ljava/lang/Boolean;")?;
        let _ = CACHE.set(Cache {
            errors,
            errors_create,
            string,
            object,
            long,
            long_value_of,
            boolean,
            boolean_value_of,
        });
        Ok(())
    }));
    if !matches!(r, Ok(Ok(()))) {
        return jni::sys::JNI_ERR;
    }
    let _ = VM.set(vm);
    JNI_VERSION_1_8
}

/// Why an entry point failed.
pub(crate) enum Fail {
    /// A ksasl error: thrown as the exception class of its code.
    Core(Error),
    /// A Java exception is already pending.
    Java,
    /// A JNI failure other than a Java exception.
    Jni(jni::errors::Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Core(e)
    }
}

impl From<jni::errors::Error> for Fail {
    fn from(e: jni::errors::Error) -> Self {
        match e {
            jni::errors::Error::JavaException => Fail::Java,
            other => Fail::Jni(other),
        }
    }
}

pub(crate) type JResult<T> = Result<T, Fail>;

pub(crate) fn invalid(message: impl Into<String>) -> Fail {
    Fail::Core(Error::new(ErrorCode::InvalidArgument, message))
}

fn class(cell: &OnceLock<GlobalRef>) -> JResult<&JClass<'static>> {
    let g = cell
        .get()
        .ok_or_else(|| Fail::Core(Error::new(ErrorCode::Internal, "JNI_OnLoad did not run")))?;
    Ok(<&JClass>::from(g.as_obj()))
}

pub(crate) fn native_class() -> JResult<&'static JClass<'static>> {
    class(&NATIVE_CLASS)
}

/// The Java exception object for a ksasl error (a `KsaslException` subclass, or
/// `KsaslArgumentException` / `KsaslStateException` for misuse).
pub(crate) fn exception<'l>(env: &mut JNIEnv<'l>, e: &Error) -> JResult<JObject<'l>> {
    let name = env.new_string(e.code().name())?;
    let kind = env.new_string(e.kind().name())?;
    let message = env.new_string(e.message())?;
    let mut kv = Vec::new();
    for (k, v) in e.details() {
        kv.push(k.clone());
        kv.push(v.clone());
    }
    let details = string_array(env, &kv)?;
    let c = cache()?;
    // SAFETY: the method id belongs to the class and the arguments match its signature.
    let obj = unsafe {
        env.call_static_method_unchecked(
            class_of(&c.errors),
            c.errors_create,
            ReturnType::Object,
            &[
                JValue::Int(e.code().as_u32() as jint).as_jni(),
                JValue::Object(&name).as_jni(),
                JValue::Object(&kind).as_jni(),
                JValue::Object(&message).as_jni(),
                JValue::Object(&details).as_jni(),
            ],
        )
    }?
    .l()?;
    // An error a host mechanism's exception became carries that exception as its cause.
    if let Some(cause) = hostmech::take_cause(e) {
        let r = env.call_method(
            &obj,
            "initCause",
            "(Ljava/lang/Throwable;)Ljava/lang/Throwable;",
            &[JValue::Object(cause.as_obj())],
        );
        if env.exception_check().unwrap_or(true) {
            let _ = env.exception_clear();
        } else if let Ok(same) = r.and_then(|v| v.l()) {
            env.delete_local_ref(same)?;
        }
    }
    Ok(obj)
}

fn throw(env: &mut JNIEnv<'_>, fail: Fail) {
    if env.exception_check().unwrap_or(true) {
        hostmech::clear_cause();
        return;
    }
    let e = match fail {
        Fail::Core(e) => e,
        Fail::Java => {
            hostmech::clear_cause();
            return;
        }
        Fail::Jni(j) => Error::new(ErrorCode::Internal, format!("JNI failure: {j}")),
    };
    let obj = exception(env, &e);
    // The host exception behind `e` is now its cause; drop any other before throwing.
    hostmech::clear_cause();
    match obj {
        Ok(obj) => {
            let _ = env.throw(JThrowable::from(obj));
        }
        Err(_) => {
            if !env.exception_check().unwrap_or(true) {
                let _ = env.throw_new("java/lang/IllegalStateException", e.to_string());
            }
        }
    }
}

fn take_callback_exception() -> Option<GlobalRef> {
    CALLBACK_EXCEPTION.with(|c| c.borrow_mut().take())
}

/// Runs one entry point: panics become `KsaslInternalException` (PANIC), errors become their
/// exception, and an exception thrown by a Java callback is rethrown unchanged. An exception
/// thrown by a host mechanism (`HostClientMechanism`, ...) is not rethrown: it became a ksasl
/// error, whose exception gets it as cause. On failure the Java caller sees the exception;
/// `default` is only what the JVM ignores.
pub(crate) fn entry<'l, R>(
    env: &mut JNIEnv<'l>,
    default: R,
    f: impl FnOnce(&mut JNIEnv<'l>) -> JResult<R>,
) -> R {
    drop(take_callback_exception());
    hostmech::clear_cause();
    let r = catch_unwind(AssertUnwindSafe(|| f(env)));
    if let Some(ex) = take_callback_exception() {
        hostmech::clear_cause();
        if !env.exception_check().unwrap_or(true) {
            if let Ok(local) = env.new_local_ref(ex.as_obj()) {
                let _ = env.throw(JThrowable::from(local));
            }
        }
        return default;
    }
    match r {
        Ok(Ok(v)) => {
            hostmech::clear_cause();
            v
        }
        Ok(Err(fail)) => {
            throw(env, fail);
            default
        }
        Err(_) => {
            throw(
                env,
                Fail::Core(Error::new(
                    ErrorCode::Panic,
                    "a panic inside ksasl was caught at the JNI boundary",
                )),
            );
            default
        }
    }
}

/// The JNI environment of the current thread, attaching it (for good, as a daemon) if the JVM
/// does not know it.
pub(crate) fn attach() -> Result<JNIEnv<'static>, Error> {
    let vm = VM
        .get()
        .ok_or_else(|| Error::new(ErrorCode::Internal, "JNI_OnLoad did not run"))?;
    match vm.get_env() {
        Ok(env) => Ok(env),
        Err(_) => vm.attach_current_thread_as_daemon().map_err(|e| {
            Error::new(
                ErrorCode::Internal,
                format!("cannot attach the thread: {e}"),
            )
        }),
    }
}

/// Runs host code called back from the core (a credential lookup, a token validator) on the
/// current thread. A Java exception is cleared from the environment and kept for [`entry`]
/// to rethrow; the core sees `Err` with `what` in the message.
pub(crate) fn callback<T>(
    what: &str,
    f: impl for<'a> FnOnce(&mut JNIEnv<'a>) -> JResult<T>,
) -> Result<T, Error> {
    let mut env = attach()?;
    let r = env.with_local_frame(32, |env| f(env));
    if env.exception_check().unwrap_or(false) {
        if let Ok(ex) = env.exception_occurred() {
            let _ = env.exception_clear();
            if let Ok(g) = env.new_global_ref(&ex) {
                CALLBACK_EXCEPTION.with(|c| *c.borrow_mut() = Some(g));
            }
            let _ = env.delete_local_ref(ex);
        }
        return Err(Error::new(
            ErrorCode::CredentialLookupFailed,
            format!("the Java {what} threw an exception"),
        ));
    }
    r.map_err(|f| match f {
        Fail::Core(e) => e,
        Fail::Java => Error::new(
            ErrorCode::CredentialLookupFailed,
            format!("the Java {what} threw an exception"),
        ),
        Fail::Jni(j) => Error::new(ErrorCode::Internal, format!("JNI failure in {what}: {j}")),
    })
}

// --- conversions ----------------------------------------------------------------------------

pub(crate) fn string(env: &mut JNIEnv<'_>, s: &JString<'_>, what: &str) -> JResult<String> {
    if s.is_null() {
        return Err(Fail::Core(Error::new(
            ErrorCode::NullArgument,
            format!("{what} must not be null"),
        )));
    }
    // SAFETY: `s` is a java.lang.String: the native methods declare their parameters so.
    Ok(unsafe { env.get_string_unchecked(s) }?.into())
}

pub(crate) fn opt_string(env: &mut JNIEnv<'_>, s: &JString<'_>) -> JResult<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: as in `string`.
    Ok(Some(unsafe { env.get_string_unchecked(s) }?.into()))
}

pub(crate) fn bytes(env: &mut JNIEnv<'_>, b: &JByteArray<'_>, what: &str) -> JResult<Vec<u8>> {
    if b.is_null() {
        return Err(Fail::Core(Error::new(
            ErrorCode::NullArgument,
            format!("{what} must not be null"),
        )));
    }
    Ok(env.convert_byte_array(b)?)
}

pub(crate) fn byte_array<'l>(env: &mut JNIEnv<'l>, b: &[u8]) -> JResult<JByteArray<'l>> {
    Ok(env.byte_array_from_slice(b)?)
}

pub(crate) fn null_bytes<'l>() -> JByteArray<'l> {
    JByteArray::from(JObject::null())
}

pub(crate) fn string_array<'l>(
    env: &mut JNIEnv<'l>,
    items: &[String],
) -> JResult<JObjectArray<'l>> {
    let arr = env.new_object_array(
        items.len() as i32,
        class_of(&cache()?.string),
        JObject::null(),
    )?;
    for (i, s) in items.iter().enumerate() {
        let js = env.new_string(s)?;
        env.set_object_array_element(&arr, i as i32, &js)?;
        env.delete_local_ref(js)?;
    }
    Ok(arr)
}

pub(crate) fn read_string_array(
    env: &mut JNIEnv<'_>,
    arr: &JObjectArray<'_>,
) -> JResult<Vec<String>> {
    if arr.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(arr)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let o = env.get_object_array_element(arr, i)?;
        let s = JString::from(o);
        out.push(string(env, &s, "an array element")?);
        env.delete_local_ref(s)?;
    }
    Ok(out)
}

pub(crate) fn object_array<'l>(
    env: &mut JNIEnv<'l>,
    items: Vec<JObject<'l>>,
) -> JResult<JObjectArray<'l>> {
    let arr = env.new_object_array(
        items.len() as i32,
        class_of(&cache()?.object),
        JObject::null(),
    )?;
    for (i, o) in items.into_iter().enumerate() {
        env.set_object_array_element(&arr, i as i32, o)?;
    }
    Ok(arr)
}

pub(crate) fn jstring<'l>(env: &mut JNIEnv<'l>, s: &str) -> JResult<JObject<'l>> {
    Ok(env.new_string(s)?.into())
}

pub(crate) fn jlong_box<'l>(env: &mut JNIEnv<'l>, v: Option<i64>) -> JResult<JObject<'l>> {
    match v {
        None => Ok(JObject::null()),
        Some(v) => {
            let c = cache()?;
            // SAFETY: Long.valueOf(long) with a long.
            Ok(unsafe {
                env.call_static_method_unchecked(
                    class_of(&c.long),
                    c.long_value_of,
                    ReturnType::Object,
                    &[JValue::Long(v).as_jni()],
                )
            }?
            .l()?)
        }
    }
}

pub(crate) fn jbool_box<'l>(env: &mut JNIEnv<'l>, v: bool) -> JResult<JObject<'l>> {
    let c = cache()?;
    // SAFETY: Boolean.valueOf(boolean) with a boolean (no allocation: the two constants).
    Ok(unsafe {
        env.call_static_method_unchecked(
            class_of(&c.boolean),
            c.boolean_value_of,
            ReturnType::Object,
            &[JValue::Bool(v.into()).as_jni()],
        )
    }?
    .l()?)
}

pub(crate) fn opt(v: i64) -> Option<i64> {
    (v != NONE).then_some(v)
}

pub(crate) fn raw(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

/// Defines the JNI entry point that frees a handle of type `$t` (called once, by the Java
/// object's Cleaner or close()).
#[macro_export]
macro_rules! free_entry {
    ($name:ident, $t:ty) => {
        #[no_mangle]
        pub extern "system" fn $name<'l>(
            mut env: jni::JNIEnv<'l>,
            _c: jni::objects::JClass<'l>,
            h: jni::sys::jlong,
        ) {
            $crate::entry(&mut env, (), |_| {
                $crate::free::<$t>(h);
                Ok(())
            })
        }
    };
}

/// Moves a value to the heap and returns its handle.
pub(crate) fn into_handle<T>(v: T) -> jlong {
    Box::into_raw(Box::new(v)) as jlong
}

/// The object behind a live handle.
///
/// # Safety
/// `h` came from [`into_handle::<T>`] and has not been freed: the owning Java object holds a
/// read lock for the duration of the call and frees the handle only under its write lock.
pub(crate) unsafe fn obj<'a, T>(h: jlong) -> &'a T {
    &*(h as *const T)
}

/// Frees a handle once (the Java Cleaner calls this exactly once; 0 is ignored).
pub(crate) fn free<T>(h: jlong) {
    if h != 0 {
        // SAFETY: as for `obj`; the Java side frees each handle once.
        drop(unsafe { Box::from_raw(h as *mut T) });
    }
}

pub(crate) fn locked<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[no_mangle]
pub extern "system" fn Java_org_ksasl_Native_version<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass<'l>,
) -> jni::sys::jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        Ok(env.new_string(ksasl::VERSION)?.into_raw())
    })
}
