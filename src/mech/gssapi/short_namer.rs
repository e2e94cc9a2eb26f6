//! Kafka's mapping of Kerberos principals to short names
//! (`sasl.kerberos.principal.to.local.rules`).
//!
//! A broker that authenticates a client with GSSAPI gets a principal such as
//! `kafka/broker1.example.com@EXAMPLE.COM` and turns it into the short name used for ACLs
//! (`kafka`) with an ordered list of rules. Each rule is either `DEFAULT` or
//! `RULE:[n:format](match)s/from/to/g` followed by an optional `/L` (lower-case the result) or
//! `/U` (upper-case it). The match part, the substitution and its `g` are optional. A rule
//! applies to names with exactly `n` components (`alice@R` has one, `kafka/host@R` two):
//!
//! 1. the format is expanded, `$0` being the realm, `$1` the first component and `$2` the
//!    second;
//! 2. the match expression must match the whole expanded string, or the rule does not apply;
//! 3. the substitution replaces the first match of `from` by `to` (every match with `g`);
//! 4. a result containing `/` or `@` stops the mapping with an error, otherwise `/L` or `/U`
//!    changes its case and the result is the short name.
//!
//! `DEFAULT` maps a name whose realm is the default realm to its first component. Rules are
//! tried in order; the first that applies wins, and no applicable rule is an error. A name
//! without a realm (and so without a host part, see [`KerberosName::parse`]) is already short
//! and is returned as it is, whatever the rules. The behaviour, including every error text
//! that Kafka writes itself, follows Kafka's `KerberosShortNamer`, `KerberosRule` and
//! `KerberosName` (package `org.apache.kafka.common.security.kerberos`); the shared table
//! `tests/vectors/kerberos_rules.json` is checked against Kafka's own classes by the Java
//! binding's tests.
//!
//! # Regular expressions
//!
//! Kafka compiles the match and `from` expressions with `java.util.regex`; ksasl compiles them
//! with the `regex` crate after translating them, so that each construct means what it means
//! in Java: `.` excludes Java's five line terminators, `\d`, `\w` and `\s` are ASCII only,
//! `\p{Lower}` and the other POSIX names are ASCII classes, `\e`, `\a`, `\0oct`, `\uXXXX` and
//! `\Q...\E` are understood. The replacement `to` follows `Matcher.replaceAll`: `$n` takes as
//! many digits as name an existing group, `${name}` a named group, `\x` is `x`.
//!
//! Constructs the `regex` crate cannot run, or whose meaning differs between Java releases or
//! from what a translation can express, are refused when the rules are built, with an
//! [`ErrorCode::InvalidConfig`] error naming the construct: backreferences (`\1`, `\k<n>`),
//! lookahead and lookbehind, atomic groups, possessive quantifiers (`*+`), inline flags
//! (`(?i)`: write `[Aa]` instead), word boundaries (`\b` changed meaning in JDK 19),
//! `\G`, `\Z`, `\R`, `\X`, `\h`, `\v`, Unicode properties other than the POSIX names, and
//! nested classes or class intersections (`[a-z&&[^b]]`). Java's `$` also matches before a
//! line terminator that ends the text; ksasl's does not, so a rule using `$` refuses (with
//! the same error) to map a name that ends with a line terminator rather than give another
//! answer than Kafka. Likewise a global substitution whose expression matches the empty
//! string just before a character outside the Basic Multilingual Plane is refused: Java then
//! looks for the next match between the two UTF-16 halves of that character (and may put the
//! replacement there, leaving a string that is not valid Unicode).
//!
//! An expression that Java refuses too (`a{,2}`, an unknown escape such as `\y`, a malformed
//! group name) is an `invalid_rule` like any other rule Kafka refuses, with ksasl's own text:
//! only the texts Kafka writes itself are reproduced, not those of the JDK's regex compiler.
//! Kafka does not check the replacement `to` when it parses a rule; neither does ksasl, so a
//! replacement naming a missing group fails only when the substitution matches, with the
//! JDK's text ("No group 2").

use std::fmt;

use regex::{Captures, Regex, RegexBuilder};

use crate::error::{Error, ErrorCode, Result};

/// The value Kafka gives `sasl.kerberos.principal.to.local.rules` when it is not set.
pub const DEFAULT_RULES: &[&str] = &["DEFAULT"];

/// The detail key ([`Error::detail`]) that says which of Kafka's failures an error stands for:
/// `invalid_rule` (Kafka's `IllegalArgumentException` when the rules are parsed),
/// `unsupported_regex` (a Java expression ksasl refuses, see the module documentation),
/// `malformed_name` (`KerberosName.parse` refused the principal), `no_matching_rule`
/// (`NoMatchingRule`: no rule applies, or the result is not a simple name), `bad_format`
/// (`BadFormatString`: a `$n` in a rule's format is wrong) and `bad_replacement` (the
/// replacement of a substitution names a group that does not exist, or ends in `\` or `$`).
pub const REASON_DETAIL: &str = "kerberos_rule_error";

/// The upper bound on the compiled size of one rule's expression, so that a rule cannot make
/// the library allocate without limit.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Java's line terminators, which its `.` does not match and before which its `$` matches.
const LINE_TERMINATORS: [char; 5] = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'];

fn failure(code: ErrorCode, reason: &'static str, message: String) -> Error {
    Error::new(code, message).with_detail(REASON_DETAIL, reason)
}

fn invalid_rule(message: String) -> Error {
    failure(ErrorCode::InvalidConfig, "invalid_rule", message)
}

/// A Kerberos principal split as Kafka splits it: `service[/host]@REALM`, or a plain name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KerberosName {
    service_name: String,
    host_name: Option<String>,
    realm: Option<String>,
}

impl KerberosName {
    /// A name from its parts, as Kafka's constructor takes them (nothing is checked).
    pub fn new(service_name: &str, host_name: Option<&str>, realm: Option<&str>) -> Self {
        KerberosName {
            service_name: service_name.to_string(),
            host_name: host_name.map(str::to_string),
            realm: realm.map(str::to_string),
        }
    }

    /// Splits a principal the way Kafka's `KerberosName.parse` does. A name with exactly one
    /// `@`, at most one `/` before it and none after it is `service[/host]@realm` (each part
    /// may be empty). Any other name containing `@` is refused ("Malformed Kerberos name: "
    /// and the name, [`ErrorCode::InvalidArgument`]). A name without `@` is kept whole as the
    /// service name, even when it contains `/`: `kafka/host` has no host part and no realm.
    pub fn parse(principal: &str) -> Result<Self> {
        let Some((before, realm)) = principal.split_once('@') else {
            return Ok(KerberosName::new(principal, None, None));
        };
        let malformed = || {
            failure(
                ErrorCode::InvalidArgument,
                "malformed_name",
                format!("Malformed Kerberos name: {principal}"),
            )
        };
        if realm.contains(['@', '/']) {
            return Err(malformed());
        }
        let (service, host) = match before.split_once('/') {
            Some((_, host)) if host.contains('/') => return Err(malformed()),
            Some((service, host)) => (service, Some(host)),
            None => (before, None),
        };
        Ok(KerberosName::new(service, host, Some(realm)))
    }

    /// The first component.
    pub fn service_name(&self) -> &str {
        &self.service_name
    }

    /// The second component, if the name has one.
    pub fn host_name(&self) -> Option<&str> {
        self.host_name.as_deref()
    }

    /// The realm, if the name has one.
    pub fn realm(&self) -> Option<&str> {
        self.realm.as_deref()
    }
}

impl fmt::Display for KerberosName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.service_name)?;
        if let Some(host) = &self.host_name {
            write!(f, "/{host}")?;
        }
        if let Some(realm) = &self.realm {
            write!(f, "@{realm}")?;
        }
        Ok(())
    }
}

/// The ordered rules of `sasl.kerberos.principal.to.local.rules` with the default realm that
/// `DEFAULT` compares against.
#[derive(Clone, Debug)]
pub struct KerberosShortNamer {
    rules: Vec<Rule>,
}

impl KerberosShortNamer {
    /// Parses `rules` (each one list element of the setting; [`DEFAULT_RULES`] is Kafka's
    /// default) in order. `default_realm` is the realm `DEFAULT` accepts; Kafka reads it from
    /// the JVM's Kerberos configuration and uses the empty string when there is none, which is
    /// what `None` means here (so `DEFAULT` then maps names with an empty realm, `alice@`).
    ///
    /// Errors ([`ErrorCode::InvalidConfig`]) for the first rule that Kafka refuses, with
    /// Kafka's text ("Invalid rule: ..."), and for an expression ksasl refuses (see the module
    /// documentation).
    pub fn new<I, S>(default_realm: Option<&str>, rules: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let realm = default_realm.unwrap_or("");
        let rules = rules
            .into_iter()
            .map(|rule| Rule::parse(rule.as_ref(), realm))
            .collect::<Result<Vec<_>>>()?;
        Ok(KerberosShortNamer { rules })
    }

    /// [`KerberosShortNamer::new`] with the setting's value as one string, read as Kafka's
    /// configuration reads a list (see [`parse_rule_list`]).
    pub fn from_config_value(default_realm: Option<&str>, value: &str) -> Result<Self> {
        KerberosShortNamer::new(default_realm, parse_rule_list(value)?)
    }

    /// The short name of `name`: the name itself when it has neither host nor realm, otherwise
    /// the result of the first rule that applies.
    ///
    /// Errors: [`ErrorCode::KerberosNameUnmapped`] when no rule applies ("No rules apply to
    /// <name>, rules [<rules>]") or when the rule that applied leaves a `/` or `@` ("Non-simple
    /// name <result> after auth_to_local rule <rule>"), and [`ErrorCode::InvalidConfig`] when
    /// a rule turns out to be unusable for this name (a `$n` outside the name's components, a
    /// replacement naming a missing group); the mapping stops at the first error, as Kafka's.
    pub fn short_name(&self, name: &KerberosName) -> Result<String> {
        let params: Vec<Option<&str>> = match (&name.host_name, &name.realm) {
            (None, None) => return Ok(name.service_name.clone()),
            (None, realm) => vec![realm.as_deref(), Some(&name.service_name)],
            (Some(host), realm) => vec![realm.as_deref(), Some(&name.service_name), Some(host)],
        };
        for rule in &self.rules {
            if let Some(short) = rule.apply(&params)? {
                return Ok(short);
            }
        }
        Err(failure(
            ErrorCode::KerberosNameUnmapped,
            "no_matching_rule",
            format!("No rules apply to {name}, rules {}", self.rule_list()),
        ))
    }

    /// The rules as Kafka prints them, e.g. `[RULE:[1:$1]/L, DEFAULT]`.
    pub fn rule_list(&self) -> String {
        let texts: Vec<String> = self.rules.iter().map(Rule::to_string).collect();
        format!("[{}]", texts.join(", "))
    }
}

impl fmt::Display for KerberosShortNamer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KerberosShortNamer(principalToLocalRules = {})",
            self.rule_list()
        )
    }
}

/// Reads the setting's string value as Kafka 4.4's configuration reads a list: the value is
/// trimmed, an empty value is an empty list, otherwise it is cut at every comma together with
/// the whitespace around it; an empty element is refused ([`ErrorCode::InvalidConfig`], with
/// Kafka's text) and a repeated element is dropped (the first one stays). A comma inside a
/// rule (`{1,3}`) therefore cuts the rule in two, as it does in Kafka; pass the list itself to
/// [`KerberosShortNamer::new`] to avoid that.
pub fn parse_rule_list(value: &str) -> Result<Vec<String>> {
    // Java's String.trim removes every character up to U+0020; `\s` is ASCII whitespace.
    let trimmed = value.trim_matches(|c: char| c <= ' ');
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    let java_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r');
    let mut rules: Vec<String> = Vec::new();
    for part in trimmed.split(',').map(|part| part.trim_matches(java_space)) {
        if part.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "Configuration 'sasl.kerberos.principal.to.local.rules' values must not be empty.",
            ));
        }
        if !rules.iter().any(|r| r == part) {
            rules.push(part.to_string());
        }
    }
    Ok(rules)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Keep,
    Lower,
    Upper,
}

#[derive(Clone, Debug)]
enum Rule {
    Default { realm: String },
    Custom(CustomRule),
}

#[derive(Clone, Debug)]
struct CustomRule {
    components: i32,
    format: String,
    matcher: Option<JavaRegex>,
    substitution: Option<Substitution>,
    case: Case,
}

#[derive(Clone, Debug)]
struct Substitution {
    from: JavaRegex,
    to: String,
    global: bool,
}

/// Splits off the longest prefix of `text` free of `stop`, if `stop` follows it.
fn up_to(text: &str, stop: char) -> Option<(&str, &str)> {
    let end = text.find(stop)?;
    Some((&text[..end], &text[end + stop.len_utf8()..]))
}

impl Rule {
    /// Reads one rule with the grammar of Kafka's rule parser. Its optional parts are tried
    /// greedily and skipped whole when incomplete, and whatever follows the longest readable
    /// prefix is reported as unmatched, as Kafka reports it.
    fn parse(rule: &str, default_realm: &str) -> Result<Rule> {
        let unmatched = |rest: &str| {
            invalid_rule(format!(
                "Invalid rule: `{rule}`, unmatched substring: `{rest}`"
            ))
        };
        if let Some(rest) = rule.strip_prefix("DEFAULT") {
            if !rest.is_empty() {
                return Err(unmatched(rest));
            }
            return Ok(Rule::Default {
                realm: default_realm.to_string(),
            });
        }
        let head = || -> Option<(&str, &str, &str)> {
            let text = rule.strip_prefix("RULE:[")?;
            let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let (number, text) = text.split_at(digits);
            let (format, text) = up_to(text.strip_prefix(':')?, ']')?;
            Some((number, format, text))
        };
        let Some((number, format, mut rest)) = head() else {
            return Err(invalid_rule(format!("Invalid rule: {rule}")));
        };
        let mut matcher = None;
        if let Some((pattern, after)) = rest.strip_prefix('(').and_then(|t| up_to(t, ')')) {
            matcher = Some(pattern);
            rest = after;
        }
        let mut substitution = None;
        if let Some((from, after)) = rest.strip_prefix("s/").and_then(|t| up_to(t, '/')) {
            if let Some((to, after)) = up_to(after, '/') {
                let (global, after) = match after.strip_prefix('g') {
                    Some(after) => (true, after),
                    None => (false, after),
                };
                substitution = Some((from, to, global));
                rest = after;
            }
        }
        rest = rest.strip_prefix('/').unwrap_or(rest);
        let case = if let Some(after) = rest.strip_prefix('L') {
            rest = after;
            Case::Lower
        } else if let Some(after) = rest.strip_prefix('U') {
            rest = after;
            Case::Upper
        } else {
            Case::Keep
        };
        if !rest.is_empty() {
            return Err(unmatched(rest));
        }
        // Kafka parses the count with Integer.parseInt: empty or over 2^31-1 is refused.
        let components = number.parse::<i32>().map_err(|_| {
            // Kafka lets Integer.parseInt's NumberFormatException through, with its text.
            invalid_rule(format!("For input string: \"{number}\""))
        })?;
        let matcher = match matcher {
            Some(pattern) => Some(JavaRegex::compile(rule, pattern, true)?),
            None => None,
        };
        let substitution = match substitution {
            Some((from, to, global)) => Some(Substitution {
                from: JavaRegex::compile(rule, from, false)?,
                to: to.to_string(),
                global,
            }),
            None => None,
        };
        Ok(Rule::Custom(CustomRule {
            components,
            format: format.to_string(),
            matcher,
            substitution,
            case,
        }))
    }

    /// The short name this rule gives, `None` when it does not apply.
    fn apply(&self, params: &[Option<&str>]) -> Result<Option<String>> {
        let result = match self {
            Rule::Default { realm } => match params[0] {
                Some(name_realm) if name_realm == realm => params[1].map(str::to_string),
                _ => None,
            },
            Rule::Custom(rule) => rule.apply(params)?,
        };
        let Some(result) = result else {
            return Ok(None);
        };
        if result.contains(['/', '@']) {
            return Err(failure(
                ErrorCode::KerberosNameUnmapped,
                "no_matching_rule",
                format!("Non-simple name {result} after auth_to_local rule {self}"),
            ));
        }
        let case = match self {
            Rule::Custom(rule) => rule.case,
            Rule::Default { .. } => Case::Keep,
        };
        Ok(Some(match case {
            Case::Keep => result,
            Case::Lower => result.to_lowercase(),
            Case::Upper => result.to_uppercase(),
        }))
    }
}

impl CustomRule {
    fn apply(&self, params: &[Option<&str>]) -> Result<Option<String>> {
        if i32::try_from(params.len() - 1) != Ok(self.components) {
            return Ok(None);
        }
        let base = expand_format(&self.format, params)?;
        if let Some(matcher) = &self.matcher {
            if !matcher.matches_whole(&base)? {
                return Ok(None);
            }
        }
        match &self.substitution {
            None => Ok(Some(base)),
            Some(sub) => sub.apply(&base).map(Some),
        }
    }
}

/// Expands `$n` in a rule's format: text up to each `$` is copied, and the digits after it
/// (as many as there are) select a parameter, `$0` the realm. No digits, a number Java cannot
/// parse or one past the last parameter is Kafka's `BadFormatString`. A missing realm is
/// written `null`, as Java's string builder writes it.
fn expand_format(format: &str, params: &[Option<&str>]) -> Result<String> {
    let bad = |message: String| failure(ErrorCode::InvalidConfig, "bad_format", message);
    let mut out = String::new();
    let mut rest = format;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let number = &after[..digits];
        let index = number
            .parse::<i32>()
            .map_err(|_| bad(format!("bad format in username mapping in {number}")))?;
        let param = usize::try_from(index)
            .ok()
            .and_then(|i| params.get(i))
            .ok_or_else(|| {
                bad(format!(
                    "index {index} from {format} is outside of the valid range 0 to {}",
                    params.len() - 1
                ))
            })?;
        out.push_str(param.unwrap_or("null"));
        rest = &after[digits..];
    }
    out.push_str(rest);
    Ok(out)
}

impl Substitution {
    /// Java's `replaceFirst` or `replaceAll`: after an empty match the search moves on by one
    /// character, after a non-empty one it starts where the match ended (so an empty match
    /// may follow it there), and the replacement is read afresh for every match.
    fn apply(&self, base: &str) -> Result<String> {
        self.from.check_input(base)?;
        let mut out = String::new();
        let mut copied = 0;
        let mut search = 0;
        while search <= base.len() {
            let Some(caps) = self.from.regex.captures_at(base, search) else {
                break;
            };
            let Some(whole) = caps.get(0) else { break };
            out.push_str(&base[copied..whole.start()]);
            self.expand(&caps, &mut out)?;
            copied = whole.end();
            if !self.global {
                break;
            }
            search = if whole.is_empty() {
                let next = base[whole.end()..].chars().next();
                if next.is_some_and(|c| c.len_utf16() == 2) {
                    // Java moves on by one UTF-16 unit, into the middle of this character,
                    // and may insert the replacement between its two halves.
                    return Err(failure(
                        ErrorCode::InvalidConfig,
                        "unsupported_regex",
                        format!(
                            "Unsupported regular expression `{}`: Java would look for a match inside a character outside the Basic Multilingual Plane",
                            self.from.source
                        ),
                    ));
                }
                whole.end() + next.map_or(1, char::len_utf8)
            } else {
                whole.end()
            };
        }
        out.push_str(&base[copied..]);
        Ok(out)
    }

    /// Appends the replacement for one match, with `Matcher.appendReplacement`'s reading of
    /// `\`, `$n` and `${name}`.
    fn expand(&self, caps: &Captures<'_>, out: &mut String) -> Result<()> {
        // The texts are java.util.regex.Matcher's.
        let bad = |what: &str| {
            failure(
                ErrorCode::InvalidConfig,
                "bad_replacement",
                what.to_string(),
            )
        };
        let groups = caps.len() - 1;
        let mut chars = self.to.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(
                    chars
                        .next()
                        .ok_or_else(|| bad("character to be escaped is missing"))?,
                ),
                '$' => {
                    let index = match chars.next() {
                        None => return Err(bad("Illegal group reference: group index is missing")),
                        Some('{') => {
                            let mut name = String::new();
                            while let Some(&n) = chars.peek() {
                                if !n.is_ascii_alphanumeric() {
                                    break;
                                }
                                name.push(n);
                                chars.next();
                            }
                            if name.is_empty() {
                                return Err(bad("named capturing group has 0 length name"));
                            }
                            if chars.next() != Some('}') {
                                return Err(bad("named capturing group is missing trailing '}'"));
                            }
                            if name.starts_with(|n: char| n.is_ascii_digit()) {
                                return Err(bad(&format!(
                                    "capturing group name {{{name}}} starts with digit character"
                                )));
                            }
                            self.from
                                .regex
                                .capture_names()
                                .position(|n| n == Some(name.as_str()))
                                .ok_or_else(|| bad(&format!("No group with name {{{name}}}")))?
                        }
                        Some(d) if d.is_ascii_digit() => {
                            let mut index = d as usize - '0' as usize;
                            // Further digits belong to the number while it names a group.
                            while let Some(&n) = chars.peek() {
                                let Some(digit) = n.to_digit(10).filter(|_| n.is_ascii()) else {
                                    break;
                                };
                                let longer = index * 10 + digit as usize;
                                if longer > groups {
                                    break;
                                }
                                index = longer;
                                chars.next();
                            }
                            if index > groups {
                                return Err(bad(&format!("No group {index}")));
                            }
                            index
                        }
                        Some(_) => return Err(bad("Illegal group reference")),
                    };
                    if let Some(group) = caps.get(index) {
                        out.push_str(group.as_str());
                    }
                }
                c => out.push(c),
            }
        }
        Ok(())
    }
}

impl fmt::Display for Rule {
    /// Kafka's `KerberosRule.toString`, which its error messages quote.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = match self {
            Rule::Default { .. } => return f.write_str("DEFAULT"),
            Rule::Custom(rule) => rule,
        };
        write!(f, "RULE:[{}:{}]", rule.components, rule.format)?;
        if let Some(matcher) = &rule.matcher {
            write!(f, "({})", matcher.source)?;
        }
        if let Some(sub) = &rule.substitution {
            write!(f, "s/{}/{}/", sub.from.source, sub.to)?;
            if sub.global {
                f.write_str("g")?;
            }
        }
        match rule.case {
            Case::Keep => Ok(()),
            Case::Lower => f.write_str("/L"),
            Case::Upper => f.write_str("/U"),
        }
    }
}

/// A `java.util.regex` expression translated for the `regex` crate.
#[derive(Clone, Debug)]
struct JavaRegex {
    source: String,
    regex: Regex,
    /// Whether the expression uses `$`, whose Java meaning differs before a final line
    /// terminator.
    uses_dollar: bool,
}

impl JavaRegex {
    /// Translates and compiles `source`; `whole` anchors it at both ends (Java's `matches`).
    fn compile(rule: &str, source: &str, whole: bool) -> Result<JavaRegex> {
        let refuse = |refusal: Refusal| match refusal {
            Refusal::Unsupported(why) => failure(
                ErrorCode::InvalidConfig,
                "unsupported_regex",
                format!("Unsupported regular expression `{source}` in rule `{rule}`: {why}"),
            ),
            Refusal::Invalid(why) => invalid_rule(format!(
                "Invalid rule: `{rule}`, bad regular expression `{source}`: {why}"
            )),
        };
        let translated = translate(source).map_err(refuse)?;
        let pattern = if whole {
            format!(r"\A(?:{})\z", translated.pattern)
        } else {
            translated.pattern
        };
        let regex = RegexBuilder::new(&pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                invalid_rule(format!(
                    "Invalid rule: `{rule}`, bad regular expression `{source}`: {}",
                    e.to_string().lines().last().unwrap_or_default().trim()
                ))
            })?;
        Ok(JavaRegex {
            source: source.to_string(),
            regex,
            uses_dollar: translated.uses_dollar,
        })
    }

    /// Refuses a text on which this expression would not behave as Java's.
    fn check_input(&self, text: &str) -> Result<()> {
        if self.uses_dollar && text.ends_with(LINE_TERMINATORS) {
            return Err(failure(
                ErrorCode::InvalidConfig,
                "unsupported_regex",
                format!(
                    "Unsupported regular expression `{}`: Java's `$` also matches before the line terminator that ends this name",
                    self.source
                ),
            ));
        }
        Ok(())
    }

    fn matches_whole(&self, text: &str) -> Result<bool> {
        self.check_input(text)?;
        Ok(self.regex.is_match(text))
    }
}

/// Why an expression is refused: Java refuses it too, or only ksasl does.
enum Refusal {
    Invalid(String),
    Unsupported(String),
}

fn invalid(why: &str) -> Refusal {
    Refusal::Invalid(why.to_string())
}

fn unsupported(why: &str) -> Refusal {
    Refusal::Unsupported(why.to_string())
}

struct Translated {
    pattern: String,
    uses_dollar: bool,
}

/// Java's POSIX property names (ASCII classes in Java) and the `regex` crate's names for them.
const POSIX_NAMES: &[(&str, &str)] = &[
    ("Lower", "lower"),
    ("Upper", "upper"),
    ("ASCII", "ascii"),
    ("Alpha", "alpha"),
    ("Digit", "digit"),
    ("Alnum", "alnum"),
    ("Punct", "punct"),
    ("Graph", "graph"),
    ("Print", "print"),
    ("Blank", "blank"),
    ("Cntrl", "cntrl"),
    ("XDigit", "xdigit"),
    ("Space", "space"),
];

/// A POSIX class, written for use inside or outside a bracketed class.
fn posix(name: &str, negated: bool, in_class: bool) -> String {
    let class = format!("[:{}{name}:]", if negated { "^" } else { "" });
    if in_class {
        class
    } else {
        format!("[{class}]")
    }
}

fn literal(c: char) -> String {
    regex::escape(c.encode_utf8(&mut [0; 4]))
}

fn code_point(value: u32) -> std::result::Result<String, Refusal> {
    match char::from_u32(value) {
        Some(c) => Ok(format!("\\x{{{:X}}}", c as u32)),
        None => Err(unsupported(&format!(
            "code point {value:#X} is a surrogate or out of range"
        ))),
    }
}

/// Rewrites a Java expression in the `regex` crate's syntax, refusing what cannot be
/// translated faithfully (the error says what).
fn translate(java: &str) -> std::result::Result<Translated, Refusal> {
    let chars: Vec<char> = java.chars().collect();
    let mut out = String::new();
    let mut uses_dollar = false;
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if in_class {
            match c {
                ']' => {
                    out.push(']');
                    in_class = false;
                }
                '[' => return Err(unsupported("a class inside a character class")),
                '&' if next == Some('&') => {
                    return Err(unsupported("a character class intersection (`&&`)"))
                }
                '-' if next == Some('-') => {
                    return Err(unsupported("`--` inside a character class"))
                }
                '\\' => {
                    i += escape(&chars, i, true, &mut out)?;
                    continue;
                }
                '&' | '~' => out.push_str(&literal(c)),
                c => out.push(c),
            }
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                i += escape(&chars, i, false, &mut out)?;
                continue;
            }
            '[' => {
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                // Java reads a `]` right after the opening bracket as a literal.
                if chars.get(i) == Some(&']') {
                    out.push_str(r"\]");
                    i += 1;
                }
                in_class = true;
                continue;
            }
            '(' if next == Some('?') => {
                let rest: String = chars[i + 2..].iter().take(2).collect();
                if rest.starts_with(':') {
                    out.push_str("(?:");
                    i += 3;
                    continue;
                }
                if rest.starts_with('=') || rest.starts_with('!') {
                    return Err(unsupported("lookahead"));
                }
                if rest == "<=" || rest == "<!" {
                    return Err(unsupported("lookbehind"));
                }
                if rest.starts_with('>') {
                    return Err(unsupported("an atomic group"));
                }
                if rest.starts_with('<') {
                    let name: String = chars[i + 3..].iter().take_while(|&&n| n != '>').collect();
                    let valid = name.starts_with(|n: char| n.is_ascii_alphabetic())
                        && name.chars().all(|n| n.is_ascii_alphanumeric());
                    if !valid || i + 3 + name.chars().count() >= chars.len() {
                        return Err(invalid("a malformed group name"));
                    }
                    out.push_str(&format!("(?<{name}>"));
                    i += 4 + name.chars().count();
                    continue;
                }
                return Err(unsupported("inline flags such as `(?i)`"));
            }
            '.' => out.push_str(r"[^\n\r\x{85}\x{2028}\x{2029}]"),
            '$' => {
                uses_dollar = true;
                out.push_str(r"\z");
            }
            '*' | '+' | '?' | '{' => {
                if c == '{' {
                    let body: String = chars[i + 1..].iter().take_while(|&&n| n != '}').collect();
                    let (low, high) = body.split_once(',').unwrap_or((&body, "0"));
                    let digits = |s: &str| !s.is_empty() && s.chars().all(|d| d.is_ascii_digit());
                    if i + 1 + body.chars().count() >= chars.len()
                        || !digits(low)
                        || !(high.is_empty() || digits(high))
                    {
                        return Err(invalid("a `{` that is not a repetition"));
                    }
                    out.push_str(&format!("{{{body}}}"));
                    i += body.chars().count() + 2;
                } else {
                    out.push(c);
                    i += 1;
                }
                match chars.get(i) {
                    Some('?') => {
                        out.push('?');
                        i += 1;
                    }
                    Some('+') => return Err(unsupported("a possessive quantifier")),
                    _ => {}
                }
                if matches!(chars.get(i), Some('*' | '+' | '?' | '{')) {
                    return Err(invalid("a quantifier after a quantifier"));
                }
                continue;
            }
            '(' | ')' | '|' | '^' => out.push(c),
            c => out.push_str(&literal(c)),
        }
        i += 1;
    }
    Ok(Translated {
        pattern: out,
        uses_dollar,
    })
}

/// Translates the escape at `chars[at]` (a backslash); returns how many characters it used.
fn escape(
    chars: &[char],
    at: usize,
    in_class: bool,
    out: &mut String,
) -> std::result::Result<usize, Refusal> {
    let Some(&e) = chars.get(at + 1) else {
        return Err(invalid("a `\\` at the end"));
    };
    let hex = |from: usize, len: usize| -> Option<u32> {
        let digits: String = chars.get(from..from + len)?.iter().collect();
        if digits.chars().all(|d| d.is_ascii_hexdigit()) {
            u32::from_str_radix(&digits, 16).ok()
        } else {
            None
        }
    };
    let used = match e {
        'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
            let name = match e.to_ascii_lowercase() {
                'd' => "digit",
                'w' => "word",
                _ => "space",
            };
            out.push_str(&posix(name, e.is_ascii_uppercase(), in_class));
            2
        }
        't' => {
            out.push_str(r"\t");
            2
        }
        'n' => {
            out.push_str(r"\n");
            2
        }
        'r' => {
            out.push_str(r"\r");
            2
        }
        'f' => {
            out.push_str(r"\f");
            2
        }
        'a' => {
            out.push_str(r"\x07");
            2
        }
        'e' => {
            out.push_str(r"\x1B");
            2
        }
        '0' => {
            let octal = |k: usize| chars.get(at + k).and_then(|d| d.to_digit(8));
            let Some(first) = octal(2) else {
                return Err(invalid("an octal escape without digits"));
            };
            let (value, used) = match (octal(3), octal(4)) {
                (Some(second), Some(third)) if first <= 3 => (first * 64 + second * 8 + third, 5),
                (Some(second), _) => (first * 8 + second, 4),
                (None, _) => (first, 3),
            };
            out.push_str(&code_point(value)?);
            used
        }
        'x' if chars.get(at + 2) == Some(&'{') => {
            let digits: String = chars[at + 3..].iter().take_while(|&&d| d != '}').collect();
            let ok = !digits.is_empty()
                && digits.len() <= 8
                && digits.chars().all(|d| d.is_ascii_hexdigit())
                && at + 3 + digits.len() < chars.len();
            if !ok {
                return Err(invalid("a malformed `\\x{...}` escape"));
            }
            let value = u32::from_str_radix(&digits, 16)
                .map_err(|_| invalid("a malformed `\\x{...}` escape"))?;
            out.push_str(&code_point(value)?);
            4 + digits.len()
        }
        'x' => {
            let value = hex(at + 2, 2).ok_or_else(|| invalid("a malformed `\\x` escape"))?;
            out.push_str(&code_point(value)?);
            4
        }
        'u' => {
            let value = hex(at + 2, 4).ok_or_else(|| invalid("a malformed `\\u` escape"))?;
            out.push_str(&code_point(value)?);
            6
        }
        'A' | 'z' if !in_class => {
            out.push('\\');
            out.push(e);
            2
        }
        'Q' if !in_class => {
            let mut k = at + 2;
            while k < chars.len() && !(chars[k] == '\\' && chars.get(k + 1) == Some(&'E')) {
                out.push_str(&literal(chars[k]));
                k += 1;
            }
            // Java quotes to the end of the expression when `\E` is missing.
            (k + 2).min(chars.len()) - at
        }
        'p' | 'P' => {
            let name: String = if chars.get(at + 2) == Some(&'{') {
                chars[at + 3..].iter().take_while(|&&d| d != '}').collect()
            } else {
                return Err(unsupported("a one-letter Unicode property"));
            };
            let Some((_, ours)) = POSIX_NAMES.iter().find(|(java, _)| *java == name) else {
                return Err(unsupported(&format!(
                    "the property `{name}` (only Java's POSIX names are supported)"
                )));
            };
            out.push_str(&posix(ours, e == 'P', in_class));
            4 + name.chars().count()
        }
        '1'..='9' | 'k' => return Err(unsupported("a backreference")),
        'b' | 'B' => {
            return Err(unsupported(
                "a word boundary (its meaning changed in JDK 19)",
            ))
        }
        'h' | 'H' | 'v' | 'V' | 'R' | 'X' | 'G' | 'Z' | 'N' | 'c' | 'E' | 'Q' => {
            return Err(unsupported(&format!("the escape `\\{e}`")));
        }
        c if c.is_ascii_alphanumeric() => {
            return Err(invalid(&format!("the escape `\\{c}`")));
        }
        c => {
            out.push_str(&literal(c));
            2
        }
    };
    Ok(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namer(realm: Option<&str>, rules: &[&str]) -> KerberosShortNamer {
        KerberosShortNamer::new(realm, rules).unwrap()
    }

    fn short(namer: &KerberosShortNamer, principal: &str) -> Result<String> {
        namer.short_name(&KerberosName::parse(principal)?)
    }

    fn reason(e: &Error) -> &str {
        e.detail(REASON_DETAIL).unwrap_or("")
    }

    #[test]
    fn names_split_like_kafka() {
        let n = KerberosName::parse("kafka/broker1.example.com@EXAMPLE.COM").unwrap();
        assert_eq!(
            (n.service_name(), n.host_name(), n.realm()),
            ("kafka", Some("broker1.example.com"), Some("EXAMPLE.COM"))
        );
        let n = KerberosName::parse("alice@EXAMPLE.COM").unwrap();
        assert_eq!((n.host_name(), n.realm()), (None, Some("EXAMPLE.COM")));
        let n = KerberosName::parse("kafka/host").unwrap();
        assert_eq!(
            (n.service_name(), n.host_name(), n.realm()),
            ("kafka/host", None, None)
        );
        let n = KerberosName::parse("/@").unwrap();
        assert_eq!(
            (n.service_name(), n.host_name(), n.realm()),
            ("", Some(""), Some(""))
        );
        for bad in ["a@b@c", "a/b/c@R", "a@R/x", "@@"] {
            let e = KerberosName::parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert_eq!(e.message(), format!("Malformed Kerberos name: {bad}"));
            assert_eq!(reason(&e), "malformed_name");
        }
        for s in ["a", "a/b@R", "a@R", "/@", "a/b/c"] {
            assert_eq!(KerberosName::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn default_rule_maps_the_default_realm_only() {
        let n = namer(Some("EXAMPLE.COM"), DEFAULT_RULES);
        assert_eq!(short(&n, "alice@EXAMPLE.COM").unwrap(), "alice");
        assert_eq!(short(&n, "kafka/h@EXAMPLE.COM").unwrap(), "kafka");
        assert_eq!(short(&n, "alice").unwrap(), "alice");
        let e = short(&n, "alice@OTHER.COM").unwrap_err();
        assert_eq!(e.code(), ErrorCode::KerberosNameUnmapped);
        assert_eq!(
            e.message(),
            "No rules apply to alice@OTHER.COM, rules [DEFAULT]"
        );
        // No default realm is Kafka's empty one.
        let n = namer(None, DEFAULT_RULES);
        assert_eq!(short(&n, "alice@").unwrap(), "alice");
        assert!(short(&n, "alice@EXAMPLE.COM").is_err());
    }

    #[test]
    fn kafka_test_rules() {
        let n = namer(
            Some("REALM.COM"),
            &[
                r"RULE:[1:$1](App\..*)s/App\.(.*)/$1/g",
                r"RULE:[2:$1](App\..*)s/App\.(.*)/$1/g",
                "DEFAULT",
            ],
        );
        assert_eq!(
            short(&n, "App.service-name/example.com@REALM.COM").unwrap(),
            "service-name"
        );
        assert_eq!(
            short(&n, "App.service-name@REALM.COM").unwrap(),
            "service-name"
        );
        assert_eq!(short(&n, "user/host@REALM.COM").unwrap(), "user");
        let lower = namer(
            Some("REALM.COM"),
            &[
                "RULE:[1:$1]/L",
                "RULE:[2:$1](Test.*)s/ABC///L",
                "RULE:[2:$1](ABC.*)s/ABC/XYZ/g/L",
                "RULE:[2:$1]/L",
                "DEFAULT",
            ],
        );
        assert_eq!(short(&lower, "User@REALM.COM").unwrap(), "user");
        assert_eq!(short(&lower, "TestABC/host@FOO.COM").unwrap(), "test");
        assert_eq!(
            short(&lower, "ABC_User_ABC/host@FOO.COM").unwrap(),
            "xyz_user_xyz"
        );
        let upper = namer(Some("R"), &["RULE:[2:$1](ABC.*)s/ABC/XYZ/U"]);
        assert_eq!(
            short(&upper, "ABC_User_ABC/host@FOO.COM").unwrap(),
            "XYZ_USER_ABC"
        );
    }

    #[test]
    fn invalid_rules_have_kafkas_texts() {
        for rule in ["default", "DEFAUL", "rule:[1:$1]", "RULE:[1:$1/L", ""] {
            let e = KerberosShortNamer::new(Some("R"), [rule]).unwrap_err();
            assert_eq!(e.message(), format!("Invalid rule: {rule}"));
            assert_eq!(
                (e.code(), reason(&e)),
                (ErrorCode::InvalidConfig, "invalid_rule")
            );
        }
        for (rule, rest) in [
            ("DEFAULT/L", "/L"),
            ("DEFAULT/g", "/g"),
            ("RULE:[1:$1]/L/U", "/U"),
            ("RULE:[1:$1]/LU", "U"),
            ("RULE:[1:$1]/l", "l"),
            ("RULE:[2:$1](ABC.*)s/ABC/XYZ/L/g", "/g"),
            ("RULE:[1:$1]s/a/b", "s/a/b"),
        ] {
            let e = KerberosShortNamer::new(Some("R"), [rule]).unwrap_err();
            assert_eq!(
                e.message(),
                format!("Invalid rule: `{rule}`, unmatched substring: `{rest}`")
            );
        }
        for rule in ["RULE:[:$1]", "RULE:[99999999999:$1]", "RULE:[1:$1](a(b)"] {
            assert_eq!(
                reason(&KerberosShortNamer::new(Some("R"), [rule]).unwrap_err()),
                "invalid_rule",
                "{rule}"
            );
        }
    }

    #[test]
    fn optional_parts_follow_the_grammar() {
        // `L` without a slash, a bare trailing slash, `g` then `L`, an empty match.
        let n = namer(Some("R"), &["RULE:[1:$1]L"]);
        assert_eq!(short(&n, "Al@R").unwrap(), "al");
        let n = namer(Some("R"), &["RULE:[1:$1]/"]);
        assert_eq!(short(&n, "Al@R").unwrap(), "Al");
        let n = namer(Some("R"), &["RULE:[1:$1]s/a/b/gL"]);
        assert_eq!(short(&n, "Aaa@R").unwrap(), "abb");
        assert_eq!(n.rule_list(), "[RULE:[1:$1]s/a/b/g/L]");
        let n = namer(Some("R"), &["RULE:[01:$1]()"]);
        assert_eq!(n.rule_list(), "[RULE:[1:$1]()]");
        assert!(short(&n, "a@R").is_err());
    }

    #[test]
    fn format_parameters() {
        let n = namer(Some("R"), &["RULE:[2:$2.$1.$0]"]);
        assert_eq!(short(&n, "a/b@R").unwrap(), "b.a.R");
        let n = namer(Some("R"), &["RULE:[1:$2]"]);
        let e = short(&n, "a@R").unwrap_err();
        assert_eq!(
            e.message(),
            "index 2 from $2 is outside of the valid range 0 to 1"
        );
        assert_eq!(reason(&e), "bad_format");
        let n = namer(Some("R"), &["RULE:[1:x$y]"]);
        assert_eq!(
            short(&n, "a@R").unwrap_err().message(),
            "bad format in username mapping in "
        );
        let n = namer(Some("R"), &["RULE:[1:$0001]"]);
        assert_eq!(short(&n, "a@R").unwrap(), "a");
        // No recursion: a `$` inside a parameter is copied.
        let n = namer(Some("R"), &["RULE:[1:$1]"]);
        assert_eq!(short(&n, "a$1@R").unwrap(), "a$1");
        // A constructed name without realm: Java writes `null`.
        let name = KerberosName::new("a", Some("b"), None);
        let n = namer(Some("R"), &["RULE:[2:$1$0]", "DEFAULT"]);
        assert_eq!(n.short_name(&name).unwrap(), "anull");
    }

    #[test]
    fn non_simple_results_stop_the_mapping() {
        let n = namer(Some("R"), &["RULE:[1:$1@$0]", "DEFAULT"]);
        let e = short(&n, "a@R").unwrap_err();
        assert_eq!(e.code(), ErrorCode::KerberosNameUnmapped);
        assert_eq!(
            e.message(),
            "Non-simple name a@R after auth_to_local rule RULE:[1:$1@$0]"
        );
        let n = namer(Some("R"), &[r"RULE:[2:$1@$0](.*@R)s/@.*//", "DEFAULT"]);
        assert_eq!(short(&n, "kafka/h@R").unwrap(), "kafka");
    }

    #[test]
    fn substitutions_follow_java() {
        let n = namer(Some("R"), &["RULE:[1:$1]s/a*/x/g"]);
        assert_eq!(short(&n, "baaac@R").unwrap(), "xbxxcx");
        let n = namer(Some("R"), &["RULE:[1:$1]s///g"]);
        assert_eq!(short(&n, "ab@R").unwrap(), "ab");
        let n = namer(Some("R"), &["RULE:[1:$1]s/(a)(b)/$2$1$12\\$/g"]);
        assert_eq!(short(&n, "abab@R").unwrap(), "baa2$baa2$");
        let n = namer(Some("R"), &["RULE:[1:$1]s/(?<x>a)/${x}${x}/"]);
        assert_eq!(short(&n, "ab@R").unwrap(), "aab");
        for rule in [
            "RULE:[1:$1]s/a/$2/",
            "RULE:[1:$1]s/a/$/",
            "RULE:[1:$1]s/a/\\/",
        ] {
            let n = namer(Some("R"), &[rule]);
            assert_eq!(reason(&short(&n, "a@R").unwrap_err()), "bad_replacement");
            // Only a match reads the replacement.
            assert_eq!(short(&n, "b@R").unwrap(), "b");
        }
    }

    #[test]
    fn java_regex_translation() {
        let n = namer(Some("R"), &[r"RULE:[1:$1](\w+\d)", "RULE:[1:x]"]);
        assert_eq!(short(&n, "ab1@R").unwrap(), "ab1");
        assert_eq!(short(&n, "é1@R").unwrap(), "x");
        let n = namer(Some("R"), &[r"RULE:[1:$1](\p{Lower}+)", "RULE:[1:x]"]);
        assert_eq!(short(&n, "abc@R").unwrap(), "abc");
        assert_eq!(short(&n, "abé@R").unwrap(), "x");
        let n = namer(Some("R"), &[r"RULE:[1:$1](a.b)", "RULE:[1:x]"]);
        assert_eq!(short(&n, "a\rb@R").unwrap(), "x");
        let n = namer(Some("R"), &[r"RULE:[1:$1](\Qa.b\E)", "RULE:[1:x]"]);
        assert_eq!(short(&n, "a.b@R").unwrap(), "a.b");
        assert_eq!(short(&n, "axb@R").unwrap(), "x");
        let n = namer(Some("R"), &[r"RULE:[1:$1](a$)", "RULE:[1:x]"]);
        assert_eq!(short(&n, "a@R").unwrap(), "a");
        assert_eq!(
            reason(&short(&n, "a\n@R").unwrap_err()),
            "unsupported_regex"
        );
        for pattern in [
            r"(a)\1", "(?=a)a", "(?<=a)b", "(?>a)", "a*+", "(?i)a", r"\bA", "[a&&b]", "[[a]]",
            r"\p{L}", r"\R",
        ] {
            // The match part cannot hold `)`, so the expressions go in the substitution.
            let rule = format!("RULE:[1:$1]s/{pattern}/x/");
            let e = KerberosShortNamer::new(Some("R"), [&rule]).unwrap_err();
            assert_eq!(
                reason(&e),
                "unsupported_regex",
                "{pattern}: {}",
                e.message()
            );
            assert_eq!(e.code(), ErrorCode::InvalidConfig);
        }
    }

    #[test]
    fn expressions_java_refuses_are_invalid_rules() {
        for pattern in ["a{,2}", "a**", r"\y", r"\x1", "(?<1a>b)", r"\0"] {
            let rule = format!("RULE:[1:$1]s/{pattern}/x/");
            let e = KerberosShortNamer::new(Some("R"), [&rule]).unwrap_err();
            assert_eq!(reason(&e), "invalid_rule", "{pattern}: {}", e.message());
        }
        let e = KerberosShortNamer::new(Some("R"), ["RULE:[99999999999:$1]"]).unwrap_err();
        assert_eq!(e.message(), "For input string: \"99999999999\"");
        // A `]` first in a class is a literal, as in Java.
        let n = namer(Some("R"), &["RULE:[1:$1]s/[]a]/x/g"]);
        assert_eq!(short(&n, "a]b@R").unwrap(), "xxb");
    }

    #[test]
    fn empty_matches_before_astral_characters_are_refused() {
        let n = namer(Some("R"), &["RULE:[1:$1]s//x/g"]);
        assert_eq!(short(&n, "ab@R").unwrap(), "xaxbx");
        let e = short(&n, "a\u{1F600}b@R").unwrap_err();
        assert_eq!(reason(&e), "unsupported_regex");
        // Without `g` only the first position is tried.
        let n = namer(Some("R"), &["RULE:[1:$1]s//x/"]);
        assert_eq!(short(&n, "\u{1F600}@R").unwrap(), "x\u{1F600}");
    }

    #[test]
    fn config_values_split_like_kafka() {
        assert_eq!(parse_rule_list("  ").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse_rule_list(" RULE:[1:$1]/L ,\tDEFAULT ,\n RULE:[1:$1]/L\x0B").unwrap(),
            vec!["RULE:[1:$1]/L".to_string(), "DEFAULT".to_string()]
        );
        assert_eq!(parse_rule_list("RULE:[1:$1]s/a{1,3}/x/").unwrap().len(), 2);
        for bad in ["DEFAULT,", ",DEFAULT", " , ", "DEFAULT,,DEFAULT"] {
            let e = parse_rule_list(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidConfig);
            assert_eq!(
                e.message(),
                "Configuration 'sasl.kerberos.principal.to.local.rules' values must not be empty."
            );
        }
        let n = KerberosShortNamer::from_config_value(Some("R"), "").unwrap();
        assert_eq!(short(&n, "a").unwrap(), "a");
        assert_eq!(
            short(&n, "a@R").unwrap_err().message(),
            "No rules apply to a@R, rules []"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(
            rules in proptest::collection::vec(
                proptest::string::string_regex(
                    r"(DEFAULT|RULE:\[[0-3]?:[$0-9a-z@/.]{0,6}\](\([\\()\[\]\.*+?{}a-z0-9$^|&<=!-]{0,8}\))?(s/[\\()\[\]\.*+?{}a-z0-9$^|]{0,6}/[\\$a-z0-9{}]{0,4}/g?)?/?[LUx]?)|.{0,12}"
                ).unwrap(),
                0..4,
            ),
            principal in r"[a-zA-Z0-9$@/.\n\\]{0,12}",
            realm in proptest::option::of("[A-Z@]{0,3}"),
        ) {
            if let Ok(namer) = KerberosShortNamer::new(realm.as_deref(), &rules) {
                let _ = namer.to_string();
                if let Ok(name) = KerberosName::parse(&principal) {
                    let _ = namer.short_name(&name);
                }
            }
        }
    }
}
