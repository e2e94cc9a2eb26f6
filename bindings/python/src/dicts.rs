//! The core's records as Python values: credential requests and answers, sessions.

use ksasl::credential::{CredentialAnswer, CredentialAnswerKind, CredentialRequest, Lookup};
use ksasl::kafka::client::ClientSession;
use ksasl::ServerSession;

use crate::glue::*;

pub(crate) fn request_dict<'py>(py: Python<'py>, r: &CredentialRequest) -> PyResult<Dict<'py>> {
    Ok(dict!(py, mechanism: &r.mechanism, username: &r.username,
        token_authenticated: r.token_authenticated))
}

fn item<T: for<'a> FromPyObject<'a>>(t: &Bound<'_, PyTuple>, i: usize) -> PyResult<Option<T>> {
    match i < t.len() {
        true => t.get_item(i)?.extract(),
        false => Ok(None),
    }
}

/// The host's answer to `req`, decoded by the core (outer error: a Python type error).
pub(crate) fn decode(req: &CredentialRequest, v: &Any) -> PyResult<ksasl::Result<Lookup>> {
    use CredentialAnswerKind as Kind;
    let (kind, value, expiry, owner): (_, Option<String>, _, Option<String>) = if v.is_none() {
        (Ok(Kind::Unknown), None, None, None)
    } else if let Ok(password) = v.extract::<String>() {
        (Ok(Kind::Password), Some(password), None, None)
    } else {
        let t = v.downcast::<PyTuple>()?;
        let kind = Kind::from_name(&t.get_item(0)?.extract::<String>()?);
        (kind, item(t, 1)?, item(t, 2)?, item(t, 3)?)
    };
    let (value, owner) = (value.as_deref(), owner.as_deref());
    Ok(kind.and_then(|k| CredentialAnswer::decode(req, k, value, expiry, owner)))
}

/// The host's answer to the pending request, now; Unknown when nothing was requested (the core
/// refuses it).
pub(crate) fn answer_now(req: Option<&CredentialRequest>, v: &Any) -> PyResult<CredentialAnswer> {
    req.map_or(Ok(CredentialAnswer::Unknown), |r| {
        decode(r, v)?.and_then(Lookup::now).or_raise()
    })
}

pub(crate) fn server_session<'py>(py: Python<'py>, s: &ServerSession) -> PyResult<Dict<'py>> {
    let (o, p) = (&s.outcome, &s.outcome.principal);
    Ok(
        dict!(py, principal: p.to_string(), principal_name: &p.name, mechanism: &o.mechanism,
        token_authenticated: p.token_authenticated, credential_expiry_ms: o.credential_expiry_ms,
        extensions: o.extensions.clone(), lifetime_ms: s.lifetime_ms, expiry_ms: s.expiry_ms),
    )
}

pub(crate) fn client_session<'py>(py: Python<'py>, s: &ClientSession) -> PyResult<Dict<'py>> {
    Ok(
        dict!(py, lifetime_ms: s.lifetime_ms, reauth_at_ms: s.reauth_at_ms,
        expiry_ms: s.expiry_ms, latency_ms: s.latency_ms),
    )
}

pub(crate) fn client_session_from(d: &Dict) -> PyResult<ClientSession> {
    let get = |k: &str| d.as_any().get_item(k);
    Ok(ClientSession {
        lifetime_ms: get("lifetime_ms")?.extract()?,
        reauth_at_ms: get("reauth_at_ms")?.extract()?,
        expiry_ms: get("expiry_ms")?.extract()?,
        latency_ms: get("latency_ms")?.extract()?,
    })
}
