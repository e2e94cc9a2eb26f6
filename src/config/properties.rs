//! Java `.properties` text, read the way `java.util.Properties.load` reads it: `key=value`,
//! `key: value` or `key value`; `#` and `!` comment lines; a line ending in an odd number of
//! backslashes continues on the next one (its leading blanks dropped); the escapes `\t`, `\n`,
//! `\r`, `\f` and `\uXXXX`, and a backslash before any other character keeps that character.
//! A key given twice keeps its last value, as in Java.
//!
//! Kafka's tools read their files as ISO-8859-1 bytes (`Properties.load(InputStream)`); ksasl
//! reads UTF-8 and falls back to ISO-8859-1 only for bytes that are not UTF-8, so a file
//! written by a UTF-8 editor means what its author sees.

use std::fmt;

use crate::error::{quote, Error, ErrorCode, Result};
use crate::secret::Secret;

/// Keys whose values are secrets: never shown by `Debug`, [`Properties::redacted`] or an error.
pub fn is_secret_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    key.ends_with("sasl.jaas.config")
        || key.ends_with("sasl.password")
        || key.ends_with("client.secret")
        || key.ends_with("secret.key")
        || key.ends_with("ssl.key.password")
        || key.ends_with("ssl.keystore.password")
        || key.ends_with("ssl.truststore.password")
        || key.ends_with("private.key.passphrase")
        || key.ends_with("private.key.pem")
        || key.ends_with("sasl.oauthbearer.config")
        || last == "password"
}

/// An ordered set of `key = value` pairs; a later value for a key replaces the earlier one in
/// place. Values are kept in zeroized memory, since some are passwords.
#[derive(Clone, Default)]
pub struct Properties {
    entries: Vec<(String, Secret)>,
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.redacted()).finish()
    }
}

impl Properties {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `.properties` text.
    pub fn parse(text: &str) -> Result<Self> {
        let mut props = Properties::new();
        for line in logical_lines(text) {
            let (key, value) = split_line(&line.text)
                .map_err(|m| invalid(format!("line {}: {m}", line.number)))?;
            props.set(&key, value);
        }
        Ok(props)
    }

    /// Parses a file's bytes: UTF-8, or ISO-8859-1 where the bytes are not UTF-8.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        let mut text = String::with_capacity(bytes.len());
        let mut rest = bytes;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(t) => {
                    text.push_str(t);
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    text.push_str(std::str::from_utf8(good).unwrap_or_default());
                    // One byte that is not UTF-8, read as ISO-8859-1.
                    text.push(bad[0] as char);
                    rest = &bad[1..];
                }
            }
        }
        Self::parse(&text)
    }

    /// Pairs in order; a repeated key keeps its first position and its last value.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut props = Properties::new();
        for (k, v) in pairs {
            props.set(k, v);
        }
        props
    }

    /// Sets a value, replacing an earlier one in place.
    pub fn set(&mut self, key: &str, value: impl Into<Secret>) {
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| std::str::from_utf8(v.expose()).unwrap_or(""))
    }

    /// Whether a key is set.
    pub fn contains(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Pairs in order, values included (secrets too: for code that consumes them).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(k, v)| (k.as_str(), std::str::from_utf8(v.expose()).unwrap_or("")))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Pairs in order with the values of secret keys ([`is_secret_key`]) replaced by
    /// `[hidden]`.
    pub fn redacted(&self) -> Vec<(String, String)> {
        self.iter()
            .map(|(k, v)| {
                let shown = if is_secret_key(k) {
                    "[hidden]".to_string()
                } else {
                    v.to_string()
                };
                (k.to_string(), shown)
            })
            .collect()
    }
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidConfig, message)
}

struct Line {
    number: usize,
    text: String,
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Joins natural lines into logical ones, dropping comments and blank lines. The
/// continuation backslash is removed here; every other escape is left for [`unescape`].
fn logical_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut natural = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        natural.push(&rest[..end]);
        rest = &rest[end..];
        if rest.starts_with("\r\n") {
            rest = &rest[2..];
        } else if !rest.is_empty() {
            rest = &rest[1..];
        }
    }
    let mut i = 0;
    while i < natural.len() {
        let number = i + 1;
        let first = natural[i].trim_start_matches(is_blank);
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut text = String::new();
        let mut piece = first;
        loop {
            let trailing = piece.len() - piece.trim_end_matches('\\').len();
            if trailing % 2 == 1 {
                text.push_str(&piece[..piece.len() - 1]);
                match natural.get(i) {
                    Some(next) => {
                        piece = next.trim_start_matches(is_blank);
                        i += 1;
                    }
                    None => break,
                }
            } else {
                text.push_str(piece);
                break;
            }
        }
        out.push(Line { number, text });
    }
    out
}

/// Splits a logical line at the first unescaped `=`, `:` or blank, and unescapes both halves.
fn split_line(line: &str) -> std::result::Result<(String, Secret), String> {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut escaped = false;
    while i < chars.len() {
        let c = chars[i];
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_blank(c) {
            break;
        }
        i += 1;
    }
    let key: String = chars[..i].iter().collect();
    let mut j = i;
    while j < chars.len() && is_blank(chars[j]) {
        j += 1;
    }
    if j < chars.len() && (chars[j] == '=' || chars[j] == ':') {
        j += 1;
        while j < chars.len() && is_blank(chars[j]) {
            j += 1;
        }
    }
    let value: String = chars[j..].iter().collect();
    let key = unescape(&key).map_err(|e| format!("key \"{}\": {e}", quote(key.as_bytes())))?;
    let value = unescape(&value).map_err(|e| {
        if is_secret_key(&key) {
            format!("the value of {key}: {e}")
        } else {
            format!("the value of {key} (\"{}\"): {e}", quote(value.as_bytes()))
        }
    })?;
    Ok((key, Secret::from(value)))
}

fn unescape(s: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = (hex.len() == 4)
                    .then(|| u16::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or_else(|| "a \\u escape needs four hexadecimal digits".to_string())?;
                out.push_str(&decode_unit(unit, &mut chars)?);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// One UTF-16 unit of a `\u` escape; a high surrogate must be followed by `\uDC00`-`\uDFFF`.
fn decode_unit(unit: u16, chars: &mut std::str::Chars<'_>) -> std::result::Result<String, String> {
    if let Some(c) = char::from_u32(u32::from(unit)) {
        return Ok(c.to_string());
    }
    let lone = || "a \\u escape is half of a surrogate pair".to_string();
    if !(0xD800..0xDC00).contains(&unit) {
        return Err(lone());
    }
    let rest = chars.as_str();
    let low = rest
        .strip_prefix("\\u")
        .and_then(|r| r.get(..4))
        .and_then(|h| u16::from_str_radix(h, 16).ok())
        .filter(|l| (0xDC00..0xE000).contains(l))
        .ok_or_else(lone)?;
    for _ in 0..6 {
        chars.next();
    }
    let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
    char::from_u32(code).map(String::from).ok_or_else(lone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        Properties::parse(text)
            .unwrap()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn separators_comments_and_blanks() {
        let text = "# comment\n! another\n\n   \na=1\nb : 2\nc 3\n  d=  4  \ne\nf=\n\tg\t=\tx y\n";
        assert_eq!(
            pairs(text),
            vec![
                p("a", "1"),
                p("b", "2"),
                p("c", "3"),
                p("d", "4  "),
                p("e", ""),
                p("f", ""),
                p("g", "x y"),
            ]
        );
        // A separator after blanks: only the first = or : is the separator.
        assert_eq!(pairs("k = = v"), vec![p("k", "= v")]);
        assert_eq!(pairs("k  :=v"), vec![p("k", "=v")]);
        assert_eq!(pairs("a=b=c"), vec![p("a", "b=c")]);
    }

    #[test]
    fn continuations_and_line_ends() {
        let text = "sasl.jaas.config=org.Module required \\\n    username=\"u\" \\\r\n\tpassword=\"p\";\rnext=1";
        assert_eq!(
            pairs(text),
            vec![
                p(
                    "sasl.jaas.config",
                    "org.Module required username=\"u\" password=\"p\";"
                ),
                p("next", "1")
            ]
        );
        // An even number of backslashes does not continue: it is one escaped backslash.
        assert_eq!(pairs("a=x\\\\\nb=y"), vec![p("a", "x\\"), p("b", "y")]);
        // A comment line never continues, even ending in a backslash.
        assert_eq!(pairs("# c \\\nb=y"), vec![p("b", "y")]);
        // A continuation at the end of the text ends the value.
        assert_eq!(pairs("a=x\\"), vec![p("a", "x")]);
        // A continued line that starts with # is not a comment.
        assert_eq!(pairs("a=x\\\n#y"), vec![p("a", "x#y")]);
    }

    #[test]
    fn escapes() {
        assert_eq!(
            pairs(r"k\ e\:y\=z=a\tb\nc\\d\u00e9\q"),
            vec![p("k e:y=z", "a\tb\nc\\d\u{e9}q")]
        );
        assert_eq!(pairs(r"s=\ud83d\ude00"), vec![p("s", "\u{1f600}")]);
        let e = Properties::parse("a=1\nuser=\\u12").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        assert!(e.message().starts_with("line 2: the value of user"), "{e}");
        let e = Properties::parse("sasl.password=\\uzzzzhunter2").unwrap_err();
        assert!(!e.message().contains("hunter2"), "{e}");
        assert!(Properties::parse(r"x=\ud83d").is_err());
    }

    #[test]
    fn last_value_wins_in_first_place() {
        let props = Properties::parse("a=1\nb=2\na=3").unwrap();
        assert_eq!(props.keys().collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(props.get("a"), Some("3"));
    }

    #[test]
    fn latin1_fallback_and_redaction() {
        let props =
            Properties::parse_bytes(b"name=caf\xe9\nu=caf\xc3\xa9\nsasl.password=hunter2").unwrap();
        assert_eq!(props.get("name"), Some("caf\u{e9}"));
        assert_eq!(props.get("u"), Some("caf\u{e9}"));
        let shown = format!("{props:?}");
        assert!(
            shown.contains("[hidden]") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(is_secret_key(
            "listener.name.sasl_ssl.plain.sasl.jaas.config"
        ));
        assert!(is_secret_key(
            "sasl.oauthbearer.client.credentials.client.secret"
        ));
        assert!(!is_secret_key("sasl.username"));
    }
}
