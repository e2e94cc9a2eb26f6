//! No error message, `Display` or `Debug` output contains the password or anything derived
//! from it (salted password, keys, proof, signature), at any stage of an exchange.

mod common;

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ksasl::mech::ServerExchange;
use ksasl::*;

// RFC 7677 inputs and the secrets derived from them.
const PASSWORD: &str = "pencil";
const SALT: &str = "W22ZaJ0SNY7soEsUEjb6gQ==";
const SECRETS_B64: &[&str] = &[
    "xKSVEDI6tPlSysH6mUQZOeeOp01r6B3fcJbodRPcYV0=", // SaltedPassword
    "pg/JI9Z+hkSpLRa5btpe9GVrDHJcSEN0viVTVXaZbos=", // ClientKey
    "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=", // StoredKey
    "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=", // ServerKey
    "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", // ClientProof
    "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", // ServerSignature
];

fn forbidden() -> Vec<String> {
    let mut f = vec![PASSWORD.to_string(), SALT.to_string()];
    for s in SECRETS_B64 {
        let raw = STANDARD.decode(s).unwrap();
        f.push(s.to_string());
        f.push(s.trim_end_matches('=').to_string());
        f.push(raw.iter().map(|b| format!("{b:02x}")).collect());
        f.push(format!("{:?}", &raw[..8]).trim_end_matches(']').to_string());
    }
    f
}

fn check(what: &str, text: &str) {
    for bad in forbidden() {
        assert!(!text.contains(&bad), "{what} leaks {bad:?}: {text}");
    }
}

fn rfc_client() -> ClientExchange {
    let cred = Arc::new(PasswordCredential::new("user", PASSWORD).unwrap());
    check("PasswordCredential", &format!("{cred:?}"));
    let opts = ScramClientOptions {
        fixed_nonce: Some("rOprNGfwEbeRWgbNEkqO".into()),
        ..Default::default()
    };
    let c = ScramClient::new(ScramMechanism::Sha256, cred, opts).unwrap();
    check("ScramClient", &format!("{c:?}"));
    ClientExchange::new(Box::new(c))
}

fn rfc_server() -> ServerExchange {
    let cred = ScramCredential::derive(
        ScramMechanism::Sha256,
        PASSWORD.as_bytes(),
        &STANDARD.decode(SALT).unwrap(),
        4096,
    )
    .unwrap();
    check("ScramCredential", &format!("{cred:?}"));
    let sc = ServerCredential::scram(cred.clone());
    check("ServerCredential", &format!("{sc:?}"));
    check(
        "CredentialAnswer",
        &format!("{:?}", CredentialAnswer::Found(sc)),
    );
    check(
        "ServerCredential password",
        &format!("{:?}", ServerCredential::password(PASSWORD)),
    );
    let store = Arc::new(CredentialStore::new());
    store.set_scram("user", cred).unwrap();
    store.set_password("user", PASSWORD).unwrap();
    check("CredentialStore", &format!("{store:?}"));
    let opts = ScramServerOptions {
        fixed_nonce: Some("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0".into()),
        ..Default::default()
    };
    let mut s = ServerExchange::new(Box::new(ScramServer::new(ScramMechanism::Sha256, opts)));
    s.set_credential_lookup(Some(store));
    s
}

fn check_error(what: &str, e: &Error) {
    check(what, &format!("{e:?}"));
    check(what, &e.to_string());
    check(what, &e.client_message("SCRAM-SHA-256", false));
}

#[test]
fn successful_exchange_debug_output_is_clean() {
    let mut c = rfc_client();
    let mut s = rfc_server();
    let first = c.start(0).unwrap();
    check("client step", &format!("{first:?} {c:?}"));
    let ClientStep::Send(first) = first else {
        panic!()
    };
    let sf = s.step(&first, 0).unwrap();
    check("server step", &format!("{sf:?} {s:?}"));
    let ServerStep::Challenge(sf) = sf else {
        panic!()
    };
    let fin = c.step(&sf, 0).unwrap();
    check("client final step", &format!("{fin:?} {c:?}"));
    let ClientStep::Send(fin) = fin else { panic!() };
    let done = s.step(&fin, 0).unwrap();
    check("server done", &format!("{done:?} {s:?} {:?}", s.outcome()));
    let ServerStep::Done { message, .. } = done else {
        panic!()
    };
    // The transcript itself is what goes on the wire; its redacted form is clean.
    for (i, m) in [first, sf, fin, message.unwrap()].iter().enumerate() {
        check(
            "redacted message",
            &ksasl::mech::redact("SCRAM-SHA-256", m, i % 2 == 0),
        );
    }
}

#[test]
fn failures_never_leak() {
    // Wrong proof at the server.
    let mut c = rfc_client();
    let mut s = rfc_server();
    let ClientStep::Send(first) = c.start(0).unwrap() else {
        panic!()
    };
    s.step(&first, 0).unwrap();
    let e = s.step(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=eHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", 0).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidCredentials);
    check_error("wrong proof", &e);
    check("failed server", &format!("{s:?} {:?}", s.last_error()));

    // Wrong server signature at the client.
    let mut c = rfc_client();
    c.start(0).unwrap();
    c.step(
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        0,
    )
    .unwrap();
    let e = c
        .step(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", 0)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidServerSignature);
    check_error("wrong signature", &e);
    check("failed client", &format!("{c:?} {:?}", c.last_error()));

    // PLAIN with a wrong password, a right one, and an unavailable store.
    let store = Arc::new(CredentialStore::new());
    store.set_password("user", PASSWORD).unwrap();
    let servers = MechanismRegistry::password_servers(Some(store));
    for msg in [
        &b"\0user\0pencik"[..],
        b"user2\0user\0pencil",
        b"\0user\0pencil\0pencil",
    ] {
        let mut s = servers.server("PLAIN").unwrap();
        let e = s.step(msg, 0).unwrap_err();
        check_error("plain failure", &e);
        check("plain server", &format!("{s:?}"));
    }
    let mut s = servers.server("PLAIN").unwrap();
    let ok = s.step(b"\0user\0pencil", 0).unwrap();
    check("plain success", &format!("{ok:?} {s:?}"));

    let mut s = MechanismRegistry::password_servers(None)
        .server("PLAIN")
        .unwrap();
    s.step(b"\0user\0pencil", 0).unwrap();
    let e = s
        .provide_credential(CredentialAnswer::Unavailable("db down".into()), 0)
        .unwrap_err();
    check_error("plain lookup failure", &e);

    // Credential string errors.
    let e = ScramCredential::from_kafka_string(
        ScramMechanism::Sha512,
        "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096",
    )
    .unwrap_err();
    check_error("credential string", &e);
    check("secret", &format!("{:?}", Secret::from(PASSWORD)));
}

#[test]
fn oauthbearer_never_leaks_tokens_or_keys() {
    let now = common::NOW;
    let token = UnsecuredTokenBuilder::for_principal("alice")
        .build(now)
        .unwrap();
    let secret_parts: Vec<String> = token
        .value()
        .split('.')
        .filter(|p| p.len() > 8)
        .map(str::to_string)
        .collect();
    let check_tok = |what: &str, text: &str| {
        for p in &secret_parts {
            assert!(!text.contains(p.as_str()), "{what} leaks the token: {text}");
        }
    };
    check_tok("token", &format!("{token:?}"));
    let client = OAuthBearerClient::new(
        token.clone(),
        SaslExtensions::from_pairs([("ext", "v")]).unwrap(),
    );
    check_tok("client", &format!("{client:?}"));
    let mut c = ClientExchange::new(Box::new(client));
    let step = c.start(now).unwrap();
    check_tok("client step", &format!("{step:?} {c:?}"));
    let ClientStep::Send(first) = step else {
        panic!()
    };
    check_tok(
        "redacted first message",
        &ksasl::mech::redact("OAUTHBEARER", &first, true),
    );

    // Every rejection path: expired, scope, malformed, authzid.
    for (validator, msg) in [
        (UnsecuredValidatorConfig::default(), first.clone()),
        (
            UnsecuredValidatorConfig {
                required_scope: vec!["x".into()],
                ..Default::default()
            },
            first.clone(),
        ),
        (
            UnsecuredValidatorConfig::default(),
            [&first[..first.len() - 1], b"!"].concat(),
        ),
        (
            UnsecuredValidatorConfig::default(),
            [&b"n,a=bob,"[..], &first[3..]].concat(),
        ),
    ] {
        let v = Arc::new(UnsecuredValidator::new(validator).unwrap());
        let mut s = ServerExchange::new(Box::new(OAuthBearerServer::new(v.clone())));
        let later = now + 7_200_000;
        match s.step(&msg, later) {
            Ok(step) => {
                check_tok("server step", &format!("{step:?} {s:?}"));
                if let ServerStep::Challenge(_) = step {
                    let e = s.step(&[1], later).unwrap_err();
                    check_tok(
                        "server error",
                        &format!("{e:?} {e} {}", e.client_message("OAUTHBEARER", false)),
                    );
                }
            }
            Err(e) => check_tok(
                "server error",
                &format!("{e:?} {e} {}", e.client_message("OAUTHBEARER", false)),
            ),
        }
        if let Err(r) = v.validate(token.value(), later) {
            check_tok("rejection", &format!("{r:?}"));
        }
    }

    // The HMAC secret of a JWT validator is never printed.
    let cfg = JwtValidatorConfig {
        hmac_secret: Some(Secret::from("hmac-shared-secret")),
        ..Default::default()
    };
    assert!(!format!("{cfg:?}").contains("hmac-shared-secret"));
}
