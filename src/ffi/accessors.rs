//! The C ABI's boilerplate as tables (`accessors.in`): every handle's free and last-error
//! functions, and the functions that are one expression (getters, builder setters). build.rs
//! reads the same tables to declare them in `include/ksasl.h` (cbindgen does not expand
//! macros).

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use super::aws::*;
use super::boundary::*;
use super::client_config::*;
use super::client_connection::*;
use super::client_exchange::*;
use super::client_setup::*;
use super::config::*;
use super::credential_callback::*;
use super::credential_store::*;
use super::delegation_token::*;
use super::delegation_token_codec::*;
use super::host_output::{self, *};
use super::jwks_validator::*;
use super::kerberos::*;
use super::mechanism_registry::*;
use super::oauth_token::*;
use super::oidc::*;
use super::refresher::*;
use super::server_config::*;
use super::server_connection::*;
use super::server_exchange::*;
use super::server_setup::*;
use super::token_authority::*;
use super::tracker::*;
use super::{client_connection, client_exchange, server_connection, server_exchange};
use crate::credential::PasswordCredential;
use crate::error::{Error, ErrorCode};
use crate::io::gss;
use crate::kafka::client::ClientConnection;
use crate::kafka::config::{ClientConfig, ServerConfig};
use crate::kafka::server::ServerConnection;
use crate::mech::{nothing_requested, HostOutput};
use crate::random::OsRandom;
use crate::refresh::Refresher;
use crate::token::{change_token_request, create_token_request, describe_tokens_request};
use crate::token::{expiry_from_response, token_from_create_frame, tokens_from_describe_response};
use crate::token::{DelegationToken, TokenAuthority, TokenConfig};
use crate::wire::{Gate, ReauthTiming};

/// `ksasl_<t>_free` for each handle, and `ksasl_<t>_last_error` for those that keep one.
macro_rules! handles {
    ($($t:ident $what:literal $($err:ident)?;)*) => {$(
        const _: () = {
            #[export_name = concat!(stringify!($t), "_free")]
            extern "C" fn free_handle(p: *mut $t) {
                free(p)
            }
            $(
                #[export_name = concat!(stringify!($t), "_", stringify!($err))]
                extern "C" fn handle_last_error(p: *const $t) -> *const c_char {
                    last_error(p)
                }
            )?
        };
    )*};
}

/// Exported functions written on one line each.
macro_rules! exports {
    ($( $(#[doc = $doc:literal])* fn $name:ident($($p:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block )*) => {$(
        $(#[doc = $doc])*
        #[no_mangle]
        pub extern "C" fn $name($($p: $ty),*) $(-> $ret)? $body
    )*};
}

include!("accessors.in");
