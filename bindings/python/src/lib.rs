//! The Python binding (`ksasl._ksasl`): one module per Python object, each translating a core
//! type; the shared glue (errors, locks, the clock) is in `glue`. Every rule is the core's.

use pyo3::prelude::*;

mod client_connection;
mod config;
mod dicts;
mod exchange;
mod glue;
mod hostmech;
mod oauth;
mod refresh;
mod registry;
mod server_connection;
mod store;
mod tokens;

/// The native module behind `import ksasl`.
#[pymodule]
fn _ksasl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", ksasl::VERSION)?;
    m.add_class::<store::CredentialStore>()?;
    m.add_class::<registry::MechanismRegistry>()?;
    m.add_class::<exchange::ClientExchange>()?;
    m.add_class::<exchange::ServerExchange>()?;
    m.add_class::<config::ClientConfig>()?;
    m.add_class::<config::ServerConfig>()?;
    m.add_class::<client_connection::ClientConnection>()?;
    m.add_class::<server_connection::ServerConnection>()?;
    m.add_class::<oauth::JwksValidator>()?;
    m.add_class::<refresh::Refresher>()?;
    m.add_class::<refresh::BackgroundRefresher>()?;
    m.add_class::<refresh::Tracker>()?;
    m.add_class::<tokens::TokenAuthority>()?;
    m.add_function(wrap_pyfunction!(oauth::unsecured_oauth_token, m)?)?;
    m.add_function(wrap_pyfunction!(refresh::sleep_ms, m)?)?;
    m.add_function(wrap_pyfunction!(tokens::create_token_request, m)?)?;
    m.add_function(wrap_pyfunction!(tokens::renew_or_expire_token_request, m)?)?;
    m.add_function(wrap_pyfunction!(tokens::describe_tokens_request, m)?)?;
    m.add_function(wrap_pyfunction!(tokens::parse_create_token_response, m)?)?;
    m.add_function(wrap_pyfunction!(tokens::parse_token_expiry_response, m)?)?;
    m.add_function(wrap_pyfunction!(tokens::parse_describe_tokens_response, m)?)
}
