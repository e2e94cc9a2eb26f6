//! Credentials and security contexts over the system's MIT Kerberos GSS-API.

use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::sys::{self, gss, Buffer, Handle, KeyValue, KeyValueSet, Status};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::gssapi::context::{
    GssAcceptor, GssAcceptorFactory, GssContext, GssInitiator, GssInitiatorFactory,
};

/// Kerberos error numbers (MIT's com_err table `krb5`) that get their own ksasl code.
mod krb5_codes {
    pub const S_PRINCIPAL_UNKNOWN: i32 = -1_765_328_377;
    pub const BAD_INTEGRITY: i32 = -1_765_328_353;
    pub const TKT_EXPIRED: i32 = -1_765_328_352;
    pub const REPEAT: i32 = -1_765_328_350;
    pub const NOT_US: i32 = -1_765_328_349;
    pub const BADMATCH: i32 = -1_765_328_348;
    pub const MODIFIED: i32 = -1_765_328_343;
    pub const BADKEYVER: i32 = -1_765_328_340;
    pub const NOKEY: i32 = -1_765_328_339;
    pub const WRONG_PRINC: i32 = -1_765_328_240;
    pub const KT_NOTFOUND: i32 = -1_765_328_203;
    pub const KT_KVNONOTFOUND: i32 = -1_765_328_154;
}

fn classify(major: Status, minor: Status) -> ErrorCode {
    use krb5_codes::*;
    match minor as i32 {
        TKT_EXPIRED => return ErrorCode::KerberosTicketExpired,
        REPEAT => return ErrorCode::KerberosReplay,
        NOT_US | BADMATCH | WRONG_PRINC | S_PRINCIPAL_UNKNOWN => {
            return ErrorCode::KerberosWrongService
        }
        BAD_INTEGRITY | MODIFIED | BADKEYVER | NOKEY | KT_NOTFOUND | KT_KVNONOTFOUND => {
            return ErrorCode::KerberosKeyMismatch
        }
        _ => {}
    }
    if major & sys::S_DUPLICATE_TOKEN != 0 {
        return ErrorCode::KerberosReplay;
    }
    match major & sys::S_ERROR_MASK {
        sys::S_CREDENTIALS_EXPIRED | sys::S_CONTEXT_EXPIRED => ErrorCode::KerberosTicketExpired,
        _ => ErrorCode::GssFailed,
    }
}

/// The library's text for a status: the GSS-API part, then the Kerberos part.
fn status_text(major: Status, minor: Status) -> String {
    let Ok(g) = gss() else {
        return format!("major {major:#x}, minor {minor}");
    };
    let mut parts = Vec::new();
    for (code, kind, mech) in [
        (major, sys::C_GSS_CODE, std::ptr::null()),
        (minor, sys::C_MECH_CODE, &sys::MECH_KRB5 as *const sys::Oid),
    ] {
        if code == 0
            || (kind == sys::C_GSS_CODE && code & sys::S_ERROR_MASK == 0 && code & 0xffff == 0)
        {
            continue;
        }
        let mut context: u32 = 0;
        for _ in 0..8 {
            let mut m: Status = 0;
            let mut text = Buffer::empty();
            // SAFETY: the out-buffer is released below; `mech` is a static OID or null.
            let r =
                unsafe { (g.display_status)(&mut m, code, kind, mech, &mut context, &mut text) };
            if r & sys::S_ERROR_MASK != 0 {
                break;
            }
            parts.push(take_string(g, &mut text));
            if context == 0 {
                break;
            }
        }
    }
    parts.retain(|p| !p.is_empty());
    if parts.is_empty() {
        format!("major {major:#x}, minor {minor}")
    } else {
        parts.join(": ")
    }
}

fn take_bytes(g: &sys::Gss, buffer: &mut Buffer) -> Vec<u8> {
    let bytes = if buffer.value.is_null() || buffer.length == 0 {
        Vec::new()
    } else {
        // SAFETY: GSS-API filled `buffer` with `length` readable bytes.
        unsafe { std::slice::from_raw_parts(buffer.value as *const u8, buffer.length) }.to_vec()
    };
    let mut m: Status = 0;
    // SAFETY: releasing a buffer the library allocated (or an empty one) once.
    unsafe { (g.release_buffer)(&mut m, buffer) };
    bytes
}

fn take_string(g: &sys::Gss, buffer: &mut Buffer) -> String {
    let bytes = take_bytes(g, buffer);
    let text = String::from_utf8_lossy(&bytes);
    text.trim_end_matches('\0').to_string()
}

fn check(what: &str, major: Status, minor: Status) -> Result<()> {
    if major & sys::S_ERROR_MASK == 0 && major & (sys::S_DUPLICATE_TOKEN | sys::S_OLD_TOKEN) == 0 {
        return Ok(());
    }
    let code = classify(major, minor);
    let e = Error::new(
        code,
        format!("{what} failed: {}", status_text(major, minor)),
    )
    .with_detail("gss_major", format!("{major:#x}"))
    .with_detail("gss_minor", (minor as i32).to_string());
    Err(e)
}

/// A GSS-API name.
struct Name(Handle);

impl Name {
    fn import(text: &str, kind: &'static sys::Oid) -> Result<Name> {
        let g = gss()?;
        let buffer = Buffer::borrow(text.as_bytes());
        let mut handle: Handle = std::ptr::null_mut();
        let mut minor = 0;
        // SAFETY: input buffer and OID outlive the call; `handle` is released by Drop.
        let major = unsafe { (g.import_name)(&mut minor, &buffer, kind, &mut handle) };
        check("importing the Kerberos name", major, minor)?;
        Ok(Name(handle))
    }
}

impl Drop for Name {
    fn drop(&mut self) {
        if let (false, Ok(g)) = (self.0.is_null(), gss()) {
            let mut minor = 0;
            // SAFETY: the handle came from the library and is released once.
            unsafe { (g.release_name)(&mut minor, &mut self.0) };
        }
    }
}

fn display(g: &sys::Gss, name: Handle) -> Result<String> {
    let mut minor = 0;
    let mut text = Buffer::empty();
    // SAFETY: `name` is a live name handle; the buffer is released by `take_string`.
    let major = unsafe { (g.display_name)(&mut minor, name, &mut text, std::ptr::null_mut()) };
    check("displaying a Kerberos name", major, minor)?;
    Ok(take_string(g, &mut text))
}

fn c_string(what: &str, value: &str) -> Result<CString> {
    CString::new(value).map_err(|_| {
        Error::new(
            ErrorCode::InvalidConfig,
            format!("the {what} contains a NUL character"),
        )
    })
}

static NEXT_CACHE: AtomicU64 = AtomicU64::new(1);

/// Kerberos credentials held through the GSS-API: an initiator's ticket-granting ticket or an
/// acceptor's keytab. Shared by every context made from it; the library locks it internally.
pub struct Credential {
    handle: Handle,
    principal: String,
    lifetime_secs: Option<u32>,
    initiator: bool,
}

// MIT's credential handles carry their own lock, and ksasl only reads them after creation.
unsafe impl Send for Credential {}
unsafe impl Sync for Credential {}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("principal", &self.principal)
            .field("lifetime_secs", &self.lifetime_secs)
            .field("initiator", &self.initiator)
            .finish()
    }
}

impl Credential {
    fn acquire(
        what: &str,
        principal: Option<&str>,
        usage: std::os::raw::c_int,
        store: &[(&str, String)],
    ) -> Result<Credential> {
        let g = gss()?;
        let name = principal
            .map(|p| Name::import(p, &sys::NT_KRB5_PRINCIPAL))
            .transpose()?;
        let owned: Vec<(CString, CString)> = store
            .iter()
            .map(|(k, v)| Ok((c_string(k, k)?, c_string(k, v)?)))
            .collect::<Result<_>>()?;
        let elements: Vec<KeyValue> = owned
            .iter()
            .map(|(k, v)| KeyValue {
                key: k.as_ptr(),
                value: v.as_ptr(),
            })
            .collect();
        let set = KeyValueSet {
            count: elements.len() as u32,
            elements: elements.as_ptr(),
        };
        let mut handle: Handle = std::ptr::null_mut();
        let mut minor = 0;
        let mut time_rec: u32 = 0;
        // SAFETY: every input outlives the call; the output handle is released by Drop.
        let major = unsafe {
            (g.acquire_cred_from)(
                &mut minor,
                name.as_ref().map_or(std::ptr::null_mut(), |n| n.0),
                0,
                &sys::MECHS_KRB5,
                usage,
                if elements.is_empty() {
                    std::ptr::null()
                } else {
                    &set
                },
                &mut handle,
                std::ptr::null_mut(),
                &mut time_rec,
            )
        };
        check(what, major, minor).map_err(|e| login_error(e, usage))?;
        let mut cred = Credential {
            handle,
            principal: String::new(),
            lifetime_secs: None,
            initiator: usage == sys::C_INITIATE,
        };
        cred.inquire(what).map_err(|e| login_error(e, usage))?;
        Ok(cred)
    }

    fn inquire(&mut self, what: &str) -> Result<()> {
        let g = gss()?;
        let mut minor = 0;
        let mut name: Handle = std::ptr::null_mut();
        let mut lifetime: u32 = 0;
        // SAFETY: live credential handle; the returned name is released below.
        let major = unsafe {
            (g.inquire_cred)(
                &mut minor,
                self.handle,
                &mut name,
                &mut lifetime,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        check(what, major, minor)?;
        let name = Name(name);
        self.principal = if name.0.is_null() {
            String::new()
        } else {
            display(g, name.0)?
        };
        self.lifetime_secs = (lifetime != sys::C_INDEFINITE).then_some(lifetime);
        if self.initiator && lifetime == 0 {
            return Err(Error::new(
                ErrorCode::KerberosTicketExpired,
                format!(
                    "{what} failed: the ticket-granting ticket of {} has expired",
                    self.principal
                ),
            ));
        }
        Ok(())
    }

    /// Logs in as `principal` with the key in the client keytab `keytab`: a new
    /// ticket-granting ticket in a credential cache private to this credential (no `kinit`,
    /// and the user's own cache untouched).
    pub fn login_keytab(principal: &str, keytab: &str) -> Result<Credential> {
        if principal.is_empty() || keytab.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "a Kerberos login from a keytab needs both a principal and a keytab",
            ));
        }
        let cache = format!(
            "MEMORY:ksasl-{}-{}",
            std::process::id(),
            NEXT_CACHE.fetch_add(1, Ordering::Relaxed)
        );
        Self::acquire(
            &format!("logging in as {principal} from the keytab {keytab}"),
            Some(principal),
            sys::C_INITIATE,
            &[("client_keytab", keytab.to_string()), ("ccache", cache)],
        )
    }

    /// The ticket-granting ticket already in a credential cache (`FILE:/tmp/krb5cc_1000`, or
    /// the default cache when `None`), as `kinit` left it; `principal` picks one when the
    /// cache collection holds several.
    pub fn from_cache(cache: Option<&str>, principal: Option<&str>) -> Result<Credential> {
        let store: Vec<(&str, String)> = cache
            .map(|c| ("ccache", c.to_string()))
            .into_iter()
            .collect();
        Self::acquire(
            &format!(
                "reading the ticket-granting ticket from {}",
                cache.unwrap_or("the default credential cache")
            ),
            principal,
            sys::C_INITIATE,
            &store,
        )
    }

    /// An acceptor's credential: the keys of `principal` (`kafka/broker1@EXAMPLE.COM`; any
    /// principal in the keytab when `None`) in `keytab` (the default keytab when `None`).
    pub fn acceptor(keytab: Option<&str>, principal: Option<&str>) -> Result<Credential> {
        // A keytab file that does not exist is a configuration error, reported plainly before
        // MIT (whose acquire_cred_from also leaks a little memory on that error path) is asked.
        if let Some(path) =
            keytab.and_then(|k| k.strip_prefix("FILE:").or((!k.contains(':')).then_some(k)))
        {
            if !std::path::Path::new(path).is_file() {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    format!("the broker's keytab {path} does not exist"),
                ));
            }
        }
        let store: Vec<(&str, String)> = keytab
            .map(|k| ("keytab", k.to_string()))
            .into_iter()
            .collect();
        Self::acquire(
            &format!(
                "reading the service keys from {}",
                keytab.unwrap_or("the default keytab")
            ),
            principal,
            sys::C_ACCEPT,
            &store,
        )
    }

    /// The credential's principal (`alice@EXAMPLE.COM`); empty for an acceptor credential
    /// made without a principal.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// Seconds the credential had left when it was acquired (the ticket-granting ticket's
    /// remaining life for an initiator), if it expires.
    pub fn lifetime_secs(&self) -> Option<u32> {
        self.lifetime_secs
    }
}

fn login_error(e: Error, usage: std::os::raw::c_int) -> Error {
    if usage != sys::C_INITIATE {
        return e;
    }
    match e.code() {
        ErrorCode::GssFailed | ErrorCode::KerberosKeyMismatch => {
            // A wrong key (preauthentication failed), an unknown client principal, an
            // unreachable KDC: all are a failed login for whoever configured it.
            let mut out = Error::new(ErrorCode::KerberosLoginFailed, e.message().to_string());
            for (k, v) in e.details() {
                out = out.with_detail(k.clone(), v.clone());
            }
            out
        }
        _ => e,
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        if let (false, Ok(g)) = (self.handle.is_null(), gss()) {
            let mut minor = 0;
            // SAFETY: the handle came from the library and is released once.
            unsafe { (g.release_cred)(&mut minor, &mut self.handle) };
        }
    }
}

/// One security context, initiator or acceptor.
struct Context {
    handle: Handle,
    established: bool,
}

// A context is used by one exchange at a time; MIT contexts are not tied to a thread.
unsafe impl Send for Context {}

impl Context {
    fn new() -> Context {
        Context {
            handle: std::ptr::null_mut(),
            established: false,
        }
    }

    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>> {
        let g = gss()?;
        let input = Buffer::borrow(message);
        let mut out = Buffer::empty();
        let mut minor = 0;
        // SAFETY: live context; the output buffer is released by `take_bytes`.
        let major = unsafe {
            (g.wrap)(
                &mut minor,
                self.handle,
                0,
                0,
                &input,
                std::ptr::null_mut(),
                &mut out,
            )
        };
        let bytes = take_bytes(g, &mut out);
        check("wrapping the security-layer message", major, minor)?;
        Ok(bytes)
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>> {
        let g = gss()?;
        let input = Buffer::borrow(token);
        let mut out = Buffer::empty();
        let mut minor = 0;
        // SAFETY: live context; the output buffer is released by `take_bytes`.
        let major = unsafe {
            (g.unwrap)(
                &mut minor,
                self.handle,
                &input,
                &mut out,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let bytes = take_bytes(g, &mut out);
        check("unwrapping the peer's security-layer message", major, minor)?;
        Ok(bytes)
    }

    /// The ticket's end time, read by exporting the context in MIT's "lucid" form, which
    /// deletes it: the last thing done with a context.
    fn consume_for_end_time(&mut self) -> Result<i64> {
        let g = gss()?;
        let mut minor = 0;
        let mut lucid: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: live context, handed over to the library (which deletes it and nulls the
        // handle); the lucid structure is freed below.
        let major =
            unsafe { (g.export_lucid_sec_context)(&mut minor, &mut self.handle, 1, &mut lucid) };
        check("reading the service ticket's end time", major, minor)?;
        if lucid.is_null() {
            return Err(Error::new(
                ErrorCode::GssFailed,
                "the GSS-API returned no context to read the ticket's end time from",
            ));
        }
        // SAFETY: version 1 of the lucid context starts with three OM_uint32 fields.
        let head = unsafe { std::ptr::read(lucid as *const sys::LucidHead) };
        // SAFETY: freeing the structure the export allocated, once.
        unsafe { (g.free_lucid_sec_context)(&mut minor, lucid) };
        self.established = false;
        if head.version != 1 {
            return Err(Error::new(
                ErrorCode::GssFailed,
                format!(
                    "the GSS-API exported a version {} context, not 1",
                    head.version
                ),
            ));
        }
        Ok(i64::from(head.endtime) * 1000)
    }

    fn names(&self) -> Result<(String, String, Option<u32>)> {
        let g = gss()?;
        let mut minor = 0;
        let mut src: Handle = std::ptr::null_mut();
        let mut targ: Handle = std::ptr::null_mut();
        let mut lifetime: u32 = 0;
        // SAFETY: live, established context; the names are released by `Name`'s Drop.
        let major = unsafe {
            (g.inquire_context)(
                &mut minor,
                self.handle,
                &mut src,
                &mut targ,
                &mut lifetime,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let (src, targ) = (Name(src), Name(targ));
        check("inquiring the security context", major, minor)?;
        Ok((
            display(g, src.0)?,
            display(g, targ.0)?,
            (lifetime != sys::C_INDEFINITE).then_some(lifetime),
        ))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if let (false, Ok(g)) = (self.handle.is_null(), gss()) {
            let mut minor = 0;
            // SAFETY: the handle came from the library and is deleted once.
            unsafe { (g.delete_sec_context)(&mut minor, &mut self.handle, std::ptr::null_mut()) };
        }
    }
}

/// An initiator context on a shared credential.
pub struct Initiator {
    credential: Arc<Credential>,
    target: Name,
    context: Context,
    flags: u32,
}

// The target name is only read by the library.
unsafe impl Send for Initiator {}

impl Initiator {
    /// A context for `service@host` with `credential`; `mutual` asks the server to prove
    /// itself with an extra round trip (Kafka's client does not).
    pub fn new(
        credential: Arc<Credential>,
        service: &str,
        host: &str,
        mutual: bool,
    ) -> Result<Self> {
        let target = Name::import(&format!("{service}@{host}"), &sys::NT_HOSTBASED_SERVICE)?;
        let mut flags = sys::C_INTEG_FLAG | sys::C_CONF_FLAG;
        if mutual {
            flags |= sys::C_MUTUAL_FLAG;
        }
        Ok(Initiator {
            credential,
            target,
            context: Context::new(),
            flags,
        })
    }
}

impl GssContext for Initiator {
    fn is_established(&self) -> bool {
        self.context.established
    }
    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>> {
        self.context.wrap(message)
    }
    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>> {
        self.context.unwrap(token)
    }
}

impl GssInitiator for Initiator {
    fn init(&mut self, input: Option<&[u8]>) -> Result<Vec<u8>> {
        let g = gss()?;
        let input = input.map(Buffer::borrow);
        let mut out = Buffer::empty();
        let mut minor = 0;
        // SAFETY: credential, target and context are live; the output buffer is released by
        // `take_bytes`.
        let major = unsafe {
            (g.init_sec_context)(
                &mut minor,
                self.credential.handle,
                &mut self.context.handle,
                self.target.0,
                &sys::MECH_KRB5,
                self.flags,
                0,
                std::ptr::null(),
                input
                    .as_ref()
                    .map_or(std::ptr::null(), |b| b as *const Buffer),
                std::ptr::null_mut(),
                &mut out,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let token = take_bytes(g, &mut out);
        check("gss_init_sec_context", major, minor)?;
        self.context.established = major & sys::S_CONTINUE_NEEDED == 0;
        Ok(token)
    }

    fn principal(&self) -> Result<String> {
        Ok(self.credential.principal.clone())
    }
}

/// Makes initiator contexts from whatever credential `current` returns at that moment, so a
/// re-authentication after a new login uses the new ticket.
pub struct InitiatorFactory<F> {
    current: F,
    mutual: bool,
}

impl<F: Fn() -> Result<Arc<Credential>> + Send + Sync> InitiatorFactory<F> {
    /// A factory reading its credential from `current`.
    pub fn new(current: F, mutual: bool) -> Self {
        InitiatorFactory { current, mutual }
    }
}

impl<F: Fn() -> Result<Arc<Credential>> + Send + Sync> GssInitiatorFactory for InitiatorFactory<F> {
    fn new_context(&self, service: &str, host: &str) -> Result<Box<dyn GssInitiator>> {
        Ok(Box::new(Initiator::new(
            (self.current)()?,
            service,
            host,
            self.mutual,
        )?))
    }
}

/// An acceptor context on a shared credential.
pub struct Acceptor {
    credential: Arc<Credential>,
    context: Context,
    names: Option<(String, String, Option<u32>)>,
}

impl Acceptor {
    /// A context accepting with `credential`.
    pub fn new(credential: Arc<Credential>) -> Self {
        Acceptor {
            credential,
            context: Context::new(),
            names: None,
        }
    }

    fn names(&self) -> Result<&(String, String, Option<u32>)> {
        self.names.as_ref().ok_or_else(|| {
            Error::new(
                ErrorCode::WrongState,
                "the GSSAPI context is not established",
            )
        })
    }
}

impl GssContext for Acceptor {
    fn is_established(&self) -> bool {
        self.context.established
    }
    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>> {
        self.context.wrap(message)
    }
    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>> {
        self.context.unwrap(token)
    }
}

impl GssAcceptor for Acceptor {
    fn accept(&mut self, input: &[u8]) -> Result<Vec<u8>> {
        let g = gss()?;
        let input = Buffer::borrow(input);
        let mut out = Buffer::empty();
        let mut minor = 0;
        // SAFETY: credential and context are live; the output buffer is released by
        // `take_bytes`; the source name is not requested (read later by inquire_context).
        let major = unsafe {
            (g.accept_sec_context)(
                &mut minor,
                &mut self.context.handle,
                self.credential.handle,
                &input,
                std::ptr::null(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut out,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let token = take_bytes(g, &mut out);
        check("gss_accept_sec_context", major, minor)?;
        if major & sys::S_CONTINUE_NEEDED == 0 {
            self.names = Some(self.context.names()?);
            self.context.established = true;
        }
        Ok(token)
    }

    fn peer_principal(&self) -> Result<String> {
        Ok(self.names()?.0.clone())
    }

    fn target_principal(&self) -> Result<String> {
        Ok(self.names()?.1.clone())
    }

    fn ticket_end_ms(&mut self) -> Result<Option<i64>> {
        self.names()?;
        self.context.consume_for_end_time().map(Some)
    }
}

/// Makes acceptor contexts on one acceptor credential.
pub struct AcceptorFactory {
    credential: Arc<Credential>,
}

impl AcceptorFactory {
    /// A factory accepting with `credential`.
    pub fn new(credential: Arc<Credential>) -> Self {
        AcceptorFactory { credential }
    }
}

impl GssAcceptorFactory for AcceptorFactory {
    fn new_context(&self) -> Result<Box<dyn GssAcceptor>> {
        Ok(Box::new(Acceptor::new(self.credential.clone())))
    }
}
