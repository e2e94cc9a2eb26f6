//! Every SASL message parser, through the public mechanisms: PLAIN; SCRAM client-first (with
//! its GS2 header), server-first, client-final and server-final; the OAUTHBEARER initial
//! response (GS2 header, key/value pairs, bearer token, unsecured JWT) and the server's JSON
//! error; RFC 5802 saslname escaping. The first byte picks the parser (see
//! `ksasl_fuzz::messages`). A success is checked against an independent oracle.
#![no_main]

use std::sync::Arc;

use ksasl::mech::scram::{escape_username, unescape_username};
use ksasl::*;
use ksasl_fuzz::messages::*;
use ksasl_fuzz::{
    fixed_client_first, fixed_server_first, fixtures, no_panic, oracle, scram_client, scram_server,
    T0,
};
use libfuzzer_sys::fuzz_target;

fn server(mech: Box<dyn ServerMechanism>) -> ServerExchange {
    let mut s = ServerExchange::new(mech);
    s.set_credential_lookup(Some(fixtures().store.clone()));
    s
}

fn oauth_server() -> ServerExchange {
    let v = UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap();
    server(Box::new(OAuthBearerServer::new(Arc::new(v))))
}

fn done_principal(r: &Result<ServerStep>) -> Option<String> {
    match r {
        Ok(ServerStep::Done { outcome, .. }) => Some(outcome.principal.name.clone()),
        Ok(ServerStep::NeedCredential(_) | ServerStep::Pending(_)) => {
            panic!("the store answers at once")
        }
        Ok(ServerStep::Challenge(_)) => None,
        Err(e) => {
            no_panic(e);
            None
        }
    }
}

fn client_result(r: &Result<ClientStep>) {
    if let Err(e) = r {
        no_panic(e);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, msg)) = data.split_first() else {
        return;
    };
    let m = if sel & SHA512 != 0 {
        ScramMechanism::Sha512
    } else {
        ScramMechanism::Sha256
    };
    let f = fixtures();
    match sel % 8 {
        PLAIN_SERVER => {
            let mut s = server(Box::new(PlainServer::new()));
            if let Some(p) = done_principal(&s.step(msg, T0)) {
                assert!(oracle::plain_ok(&p, msg), "PLAIN accepted a wrong password");
            }
        }
        SCRAM_CLIENT_FIRST => {
            let mut s = server(Box::new(scram_server(m)));
            match s.step(msg, T0) {
                Ok(ServerStep::Challenge(c)) => {
                    let text = String::from_utf8(c).expect("server-first is text");
                    assert!(text.starts_with("r=") && text.contains(ksasl_fuzz::SNONCE));
                }
                r => assert!(done_principal(&r).is_none(), "SCRAM done after one message"),
            }
        }
        SCRAM_CLIENT_FINAL => {
            let mut s = server(Box::new(scram_server(m)));
            let first = fixed_client_first();
            let Ok(ServerStep::Challenge(_)) = s.step(first.as_bytes(), T0) else {
                panic!("the fixed client-first is valid")
            };
            if let Some(p) = done_principal(&s.step(msg, T0)) {
                assert!(
                    oracle::scram_client_proof_ok(m, &p, first.as_bytes(), msg),
                    "SCRAM server accepted a wrong proof"
                );
            }
        }
        SCRAM_SERVER_FIRST => {
            let mut c = ClientExchange::new(Box::new(scram_client(m, f.alice.clone())));
            c.start(T0).unwrap();
            let r = c.step(msg, T0);
            client_result(&r);
            if let Ok(ClientStep::Send(fin)) = r {
                assert!(fin.starts_with(format!("c=biws,r={}", ksasl_fuzz::CNONCE).as_bytes()));
            }
        }
        SCRAM_SERVER_FINAL => {
            let mut c = ClientExchange::new(Box::new(scram_client(m, f.alice2.clone())));
            c.start(T0).unwrap();
            let sf = fixed_server_first();
            let Ok(ClientStep::Send(_)) = c.step(sf.as_bytes(), T0) else {
                panic!("the fixed server-first is valid")
            };
            let r = c.step(msg, T0);
            client_result(&r);
            if let Ok(ClientStep::Done(_)) = r {
                assert!(
                    oracle::scram_server_signature_ok(m, sf.as_bytes(), msg),
                    "SCRAM client accepted a wrong server signature"
                );
            }
        }
        OAUTH_SERVER => {
            let mut s = oauth_server();
            match s.step(msg, T0) {
                Ok(ServerStep::Challenge(c)) => {
                    // A rejection: Kafka's JSON error, then the client's \x01 ends it.
                    let v: serde_json::Value = serde_json::from_slice(&c).expect("JSON error");
                    assert!(v.get("status").is_some());
                    let e = s
                        .step(&[1], T0)
                        .expect_err("the exchange fails after the error");
                    no_panic(&e);
                }
                r => {
                    if let Some(p) = done_principal(&r) {
                        assert!(oracle::oauth_ok(&p, msg, T0, 0), "accepted a bad token");
                    }
                }
            }
        }
        OAUTH_CLIENT => {
            let mut c = ClientExchange::new(Box::new(OAuthBearerClient::new(
                f.oauth_token.clone(),
                SaslExtensions::new(),
            )));
            c.start(T0).unwrap();
            let (first, second) = match msg.iter().position(|&b| b == 0xff) {
                Some(i) => (&msg[..i], Some(&msg[i + 1..])),
                None => (msg, None),
            };
            let r = c.step(first, T0);
            client_result(&r);
            if let Ok(ClientStep::Send(ack)) = &r {
                assert_eq!(ack, &[1], "an OAUTHBEARER client only acknowledges errors");
                let e = c.server_failed(None);
                no_panic(&e);
            }
            if let Some(second) = second {
                client_result(&c.step(second, T0));
            }
        }
        _ => {
            if let Ok(s) = std::str::from_utf8(msg) {
                let u = unescape_username(s);
                assert_eq!(u, oracle::unescape(s), "saslname unescaping differs");
                assert_eq!(unescape_username(&escape_username(s)).as_deref(), Some(s));
            }
        }
    }
});
