//! GSSAPI (Kerberos).

pub mod short_namer;
