//! Bounded big-endian reading and writing of Kafka's primitive types.

use crate::error::{Error, ErrorCode, Result};

/// The error for malformed input (`INVALID_REQUEST`).
pub fn invalid(what: &str) -> Error {
    Error::new(
        ErrorCode::InvalidRequest,
        format!("malformed Kafka message: {what}"),
    )
}

/// A cursor over a received message. Every length it reads is checked against what is left.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(invalid(&format!("truncated {what}")));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// int8.
    pub fn i8(&mut self) -> Result<i8> {
        Ok(self.take(1, "int8")?[0] as i8)
    }

    /// int16.
    pub fn i16(&mut self) -> Result<i16> {
        let b = self.take(2, "int16")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    /// int32.
    pub fn i32(&mut self) -> Result<i32> {
        let b = self.take(4, "int32")?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// int64.
    pub fn i64(&mut self) -> Result<i64> {
        let b = self.take(8, "int64")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// Unsigned varint (at most 5 bytes, 32 bits).
    pub fn uvarint(&mut self) -> Result<u32> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = self.take(1, "varint")?[0];
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if i == 4 && b > 0x0f {
                    return Err(invalid("varint overflows 32 bits"));
                }
                return Ok(v);
            }
        }
        Err(invalid("varint longer than 5 bytes"))
    }

    fn utf8(&mut self, n: usize) -> Result<String> {
        let b = self.take(n, "string")?;
        String::from_utf8(b.to_vec()).map_err(|_| invalid("string is not UTF-8"))
    }

    /// STRING / NULLABLE_STRING (int16 length, -1 = null).
    pub fn nullable_string(&mut self) -> Result<Option<String>> {
        match self.i16()? {
            -1 => Ok(None),
            n if n < 0 => Err(invalid("negative string length")),
            n => self.utf8(n as usize).map(Some),
        }
    }

    /// STRING (non-null).
    pub fn string(&mut self) -> Result<String> {
        self.nullable_string()?
            .ok_or_else(|| invalid("null string"))
    }

    /// COMPACT_NULLABLE_STRING (uvarint length+1, 0 = null).
    pub fn compact_nullable_string(&mut self) -> Result<Option<String>> {
        match self.uvarint()? {
            0 => Ok(None),
            n => self.utf8(n as usize - 1).map(Some),
        }
    }

    /// COMPACT_STRING (non-null).
    pub fn compact_string(&mut self) -> Result<String> {
        self.compact_nullable_string()?
            .ok_or_else(|| invalid("null compact string"))
    }

    /// BYTES (int32 length; -1, null, is read as empty).
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        match self.i32()? {
            -1 => Ok(&[]),
            n if n < 0 => Err(invalid("negative bytes length")),
            n => self.take(n as usize, "bytes"),
        }
    }

    /// COMPACT_BYTES (uvarint length+1; 0, null, is read as empty).
    pub fn compact_bytes(&mut self) -> Result<&'a [u8]> {
        match self.uvarint()? {
            0 => Ok(&[]),
            n => self.take(n as usize - 1, "compact bytes"),
        }
    }

    /// ARRAY length (int32; -1 = null, read as 0).
    pub fn array_len(&mut self) -> Result<usize> {
        match self.i32()? {
            -1 => Ok(0),
            n if n < 0 => Err(invalid("negative array length")),
            n if n as usize > self.remaining() => Err(invalid("array longer than the message")),
            n => Ok(n as usize),
        }
    }

    /// COMPACT_ARRAY length.
    pub fn compact_array_len(&mut self) -> Result<usize> {
        match self.uvarint()? {
            0 => Ok(0),
            n if (n - 1) as usize > self.remaining() => {
                Err(invalid("array longer than the message"))
            }
            n => Ok(n as usize - 1),
        }
    }

    /// Skips a tagged-field section, returning the (tag, data) pairs.
    pub fn tagged_fields(&mut self) -> Result<Vec<(u32, &'a [u8])>> {
        let n = self.uvarint()?;
        if n as usize > self.remaining() {
            return Err(invalid("more tagged fields than bytes"));
        }
        let mut fields = Vec::new();
        for _ in 0..n {
            let tag = self.uvarint()?;
            let len = self.uvarint()? as usize;
            fields.push((tag, self.take(len, "tagged field")?));
        }
        Ok(fields)
    }

    /// Fails if anything is left (Kafka rejects garbage after a body).
    pub fn finish(&self, what: &str) -> Result<()> {
        if self.remaining() != 0 {
            return Err(invalid(&format!(
                "{} unexpected bytes after the {what}",
                self.remaining()
            )));
        }
        Ok(())
    }
}

/// A growing message buffer.
#[derive(Default)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Writer {
    /// A writer whose first four bytes are reserved for the frame length.
    pub fn framed() -> Self {
        Writer { buf: vec![0; 4] }
    }

    /// Fills in the frame length and returns the frame.
    pub fn finish_frame(mut self) -> Vec<u8> {
        let n = (self.buf.len() - 4) as i32;
        self.buf[..4].copy_from_slice(&n.to_be_bytes());
        self.buf
    }

    /// int8.
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    /// int16.
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// int32.
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// int64.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Unsigned varint.
    pub fn uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// NULLABLE_STRING.
    pub fn nullable_string(&mut self, s: Option<&str>) {
        match s {
            None => self.i16(-1),
            Some(s) => {
                self.i16(s.len() as i16);
                self.buf.extend_from_slice(s.as_bytes());
            }
        }
    }

    /// STRING.
    pub fn string(&mut self, s: &str) {
        self.nullable_string(Some(s))
    }

    /// COMPACT_NULLABLE_STRING.
    pub fn compact_nullable_string(&mut self, s: Option<&str>) {
        match s {
            None => self.uvarint(0),
            Some(s) => {
                self.uvarint(s.len() as u32 + 1);
                self.buf.extend_from_slice(s.as_bytes());
            }
        }
    }

    /// BYTES.
    pub fn bytes(&mut self, b: &[u8]) {
        self.i32(b.len() as i32);
        self.buf.extend_from_slice(b);
    }

    /// COMPACT_BYTES.
    pub fn compact_bytes(&mut self, b: &[u8]) {
        self.uvarint(b.len() as u32 + 1);
        self.buf.extend_from_slice(b);
    }

    /// An empty tagged-field section.
    pub fn no_tagged_fields(&mut self) {
        self.buf.push(0);
    }
}

// ---------------------------------------------------------------------------------------
// The schema layer: messages that know their versions, read and written by a decoder and an
// encoder that pick the classic or compact encodings of the version.

/// Whether `version` of `api_key` is a flexible (tagged-field) version, for the APIs ksasl
/// knows: Metadata from v9, ApiVersions from v3, SaslAuthenticate from v2, the
/// delegation-token APIs (38-41) from v2, the SCRAM credential APIs (50, 51) in every
/// version; every other API is read with classic headers.
pub fn is_flexible(api_key: i16, version: i16) -> bool {
    match api_key {
        3 => version >= 9,
        18 => version >= 3,
        36 => version >= 2,
        38..=41 => version >= 2,
        50 | 51 => version >= 0,
        _ => false,
    }
}

/// Whether the response header of `version` of `api_key` is v1 (with tagged fields): for
/// flexible versions, except ApiVersions, whose responses always use header v0 (KIP-511).
pub fn response_header_flexible(api_key: i16, version: i16) -> bool {
    api_key != 18 && is_flexible(api_key, version)
}

/// A Kafka message with a schema: its name (for messages), API key, highest version, and
/// how its body is written and read in each version.
pub trait Message: Sized {
    /// The message's name, for errors.
    const NAME: &'static str;
    /// The API key.
    const API_KEY: i16;
    /// The highest version of the schema.
    const MAX_VERSION: i16;
    /// Writes the body of `version`.
    fn write_body(&self, version: i16, out: &mut Encoder) -> Result<()>;
    /// Reads the body of `version`.
    fn read_body(version: i16, r: &mut Decoder<'_>) -> Result<Self>;
}

/// The refusal of a version a schema does not have (`UNSUPPORTED_VERSION`).
pub fn check_version(api: &str, version: i16, max: i16) -> Result<()> {
    if (0..=max).contains(&version) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::UnsupportedVersion,
            format!("{api} version {version} is not supported (supported: 0-{max})"),
        ))
    }
}

/// The refusal to write a non-default value of a field that `version` does not have (as
/// Kafka's generated code throws `UnsupportedVersionException`).
pub fn absent_field(api: &str, field: &str, version: i16, since: i16) -> Error {
    Error::new(
        ErrorCode::UnsupportedVersion,
        format!(
            "{api}: attempted to write a non-default {field} at version {version} \
             (the field exists from version {since})"
        ),
    )
}

/// A body writer that knows whether the version is flexible.
pub struct Encoder {
    /// The bytes written.
    pub w: Writer,
    /// Whether strings, bytes and arrays are compact and structures end with tagged fields.
    pub flexible: bool,
}

impl Encoder {
    /// STRING or NULLABLE_STRING (compact in flexible versions); at most 32767 bytes.
    pub fn nullable_string(&mut self, field: &str, s: Option<&str>) -> Result<()> {
        if let Some(s) = s {
            if s.len() > i16::MAX as usize {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "{field} is too long to be serialized ({} bytes, at most 32767)",
                        s.len()
                    ),
                ));
            }
        }
        if self.flexible {
            self.w.compact_nullable_string(s);
        } else {
            self.w.nullable_string(s);
        }
        Ok(())
    }

    /// A non-null string.
    pub fn string(&mut self, field: &str, s: &str) -> Result<()> {
        self.nullable_string(field, Some(s))
    }

    /// BYTES (compact in flexible versions).
    pub fn bytes(&mut self, field: &str, b: &[u8]) -> Result<()> {
        if b.len() >= i32::MAX as usize {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("{field} is too long to be serialized"),
            ));
        }
        if self.flexible {
            self.w.compact_bytes(b);
        } else {
            self.w.bytes(b);
        }
        Ok(())
    }

    /// The length of a non-null array, or `None` for a null one.
    pub fn array_len(&mut self, field: &str, n: Option<usize>) -> Result<()> {
        match n {
            Some(n) if n >= i32::MAX as usize => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{field} has too many elements to be serialized"),
                ))
            }
            Some(n) if self.flexible => self.w.uvarint(n as u32 + 1),
            Some(n) => self.w.i32(n as i32),
            None if self.flexible => self.w.uvarint(0),
            None => self.w.i32(-1),
        }
        Ok(())
    }

    /// The (empty) tagged-field section ending a structure, in flexible versions.
    pub fn end_struct(&mut self) {
        if self.flexible {
            self.w.no_tagged_fields();
        }
    }
}

/// A body reader that knows whether the version is flexible.
pub struct Decoder<'a> {
    /// The bytes read.
    pub r: Reader<'a>,
    /// Whether strings, bytes and arrays are compact and structures end with tagged fields.
    pub flexible: bool,
}

impl<'a> Decoder<'a> {
    /// Whether the next BYTES or ARRAY length is the null marker (-1, or 0 in compact
    /// form), without consuming it: the reader takes a null as empty, some schemas need the
    /// difference.
    pub fn next_is_null(&self) -> bool {
        let rest = self.r.rest();
        if self.flexible {
            rest.first() == Some(&0)
        } else {
            rest.get(..4) == Some(&[0xff; 4][..])
        }
    }

    /// NULLABLE_STRING (compact in flexible versions); longer than 32767 bytes is refused.
    pub fn nullable_string(&mut self) -> Result<Option<String>> {
        let s = if self.flexible {
            self.r.compact_nullable_string()?
        } else {
            self.r.nullable_string()?
        };
        // Kafka refuses compact strings longer than a classic string can be.
        if s.as_ref().is_some_and(|s| s.len() > i16::MAX as usize) {
            return Err(invalid("string longer than 32767 bytes"));
        }
        Ok(s)
    }

    /// A non-null string.
    pub fn string(&mut self, field: &str) -> Result<String> {
        self.nullable_string()?
            .ok_or_else(|| invalid(&format!("non-nullable {field} is null")))
    }

    /// Non-null BYTES.
    pub fn bytes(&mut self, field: &str) -> Result<&'a [u8]> {
        if self.next_is_null() {
            return Err(invalid(&format!("non-nullable {field} is null")));
        }
        self.bytes_or_empty()
    }

    /// BYTES, a null read as empty.
    pub fn bytes_or_empty(&mut self) -> Result<&'a [u8]> {
        if self.flexible {
            self.r.compact_bytes()
        } else {
            self.r.bytes()
        }
    }

    /// An array length, `None` for a null array.
    pub fn nullable_array_len(&mut self) -> Result<Option<usize>> {
        let null = self.next_is_null();
        let n = if self.flexible {
            self.r.compact_array_len()?
        } else {
            self.r.array_len()?
        };
        Ok((!null).then_some(n))
    }

    /// A non-null array length.
    pub fn array_len(&mut self, field: &str) -> Result<usize> {
        self.nullable_array_len()?
            .ok_or_else(|| invalid(&format!("non-nullable {field} is null")))
    }

    /// The tagged-field section ending a structure, in flexible versions (skipped).
    pub fn end_struct(&mut self) -> Result<()> {
        if self.flexible {
            self.r.tagged_fields()?;
        }
        Ok(())
    }

    /// Fails if anything is left.
    pub fn finish(self, what: &str) -> Result<()> {
        self.r.finish(what)
    }
}

/// A request header: the API, its version, the correlation id and `client_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    /// API key.
    pub api_key: i16,
    /// API version.
    pub api_version: i16,
    /// Correlation id.
    pub correlation_id: i32,
    /// `client_id` (a null one reads as none).
    pub client_id: Option<String>,
}

impl RequestHeader {
    /// Parses the header of a request frame (without its length prefix): v1, or v2 for the
    /// flexible versions of the APIs ksasl knows (`client_id` stays a classic string in
    /// v2). Returns the header and a decoder of the body for its version.
    pub fn parse(frame: &[u8]) -> Result<(RequestHeader, Decoder<'_>)> {
        let mut r = Reader::new(frame);
        let api_key = r.i16()?;
        let api_version = r.i16()?;
        let correlation_id = r.i32()?;
        let client_id = r.nullable_string()?;
        let mut d = Decoder {
            r,
            flexible: is_flexible(api_key, api_version),
        };
        d.end_struct()?;
        let header = RequestHeader {
            api_key,
            api_version,
            correlation_id,
            client_id,
        };
        Ok((header, d))
    }
}

/// Reads the body of a `version` request of `M` whose header was read: the whole body,
/// nothing after it.
pub fn decode_body<M: Message>(version: i16, mut body: Decoder<'_>) -> Result<M> {
    check_version(M::NAME, version, M::MAX_VERSION)?;
    let m = M::read_body(version, &mut body)?;
    body.finish(M::NAME)?;
    Ok(m)
}

/// The body of `M` in `version` alone (no header, no length prefix).
pub fn encode_body<M: Message>(m: &M, version: i16) -> Result<Vec<u8>> {
    check_version(M::NAME, version, M::MAX_VERSION)?;
    let mut out = Encoder {
        w: Writer::default(),
        flexible: is_flexible(M::API_KEY, version),
    };
    m.write_body(version, &mut out)?;
    Ok(out.w.buf)
}

/// A whole request frame: length, request header (v1, or v2 when `version` is flexible) and
/// body.
pub fn encode_request<M: Message>(
    m: &M,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
) -> Result<Vec<u8>> {
    check_version(M::NAME, version, M::MAX_VERSION)?;
    let mut out = Encoder {
        w: Writer::framed(),
        flexible: false,
    };
    out.w.i16(M::API_KEY);
    out.w.i16(version);
    out.w.i32(correlation_id);
    out.nullable_string("client_id", client_id)?;
    out.flexible = is_flexible(M::API_KEY, version);
    out.end_struct();
    m.write_body(version, &mut out)?;
    finish_frame(out)
}

/// A whole response frame: length, response header (v0, or v1 for flexible versions other
/// than ApiVersions') and body.
pub fn encode_response<M: Message>(m: &M, version: i16, correlation_id: i32) -> Result<Vec<u8>> {
    check_version(M::NAME, version, M::MAX_VERSION)?;
    let mut out = Encoder {
        w: Writer::framed(),
        flexible: response_header_flexible(M::API_KEY, version),
    };
    out.w.i32(correlation_id);
    out.end_struct();
    out.flexible = is_flexible(M::API_KEY, version);
    m.write_body(version, &mut out)?;
    finish_frame(out)
}

fn finish_frame(out: Encoder) -> Result<Vec<u8>> {
    if out.w.buf.len() - 4 > i32::MAX as usize {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "message is too large for a Kafka frame",
        ));
    }
    Ok(out.w.finish_frame())
}

/// Reads a `version` response frame of `M` (without its length prefix): its correlation id
/// and body.
pub fn decode_response<M: Message>(version: i16, frame: &[u8]) -> Result<(i32, M)> {
    check_version(M::NAME, version, M::MAX_VERSION)?;
    let mut r = Reader::new(frame);
    let correlation_id = r.i32()?;
    let mut d = Decoder {
        r,
        flexible: response_header_flexible(M::API_KEY, version),
    };
    d.end_struct()?;
    d.flexible = is_flexible(M::API_KEY, version);
    Ok((correlation_id, decode_body(version, d)?))
}

/// Reads a `version` response body of `M`: the reader left after the response header.
pub fn decode_response_body<M: Message>(version: i16, body: Reader<'_>) -> Result<M> {
    let d = Decoder {
        r: body,
        flexible: is_flexible(M::API_KEY, version),
    };
    decode_body(version, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_are_bounded() {
        for v in [0u32, 1, 127, 128, 300, 16_383, 16_384, u32::MAX] {
            let mut w = Writer::default();
            w.uvarint(v);
            let mut r = Reader::new(&w.buf);
            assert_eq!(r.uvarint().unwrap(), v);
            r.finish("varint").unwrap();
        }
        assert!(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01])
            .uvarint()
            .is_err());
        assert!(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x7f])
            .uvarint()
            .is_err());
        assert!(Reader::new(&[0x80]).uvarint().is_err());
    }

    #[test]
    fn lengths_are_checked() {
        assert!(Reader::new(&[0, 5, b'a']).string().is_err());
        assert!(Reader::new(&[0xff, 0xfe]).nullable_string().is_err());
        assert!(Reader::new(&[0, 0, 0, 9, 1]).bytes().is_err());
        assert!(Reader::new(&[0x7f, 0xff, 0xff, 0xff]).array_len().is_err());
        assert_eq!(Reader::new(&[0xff, 0xff]).nullable_string().unwrap(), None);
    }
}
