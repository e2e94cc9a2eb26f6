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

fn resolve(library: libloading::Library) -> std::result::Result<Gss, String> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol has the C signature declared for its field (RFC 2744, MIT's
            // gssapi_ext.h); the library stays loaded inside `Gss`.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{} is missing ({e})", $name))?
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
