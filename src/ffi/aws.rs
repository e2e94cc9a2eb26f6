//! `AWS_MSK_IAM` for C: AWS credentials, the key store of a verifying server, the registry's
//! AWS clients and servers, and MSK's presigned OAUTHBEARER tokens.

use std::ffi::c_char;
use std::sync::Arc;

use super::boundary::*;
use super::mechanism_registry::ksasl_mechanism_registry;
use super::oauth_token::ksasl_oauth_token;
use super::refresher::ksasl_refresher;
use crate::aws::credentials::AwsCredentials;
use crate::error::{Error, ErrorCode, Result};
use crate::mech::aws_msk_iam::{
    AwsCredentialSource, AwsKeyStore, MskIamClientConfig, MskIamServerConfig, MskTokenSource,
};

/// AWS credentials (an access key, its secret, a session token and an expiry for temporary
/// ones). The secret and the token are wiped when the handle is freed.
pub struct ksasl_aws_credentials {
    pub(crate) inner: AwsCredentials,
}

/// The access keys an `AWS_MSK_IAM` verifying server accepts; shared by registries (thread-safe,
/// changeable while connections run).
pub struct ksasl_aws_key_store {
    pub(crate) inner: Arc<AwsKeyStore>,
    err: LastError,
}
handle!(ksasl_aws_key_store(Arc<AwsKeyStore>));

/// The credential source of a client: exactly one of `credentials` and `refresher`.
fn source(
    credentials: *const ksasl_aws_credentials,
    refresher: *const ksasl_refresher,
) -> Result<Arc<dyn AwsCredentialSource>> {
    match (credentials.is_null(), refresher.is_null()) {
        (false, true) => Ok(Arc::new(arg(credentials, "credentials")?.inner.clone())),
        (true, false) => Ok(arg(refresher, "refresher")?.inner.clone()),
        _ => Err(Error::new(
            ErrorCode::InvalidArgument,
            "pass exactly one of credentials and refresher",
        )),
    }
}

/// Creates credentials: `session_token` NULL for long-term keys, `expires_at_ms` negative for
/// none. `INVALID_ARGUMENT` for an empty or non-alphanumeric access key id, or an empty secret
/// or token.
#[no_mangle]
pub extern "C" fn ksasl_aws_credentials_new(
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    session_token: *const c_char,
    expires_at_ms: i64,
    out: *mut *mut ksasl_aws_credentials,
) -> ksasl_result {
    construct(out, || {
        Ok(ksasl_aws_credentials {
            inner: AwsCredentials::from_parts(
                text(access_key_id, "access_key_id")?,
                text(secret_access_key, "secret_access_key")?,
                opt_text(session_token, "session_token")?,
                opt_ms(expires_at_ms),
            )?,
        })
    })
}

/// Creates an empty key store.
#[no_mangle]
pub extern "C" fn ksasl_aws_key_store_new(out: *mut *mut ksasl_aws_key_store) -> ksasl_result {
    construct(out, || Ok(ksasl_aws_key_store::new(Arc::default())))
}

/// Adds (or replaces) `credentials`, which authenticate as `User:<principal>`.
#[no_mangle]
pub extern "C" fn ksasl_aws_key_store_add(
    store: *mut ksasl_aws_key_store,
    credentials: *const ksasl_aws_credentials,
    principal: *const c_char,
) -> ksasl_result {
    with(store, |s| {
        s.inner.add(
            &arg(credentials, "credentials")?.inner,
            text(principal, "principal")?,
        )
    })
}

/// Removes an access key; `*removed` (may be NULL) says whether it was there.
#[no_mangle]
pub extern "C" fn ksasl_aws_key_store_remove(
    store: *mut ksasl_aws_key_store,
    access_key_id: *const c_char,
    removed: *mut i32,
) -> ksasl_result {
    with(store, |s| {
        let r = s.inner.remove(text(access_key_id, "access_key_id")?);
        put_opt(removed, i32::from(r));
        Ok(())
    })
}

/// Adds an `AWS_MSK_IAM` client signing for the broker `host` in `region` with `credentials`
/// or with what `refresher` holds at each (re-)authentication (exactly one of the two).
/// `user_agent` NULL: ksasl's; `key_order` NULL: `"java"` (aws-msk-iam-auth's), or
/// `"kafka-python"`.
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_aws_msk_iam_client(
    r: *mut ksasl_mechanism_registry,
    host: *const c_char,
    region: *const c_char,
    credentials: *const ksasl_aws_credentials,
    refresher: *const ksasl_refresher,
    user_agent: *const c_char,
    key_order: *const c_char,
) -> ksasl_result {
    with(r, |r| {
        let config = MskIamClientConfig::with_options(
            text(host, "host")?,
            text(region, "region")?,
            opt_text(user_agent, "user_agent")?,
            opt_text(key_order, "key_order")?,
        )?;
        let source = source(credentials, refresher)?;
        r.inner
            .register_aws_msk_iam_client(Arc::new(config), source);
        Ok(())
    })
}

/// Adds an `AWS_MSK_IAM` verifying server: payloads signed for `region` with a key of `keys`,
/// for one of the `n_hosts` host names (0: any).
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_aws_msk_iam_server(
    r: *mut ksasl_mechanism_registry,
    keys: *const ksasl_aws_key_store,
    region: *const c_char,
    hosts: *const *const c_char,
    n_hosts: usize,
) -> ksasl_result {
    with(r, |r| {
        let hosts = texts(hosts, n_hosts, "hosts")?;
        let config = MskIamServerConfig::new(
            arg(keys, "keys")?.inner.clone(),
            text(region, "region")?,
            hosts.into_iter().map(str::to_string).collect(),
        );
        r.inner.register_aws_msk_iam_server(Arc::new(config));
        Ok(())
    })
}

/// Adds an OAUTHBEARER client presenting MSK's presigned tokens for `region`, signed at each
/// (re-)authentication with `credentials` or `refresher`'s current ones (exactly one).
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_msk_oauthbearer_client(
    r: *mut ksasl_mechanism_registry,
    region: *const c_char,
    credentials: *const ksasl_aws_credentials,
    refresher: *const ksasl_refresher,
    user_agent: *const c_char,
) -> ksasl_result {
    with(r, |r| {
        r.inner.register_msk_oauthbearer_client(
            text(region, "region")?,
            opt_text(user_agent, "user_agent")?,
            source(credentials, refresher)?,
        );
        Ok(())
    })
}

/// Adds an OAUTHBEARER server accepting MSK's presigned tokens for `region` signed with a key
/// of `keys` (checked every time: a removed key's tokens are refused at once).
#[no_mangle]
pub extern "C" fn ksasl_mechanism_registry_add_msk_oauthbearer_server(
    r: *mut ksasl_mechanism_registry,
    keys: *const ksasl_aws_key_store,
    region: *const c_char,
) -> ksasl_result {
    with(r, |r| {
        r.inner.register_msk_oauthbearer_server(
            arg(keys, "keys")?.inner.clone(),
            text(region, "region")?,
        );
        Ok(())
    })
}

/// Installs AWS credentials (which must carry their expiry) in a refresher, as
/// `ksasl_refresher_set_token` installs a token; `*generation` (may be NULL) gets the new
/// generation.
#[no_mangle]
pub extern "C" fn ksasl_refresher_set_aws_credentials(
    refresher: *mut ksasl_refresher,
    credentials: *const ksasl_aws_credentials,
    principal: *const c_char,
    now_ms: i64,
    generation: *mut u64,
) -> ksasl_result {
    with(refresher, |r| {
        let g = r.inner.set_aws_credentials(
            arg(credentials, "credentials")?.inner.clone(),
            text(principal, "principal")?,
            now_ms,
        )?;
        put_opt(generation, g);
        Ok(())
    })
}

/// MSK's presigned OAUTHBEARER token for `region` at `now_ms`, signed with `credentials` or
/// `refresher`'s current ones (exactly one), for a host with its own OAUTHBEARER client
/// (librdkafka's token refresh callback: `ksasl_oauth_token_value`, `_expiry_ms`, the access
/// key id as `_principal`). It expires 15 minutes after `now_ms`, or with the credentials
/// if they expire sooner. `user_agent` NULL: ksasl's.
#[no_mangle]
pub extern "C" fn ksasl_msk_token_new(
    region: *const c_char,
    credentials: *const ksasl_aws_credentials,
    refresher: *const ksasl_refresher,
    user_agent: *const c_char,
    now_ms: i64,
    out: *mut *mut ksasl_oauth_token,
) -> ksasl_result {
    construct(out, || {
        let tokens = MskTokenSource::new(
            text(region, "region")?,
            opt_text(user_agent, "user_agent")?,
            source(credentials, refresher)?,
        );
        let inner = tokens.token_at(now_ms)?;
        Ok(ksasl_oauth_token {
            value: cstring(inner.value()),
            inner,
        })
    })
}
