//! `ksasl_client_connection`: a Kafka client connection's SASL state (the client driver).

use super::boundary::*;
use crate::error::{Error, ErrorCode, Result};
use crate::kafka::client::{ClientConnection, ClientEvent};

/// What a received frame meant (`KSASL_CLIENT_EVENT_*`).
pub type ksasl_client_event = u32;

/// A client connection's SASL state.
pub struct ksasl_client_connection {
    pub(crate) inner: ClientConnection,
    pub(crate) out: Vec<u8>,
    err: LastError,
}
handle!(ksasl_client_connection(ClientConnection, out));

/// Runs `f` and reports its event; an application response is `frame` itself (not copied).
pub(crate) fn event(
    c: *mut ksasl_client_connection,
    frame: (*const u8, usize),
    (event, app_frame, app_len): (*mut ksasl_client_event, *mut *const u8, *mut usize),
    f: impl FnOnce(&mut ClientConnection) -> Result<ClientEvent>,
) -> ksasl_result {
    with(c, |c| {
        need!(event);
        let ev = f(&mut c.inner)?;
        match &ev {
            ClientEvent::Application => {
                need!(app_frame, app_len);
                put(app_frame, frame.0);
                put(app_len, frame.1);
            }
            ClientEvent::ReauthenticationFailed { error, .. } => c.err.set(error),
            ClientEvent::Failed(e) => return Err(e.clone()),
            _ => {}
        }
        Ok(put(event, ev.kind().as_u32()))
    })
}

pub(crate) fn not_authenticated() -> Error {
    Error::new(ErrorCode::WrongState, "not authenticated")
}
