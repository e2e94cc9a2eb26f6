//! JNI glue of the Java binding (`org.ksasl`). It only translates: handles, strings, arrays,
//! exceptions and callbacks. Every rule lives in the ksasl crate. The plumbing shared by every
//! entry point is in [`glue`]; each other module holds the entry points of one area.

mod aws;
mod config;
mod conn;
mod glue;
mod hostmech;
mod kerberos;
mod oauth;
mod objects;
mod oidc;
mod tokens;
