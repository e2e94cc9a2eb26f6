//! `ksasl probe`: connects to a broker as a client configured by `client.properties` would,
//! shows what the broker offers, authenticates, and optionally stays for re-authentications,
//! explaining a failure in terms of what to fix.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use ksasl::config::{ClientLogin, ClientSettings, Properties};
use ksasl::kafka::client::{ClientConnection, ClientEvent};
use ksasl::kafka::codec::{decode_response, encode_request};
use ksasl::kafka::messages::{
    ApiVersionsRequest, ApiVersionsResponse, SaslHandshakeRequest, SaslHandshakeResponse,
    API_VERSIONS, SASL_AUTHENTICATE, SASL_HANDSHAKE,
};
use ksasl::{Error, ErrorCode, SharedRandom};

use super::{now_ms, options, read_input, span, Failure, Outcome};

const PROBE_USAGE: &str = "\
Usage: ksasl probe --bootstrap HOST:PORT --config client.properties [--reauth N]
                   [--timeout-ms MS]

Connects to HOST:PORT as a client configured by client.properties (Kafka's or librdkafka's
names; TLS when security.protocol is SASL_SSL, trusting the PEM certificates of
ssl.truststore.location or ssl.truststore.certificates), prints the broker's API versions and
the mechanisms its listener enables, authenticates, and prints the login and the session
lifetime the broker granted. With --reauth N it stays connected for N re-authentications (a new
token first when one is due), printing each as it happens. On failure it prints the broker's
error and what it most likely means. Exit: 0 authenticated, 1 failed, 2 usage error.
--timeout-ms: for connecting and for each answer (default 10000).
";

/// The most a probe reads from a broker in one frame.
const MAX_FRAME: usize = 1 << 20;

enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "http")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.write_all(bytes).and_then(|_| s.flush()),
            #[cfg(feature = "http")]
            Stream::Tls(s) => s.write_all(bytes).and_then(|_| s.flush()),
        }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.read_exact(buf),
            #[cfg(feature = "http")]
            Stream::Tls(s) => s.read_exact(buf),
        }
    }

    /// One response frame, without its length prefix.
    fn read_frame(&mut self) -> Result<Vec<u8>, Failure> {
        let mut len = [0u8; 4];
        self.read_exact(&mut len).map_err(io_failure)?;
        let len = i32::from_be_bytes(len);
        if len < 0 || len as usize > MAX_FRAME {
            return Err(Failure::Error(format!(
                "the broker sent a frame of {len} bytes: is this a Kafka listener (and TLS as \
                 security.protocol says)?"
            )));
        }
        let mut body = vec![0u8; len as usize];
        self.read_exact(&mut body).map_err(io_failure)?;
        Ok(body)
    }
}

fn io_failure(e: std::io::Error) -> Failure {
    let hint = match e.kind() {
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => {
            "the broker closed the connection: a listener with another security.protocol \
             (SASL_SSL against SASL_PLAINTEXT or the reverse), or one without SASL?"
        }
        std::io::ErrorKind::InvalidData if e.to_string().contains("certificate") => {
            "the broker's certificate is not trusted: ssl.truststore.location must hold the CA \
             that signed it, and the certificate must name the host of --bootstrap"
        }
        std::io::ErrorKind::InvalidData => {
            "not a TLS answer: is this listener SASL_PLAINTEXT (security.protocol says SASL_SSL)?"
        }
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            "no answer in time: a TLS listener reached without TLS, or a broker under load?"
        }
        _ => "",
    };
    Failure::Error(format!(
        "{e}{}{hint}",
        if hint.is_empty() { "" } else { ": " }
    ))
}

#[cfg(feature = "http")]
fn tls_config(props: &Properties) -> Result<std::sync::Arc<rustls::ClientConfig>, Failure> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    if let Some(t) = props.get("ssl.truststore.type") {
        if !t.trim().eq_ignore_ascii_case("PEM") {
            return Err(Failure::Error(format!(
                "ssl.truststore.type is {}: ksasl probe reads PEM certificates (convert the \
                 trust store: keytool -exportcert -rfc, and set ssl.truststore.type=PEM)",
                t.trim()
            )));
        }
    }
    let pem = match (
        props.get("ssl.truststore.certificates"),
        props
            .get("ssl.truststore.location")
            .or(props.get("ssl.ca.location")),
    ) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(file)) => std::fs::read(file.trim()).map_err(|e| {
            Failure::Error(format!("cannot read the trust store {}: {e}", file.trim()))
        })?,
        (None, None) => std::fs::read("/etc/ssl/certs/ca-certificates.crt").map_err(|_| {
            Failure::Error(
                "no trust store: set ssl.truststore.location (PEM) to the broker's CA".into(),
            )
        })?,
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| Failure::Error(format!("the trust store is not PEM: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| Failure::Error(format!("a trusted certificate is unusable: {e}")))?;
    }
    if roots.is_empty() {
        return Err(Failure::Error(
            "the trust store holds no certificate".into(),
        ));
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Failure::Error(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(std::sync::Arc::new(config))
}

struct Target {
    host: String,
    timeout: Duration,
    #[cfg(feature = "http")]
    tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl Target {
    fn connect(&self) -> Result<Stream, Failure> {
        let addrs: Vec<_> = self
            .host
            .to_socket_addrs()
            .map_err(|e| Failure::Error(format!("cannot resolve {}: {e}", self.host)))?
            .collect();
        let mut last = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, self.timeout) {
                Ok(s) => {
                    s.set_read_timeout(Some(self.timeout)).map_err(io_failure)?;
                    s.set_write_timeout(Some(self.timeout))
                        .map_err(io_failure)?;
                    let _ = s.set_nodelay(true);
                    #[cfg(feature = "http")]
                    if let Some(tls) = &self.tls {
                        let name = self
                            .host
                            .rsplit_once(':')
                            .map_or(self.host.as_str(), |(h, _)| h);
                        let name = name.trim_start_matches('[').trim_end_matches(']');
                        let server = rustls::pki_types::ServerName::try_from(name.to_string())
                            .map_err(|_| {
                                Failure::Error(format!("{name} is not a valid TLS server name"))
                            })?;
                        let conn = rustls::ClientConnection::new(tls.clone(), server)
                            .map_err(|e| Failure::Error(format!("TLS: {e}")))?;
                        return Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(conn, s))));
                    }
                    return Ok(Stream::Plain(s));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(Failure::Error(format!(
            "cannot connect to {}: {}",
            self.host,
            last.map_or("no address".to_string(), |e| e.to_string())
        )))
    }
}

fn range(r: &ApiVersionsResponse, key: i16) -> String {
    r.api_keys
        .iter()
        .find(|a| a.api_key == key)
        .map_or("not offered".to_string(), |a| {
            format!("v{}-{}", a.min_version, a.max_version)
        })
}

/// ApiVersions and SaslHandshake on a connection of their own: what the listener offers.
fn discover(target: &Target, mechanism: &str) -> Result<Vec<String>, Failure> {
    let mut s = target.connect()?;
    let request = ApiVersionsRequest {
        software: Some(("ksasl-probe".into(), ksasl::VERSION.into())),
        ..Default::default()
    };
    s.write_all(&encode_request(&request, 3, 1, Some("ksasl-probe"))?)
        .map_err(io_failure)?;
    let frame = s.read_frame()?;
    // A broker too old for v3 answers in v0 with UNSUPPORTED_VERSION (35).
    let versions = match decode_response::<ApiVersionsResponse>(3, &frame) {
        Ok((_, r)) if r.error_code == 0 => r,
        _ => {
            s.write_all(&encode_request(
                &ApiVersionsRequest::default(),
                0,
                2,
                Some("ksasl-probe"),
            )?)
            .map_err(io_failure)?;
            decode_response::<ApiVersionsResponse>(0, &s.read_frame()?)?.1
        }
    };
    println!(
        "broker: {} APIs; ApiVersions {}, SaslHandshake {}, SaslAuthenticate {}",
        versions.api_keys.len(),
        range(&versions, API_VERSIONS),
        range(&versions, SASL_HANDSHAKE),
        range(&versions, SASL_AUTHENTICATE)
    );
    let handshake = SaslHandshakeRequest {
        mechanism: mechanism.to_string(),
    };
    s.write_all(&encode_request(&handshake, 1, 3, Some("ksasl-probe"))?)
        .map_err(io_failure)?;
    let (_, r) = decode_response::<SaslHandshakeResponse>(1, &s.read_frame()?)?;
    println!("listener mechanisms: {}", r.mechanisms.join(", "));
    if r.error_code == 33 {
        println!("failed: UNSUPPORTED_SASL_MECHANISM (Kafka error 33)");
        println!(
            "likely: this listener does not enable {mechanism}; set sasl.mechanism to one of \
             the mechanisms above, or enable it on the broker (sasl.enabled.mechanisms)"
        );
        return Err(Failure::Quiet);
    }
    Ok(r.mechanisms)
}

/// What a failure most likely means.
fn hint(e: &Error, mechanism: &str) -> &'static str {
    let m = e.message().to_ascii_lowercase();
    match e.code() {
        ErrorCode::UnsupportedSaslMechanism => {
            "the listener does not enable this mechanism (see its list above)"
        }
        ErrorCode::ServerRejectedAuthentication
            if m.contains("invalid credentials") || m.contains("invalid username or password") =>
        {
            if mechanism.starts_with("SCRAM") {
                "wrong username or password, or no SCRAM credential of this mechanism for the \
                 user on the broker (kafka-configs --describe --entity-type users)"
            } else {
                "wrong username or password"
            }
        }
        ErrorCode::ServerRejectedAuthentication | ErrorCode::TokenRejected
            if m.contains("expired") || m.contains("exp") =>
        {
            "the token expired for the broker: check its lifetime and both clocks (skew)"
        }
        ErrorCode::ServerRejectedAuthentication | ErrorCode::TokenRejected => {
            "the broker refused the credential: for tokens check the issuer, audience, scope, \
             signing key and the clocks; for passwords the username and password"
        }
        ErrorCode::TokenExpired | ErrorCode::NoValidCredential => {
            "the credential expired before it was sent: refresh it (sasl.login.refresh.*)"
        }
        ErrorCode::IllegalSaslState => {
            "the broker did not expect this SASL message: a listener without SASL?"
        }
        ErrorCode::InvalidServerSignature => {
            "the broker could not prove it knows the credential: a server impersonating the \
             broker, or a credential changed while connecting"
        }
        _ => "",
    }
}

fn explain(e: &Error, mechanism: &str) -> Failure {
    println!("failed: {}: {}", e.code().name(), e.message());
    let h = hint(e, mechanism);
    if !h.is_empty() {
        println!("likely: {h}");
    }
    Failure::Quiet
}

/// Writes what the client has to send and reads frames until `done` says the event ends it.
fn pump(
    s: &mut Stream,
    client: &mut ClientConnection,
    mechanism: &str,
    done: impl Fn(&ClientEvent) -> bool,
) -> Result<ClientEvent, Failure> {
    loop {
        while let Some(out) = client.poll_transmit() {
            s.write_all(&out).map_err(io_failure)?;
        }
        let frame = match s.read_frame() {
            Ok(f) => f,
            Err(f) => {
                let e = client.connection_closed(now_ms());
                println!("failed: the connection ended: {}", e.message());
                return Err(f);
            }
        };
        match client.handle_frame(&frame, now_ms()) {
            ClientEvent::Failed(e) => return Err(explain(&e, mechanism)),
            ClientEvent::ReauthenticationFailed { error, .. } => {
                return Err(explain(&error, mechanism))
            }
            ev if done(&ev) => return Ok(ev),
            _ => {}
        }
    }
}

fn token_line(setup: &ksasl::config::ClientSetup) -> Result<Option<u64>, Failure> {
    let Some(r) = &setup.refresher else {
        return Ok(None);
    };
    let now = now_ms();
    r.run_due(now);
    match r.current_token(now) {
        Ok((t, _, generation)) => {
            println!(
                "token: principal {}, expires {} ({})",
                t.principal(),
                super::utc(t.expiry_ms()),
                span(t.expiry_ms() - now)
            );
            Ok(Some(generation))
        }
        Err(e) => {
            let (_, reason) = r.failures();
            println!(
                "failed: no token: {}{}",
                e.message(),
                reason
                    .map(|r| format!(" (last attempt: {r})"))
                    .unwrap_or_default()
            );
            Err(Failure::Quiet)
        }
    }
}

pub(super) fn run(args: &[String]) -> Outcome {
    let o = options(args, &["bootstrap", "config", "reauth", "timeout-ms"])?;
    if o.help {
        print!("{PROBE_USAGE}");
        return Ok(0);
    }
    if !o.positional.is_empty() {
        return Err(Failure::Usage("probe takes only options".into()));
    }
    let bootstrap = o
        .get("bootstrap")
        .ok_or_else(|| Failure::Usage("probe needs --bootstrap HOST:PORT".into()))?;
    let file = o
        .get("config")
        .ok_or_else(|| Failure::Usage("probe needs --config client.properties".into()))?;
    let reauth: u32 = match o.get("reauth") {
        None => 0,
        Some(v) => v
            .parse()
            .map_err(|_| Failure::Usage("--reauth must be a count".into()))?,
    };
    let timeout_ms: u64 = match o.get("timeout-ms") {
        None => 10_000,
        Some(v) => v
            .parse()
            .ok()
            .filter(|t| *t > 0)
            .ok_or_else(|| Failure::Usage("--timeout-ms must be a positive count".into()))?,
    };
    let props = Properties::parse_bytes(&read_input(file)?)?;
    let settings = ClientSettings::from_properties(&props)?;
    for u in &settings.unknown {
        println!("warning: unknown setting {u}");
    }
    for w in &settings.warnings {
        println!("warning: {w}");
    }
    let protocol = settings.security_protocol;
    let mechanism = settings.mechanism.clone();
    println!(
        "config: {} {} ({})",
        protocol.name(),
        mechanism,
        settings
            .effective()
            .iter()
            .find(|(k, _)| k == "credential")
            .map_or("none", |(_, v)| v.as_str())
    );
    let mut setup = settings.build(SharedRandom::default())?;
    let mut kerberos_login = None;
    match &setup.login {
        ClientLogin::HostToken(_) => {
            return Err(Failure::Error(
                "the configuration leaves tokens to the application (librdkafka's refresh \
                 callback): give the probe an unsecured token (enable.sasl.oauthbearer.unsecure.jwt) \
                 or an OIDC login (sasl.oauthbearer.method=oidc)"
                    .into(),
            ))
        }
        ClientLogin::Kerberos {
            service_name,
            principal,
            keytab,
        } => {
            // A login as the JAAS entry says (a keytab, or the ticket cache), for the service
            // at the host of --bootstrap, as Kafka's client names it.
            let login = std::sync::Arc::new(ksasl::io::gss::KerberosLogin::from_settings(
                principal.as_deref(),
                keytab.as_deref(),
                None,
                None,
                None,
                None,
            )?);
            if let Err(e) = login.login(now_ms(), &ksasl::OsRandom) {
                println!("failed: Kerberos login: {}: {}", e.code().name(), e.message());
                println!(
                    "likely: the keytab, the principal or the KDC (krb5.conf, KRB5_CONFIG) is \
                     wrong, or the clock is off by more than the KDC allows"
                );
                return Ok(1);
            }
            let host = bootstrap.rsplit_once(':').map_or(bootstrap, |(h, _)| h);
            let mut registry = ksasl::MechanismRegistry::new();
            ksasl::io::gss::register_client(&mut registry, &login, service_name, host, false)?;
            setup.with_registry(registry, ksasl::names::GSSAPI)?;
            kerberos_login = Some(login);
        }
        _ => {}
    }
    let target = Target {
        host: bootstrap.to_string(),
        timeout: Duration::from_millis(timeout_ms),
        #[cfg(feature = "http")]
        tls: if protocol.uses_tls() {
            Some(tls_config(&props)?)
        } else {
            None
        },
    };
    #[cfg(not(feature = "http"))]
    if protocol.uses_tls() {
        return Err(Failure::Error("this ksasl was built without TLS".into()));
    }
    let probe = || -> Result<u8, Failure> {
        discover(&target, &mechanism)?;
        let mut generation = token_line(&setup)?;
        let mut s = target.connect()?;
        let config = setup
            .config
            .clone()
            .ok_or_else(|| Failure::Error("no client configuration".into()))?;
        let mut client = ClientConnection::new(config);
        let started = now_ms();
        client.start(started)?;
        let ev = pump(&mut s, &mut client, &mechanism, |e| {
            matches!(e, ClientEvent::Authenticated(_))
        })?;
        let ClientEvent::Authenticated(session) = ev else {
            unreachable!("pump returns only what done accepts")
        };
        let login = match &settings.credential {
            ksasl::config::ClientCredential::Password {
                username,
                token_auth,
                ..
            } => {
                if *token_auth {
                    format!("delegation token {username}")
                } else {
                    format!("User:{username}")
                }
            }
            ksasl::config::ClientCredential::Kerberos { .. } => kerberos_login
                .as_ref()
                .and_then(|l| l.current().ok())
                .map_or("?".into(), |c| format!("Kerberos {}", c.principal())),
            _ => setup
                .refresher
                .as_ref()
                .and_then(|r| r.current_token(now_ms()).ok())
                .map_or("?".into(), |(t, _, _)| format!("User:{}", t.principal())),
        };
        println!(
            "authenticated: {login} with {mechanism} in {} ms",
            session.latency_ms
        );
        let lifetime = |l: i64| {
            if l == 0 {
                "none (the broker does not expire this session)".to_string()
            } else {
                format!("{l} ms")
            }
        };
        println!("session lifetime: {}", lifetime(session.lifetime_ms));
        let mut reauth_at = session.reauth_at_ms;
        for i in 1..=reauth {
            let Some(at) = reauth_at else {
                println!("re-authentication: not needed (no session lifetime); stopping");
                break;
            };
            let wait = (at - now_ms()).max(0);
            println!(
                "waiting {} for re-authentication {i}/{reauth}",
                span(wait).trim_start_matches("in ")
            );
            let _ = std::io::stdout().flush();
            std::thread::sleep(Duration::from_millis(wait as u64));
            if let Some(l) = &kerberos_login {
                // A new ticket when the login's schedule says so (keytab logins).
                let _ = l.poll(now_ms(), &ksasl::OsRandom);
            }
            if let Some(r) = &setup.refresher {
                r.run_due(now_ms());
                if let Ok((t, _, g)) = r.current_token(now_ms()) {
                    if Some(g) != generation {
                        println!(
                            "token: a new one, expires {} ({})",
                            super::utc(t.expiry_ms()),
                            span(t.expiry_ms() - now_ms())
                        );
                        generation = Some(g);
                    }
                }
            }
            client.start_reauthentication(now_ms())?;
            let ev = pump(&mut s, &mut client, &mechanism, |e| {
                matches!(e, ClientEvent::Reauthenticated(_))
            })?;
            let ClientEvent::Reauthenticated(session) = ev else {
                unreachable!("pump returns only what done accepts")
            };
            println!(
                "re-authenticated {i}/{reauth} in {} ms; session lifetime: {}",
                session.latency_ms,
                lifetime(session.lifetime_ms)
            );
            let _ = std::io::stdout().flush();
            reauth_at = session.reauth_at_ms;
        }
        Ok(0)
    };
    match probe() {
        Ok(c) => Ok(c),
        Err(Failure::Quiet) => Ok(1),
        Err(f) => Err(f),
    }
}

/// An authenticated connection for one admin request (`scram-credential --bootstrap`): the
/// client of `file` (a password, token or OIDC login; Kerberos is the probe's only), and the
/// request's answer.
pub(super) fn admin_request(
    bootstrap: &str,
    file: &str,
    build: impl FnOnce(i32) -> Result<Vec<u8>, Error>,
) -> Result<Vec<u8>, Failure> {
    let props = Properties::parse_bytes(&read_input(file)?)?;
    let settings = ClientSettings::from_properties(&props)?;
    let protocol = settings.security_protocol;
    let mechanism = settings.mechanism.clone();
    let setup = settings.build(SharedRandom::default())?;
    let config = match (&setup.login, setup.config.clone()) {
        (ClientLogin::HostToken(_) | ClientLogin::Kerberos { .. }, _) | (_, None) => {
            return Err(Failure::Error(format!(
                "{file}: an admin request needs a password, delegation-token, unsecured-token \
                 or OIDC login (Kerberos and application tokens are `ksasl probe`'s only)"
            )))
        }
        (_, Some(c)) => c,
    };
    let target = Target {
        host: bootstrap.to_string(),
        timeout: Duration::from_millis(10_000),
        #[cfg(feature = "http")]
        tls: if protocol.uses_tls() {
            Some(tls_config(&props)?)
        } else {
            None
        },
    };
    #[cfg(not(feature = "http"))]
    if protocol.uses_tls() {
        return Err(Failure::Error("this ksasl was built without TLS".into()));
    }
    if let Some(r) = &setup.refresher {
        r.run_due(now_ms());
    }
    let mut s = target.connect()?;
    let mut client = ClientConnection::new(config);
    client.start(now_ms())?;
    pump(&mut s, &mut client, &mechanism, |e| {
        matches!(e, ClientEvent::Authenticated(_))
    })?;
    if !client.before_request(now_ms())? {
        return Err(Failure::Error(
            "the session needs a re-authentication at once".into(),
        ));
    }
    s.write_all(&build(1)?).map_err(io_failure)?;
    loop {
        let frame = s.read_frame()?;
        match client.handle_frame(&frame, now_ms()) {
            ClientEvent::Application => return Ok(frame),
            ClientEvent::Failed(e) => return Err(explain(&e, &mechanism)),
            _ => {}
        }
        while let Some(out) = client.poll_transmit() {
            s.write_all(&out).map_err(io_failure)?;
        }
    }
}
