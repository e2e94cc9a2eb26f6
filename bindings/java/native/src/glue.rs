//! The JNI plumbing every entry point shares: the entry wrapper and the `natives!` macro that
//! declares `Java_org_ksasl_Native_*` functions with it, the Java methods native code calls
//! (looked up once), exceptions, conversions, records and handles. No ksasl rule is here.
//!
//! Conventions shared with `org/ksasl/Native.java`:
//! - a handle is a `Box` turned into a `jlong`; the Java object that owns it guarantees that it
//!   is live and of the right type for every call, and frees it exactly once;
//! - [`NONE`] (`Long.MIN_VALUE`) stands for "no value" in `long` times;
//! - a result with several fields is one `byte[]` record ([`Rec`], read by `Fields.java`);
//! - a ksasl error is thrown as the exception `Errors.create` makes for it; an exception thrown
//!   by a Java callback (a credential lookup, a token validator) is rethrown unchanged.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use jni::objects::{
    GlobalRef, JByteArray, JClass, JObject, JObjectArray, JStaticMethodID, JString,
};
use jni::objects::{JThrowable, JValue};
use jni::signature::ReturnType;
use jni::sys::{jboolean, jint, jlong, jobject, jvalue, JNI_VERSION_1_8};
use jni::{JNIEnv, JavaVM};
use ksasl::{Error, ErrorCode};

/// "No value" for a `long` time on the Java side.
pub(crate) const NONE: i64 = i64::MIN;

/// Declares JNI entry points: `fn x(env, a: T, ...) -> R { body }` becomes the exported
/// function `Java_org_ksasl_Native_x` (the native method `x` of `Native.java`), its body run by
/// [`entry`] with `env` bound to the `&mut JNIEnv` and returning `JResult<R>` (`R`: `()`,
/// `i32`, `i64`, `bool` or `JObject`). An entry point whose body is one expression is one table
/// line (continued, indented, when longer): `x(env, a: T, ...) -> R = expr;` returns `expr`, an
/// `R` or a `Result` of one (with a ksasl error or a [`Fail`]).
macro_rules! natives {
    () => {};
    (
        fn $name:ident($env:ident $(, $arg:ident: $t:ty)* $(,)?) -> $ret:ty $body:block
        $($rest:tt)*
    ) => {
        #[export_name = concat!("Java_org_ksasl_Native_", stringify!($name))]
        #[allow(non_snake_case, clippy::too_many_arguments, unused_mut)]
        pub extern "system" fn $name<'l>(
            mut env: jni::JNIEnv<'l>,
            _class: jni::objects::JClass<'l>,
            $($arg: $t),*
        ) -> <$ret as $crate::glue::IntoJni>::Raw {
            $crate::glue::entry(
                &mut env,
                |$env: &mut jni::JNIEnv<'l>| -> $crate::glue::JResult<$ret> { $body },
            )
        }
        $crate::glue::natives! { $($rest)* }
    };
    (
        $name:ident($env:ident $(, $arg:ident: $t:ty)* $(,)?) -> $ret:ty = $body:expr;
        $($rest:tt)*
    ) => {
        $crate::glue::natives! {
            fn $name($env $(, $arg: $t)*) -> $ret { $crate::glue::Ret::ret($body) } $($rest)*
        }
    };
}
pub(crate) use natives;

/// Declares the entry points that set one value on a native builder (a handle used by one
/// thread): `x(env, v: T) |b| expr;` runs `expr` with `b` bound to the `&mut` builder.
macro_rules! setters {
    ($t:ty: $($name:ident($env:ident $(, $arg:ident: $at:ty)*) |$b:ident| $call:expr;)*) => {
        $crate::glue::natives! {$(
            fn $name($env, builder: jni::sys::jlong $(, $arg: $at)*) -> () {
                let $b: &mut $t = $crate::glue::get_mut(builder);
                $call;
                Ok(())
            }
        )*}
    };
}
pub(crate) use setters;

/// A value an entry point returns to Java, and what it returns when it throws instead.
pub(crate) trait IntoJni {
    type Raw;
    fn raw(self) -> Self::Raw;
    fn fail() -> Self::Raw;
}

/// The value of a one-expression entry point ([`natives!`]): an `R`, or a result of one.
pub(crate) trait Ret<R> {
    fn ret(self) -> JResult<R>;
}

impl<R: IntoJni, E: Into<Fail>> Ret<R> for Result<R, E> {
    fn ret(self) -> JResult<R> {
        self.map_err(Into::into)
    }
}

macro_rules! into_jni {
    ($($(@$l:lifetime)? $t:ty => $raw:ty, $conv:expr, $fail:expr;)*) => {$(
        impl$(<$l>)? IntoJni for $t {
            type Raw = $raw;
            fn raw(self) -> $raw { $conv(self) }
            fn fail() -> $raw { $fail }
        }
        impl$(<$l>)? Ret<$t> for $t { fn ret(self) -> JResult<$t> { Ok(self) } }
    )*};
}

into_jni! {
    () => (), |_| (), ();
    i32 => jint, |v| v, 0;
    i64 => jlong, |v| v, 0;
    bool => jboolean, |v: bool| v as jboolean, 0;
    @'l JObject<'l> => jobject, |v: JObject<'l>| v.into_raw(), std::ptr::null_mut();
}

// --- the Java methods native code calls ------------------------------------------------------

macro_rules! upcalls {
    ($($id:ident = $name:literal $sig:literal;)*) => {
        /// A static method of `Native` (a helper that runs host code) or of a record class,
        /// called from native code. Each returns an object (or null).
        #[derive(Clone, Copy)]
        pub(crate) enum Up { $($id),* }
        const UPCALLS: &[(&str, &str)] = &[$(($name, $sig)),*];
    };
}

upcalls! {
    Error = "org/ksasl/Errors.create" "(IZ[BLjava/lang/Throwable;)Ljava/lang/Throwable;";
    ReauthFailed = "org/ksasl/ClientEvent.reauthFailed"
        "(Ljava/lang/Throwable;J)Lorg/ksasl/ClientEvent;";
    ServerOutput = "org/ksasl/ServerOutput.of"
        "(I[BJLjava/lang/Throwable;)Lorg/ksasl/ServerOutput;";
    CallLookup = "org/ksasl/Native.callLookup"
        "(Lorg/ksasl/CredentialLookup;[BJ)Ljava/lang/Object;";
    CallValidate = "org/ksasl/Native.callValidate"
        "(Lorg/ksasl/TokenValidator;Ljava/lang/String;JJ)Ljava/lang/Object;";
    HostCreate = "org/ksasl/Native.hostCreate" "(Ljava/util/function/Supplier;J)Ljava/lang/Object;";
    HostClient = "org/ksasl/Native.hostClientCall"
        "(Lorg/ksasl/HostClientMechanism;[BJJ)Ljava/lang/Object;";
    HostAsyncClient = "org/ksasl/Native.hostAsyncClientCall"
        "(Lorg/ksasl/AsyncHostClientMechanism;[BJJ)Ljava/lang/Object;";
    HostServer = "org/ksasl/Native.hostServerCall"
        "(Lorg/ksasl/HostServerMechanism;[BJJ)Ljava/lang/Object;";
    HostClientAnswer = "org/ksasl/Native.hostAsyncClientAnswer"
        "(Lorg/ksasl/AsyncHostClientMechanism;[BJ)Ljava/lang/Object;";
    HostServerAnswer = "org/ksasl/Native.hostServerAnswer"
        "(Lorg/ksasl/HostServerStep;J)Ljava/lang/Object;";
    HostFail = "org/ksasl/Native.hostFail" "(Ljava/lang/Throwable;J)Ljava/lang/Object;";
}

static VM: OnceLock<JavaVM> = OnceLock::new();
static METHODS: OnceLock<Vec<(GlobalRef, JStaticMethodID)>> = OnceLock::new();

/// Looks up, once, the classes and methods that native code calls.
#[no_mangle]
pub extern "system" fn JNI_OnLoad(vm: JavaVM, _reserved: *mut std::ffi::c_void) -> jint {
    let r = catch_unwind(AssertUnwindSafe(|| -> jni::errors::Result<()> {
        let mut env = vm.get_env()?;
        let mut methods = Vec::with_capacity(UPCALLS.len());
        for (name, sig) in UPCALLS {
            let (class, method) = name.rsplit_once('.').expect("Class.method");
            let c = env.find_class(class)?;
            let id = env.get_static_method_id(&c, method, sig)?;
            methods.push((env.new_global_ref(c)?, id));
        }
        let _ = METHODS.set(methods);
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
    let methods = METHODS
        .get()
        .ok_or_else(|| internal("JNI_OnLoad did not run"))?;
    let (class, id) = &methods[which as usize];
    // SAFETY: the method id belongs to the class, and every call site passes the arguments
    // its signature (in the table above) names.
    let class = <&JClass>::from(class.as_obj());
    Ok(unsafe { env.call_static_method_unchecked(class, *id, ReturnType::Object, args) }?.l()?)
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

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Internal, message)
}

/// A host mechanism's exception with the code and text of the failure it became.
pub(crate) type HostCause = (ErrorCode, String, GlobalRef);

/// What a thread keeps while its entry points run: how many run (a host mechanism's helper
/// calls back into native code), the exception a Java callback threw (rethrown unchanged when
/// the call returns), the exception a host mechanism threw (the cause of the exception for the
/// failure it became), and spare byte buffers ([`Buf`]).
struct CallState {
    depth: Cell<u32>,
    callback: Cell<Option<GlobalRef>>,
    cause: Cell<Option<HostCause>>,
    spare: RefCell<Vec<Vec<u8>>>,
}

thread_local! {
    static STATE: CallState = const {
        CallState {
            depth: Cell::new(0),
            callback: Cell::new(None),
            cause: Cell::new(None),
            spare: RefCell::new(Vec::new()),
        }
    };
}

/// A byte buffer this thread's calls reuse (for input bytes and `Rec`s: no allocation), wiped
/// when given back since inputs and records may hold passwords or tokens.
pub(crate) struct Buf(Vec<u8>);

impl Buf {
    fn take() -> Buf {
        Buf(STATE
            .try_with(|s| s.spare.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default())
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        let mut b = std::mem::take(&mut self.0);
        b.fill(0);
        std::hint::black_box(&mut b).clear();
        if b.capacity() <= 1 << 16 {
            let _ = STATE.try_with(|s| s.spare.borrow_mut().push(b));
        }
    }
}

impl std::ops::Deref for Buf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// Takes the host exception recorded during this call (to keep it with a result that becomes
/// Java objects in a later call; see [`restore_host_cause`]).
pub(crate) fn keep_host_cause() -> Option<HostCause> {
    STATE.with(|s| s.cause.take())
}

/// Puts back (or records) the host exception behind a failure, if any.
pub(crate) fn restore_host_cause(cause: Option<HostCause>) {
    if cause.is_some() {
        STATE.with(|s| s.cause.set(cause));
    }
}

fn take_host_cause(e: &Error) -> Option<GlobalRef> {
    let (code, text, g) = keep_host_cause()?;
    if code == e.code() && e.message().ends_with(text.as_str()) {
        return Some(g);
    }
    restore_host_cause(Some((code, text, g)));
    None
}

/// Runs one entry point: panics become `KsaslInternalException` (PANIC), errors their
/// exception, and an exception a Java callback threw is rethrown unchanged. On failure Java
/// sees the exception; the value returned is ignored.
pub(crate) fn entry<'l, T: IntoJni>(
    env: &mut JNIEnv<'l>,
    f: impl FnOnce(&mut JNIEnv<'l>) -> JResult<T>,
) -> T::Raw {
    let outer = STATE.with(|s| s.depth.replace(s.depth.get() + 1) == 0);
    let r = catch_unwind(AssertUnwindSafe(|| f(env)));
    let (callback, cause) = STATE.with(|s| {
        s.depth.set(s.depth.get() - 1);
        if outer {
            (s.callback.take(), s.cause.take())
        } else {
            (None, None)
        }
    });
    let fail = match (callback, r) {
        (Some(ex), _) => {
            if !env.exception_check().unwrap_or(true) {
                if let Ok(local) = env.new_local_ref(ex.as_obj()) {
                    let _ = env.throw(JThrowable::from(local));
                }
            }
            return T::fail();
        }
        (None, Ok(Ok(v))) => return v.raw(),
        (None, Ok(Err(fail))) => fail,
        (None, Err(_)) => {
            let text = "a panic inside ksasl was caught at the JNI boundary";
            Fail::Core(Error::new(ErrorCode::Panic, text))
        }
    };
    restore_host_cause(cause);
    throw(env, fail);
    if outer {
        drop(keep_host_cause());
    }
    T::fail()
}

fn throw(env: &mut JNIEnv<'_>, fail: Fail) {
    if env.exception_check().unwrap_or(true) {
        return;
    }
    let e = match fail {
        Fail::Core(e) => e,
        Fail::Java => return,
        Fail::Jni(j) => internal(format!("JNI failure: {j}")),
    };
    match exception(env, &e) {
        Ok(obj) => drop(env.throw(JThrowable::from(obj))),
        Err(_) if !env.exception_check().unwrap_or(true) => {
            drop(env.throw_new("java/lang/IllegalStateException", e.to_string()))
        }
        Err(_) => {}
    }
}

/// The Java exception for a ksasl error (not thrown): the class of its code and kind, a
/// record of its name, kind, message, client text and details, and the host's exception
/// behind it as its cause.
pub(crate) fn exception<'l>(env: &mut JNIEnv<'l>, e: &Error) -> JResult<JObject<'l>> {
    let r = Rec::default()
        .str(e.code().name())
        .str(e.kind().name())
        .str(e.message());
    let r = r.bytes(e.client_text().map(str::as_bytes));
    let fields = r
        .strs(e.details().iter().flat_map(|(k, v)| [k, v]))
        .done(env)?;
    let cause = match take_host_cause(e) {
        Some(g) => env.new_local_ref(g.as_obj())?,
        None => JObject::null(),
    };
    let code = int(e.code().as_u32() as i32);
    let misuse = boolean(e.code().is_state_misuse());
    up(env, Up::Error, &[code, misuse, obj(&fields), obj(&cause)])
}

/// Runs host code (a lookup, a validator, a host mechanism) on the current thread, attaching
/// it to the JVM for good if needed, in a local frame. An exception left pending is cleared and
/// kept for [`entry`] to rethrow when `keep` says so; the core sees an error naming `what`.
pub(crate) fn call_host<T>(
    what: &str,
    keep: bool,
    f: impl for<'a> FnOnce(&mut JNIEnv<'a>) -> JResult<T>,
) -> Result<T, Error> {
    let vm = VM.get().ok_or_else(|| internal("JNI_OnLoad did not run"))?;
    let mut env = match vm.get_env() {
        Ok(env) => env,
        Err(_) => vm
            .attach_current_thread_as_daemon()
            .map_err(|e| internal(format!("cannot attach the thread: {e}")))?,
    };
    let r = env.with_local_frame(16, |env| f(env));
    let threw = || {
        Error::new(
            ErrorCode::CredentialLookupFailed,
            format!("the Java {what} threw an exception"),
        )
    };
    if env.exception_check().unwrap_or(false) {
        if let Ok(ex) = env.exception_occurred() {
            let _ = env.exception_clear();
            if let (true, Ok(g)) = (keep, env.new_global_ref(&ex)) {
                STATE.with(|s| s.callback.set(Some(g)));
            }
        }
        return Err(threw());
    }
    r.map_err(|f| match f {
        Fail::Core(e) => e,
        Fail::Java => threw(),
        Fail::Jni(j) => internal(format!("JNI failure in {what}: {j}")),
    })
}

// --- conversions and records -----------------------------------------------------------------

pub(crate) fn null_argument(what: &str) -> Fail {
    Error::new(ErrorCode::NullArgument, format!("{what} must not be null")).into()
}

pub(crate) fn string(env: &mut JNIEnv<'_>, s: &JString<'_>, what: &str) -> JResult<String> {
    opt_string(env, s)?.ok_or_else(|| null_argument(what))
}

pub(crate) fn opt_string(env: &mut JNIEnv<'_>, s: &JString<'_>) -> JResult<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    // The modified UTF-8 bytes, straight into a zeroed buffer of 3 bytes per UTF-16 unit (and
    // the NUL HotSpot adds): no copy by the JVM, no decoding for plain UTF-8 (no NUL, nothing
    // beyond U+FFFF). Modified UTF-8 has no zero byte: the first one ends the string.
    let raw = env.get_raw();
    // SAFETY: `raw` is this thread's JNIEnv and `s` a live java.lang.String (Native.java
    // declares every such parameter so); the buffer is large enough (see above).
    let utf8 = unsafe {
        let (f, s) = (&**raw, s.as_raw());
        let units = f.GetStringLength.unwrap()(raw, s);
        let mut buf = vec![0u8; units.max(0) as usize * 3 + 1];
        f.GetStringUTFRegion.unwrap()(raw, s, 0, units, buf.as_mut_ptr().cast());
        buf.truncate(buf.iter().position(|&b| b == 0).unwrap_or(buf.len()));
        buf
    };
    match String::from_utf8(utf8) {
        Ok(text) => Ok(Some(text)),
        // SAFETY: as above.
        Err(_) => Ok(Some(unsafe { env.get_string_unchecked(s) }?.into())),
    }
}

pub(crate) fn bytes(env: &mut JNIEnv<'_>, b: &JByteArray<'_>, what: &str) -> JResult<Buf> {
    if b.is_null() {
        return Err(null_argument(what));
    }
    let (mut buf, raw) = (Buf::take(), env.get_raw());
    // SAFETY: `raw` is this thread's JNIEnv and `b` a live byte[]; the region read is the whole
    // array, into as many bytes (neither call can fail then, so no exception check).
    unsafe {
        let (f, b) = (&**raw, b.as_raw());
        let n = f.GetArrayLength.unwrap()(raw, b);
        buf.0.resize(n as usize, 0);
        f.GetByteArrayRegion.unwrap()(raw, b, 0, n, buf.0.as_mut_ptr().cast());
    }
    Ok(buf)
}

/// Text Java sent as UTF-8 bytes (from `String.getBytes(UTF_8)`: always valid).
pub(crate) fn utf8(b: &[u8]) -> JResult<&str> {
    Ok(std::str::from_utf8(b).map_err(|_| internal("text that is not UTF-8"))?)
}

/// Version ranges for an ApiVersions answer as a Java `short[]` of (key, min, max) triples.
pub(crate) fn api_ranges<'l>(
    env: &mut JNIEnv<'l>,
    ranges: &[ksasl::kafka::messages::ApiVersionRange],
) -> JResult<JObject<'l>> {
    let flat: Vec<i16> = ranges
        .iter()
        .flat_map(|r| [r.api_key, r.min_version, r.max_version])
        .collect();
    let a = env.new_short_array(flat.len() as i32)?;
    env.set_short_array_region(&a, 0, &flat)?;
    Ok(a.into())
}

pub(crate) fn jbytes<'l>(env: &mut JNIEnv<'l>, b: &[u8]) -> JResult<JObject<'l>> {
    let raw = env.get_raw();
    // SAFETY: `raw` is this thread's JNIEnv; the region written is the new array's whole length
    // (only NewByteArray can fail: null, with OutOfMemoryError pending).
    unsafe {
        let (f, n) = (&**raw, b.len() as i32);
        let a = f.NewByteArray.unwrap()(raw, n);
        if a.is_null() {
            return Err(Fail::Java);
        }
        f.SetByteArrayRegion.unwrap()(raw, a, 0, n, b.as_ptr().cast());
        Ok(JObject::from_raw(a))
    }
}

/// `f`'s object for a value, null for none.
pub(crate) fn or_null<'l, T>(
    env: &mut JNIEnv<'l>,
    v: Option<T>,
    f: impl FnOnce(&mut JNIEnv<'l>, T) -> JResult<JObject<'l>>,
) -> JResult<JObject<'l>> {
    v.map_or(Ok(JObject::null()), |v| f(env, v))
}

pub(crate) fn jstr<'l>(env: &mut JNIEnv<'l>, s: &str) -> JResult<JObject<'l>> {
    Ok(env.new_string(s)?.into())
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

pub(crate) fn opt(v: i64) -> Option<i64> {
    (v != NONE).then_some(v)
}

pub(crate) fn raw(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

/// The fields of one result for Java in one `byte[]` (`Fields.java` reads them in the same
/// order), instead of a JNI call per string and an upcall per object: little-endian numbers,
/// and byte strings (UTF-8 for text) as an `i32` length (-1: null) and the bytes.
pub(crate) struct Rec(Buf);

impl Default for Rec {
    fn default() -> Self {
        Rec(Buf::take())
    }
}

impl Rec {
    pub(crate) fn u8(mut self, v: u8) -> Self {
        self.0 .0.push(v);
        self
    }

    pub(crate) fn i32(mut self, v: i32) -> Self {
        self.0 .0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn i64(mut self, v: i64) -> Self {
        self.0 .0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn bytes(self, b: Option<&[u8]>) -> Self {
        let Some(b) = b else { return self.i32(-1) };
        let mut r = self.i32(b.len() as i32);
        r.0 .0.extend_from_slice(b);
        r
    }

    pub(crate) fn str(self, s: &str) -> Self {
        self.bytes(Some(s.as_bytes()))
    }

    /// One string made of `parts` (a principal's `TYPE:NAME`, without formatting it first).
    pub(crate) fn joined(self, parts: &[&str]) -> Self {
        let mut r = self.i32(parts.iter().map(|p| p.len()).sum::<usize>() as i32);
        parts
            .iter()
            .for_each(|p| r.0 .0.extend_from_slice(p.as_bytes()));
        r
    }

    /// A count, then the strings.
    pub(crate) fn strs<S: AsRef<str>>(self, items: impl IntoIterator<Item = S>) -> Self {
        let at = self.0 .0.len();
        let (mut r, n) = items
            .into_iter()
            .fold((self.i32(0), 0), |(r, n), s| (r.str(s.as_ref()), n + 1));
        r.0 .0[at..at + 4].copy_from_slice(&i32::to_le_bytes(n));
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

/// The value behind a handle whose calls Java runs one at a time: a builder (inside its
/// `build()`), an exchange or a connection (`NativeHandle`'s exclusive guard).
pub(crate) fn get_mut<'a, T>(h: jlong) -> &'a mut T {
    // SAFETY: as for `get`; no other call on the handle runs meanwhile (see above).
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

natives! {
    version(env) -> JObject<'l> = jstr(env, ksasl::VERSION);
    fn wireTable(env, name: JString<'l>) -> JObject<'l> {
        let name = string(env, &name, "name")?;
        let table = ksasl::wire::table(&name).ok_or_else(|| {
            Error::new(ErrorCode::InvalidArgument, format!("no wire enum {name}"))
        })?;
        table
            .iter()
            .fold(Rec::default().i32(table.len() as i32), |r, (n, s)| {
                r.i32(*n as i32).str(s)
            })
            .done(env)
    }
    fn errorNew(env, code: jint, message: JString<'l>) -> JObject<'l> {
        let message = string(env, &message, "message")?;
        let code = u32::try_from(code)
            .ok()
            .and_then(ErrorCode::from_u32)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{code} is not a ksasl error code"),
                )
            })?;
        exception(env, &Error::new(code, message))
    }
}
