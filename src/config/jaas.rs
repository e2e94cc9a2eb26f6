//! `sasl.jaas.config` values, read with the grammar of Kafka's `JaasConfig`:
//!
//! ```text
//! <login module class> <control flag> (<option>=<value>)* ;
//! ```
//!
//! Kafka tokenizes the text with `java.io.StreamTokenizer`, and ksasl reproduces its rules,
//! quirks included, so a string means here what it means to Kafka:
//! - characters 0 to 32 separate tokens; `;` and `=` are tokens of their own;
//! - `"` and `'` quote a value; inside quotes, `\` escapes (`\n`, `\t`, `\r`, `\b`, `\f`, `\a`,
//!   `\v`, octal `\0`-`\377`, any other character stands for itself), and a quoted value ends
//!   at its closing quote or at the end of its line;
//! - `/` starts a comment: `//` and a lone `/` to the end of the line, `/* ... */` otherwise.
//!   So an unquoted path (`keyTab=/etc/kafka.keytab`) loses its value, as in Kafka; the error
//!   then says to quote it;
//! - the control flag is `required`, `requisite`, `sufficient` or `optional` in any case;
//! - an option given twice keeps its last value.
//!
//! Errors use Kafka's texts (`Value not specified for key 'x' in JAAS config`, ...) with
//! ksasl's hints after them. Option values are kept in zeroized memory and never shown.

use std::fmt;

use crate::error::{quote, Error, ErrorCode, Result};
use crate::secret::Secret;

/// A JAAS control flag. Kafka's login and callback handlers do not look at it, but it must be
/// one of the four.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlFlag {
    /// `required`.
    Required,
    /// `requisite`.
    Requisite,
    /// `sufficient`.
    Sufficient,
    /// `optional`.
    Optional,
}

impl ControlFlag {
    /// The flag as Kafka's examples write it (lower case).
    pub fn name(self) -> &'static str {
        match self {
            ControlFlag::Required => "required",
            ControlFlag::Requisite => "requisite",
            ControlFlag::Sufficient => "sufficient",
            ControlFlag::Optional => "optional",
        }
    }
}

/// One login module entry of a JAAS configuration.
#[derive(Clone)]
pub struct JaasEntry {
    login_module: String,
    control_flag: ControlFlag,
    options: Vec<(String, Secret)>,
}

impl fmt::Debug for JaasEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JaasEntry")
            .field("login_module", &self.login_module)
            .field("control_flag", &self.control_flag)
            .field(
                "options",
                &self.options.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl JaasEntry {
    /// The login module's class name, as written.
    pub fn login_module(&self) -> &str {
        &self.login_module
    }

    /// The control flag.
    pub fn control_flag(&self) -> ControlFlag {
        self.control_flag
    }

    /// An option's value.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| std::str::from_utf8(v.expose()).unwrap_or(""))
    }

    /// Option names, in the order first given.
    pub fn option_names(&self) -> impl Iterator<Item = &str> {
        self.options.iter().map(|(k, _)| k.as_str())
    }

    /// Options in order, values included.
    pub fn options(&self) -> impl Iterator<Item = (&str, &str)> {
        self.options
            .iter()
            .map(|(k, v)| (k.as_str(), std::str::from_utf8(v.expose()).unwrap_or("")))
    }
}

/// Parses a JAAS configuration with any number of entries, as Kafka's `JaasConfig` does; an
/// empty one is an error.
pub fn parse_entries(text: &str) -> Result<Vec<JaasEntry>> {
    let mut tokens = Tokenizer::new(text);
    let mut entries = Vec::new();
    loop {
        let token = tokens.next();
        if token == Token::Eof {
            break;
        }
        entries.push(parse_entry(token, &mut tokens)?);
    }
    if entries.is_empty() {
        return Err(invalid("Login module not specified in JAAS config".into()));
    }
    Ok(entries)
}

/// Parses the value of `sasl.jaas.config`, which must hold exactly one entry (Kafka's
/// `JaasContext` rule for the property).
pub fn parse(text: &str) -> Result<JaasEntry> {
    let mut entries = parse_entries(text)?;
    if entries.len() != 1 {
        return Err(invalid(format!(
            "JAAS config property contains {} login modules, should be 1 module",
            entries.len()
        )));
    }
    Ok(entries.remove(0))
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidConfig, message)
}

fn parse_entry(first: Token, tokens: &mut Tokenizer<'_>) -> Result<JaasEntry> {
    let login_module = first.text().map(str::to_string);
    let flag = match tokens.next() {
        Token::Eof => {
            return Err(invalid(
                "Login module control flag not specified in JAAS config".into(),
            ))
        }
        t => t,
    };
    let control_flag = match flag.text() {
        None => {
            return Err(invalid(
                "Login module control flag is not available in the JAAS config".into(),
            ))
        }
        Some(f) => match f.to_ascii_uppercase().as_str() {
            "REQUIRED" => ControlFlag::Required,
            "REQUISITE" => ControlFlag::Requisite,
            "SUFFICIENT" => ControlFlag::Sufficient,
            "OPTIONAL" => ControlFlag::Optional,
            _ => {
                return Err(invalid(format!(
                    "Invalid login module control flag '{}' in JAAS config; it must be \
                     required, requisite, sufficient or optional",
                    quote(f.as_bytes())
                )))
            }
        },
    };
    let mut options: Vec<(String, Secret)> = Vec::new();
    let mut token = tokens.next();
    let mut previous_was_value = false;
    while token != Token::Eof && token != Token::Ordinary(';') {
        let key = token.text().map(str::to_string);
        // A "key" glued to the value before it is most likely the rest of that value after a
        // stray quote (`password="pa"ss"`): it may be part of a secret, so an error about it
        // does not show it. (Kafka accepts a glued key followed by `=`, and so does ksasl.)
        let glued = previous_was_value && !tokens.separated;
        let after = options
            .last()
            .map(|(k, _)| quote(k.as_bytes()))
            .unwrap_or_default();
        let missing_value = |hint: &str| {
            if glued {
                invalid(format!(
                    "Value not specified for a key in JAAS config: text follows the value of \
                     '{after}' without a blank; a quote inside a value must be escaped (\\\") \
                     or the value put in the other kind of quotes"
                ))
            } else {
                invalid(format!(
                    "Value not specified for key '{}' in JAAS config{hint}",
                    key.as_deref()
                        .map(|k| quote(k.as_bytes()))
                        .unwrap_or_else(|| "null".into())
                ))
            }
        };
        let equals = tokens.next();
        let comment_before = tokens.comment_seen;
        let value = if equals == Token::Ordinary('=') {
            let v = tokens.next();
            let comment_after = tokens.comment_seen;
            match v.into_text() {
                Some(v) => v,
                None => {
                    let hint = if comment_after {
                        "; a value containing '/' must be quoted, or '/' starts a comment"
                    } else {
                        ""
                    };
                    return Err(missing_value(hint));
                }
            }
        } else {
            let hint = if comment_before {
                "; a value containing '/' must be quoted, or '/' starts a comment"
            } else {
                ""
            };
            return Err(missing_value(hint));
        };
        let key = key.unwrap_or_else(|| "null".into());
        match options.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = Secret::from(value),
            None => options.push((key, Secret::from(value))),
        }
        token = tokens.next();
        previous_was_value = true;
    }
    if token != Token::Ordinary(';') {
        return Err(invalid(
            "JAAS config entry not terminated by semi-colon".into(),
        ));
    }
    let login_module = match login_module {
        Some(m) if !m.is_empty() => m,
        _ => {
            return Err(invalid(
                "Login module class not specified in JAAS config".into(),
            ))
        }
    };
    Ok(JaasEntry {
        login_module,
        control_flag,
        options,
    })
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Eof,
    Word(String),
    Quoted(String),
    Ordinary(char),
}

impl Token {
    fn text(&self) -> Option<&str> {
        match self {
            Token::Word(s) | Token::Quoted(s) => Some(s),
            _ => None,
        }
    }

    fn into_text(self) -> Option<String> {
        match self {
            Token::Word(s) | Token::Quoted(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Blank,
    Word,
    Quote,
    Comment,
    Ordinary,
}

/// The character classes Kafka's `JaasConfig` gives `StreamTokenizer`.
fn class(c: char) -> Class {
    match c as u32 {
        0..=32 => Class::Blank,
        0x22 | 0x27 => Class::Quote,
        0x2f => Class::Comment,
        0x3b | 0x3d => Class::Ordinary,
        33..=128 => Class::Word,
        129..=159 => Class::Ordinary,
        _ => Class::Word,
    }
}

struct Tokenizer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    /// Whether a comment was skipped while reading the last token.
    comment_seen: bool,
    /// Whether blanks or a comment came right before the last token.
    separated: bool,
}

impl<'a> Tokenizer<'a> {
    fn new(text: &'a str) -> Self {
        Tokenizer {
            chars: text.chars().peekable(),
            comment_seen: false,
            separated: true,
        }
    }

    fn skip_line(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == '\n' || c == '\r' {
                break;
            }
            self.chars.next();
        }
    }

    fn next(&mut self) -> Token {
        self.comment_seen = false;
        self.separated = false;
        loop {
            let Some(c) = self.chars.next() else {
                return Token::Eof;
            };
            match class(c) {
                Class::Blank => {
                    self.separated = true;
                    continue;
                }
                Class::Word => {
                    let mut word = String::from(c);
                    while let Some(&d) = self.chars.peek() {
                        if class(d) != Class::Word {
                            break;
                        }
                        word.push(d);
                        self.chars.next();
                    }
                    return Token::Word(word);
                }
                Class::Quote => return Token::Quoted(self.quoted(c)),
                Class::Comment => {
                    self.comment_seen = true;
                    self.separated = true;
                    if self.chars.peek() == Some(&'*') {
                        self.chars.next();
                        let mut previous = '\0';
                        loop {
                            match self.chars.next() {
                                None => return Token::Eof,
                                Some('/') if previous == '*' => break,
                                Some(d) => previous = d,
                            }
                        }
                    } else {
                        // `//` and a lone `/` alike: `/` is also a comment character.
                        self.skip_line();
                    }
                }
                Class::Ordinary => return Token::Ordinary(c),
            }
        }
    }

    fn quoted(&mut self, quote_char: char) -> String {
        let mut out = String::new();
        while let Some(&d) = self.chars.peek() {
            if d == '\n' || d == '\r' {
                // The value ends with its line; the line end is read as a blank.
                return out;
            }
            self.chars.next();
            if d == quote_char {
                return out;
            }
            if d != '\\' {
                out.push(d);
                continue;
            }
            let Some(e) = self.chars.next() else {
                return out;
            };
            match e {
                '0'..='7' => {
                    let mut value = e as u32 - '0' as u32;
                    if let Some(&d2 @ '0'..='7') = self.chars.peek() {
                        self.chars.next();
                        value = value * 8 + (d2 as u32 - '0' as u32);
                        if e <= '3' {
                            if let Some(&d3 @ '0'..='7') = self.chars.peek() {
                                self.chars.next();
                                value = value * 8 + (d3 as u32 - '0' as u32);
                            }
                        }
                    }
                    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                }
                'a' => out.push('\x07'),
                'b' => out.push('\x08'),
                'f' => out.push('\x0c'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'v' => out.push('\x0b'),
                other => out.push(other),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";

    fn err(text: &str) -> String {
        let e = parse(text).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        e.message().to_string()
    }

    #[test]
    fn kafka_documentation_forms() {
        let e = parse(&format!(
            "{PLAIN} required username=\"alice\" password=\"alice-secret\";"
        ))
        .unwrap();
        assert_eq!(e.login_module(), PLAIN);
        assert_eq!(e.control_flag(), ControlFlag::Required);
        assert_eq!(e.option("username"), Some("alice"));
        assert_eq!(e.option("password"), Some("alice-secret"));
        // Unquoted values, single quotes, other flags in any case, line breaks.
        let e = parse(&format!(
            "{PLAIN}\n  OPTIONAL\n  username=alice\n  password='a b';"
        ))
        .unwrap();
        assert_eq!(e.control_flag(), ControlFlag::Optional);
        assert_eq!(e.option("password"), Some("a b"));
        // No options; the last of a repeated option wins.
        let e = parse("M sufficient;").unwrap();
        assert_eq!(e.option_names().count(), 0);
        let e = parse("M requisite a=1 b=2 a=3;").unwrap();
        assert_eq!(
            e.options().collect::<Vec<_>>(),
            vec![("a", "3"), ("b", "2")]
        );
        // Quoted class names and keys work, as in Kafka.
        let e = parse("\"M\" 'required' \"k\"=v;").unwrap();
        assert_eq!((e.login_module(), e.option("k")), ("M", Some("v")));
        // Nothing after the semicolon but blanks and comments.
        assert!(parse("M required a=1; // done\n/* end */").is_ok());
    }

    #[test]
    fn stream_tokenizer_quirks() {
        // Escapes inside quotes.
        let e = parse(r#"M required a="x\"y\\z\n\101\7\q" b='it\'s';"#).unwrap();
        assert_eq!(e.option("a"), Some("x\"y\\z\nA\x07q"));
        assert_eq!(e.option("b"), Some("it's"));
        // Outside quotes a backslash is an ordinary word character.
        let e = parse(r"M required a=x\y;").unwrap();
        assert_eq!(e.option("a"), Some(r"x\y"));
        // A quote ends a word, and a word ends at = and ;
        let e = parse("M required a=b \"c d\";").unwrap_err();
        assert_eq!(
            e.message(),
            "Value not specified for key 'c d' in JAAS config"
        );
        let e = parse("M required a=b\"c d\";").unwrap_err();
        assert!(e.message().contains("follows the value of 'a'"), "{e}");
        // A quoted value ends at its line's end.
        let e = parse("M required a=\"x\n;").unwrap();
        assert_eq!(e.option("a"), Some("x"));
        // Octal: \377 is one character, \477 is \47 then 7.
        let e = parse(r#"M required a="\377" b="\477";"#).unwrap();
        assert_eq!(e.option("a"), Some("\u{ff}"));
        assert_eq!(e.option("b"), Some("'7"));
        // Comments anywhere between tokens.
        let e = parse("M /* c */ required // x\n a=1 /*\n*/ ;").unwrap();
        assert_eq!(e.option("a"), Some("1"));
        // Characters 129 to 159 are tokens of their own.
        assert!(parse("M required a=x\u{85}y;").is_err());
        // Beyond Latin-1, letters are word characters.
        let e = parse("M required user=\u{4e16}\u{754c};").unwrap();
        assert_eq!(e.option("user"), Some("\u{4e16}\u{754c}"));
    }

    #[test]
    fn kafka_error_texts() {
        assert_eq!(err(""), "Login module not specified in JAAS config");
        assert_eq!(
            err("  // only a comment"),
            "Login module not specified in JAAS config"
        );
        assert_eq!(
            err("M"),
            "Login module control flag not specified in JAAS config"
        );
        assert_eq!(
            err("M ;"),
            "Login module control flag is not available in the JAAS config"
        );
        assert!(err("M mandatory;")
            .starts_with("Invalid login module control flag 'mandatory' in JAAS config"));
        assert_eq!(
            err("M required a=1"),
            "JAAS config entry not terminated by semi-colon"
        );
        assert_eq!(
            err("M required a;"),
            "Value not specified for key 'a' in JAAS config"
        );
        assert_eq!(
            err("M required a=;"),
            "Value not specified for key 'a' in JAAS config"
        );
        assert_eq!(
            err("M required =x;"),
            "Value not specified for key 'null' in JAAS config"
        );
        assert_eq!(
            err("M required a=1; N required b=2;"),
            "JAAS config property contains 2 login modules, should be 1 module"
        );
        assert_eq!(
            err("; required;"),
            "Login module class not specified in JAAS config"
        );
        // The unquoted path: Kafka reads `/etc...` as a comment.
        let m = err("com.sun.security.auth.module.Krb5LoginModule required keyTab=/etc/k.keytab;");
        assert!(
            m.starts_with("Value not specified for key 'keyTab' in JAAS config;")
                && m.contains("quoted"),
            "{m}"
        );
        assert_eq!(parse_entries("A required; B optional;").unwrap().len(), 2);
    }

    #[test]
    fn values_never_shown() {
        let e = parse(&format!(
            "{PLAIN} required username=u password=\"hunter2\";"
        ))
        .unwrap();
        assert!(!format!("{e:?}").contains("hunter2"));
        let m = err("M required password=\"hunter2\" bad");
        assert!(!m.contains("hunter2"));
        // The tail of a value cut by a stray quote is not shown as a key.
        let m = err("M required password=\"pa\"ss-hunter2 x=1;");
        assert!(m.contains("'password'") && !m.contains("hunter2"), "{m}");
        // A key glued to a value is accepted as Kafka does when a value follows it.
        assert_eq!(
            parse("M required a=\"x\"b='y';").unwrap().option("b"),
            Some("y")
        );
        // A long key is cut when quoted.
        let m = err(&format!("M required {};", "k".repeat(500)));
        assert!(m.len() < 200, "{m}");
    }
}
