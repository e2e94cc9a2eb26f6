//! The JNI plumbing every entry point shares: the entry wrapper and the `jni!` macro that
//! declares `Java_org_ksasl_Native_*` functions with it, the Java methods native code calls
//! (looked up once), exceptions, conversions and handles. Nothing here knows a ksasl rule.
//!
//! Conventions shared with `org/ksasl/Native.java`:
//! - a handle is a `Box` turned into a `jlong`; the Java object that owns it guarantees that it
//!   is live and of the right type for every call, and frees it exactly once;
//! - [`NONE`] (`Long.MIN_VALUE`) stands for "no value" in `long` times;
//! - a ksasl error is thrown as the exception `Errors.create` makes for it; an exception thrown
//!   by a Java callback (a credential lookup, a token validator) is rethrown unchanged.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, OnceLock};

use jni::objects::{
    GlobalRef, JByteArray, JClass, JIntArray, JObject, JObjectArray, JStaticMethodID, JString,
    JThrowable, JValue,
};
use jni::signature::ReturnType;
use jni::sys::{jboolean, jint, jlong, jobject, jvalue, JNI_VERSION_1_8};
use jni::{JNIEnv, JavaVM};
use ksasl::{Error, ErrorCode};

/// "No value" for a `long` time on the Java side.
pub(crate) const NONE: i64 = i64::MIN;

/// Declares JNI entry points: `fn Java_org_ksasl_Native_x(env, a: T, ...) -> R { body }`
/// becomes the exported function, its body run by [`entry`] with `env` bound to the
/// `&mut JNIEnv` and returning `JResult<R>` (`R` is `()`, `i32`, `i64`, `bool`, `f64` or a
/// local reference).
macro_rules! natives {
    ($(fn $name:ident($env:ident $(, $arg:ident: $t:ty)* $(,)?) -> $ret:ty $body:block)*) => {$(
        #[no_mangle]
        #[allow(clippy::too_many_arguments, unused_mut)]
        pub extern "system" fn $name<'l>(
            mut env: jni::JNIEnv<'l>,
            _class: jni::objects::JClass<'l>,
            $($arg: $t),*
        ) -> <$ret as $crate::glue::IntoJni>::Raw {
            $crate::glue::entry(&mut env, |$env: &mut jni::JNIEnv<'l>| -> $crate::glue::JResult<$ret> {
                $body
            })
        }
    )*};
}
pub(crate) use natives;

/// A value an entry point returns to Java, and what it returns when it throws instead.
pub(crate) trait IntoJni {
    type Raw;
    fn raw(self) -> Self::Raw;
    fn fail() -> Self::Raw;
}

macro_rules! plain_into_jni {
    ($($t:ty => $raw:ty, $conv:expr, $fail:expr;)*) => {$(
        impl IntoJni for $t {
            type Raw = $raw;
            fn raw(self) -> $raw {
                $conv(self)
            }
            fn fail() -> $raw {
                $fail
            }
        }
    )*};
}

plain_into_jni! {
    () => (), |_| (), ();
    i32 => jint, |v| v, 0;
    i64 => jlong, |v| v, 0;
    f64 => f64, |v| v, 0.0;
    bool => jboolean, |v: bool| v as jboolean, 0;
}

macro_rules! object_into_jni {
    ($($t:ident),*) => {$(
        impl<'l> IntoJni for jni::objects::$t<'l> {
            type Raw = jobject;
            fn raw(self) -> jobject {
                JObject::from(self).into_raw()
            }
            fn fail() -> jobject {
                std::ptr::null_mut()
            }
        }
    )*};
}

object_into_jni!(
    JObject,
    JString,
    JByteArray,
    JObjectArray,
    JLongArray,
    JIntArray,
    JShortArray,
    JThrowable
);

// --- the Java methods native code calls ------------------------------------------------------

macro_rules! upcalls {
    ($($id:ident = $class:literal $name:literal $sig:literal;)*) => {
        /// A static Java method called from native code (factories of the binding's records,
        /// and the helpers that run host code). Each returns an object (or null).
        #[derive(Clone, Copy)]
        pub(crate) enum Up { $($id),* }
        const UPCALLS: &[(&str, &str, &str)] = &[$(($class, $name, $sig)),*];
    };
}

upcalls! {
    Error = "org/ksasl/Errors" "create" "(ILjava/lang/String;Ljava/lang/String;ZLjava/lang/String;Ljava/lang/String;[Ljava/lang/String;Ljava/lang/Throwable;)Ljava/lang/Throwable;";
    ReauthFailed = "org/ksasl/ClientEvent" "reauthFailed" "(Ljava/lang/Throwable;J)Lorg/ksasl/ClientEvent;";
    ServerOutput = "org/ksasl/ServerOutput" "of" "(I[BJLjava/lang/Throwable;)Lorg/ksasl/ServerOutput;";
    CallLookup = "org/ksasl/Native" "callLookup" "(Lorg/ksasl/CredentialLookup;Ljava/lang/String;Ljava/lang/String;ZJ)Ljava/lang/Object;";
    CallValidate = "org/ksasl/Native" "callValidate" "(Lorg/ksasl/TokenValidator;Ljava/lang/String;JJ)Ljava/lang/Object;";
    HostCreate = "org/ksasl/Native" "hostCreate" "(Ljava/util/function/Supplier;J)Ljava/lang/Object;";
    HostClient = "org/ksasl/Native" "hostClientCall" "(Lorg/ksasl/HostClientMechanism;[BJJ)Ljava/lang/Object;";
    HostAsyncClient = "org/ksasl/Native" "hostAsyncClientCall" "(Lorg/ksasl/AsyncHostClientMechanism;[BJJ)Ljava/lang/Object;";
    HostServer = "org/ksasl/Native" "hostServerCall" "(Lorg/ksasl/HostServerMechanism;[BJJ)Ljava/lang/Object;";
    HostClientAnswer = "org/ksasl/Native" "hostAsyncClientAnswer" "(Lorg/ksasl/AsyncHostClientMechanism;[BJ)Ljava/lang/Object;";
    HostServerAnswer = "org/ksasl/Native" "hostServerAnswer" "(Lorg/ksasl/HostServerStep;J)Ljava/lang/Object;";
    HostFail = "org/ksasl/Native" "hostFail" "(Ljava/lang/Throwable;J)Ljava/lang/Object;";
}

struct Cache {
    methods: Vec<(GlobalRef, JStaticMethodID)>,
    string: GlobalRef,
}

static VM: OnceLock<JavaVM> = OnceLock::new();
static CACHE: OnceLock<Cache> = OnceLock::new();

fn cache() -> JResult<&'static Cache> {
    CACHE.get().ok_or_else(|| internal("JNI_OnLoad did not run"))
}

/// Looks up the classes and methods native code uses, once.
#[no_mangle]
pub extern "system" fn JNI_OnLoad(vm: JavaVM, _reserved: *mut std::ffi::c_void) -> jint {
    let r = catch_unwind(AssertUnwindSafe(|| -> jni::errors::Result<()> {
        let mut env = vm.get_env()?;
        let mut methods = Vec::with_capacity(UPCALLS.len());
        for (class, name, sig) in UPCALLS {
            let c = env.find_class(class)?;
            let id = env.get_static_method_id(&c, name, sig)?;
            methods.push((env.new_global_ref(c)?, id));
        }
        let string = env.find_class("java/lang/String")?;
        let string = env.new_global_ref(string)?;
        let _ = CACHE.set(Cache { methods, string });
        Ok(())
    }));
    if !matches!(r, Ok(Ok(()))) {
        return jni::sys::JNI_ERR;
    }
    let _ = VM.set(vm);
    JNI_VERSION_1_8
}

/// Calls a Java method of [`Up`] with `args` (as [`JValue::as_jni`] gives them).
pub(crate) fn up<'l>(env: &mut JNIEnv<'l>, which: Up, args: &[jvalue]) -> JResult<JObject<'l>> {
    let (class, id) = &cache()?.methods[which as usize];
    // SAFETY: the method id belongs to the class, and every call site passes the arguments
    // its signature (in the table above) names.
    let v = unsafe {
        env.call_static_method_unchecked(
            <&JClass>::from(class.as_obj()),
            *id,
            ReturnType::Object,
            args,
        )
    }?;
    Ok(v.l()?)
}

pub(crate) fn obj(o: &JObject<'_>) -> jvalue {
    JValue::Object(o).as_jni()
}

pub(crate) fn long(v: i64) -> jvalue {
    JValue::Long(v).as_jni()
}

pub(crate) fn int(v: i32) -> jvalue {
    JValue::Int(v).as_jni()
}

pub(crate) fn boolean(v: bool) -> jvalue {
    JValue::Bool(v.into()).as_jni()
}

// --- failures and the entry wrapper ----------------------------------------------------------

/// Why an entry point failed.
pub(crate) enum Fail {
    /// A ksasl error: thrown as the exception of its code.
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

fn internal(message: &str) -> Fail {
    Fail::Core(Error::new(ErrorCode::Internal, message))
}

/// What one thread keeps while its entry points run (one thread-local, reached once when an
/// entry point starts and once when it returns).
struct CallState {
    /// How many entry points run on this thread (a host mechanism's helper calls back into
    /// native code while its entry point runs).
    depth: Cell<u32>,
    /// The exception a Java callback threw during the current call, cleared from the JNI
    /// environment and kept until the call returns, then rethrown unchanged.
    callback: Cell<Option<GlobalRef>>,
    /// The exception a host mechanism threw, with the code and text of the failure it became:
    /// the exception thrown for that error gets it as its cause.
    cause: Cell<Option<HostCause>>,
}

thread_local! {
    static STATE: CallState = const {
        CallState { depth: Cell::new(0), callback: Cell::new(None), cause: Cell::new(None) }
    };
}

/// A host mechanism's exception with the code and text of the failure it became.
pub(crate) type HostCause = (ErrorCode, String, GlobalRef);

/// Takes the host exception recorded during this call (to keep it with an output that is
/// turned into Java objects in a later call; see [`restore_host_cause`]).
pub(crate) fn keep_host_cause() -> Option<HostCause> {
    STATE.with(|s| s.cause.take())
}

/// Puts back a host exception kept by [`keep_host_cause`].
pub(crate) fn restore_host_cause(cause: HostCause) {
    STATE.with(|s| s.cause.set(Some(cause)));
}

/// Records the exception behind a host mechanism's failure (`code`, `text`).
pub(crate) fn set_host_cause(code: ErrorCode, text: &str, cause: GlobalRef) {
    restore_host_cause((code, text.to_string(), cause));
}

fn take_host_cause(e: &Error) -> Option<GlobalRef> {
    let (code, text, g) = keep_host_cause()?;
    if code == e.code() && e.message().ends_with(text.as_str()) {
        return Some(g);
    }
    restore_host_cause((code, text, g));
    None
}

/// Runs one entry point: panics become `KsaslInternalException` (PANIC), errors their
/// exception, and an exception a Java callback threw is rethrown unchanged. On failure Java
/// sees the exception; the value returned is ignored.
pub(crate) fn entry<'l, T: IntoJni>(
    env: &mut JNIEnv<'l>,
    f: impl FnOnce(&mut JNIEnv<'l>) -> JResult<T>,
) -> T::Raw {
    let outer = STATE.with(|s| {
        s.depth.set(s.depth.get() + 1);
        s.depth.get() == 1
    });
    let r = catch_unwind(AssertUnwindSafe(|| f(env)));
    let (callback_exception, cause) = STATE.with(|s| {
        s.depth.set(s.depth.get() - 1);
        match outer {
            true => (s.callback.take(), s.cause.take()),
            false => (None, None),
        }
    });
    if let Some(cause) = cause.filter(|_| matches!(r, Ok(Err(Fail::Core(_))))) {
        restore_host_cause(cause);
    }
    let out = match (callback_exception, r) {
        (Some(ex), _) => {
            if !env.exception_check().unwrap_or(true) {
                if let Ok(local) = env.new_local_ref(ex.as_obj()) {
                    let _ = env.throw(JThrowable::from(local));
                }
            }
            T::fail()
        }
        (None, Ok(Ok(v))) => v.raw(),
        (None, Ok(Err(fail))) => {
            throw(env, fail);
            T::fail()
        }
        (None, Err(_)) => {
            let e =
                Error::new(ErrorCode::Panic, "a panic inside ksasl was caught at the JNI boundary");
            throw(env, Fail::Core(e));
            T::fail()
        }
    };
    if outer {
        drop(keep_host_cause());
    }
    out
}

fn throw(env: &mut JNIEnv<'_>, fail: Fail) {
    if env.exception_check().unwrap_or(true) {
        return;
    }
    let e = match fail {
        Fail::Core(e) => e,
        Fail::Java => return,
        Fail::Jni(j) => Error::new(ErrorCode::Internal, format!("JNI failure: {j}")),
    };
    match exception(env, &e) {
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

/// The Java exception for a ksasl error (not thrown): the class of its code, its message,
/// details and client text, and the host's exception behind it as its cause.
pub(crate) fn exception<'l>(env: &mut JNIEnv<'l>, e: &Error) -> JResult<JObject<'l>> {
    let name = env.new_string(e.code().name())?;
    let kind = env.new_string(e.kind().name())?;
    let message = env.new_string(e.message())?;
    let client = opt_jstr(env, e.client_text())?;
    let details = jstrings(env, e.details().iter().flat_map(|(k, v)| [k, v]))?;
    let cause = match take_host_cause(e) {
        Some(g) => env.new_local_ref(g.as_obj())?,
        None => JObject::null(),
    };
    let args = [
        int(e.code().as_u32() as i32),
        obj(&name),
        obj(&kind),
        boolean(e.code().is_state_misuse()),
        obj(&message),
        obj(&client),
        obj(&details),
        obj(&cause),
    ];
    up(env, Up::Error, &args)
}

/// Runs host code (a lookup, a validator, a host mechanism) on the current thread, attaching
/// it to the JVM for good if needed, in a local frame. An exception left pending is cleared and
/// kept for [`entry`] to rethrow when `keep` says so; the core sees an error naming `what`.
pub(crate) fn call_host<T>(
    what: &str,
    keep: bool,
    f: impl for<'a> FnOnce(&mut JNIEnv<'a>) -> JResult<T>,
) -> Result<T, Error> {
    let vm = VM.get().ok_or_else(|| Error::new(ErrorCode::Internal, "JNI_OnLoad did not run"))?;
    let mut env = match vm.get_env() {
        Ok(env) => env,
        Err(_) => vm.attach_current_thread_as_daemon().map_err(|e| {
            Error::new(ErrorCode::Internal, format!("cannot attach the thread: {e}"))
        })?,
    };
    let r = env.with_local_frame(16, |env| f(env));
    let failed = |what: &str| {
        Error::new(ErrorCode::CredentialLookupFailed, format!("the Java {what} threw an exception"))
    };
    if env.exception_check().unwrap_or(false) {
        if let Ok(ex) = env.exception_occurred() {
            let _ = env.exception_clear();
            if keep {
                if let Ok(g) = env.new_global_ref(&ex) {
                    STATE.with(|s| s.callback.set(Some(g)));
                }
            }
        }
        return Err(failed(what));
    }
    r.map_err(|f| match f {
        Fail::Core(e) => e,
        Fail::Java => failed(what),
        Fail::Jni(j) => Error::new(ErrorCode::Internal, format!("JNI failure in {what}: {j}")),
    })
}

// --- conversions -----------------------------------------------------------------------------

pub(crate) fn null_argument(what: &str) -> Fail {
    Fail::Core(Error::new(ErrorCode::NullArgument, format!("{what} must not be null")))
}

pub(crate) fn string(env: &mut JNIEnv<'_>, s: &JString<'_>, what: &str) -> JResult<String> {
    opt_string(env, s)?.ok_or_else(|| null_argument(what))
}

pub(crate) fn opt_string(env: &mut JNIEnv<'_>, s: &JString<'_>) -> JResult<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: `s` is a java.lang.String: Native.java declares every such parameter so.
    Ok(Some(unsafe { env.get_string_unchecked(s) }?.into()))
}

pub(crate) fn bytes(env: &mut JNIEnv<'_>, b: &JByteArray<'_>, what: &str) -> JResult<Vec<u8>> {
    if b.is_null() {
        return Err(null_argument(what));
    }
    Ok(env.convert_byte_array(b)?)
}

pub(crate) fn jbytes<'l>(env: &mut JNIEnv<'l>, b: &[u8]) -> JResult<JObject<'l>> {
    Ok(env.byte_array_from_slice(b)?.into())
}

pub(crate) fn jstr<'l>(env: &mut JNIEnv<'l>, s: &str) -> JResult<JObject<'l>> {
    Ok(env.new_string(s)?.into())
}

pub(crate) fn opt_jstr<'l>(env: &mut JNIEnv<'l>, s: Option<&str>) -> JResult<JObject<'l>> {
    s.map_or(Ok(JObject::null()), |s| jstr(env, s))
}

/// A `String[]`.
pub(crate) fn jstrings<'l, S: AsRef<str>>(
    env: &mut JNIEnv<'l>,
    items: impl IntoIterator<Item = S>,
) -> JResult<JObject<'l>> {
    let items: Vec<S> = items.into_iter().collect();
    let class = <&JClass>::from(cache()?.string.as_obj());
    let arr = env.new_object_array(items.len() as i32, class, JObject::null())?;
    for (i, s) in items.iter().enumerate() {
        let js = env.new_string(s.as_ref())?;
        env.set_object_array_element(&arr, i as i32, &js)?;
        env.delete_local_ref(js)?;
    }
    Ok(arr.into())
}

/// The strings of a `String[]`; `None` for null.
pub(crate) fn opt_strings(
    env: &mut JNIEnv<'_>,
    a: &JObjectArray<'_>,
) -> JResult<Option<Vec<String>>> {
    if a.is_null() {
        return Ok(None);
    }
    let n = env.get_array_length(a)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let s = JString::from(env.get_object_array_element(a, i)?);
        out.push(string(env, &s, "an array element")?);
        env.delete_local_ref(s)?;
    }
    Ok(Some(out))
}

/// The strings of a `String[]` (null: none).
pub(crate) fn strings(env: &mut JNIEnv<'_>, a: &JObjectArray<'_>) -> JResult<Vec<String>> {
    Ok(opt_strings(env, a)?.unwrap_or_default())
}

/// `(key, value)` pairs from a `String[]` of alternating keys and values.
pub(crate) fn pairs(env: &mut JNIEnv<'_>, a: &JObjectArray<'_>) -> JResult<Vec<(String, String)>> {
    let flat = strings(env, a)?;
    Ok(flat.chunks_exact(2).map(|c| (c[0].clone(), c[1].clone())).collect())
}

pub(crate) fn opt(v: i64) -> Option<i64> {
    (v != NONE).then_some(v)
}

pub(crate) fn raw(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

/// The fields of one result for Java in one `byte[]` (`Fields.java` reads them in the same
/// order), instead of a JNI call per string and an upcall per object: little-endian numbers,
/// and byte strings (UTF-8 for text) as an `i32` length (-1: null) and the bytes.
pub(crate) struct Rec(Vec<u8>);

impl Default for Rec {
    fn default() -> Self {
        Rec(Vec::with_capacity(256))
    }
}

impl Rec {
    pub(crate) fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }

    pub(crate) fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn f64(self, v: f64) -> Self {
        self.i64(v.to_bits() as i64)
    }

    pub(crate) fn bytes(self, b: Option<&[u8]>) -> Self {
        let Some(b) = b else { return self.i32(-1) };
        let mut r = self.i32(b.len() as i32);
        r.0.extend_from_slice(b);
        r
    }

    pub(crate) fn str(self, s: &str) -> Self {
        self.bytes(Some(s.as_bytes()))
    }

    /// One string made of `parts` (a principal's `TYPE:NAME`, without formatting it first).
    pub(crate) fn joined(self, parts: &[&str]) -> Self {
        let mut r = self.i32(parts.iter().map(|p| p.len()).sum::<usize>() as i32);
        parts.iter().for_each(|p| r.0.extend_from_slice(p.as_bytes()));
        r
    }

    /// A count, then the strings.
    pub(crate) fn strs<S: AsRef<str>>(self, items: impl IntoIterator<Item = S>) -> Self {
        let at = self.0.len();
        let (mut r, n) =
            items.into_iter().fold((self.i32(0), 0i32), |(r, n), s| (r.str(s.as_ref()), n + 1));
        r.0[at..at + 4].copy_from_slice(&n.to_le_bytes());
        r
    }

    pub(crate) fn done<'l>(self, env: &mut JNIEnv<'l>) -> JResult<JObject<'l>> {
        jbytes(env, &self.0)
    }
}

// --- handles ---------------------------------------------------------------------------------

/// Moves a value to the heap and returns its handle.
pub(crate) fn into_handle<T>(v: T) -> i64 {
    Box::into_raw(Box::new(v)) as i64
}

/// The object behind a live handle of type `T`. The owning Java object (`NativeHandle`) makes
/// the call only while the handle is live (its close() waits for calls in progress) and frees
/// it once; `Native.java` gives every handle parameter its type.
pub(crate) fn get<'a, T>(h: jlong) -> &'a T {
    // SAFETY: see above: `h` came from `into_handle::<T>` and has not been freed.
    unsafe { &*(h as *const T) }
}

/// The value behind a handle used by one thread only (a builder inside its `build()`).
pub(crate) fn get_mut<'a, T>(h: jlong) -> &'a mut T {
    // SAFETY: as for `get`; Java uses such a handle from one thread, in one call at a time.
    unsafe { &mut *(h as *mut T) }
}

/// Frees a handle (0 is ignored).
pub(crate) fn free<T>(h: jlong) -> JResult<()> {
    if h != 0 {
        // SAFETY: as for `get`; Java frees each handle once, after its last call.
        drop(unsafe { Box::from_raw(h as *mut T) });
    }
    Ok(())
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

natives! {
    fn Java_org_ksasl_Native_version(env) -> JString<'l> {
        Ok(env.new_string(ksasl::VERSION)?)
    }

    fn Java_org_ksasl_Native_wireNumbers(env, name: JString<'l>) -> JIntArray<'l> {
        let numbers: Vec<i32> = table(env, &name)?.iter().map(|(n, _)| *n as i32).collect();
        let a = env.new_int_array(numbers.len() as i32)?;
        env.set_int_array_region(&a, 0, &numbers)?;
        Ok(a)
    }

    fn Java_org_ksasl_Native_wireNames(env, name: JString<'l>) -> JObject<'l> {
        let t = table(env, &name)?;
        jstrings(env, t.iter().map(|(_, n)| *n))
    }

    fn Java_org_ksasl_Native_errorNew(env, code: jint, message: JString<'l>) -> JObject<'l> {
        let message = string(env, &message, "message")?;
        let code = u32::try_from(code).ok().and_then(ErrorCode::from_u32).ok_or_else(|| {
            Error::new(ErrorCode::InvalidArgument, format!("{code} is not a ksasl error code"))
        })?;
        exception(env, &Error::new(code, message))
    }
}

fn table(env: &mut JNIEnv<'_>, name: &JString<'_>) -> JResult<&'static [(u32, &'static str)]> {
    let name = string(env, name, "name")?;
    ksasl::wire::table(&name).ok_or_else(|| {
        Fail::Core(Error::new(ErrorCode::InvalidArgument, format!("no wire enum {name}")))
    })
}
