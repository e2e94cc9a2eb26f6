//! Shared code of the ksasl fuzz targets: the fixtures (users, tokens, configurations), the
//! input format of the two connection-driver targets, the two harnesses that drive a
//! connection like a host and check the invariants after every step, and independent oracles
//! (SCRAM proofs and signatures recomputed here with `hmac`/`sha2`/`pbkdf2`, unsecured JWT
//! claims read here with `serde_json`).
//!
//! The harnesses are deterministic: every configuration is built per input, nonces are fixed,
//! and the only state shared between inputs is the precomputed credentials (and the client's
//! PBKDF2 key cache, which does not change behaviour). A crash therefore reproduces from its
//! input alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use hmac::{Hmac, Mac};
use ksasl::credential::ServerCredential;
use ksasl::kafka::client::{is_sasl_correlation_id, ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::codec::{decode_body, decode_response, RequestHeader};
use ksasl::kafka::messages::{
    RequestPrefix, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
};
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection, ServerSession};
use ksasl::mech::{
    ClientMechanism, ServerMechanism, OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512,
};
use ksasl::random::{RandomSource, SharedRandom};
use ksasl::session::{Gate, ReauthTiming};
use ksasl::token::{TokenAuthority, TokenConfig};
use ksasl::*;
use sha2::{Digest, Sha256, Sha512};

// ---------------------------------------------------------------------------------------
// Fixtures.

/// The virtual clock's start (2027-01-15).
pub const T0: i64 = 1_800_000_000_000;
/// `connections.max.reauth.ms` of every server configuration: short, so that time steps
/// reach expiry and re-authentication quickly.
pub const MAX_REAUTH_MS: i64 = 10_000;
/// The SCRAM server nonce (appended to the client's).
pub const SNONCE: &str = "fuzzsrvnonce";
/// The SCRAM client nonce.
pub const CNONCE: &str = "fuzzclinonce";
/// Iterations of every stored SCRAM credential.
pub const ITERATIONS: u32 = 4096;
/// The unknown-user mask's secret.
pub const MASK_SECRET: &[u8] = b"fuzz-unknown-user-mask-secret-0123";
/// The only users that exist: (name, password, salt). Their passwords are known to the
/// targets alone (and to the seed generator that plays a real client).
pub const USERS: [(&str, &str, &[u8]); 2] = [
    ("alice", "alice-fuzz-secret", b"alice-fuzz-salt"),
    ("bob", "bob-fuzz-secret", b"bob-fuzz-salt-2"),
];
/// Owner of the one delegation token the server knows.
pub const TOKEN_OWNER: &str = "alice";
/// How long the unsecured tokens of the seeds live.
pub const TOKEN_LIFETIME_S: i64 = 3600;

/// Random bytes that are not random (nonces are fixed anyway): a deterministic source for
/// the re-authentication jitter and the token authority.
#[derive(Debug)]
pub struct FixedRandom;

impl RandomSource for FixedRandom {
    fn fill(&self, buf: &mut [u8]) -> ksasl::Result<()> {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        Ok(())
    }
}

/// A secret the oracles know: a login name, whom it authenticates, its password, and its
/// SCRAM salt and keys per mechanism.
pub struct Known {
    /// SCRAM username / PLAIN authcid (the token id for a token).
    pub login: String,
    /// The principal name a login authenticates as.
    pub principal: String,
    /// The password (the token HMAC in base64 for a token).
    pub password: String,
    /// A delegation-token login (`tokenauth=true`).
    pub token: bool,
    /// Per SCRAM mechanism: salt, iterations, client key, stored key, server key.
    pub scram: Vec<(ScramMechanism, ScramKeys)>,
}

/// The derived SCRAM keys of one credential.
#[derive(Clone)]
pub struct ScramKeys {
    /// The salt.
    pub salt: Vec<u8>,
    /// The iterations.
    pub iterations: u32,
    /// ClientKey.
    pub client_key: Vec<u8>,
    /// StoredKey = H(ClientKey).
    pub stored_key: Vec<u8>,
    /// ServerKey.
    pub server_key: Vec<u8>,
}

/// Everything precomputed once per process: the store, the token authority, the secrets.
pub struct Fixtures {
    /// The users (PLAIN passwords and SCRAM credentials with fixed salts).
    pub store: Arc<CredentialStore>,
    /// One delegation token owned by [`TOKEN_OWNER`].
    pub authority: Arc<TokenAuthority>,
    /// The token (id and HMAC).
    pub token: ksasl::token::DelegationToken,
    /// Every secret that can authenticate.
    pub known: Vec<Known>,
    /// The client's credentials (shared, so their PBKDF2 key cache survives between inputs).
    pub alice: Arc<PasswordCredential>,
    /// A second client credential (for the client-final and server-final message targets).
    pub alice2: Arc<PasswordCredential>,
    /// The client's OAUTHBEARER token (unsecured, issued at T0 for alice).
    pub oauth_token: OAuthBearerToken,
}

/// The process-wide fixtures.
pub fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let store = Arc::new(CredentialStore::new());
        let mut known = Vec::new();
        for (name, password, salt) in USERS {
            store.set_password(name, password).unwrap();
            let mut scram = Vec::new();
            for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
                let c = ScramCredential::derive(m, password.as_bytes(), salt, ITERATIONS).unwrap();
                store.set_scram(name, c).unwrap();
                scram.push((m, oracle::keys(m, password.as_bytes(), salt, ITERATIONS)));
            }
            known.push(Known {
                login: name.into(),
                principal: name.into(),
                password: password.into(),
                token: false,
                scram,
            });
        }
        let authority = Arc::new(
            TokenAuthority::new(
                TokenConfig::new(Secret::from("fuzz-token-secret-key")),
                SharedRandom(Arc::new(FixedRandom)),
            )
            .unwrap(),
        );
        let token = authority
            .create(&Principal::user(TOKEN_OWNER), None, &[], 0, T0)
            .unwrap();
        let token_password = String::from_utf8(token.hmac_base64().expose().to_vec()).unwrap();
        let mut scram = Vec::new();
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            let request = CredentialRequest {
                mechanism: m.name().into(),
                username: token.token_id().into(),
                token_authenticated: true,
            };
            let CredentialAnswer::Found(c) = authority.answer(&request) else {
                panic!("the authority must know its token")
            };
            let ksasl::CredentialSecret::Scram(c) = c.secret() else {
                panic!("a token credential is a SCRAM credential")
            };
            scram.push((
                m,
                oracle::keys(m, token_password.as_bytes(), c.salt(), c.iterations()),
            ));
        }
        known.push(Known {
            login: token.token_id().into(),
            principal: TOKEN_OWNER.into(),
            password: token_password,
            token: true,
            scram,
        });
        let (user, password, _) = USERS[0];
        Fixtures {
            store,
            authority,
            token,
            known,
            alice: Arc::new(PasswordCredential::new(user, password).unwrap()),
            alice2: Arc::new(PasswordCredential::new(user, password).unwrap()),
            oauth_token: UnsecuredTokenBuilder::for_principal(user)
                .lifetime_seconds(TOKEN_LIFETIME_S)
                .build(T0)
                .unwrap(),
        }
    })
}

/// A SCRAM server with the fixed nonce.
pub fn scram_server(m: ScramMechanism) -> ScramServer {
    ScramServer::new(
        m,
        ScramServerOptions {
            fixed_nonce: Some(SNONCE.into()),
            ..Default::default()
        },
    )
}

/// A SCRAM client with the fixed nonce.
pub fn scram_client(m: ScramMechanism, credential: Arc<PasswordCredential>) -> ScramClient {
    ScramClient::new(
        m,
        credential,
        ScramClientOptions {
            fixed_nonce: Some(CNONCE.into()),
            ..Default::default()
        },
    )
    .unwrap()
}

/// Server configuration knobs, from the first input byte of `server_driver`.
pub mod server_flags {
    /// Unknown users get stand-in credentials (enumeration resistance).
    pub const MASK: u8 = 1;
    /// A failed re-authentication keeps the old session until it expires.
    pub const RETRY: u8 = 2;
    /// `sasl.server.max.receive.size` 1 KiB, `socket.request.max.bytes` 4 KiB.
    pub const SMALL: u8 = 4;
    /// The OAUTHBEARER validator sits behind the verdict cache.
    pub const CACHED: u8 = 8;
    /// `connection.failed.authentication.delay.ms` 0.
    pub const NO_DELAY: u8 = 16;
    /// The unsecured validator allows 30 s of clock skew.
    pub const SKEW: u8 = 32;
    /// Delegation-token logins are looked up in the token authority.
    pub const TOKENS: u8 = 64;
    /// No credential lookup for users: every user login asks the host (`NeedCredential`),
    /// which answers with `provide_credential` (the `CREDENTIAL` operation).
    pub const PULL: u8 = 128;
}

/// The clock skew of [`server_flags::SKEW`].
pub const SKEW_MS: i64 = 30_000;

/// The server configuration of a flags byte (built per input: configurations hold metrics and
/// caches, which must not carry over from one input to the next).
pub fn server_config(flags: u8) -> Arc<ServerConfig> {
    use server_flags::*;
    let f = fixtures();
    let mut r = MechanismRegistry::new();
    r.register_server(PLAIN, || {
        Ok(Box::new(PlainServer::new()) as Box<dyn ServerMechanism>)
    })
    .unwrap();
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        r.register_server(m.name(), move || {
            Ok(Box::new(scram_server(m)) as Box<dyn ServerMechanism>)
        })
        .unwrap();
    }
    let v = UnsecuredValidator::new(UnsecuredValidatorConfig {
        allowable_clock_skew_ms: if flags & SKEW != 0 { SKEW_MS } else { 0 },
        ..Default::default()
    })
    .unwrap();
    if flags & CACHED != 0 {
        r.register_cached_oauthbearer_server(Arc::new(v));
    } else {
        r.register_oauthbearer_server(Arc::new(v));
    }
    if flags & PULL == 0 {
        r.set_credential_lookup(Some(f.store.clone()));
    }
    if flags & TOKENS != 0 {
        r.set_token_lookup(Some(f.authority.clone()));
    }
    let mut b = ServerConfig::builder(r);
    b.set_max_reauth_ms(MAX_REAUTH_MS);
    if flags & MASK != 0 {
        b.set_unknown_user_mask(MASK_SECRET, ITERATIONS as i64);
    }
    if flags & RETRY != 0 {
        b.set_reauth_retry_ms(2_000);
    }
    if flags & SMALL != 0 {
        b.set_max_receive_size(1024);
        b.set_max_request_size(4096);
    }
    if flags & NO_DELAY != 0 {
        b.set_failed_authentication_delay_ms(0);
    }
    b.build().unwrap()
}

/// The client mechanisms, by the low two bits of the client flags byte.
pub const CLIENT_MECHANISMS: [&str; 4] = [PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER];

/// How the client frames its messages, by bits 2-4 of the client flags byte.
pub const FRAMINGS: [&str; 8] = [
    "ApiVersions v3",
    "ApiVersions v0",
    "ApiVersions v5",
    "known: SaslHandshake v1, SaslAuthenticate v0",
    "known: SaslHandshake v1, SaslAuthenticate v1",
    "known: SaslHandshake v1, SaslAuthenticate v2",
    "known: SaslHandshake v0 (legacy raw frames)",
    "ApiVersions v4",
];

/// Client configuration knobs beyond mechanism and framing.
pub mod client_flags {
    /// A failed re-authentication is retried while the session lasts.
    pub const RETRY: u8 = 0x20;
    /// librdkafka's re-authentication timing.
    pub const LIBRDKAFKA: u8 = 0x40;
    /// `max_receive_size` 1 KiB.
    pub const SMALL: u8 = 0x80;
}

/// The mechanism of a client flags byte.
pub fn client_mechanism(flags: u8) -> &'static str {
    CLIENT_MECHANISMS[(flags & 3) as usize]
}

/// The client configuration of a flags byte.
pub fn client_config(flags: u8) -> Arc<ClientConfig> {
    let f = fixtures();
    let mut r = MechanismRegistry::new();
    let c = f.alice.clone();
    r.register_client(PLAIN, move || {
        Ok(Box::new(PlainClient::new(c.clone())) as Box<dyn ClientMechanism>)
    })
    .unwrap();
    for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        let c = f.alice.clone();
        r.register_client(m.name(), move || {
            Ok(Box::new(scram_client(m, c.clone())) as Box<dyn ClientMechanism>)
        })
        .unwrap();
    }
    let token = f.oauth_token.clone();
    r.register_client(OAUTHBEARER, move || {
        Ok(
            Box::new(OAuthBearerClient::new(token.clone(), SaslExtensions::new()))
                as Box<dyn ClientMechanism>,
        )
    })
    .unwrap();
    let mut b = ClientConfig::builder(r, client_mechanism(flags));
    match (flags >> 2) & 7 {
        0 => b.set_api_versions_version(3),
        1 => b.set_api_versions_version(0),
        2 => b.set_api_versions_version(5),
        3 => b.set_known_versions(1, Some(0)),
        4 => b.set_known_versions(1, Some(1)),
        5 => b.set_known_versions(1, Some(2)),
        6 => b.set_known_versions(0, None),
        _ => b.set_api_versions_version(4),
    };
    b.set_random(SharedRandom(Arc::new(FixedRandom)));
    if flags & client_flags::RETRY != 0 {
        b.set_reauth_retry_ms(2_000);
    }
    if flags & client_flags::LIBRDKAFKA != 0 {
        b.set_reauth_timing(ReauthTiming::Librdkafka);
    }
    if flags & client_flags::SMALL != 0 {
        b.set_max_receive_size(1024);
    }
    b.build().unwrap()
}

// ---------------------------------------------------------------------------------------
// The input format of the driver targets.

/// The most operations one input runs (bounds the time of one execution).
pub const MAX_OPS: usize = 96;

/// One operation: what to do, after how much time.
#[derive(Clone, Copy, Debug)]
pub struct Op<'a> {
    /// The operation (low four bits; the meaning depends on the target).
    pub kind: u8,
    /// Milliseconds to advance the clock first (never negative).
    pub dt: i64,
    /// The operation's bytes.
    pub data: &'a [u8],
}

/// Bit 7 of an operation byte: its time step counts seconds instead of milliseconds.
pub const SECONDS: u8 = 0x80;

/// Splits an input into its flags byte and operations: each operation is
/// `kind:u8 dt:u16be len:u16be data[len]` (a short tail takes what is left).
pub fn parse_ops(input: &[u8]) -> Option<(u8, Vec<Op<'_>>)> {
    let (&flags, mut rest) = input.split_first()?;
    let mut ops = Vec::new();
    while rest.len() >= 5 && ops.len() < MAX_OPS {
        let kind = rest[0];
        let dt = u16::from_be_bytes([rest[1], rest[2]]) as i64;
        let dt = if kind & SECONDS != 0 { dt * 1000 } else { dt };
        let len = u16::from_be_bytes([rest[3], rest[4]]) as usize;
        let end = (5 + len).min(rest.len());
        ops.push(Op {
            kind: kind & 0x0f,
            dt,
            data: &rest[5..end],
        });
        rest = &rest[end..];
    }
    Some((flags, ops))
}

/// Appends an operation in the format [`parse_ops`] reads; a time step that does not fit
/// one operation is carried by `tick` operations before it.
pub fn push_op(out: &mut Vec<u8>, kind: u8, mut dt: i64, data: &[u8], tick: u8) {
    assert!(dt >= 0 && data.len() <= u16::MAX as usize);
    while dt > 0xffff && !(dt % 1000 == 0 && dt / 1000 <= 0xffff) {
        let step = if dt / 1000 > 0xffff {
            0xffff * 1000
        } else {
            (dt / 1000) * 1000
        };
        out.push(tick | SECONDS);
        out.extend_from_slice(&((step / 1000) as u16).to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        dt -= step;
    }
    let (k, v) = if dt > 0xffff {
        (kind | SECONDS, dt / 1000)
    } else {
        (kind, dt)
    };
    out.push(k);
    out.extend_from_slice(&(v as u16).to_be_bytes());
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
}

/// Splits length-prefixed frames; `None` if the bytes are not exactly such frames.
pub fn split_frames(mut bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < 4 {
            return None;
        }
        let n = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let n = usize::try_from(n).ok()?;
        if bytes.len() < 4 + n {
            return None;
        }
        frames.push(&bytes[4..4 + n]);
        bytes = &bytes[4 + n..];
    }
    Some(frames)
}

/// An error must never be the one ksasl makes of a panic inside a mechanism (the exchange
/// catches those; the fuzzer must not miss them).
pub fn no_panic(e: &Error) {
    assert_ne!(e.code(), ErrorCode::Panic, "a mechanism panicked: {e}");
}

// ---------------------------------------------------------------------------------------
// Oracles.

/// Independent computations of what a correct peer sends, and the checks built on them.
pub mod oracle {
    use super::*;

    fn hmac_parts<M: Mac + hmac::digest::KeyInit>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        let mut mac = <M as hmac::digest::KeyInit>::new_from_slice(key).expect("any key length");
        for p in parts {
            mac.update(p);
        }
        mac.finalize().into_bytes().to_vec()
    }

    /// HMAC of the mechanism's hash.
    pub fn hmac(m: ScramMechanism, key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        match m {
            ScramMechanism::Sha256 => hmac_parts::<Hmac<Sha256>>(key, parts),
            ScramMechanism::Sha512 => hmac_parts::<Hmac<Sha512>>(key, parts),
        }
    }

    /// The mechanism's hash.
    pub fn hash(m: ScramMechanism, data: &[u8]) -> Vec<u8> {
        match m {
            ScramMechanism::Sha256 => Sha256::digest(data).to_vec(),
            ScramMechanism::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// RFC 5802's keys of a password.
    pub fn keys(m: ScramMechanism, password: &[u8], salt: &[u8], iterations: u32) -> ScramKeys {
        let salted = match m {
            ScramMechanism::Sha256 => {
                pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password, salt, iterations).to_vec()
            }
            ScramMechanism::Sha512 => {
                pbkdf2::pbkdf2_hmac_array::<Sha512, 64>(password, salt, iterations).to_vec()
            }
        };
        let client_key = hmac(m, &salted, &[b"Client Key"]);
        let server_key = hmac(m, &salted, &[b"Server Key"]);
        ScramKeys {
            salt: salt.to_vec(),
            iterations,
            stored_key: hash(m, &client_key),
            client_key,
            server_key,
        }
    }

    /// The keys of alice's password for a salt and iteration count, cached (PBKDF2 is slow).
    pub fn alice_keys(m: ScramMechanism, salt: &[u8], iterations: u32) -> ScramKeys {
        static CACHE: OnceLock<Mutex<HashMap<(bool, Vec<u8>, u32), ScramKeys>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let key = (m == ScramMechanism::Sha512, salt.to_vec(), iterations);
        if let Some(k) = cache.lock().unwrap().get(&key) {
            return k.clone();
        }
        let k = keys(m, USERS[0].1.as_bytes(), salt, iterations);
        cache.lock().unwrap().insert(key, k.clone());
        k
    }

    /// RFC 5802 `saslname` unescaping, written here independently of ksasl.
    pub fn unescape(s: &str) -> Option<String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('=') {
            out.push_str(&rest[..i]);
            match rest.get(i..i + 3) {
                Some("=2C") => out.push(','),
                Some("=3D") => out.push('='),
                _ => return None,
            }
            rest = &rest[i + 3..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// Whether `fin` (a client-final message) carries a correct proof for `first` (a
    /// client-first message) with the server's fixed nonce, for the principal `principal`
    /// authenticated with SCRAM mechanism `m`.
    pub fn scram_client_proof_ok(
        m: ScramMechanism,
        principal: &str,
        first: &[u8],
        fin: &[u8],
    ) -> bool {
        let (Ok(first), Ok(fin)) = (std::str::from_utf8(first), std::str::from_utf8(fin)) else {
            return false;
        };
        // gs2 header: flag, authzid, then the bare message.
        let mut gs2 = first.splitn(3, ',');
        let (Some(_flag), Some(_authzid), Some(bare)) = (gs2.next(), gs2.next(), gs2.next()) else {
            return false;
        };
        let parts: Vec<&str> = bare.split(',').collect();
        let (Some(user), Some(cnonce)) = (
            parts.first().and_then(|p| p.strip_prefix("n=")),
            parts.get(1).and_then(|p| p.strip_prefix("r=")),
        ) else {
            return false;
        };
        let Some(user) = unescape(user) else {
            return false;
        };
        let token = parts[2..].iter().any(|p| {
            p.strip_prefix("tokenauth=")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        });
        let Some(known) = fixtures()
            .known
            .iter()
            .find(|k| k.login == user && k.token == token && k.principal == principal)
        else {
            return false;
        };
        let Some((_, keys)) = known.scram.iter().find(|(km, _)| *km == m) else {
            return false;
        };
        let Some(i) = fin.rfind(",p=") else {
            return false;
        };
        let (without_proof, proof) = (&fin[..i], &fin[i + 3..]);
        let Ok(proof) = STANDARD.decode(proof) else {
            return false;
        };
        let server_first = format!(
            "r={cnonce}{SNONCE},s={},i={}",
            STANDARD.encode(&keys.salt),
            keys.iterations
        );
        let signature = hmac(
            m,
            &keys.stored_key,
            &[
                bare.as_bytes(),
                b",",
                server_first.as_bytes(),
                b",",
                without_proof.as_bytes(),
            ],
        );
        if proof.len() != signature.len() {
            return false;
        }
        let client_key: Vec<u8> = signature.iter().zip(&proof).map(|(a, b)| a ^ b).collect();
        hash(m, &client_key) == keys.stored_key
    }

    /// Whether `fin` (a server-final message) carries the signature a server holding alice's
    /// password would compute for `server_first` (and the client's fixed nonce).
    pub fn scram_server_signature_ok(m: ScramMechanism, server_first: &[u8], fin: &[u8]) -> bool {
        let (Ok(sf), Ok(fin)) = (std::str::from_utf8(server_first), std::str::from_utf8(fin))
        else {
            return false;
        };
        let parts: Vec<&str> = sf.split(',').collect();
        let (Some(nonce), Some(salt), Some(iterations)) = (
            parts.first().and_then(|p| p.strip_prefix("r=")),
            parts.get(1).and_then(|p| p.strip_prefix("s=")),
            parts.get(2).and_then(|p| p.strip_prefix("i=")),
        ) else {
            return false;
        };
        let (Ok(salt), Ok(iterations)) = (STANDARD.decode(salt), iterations.parse::<u32>()) else {
            return false;
        };
        if !nonce.starts_with(CNONCE) || iterations < 4096 || iterations > 16384 {
            return false;
        }
        let Some(v) = fin.split(',').next().and_then(|p| p.strip_prefix("v=")) else {
            return false;
        };
        let Ok(v) = STANDARD.decode(v) else {
            return false;
        };
        let keys = alice_keys(m, &salt, iterations);
        let bare = format!("n={},r={CNONCE}", USERS[0].0);
        let without_proof = format!("c=biws,r={nonce}");
        let expected = hmac(
            m,
            &keys.server_key,
            &[
                bare.as_bytes(),
                b",",
                sf.as_bytes(),
                b",",
                without_proof.as_bytes(),
            ],
        );
        v == expected
    }

    /// Whether `message` is a PLAIN message with the password of `principal`.
    pub fn plain_ok(principal: &str, message: &[u8]) -> bool {
        let mut parts = message.splitn(3, |&b| b == 0);
        let (Some(authzid), Some(user), Some(password)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        fixtures().known.iter().any(|k| {
            !k.token
                && k.principal == principal
                && k.login.as_bytes() == user
                && k.password.as_bytes() == password
                && (authzid.is_empty() || authzid == user)
        })
    }

    /// Decodes a JWT part (base64url, or standard base64 when it uses `+` or `/`; padding
    /// optional, trailing bits allowed), as Kafka's unsecured validator does.
    pub fn jwt_part(part: &str) -> Option<Vec<u8>> {
        use base64::alphabet;
        use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
        let config = GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true);
        let standard = part.contains(['+', '/']);
        if standard && part.contains(['-', '_']) {
            return None;
        }
        let alphabet = if standard {
            &alphabet::STANDARD
        } else {
            &alphabet::URL_SAFE
        };
        GeneralPurpose::new(alphabet, config).decode(part).ok()
    }

    /// The claims of an unsecured JWT (`alg: none`, empty signature).
    pub fn unsecured_claims(token: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
        let parts: Vec<&str> = token.split('.').collect();
        if parts.len() != 3 || !parts[2].is_empty() {
            return None;
        }
        let header: serde_json::Value = serde_json::from_slice(&jwt_part(parts[0])?).ok()?;
        if header.get("alg")?.as_str()? != "none" {
            return None;
        }
        match serde_json::from_slice(&jwt_part(parts[1])?).ok()? {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The token of an OAUTHBEARER initial response (the `auth` value after its scheme). A
    /// key given twice takes its last value, as in Kafka (`Utils.parseMap` into a map).
    pub fn bearer_token(message: &[u8]) -> Option<&str> {
        let text = std::str::from_utf8(message).ok()?;
        let auth = text
            .split('\x01')
            .filter_map(|kv| kv.strip_prefix("auth="))
            .last()?;
        let (scheme, token) = auth.split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim_start_matches(' '))
    }

    /// Whether `message` is an OAUTHBEARER initial response whose unsecured token names
    /// `principal` as its subject and has not expired at `now_ms` (with `skew_ms`).
    pub fn oauth_ok(principal: &str, message: &[u8], now_ms: i64, skew_ms: i64) -> bool {
        let Some(claims) = bearer_token(message).and_then(unsecured_claims) else {
            return false;
        };
        let sub_ok = claims.get("sub").and_then(|v| v.as_str()) == Some(principal);
        let exp_ok = claims
            .get("exp")
            .and_then(|v| v.as_f64())
            .is_some_and(|exp| exp * 1000.0 > (now_ms - skew_ms) as f64);
        sub_ok && exp_ok
    }
}

/// The SASL payloads a request frame may carry: a SaslAuthenticate request's bytes, and the
/// frame itself (a legacy raw token).
pub fn request_payloads(frame: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![frame.to_vec()];
    if let Ok((h, body)) = RequestHeader::parse(frame) {
        if h.api_key == 36 {
            if let Ok(r) = decode_body::<SaslAuthenticateRequest>(h.api_version, body) {
                out.push(r.auth_bytes);
            }
        }
    }
    out
}

/// The SASL payloads a response frame may carry, read as every SaslAuthenticate version and
/// as a raw legacy token.
pub fn response_payloads(frame: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![frame.to_vec()];
    for v in 0..=2 {
        if let Ok((_, r)) = decode_response::<SaslAuthenticateResponse>(v, frame) {
            out.push(r.auth_bytes);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The server harness.

/// Operations of `server_driver` (the low four bits of an operation byte).
pub mod server_ops {
    /// Bytes from the socket: the host reads each 4-byte length, asks `check_frame_size`,
    /// reads the body, asks the gate, and hands the frame to the connection unless the gate
    /// routes it elsewhere (a live session's requests are answered by a toy broker).
    pub const STREAM: u8 = 0;
    /// The data is one frame, handed to `handle_frame` whatever the gate says.
    pub const FRAME: u8 = 1;
    /// `provide_credential`: with a request pending (configuration `PULL`), the store's
    /// answer, `Unknown` or `Unavailable` by the data's first byte; else `Unknown` (a misuse).
    pub const CREDENTIAL: u8 = 2;
    /// `resume(Err)` (nothing is ever pending: a misuse).
    pub const RESUME: u8 = 3;
    /// Time passes; the gate is asked about the API key in the data.
    pub const TICK: u8 = 4;
    /// `check_frame_size` with the data's first four bytes.
    pub const SIZE: u8 = 5;
}

/// The API keys the gate is asked about after every operation.
pub const GATE_KEYS: [i16; 7] = [0, 3, 17, 18, 36, 38, -1];

/// A server connection driven like a host drives it, with its invariants checked after
/// every operation.
pub struct ServerHarness {
    /// The connection.
    pub conn: ServerConnection,
    flags: u8,
    /// The virtual clock.
    pub now: i64,
    buf: Vec<u8>,
    closed: bool,
    /// Every SASL payload handed to the connection, oldest first.
    history: Vec<Vec<u8>>,
    /// The frame whose step asked for the credential (what a credential answer completes).
    asking_frame: Vec<u8>,
    deadline: Option<i64>,
    /// What the connection wrote (and the toy broker's answers), for the seed generator.
    pub output: Vec<u8>,
    /// How many times the connection authenticated and re-authenticated.
    pub authentications: u32,
}

impl ServerHarness {
    /// A connection for a flags byte at T0.
    pub fn new(flags: u8) -> Self {
        ServerHarness {
            conn: ServerConnection::new(server_config(flags)),
            flags,
            now: T0,
            buf: Vec::new(),
            closed: false,
            history: Vec::new(),
            asking_frame: Vec::new(),
            deadline: None,
            output: Vec::new(),
            authentications: 0,
        }
    }

    /// Runs a whole input.
    pub fn run(input: &[u8]) {
        let Some((flags, ops)) = parse_ops(input) else {
            return;
        };
        let mut h = ServerHarness::new(flags);
        for op in ops {
            h.step(op);
        }
    }

    /// Whether the host has closed the connection.
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// One operation, then every invariant.
    pub fn step(&mut self, op: Op<'_>) {
        self.now += op.dt;
        match op.kind {
            server_ops::STREAM => self.stream(op.data),
            server_ops::FRAME => self.frame(op.data),
            server_ops::CREDENTIAL => {
                let before = self.conn.session().cloned();
                match self.conn.pending_request().cloned() {
                    Some(req) => {
                        assert!(self.flags & server_flags::PULL != 0, "asked without PULL");
                        let answer = match op.data.first().copied().unwrap_or(0) % 3 {
                            0 => match fixtures().store.lookup(&req) {
                                ksasl::Lookup::Now(a) => a,
                                ksasl::Lookup::Later => panic!("the store answers at once"),
                            },
                            1 => CredentialAnswer::Unknown,
                            _ => CredentialAnswer::Unavailable("fuzz".into()),
                        };
                        let a = self.conn.provide_credential(answer, self.now);
                        let frame = self.asking_frame.clone();
                        self.action(a, before, &frame);
                    }
                    None => {
                        let a = self
                            .conn
                            .provide_credential(CredentialAnswer::Unknown, self.now);
                        self.misuse(a, before);
                    }
                }
            }
            server_ops::RESUME => {
                let before = self.conn.session().cloned();
                let e = Error::new(ErrorCode::InvalidArgument, "fuzz");
                let a = self.conn.resume(Err(e), self.now);
                self.misuse(a, before);
            }
            server_ops::SIZE => {
                let mut b = [0u8; 4];
                let n = op.data.len().min(4);
                b[..n].copy_from_slice(&op.data[..n]);
                let declared = i32::from_be_bytes(b);
                let limit = self.frame_limit();
                match self.conn.check_frame_size(declared, self.now) {
                    Ok(size) => assert!(size as i64 == declared as i64 && size as i64 <= limit),
                    Err(e) => {
                        no_panic(&e);
                        assert!(declared < 0 || declared as i64 > limit);
                        self.after_failure();
                    }
                }
            }
            _ => {
                let k = op
                    .data
                    .get(..2)
                    .map_or(-1, |b| i16::from_be_bytes([b[0], b[1]]));
                self.check_gate(k);
            }
        }
        self.check();
    }

    /// The frame size `check_frame_size` allows now: `sasl.server.max.receive.size` until a
    /// session is live, `socket.request.max.bytes` after.
    fn frame_limit(&self) -> i64 {
        let small = self.flags & server_flags::SMALL != 0;
        match (self.conn.is_ready(), small) {
            (true, true) => 4096,
            (true, false) => 104_857_600,
            (false, true) => 1024,
            (false, false) => 512 * 1024,
        }
    }

    fn stream(&mut self, data: &[u8]) {
        if self.closed {
            return;
        }
        self.buf.extend_from_slice(data);
        while self.buf.len() >= 4 && !self.closed {
            let declared = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
            let size = match self.conn.check_frame_size(declared, self.now) {
                Ok(size) => size,
                Err(e) => {
                    no_panic(&e);
                    self.after_failure();
                    self.closed = true;
                    return;
                }
            };
            if self.buf.len() < 4 + size {
                return;
            }
            let frame: Vec<u8> = self.buf[4..4 + size].to_vec();
            self.buf.drain(..4 + size);
            self.route(&frame);
        }
    }

    /// A frame routed by the gate, as a broker routes it.
    fn route(&mut self, frame: &[u8]) {
        let prefix = RequestPrefix::parse(frame).ok();
        let key = prefix.map_or(-1, |p| p.api_key);
        match self.conn.gate(key, self.now) {
            Gate::Process => {
                self.assert_live(key);
                // The toy broker answers at once: 4 bytes of correlation id and 4 of body; a
                // frame too short for a request header makes it close the connection.
                let Some(corr) = prefix.map(|p| p.correlation_id) else {
                    self.closed = true;
                    return;
                };
                self.output.extend_from_slice(&8i32.to_be_bytes());
                self.output.extend_from_slice(&corr.to_be_bytes());
                self.output.extend_from_slice(&[0xab; 4]);
            }
            Gate::CloseExpired | Gate::Close => self.closed = true,
            Gate::BeginReauthentication | Gate::NotAuthenticated => self.frame(frame),
        }
    }

    /// A frame handed to the connection.
    fn frame(&mut self, frame: &[u8]) {
        let before = self.conn.session().cloned();
        self.history.extend(request_payloads(frame));
        let action = self.conn.handle_frame(frame, self.now);
        self.action(action, before, frame);
    }

    fn misuse(&mut self, action: ServerAction, before: Option<ServerSession>) {
        match action {
            ServerAction::CloseNow(e) => {
                no_panic(&e);
                assert_eq!(e.code(), ErrorCode::WrongState, "{e}");
            }
            other => panic!("nothing was pending, yet {other:?}"),
        }
        assert_eq!(self.conn.session(), before.as_ref());
    }

    fn action(&mut self, action: ServerAction, before: Option<ServerSession>, frame: &[u8]) {
        let now = self.now;
        match &action {
            ServerAction::Authenticated(s) => {
                assert!(
                    before.is_none(),
                    "authenticated twice: {before:?} then {s:?}"
                );
                self.authenticated(s, frame);
            }
            ServerAction::Reauthenticated(s) => {
                let old = before.as_ref().expect("re-authenticated without a session");
                assert_eq!(
                    old.outcome.principal, s.outcome.principal,
                    "principal changed"
                );
                assert_eq!(
                    old.outcome.mechanism, s.outcome.mechanism,
                    "mechanism changed"
                );
                self.authenticated(s, frame);
            }
            ServerAction::FailAt { deadline_ms, error } => {
                no_panic(error);
                assert!(*deadline_ms >= now, "FailAt {deadline_ms} before now {now}");
                assert_eq!(self.conn.session(), before.as_ref());
                self.after_failure();
                self.closed = true;
            }
            ServerAction::CloseNow(e) => {
                no_panic(e);
                assert_eq!(self.conn.session(), before.as_ref());
                self.closed = true;
            }
            ServerAction::ReauthenticationFailed(e) => {
                no_panic(e);
                assert!(
                    before.is_some(),
                    "a re-authentication failed without a session"
                );
                assert_eq!(self.conn.session(), before.as_ref());
                assert!(
                    self.flags & server_flags::RETRY != 0,
                    "kept a session under Kafka's policy"
                );
            }
            ServerAction::Continue => assert_eq!(self.conn.session(), before.as_ref()),
            ServerAction::NeedCredential(req) => {
                assert!(
                    self.flags & server_flags::PULL != 0,
                    "the store answers at once"
                );
                assert_eq!(self.conn.pending_request(), Some(req));
                self.asking_frame = frame.to_vec();
                assert_eq!(self.conn.session(), before.as_ref());
            }
            ServerAction::Pending(_) => panic!("no host mechanism exists: {action:?}"),
        }
    }

    /// Checks a new session: proved, current, and bounded in time.
    fn authenticated(&mut self, s: &ServerSession, frame: &[u8]) {
        let now = self.now;
        self.authentications += 1;
        assert_eq!(self.conn.session(), Some(s));
        let name = &s.outcome.principal.name;
        assert_eq!(s.outcome.principal.principal_type, "User");
        let payloads = request_payloads(frame);
        let proved = match s.outcome.mechanism.as_str() {
            PLAIN => payloads.iter().any(|p| oracle::plain_ok(name, p)),
            OAUTHBEARER => {
                let skew = if self.flags & server_flags::SKEW != 0 {
                    SKEW_MS
                } else {
                    0
                };
                payloads
                    .iter()
                    .any(|p| oracle::oauth_ok(name, p, now, skew))
            }
            m => {
                let m = ScramMechanism::from_name(m).expect("a SCRAM mechanism");
                payloads.iter().any(|fin| {
                    self.history
                        .iter()
                        .any(|first| oracle::scram_client_proof_ok(m, name, first, fin))
                })
            }
        };
        assert!(
            proved,
            "{} authenticated {name} without a valid proof",
            s.outcome.mechanism
        );
        let expiry = s
            .expiry_ms
            .expect("max_reauth_ms is set: every session expires");
        assert!(
            expiry >= now && expiry <= now + MAX_REAUTH_MS,
            "expiry {expiry} at {now}"
        );
        assert_eq!(s.lifetime_ms, expiry - now);
        if let Some(c) = s.outcome.credential_expiry_ms {
            assert!(expiry <= c.max(now), "the session outlives its credential");
        }
    }

    /// After a failure the gate closes everything.
    fn after_failure(&mut self) {
        for k in GATE_KEYS {
            assert_eq!(self.conn.gate(k, self.now), Gate::Close);
        }
    }

    fn assert_live(&self, key: i16) {
        let s = self.conn.session().expect("process without a session");
        let e = s.expiry_ms.unwrap_or(i64::MAX);
        assert!(
            self.now <= e,
            "process for api {key} at {} after expiry {e}",
            self.now
        );
    }

    fn check_gate(&self, key: i16) {
        if self.conn.gate(key, self.now) == Gate::Process {
            self.assert_live(key);
        }
    }

    /// The invariants that hold after every operation.
    fn check(&mut self) {
        for k in GATE_KEYS {
            self.check_gate(k);
        }
        assert_eq!(
            self.conn.session_expiry_ms(),
            self.conn.session().and_then(|s| s.expiry_ms)
        );
        let d = self.conn.next_deadline();
        if d != self.deadline {
            if let Some(d) = d {
                assert!(d >= self.now, "new deadline {d} before now {}", self.now);
            }
            self.deadline = d;
        }
        if let Some(out) = self.conn.poll_transmit() {
            assert!(
                split_frames(&out).is_some(),
                "the output is not length-prefixed frames"
            );
            self.output.extend_from_slice(&out);
        }
        if self.conn.is_ready() {
            assert!(self.conn.session().is_some());
        }
    }

    /// Takes what the connection (and the toy broker) wrote since the last call.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.output)
    }
}

// ---------------------------------------------------------------------------------------
// The client harness.

/// Operations of `client_driver`.
pub mod client_ops {
    /// Bytes from the socket, split into frames by their 4-byte lengths (a negative or too
    /// large length closes the connection).
    pub const STREAM: u8 = 0;
    /// The data is one frame for `handle_frame`.
    pub const FRAME: u8 = 1;
    /// `handle_timeout`.
    pub const TIMEOUT: u8 = 2;
    /// `before_request` (a request is sent when it says so).
    pub const REQUEST: u8 = 3;
    /// `start_reauthentication`.
    pub const REAUTH: u8 = 4;
    /// `connection_closed`.
    pub const CLOSED: u8 = 5;
    /// `resume(Err)` (nothing is ever pending: a misuse).
    pub const RESUME: u8 = 6;
    /// Time passes.
    pub const TICK: u8 = 7;
}

/// A client connection driven like a host drives it, started at T0, with its invariants
/// checked after every operation.
pub struct ClientHarness {
    /// The connection.
    pub conn: ClientConnection,
    flags: u8,
    /// The virtual clock.
    pub now: i64,
    buf: Vec<u8>,
    closed: bool,
    /// Every SASL payload the connection was handed, oldest first.
    history: Vec<Vec<u8>>,
    deadline: Option<i64>,
    /// What the connection wrote (and the application's requests), for the seed generator.
    pub output: Vec<u8>,
    next_app_corr: i32,
    /// How many times the connection authenticated and re-authenticated.
    pub authentications: u32,
}

impl ClientHarness {
    /// A started connection for a flags byte.
    pub fn new(flags: u8) -> Self {
        let mut h = ClientHarness {
            conn: ClientConnection::new(client_config(flags)),
            flags,
            now: T0,
            buf: Vec::new(),
            closed: false,
            history: Vec::new(),
            deadline: None,
            output: Vec::new(),
            next_app_corr: 0,
            authentications: 0,
        };
        h.conn.start(T0).unwrap();
        h.check();
        h
    }

    /// Runs a whole input.
    pub fn run(input: &[u8]) {
        let Some((flags, ops)) = parse_ops(input) else {
            return;
        };
        let mut h = ClientHarness::new(flags);
        for op in ops {
            h.step(op);
        }
    }

    /// Whether the connection has failed or been closed.
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// One operation, then every invariant.
    pub fn step(&mut self, op: Op<'_>) {
        self.now += op.dt;
        let now = self.now;
        match op.kind {
            client_ops::STREAM => self.stream(op.data),
            client_ops::FRAME => self.frame(op.data),
            client_ops::TIMEOUT => {
                let due = self.conn.reauth_pending(now);
                match self.conn.handle_timeout(now) {
                    Ok(started) => assert!(!started || due),
                    Err(e) => no_panic(&e),
                }
            }
            client_ops::REQUEST => match self.conn.before_request(now) {
                Ok(true) => {
                    assert!(self.conn.is_ready() && !self.conn.is_reauthenticating());
                    // METADATA v0 with an empty body, correlation id from the application's range.
                    let corr = self.next_app_corr;
                    self.next_app_corr += 1;
                    self.output.extend_from_slice(&10i32.to_be_bytes());
                    self.output.extend_from_slice(&3i16.to_be_bytes());
                    self.output.extend_from_slice(&0i16.to_be_bytes());
                    self.output.extend_from_slice(&corr.to_be_bytes());
                    self.output.extend_from_slice(&(-1i16).to_be_bytes());
                }
                Ok(false) => {}
                Err(e) => no_panic(&e),
            },
            client_ops::REAUTH => {
                let ready = self.conn.is_ready();
                match self.conn.start_reauthentication(now) {
                    Ok(_) => assert!(ready),
                    Err(e) => no_panic(&e),
                }
            }
            client_ops::CLOSED => {
                let e = self.conn.connection_closed(now);
                no_panic(&e);
                self.closed = true;
            }
            client_ops::RESUME => {
                let before = self.conn.session().copied();
                let e = Error::new(ErrorCode::InvalidArgument, "fuzz");
                match self.conn.resume(Err(e), now) {
                    ClientEvent::Failed(e) => assert_eq!(e.code(), ErrorCode::WrongState),
                    other => panic!("nothing was pending, yet {other:?}"),
                }
                assert_eq!(self.conn.session().copied(), before);
            }
            _ => {
                let _ = self.conn.reauth_pending(now);
            }
        }
        self.check();
    }

    fn stream(&mut self, data: &[u8]) {
        if self.closed {
            return;
        }
        self.buf.extend_from_slice(data);
        let max = if self.flags & client_flags::SMALL != 0 {
            1024
        } else {
            512 * 1024
        };
        while self.buf.len() >= 4 && !self.closed {
            let n = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
            // The host bounds what it buffers (by far more than SASL needs, but not 2 GiB).
            let Some(size) = usize::try_from(n).ok().filter(|&s| s <= max) else {
                let e = self.conn.connection_closed(self.now);
                no_panic(&e);
                self.closed = true;
                return;
            };
            if self.buf.len() < 4 + size {
                return;
            }
            let frame: Vec<u8> = self.buf[4..4 + size].to_vec();
            self.buf.drain(..4 + size);
            self.frame(&frame);
        }
    }

    fn frame(&mut self, frame: &[u8]) {
        let before = self.conn.session().copied();
        let was_live = self.conn.is_ready() || self.conn.is_reauthenticating();
        self.history.extend(response_payloads(frame));
        let now = self.now;
        match self.conn.handle_frame(frame, now) {
            ClientEvent::Continue => assert_eq!(self.conn.session().copied(), before),
            ClientEvent::Application => {
                assert!(was_live, "an application response before authentication");
                assert_eq!(self.conn.session().copied(), before);
            }
            ClientEvent::Authenticated(s) => {
                assert!(before.is_none(), "authenticated twice");
                self.authenticated(&s);
            }
            ClientEvent::Reauthenticated(s) => {
                assert!(before.is_some(), "re-authenticated without a session");
                self.authenticated(&s);
            }
            ClientEvent::ReauthenticationFailed { error, retry_at_ms } => {
                no_panic(&error);
                assert!(
                    self.flags & client_flags::RETRY != 0,
                    "kept a session under Kafka's policy"
                );
                if let Some(t) = retry_at_ms {
                    assert!(t >= now, "retry at {t} before now {now}");
                }
                let s = self.conn.session().expect("the old session is kept");
                assert_eq!(s.reauth_at_ms, retry_at_ms);
            }
            ClientEvent::Failed(e) => {
                no_panic(&e);
                self.closed = true;
            }
            ClientEvent::Pending(w) => panic!("no host mechanism exists: {w:?}"),
        }
    }

    fn authenticated(&mut self, s: &ksasl::session::ClientSession) {
        let now = self.now;
        self.authentications += 1;
        assert_eq!(self.conn.session(), Some(s));
        assert!(s.lifetime_ms >= 0);
        if let Some(t) = s.reauth_at_ms {
            assert!(t >= now, "re-authentication at {t} before now {now}");
        }
        if let Some(t) = s.expiry_ms {
            assert!(t >= now, "expiry {t} before now {now}");
        }
        let mech = client_mechanism(self.flags);
        if let Some(m) = ScramMechanism::from_name(mech) {
            // The server proved it knows alice's password: some server-first and server-final
            // it sent carry the signature computed from that password.
            let h = &self.history;
            let proved = h.iter().any(|fin| {
                fin.starts_with(b"v=")
                    && h.iter().any(|sf| {
                        sf.starts_with(b"r=") && oracle::scram_server_signature_ok(m, sf, fin)
                    })
            });
            assert!(
                proved,
                "{mech} client authenticated without the server's proof"
            );
        }
    }

    /// What the client may send: its mechanism's messages for alice, and nothing else.
    fn check_output(&self, out: &[u8]) {
        let f = fixtures();
        let mech = client_mechanism(self.flags);
        let frames = split_frames(out).expect("the output is not length-prefixed frames");
        for frame in frames {
            let prefix = RequestPrefix::parse(frame).ok();
            let sasl_api = prefix.filter(|p| matches!(p.api_key, 17 | 18 | 36));
            let payload = match sasl_api {
                Some(p) => {
                    assert!(
                        is_sasl_correlation_id(p.correlation_id),
                        "a SASL request outside the reserved correlation ids"
                    );
                    let (h, body) =
                        RequestHeader::parse(frame).expect("a request the client built");
                    match h.api_key {
                        17 => {
                            let r =
                                decode_body::<SaslHandshakeRequest>(h.api_version, body).unwrap();
                            assert_eq!(r.mechanism, mech, "the mechanism changed");
                            continue;
                        }
                        36 => {
                            decode_body::<SaslAuthenticateRequest>(h.api_version, body)
                                .unwrap()
                                .auth_bytes
                        }
                        _ => continue,
                    }
                }
                None => frame.to_vec(),
            };
            let ok = match mech {
                PLAIN => payload == format!("\0{}\0{}", USERS[0].0, USERS[0].1).as_bytes(),
                OAUTHBEARER => {
                    payload == [1] || oracle::bearer_token(&payload) == Some(f.oauth_token.value())
                }
                _ => {
                    payload == format!("n,,n={},r={CNONCE}", USERS[0].0).as_bytes()
                        || payload.starts_with(format!("c=biws,r={CNONCE}").as_bytes())
                }
            };
            assert!(ok, "{mech} client sent an unexpected message {payload:?}");
        }
    }

    /// The invariants that hold after every operation.
    fn check(&mut self) {
        let d = self.conn.next_deadline();
        if d != self.deadline {
            if let Some(d) = d {
                assert!(d >= self.now, "new deadline {d} before now {}", self.now);
            }
            self.deadline = d;
        }
        if self.conn.reauth_pending(self.now) {
            assert!(self.conn.is_ready());
        }
        if let Some(out) = self.conn.poll_transmit() {
            self.check_output(&out);
            self.output.extend_from_slice(&out);
        }
    }

    /// Takes what the connection (and the application) wrote since the last call.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.output)
    }
}

/// Helpers of the `sasl_messages` target shared with the seed generator.
pub mod messages {
    /// The selectors of `sasl_messages` (the first input byte, modulo 8; bit 3 picks
    /// SCRAM-SHA-512 over SCRAM-SHA-256 where it matters).
    pub const PLAIN_SERVER: u8 = 0;
    /// SCRAM server, reading a client-first message (GS2 header included).
    pub const SCRAM_CLIENT_FIRST: u8 = 1;
    /// SCRAM server, reading a client-final message after a fixed client-first.
    pub const SCRAM_CLIENT_FINAL: u8 = 2;
    /// SCRAM client, reading a server-first message.
    pub const SCRAM_SERVER_FIRST: u8 = 3;
    /// SCRAM client, reading a server-final message after a fixed server-first.
    pub const SCRAM_SERVER_FINAL: u8 = 4;
    /// OAUTHBEARER server, reading an initial response (GS2 header, key/values, token).
    pub const OAUTH_SERVER: u8 = 5;
    /// OAUTHBEARER client, reading the server's answer (JSON error or empty).
    pub const OAUTH_CLIENT: u8 = 6;
    /// `unescape_username` and `escape_username`.
    pub const SASLNAME: u8 = 7;
    /// Selects SCRAM-SHA-512.
    pub const SHA512: u8 = 8;
}

/// The fixed server-first message the `SCRAM_SERVER_FINAL` selector answers first.
pub fn fixed_server_first() -> String {
    format!(
        "r={CNONCE}{SNONCE},s={},i={ITERATIONS}",
        STANDARD.encode(USERS[0].2)
    )
}

/// The server-final message a correct server sends after [`fixed_server_first`].
pub fn fixed_server_final(m: ScramMechanism) -> String {
    let keys = oracle::alice_keys(m, USERS[0].2, ITERATIONS);
    let sf = fixed_server_first();
    let bare = format!("n={},r={CNONCE}", USERS[0].0);
    let wp = format!("c=biws,r={CNONCE}{SNONCE}");
    let v = oracle::hmac(
        m,
        &keys.server_key,
        &[bare.as_bytes(), b",", sf.as_bytes(), b",", wp.as_bytes()],
    );
    format!("v={}", STANDARD.encode(v))
}

/// The client-first message of the `SCRAM_CLIENT_FINAL` selector.
pub fn fixed_client_first() -> String {
    format!("n,,n={},r={CNONCE}", USERS[0].0)
}

/// The client-final message a correct alice sends after [`fixed_client_first`].
pub fn fixed_client_final(m: ScramMechanism) -> String {
    let keys = oracle::alice_keys(m, USERS[0].2, ITERATIONS);
    let sf = fixed_server_first();
    let bare = format!("n={},r={CNONCE}", USERS[0].0);
    let wp = format!("c=biws,r={CNONCE}{SNONCE}");
    let sig = oracle::hmac(
        m,
        &keys.stored_key,
        &[bare.as_bytes(), b",", sf.as_bytes(), b",", wp.as_bytes()],
    );
    let proof: Vec<u8> = sig
        .iter()
        .zip(&keys.client_key)
        .map(|(a, b)| a ^ b)
        .collect();
    format!("{wp},p={}", STANDARD.encode(proof))
}

/// A base64url encoding without padding (for seed tokens).
pub fn b64url(data: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(data)
}

/// Keeps `ServerCredential` reachable for targets that build credentials.
pub fn password_credential(p: &str) -> ServerCredential {
    ServerCredential::password(Secret::from(p))
}
