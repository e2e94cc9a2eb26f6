//! Credential stores, mechanism registries and the credential callback.

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use super::*;
use crate::credential::{
    CredentialAnswer, CredentialLookup, CredentialStore, Lookup, PasswordCredential,
    ServerCredential,
};
use crate::mech::scram::{ScramCredential, ScramMechanism};
use crate::mech::{CredentialRequest, MechanismRegistry};
use crate::random::OsRandom;

/// An in-memory credential store (users and delegation tokens). Thread-safe.
pub struct ksasl_store {
    pub(crate) inner: Arc<CredentialStore>,
    err: LastError,
}

impl HasError for ksasl_store {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates an empty store.
#[no_mangle]
pub extern "C" fn ksasl_store_new(out: *mut *mut ksasl_store) -> ksasl_result {
    construct(out, || {
        Ok(ksasl_store {
            inner: Arc::new(CredentialStore::new()),
            err: LastError::default(),
        })
    })
}

/// Frees a store (NULL is a no-op). Registries that use it keep it alive.
#[no_mangle]
pub extern "C" fn ksasl_store_free(store: *mut ksasl_store) {
    free(store)
}

/// The detail of the store's last failure.
#[no_mangle]
pub extern "C" fn ksasl_store_last_error(store: *const ksasl_store) -> *const c_char {
    unsafe { store.as_ref() }.map_or(c"".as_ptr(), |s| s.err.ptr())
}

/// Adds or replaces a user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM credentials
/// derived with random salts and `iterations`, at least 4096).
#[no_mangle]
pub extern "C" fn ksasl_store_add_user(
    store: *mut ksasl_store,
    username: *const c_char,
    password: *const c_char,
    iterations: u32,
) -> ksasl_result {
    with(store, |s| {
        s.inner.add_user(
            text(username, "username")?,
            text(password, "password")?,
            iterations,
            &OsRandom,
        )
    })
}

/// Sets a user's SCRAM credential from Kafka's text form
/// (`salt=...,stored_key=...,server_key=...,iterations=...`) for `mechanism`.
#[no_mangle]
pub extern "C" fn ksasl_store_set_scram(
    store: *mut ksasl_store,
    username: *const c_char,
    mechanism: *const c_char,
    credential: *const c_char,
) -> ksasl_result {
    with(store, |s| {
        let m = scram_mechanism(text(mechanism, "mechanism")?)?;
        let c = ScramCredential::from_kafka_string(m, text(credential, "credential")?)?;
        s.inner.set_scram(text(username, "username")?, c)
    })
}

/// Sets (expiry_ms >= 0) or clears (expiry_ms < 0) an absolute expiry on a user's credentials.
#[no_mangle]
pub extern "C" fn ksasl_store_set_user_expiry(
    store: *mut ksasl_store,
    username: *const c_char,
    expiry_ms: i64,
) -> ksasl_result {
    with(store, |s| {
        s.inner.set_user_expiry(
            text(username, "username")?,
            (expiry_ms >= 0).then_some(expiry_ms),
        )
    })
}

/// Removes a user. `*existed` (if not NULL) tells whether it was there.
#[no_mangle]
pub extern "C" fn ksasl_store_remove_user(
    store: *mut ksasl_store,
    username: *const c_char,
    existed: *mut c_int,
) -> ksasl_result {
    with(store, |s| {
        let e = s.inner.remove_user(text(username, "username")?)?;
        put_opt(existed, as_int(e));
        Ok(())
    })
}

/// Adds a delegation token's SCRAM credential (Kafka text form) for `mechanism`, owned by
/// `owner`, expiring at `expiry_ms` (< 0: no expiry).
#[no_mangle]
pub extern "C" fn ksasl_store_set_token(
    store: *mut ksasl_store,
    token_id: *const c_char,
    mechanism: *const c_char,
    credential: *const c_char,
    owner: *const c_char,
    expiry_ms: i64,
) -> ksasl_result {
    with(store, |s| {
        let m = scram_mechanism(text(mechanism, "mechanism")?)?;
        let c = ScramCredential::from_kafka_string(m, text(credential, "credential")?)?;
        let mut sc = ServerCredential::scram(c).with_token_owner(text(owner, "owner")?);
        if expiry_ms >= 0 {
            sc = sc.with_expiry_ms(expiry_ms);
        }
        s.inner.set_token(text(token_id, "token_id")?, m, sc)
    })
}

pub(crate) fn scram_mechanism(name: &str) -> Result<ScramMechanism, Error> {
    ScramMechanism::from_name(name).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{name} is not a SCRAM mechanism"),
        )
    })
}

/// A credential kind, in answers to credential requests.
pub type ksasl_credential_kind = u32;
/// The user's clear-text password.
pub const KSASL_CREDENTIAL_PASSWORD: ksasl_credential_kind = 1;
/// A SCRAM credential in Kafka's text form.
pub const KSASL_CREDENTIAL_SCRAM: ksasl_credential_kind = 2;
/// No such user.
pub const KSASL_CREDENTIAL_UNKNOWN: ksasl_credential_kind = 3;
/// The store could not answer (the value is the reason, kept from the client).
pub const KSASL_CREDENTIAL_UNAVAILABLE: ksasl_credential_kind = 4;
/// (Callback only) the answer will come later through the pull form.
pub const KSASL_CREDENTIAL_LATER: ksasl_credential_kind = 5;

/// Builds an answer from its C description.
pub(crate) fn answer(
    request: &CredentialRequest,
    kind: ksasl_credential_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
) -> Result<Option<CredentialAnswer>, Error> {
    let cred = |c: ServerCredential| -> Result<CredentialAnswer, Error> {
        let mut c = if expiry_ms >= 0 {
            c.with_expiry_ms(expiry_ms)
        } else {
            c
        };
        if let Some(o) = opt_text(token_owner, "token_owner")? {
            c = c.with_token_owner(o);
        }
        Ok(CredentialAnswer::Found(c))
    };
    Ok(Some(match kind {
        KSASL_CREDENTIAL_PASSWORD => cred(ServerCredential::password(text(value, "password")?))?,
        KSASL_CREDENTIAL_SCRAM => cred(ServerCredential::scram(
            request.scram_credential(text(value, "credential")?)?,
        ))?,
        KSASL_CREDENTIAL_UNKNOWN => CredentialAnswer::Unknown,
        KSASL_CREDENTIAL_UNAVAILABLE => CredentialAnswer::Unavailable(
            opt_text(value, "reason")?
                .unwrap_or("unavailable")
                .to_string(),
        ),
        KSASL_CREDENTIAL_LATER => return Ok(None),
        k => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("unknown credential kind {k}"),
            ))
        }
    }))
}

/// Answers the pending request of a server handle (the pull form): the request is taken only
/// when the answer is valid, so a bad answer can be corrected.
pub(crate) fn take_answer(
    pending: &mut Option<(CredentialRequest, CString, CString)>,
    kind: ksasl_credential_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
) -> Result<CredentialAnswer, Error> {
    let (req, _, _) = pending
        .as_ref()
        .ok_or_else(|| Error::new(ErrorCode::WrongState, "no credential has been requested"))?;
    let a = answer(req, kind, value, expiry_ms, token_owner)?.ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "KSASL_CREDENTIAL_LATER is not an answer",
        )
    })?;
    *pending = None;
    Ok(a)
}

/// A credential request, as a credential callback sees it.
pub struct ksasl_credential_request {
    mechanism: CString,
    username: CString,
    token_authenticated: bool,
    inner: CredentialRequest,
}

/// The mechanism asking (`"SCRAM-SHA-256"`, ...).
#[no_mangle]
pub extern "C" fn ksasl_credential_request_mechanism(
    r: *const ksasl_credential_request,
) -> *const c_char {
    unsafe { r.as_ref() }.map_or(std::ptr::null(), |r| r.mechanism.as_ptr())
}

/// The username (the token id for delegation-token logins).
#[no_mangle]
pub extern "C" fn ksasl_credential_request_username(
    r: *const ksasl_credential_request,
) -> *const c_char {
    unsafe { r.as_ref() }.map_or(std::ptr::null(), |r| r.username.as_ptr())
}

/// 1 for a delegation-token login (`tokenauth=true`).
#[no_mangle]
pub extern "C" fn ksasl_credential_request_token_auth(r: *const ksasl_credential_request) -> c_int {
    unsafe { r.as_ref() }.map_or(0, |r| as_int(r.token_authenticated))
}

/// Where a credential callback writes its answer.
pub struct ksasl_credential_answer {
    request: CredentialRequest,
    answer: Option<Result<Option<CredentialAnswer>, Error>>,
}

/// Answers a credential request from inside the callback: `kind` is one of
/// `KSASL_CREDENTIAL_*`; `value` is the password, the Kafka SCRAM string or the reason;
/// `expiry_ms` < 0 means none; `token_owner` (NULL for users) marks a delegation token.
#[no_mangle]
pub extern "C" fn ksasl_credential_answer_set(
    a: *mut ksasl_credential_answer,
    kind: ksasl_credential_kind,
    value: *const c_char,
    expiry_ms: i64,
    token_owner: *const c_char,
) -> ksasl_result {
    let Some(a) = (unsafe { a.as_mut() }) else {
        return KSASL_NULL_ARGUMENT;
    };
    match catch_unwind(AssertUnwindSafe(|| {
        answer(&a.request, kind, value, expiry_ms, token_owner)
    })) {
        Ok(r) => {
            let code = r.as_ref().err().map_or(KSASL_OK, |e| e.code().as_u32());
            a.answer = Some(r);
            code
        }
        Err(_) => KSASL_PANIC,
    }
}

/// A credential callback: look `request` up and answer with `ksasl_credential_answer_set`.
/// Return 0, or non-zero if the lookup failed (the login then fails as "credentials could not
/// be verified"). It may be called from any thread that steps a server.
pub type ksasl_credential_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        request: *const ksasl_credential_request,
        answer: *mut ksasl_credential_answer,
    ) -> c_int,
>;

struct CallbackLookup {
    cb: unsafe extern "C" fn(
        *mut c_void,
        *const ksasl_credential_request,
        *mut ksasl_credential_answer,
    ) -> c_int,
    userdata: Userdata,
}

impl CredentialLookup for CallbackLookup {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        let req = ksasl_credential_request {
            mechanism: cstring(&request.mechanism),
            username: cstring(&request.username),
            token_authenticated: request.token_authenticated,
            inner: request.clone(),
        };
        let mut ans = ksasl_credential_answer {
            request: req.inner.clone(),
            answer: None,
        };
        let rc = unsafe { (self.cb)(self.userdata.ptr(), &req, &mut ans) };
        if rc != 0 {
            return Lookup::Now(CredentialAnswer::Unavailable(format!(
                "the credential callback returned {rc}"
            )));
        }
        match ans.answer {
            Some(Ok(Some(a))) => Lookup::Now(a),
            Some(Ok(None)) => Lookup::Later,
            Some(Err(e)) => Lookup::Now(CredentialAnswer::Unavailable(format!(
                "the credential callback gave an invalid answer: {e}"
            ))),
            None => Lookup::Now(CredentialAnswer::Unavailable(
                "the credential callback gave no answer".into(),
            )),
        }
    }
}

/// A set of client and server mechanisms by name, with the credentials they use.
pub struct ksasl_registry {
    pub(crate) inner: MechanismRegistry,
    /// Where user logins are looked up (a store or the callback; None: the pull form).
    pub(crate) users: Option<Arc<dyn CredentialLookup>>,
    /// Where `tokenauth` logins are looked up, if anywhere.
    pub(crate) tokens: Option<Arc<crate::token::TokenAuthority>>,
    err: LastError,
}

impl HasError for ksasl_registry {
    fn last_error(&mut self) -> &mut LastError {
        &mut self.err
    }
}

/// Creates an empty registry.
#[no_mangle]
pub extern "C" fn ksasl_registry_new(out: *mut *mut ksasl_registry) -> ksasl_result {
    construct(out, || {
        Ok(ksasl_registry {
            inner: MechanismRegistry::new(),
            users: None,
            tokens: None,
            err: LastError::default(),
        })
    })
}

/// Frees a registry (NULL is a no-op).
#[no_mangle]
pub extern "C" fn ksasl_registry_free(r: *mut ksasl_registry) {
    free(r)
}

/// The detail of the registry's last failure.
#[no_mangle]
pub extern "C" fn ksasl_registry_last_error(r: *const ksasl_registry) -> *const c_char {
    unsafe { r.as_ref() }.map_or(c"".as_ptr(), |r| r.err.ptr())
}

/// Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. With a store they look
/// credentials up there; with NULL they use the credential callback if one is set, and
/// otherwise stop with a credential request (the pull form). A token authority given to
/// `ksasl_registry_add_password_servers_with_tokens` keeps answering `tokenauth` logins.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_password_servers(
    r: *mut ksasl_registry,
    store: *const ksasl_store,
) -> ksasl_result {
    with(r, |r| {
        r.inner.merge(MechanismRegistry::password_servers(None));
        if let Some(s) = unsafe { store.as_ref() } {
            r.users = Some(s.inner.clone() as Arc<dyn CredentialLookup>);
            r.apply_lookup();
        }
        Ok(())
    })
}

/// Sets a credential callback consulted by every server exchange of this registry (it
/// replaces a store given to `ksasl_registry_add_password_servers`; `tokenauth` logins still
/// go to a token authority given to `ksasl_registry_add_password_servers_with_tokens`).
/// `free_userdata`, if given, is called when the registry no longer needs `userdata`; the
/// library takes `userdata` in every case, so it is also freed at once if this call fails.
#[no_mangle]
pub extern "C" fn ksasl_registry_set_credential_callback(
    r: *mut ksasl_registry,
    cb: ksasl_credential_cb,
    userdata: *mut c_void,
    free_userdata: ksasl_free_fn,
) -> ksasl_result {
    let ud = Userdata::new(userdata, free_userdata);
    with(r, move |r| {
        let cb = cb.ok_or_else(|| Error::new(ErrorCode::NullArgument, "cb must not be NULL"))?;
        r.users = Some(Arc::new(CallbackLookup { cb, userdata: ud }));
        r.apply_lookup();
        Ok(())
    })
}

/// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password.
#[no_mangle]
pub extern "C" fn ksasl_registry_add_password_clients(
    r: *mut ksasl_registry,
    username: *const c_char,
    password: *const c_char,
) -> ksasl_result {
    with(r, |r| {
        let c = Arc::new(PasswordCredential::new(
            text(username, "username")?,
            text(password, "password")?,
        )?);
        r.inner.merge(MechanismRegistry::password_clients(c));
        Ok(())
    })
}

/// Adds SCRAM-SHA-256 and SCRAM-SHA-512 clients that log in with a delegation token (token id
/// and base64 HMAC; `tokenauth=true`).
#[no_mangle]
pub extern "C" fn ksasl_registry_add_token_clients(
    r: *mut ksasl_registry,
    token_id: *const c_char,
    token_hmac: *const c_char,
) -> ksasl_result {
    with(r, |r| {
        let c = Arc::new(PasswordCredential::delegation_token(
            text(token_id, "token_id")?,
            text(token_hmac, "token_hmac")?,
        )?);
        r.inner.merge(MechanismRegistry::password_clients(c));
        Ok(())
    })
}

/// The number of client (`server` = 0) or server (`server` = 1) mechanisms.
#[no_mangle]
pub extern "C" fn ksasl_registry_mechanism_count(r: *const ksasl_registry, server: c_int) -> usize {
    unsafe { r.as_ref() }.map_or(0, |r| {
        if server != 0 {
            r.inner.server_mechanisms().len()
        } else {
            r.inner.client_mechanisms().len()
        }
    })
}
