//! One blocking HTTPS client: configuration, sending, and error mapping.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{parse_pem, PemItem, RootCerts, TlsConfig};

use crate::error::{quote, Error, ErrorCode, Result};
use crate::oidc::HttpRequest;

/// ksasl's connect timeout when none is configured (Kafka leaves `sasl.login.connect.timeout.ms`
/// unset, which in the JDK means waiting for ever).
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// ksasl's read timeout when none is configured (`sasl.login.read.timeout.ms`, unset in Kafka).
pub const DEFAULT_READ_TIMEOUT_MS: u64 = 30_000;
/// The largest response body read (a token answer or a JWKS is a few KiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// How to reach the identity provider.
#[derive(Clone, Default)]
pub struct HttpConfig {
    /// PEM certificates of the CAs to trust instead of Mozilla's roots (`None`: the roots).
    pub ca_pem: Option<Vec<u8>>,
    /// `sasl.login.connect.timeout.ms` (`None`: [`DEFAULT_CONNECT_TIMEOUT_MS`]).
    pub connect_timeout_ms: Option<u64>,
    /// `sasl.login.read.timeout.ms`: the longest wait for the answer and for each read of
    /// its body (`None`: [`DEFAULT_READ_TIMEOUT_MS`]).
    pub read_timeout_ms: Option<u64>,
    /// The largest body accepted (`None`: [`DEFAULT_MAX_RESPONSE_BYTES`]).
    pub max_response_bytes: Option<u64>,
    /// Use `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` from the environment (default: no proxy).
    pub proxy_from_env: bool,
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("ca_pem", &self.ca_pem.as_ref().map(|p| p.len()))
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("read_timeout_ms", &self.read_timeout_ms)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("proxy_from_env", &self.proxy_from_env)
            .finish()
    }
}

/// An answer: the status and the body (at most the configured size).
#[derive(Clone, Debug)]
pub struct HttpResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

/// A blocking HTTP client; cheap to clone (the connection pool is shared).
#[derive(Clone)]
pub struct HttpClient {
    agent: ureq::Agent,
    read_timeout_ms: u64,
    max_response_bytes: u64,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("read_timeout_ms", &self.read_timeout_ms)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish()
    }
}

impl HttpClient {
    /// A client; a CA bundle without a certificate is `INVALID_CONFIG`.
    pub fn new(config: &HttpConfig) -> Result<Self> {
        let roots = match &config.ca_pem {
            None => RootCerts::WebPki,
            Some(pem) => {
                let certs: Vec<_> = parse_pem(pem)
                    .filter_map(|item| match item {
                        Ok(PemItem::Certificate(c)) => Some(c),
                        _ => None,
                    })
                    .collect();
                if certs.is_empty() {
                    return Err(Error::new(
                        ErrorCode::InvalidConfig,
                        "the CA bundle has no PEM certificate (-----BEGIN CERTIFICATE-----)",
                    ));
                }
                RootCerts::Specific(Arc::new(certs))
            }
        };
        let connect = config
            .connect_timeout_ms
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS);
        let read = config.read_timeout_ms.unwrap_or(DEFAULT_READ_TIMEOUT_MS);
        if connect == 0 || read == 0 {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "sasl.login.connect.timeout.ms and sasl.login.read.timeout.ms must be positive",
            ));
        }
        let ms = |v: u64| Some(Duration::from_millis(v));
        let mut builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(ms(connect))
            .timeout_send_request(ms(read))
            .timeout_send_body(ms(read))
            .timeout_recv_response(ms(read))
            .timeout_recv_body(ms(read))
            .user_agent(concat!("ksasl/", env!("CARGO_PKG_VERSION")))
            .tls_config(TlsConfig::builder().root_certs(roots).build());
        if !config.proxy_from_env {
            builder = builder.proxy(None);
        }
        Ok(HttpClient {
            agent: builder.build().into(),
            read_timeout_ms: read,
            max_response_bytes: config
                .max_response_bytes
                .unwrap_or(DEFAULT_MAX_RESPONSE_BYTES),
        })
    }

    /// Sends a token request.
    pub fn send(&self, request: &HttpRequest) -> Result<HttpResponse> {
        let mut r = self.agent.post(&request.url);
        for (name, value) in request.header_pairs() {
            r = r.header(name, std::str::from_utf8(value.expose()).unwrap_or(""));
        }
        self.finish(&request.url, r.send(request.body.expose()))
    }

    /// GETs `url` (a JWKS) with `Accept: application/json`.
    pub fn get(&self, url: &str) -> Result<HttpResponse> {
        let r = self
            .agent
            .get(url)
            .header("Accept", "application/json")
            .call();
        self.finish(url, r)
    }

    fn finish(
        &self,
        url: &str,
        result: std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<HttpResponse> {
        let mut response = result.map_err(|e| self.transport_error(url, e))?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            return Err(Error::new(
                ErrorCode::OidcRequestRefused,
                format!(
                    "{} answered with a redirect (HTTP {status}); ksasl does not follow \
                     redirects: configure the final URL",
                    quote(url.as_bytes())
                ),
            )
            .with_detail("status", status.to_string()));
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(self.max_response_bytes)
            .read_to_vec()
            .map_err(|e| self.transport_error(url, e))?;
        Ok(HttpResponse { status, body })
    }

    fn transport_error(&self, url: &str, e: ureq::Error) -> Error {
        let url = quote(url.as_bytes());
        let text = e.to_string();
        let (code, what) = match &e {
            ureq::Error::Timeout(t) => (
                ErrorCode::OidcProviderUnavailable,
                format!("timed out ({t}; read timeout {} ms)", self.read_timeout_ms),
            ),
            ureq::Error::BodyExceedsLimit(n) => (
                ErrorCode::OidcBadResponse,
                format!("the answer is larger than {n} bytes"),
            ),
            ureq::Error::BadUri(_) | ureq::Error::Http(_) => {
                (ErrorCode::InvalidConfig, "the URL is not valid".to_string())
            }
            _ if is_certificate_error(&e) => (
                ErrorCode::TlsCertificateRefused,
                format!(
                    "its TLS certificate was refused: {}",
                    quote(text.as_bytes())
                ),
            ),
            _ => (ErrorCode::OidcProviderUnavailable, quote(text.as_bytes())),
        };
        Error::new(code, format!("{url}: {what}"))
    }
}

/// Whether a transport error is rustls refusing the server's certificate.
fn is_certificate_error(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Rustls(
            rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented,
        ) => true,
        ureq::Error::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .is_some_and(|r| matches!(r, rustls::Error::InvalidCertificate(_))),
        _ => false,
    }
}
