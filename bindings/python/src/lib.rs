//! The Python binding (`ksasl._ksasl`): one module per object, each a translation of the core.

use pyo3::prelude::*;

mod aws;
mod client_connection;
mod client_setup;
mod config;
mod dicts;
mod exchange;
mod glue;
mod hostmech;
mod kerberos;
mod listener;
mod msk;
mod oauth;
mod oidc;
mod refresh;
mod registry;
mod server_connection;
mod store;
mod tokens;

/// The native module behind `import ksasl`.
#[pymodule]
fn _ksasl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use {
        aws::*, client_setup::*, refresh::*, registry::*, server_connection::*, store::*, tokens::*,
    };
    use {
        client_connection::*, config::*, exchange::*, kerberos::*, listener::*, msk::*, oauth::*,
        oidc::*,
    };
    m.add("__version__", ksasl::VERSION)?;
    m.add(
        "SCRAM_CREDENTIAL_API_VERSIONS",
        store::scram_credential_api_versions(),
    )?;
    macro_rules! add {
        ($($class:ident),*; $($function:ident),*) => {
            $(m.add_class::<$class>()?;)*
            $(m.add_function(wrap_pyfunction!($function, m)?)?;)*
        };
    }
    add!(CredentialStore, MechanismRegistry, ClientSetup, ClientExchange, ServerExchange, ClientConfig,
        ServerConfig, ClientConnection, ServerConnection, JwksValidator, Refresher,
        BackgroundRefresher, Tracker, TokenAuthority, KerberosLogin, OidcLogin, OidcRefresh,
        JwksEndpoint, ConfigReport, ServerSetup, AwsCredentials, AwsKeyStore;
        unsecured_oauth_token, sleep_ms, gssapi_available, create_token_request, renew_or_expire_token_request,
        describe_tokens_request, parse_create_token_response, parse_token_expiry_response,
        parse_describe_tokens_response, check_config, sasl_listeners, choose_listener, listener_address,
        msk_token);
    Ok(())
}
