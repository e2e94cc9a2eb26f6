//! The parts of ksasl that do I/O on the host's behalf, outside the sans-IO core: each is
//! optional, and the core's mechanisms reach them only through traits.

pub mod gss;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
pub mod listener;
