//! Bounded big-endian reading and writing of Kafka's primitive types.

use crate::error::{Error, ErrorCode, Result};

pub(crate) fn invalid(what: &str) -> Error {
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
