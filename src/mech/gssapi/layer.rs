//! RFC 4752 §3.1's security-layer messages, the last step of a GSSAPI exchange.
//!
//! Once the context is established the server sends a wrapped 4-byte offer: a bit mask of the
//! layers it supports (1 = none, 2 = integrity, 4 = confidentiality) and its largest
//! receivable buffer (24 bits, big-endian). The client answers with a wrapped 4-byte choice
//! (one layer, and its own buffer size, which must be 0 when it chose no layer) followed by
//! the authorization id. Kafka never uses a layer (its JDK `SaslServer` offers only "none",
//! with a 65,536-byte buffer), so that is all ksasl offers or accepts.

use crate::error::{Error, ErrorCode, Result};

/// The "no security layer" bit.
pub const LAYER_NONE: u8 = 1;
/// The buffer size the JDK's GSSAPI server announces (its default `javax.security.sasl.maxbuffer`).
pub const JDK_MAX_BUFFER: u32 = 65_536;

/// The server's offer: "no security layer", and `max_buffer`.
pub fn server_offer(max_buffer: u32) -> [u8; 4] {
    let b = max_buffer.min(0x00ff_ffff).to_be_bytes();
    [LAYER_NONE, b[1], b[2], b[3]]
}

/// Reads the server's offer; refuses one that does not include "no security layer".
pub fn read_server_offer(offer: &[u8]) -> Result<u32> {
    if offer.len() != 4 {
        return Err(Error::new(
            ErrorCode::MalformedMessage,
            format!(
                "the GSSAPI server's security-layer offer has {} bytes instead of 4",
                offer.len()
            ),
        ));
    }
    if offer[0] & LAYER_NONE == 0 {
        return Err(Error::new(
            ErrorCode::SecurityLayerRefused,
            format!(
                "No common protection layer between client and server: the server offers layers {:#04x}, ksasl (like Kafka) uses none",
                offer[0]
            ),
        ));
    }
    Ok(u32::from_be_bytes([0, offer[1], offer[2], offer[3]]))
}

/// The client's answer: "no security layer", buffer size 0 (RFC 4752 requires 0 when no
/// layer is chosen), then the authorization id.
pub fn client_choice(authorization_id: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(4 + authorization_id.len());
    m.extend_from_slice(&[LAYER_NONE, 0, 0, 0]);
    m.extend_from_slice(authorization_id.as_bytes());
    m
}

/// Reads the client's answer: the layer must be exactly "none"; returns the authorization id
/// it carries (empty when it sent none).
pub fn read_client_choice(choice: &[u8]) -> Result<String> {
    if choice.len() < 4 {
        return Err(Error::new(
            ErrorCode::MalformedMessage,
            format!(
                "the GSSAPI client's security-layer choice has {} bytes, fewer than 4",
                choice.len()
            ),
        ));
    }
    if choice[0] != LAYER_NONE {
        return Err(Error::new(
            ErrorCode::SecurityLayerRefused,
            format!(
                "Client selected unsupported protection: {} (only 1, no security layer, is offered)",
                choice[0]
            ),
        ));
    }
    String::from_utf8(choice[4..].to_vec()).map_err(|_| {
        Error::new(
            ErrorCode::InvalidEncoding,
            "the GSSAPI client's authorization id is not UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offer_is_the_jdk_servers() {
        assert_eq!(server_offer(JDK_MAX_BUFFER), [1, 1, 0, 0]);
        assert_eq!(read_server_offer(&[1, 1, 0, 0]).unwrap(), 65_536);
        assert_eq!(read_server_offer(&[7, 0, 0x10, 0]).unwrap(), 4096);
        assert_eq!(server_offer(u32::MAX), [1, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn offers_without_the_null_layer_or_of_the_wrong_size_are_refused() {
        let e = read_server_offer(&[6, 1, 0, 0]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SecurityLayerRefused);
        for bad in [&[][..], &[1, 1, 0][..], &[1, 1, 0, 0, 0][..]] {
            assert_eq!(
                read_server_offer(bad).unwrap_err().code(),
                ErrorCode::MalformedMessage
            );
        }
    }

    #[test]
    fn choice_round_trips_and_refuses_layers() {
        let m = client_choice("alice@EXAMPLE.COM");
        assert_eq!(&m[..4], &[1, 0, 0, 0]);
        assert_eq!(read_client_choice(&m).unwrap(), "alice@EXAMPLE.COM");
        assert_eq!(read_client_choice(&[1, 0, 0, 0]).unwrap(), "");
        for layer in [0u8, 2, 3, 4, 7] {
            let e = read_client_choice(&[layer, 0, 0, 0]).unwrap_err();
            assert_eq!(e.code(), ErrorCode::SecurityLayerRefused, "layer {layer}");
        }
        assert_eq!(
            read_client_choice(&[1, 0, 0]).unwrap_err().code(),
            ErrorCode::MalformedMessage
        );
        assert_eq!(
            read_client_choice(&[1, 0, 0, 0, 0xff]).unwrap_err().code(),
            ErrorCode::InvalidEncoding
        );
    }
}
