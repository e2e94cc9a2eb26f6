//! The MIT Kerberos GSS-API (`libgssapi_krb5.so.2`), loaded when GSSAPI is first used.
//!
//! Loading at run time rather than linking means `libksasl.so`, the Python wheel and the jar
//! load on machines without Kerberos; only GSSAPI then fails, with a `GSSAPI_UNAVAILABLE`
//! error saying what is missing. The few types and functions used are declared here from
//! RFC 2744 (the C bindings) and MIT's `gss_acquire_cred_from` extension.

use std::ffi::c_void;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

use crate::error::{Error, ErrorCode, Result};

/// `OM_uint32`.
pub type Status = u32;
/// `gss_name_t`, `gss_cred_id_t`, `gss_ctx_id_t`: opaque pointers.
pub type Handle = *mut c_void;

/// `gss_buffer_desc`.
#[repr(C)]
pub struct Buffer {
    pub length: usize,
    pub value: *mut c_void,
}

impl Buffer {
    pub fn empty() -> Self {
        Buffer {
            length: 0,
            value: std::ptr::null_mut(),
        }
    }

    /// A borrowed view of `bytes` (GSS-API never writes through input buffers).
    pub fn borrow(bytes: &[u8]) -> Self {
        Buffer {
            length: bytes.len(),
            value: bytes.as_ptr() as *mut c_void,
        }
    }
}

/// `gss_OID_desc`.
#[repr(C)]
pub struct Oid {
    pub length: u32,
    pub elements: *const c_void,
}

// The OIDs are constants in read-only memory.
unsafe impl Sync for Oid {}

/// `gss_OID_set_desc`.
#[repr(C)]
pub struct OidSet {
    pub count: usize,
    pub elements: *const Oid,
}

unsafe impl Sync for OidSet {}

/// `gss_key_value_element_desc`.
#[repr(C)]
pub struct KeyValue {
    pub key: *const c_char,
    pub value: *const c_char,
}

/// `gss_key_value_set_desc`.
#[repr(C)]
pub struct KeyValueSet {
    pub count: u32,
    pub elements: *const KeyValue,
}

const fn oid(bytes: &'static [u8]) -> Oid {
    Oid {
        length: bytes.len() as u32,
        elements: bytes.as_ptr() as *const c_void,
    }
}

/// 1.2.840.113554.1.2.2, Kerberos V5.
pub static MECH_KRB5: Oid = oid(b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02");
/// The set holding only Kerberos V5.
pub static MECHS_KRB5: OidSet = OidSet {
    count: 1,
    elements: &MECH_KRB5,
};
/// 1.2.840.113554.1.2.1.4, `GSS_C_NT_HOSTBASED_SERVICE` (`service@host`).
pub static NT_HOSTBASED_SERVICE: Oid = oid(b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04");
/// 1.2.840.113554.1.2.2.1, `GSS_KRB5_NT_PRINCIPAL_NAME` (`primary/instance@REALM`).
pub static NT_KRB5_PRINCIPAL: Oid = oid(b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02\x01");

pub const C_INDEFINITE: u32 = 0xffff_ffff;
pub const C_INITIATE: c_int = 1;
pub const C_ACCEPT: c_int = 2;
pub const C_CONF_FLAG: u32 = 16;
pub const C_INTEG_FLAG: u32 = 32;
pub const C_MUTUAL_FLAG: u32 = 2;
pub const C_GSS_CODE: c_int = 1;
pub const C_MECH_CODE: c_int = 2;
pub const S_CONTINUE_NEEDED: u32 = 1;
pub const S_DUPLICATE_TOKEN: u32 = 1 << 1;
pub const S_OLD_TOKEN: u32 = 1 << 2;
/// The calling and routine error bits of a major status.
pub const S_ERROR_MASK: u32 = 0xffff_0000;
pub const S_CREDENTIALS_EXPIRED: u32 = 11 << 16;
pub const S_CONTEXT_EXPIRED: u32 = 12 << 16;

type ImportName =
    unsafe extern "C" fn(*mut Status, *const Buffer, *const Oid, *mut Handle) -> Status;
type ReleaseHandle = unsafe extern "C" fn(*mut Status, *mut Handle) -> Status;
type AcquireCredFrom = unsafe extern "C" fn(
    *mut Status,
    Handle,
    u32,
    *const OidSet,
    c_int,
    *const KeyValueSet,
    *mut Handle,
    *mut *mut OidSet,
    *mut u32,
) -> Status;
type InquireCred = unsafe extern "C" fn(
    *mut Status,
    Handle,
    *mut Handle,
    *mut u32,
    *mut c_int,
    *mut *mut OidSet,
) -> Status;
type InitSecContext = unsafe extern "C" fn(
    *mut Status,
    Handle,
    *mut Handle,
    Handle,
    *const Oid,
    u32,
    u32,
    *const c_void,
    *const Buffer,
    *mut *const Oid,
    *mut Buffer,
    *mut u32,
    *mut u32,
) -> Status;
type AcceptSecContext = unsafe extern "C" fn(
    *mut Status,
    *mut Handle,
    Handle,
    *const Buffer,
    *const c_void,
    *mut Handle,
    *mut *const Oid,
    *mut Buffer,
    *mut u32,
    *mut u32,
    *mut Handle,
) -> Status;
type DeleteSecContext = unsafe extern "C" fn(*mut Status, *mut Handle, *mut Buffer) -> Status;
type Wrap = unsafe extern "C" fn(
    *mut Status,
    Handle,
    c_int,
    u32,
    *const Buffer,
    *mut c_int,
    *mut Buffer,
) -> Status;
type Unwrap = unsafe extern "C" fn(
    *mut Status,
    Handle,
    *const Buffer,
    *mut Buffer,
    *mut c_int,
    *mut u32,
) -> Status;
type DisplayName =
    unsafe extern "C" fn(*mut Status, Handle, *mut Buffer, *mut *const Oid) -> Status;
type ExportLucid = unsafe extern "C" fn(*mut Status, *mut Handle, u32, *mut *mut c_void) -> Status;
type FreeLucid = unsafe extern "C" fn(*mut Status, *mut c_void) -> Status;
type ReleaseBuffer = unsafe extern "C" fn(*mut Status, *mut Buffer) -> Status;
type DisplayStatus =
    unsafe extern "C" fn(*mut Status, u32, c_int, *const Oid, *mut u32, *mut Buffer) -> Status;
type InquireContext = unsafe extern "C" fn(
    *mut Status,
    Handle,
    *mut Handle,
    *mut Handle,
    *mut u32,
    *mut *const Oid,
    *mut u32,
    *mut c_int,
    *mut c_int,
) -> Status;

/// The start of MIT's `gss_krb5_lucid_context_v1_t` (the rest is not read).
#[repr(C)]
pub struct LucidHead {
    pub version: u32,
    pub initiate: u32,
    /// The ticket's end time, seconds since the epoch.
    pub endtime: u32,
}

/// The functions ksasl calls, resolved once.
pub struct Gss {
    pub import_name: ImportName,
    pub release_name: ReleaseHandle,
    pub acquire_cred_from: AcquireCredFrom,
    pub inquire_cred: InquireCred,
    pub release_cred: ReleaseHandle,
    pub init_sec_context: InitSecContext,
    pub accept_sec_context: AcceptSecContext,
    pub delete_sec_context: DeleteSecContext,
    pub wrap: Wrap,
    pub unwrap: Unwrap,
    pub display_name: DisplayName,
    pub release_buffer: ReleaseBuffer,
    pub display_status: DisplayStatus,
    pub inquire_context: InquireContext,
    pub export_lucid_sec_context: ExportLucid,
    pub free_lucid_sec_context: FreeLucid,
    /// libkrb5's default-realm functions (absent from an unusual build: the realm is then unknown).
    pub krb5: Option<Krb5>,
    // Keeps the library mapped for as long as the process runs.
    _library: libloading::Library,
}

/// The file names tried, in order.
pub const LIBRARY_NAMES: [&str; 2] = ["libgssapi_krb5.so.2", "libgssapi_krb5.so"];

fn load() -> std::result::Result<Gss, String> {
    let mut reasons = Vec::new();
    for name in LIBRARY_NAMES {
        // SAFETY: loading MIT's GSS-API library runs only its (well-behaved) initialisers.
        match unsafe { libloading::Library::new(name) } {
            Ok(library) => return resolve(library).map_err(|e| format!("{name}: {e}")),
            Err(e) => reasons.push(e.to_string()),
        }
    }
    Err(reasons.join("; "))
}

/// The function `name` of `library`, as the function pointer type `T`.
///
/// # Safety
/// `T` must be the C signature of `name` (RFC 2744, MIT's `gssapi_ext.h` and `krb5.h`), and
/// the pointer must not outlive `library` (both stay inside `Gss`).
unsafe fn symbol<T: Copy>(
    library: &libloading::Library,
    name: &str,
) -> std::result::Result<T, String> {
    let nul_terminated = format!("{name}\0");
    library
        .get::<T>(nul_terminated.as_bytes())
        .map(|s| *s)
        .map_err(|e| format!("{name} is missing ({e})"))
}

fn resolve(library: libloading::Library) -> std::result::Result<Gss, String> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: each field's type is the C signature of the function named for it.
            unsafe { symbol(&library, $name) }?
        };
    }
    Ok(Gss {
        import_name: sym!("gss_import_name"),
        release_name: sym!("gss_release_name"),
        acquire_cred_from: sym!("gss_acquire_cred_from"),
        inquire_cred: sym!("gss_inquire_cred"),
        release_cred: sym!("gss_release_cred"),
        init_sec_context: sym!("gss_init_sec_context"),
        accept_sec_context: sym!("gss_accept_sec_context"),
        delete_sec_context: sym!("gss_delete_sec_context"),
        wrap: sym!("gss_wrap"),
        unwrap: sym!("gss_unwrap"),
        display_name: sym!("gss_display_name"),
        release_buffer: sym!("gss_release_buffer"),
        display_status: sym!("gss_display_status"),
        inquire_context: sym!("gss_inquire_context"),
        export_lucid_sec_context: sym!("gss_krb5_export_lucid_sec_context"),
        free_lucid_sec_context: sym!("gss_krb5_free_lucid_sec_context"),
        krb5: resolve_krb5(&library),
        _library: library,
    })
}

static GSS: OnceLock<std::result::Result<Gss, String>> = OnceLock::new();

/// The loaded library, or `GSSAPI_UNAVAILABLE` saying why it could not be loaded.
pub fn gss() -> Result<&'static Gss> {
    match GSS.get_or_init(load) {
        Ok(g) => Ok(g),
        Err(why) => Err(Error::new(
            ErrorCode::GssapiUnavailable,
            format!(
                "GSSAPI needs the MIT Kerberos GSS-API library, which could not be loaded ({why}); install it (Debian and Ubuntu: libgssapi-krb5-2, Fedora and RHEL: krb5-libs)"
            ),
        )),
    }
}

/// Whether the library can be loaded.
pub fn available() -> bool {
    gss().is_ok()
}

type Krb5InitContext = unsafe extern "C" fn(*mut Handle) -> i32;
type Krb5FreeContext = unsafe extern "C" fn(Handle);
type Krb5GetDefaultRealm = unsafe extern "C" fn(Handle, *mut *mut c_char) -> i32;
type Krb5FreeDefaultRealm = unsafe extern "C" fn(Handle, *mut c_char);
type Krb5CcDefault = unsafe extern "C" fn(Handle, *mut Handle) -> i32;
type Krb5CcResolve = unsafe extern "C" fn(Handle, *const c_char, *mut Handle) -> i32;
type Krb5CcGetPrincipal = unsafe extern "C" fn(Handle, Handle, *mut Handle) -> i32;
type Krb5CcInitialize = unsafe extern "C" fn(Handle, Handle, Handle) -> i32;
type Krb5CcStoreCred = unsafe extern "C" fn(Handle, Handle, *mut Krb5Creds) -> i32;
type Krb5CcClose = unsafe extern "C" fn(Handle, Handle) -> i32;
type Krb5GetRenewedCreds =
    unsafe extern "C" fn(Handle, *mut Krb5Creds, Handle, Handle, *const c_char) -> i32;
type Krb5FreeCredContents = unsafe extern "C" fn(Handle, *mut Krb5Creds);
type Krb5FreePrincipal = unsafe extern "C" fn(Handle, Handle);
type Krb5UnparseName = unsafe extern "C" fn(Handle, Handle, *mut *mut c_char) -> i32;
type Krb5FreeUnparsedName = unsafe extern "C" fn(Handle, *mut c_char);
type Krb5GetErrorMessage = unsafe extern "C" fn(Handle, i32) -> *const c_char;
type Krb5FreeErrorMessage = unsafe extern "C" fn(Handle, *const c_char);

/// Room for MIT's `krb5_creds` (120 bytes, 8-aligned on 64-bit Linux), which ksasl never
/// reads: it is filled and freed by libkrb5 itself. Zeroed, as MIT's callers do.
#[repr(C, align(16))]
pub struct Krb5Creds([u8; 512]);

/// The krb5 functions ksasl uses beside the GSS-API (the configuration's default realm, and
/// renewing the ticket in a credential cache as `kinit -R` does), found through the GSS-API
/// library's handle, which searches its dependency libkrb5 too: no second dlopen.
pub struct Krb5 {
    init_context: Krb5InitContext,
    free_context: Krb5FreeContext,
    get_default_realm: Krb5GetDefaultRealm,
    free_default_realm: Krb5FreeDefaultRealm,
    cc_default: Krb5CcDefault,
    cc_resolve: Krb5CcResolve,
    cc_get_principal: Krb5CcGetPrincipal,
    cc_initialize: Krb5CcInitialize,
    cc_store_cred: Krb5CcStoreCred,
    cc_close: Krb5CcClose,
    get_renewed_creds: Krb5GetRenewedCreds,
    free_cred_contents: Krb5FreeCredContents,
    free_principal: Krb5FreePrincipal,
    unparse_name: Krb5UnparseName,
    free_unparsed_name: Krb5FreeUnparsedName,
    get_error_message: Krb5GetErrorMessage,
    free_error_message: Krb5FreeErrorMessage,
}

fn resolve_krb5(library: &libloading::Library) -> Option<Krb5> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: each field's type is the C signature of the function named for it.
            unsafe { symbol(library, $name) }.ok()?
        };
    }
    Some(Krb5 {
        init_context: sym!("krb5_init_context"),
        free_context: sym!("krb5_free_context"),
        get_default_realm: sym!("krb5_get_default_realm"),
        free_default_realm: sym!("krb5_free_default_realm"),
        cc_default: sym!("krb5_cc_default"),
        cc_resolve: sym!("krb5_cc_resolve"),
        cc_get_principal: sym!("krb5_cc_get_principal"),
        cc_initialize: sym!("krb5_cc_initialize"),
        cc_store_cred: sym!("krb5_cc_store_cred"),
        cc_close: sym!("krb5_cc_close"),
        get_renewed_creds: sym!("krb5_get_renewed_creds"),
        free_cred_contents: sym!("krb5_free_cred_contents"),
        free_principal: sym!("krb5_free_principal"),
        unparse_name: sym!("krb5_unparse_name"),
        free_unparsed_name: sym!("krb5_free_unparsed_name"),
        get_error_message: sym!("krb5_get_error_message"),
        free_error_message: sym!("krb5_free_error_message"),
    })
}

/// A krb5 context, freed on drop, with the helpers the calls below share.
struct Krb5Context<'a> {
    k: &'a Krb5,
    ctx: Handle,
}

impl<'a> Krb5Context<'a> {
    fn new(k: &'a Krb5) -> std::result::Result<Self, i32> {
        let mut ctx: Handle = std::ptr::null_mut();
        // SAFETY: krb5_init_context writes a new context or fails.
        let code = unsafe { (k.init_context)(&mut ctx) };
        match code {
            0 if !ctx.is_null() => Ok(Krb5Context { k, ctx }),
            0 => Err(-1),
            code => Err(code),
        }
    }

    /// MIT's text for an error code.
    fn message(&self, code: i32) -> String {
        // SAFETY: the message is a C string of this context, freed with its own function.
        unsafe {
            let p = (self.k.get_error_message)(self.ctx, code);
            if p.is_null() {
                return format!("error {code}");
            }
            let text = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
            (self.k.free_error_message)(self.ctx, p);
            text
        }
    }

    /// A copy of the C string `p` that `free` releases in this context (`None` for NULL).
    ///
    /// # Safety
    /// `p` is NULL or a C string allocated by this context for `free`.
    unsafe fn take_string(
        &self,
        p: *mut c_char,
        free: unsafe extern "C" fn(Handle, *mut c_char),
    ) -> Option<String> {
        if p.is_null() {
            return None;
        }
        let text = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        free(self.ctx, p);
        Some(text)
    }
}

impl Drop for Krb5Context<'_> {
    fn drop(&mut self) {
        // SAFETY: the context is live and nothing of it is used after this.
        unsafe { (self.k.free_context)(self.ctx) }
    }
}

/// A handle of a krb5 context (a cache, a principal) released with `release` on drop.
struct Owned<'c, 'a> {
    ctx: &'c Krb5Context<'a>,
    handle: Handle,
    release: unsafe fn(&Krb5, Handle, Handle),
}

impl Drop for Owned<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from this context and is not used after this.
        unsafe { (self.release)(self.ctx.k, self.ctx.ctx, self.handle) }
    }
}

/// The default realm of the Kerberos configuration (`default_realm` in the `[libdefaults]`
/// of `krb5.conf`, or `KRB5_CONFIG`'s file), as MIT reads it now; `None` when there is none
/// or the library is missing. Kafka's brokers take the realm of the `DEFAULT` mapping rule
/// from the same place (the JDK's reading of `krb5.conf`).
pub fn default_realm() -> Option<String> {
    let ctx = Krb5Context::new(gss().ok()?.krb5.as_ref()?).ok()?;
    let mut realm: *mut c_char = std::ptr::null_mut();
    // SAFETY: the realm is allocated by this context for krb5_free_default_realm.
    unsafe {
        if (ctx.k.get_default_realm)(ctx.ctx, &mut realm) != 0 {
            return None;
        }
        ctx.take_string(realm, ctx.k.free_default_realm)
    }
    .filter(|r| !r.is_empty())
}

/// Renews the ticket-granting ticket in a credential cache (`cache`, or the default cache)
/// at the KDC and stores the renewed ticket in its place, as `kinit -R` does; when
/// `principal` is given, only a cache holding that principal's ticket is touched. Fails with
/// MIT's reason (a ticket that is not renewable, or past its renewable life, for example).
pub fn renew_cache(cache: Option<&str>, principal: Option<&str>) -> Result<()> {
    let fail = |why: String| Error::new(ErrorCode::KerberosLoginFailed, why);
    let k = gss()?
        .krb5
        .as_ref()
        .ok_or_else(|| fail("this Kerberos library cannot renew tickets".into()))?;
    let name = cache
        .map(|c| std::ffi::CString::new(c).map_err(|_| fail("the cache name contains NUL".into())))
        .transpose()?;
    let ctx =
        Krb5Context::new(k).map_err(|code| fail(format!("krb5_init_context failed ({code})")))?;
    let failed = |what: &str, code: i32| fail(format!("{what}: {}", ctx.message(code)));
    // SAFETY: the calling sequence of MIT's kinit -R: the cache, its principal, renewed
    // credentials into zeroed caller memory, the cache re-initialised with them. Every handle
    // is released by its guard, on every path.
    unsafe {
        let mut cc: Handle = std::ptr::null_mut();
        let code = match &name {
            Some(n) => (k.cc_resolve)(ctx.ctx, n.as_ptr(), &mut cc),
            None => (k.cc_default)(ctx.ctx, &mut cc),
        };
        if code != 0 {
            return Err(failed("renewing the ticket: the credential cache", code));
        }
        let cc = Owned {
            ctx: &ctx,
            handle: cc,
            release: |k, c, h| {
                (k.cc_close)(c, h);
            },
        };
        let mut me: Handle = std::ptr::null_mut();
        let code = (k.cc_get_principal)(ctx.ctx, cc.handle, &mut me);
        if code != 0 {
            return Err(failed("renewing the ticket", code));
        }
        let me = Owned {
            ctx: &ctx,
            handle: me,
            release: |k, c, h| (k.free_principal)(c, h),
        };
        if let Some(wanted) = principal {
            let mut owner: *mut c_char = std::ptr::null_mut();
            let owner = match (k.unparse_name)(ctx.ctx, me.handle, &mut owner) {
                0 => ctx.take_string(owner, k.free_unparsed_name),
                _ => None,
            };
            if let Some(owner) = owner.filter(|o| o != wanted) {
                return Err(fail(format!(
                    "renewing the ticket: the cache holds {owner}'s ticket, not {wanted}'s"
                )));
            }
        }
        let mut creds = Krb5Creds([0; 512]);
        let code =
            (k.get_renewed_creds)(ctx.ctx, &mut creds, me.handle, cc.handle, std::ptr::null());
        if code != 0 {
            return Err(failed("renewing the ticket", code));
        }
        let mut code = (k.cc_initialize)(ctx.ctx, cc.handle, me.handle);
        if code == 0 {
            code = (k.cc_store_cred)(ctx.ctx, cc.handle, &mut creds);
        }
        (k.free_cred_contents)(ctx.ctx, &mut creds);
        if code != 0 {
            return Err(failed("storing the renewed ticket", code));
        }
        Ok(())
    }
}
