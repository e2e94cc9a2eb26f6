//! The token request: one `application/x-www-form-urlencoded` POST to the token endpoint, in
//! the forms Kafka 4.4's `ClientSecretRequestFormatter`, `ClientAssertionRequestFormatter` and
//! `JwtBearerRequestFormatter` send.

use std::fmt;

use base64::Engine;

use super::assertion::{AssertionConfig, AssertionSigner};
use super::response::{client_token, parse_token_response};
use crate::error::{quote, Error, ErrorCode, Result};
use crate::mech::oauthbearer::OAuthBearerToken;
use crate::random::RandomSource;
use crate::secret::Secret;

const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// What the client asks for.
#[derive(Clone, Debug)]
pub enum Grant {
    /// `grant_type=client_credentials` (RFC 6749 §4.4).
    ClientCredentials,
    /// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` with a signed assertion
    /// (RFC 7523 §2.1, KIP-1139).
    JwtBearer(AssertionConfig),
}

/// How the client proves who it is to the token endpoint.
#[derive(Clone)]
pub enum ClientAuth {
    /// No client authentication (the JWT-bearer grant as Kafka sends it).
    None,
    /// `client_secret_basic`: `Authorization: Basic base64(id:secret)`, Kafka's form (the id
    /// and secret are trimmed; with `urlencode`, Kafka's `sasl.oauthbearer.header.urlencode`,
    /// each is form-encoded first).
    SecretBasic {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: Secret,
        /// Form-encode the id and secret before joining them.
        urlencode: bool,
    },
    /// `client_secret_post`: `client_id` and `client_secret` in the body.
    SecretPost {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: Secret,
    },
    /// `private_key_jwt` (RFC 7523 §2.2): a signed client assertion in the body. The
    /// assertion's `iss` and `sub` default to the client id.
    PrivateKeyJwt {
        /// The client id.
        client_id: String,
        /// The assertion.
        assertion: AssertionConfig,
    },
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientAuth::None => f.write_str("None"),
            ClientAuth::SecretBasic {
                client_id,
                urlencode,
                ..
            } => f
                .debug_struct("SecretBasic")
                .field("client_id", client_id)
                .field("client_secret", &"<redacted>")
                .field("urlencode", urlencode)
                .finish(),
            ClientAuth::SecretPost { client_id, .. } => f
                .debug_struct("SecretPost")
                .field("client_id", client_id)
                .field("client_secret", &"<redacted>")
                .finish(),
            ClientAuth::PrivateKeyJwt {
                client_id,
                assertion,
            } => f
                .debug_struct("PrivateKeyJwt")
                .field("client_id", client_id)
                .field("assertion", assertion)
                .finish(),
        }
    }
}

/// A token login's configuration.
#[derive(Clone, Debug)]
pub struct TokenRequestConfig {
    /// `sasl.oauthbearer.token.endpoint.url` (http or https).
    pub token_endpoint_url: String,
    /// The grant.
    pub grant: Grant,
    /// The client authentication.
    pub client_auth: ClientAuth,
    /// `scope` (`sasl.oauthbearer.scope`, or the JAAS option `scope`), sent when not blank.
    pub scope: Option<String>,
    /// The subject claim of the tokens (`sasl.oauthbearer.sub.claim.name`, default `sub`).
    pub subject_claim_name: String,
    /// The scope claim of the tokens (`sasl.oauthbearer.scope.claim.name`, default `scope`).
    pub scope_claim_name: String,
}

impl TokenRequestConfig {
    /// The client-credentials grant with `client_secret_basic`, Kafka's defaults otherwise.
    pub fn client_secret(url: &str, client_id: &str, client_secret: impl Into<Secret>) -> Self {
        TokenRequestConfig {
            token_endpoint_url: url.to_string(),
            grant: Grant::ClientCredentials,
            client_auth: ClientAuth::SecretBasic {
                client_id: client_id.to_string(),
                client_secret: client_secret.into(),
                urlencode: false,
            },
            scope: None,
            subject_claim_name: "sub".into(),
            scope_claim_name: "scope".into(),
        }
    }
}

/// An HTTP request for the host (or `ksasl::io::http`) to send. The body and the
/// `Authorization` value hold secrets: they are zeroized on drop and never printed.
pub struct HttpRequest {
    /// Always `POST` for a token request.
    pub method: &'static str,
    /// The token endpoint.
    pub url: String,
    /// Headers other than `Authorization`, in the order Kafka sets them.
    pub headers: Vec<(&'static str, String)>,
    /// The `Authorization` header's value, if any.
    pub authorization: Option<Secret>,
    /// The form-encoded body.
    pub body: Secret,
}

impl HttpRequest {
    /// Every header to send, `Authorization` (if any) last. The pairs hold the credential in
    /// clear text: hand them to the HTTP stack and drop them.
    pub fn header_pairs(&self) -> Vec<(&'static str, Secret)> {
        let mut all: Vec<(&'static str, Secret)> = self
            .headers
            .iter()
            .map(|(k, v)| (*k, Secret::from(v.as_str())))
            .collect();
        if let Some(a) = &self.authorization {
            all.push(("Authorization", a.clone()));
        }
        all
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &self.headers)
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("body", &"<redacted>")
            .finish()
    }
}

/// Form encoding as Java's `URLEncoder` (UTF-8): letters, digits and `.-*_` stay, a space
/// becomes `+`, every other byte `%XX`.
pub fn form_urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Builds token requests and reads the answers; share one per login (`Arc`).
#[derive(Debug)]
pub struct TokenRequester {
    config: TokenRequestConfig,
    client_signer: Option<AssertionSigner>,
    grant_signer: Option<AssertionSigner>,
}

fn invalid(why: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidConfig, why.into())
}

fn non_blank<'a>(what: &str, v: &'a str) -> Result<&'a str> {
    let t = v.trim();
    if t.is_empty() {
        return Err(invalid(format!("{what} must not be blank")));
    }
    Ok(t)
}

/// `url` trimmed, if it is an `http://` or `https://` URL with something after the scheme;
/// otherwise `INVALID_CONFIG` naming `setting` (the Kafka property the URL came from).
pub fn http_url(setting: &str, url: &str) -> Result<String> {
    let url = url.trim();
    let ok = ["https://", "http://"].iter().any(|p| {
        url.len() > p.len() && url.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    });
    if !ok {
        return Err(invalid(format!(
            "{setting}: \"{}\" is not an http or https URL",
            quote(url.as_bytes())
        )));
    }
    Ok(url.to_string())
}

impl TokenRequester {
    /// Checks the configuration (an http(s) URL, non-blank ids and secrets, keys that parse).
    pub fn new(mut config: TokenRequestConfig) -> Result<Self> {
        let url = http_url(
            "sasl.oauthbearer.token.endpoint.url",
            &config.token_endpoint_url,
        )?;
        config.token_endpoint_url = url;
        non_blank(
            "sasl.oauthbearer.sub.claim.name",
            &config.subject_claim_name,
        )?;
        non_blank(
            "sasl.oauthbearer.scope.claim.name",
            &config.scope_claim_name,
        )?;
        let client_signer = match &mut config.client_auth {
            ClientAuth::None => None,
            ClientAuth::SecretBasic {
                client_id,
                client_secret,
                ..
            }
            | ClientAuth::SecretPost {
                client_id,
                client_secret,
            } => {
                non_blank("the client id", client_id)?;
                let secret = std::str::from_utf8(client_secret.expose())
                    .map_err(|_| invalid("the client secret must be UTF-8"))?;
                if secret.trim().is_empty() {
                    return Err(invalid("the client secret must not be blank"));
                }
                None
            }
            ClientAuth::PrivateKeyJwt {
                client_id,
                assertion,
            } => {
                let id = non_blank("the client id", client_id)?.to_string();
                assertion.issuer.get_or_insert_with(|| id.clone());
                assertion.subject.get_or_insert(id);
                Some(AssertionSigner::new(assertion.clone())?)
            }
        };
        let grant_signer = match &config.grant {
            Grant::ClientCredentials => None,
            Grant::JwtBearer(a) => Some(AssertionSigner::new(a.clone())?),
        };
        Ok(TokenRequester {
            config,
            client_signer,
            grant_signer,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TokenRequestConfig {
        &self.config
    }

    /// The request to send at `now_ms` (assertions are signed afresh, with `random` for
    /// `jti`).
    pub fn request(&self, now_ms: i64, random: &dyn RandomSource) -> Result<HttpRequest> {
        let c = &self.config;
        let mut body = String::new();
        let mut authorization = None;
        let mut field = |name: &str, value: &str| {
            if !body.is_empty() {
                body.push('&');
            }
            body.push_str(name);
            body.push('=');
            body.push_str(&form_urlencode(value));
        };
        match (&c.grant, &c.client_auth) {
            (Grant::ClientCredentials, ClientAuth::PrivateKeyJwt { client_id, .. }) => {
                let a = self.sign(&self.client_signer, now_ms, random)?;
                field("client_assertion_type", CLIENT_ASSERTION_TYPE);
                field("client_assertion", &a);
                field("grant_type", "client_credentials");
                field("client_id", client_id.trim());
            }
            (Grant::ClientCredentials, _) => field("grant_type", "client_credentials"),
            (Grant::JwtBearer(_), auth) => {
                let a = self.sign(&self.grant_signer, now_ms, random)?;
                field("grant_type", JWT_BEARER_GRANT);
                field("assertion", &a);
                if let ClientAuth::PrivateKeyJwt { client_id, .. } = auth {
                    let ca = self.sign(&self.client_signer, now_ms, random)?;
                    field("client_assertion_type", CLIENT_ASSERTION_TYPE);
                    field("client_assertion", &ca);
                    field("client_id", client_id.trim());
                }
            }
        }
        if let ClientAuth::SecretPost {
            client_id,
            client_secret,
        } = &c.client_auth
        {
            field("client_id", client_id.trim());
            field("client_secret", secret_text(client_secret).trim());
        }
        if let Some(scope) = c.scope.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            field("scope", scope);
        }
        if let ClientAuth::SecretBasic {
            client_id,
            client_secret,
            urlencode,
        } = &c.client_auth
        {
            let (id, secret) = (client_id.trim(), secret_text(client_secret).trim());
            let joined = if *urlencode {
                zeroize::Zeroizing::new(format!(
                    "{}:{}",
                    form_urlencode(id),
                    form_urlencode(secret)
                ))
            } else {
                zeroize::Zeroizing::new(format!("{id}:{secret}"))
            };
            let b64 = base64::engine::general_purpose::STANDARD.encode(joined.as_bytes());
            authorization = Some(Secret::from(format!("Basic {b64}")));
        }
        Ok(HttpRequest {
            method: "POST",
            url: c.token_endpoint_url.clone(),
            headers: vec![
                ("Accept", "application/json".into()),
                ("Cache-Control", "no-cache".into()),
                ("Content-Type", "application/x-www-form-urlencoded".into()),
            ],
            authorization,
            body: Secret::from(body),
        })
    }

    fn sign(
        &self,
        signer: &Option<AssertionSigner>,
        now_ms: i64,
        random: &dyn RandomSource,
    ) -> Result<zeroize::Zeroizing<String>> {
        let s = signer
            .as_ref()
            .ok_or_else(|| Error::new(ErrorCode::Internal, "no assertion signer"))?
            .sign(now_ms, random)?;
        Ok(zeroize::Zeroizing::new(secret_text(&s).to_string()))
    }

    /// The token in the endpoint's answer, read as Kafka's client reads it (see
    /// [`client_token`]).
    pub fn token_from_response(&self, status: u16, body: &[u8]) -> Result<OAuthBearerToken> {
        let token = parse_token_response(status, body)?;
        client_token(
            secret_text(&token),
            &self.config.subject_claim_name,
            &self.config.scope_claim_name,
        )
    }
}

/// Secrets built from `&str` are UTF-8; anything else reads as empty.
fn secret_text(s: &Secret) -> &str {
    std::str::from_utf8(s.expose()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    fn text(s: &Secret) -> String {
        String::from_utf8(s.expose().to_vec()).unwrap()
    }

    #[test]
    fn urls_are_http_or_https_and_never_panic() {
        assert_eq!(http_url("k", " HTTPS://idp/t ").unwrap(), "HTTPS://idp/t");
        assert_eq!(http_url("k", "http://idp").unwrap(), "http://idp");
        for bad in [
            "",
            "https://",
            "ftp://idp",
            "idp/token",
            "ééééééééé",
            "httpé://x",
            "htt",
        ] {
            let e = http_url("sasl.oauthbearer.jwks.endpoint.url", bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidConfig, "{bad}");
            assert!(
                e.message()
                    .starts_with("sasl.oauthbearer.jwks.endpoint.url: "),
                "{e}"
            );
        }
    }

    #[test]
    fn header_pairs_end_with_the_credential() {
        let c = TokenRequestConfig::client_secret("https://idp/token", "kafka", "s3cret");
        let r = TokenRequester::new(c)
            .unwrap()
            .request(0, &OsRandom)
            .unwrap();
        let pairs = r.header_pairs();
        assert_eq!(pairs.len(), r.headers.len() + 1);
        for ((k, v), (hk, hv)) in pairs.iter().zip(&r.headers) {
            assert_eq!((k, text(v).as_str()), (hk, hv.as_str()));
        }
        let (k, v) = pairs.last().unwrap();
        assert_eq!(
            (*k, text(v)),
            ("Authorization", text(r.authorization.as_ref().unwrap()))
        );
    }

    #[test]
    fn form_encoding_is_javas() {
        assert_eq!(
            form_urlencode("a b*c.d-e_f~g/h:é"),
            "a+b*c.d-e_f%7Eg%2Fh%3A%C3%A9"
        );
    }

    #[test]
    fn client_secret_basic_as_kafka_sends_it() {
        let mut c = TokenRequestConfig::client_secret("https://idp/token", " kafka ", " s3cret ");
        c.scope = Some(" kafka profile ".into());
        let r = TokenRequester::new(c)
            .unwrap()
            .request(0, &OsRandom)
            .unwrap();
        assert_eq!(
            text(&r.body),
            "grant_type=client_credentials&scope=kafka+profile"
        );
        // base64("kafka:s3cret")
        assert_eq!(
            text(r.authorization.as_ref().unwrap()),
            "Basic a2Fma2E6czNjcmV0"
        );
        assert_eq!(
            r.headers[2],
            (
                "Content-Type",
                "application/x-www-form-urlencoded".to_string()
            )
        );
        let dbg = format!("{r:?}");
        assert!(
            !dbg.contains("a2Fma2E6czNjcmV0") && !dbg.contains("s3cret"),
            "{dbg}"
        );
    }

    #[test]
    fn urlencoded_basic_and_client_secret_post() {
        let mut c = TokenRequestConfig::client_secret("http://idp/t", "a:b", "p&q");
        if let ClientAuth::SecretBasic { urlencode, .. } = &mut c.client_auth {
            *urlencode = true;
        }
        let r = TokenRequester::new(c.clone())
            .unwrap()
            .request(0, &OsRandom)
            .unwrap();
        let expected = base64::engine::general_purpose::STANDARD.encode("a%3Ab:p%26q");
        assert_eq!(
            text(r.authorization.as_ref().unwrap()),
            format!("Basic {expected}")
        );
        c.client_auth = ClientAuth::SecretPost {
            client_id: "a:b".into(),
            client_secret: "p&q".into(),
        };
        let r = TokenRequester::new(c)
            .unwrap()
            .request(0, &OsRandom)
            .unwrap();
        assert!(r.authorization.is_none());
        assert_eq!(
            text(&r.body),
            "grant_type=client_credentials&client_id=a%3Ab&client_secret=p%26q"
        );
    }

    #[test]
    fn configuration_errors_name_what_to_fix() {
        let e = TokenRequester::new(TokenRequestConfig::client_secret("ftp://x", "a", "b"))
            .unwrap_err();
        assert!(
            e.message().contains("sasl.oauthbearer.token.endpoint.url"),
            "{}",
            e.message()
        );
        let e = TokenRequester::new(TokenRequestConfig::client_secret("https://x", " ", "b"))
            .unwrap_err();
        assert!(e.message().contains("client id"));
        let e = TokenRequester::new(TokenRequestConfig::client_secret("https://x", "a", "  "))
            .unwrap_err();
        assert!(e.message().contains("client secret"));
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
    }

    /// An Ed25519 key made for the test, as PKCS#8 PEM.
    fn ed25519_pem() -> (String, Vec<u8>) {
        use ring::signature::KeyPair;
        let rng = ring::rand::SystemRandom::new();
        let der = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let public = ring::signature::Ed25519KeyPair::from_pkcs8(der.as_ref())
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
        (
            format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n"),
            public,
        )
    }

    fn field<'a>(body: &'a str, name: &str) -> &'a str {
        body.split('&')
            .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
            .unwrap_or_else(|| panic!("no {name} in {body}"))
    }

    /// The claims of a JWT after checking its Ed25519 signature with `public`.
    fn verified_claims(jwt: &str, public: &[u8]) -> serde_json::Value {
        let (signed, sig) = jwt.rsplit_once('.').unwrap();
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sig)
            .unwrap();
        ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, public)
            .verify(signed.as_bytes(), &sig)
            .unwrap();
        let claims = signed.split('.').nth(1).unwrap();
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(claims)
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn private_key_jwt_as_kafka_sends_it() {
        let (pem, public) = ed25519_pem();
        let mut assertion = AssertionConfig::new(pem);
        assertion.algorithm = "EdDSA".into();
        assertion.audience = Some("https://idp/realms/r".into());
        assertion.include_jti = true;
        let mut c = TokenRequestConfig::client_secret("https://idp/token", "unused", "unused");
        c.client_auth = ClientAuth::PrivateKeyJwt {
            client_id: "kafka".into(),
            assertion,
        };
        let r = TokenRequester::new(c)
            .unwrap()
            .request(1_700_000_000_500, &OsRandom)
            .unwrap();
        assert!(r.authorization.is_none());
        let body = text(&r.body);
        assert!(body.starts_with(
            "client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion="
        ), "{body}");
        assert!(
            body.ends_with("&grant_type=client_credentials&client_id=kafka"),
            "{body}"
        );
        let claims = verified_claims(field(&body, "client_assertion"), &public);
        assert_eq!(claims["iss"], "kafka");
        assert_eq!(claims["sub"], "kafka");
        assert_eq!(claims["aud"], "https://idp/realms/r");
        assert_eq!(claims["iat"], 1_700_000_000);
        assert_eq!(claims["exp"], 1_700_000_300);
        assert_eq!(claims["nbf"], 1_699_999_940);
        assert_eq!(claims["jti"].as_str().unwrap().len(), 36);
    }

    #[test]
    fn jwt_bearer_grant_as_kafka_sends_it() {
        let (pem, public) = ed25519_pem();
        let mut assertion = AssertionConfig::new(pem);
        assertion.algorithm = "EdDSA".into();
        assertion.issuer = Some("kafka-workload".into());
        assertion.subject = Some("svc".into());
        let mut c = TokenRequestConfig::client_secret("https://idp/token", "unused", "unused");
        c.grant = Grant::JwtBearer(assertion);
        c.client_auth = ClientAuth::None;
        c.scope = Some("kafka".into());
        let r = TokenRequester::new(c.clone())
            .unwrap()
            .request(1_700_000_000_000, &OsRandom)
            .unwrap();
        let body = text(&r.body);
        assert!(
            body.starts_with(
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
            ),
            "{body}"
        );
        assert!(body.ends_with("&scope=kafka"), "{body}");
        assert!(r.authorization.is_none());
        let claims = verified_claims(field(&body, "assertion"), &public);
        assert_eq!(
            (claims["iss"].as_str(), claims["sub"].as_str()),
            (Some("kafka-workload"), Some("svc"))
        );
        assert!(
            claims.get("jti").is_none(),
            "Kafka's default leaves jti out"
        );
        // With client authentication added (what Keycloak requires), the secret goes in the
        // Authorization header as for the client-credentials grant.
        c.client_auth = ClientAuth::SecretBasic {
            client_id: "kafka".into(),
            client_secret: "s3cret".into(),
            urlencode: false,
        };
        let r = TokenRequester::new(c)
            .unwrap()
            .request(1_700_000_000_000, &OsRandom)
            .unwrap();
        assert_eq!(
            text(r.authorization.as_ref().unwrap()),
            "Basic a2Fma2E6czNjcmV0"
        );
    }
}
