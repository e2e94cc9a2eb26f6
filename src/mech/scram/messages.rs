//! Parsing and printing of the four SCRAM messages, with Kafka's grammar (RFC 5802 §7).
//!
//! Character classes used below: a *value* is ASCII 0x01-0x7F without `,`; a *printable*
//! (nonce) is ASCII 0x21-0x7E without `,`; an extension name is one or more ASCII letters.
//! Because no attribute value may hold a `,`, splitting on `,` is exact.

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::error::{Error, ErrorCode, Result};

/// Escapes a username for the `n=` attribute: `=` becomes `=3D`, then `,` becomes `=2C`.
pub fn escape_username(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// Reverses [`escape_username`]; any `=` not starting `=2C` or `=3D` is an error.
pub fn unescape_username(escaped: &str) -> Option<String> {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3)?;
        match code {
            "2C" => out.push(','),
            "3D" => out.push('='),
            _ => return None,
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// A SCRAM message with proofs, signatures and salts replaced by `<redacted>`.
pub(crate) fn redact(message: &[u8]) -> String {
    let text = crate::mech::mechanism::printable(message);
    text.split(',')
        .map(|attr| match attr.get(..2) {
            Some("p=") | Some("v=") | Some("s=") => format!("{}<redacted>", &attr[..2]),
            _ => attr.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The client-first message, as the server sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientFirst {
    /// The GS2 header, e.g. `n,,` (what `c=` must repeat).
    pub gs2_header: String,
    /// The unescaped authorization id (`a=`), if any.
    pub authzid: Option<String>,
    /// The unescaped username.
    pub username: String,
    pub nonce: String,
    pub extensions: Vec<(String, String)>,
    /// `client-first-message-bare`, verbatim (part of AuthMessage).
    pub bare: String,
}

/// The server-first message, as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerFirst {
    pub nonce: String,
    pub salt: Vec<u8>,
    /// Iterations; saturates at `u32::MAX` for absurd values so callers can reject them.
    pub iterations: u32,
}

/// The client-final message, as the server sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientFinal {
    pub channel_binding: Vec<u8>,
    pub nonce: String,
    pub proof: Vec<u8>,
    /// `client-final-message-without-proof`, verbatim.
    pub without_proof: String,
}

/// The server-final message, as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServerFinal {
    Verifier(Vec<u8>),
    Error(String),
}

fn ascii_text<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        Error::new(
            ErrorCode::InvalidEncoding,
            format!("{what} is not valid UTF-8"),
        )
    })?;
    if !text.is_ascii() {
        return Err(Error::new(
            ErrorCode::InvalidEncoding,
            format!("{what} holds non-ASCII characters"),
        ));
    }
    Ok(text)
}

fn is_value(s: &str) -> bool {
    s.bytes().all(|b| (0x01..=0x7f).contains(&b) && b != b',')
}

fn nonce(attr: Option<&str>, what: &str) -> Result<String> {
    let value = attr
        .and_then(|a| a.strip_prefix("r="))
        .ok_or_else(|| Error::malformed(format!("{what}: expected the nonce attribute r= here")))?;
    if value.is_empty()
        || !value
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
    {
        return Err(Error::new(
            ErrorCode::InvalidNonce,
            format!("{what}: the nonce is empty or not printable ASCII"),
        ));
    }
    Ok(value.to_string())
}

fn base64_attr(attr: Option<&str>, prefix: &str, what: &str) -> Result<Vec<u8>> {
    let value = attr
        .and_then(|a| a.strip_prefix(prefix))
        .ok_or_else(|| Error::malformed(format!("{what}: expected the attribute {prefix} here")))?;
    let decoded = STANDARD.decode(value).map_err(|_| {
        Error::new(
            ErrorCode::InvalidBase64,
            format!("{what}: attribute {prefix} is not valid base64"),
        )
    })?;
    Ok(decoded)
}

fn extension(attr: &str, what: &str) -> Result<(String, String)> {
    let (name, value) = attr.split_once('=').ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidExtension,
            format!("{what}: extension without '='"),
        )
    })?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(Error::new(
            ErrorCode::InvalidExtension,
            format!("{what}: invalid extension name"),
        ));
    }
    if !is_value(value) {
        return Err(Error::new(
            ErrorCode::InvalidExtension,
            format!(
                "{what}: invalid value for extension {}",
                crate::error::quote(name.as_bytes())
            ),
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

fn saslname(value: &str, what: &str) -> Result<String> {
    let bad = || {
        Error::new(
            ErrorCode::InvalidUsername,
            format!("{what}: invalid username"),
        )
    };
    if value.is_empty()
        || !value
            .bytes()
            .all(|b| (0x01..=0x7f).contains(&b) && b != b',')
    {
        return Err(bad());
    }
    unescape_username(value).ok_or_else(bad)
}

/// Accepts only the gs2 flag `n`; channel binding (`y`, `p=`) is refused, the rest is malformed.
fn gs2_flag(flag: &str) -> Result<()> {
    match flag {
        "n" => Ok(()),
        "y" => Err(Error::new(
            ErrorCode::UnsupportedChannelBinding,
            "channel binding (gs2 flag y) is not supported",
        )),
        p if p.starts_with("p=") => Err(Error::new(
            ErrorCode::UnsupportedChannelBinding,
            "channel binding (gs2 flag p=) is not supported",
        )),
        _ => Err(Error::malformed(
            "client-first message must start with the gs2 flag n",
        )),
    }
}

/// The optional `a=` authorization id of the gs2 header, unescaped.
fn gs2_authzid(field: &str) -> Result<Option<String>> {
    if field.is_empty() {
        return Ok(None);
    }
    match field.strip_prefix("a=") {
        Some(name) => Ok(Some(saslname(name, "authorization id")?)),
        None => Err(Error::malformed(
            "client-first message: bad gs2 authorization id",
        )),
    }
}

/// Refuses the reserved `m=` attribute (RFC 5802, 5.1: "its presence ... MUST cause
/// authentication failure").
fn reserved(attribute: &str, what: &str) -> Result<()> {
    match attribute.starts_with("m=") {
        true => Err(Error::new(
            ErrorCode::ScramReservedAttribute,
            format!("{what}: the reserved attribute m= is not allowed (RFC 5802)"),
        )),
        false => Ok(()),
    }
}

impl ClientFirst {
    pub(crate) fn parse(bytes: &[u8]) -> Result<ClientFirst> {
        const WHAT: &str = "client-first message";
        if bytes.is_empty() {
            return Err(Error::malformed("empty client-first message"));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| {
            Error::new(
                ErrorCode::InvalidEncoding,
                "client-first message is not valid UTF-8",
            )
        })?;
        let parts: Vec<&str> = text.split(',').collect();
        gs2_flag(parts[0])?;
        if parts.len() < 4 {
            return Err(Error::malformed("truncated client-first message"));
        }
        let authzid = gs2_authzid(parts[1])?;
        // Kafka ignores a reserved m= attribute here; RFC 5802 (5.1) says it must fail.
        reserved(parts[2], WHAT)?;
        let user = parts
            .get(2)
            .and_then(|p| p.strip_prefix("n="))
            .ok_or_else(|| {
                Error::malformed("client-first message: expected the username attribute n= here")
            })?;
        // Non-ASCII in the username is a username problem, not an encoding one.
        let username = saslname(user, WHAT)?;
        let nonce = nonce(parts.get(3).copied(), WHAT)?;
        let extensions = parts[4..]
            .iter()
            .map(|p| extension(p, WHAT))
            .collect::<Result<Vec<_>>>()?;
        let gs2_len = parts[0].len() + parts[1].len() + 2;
        Ok(ClientFirst {
            gs2_header: text[..gs2_len].to_string(),
            authzid,
            username,
            nonce,
            extensions,
            bare: text[gs2_len..].to_string(),
        })
    }

    /// Whether the client asked for delegation-token authentication (Kafka: the value
    /// parses as the boolean true, case-insensitively).
    pub(crate) fn token_authenticated(&self) -> bool {
        self.extensions
            .iter()
            .any(|(k, v)| k == "tokenauth" && v.eq_ignore_ascii_case("true"))
    }
}

impl ServerFirst {
    pub(crate) fn parse(bytes: &[u8]) -> Result<ServerFirst> {
        const WHAT: &str = "server-first message";
        if bytes.is_empty() {
            return Err(Error::malformed("empty server-first message"));
        }
        let text = ascii_text(bytes, WHAT)?;
        let parts: Vec<&str> = text.split(',').collect();
        if let Some(e) = parts[0].strip_prefix("e=") {
            return Err(server_error(e));
        }
        reserved(parts[0], WHAT)?;
        if parts.len() < 3 {
            return Err(Error::malformed("truncated server-first message"));
        }
        let nonce = nonce(Some(parts[0]), WHAT)?;
        let salt = base64_attr(Some(parts[1]), "s=", WHAT)?;
        if salt.is_empty() {
            return Err(Error::malformed("server-first message: empty salt"));
        }
        let digits = parts[2].strip_prefix("i=").ok_or_else(|| {
            Error::malformed("server-first message: expected the iteration count i= here")
        })?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::malformed(
                "server-first message: the iteration count is not a number",
            ));
        }
        let iterations = digits.trim_start_matches('0').parse::<u32>().unwrap_or(
            if digits.bytes().all(|b| b == b'0') {
                0
            } else {
                u32::MAX
            },
        );
        for p in &parts[3..] {
            extension(p, WHAT)?;
        }
        Ok(ServerFirst {
            nonce,
            salt,
            iterations,
        })
    }

    /// `r=<nonce>,s=<salt in base64>,i=<iterations>`, written into one allocation.
    pub(crate) fn format(nonce: [&str; 2], salt: &[u8], iterations: u32) -> String {
        let nonce_len = nonce[0].len() + nonce[1].len();
        let mut s = String::with_capacity(nonce_len + salt.len().div_ceil(3) * 4 + 20);
        s.push_str("r=");
        s.push_str(nonce[0]);
        s.push_str(nonce[1]);
        s.push_str(",s=");
        STANDARD.encode_string(salt, &mut s);
        let _ = write!(s, ",i={iterations}"); // writing into a String cannot fail
        s
    }
}

impl ClientFinal {
    pub(crate) fn parse(bytes: &[u8]) -> Result<ClientFinal> {
        const WHAT: &str = "client-final message";
        if bytes.is_empty() {
            return Err(Error::malformed("empty client-final message"));
        }
        let text = ascii_text(bytes, WHAT)?;
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() < 3 {
            return Err(Error::malformed("truncated client-final message"));
        }
        let channel_binding = base64_attr(Some(parts[0]), "c=", WHAT)?;
        let nonce = nonce(Some(parts[1]), WHAT)?;
        let last = parts.len() - 1;
        for p in &parts[2..last] {
            extension(p, WHAT)?;
        }
        let proof = base64_attr(Some(parts[last]), "p=", WHAT)?;
        let without_proof = text[..text.len() - parts[last].len() - 1].to_string();
        Ok(ClientFinal {
            channel_binding,
            nonce,
            proof,
            without_proof,
        })
    }

    pub(crate) fn without_proof(channel_binding_header: &str, nonce: &str) -> String {
        format!("c={},r={nonce}", STANDARD.encode(channel_binding_header))
    }
}

impl ServerFinal {
    pub(crate) fn parse(bytes: &[u8]) -> Result<ServerFinal> {
        const WHAT: &str = "server-final message";
        if bytes.is_empty() {
            return Err(Error::malformed("empty server-final message"));
        }
        let text = ascii_text(bytes, WHAT)?;
        let parts: Vec<&str> = text.split(',').collect();
        if let Some(e) = parts[0].strip_prefix("e=") {
            if parts.len() != 1 || e.contains('=') {
                return Err(Error::malformed(
                    "server-final message: malformed server error",
                ));
            }
            return Ok(ServerFinal::Error(e.to_string()));
        }
        let verifier = base64_attr(Some(parts[0]), "v=", WHAT)?;
        for p in &parts[1..] {
            extension(p, WHAT)?;
        }
        Ok(ServerFinal::Verifier(verifier))
    }

    /// `v=<verifier in base64>`, written into one allocation.
    pub(crate) fn format(verifier: &[u8]) -> String {
        let mut s = String::with_capacity(2 + verifier.len().div_ceil(3) * 4);
        s.push_str("v=");
        STANDARD.encode_string(verifier, &mut s);
        s
    }
}

fn server_error(e: &str) -> Error {
    Error::new(
        ErrorCode::ServerReportedError,
        format!(
            "the server reported a SCRAM error: {}",
            crate::mech::mechanism::quote(e.as_bytes())
        ),
    )
}

pub(crate) fn server_final_error(mechanism: &str, e: &str) -> Error {
    Error::new(
        ErrorCode::ServerReportedError,
        format!(
            "Sasl authentication using {mechanism} failed with error: {}",
            crate::mech::mechanism::quote(e.as_bytes())
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_first_with_authzid_and_extension() {
        let m = ClientFirst::parse(b"n,a=us=3Der,n=us=3Der,r=abc=\\;,tokenauth=TRUE").unwrap();
        assert_eq!(m.gs2_header, "n,a=us=3Der,");
        assert_eq!(m.authzid.as_deref(), Some("us=er"));
        assert_eq!(m.username, "us=er");
        assert_eq!(m.nonce, "abc=\\;");
        assert!(m.token_authenticated());
        assert_eq!(m.bare, "n=us=3Der,r=abc=\\;,tokenauth=TRUE");
    }

    /// Issue 17, defect 3: the reserved m= attribute fails both first messages.
    #[test]
    fn reserved_m_attribute_is_refused() {
        for e in [
            ClientFirst::parse(b"n,,m=ext,n=alice,r=abc").err().unwrap(),
            ClientFirst::parse(b"n,a=x,m=,n=x,r=abc").err().unwrap(),
            ServerFirst::parse(b"m=x,r=abcdef,s=QQ==,i=4096")
                .err()
                .unwrap(),
        ] {
            assert_eq!(e.code(), ErrorCode::ScramReservedAttribute, "{e}");
        }
    }

    #[test]
    fn server_first_iterations() {
        let s = ServerFirst::parse(b"r=ab,s=QQ==,i=4096,x=y").unwrap();
        assert_eq!(
            (s.nonce.as_str(), s.salt.as_slice(), s.iterations),
            ("ab", &b"A"[..], 4096)
        );
        assert_eq!(
            ServerFirst::parse(b"r=ab,s=QQ==,i=99999999999999999999")
                .unwrap()
                .iterations,
            u32::MAX
        );
        assert_eq!(
            ServerFirst::parse(b"r=ab,s=QQ==,i=0000")
                .unwrap()
                .iterations,
            0
        );
        assert_eq!(
            ServerFirst::parse(b"r=ab,s=QQ==,i=00010")
                .unwrap()
                .iterations,
            10
        );
    }

    #[test]
    fn client_final_without_proof_is_verbatim() {
        let m = ClientFinal::parse(b"c=biws,r=abc,x=1,p=QQ==").unwrap();
        assert_eq!(m.without_proof, "c=biws,r=abc,x=1");
        assert_eq!(m.channel_binding, b"n,,");
        assert_eq!(m.proof, b"A");
    }
}

#[cfg(test)]
mod escaping_tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        assert_eq!(escape_username("a=b,c"), "a=3Db=2Cc");
        assert_eq!(unescape_username("a=3Db=2Cc").as_deref(), Some("a=b,c"));
        assert_eq!(unescape_username("=3D2C").as_deref(), Some("=2C"));
        assert_eq!(unescape_username("a=b"), None);
        assert_eq!(unescape_username("a="), None);
        assert_eq!(unescape_username("a=2"), None);
        assert_eq!(unescape_username("plain").as_deref(), Some("plain"));
    }

    #[test]
    fn redaction_hides_proofs() {
        let r = redact(b"c=biws,r=abc,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
        assert_eq!(r, "c=biws,r=abc,p=<redacted>");
        assert_eq!(
            redact(b"r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
            "r=abc,s=<redacted>,i=4096"
        );
    }
}
