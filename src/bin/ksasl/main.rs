//! `ksasl`: answers to the SASL questions Kafka users ask when authentication fails, built on
//! the library's public API.
//!
//! Exit codes: 0 done (a valid configuration, an accepted token), 1 the answer is "no" (an
//! invalid configuration, a refused token, a failure), 2 a usage error, 3 a valid
//! configuration with warnings or names the library does not know.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use ksasl::config::{check_properties, ConfigReport, Properties, ServerMechanism, ServerSettings};
use ksasl::credential::scram::MIN_ITERATIONS;
use ksasl::kafka::scram_credentials::{
    error_code, mechanism_from_wire, AlterScramRequest, AlterScramResponse, DescribeScramRequest,
    DescribeScramResponse, ScramUpsertion,
};
use ksasl::mech::oauthbearer::{decode_jwt, JwksValidator, JwtValidatorConfig, TokenValidator};
use ksasl::{OsRandom, ScramCredential, ScramMechanism};

const USAGE: &str = "\
ksasl: SASL answers for Kafka users

Usage:
  ksasl config check FILE [--listener NAME]
  ksasl config names
  ksasl scram-credential --mechanism SCRAM-SHA-256|SCRAM-SHA-512 [--iterations N] [--user NAME]
                         [--bootstrap HOST:PORT --config admin.properties]
  ksasl token decode TOKEN|-
  ksasl token validate TOKEN|- --jwks FILE|URL [options]
  ksasl probe --bootstrap HOST:PORT --config client.properties [--reauth N]
  ksasl version

Run `ksasl COMMAND --help` for a command's options. Exit codes: 0 done, 1 invalid or refused,
2 usage error, 3 valid with warnings or unknown names.
";

const CONFIG_USAGE: &str = "\
Usage: ksasl config check FILE [--listener NAME]
       ksasl config names

names: every property name ksasl reads, one per line after its origin: kafka (Kafka's client
or broker configuration), librdkafka, or ksasl (ksasl's own, prefixed ksasl.).

check: reads FILE (a .properties file, or - for standard input) as ksasl reads it: a client
configuration by Kafka's names (sasl.mechanism, sasl.jaas.config, sasl.login.*,
sasl.oauthbearer.*) or librdkafka's (sasl.mechanisms, sasl.username, ...), or a broker's
server.properties (each SASL listener of `listeners`, or the one named by --listener).
Prints the effective settings (secrets as [hidden]), the sasl.* names it does not know and the
settings without effect. Exit: 0 clean, 1 invalid (the error names the key, the expected form
and Kafka's default), 3 valid with warnings or unknown names.
";

const SCRAM_USAGE: &str = "\
Usage: ksasl scram-credential --mechanism SCRAM-SHA-256|SCRAM-SHA-512 [--iterations N] [--user NAME]
                              [--bootstrap HOST:PORT --config admin.properties]

Reads a password from standard input (a prompt without echo on a terminal; never from the
command line) and prints a new SCRAM credential for it, with a random salt:
  - Kafka's credential string (salt, stored_key, server_key, iterations), as kafka-configs
    --describe shows it and as ksasl's credential stores take it;
  - the salt and salted password (base64) for kafka-storage format --add-scram and the
    AlterUserScramCredentials API, which carry no password.
--iterations: 4096 (Kafka's default and minimum) to 16384.
--bootstrap, --config: also sets it on a broker (or a ksasl server) for --user, through the
AlterUserScramCredentials API (KIP-554) on a connection authenticated as admin.properties says,
then reads it back with DescribeUserScramCredentials. Exit 0 set, 1 refused (the broker's error
is printed), 2 usage error.
";

const TOKEN_USAGE: &str = "\
Usage: ksasl token decode TOKEN|-
       ksasl token validate TOKEN|- --jwks FILE|URL [--issuer ISS] [--audience AUD[,AUD...]]
                           [--clock-skew-seconds N] [--sub-claim-name NAME]
                           [--scope-claim-name NAME] [--config server.properties --listener NAME]
                           [--now-ms MS]

decode: shows an OAUTHBEARER token's header and claims, its principal and the time it has
left. Nothing is checked; the signature is not shown.
validate: the verdict of ksasl's JWKS validator, with the settings a broker would use: given
as options, or read from a broker's server.properties (--config, --listener: its OAUTHBEARER
listener with sasl.oauthbearer.* settings). --jwks is a JWKS document in a file or at an
http(s) URL. Exit 0 accepted, 1 refused.
--now-ms: judge the token as of this instant (ms since the epoch) instead of now.
TOKEN - reads the token from standard input (tokens are secrets: keep them out of argv and
shell history).
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None | Some("--help") | Some("-h") | Some("help") => {
            print!("{USAGE}");
            Ok(0)
        }
        Some("version") | Some("--version") => {
            println!("ksasl {}", ksasl::VERSION);
            Ok(0)
        }
        Some("config") => config(&args[1..]),
        Some("scram-credential") => scram_credential(&args[1..]),
        Some("token") => token(&args[1..]),
        Some("probe") => probe::run(&args[1..]),
        Some(other) => Err(Failure::Usage(format!("unknown command \"{other}\""))),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Usage(m)) => {
            eprintln!("ksasl: {m}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Error(m)) => {
            eprintln!("ksasl: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Quiet) => ExitCode::from(1),
    }
}

enum Failure {
    Usage(String),
    Error(String),
    /// Already explained on standard output: exit 1 without another message.
    Quiet,
}

impl From<ksasl::Error> for Failure {
    fn from(e: ksasl::Error) -> Self {
        Failure::Error(format!("{}: {}", e.code().name(), e.message()))
    }
}

type Outcome = Result<u8, Failure>;

/// Options after the positional arguments: `--name value` pairs, and `--help`.
struct Options {
    positional: Vec<String>,
    named: Vec<(String, String)>,
    help: bool,
}

fn options(args: &[String], allowed: &[&str]) -> Result<Options, Failure> {
    let mut o = Options {
        positional: Vec::new(),
        named: Vec::new(),
        help: false,
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--help" || a == "-h" {
            o.help = true;
        } else if let Some(name) = a.strip_prefix("--") {
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None => {
                    i += 1;
                    let v = args
                        .get(i)
                        .ok_or_else(|| Failure::Usage(format!("--{name} needs a value")))?;
                    (name.to_string(), v.clone())
                }
            };
            if !allowed.contains(&name.as_str()) {
                return Err(Failure::Usage(format!("unknown option --{name}")));
            }
            o.named.push((name, value));
        } else {
            o.positional.push(a.clone());
        }
        i += 1;
    }
    Ok(o)
}

impl Options {
    fn get(&self, name: &str) -> Option<&str> {
        self.named
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn read_input(path: &str) -> Result<Vec<u8>, Failure> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Failure::Error(format!("cannot read standard input: {e}")))?;
        return Ok(buf);
    }
    std::fs::read(path).map_err(|e| Failure::Error(format!("cannot read {path}: {e}")))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

// ----------------------------------------------------------------------------------------
// config check

fn config(args: &[String]) -> Outcome {
    let o = options(args, &["listener"])?;
    if o.help {
        print!("{CONFIG_USAGE}");
        return Ok(0);
    }
    if o.positional.len() == 1 && o.positional[0] == "names" && o.named.is_empty() {
        for (origin, name) in ksasl::config::known_names() {
            println!("{origin} {name}");
        }
        return Ok(0);
    }
    let [check, file] = o.positional.as_slice() else {
        return Err(Failure::Usage("config check needs one FILE".into()));
    };
    if check != "check" {
        return Err(Failure::Usage(format!(
            "unknown config command \"{check}\""
        )));
    }
    let props = Properties::parse_bytes(&read_input(file)?)?;
    let reports = check_properties(&props, o.get("listener"))?;
    for r in &reports {
        print!("{}", r.to_text());
    }
    let doubtful = reports
        .iter()
        .any(|r: &ConfigReport| !r.unknown.is_empty() || !r.warnings.is_empty());
    Ok(if doubtful { 3 } else { 0 })
}

// ----------------------------------------------------------------------------------------
// scram-credential

fn read_password() -> Result<String, Failure> {
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    // On a terminal, turn echo off while the password is typed (stty works on stdin).
    let stty = |arg: &str| {
        std::process::Command::new("stty")
            .arg(arg)
            .stdin(std::process::Stdio::inherit())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    let echo_off = terminal && {
        eprint!("Password: ");
        let _ = std::io::stderr().flush();
        stty("-echo")
    };
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if echo_off {
        stty("echo");
        eprintln!();
    }
    read.map_err(|e| Failure::Error(format!("cannot read the password: {e}")))?;
    let password = line.trim_end_matches(['\n', '\r']).to_string();
    if password.is_empty() {
        return Err(Failure::Error(
            "no password on standard input (give it on the first line)".into(),
        ));
    }
    Ok(password)
}

fn scram_credential(args: &[String]) -> Outcome {
    use base64::Engine;
    let o = options(
        args,
        &["mechanism", "iterations", "user", "bootstrap", "config"],
    )?;
    if o.help {
        print!("{SCRAM_USAGE}");
        return Ok(0);
    }
    if !o.positional.is_empty() {
        return Err(Failure::Usage(
            "scram-credential reads the password from standard input, not from arguments".into(),
        ));
    }
    let name = o
        .get("mechanism")
        .ok_or_else(|| Failure::Usage("--mechanism is required".into()))?;
    let mechanism = ScramMechanism::try_from_name(name)?;
    let iterations = match o.get("iterations") {
        None => MIN_ITERATIONS,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| (MIN_ITERATIONS..=16384).contains(n))
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "--iterations must be a number from {MIN_ITERATIONS} to 16384"
                ))
            })?,
    };
    let remote = match (o.get("bootstrap"), o.get("config"), o.get("user")) {
        (None, None, _) => None,
        (Some(b), Some(c), Some(u)) => Some((b, c, u)),
        (Some(_), Some(_), None) => {
            return Err(Failure::Usage(
                "--bootstrap needs --user: whose credential to set".into(),
            ))
        }
        _ => {
            return Err(Failure::Usage(
                "--bootstrap and --config go together".into(),
            ))
        }
    };
    let password = read_password()?;
    let credential =
        ScramCredential::generate(mechanism, password.as_bytes(), iterations, &OsRandom)?;
    let salted = mechanism.salted_password(password.as_bytes(), credential.salt(), iterations);
    let b64 = base64::engine::general_purpose::STANDARD;
    let user = o.get("user").unwrap_or("USER");
    println!("mechanism: {}", mechanism.name());
    println!("credential: {}", credential.to_kafka_string());
    println!("salt: {}", b64.encode(credential.salt()));
    println!("salted_password: {}", b64.encode(salted.expose()));
    println!("iterations: {iterations}");
    println!(
        "kafka-storage: --add-scram '{}=[name={user},iterations={iterations},salt=\"{}\",saltedpassword=\"{}\"]'",
        mechanism.name(),
        b64.encode(credential.salt()),
        b64.encode(salted.expose())
    );
    println!(
        "kafka-configs: --alter --entity-type users --entity-name {user} --add-config '{}=[iterations={iterations},password=...]' (it takes the password itself and salts it)",
        mechanism.name()
    );
    match remote {
        None => Ok(0),
        Some((bootstrap, file, user)) => {
            let upsertion = ScramUpsertion {
                name: user.to_string(),
                mechanism: mechanism.kafka_type_id(),
                iterations: iterations as i32,
                salt: credential.salt().to_vec(),
                salted_password: salted,
            };
            set_remotely(bootstrap, file, user, mechanism, upsertion)
        }
    }
}

/// AlterUserScramCredentials with the credential just printed, then a describe to show it.
fn set_remotely(
    bootstrap: &str,
    file: &str,
    user: &str,
    mechanism: ScramMechanism,
    upsertion: ScramUpsertion,
) -> Outcome {
    let request = AlterScramRequest {
        deletions: vec![],
        upsertions: vec![upsertion],
    };
    let answer = probe::admin_request(bootstrap, file, |corr| {
        request.encode_request(corr, Some("ksasl"))
    });
    let frame = match answer {
        Ok(f) => f,
        Err(Failure::Quiet) => return Ok(1),
        Err(f) => return Err(f),
    };
    let (_, response) = AlterScramResponse::parse_response(&frame)?;
    let refused: Vec<_> = response
        .results
        .iter()
        .filter(|r| r.error_code != 0)
        .collect();
    if let Some(r) = refused.first() {
        println!(
            "refused: {} ({}): {}",
            error_code::name(r.error_code).unwrap_or("KAFKA_ERROR"),
            r.error_code,
            r.error_message.as_deref().unwrap_or("")
        );
        return Ok(1);
    }
    println!("set: {} for {user} at {bootstrap}", mechanism.name());
    // The broker applies it through its metadata log: a describe may lag for a moment.
    let describe = DescribeScramRequest {
        users: Some(vec![user.to_string()]),
    };
    for attempt in 0..20 {
        let frame = match probe::admin_request(bootstrap, file, |corr| {
            describe.encode_request(corr, Some("ksasl"))
        }) {
            Ok(f) => f,
            Err(Failure::Quiet) => return Ok(1),
            Err(f) => return Err(f),
        };
        let (_, d) = DescribeScramResponse::parse_response(&frame)?;
        let shown: Vec<String> = d
            .results
            .iter()
            .flat_map(|r| r.credential_infos.iter())
            .filter_map(|c| {
                mechanism_from_wire(c.mechanism)
                    .map(|m| format!("{}=[iterations={}]", m.name(), c.iterations))
            })
            .collect();
        if shown.iter().any(|s| s.starts_with(mechanism.name())) || attempt == 19 {
            println!("described: {user}: {}", shown.join(", "));
            return Ok(0);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Ok(0)
}

// ----------------------------------------------------------------------------------------
// token decode | validate

fn utc(ms: i64) -> String {
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn span(ms: i64) -> String {
    let s = ms.abs() / 1000;
    let text = match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    };
    if ms < 0 {
        format!("{text} ago")
    } else {
        format!("in {text}")
    }
}

fn read_token(arg: &str) -> Result<String, Failure> {
    let raw = if arg == "-" {
        String::from_utf8(read_input("-")?)
            .map_err(|_| Failure::Error("the token is not UTF-8".into()))?
    } else {
        arg.to_string()
    };
    Ok(raw.trim().to_string())
}

fn token(args: &[String]) -> Outcome {
    let o = options(
        args,
        &[
            "jwks",
            "issuer",
            "audience",
            "clock-skew-seconds",
            "sub-claim-name",
            "scope-claim-name",
            "config",
            "listener",
            "now-ms",
        ],
    )?;
    if o.help {
        print!("{TOKEN_USAGE}");
        return Ok(0);
    }
    match o.positional.as_slice() {
        [cmd, t] if cmd == "decode" => decode(&read_token(t)?, &o),
        [cmd, t] if cmd == "validate" => validate(&read_token(t)?, &o),
        _ => Err(Failure::Usage(
            "token decode TOKEN|- or token validate TOKEN|- --jwks FILE|URL".into(),
        )),
    }
}

/// `--now-ms`, or the clock.
fn instant(o: &Options) -> Result<i64, Failure> {
    match o.get("now-ms") {
        None => Ok(now_ms()),
        Some(v) => v
            .parse::<i64>()
            .map_err(|_| Failure::Usage("--now-ms must be ms since the epoch".into())),
    }
}

fn decode(token: &str, o: &Options) -> Outcome {
    if o.named.iter().any(|(n, _)| n != "now-ms") {
        return Err(Failure::Usage("token decode takes only --now-ms".into()));
    }
    let d = decode_jwt(token)?;
    let pretty =
        |m| serde_json::to_string_pretty(&serde_json::Value::Object(m)).unwrap_or_default();
    println!("header: {}", pretty(d.header.clone()));
    println!("claims: {}", pretty(d.claims.clone()));
    println!(
        "signed: {}",
        if d.signed {
            "yes"
        } else {
            "no (an unsecured token)"
        }
    );
    if let Some(sub) = d.string_claim("sub") {
        println!("principal (sub): {sub}");
    }
    let now = instant(o)?;
    if let Some(iat) = d.time_claim_ms("iat") {
        println!("issued: {} ({})", utc(iat), span(iat - now));
    }
    match d.time_claim_ms("exp") {
        Some(exp) if exp <= now => println!("expires: {} (expired {})", utc(exp), span(exp - now)),
        Some(exp) => println!("expires: {} ({})", utc(exp), span(exp - now)),
        None => println!("expires: never (no exp claim: Kafka refuses such a token)"),
    }
    Ok(0)
}

fn jwks_document(source: &str) -> Result<String, Failure> {
    let lower = source.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        #[cfg(feature = "http")]
        {
            let client = ksasl::io::http::HttpSettings::default().client()?;
            let response = client.get(source)?;
            if response.status != 200 {
                return Err(Failure::Error(format!(
                    "the JWKS endpoint answered HTTP {}",
                    response.status
                )));
            }
            return String::from_utf8(response.body)
                .map_err(|_| Failure::Error("the JWKS document is not UTF-8".into()));
        }
        #[cfg(not(feature = "http"))]
        return Err(Failure::Error(
            "this ksasl was built without HTTP: give the JWKS as a file".into(),
        ));
    }
    String::from_utf8(read_input(source)?)
        .map_err(|_| Failure::Error(format!("{source} is not UTF-8")))
}

fn validate(token: &str, o: &Options) -> Outcome {
    let mut config = JwtValidatorConfig::default();
    let mut jwks = o.get("jwks").map(str::to_string);
    if let Some(file) = o.get("config") {
        let listener = o
            .get("listener")
            .ok_or_else(|| Failure::Usage("--config needs --listener".into()))?;
        let props = Properties::parse_bytes(&read_input(file)?)?;
        let settings = ServerSettings::from_properties(&props, listener)?;
        match settings.mechanisms.get("OAUTHBEARER") {
            Some(ServerMechanism::JwksOAuthBearer {
                jwks_endpoint_url,
                validator,
                ..
            }) => {
                config = validator.clone();
                jwks.get_or_insert_with(|| jwks_endpoint_url.clone());
            }
            _ => {
                return Err(Failure::Error(format!(
                    "listener {listener} does not validate OAUTHBEARER tokens against a JWKS \
                     endpoint"
                )))
            }
        }
    }
    if let Some(v) = o.get("issuer") {
        config.expected_issuer = Some(v.to_string());
    }
    if let Some(v) = o.get("audience") {
        config.expected_audiences = v.split(',').map(|s| s.trim().to_string()).collect();
    }
    if let Some(v) = o.get("clock-skew-seconds") {
        let s: i64 =
            v.parse().ok().filter(|s| *s >= 0).ok_or_else(|| {
                Failure::Usage("--clock-skew-seconds must be a number >= 0".into())
            })?;
        config.clock_skew_ms = s * 1000;
    }
    if let Some(v) = o.get("sub-claim-name") {
        config.subject_claim_name = v.to_string();
    }
    if let Some(v) = o.get("scope-claim-name") {
        config.scope_claim_name = v.to_string();
    }
    let jwks = jwks.ok_or_else(|| Failure::Usage("token validate needs --jwks".into()))?;
    let now = instant(o)?;
    let validator = Arc::new(JwksValidator::new(config)?);
    let keys = validator.set_jwks(&jwks_document(&jwks)?, now)?;
    println!("keys: {keys} ({})", validator.key_ids().join(", "));
    match validator.validate(token, now) {
        Ok(v) => {
            println!("verdict: accepted");
            println!("principal: {}", v.principal);
            println!(
                "expires: {} ({})",
                utc(v.expiry_ms),
                span(v.expiry_ms - now)
            );
            if !v.scope.is_empty() {
                println!("scope: {}", v.scope.join(" "));
            }
            Ok(0)
        }
        Err(r) => {
            println!("verdict: refused");
            println!("code: {}", r.code.name());
            println!("reason: {}", r.reason);
            println!("status sent to the client: {}", r.status);
            Ok(1)
        }
    }
}

mod probe;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(span(90_000), "in 90 s");
        assert_eq!(span(-7_200_000), "2 h 0 min ago");
    }
}
