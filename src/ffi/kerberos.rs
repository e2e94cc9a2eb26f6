//! `ksasl_kerberos_login`: a GSSAPI client's renewing Kerberos login (its functions are in
//! `accessors.in`).

use std::sync::Arc;

use super::boundary::*;
use crate::io::gss::KerberosLogin;

/// A Kerberos login (ticket-granting ticket from a keytab, or read from a credential cache)
/// that registries' GSSAPI clients use and `ksasl_kerberos_login_poll` renews. Thread-safe.
pub struct ksasl_kerberos_login {
    pub(crate) inner: Arc<KerberosLogin>,
    err: LastError,
}
handle!(ksasl_kerberos_login(Arc<KerberosLogin>));
