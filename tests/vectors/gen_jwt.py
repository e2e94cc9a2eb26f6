"""Generates tests/vectors/jwt.json: JWKS and tokens made by an independent JWT
implementation (PyJWT + cryptography), with the verdict ksasl's validators must reach.

Run: .venv/bin/pip install -r tests/vectors/requirements-gen.txt
     .venv/bin/python tests/vectors/gen_jwt.py > tests/vectors/jwt.json
Keys are fresh on every run; the committed output is what the tests replay.
"""

import base64
import hashlib
import hmac
import json

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

NOW = 1_795_000_000  # seconds; the tests validate at NOW * 1000 ms
ISSUER = "https://idp.example.com"
AUDIENCE = "kafka-cluster"
HMAC_SECRET = "a-shared-secret-of-at-least-32-bytes!"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk(public_key, algorithm, kid):
    d = json.loads(algorithm.to_jwk(public_key))
    d["kid"] = kid
    d["use"] = "sig"
    return d


rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
other_rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ec256 = ec.generate_private_key(ec.SECP256R1())
ec384 = ec.generate_private_key(ec.SECP384R1())
ed = ed25519.Ed25519PrivateKey.generate()

jwks = {
    "keys": [
        jwk(rsa_key.public_key(), RSAAlgorithm, "rsa-1"),
        jwk(ec256.public_key(), ECAlgorithm, "ec256-1"),
        jwk(ec384.public_key(), ECAlgorithm, "ec384-1"),
        jwk(ed.public_key(), OKPAlgorithm, "ed-1"),
        # An encryption key and a symmetric key: both must be ignored by the validator.
        dict(jwk(other_rsa.public_key(), RSAAlgorithm, "enc-1"), use="enc"),
        {"kty": "oct", "kid": "oct-1", "k": b64url(b"not-for-signatures")},
    ]
}


def claims(**over):
    c = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "iat": NOW - 10,
        "exp": NOW + 3600,
        "scope": ["kafka.read", "kafka.write"],
    }
    for k, v in over.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


def sign(key, alg, kid, **over):
    return jwt.encode(claims(**over), key, algorithm=alg, headers={"kid": kid})


def raw(header: dict, payload: dict, signature: bytes = b"") -> str:
    h = b64url(json.dumps(header, separators=(",", ":")).encode())
    p = b64url(json.dumps(payload, separators=(",", ":")).encode())
    return f"{h}.{p}.{b64url(signature)}" if signature else f"{h}.{p}."


rsa_public_pem = rsa_key.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)
hs_header = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, separators=(",", ":")).encode())
hs_payload = b64url(json.dumps(claims(), separators=(",", ":")).encode())
hs_sig = hmac.new(rsa_public_pem, f"{hs_header}.{hs_payload}".encode(), hashlib.sha256).digest()
confused = f"{hs_header}.{hs_payload}.{b64url(hs_sig)}"

valid_rs = sign(rsa_key, "RS256", "rsa-1")
h, p, s = valid_rs.split(".")
tampered = f"{h}.{b64url(json.dumps(claims(sub='mallory'), separators=(',', ':')).encode())}.{s}"

tokens = [
    ("rs256", valid_rs, "ok"),
    ("rs384", sign(rsa_key, "RS384", "rsa-1"), "ok"),
    ("rs512", sign(rsa_key, "RS512", "rsa-1"), "ok"),
    ("ps256", sign(rsa_key, "PS256", "rsa-1"), "ok"),
    ("ps384", sign(rsa_key, "PS384", "rsa-1"), "ok"),
    ("ps512", sign(rsa_key, "PS512", "rsa-1"), "ok"),
    ("es256", sign(ec256, "ES256", "ec256-1"), "ok"),
    ("es384", sign(ec384, "ES384", "ec384-1"), "ok"),
    ("eddsa", sign(ed, "EdDSA", "ed-1"), "ok"),
    ("rs256-no-kid", jwt.encode(claims(), rsa_key, algorithm="RS256"), "ok"),
    ("rs256-string-scope", sign(rsa_key, "RS256", "rsa-1", scope="kafka.read"), "ok"),
    ("rs256-audience-list", sign(rsa_key, "RS256", "rsa-1", aud=["other", AUDIENCE]), "ok"),
    ("rs256-fractional-dates", sign(rsa_key, "RS256", "rsa-1", iat=NOW - 10.25, exp=NOW + 3600.5), "ok"),
    ("hs256-shared-secret", jwt.encode(claims(), HMAC_SECRET, algorithm="HS256"), "ok-with-hmac-secret"),
    ("expired", sign(rsa_key, "RS256", "rsa-1", exp=NOW - 31, iat=NOW - 3600), "TOKEN_EXPIRED"),
    ("expired-within-skew", sign(rsa_key, "RS256", "rsa-1", exp=NOW - 29, iat=NOW - 3600), "ok"),
    ("nbf-in-future", sign(rsa_key, "RS256", "rsa-1", nbf=NOW + 31), "TOKEN_NOT_YET_VALID"),
    ("nbf-within-skew", sign(rsa_key, "RS256", "rsa-1", nbf=NOW + 29), "ok"),
    ("iat-in-future", sign(rsa_key, "RS256", "rsa-1", iat=NOW + 31), "ok-unless-iat-validation"),
    ("iat-within-skew", sign(rsa_key, "RS256", "rsa-1", iat=NOW + 29), "ok"),
    ("wrong-issuer", sign(rsa_key, "RS256", "rsa-1", iss="https://evil.example.com"), "TOKEN_INVALID_ISSUER"),
    ("no-issuer", sign(rsa_key, "RS256", "rsa-1", iss=None), "TOKEN_INVALID_ISSUER"),
    ("wrong-audience", sign(rsa_key, "RS256", "rsa-1", aud="another-cluster"), "TOKEN_INVALID_AUDIENCE"),
    ("missing-subject", sign(rsa_key, "RS256", "rsa-1", sub=None), "TOKEN_MISSING_CLAIM"),
    ("blank-subject", sign(rsa_key, "RS256", "rsa-1", sub="  "), "TOKEN_MISSING_CLAIM"),
    ("missing-exp", sign(rsa_key, "RS256", "rsa-1", exp=None), "TOKEN_MISSING_CLAIM"),
    ("missing-iat", sign(rsa_key, "RS256", "rsa-1", iat=None), "TOKEN_MISSING_CLAIM"),
    ("duplicate-scope", sign(rsa_key, "RS256", "rsa-1", scope=["a", "a"]), "TOKEN_INVALID_CLAIM"),
    ("unknown-kid", sign(rsa_key, "RS256", "rsa-2"), "TOKEN_UNKNOWN_KEY"),
    ("bad-signature", sign(other_rsa, "RS256", "rsa-1"), "TOKEN_BAD_SIGNATURE"),
    ("tampered-payload", tampered, "TOKEN_BAD_SIGNATURE"),
    ("encryption-key-kid", sign(other_rsa, "RS256", "enc-1"), "TOKEN_UNKNOWN_KEY"),
    ("alg-none", raw({"alg": "none", "kid": "rsa-1"}, claims()), "TOKEN_ALGORITHM_REFUSED"),
    ("hs256-rsa-public-key-as-secret", confused, "TOKEN_ALGORITHM_REFUSED"),
    ("es256-with-rsa-kid", sign(ec256, "ES256", "rsa-1"), "TOKEN_ALGORITHM_REFUSED"),
    ("malformed-base64", "eyJhbGciOiJSUzI1NiJ9!.eyJzdWIiOiJhIn0.c2ln", "TOKEN_MALFORMED"),
    ("header-without-alg", raw({"typ": "JWT", "kid": "rsa-1"}, claims(), b"sig"), "TOKEN_MALFORMED"),
    ("two-parts", ".".join(valid_rs.split(".")[:2]), "TOKEN_MALFORMED"),
    ("payload-not-json", f"{h}.{b64url(b'not json')}.{s}", "TOKEN_BAD_SIGNATURE"),
]

# Kafka writes dates with Java's Double.toString, e.g. 1.7950036E9.
KAFKA_CLAIMS = '{"exp":%sE9,"iat":%sE9,"sub":"bob"}' % ((NOW + 3600) / 1e9, NOW / 1e9)
KAFKA_STYLE = b64url(b'{"alg":"none"}') + "." + b64url(KAFKA_CLAIMS.encode()) + "."

# Unsecured tokens, as librdkafka and Kafka make them (alg none, empty signature).
unsecured = [
    (
        "librdkafka-fractional",
        raw({"alg": "none"}, {"sub": "alice", "iat": NOW - 0.37, "exp": NOW + 3599.63, "scope": ["test"]}),
        "ok",
    ),
    ("kafka-java-double", KAFKA_STYLE, "ok"),
]

print(
    json.dumps(
        {
            "comment": "Generated by tests/vectors/gen_jwt.py with PyJWT %s; validate at now_ms." % jwt.__version__,
            "now_ms": NOW * 1000,
            "issuer": ISSUER,
            "audience": AUDIENCE,
            "hmac_secret": HMAC_SECRET,
            "jwks": jwks,
            "tokens": [{"name": n, "token": t, "expect": e} for n, t, e in tokens],
            "unsecured": [{"name": n, "token": t, "expect": e} for n, t, e in unsecured],
        },
        indent=1,
    )
)
