//! Delegation tokens end to end through the connection drivers: a token created by the
//! authority logs in with SCRAM `tokenauth`, the session is capped by the token's expiry, a
//! renew gives the next re-authentication a longer session, an expired token that is still
//! present yields an already-expired session, and after the sweep the login is refused.

mod kafka_pair;

use std::sync::Arc;

use base64::Engine;
use kafka_pair::Pair;
use ksasl::kafka::client::ClientConfig;
use ksasl::kafka::server::ServerConfig;
use ksasl::refresh::{RefreshConfig, Refresher};
use ksasl::session::Gate;
use ksasl::token::{TokenAuthority, TokenConfig};
use ksasl::*;

const T0: i64 = 1_800_000_000_000;

fn setup(max_reauth_ms: i64) -> (Arc<TokenAuthority>, Arc<ServerConfig>) {
    let mut tc = TokenConfig::new("a-secret-key");
    tc.expiry_time_ms = 10_000;
    tc.max_lifetime_ms = 60_000;
    let authority = Arc::new(TokenAuthority::new(tc, SharedRandom::default()).unwrap());
    let users = Arc::new(CredentialStore::new());
    users
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    let mut registry = MechanismRegistry::password_servers(Some(users));
    registry.set_token_lookup(Some(authority.clone()));
    let c = ServerConfig::builder(registry)
        .set_max_reauth_ms(max_reauth_ms)
        .build()
        .unwrap();
    (authority, c)
}

#[test]
fn token_login_is_capped_by_the_token_and_extended_by_a_renew() {
    for mech in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let (authority, server) = setup(0);
        let alice = Principal::user("alice");
        let token = authority.create(&alice, Some(&alice), &[], 0, T0).unwrap();
        let refresher = Arc::new(Refresher::new(
            RefreshConfig::default(),
            SharedRandom::default(),
        ));
        assert!(refresher.poll(T0));
        token.install(&refresher, T0).unwrap();
        let mut registry = MechanismRegistry::new();
        registry.register_refreshing_password_clients(refresher.clone());
        let client = ClientConfig::new(registry, mech).unwrap();
        let mut p = Pair::new(client, server.clone());
        p.connect(T0);
        assert_eq!(p.stats.authenticated, 1, "{mech}: {:?}", p.stats.failed);
        let s = p.server.session().unwrap().clone();
        assert_eq!(s.outcome.principal.to_string(), "User:alice");
        assert!(s.outcome.principal.token_authenticated);
        assert_eq!(s.outcome.credential_expiry_ms, Some(T0 + 10_000));
        // connections.max.reauth.ms is 0: the token alone bounds the session.
        assert_eq!(s.lifetime_ms, 10_000);
        assert_eq!(p.client.session().unwrap().lifetime_ms, 10_000);

        // Renew at T0 + 5 s: the next re-authentication gets the new expiry.
        let now = T0 + 5_000;
        let expiry = authority.renew(token.hmac(), &alice, 0, now).unwrap();
        assert_eq!(expiry, now + 10_000);
        let due = p.client.next_deadline().unwrap();
        assert!(due < T0 + 10_000);
        p.client.handle_timeout(due).unwrap();
        p.pump(due);
        assert_eq!(p.stats.reauthenticated, 1);
        let s = p.server.session().unwrap();
        assert_eq!(s.outcome.credential_expiry_ms, Some(expiry));
        assert_eq!(s.lifetime_ms, expiry - due);
        assert_eq!(p.server.gate(3, due + 1), Gate::Process);
    }
}

#[test]
fn expired_token_before_the_sweep_gives_an_expired_session_and_after_it_is_refused() {
    let (authority, server) = setup(3000);
    let alice = Principal::user("alice");
    let token = authority.create(&alice, Some(&alice), &[], 0, T0).unwrap();
    let credential = Arc::new(token.client_credential().unwrap());
    let client = ClientConfig::new(
        MechanismRegistry::password_clients(credential),
        "SCRAM-SHA-512",
    )
    .unwrap();

    // After the expiry, before the sweep: the login works but the session is already over.
    let later = T0 + 20_000;
    let mut p = Pair::new(client.clone(), server.clone());
    p.connect(later);
    assert_eq!(p.stats.authenticated, 1);
    let s = p.server.session().unwrap();
    assert_eq!(s.lifetime_ms, 0);
    assert_eq!(s.expiry_ms, Some(later));
    assert_eq!(p.server.gate(3, later + 1), Gate::CloseExpired);

    // After the sweep the token is unknown: the login fails with Kafka's generic text.
    assert_eq!(
        authority.sweep(later).unwrap(),
        vec![token.token_id().to_string()]
    );
    let mut p = Pair::new(client, server);
    p.connect(later);
    assert_eq!(p.stats.authenticated, 0);
    assert!(p.stats.failed.is_some());
}

#[test]
fn token_credentials_match_an_independent_derivation() {
    // The client password is the standard base64 of HMAC-SHA512(secret, id) (reference 7.3).
    let (authority, _) = setup(0);
    let alice = Principal::user("alice");
    let token = authority.create(&alice, Some(&alice), &[], 0, T0).unwrap();
    let expected = {
        use hmac::{Hmac, Mac};
        let mut m = <Hmac<sha2::Sha512> as Mac>::new_from_slice(b"a-secret-key").unwrap();
        m.update(token.token_id().as_bytes());
        base64::engine::general_purpose::STANDARD.encode(m.finalize().into_bytes())
    };
    assert_eq!(token.hmac_base64().expose(), expected.as_bytes());
    assert_eq!(expected.len(), 88);
    let c = token.client_credential().unwrap();
    assert!(c.token_authenticated());
    assert_eq!(c.username(), token.token_id());
}

/// Serves one token request through the authority as the session's principal; returns the
/// response frame without its length prefix.
fn serve(authority: &TokenAuthority, p: &Pair, request: Vec<u8>, now: i64) -> Vec<u8> {
    let principal = p.server.session().unwrap().outcome.principal.clone();
    let out = authority
        .handle_request(&request[4..], &principal, now)
        .unwrap();
    out[4..].to_vec()
}

#[test]
fn the_token_apis_served_by_the_authority() {
    use ksasl::kafka::delegation_tokens::*;
    let (authority, server) = setup(0);
    let alice_client = ClientConfig::new(
        MechanismRegistry::password_clients(Arc::new(
            PasswordCredential::new("alice", "alice-secret").unwrap(),
        )),
        "SCRAM-SHA-256",
    )
    .unwrap();
    let mut p = Pair::new(alice_client, server.clone());
    p.connect(T0);
    assert_eq!(p.stats.authenticated, 1);

    for version in 0..=3 {
        let create = CreateTokenRequest {
            owner: None,
            renewers: vec![PrincipalName::user("bob")],
            max_lifetime_ms: -1,
        };
        let resp = serve(
            &authority,
            &p,
            create.encode_request(version, 7, Some("t")).unwrap(),
            T0,
        );
        let resp = CreateTokenResponse::parse_response(version, &resp).unwrap();
        let token = ksasl::token::token_from_create_response(&resp).unwrap();
        assert_eq!(token.info.owner, Principal::user("alice"));
        assert_eq!(token.info.expiry_ms, T0 + 10_000);
        assert_eq!(token.hmac(), authority.hmac(token.token_id()).expose());
        if version >= 3 {
            assert_eq!(resp.requester, PrincipalName::user("alice"));
        }
    }
    // Renew and expire by HMAC; a stranger's HMAC is unknown; expire twice.
    let t = authority.describe(None).unwrap().remove(0);
    let renew = RenewTokenRequest {
        hmac: Secret::from_slice(t.hmac()),
        renew_period_ms: 5_000,
    };
    let r = serve(
        &authority,
        &p,
        renew.encode_request(2, 8, None).unwrap(),
        T0 + 1_000,
    );
    let r = RenewTokenResponse::parse_response(2, &r).unwrap();
    assert_eq!((r.error_code, r.expiry_timestamp_ms), (0, T0 + 6_000));
    let bad = RenewTokenRequest {
        hmac: Secret::from_slice(&[1; 64]),
        renew_period_ms: 5_000,
    };
    let r = serve(&authority, &p, bad.encode_request(1, 9, None).unwrap(), T0);
    assert_eq!(
        RenewTokenResponse::parse_response(1, &r)
            .unwrap()
            .error_code,
        62
    );
    let expire = ExpireTokenRequest {
        hmac: Secret::from_slice(t.hmac()),
        expiry_time_period_ms: -1,
    };
    for (corr, code) in [(10, 0), (11, 62)] {
        let r = serve(
            &authority,
            &p,
            expire.encode_request(2, corr, None).unwrap(),
            T0 + 2_000,
        );
        assert_eq!(
            ExpireTokenResponse::parse_response(2, &r)
                .unwrap()
                .error_code,
            code
        );
    }
    // Describe: all, then by owner.
    let d = DescribeTokensRequest { owners: None };
    let r = serve(&authority, &p, d.encode_request(3, 12, None).unwrap(), T0);
    let r = DescribeTokensResponse::parse_response(3, &r).unwrap();
    assert_eq!(r.tokens.len(), 3);
    assert_eq!(r.tokens[0].renewers, vec![PrincipalName::user("bob")]);
    let d = DescribeTokensRequest {
        owners: Some(vec![PrincipalName::user("carol")]),
    };
    let r = serve(&authority, &p, d.encode_request(1, 13, None).unwrap(), T0);
    assert!(DescribeTokensResponse::parse_response(1, &r)
        .unwrap()
        .tokens
        .is_empty());
    // Renewers must be User principals.
    let create = CreateTokenRequest {
        owner: None,
        renewers: vec![PrincipalName::new("Group", "ops")],
        max_lifetime_ms: -1,
    };
    let r = serve(
        &authority,
        &p,
        create.encode_request(2, 14, None).unwrap(),
        T0,
    );
    let r = CreateTokenResponse::parse_response(2, &r).unwrap();
    assert_eq!(r.error_code, 67);
    assert_eq!(
        ksasl::token::token_from_create_response(&r)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidPrincipalType
    );

    // A connection that logged in with a token may not ask for tokens (64).
    let token = authority.describe(None).unwrap().remove(0);
    let client = ClientConfig::new(
        MechanismRegistry::password_clients(Arc::new(token.client_credential().unwrap())),
        "SCRAM-SHA-512",
    )
    .unwrap();
    let mut q = Pair::new(client, server);
    q.connect(T0);
    assert_eq!(q.stats.authenticated, 1);
    let create = CreateTokenRequest::default();
    let r = serve(
        &authority,
        &q,
        create.encode_request(1, 15, None).unwrap(),
        T0,
    );
    assert_eq!(
        CreateTokenResponse::parse_response(1, &r)
            .unwrap()
            .error_code,
        64
    );
    // Not a token request, or garbage: an error for the host.
    assert!(authority
        .handle_request(
            &kafka_pair::app_request(1)[4..],
            &Principal::user("alice"),
            T0
        )
        .is_err());
}

#[test]
fn bad_token_logins_are_refused_like_kafka() {
    let (authority, server) = setup(0);
    let alice = Principal::user("alice");
    let token = authority.create(&alice, Some(&alice), &[], 0, T0).unwrap();
    let cases = [
        // The right id with a wrong HMAC (another authority's secret).
        (token.token_id().to_string(), {
            let other = TokenAuthority::new(TokenConfig::new("other-key"), SharedRandom::default())
                .unwrap();
            base64::engine::general_purpose::STANDARD.encode(other.hmac(token.token_id()).expose())
        }),
        // An id the authority never issued.
        ("AAECAwQFBgcICQoLDA0ODw".to_string(), {
            base64::engine::general_purpose::STANDARD
                .encode(authority.hmac("AAECAwQFBgcICQoLDA0ODw").expose())
        }),
    ];
    for (id, hmac) in cases {
        for mech in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
            let c = PasswordCredential::delegation_token(&id, &hmac).unwrap();
            let client =
                ClientConfig::new(MechanismRegistry::password_clients(Arc::new(c)), mech).unwrap();
            let mut p = Pair::new(client, server.clone());
            p.connect(T0);
            assert_eq!(p.stats.authenticated, 0, "{id} {mech}");
            let failed = p.stats.failed.clone().unwrap();
            assert!(
                failed.contains(&format!("invalid credentials with SASL mechanism {mech}")),
                "{failed}"
            );
        }
    }
    // PLAIN never accepts token credentials (tokenauth is SCRAM only).
    let c = token.client_credential().unwrap();
    assert!(MechanismRegistry::password_clients(Arc::new(c))
        .client("PLAIN")
        .is_err());
}
