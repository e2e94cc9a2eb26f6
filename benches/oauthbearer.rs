//! OAUTHBEARER validation costs: signed-JWT validation next to the raw `ring` signature check
//! it is built on (same run), and cached re-validation. Run with `make bench`.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use criterion::{criterion_group, criterion_main, Criterion};
use ksasl::*;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;

mod common;
use common::{jwks_validator, jwt_vectors, validator_config};

fn token<'a>(v: &'a Value, name: &str) -> &'a str {
    v["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()["token"]
        .as_str()
        .unwrap()
}

fn jwk<'a>(v: &'a Value, kid: &str) -> &'a Value {
    v["jwks"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == kid)
        .unwrap()
}

fn b64(v: &Value) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(v.as_str().unwrap()).unwrap()
}

fn split(token: &str) -> (Vec<u8>, Vec<u8>) {
    let (message, sig) = token.rsplit_once('.').unwrap();
    (
        message.as_bytes().to_vec(),
        URL_SAFE_NO_PAD.decode(sig).unwrap(),
    )
}

fn bench(c: &mut Criterion) {
    let v = jwt_vectors();
    let now = v["now_ms"].as_i64().unwrap();
    let validator = jwks_validator(&v, &v["jwks"].to_string(), now);

    let rs = token(&v, "rs256");
    let es = token(&v, "es256");
    assert!(validator.validate(rs, now).is_ok() && validator.validate(es, now).is_ok());

    c.bench_function("oauthbearer/rs256/validate", |b| {
        b.iter(|| validator.validate(rs, now).unwrap())
    });
    let rsa = jwk(&v, "rsa-1");
    let (n, e) = (b64(&rsa["n"]), b64(&rsa["e"]));
    let (msg, sig) = split(rs);
    c.bench_function("oauthbearer/rs256/ring_verify", |b| {
        b.iter(|| {
            RsaPublicKeyComponents { n: &n, e: &e }
                .verify(&signature::RSA_PKCS1_2048_8192_SHA256, &msg, &sig)
                .unwrap()
        })
    });

    c.bench_function("oauthbearer/es256/validate", |b| {
        b.iter(|| validator.validate(es, now).unwrap())
    });
    let ec = jwk(&v, "ec256-1");
    let point = [&[4u8][..], &b64(&ec["x"]), &b64(&ec["y"])].concat();
    let (msg, sig) = split(es);
    c.bench_function("oauthbearer/es256/ring_verify", |b| {
        b.iter(|| {
            UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &point)
                .verify(&msg, &sig)
                .unwrap()
        })
    });

    let cached = CachingValidator::new(validator.clone(), 1024);
    cached.validate(rs, now).unwrap();
    c.bench_function("oauthbearer/rs256/cached_revalidate", |b| {
        b.iter(|| cached.validate(rs, now).unwrap())
    });

    // An identity provider's key set of 50: 49 P-256 keys made here, then the token's RSA key. Key selection must not make validation slower; installing the set is
    // what a JWKS refresh costs once the document has arrived.
    let rng = ring::rand::SystemRandom::new();
    let mut keys: Vec<Value> = Vec::new();
    while keys.len() < 49 {
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        let point = signature::KeyPair::public_key(&pair).as_ref().to_vec();
        keys.push(serde_json::json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
            "kid": format!("generated-{}", keys.len()),
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..]),
        }));
    }
    keys.push(jwk(&v, "rsa-1").clone());
    let jwks50 = serde_json::json!({ "keys": keys }).to_string();
    let big = Arc::new(JwksValidator::new(validator_config(&v)).unwrap());
    assert_eq!(big.set_jwks(&jwks50, now).unwrap(), 50);
    c.bench_function("oauthbearer/rs256/validate_jwks50", |b| {
        b.iter(|| big.validate(rs, now).unwrap())
    });
    c.bench_function("oauthbearer/jwks50/set_jwks", |b| {
        b.iter(|| big.set_jwks(&jwks50, now).unwrap())
    });

    let unsecured = UnsecuredValidator::new(UnsecuredValidatorConfig::default()).unwrap();
    let t = UnsecuredTokenBuilder::for_principal("alice")
        .build(now)
        .unwrap();
    c.bench_function("oauthbearer/unsecured/validate", |b| {
        b.iter(|| unsecured.validate(t.value(), now).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
