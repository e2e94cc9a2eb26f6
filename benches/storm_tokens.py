"""The RS256 tokens of the re-authentication storm benchmarks (benches/storm.rs and
benches/java Storm): one RSA-2048 key, its JWKS and two tokens for each of COUNT subjects
(svc-000000, svc-000001, ...): a connection authenticates with its subject's first token and
re-authenticates in the storm with the second (a refreshed token: same principal, never seen
by the server before), so no two logins present the same token.

    python3 benches/storm_tokens.py [--count 100000] [--out target/storm]

Writes OUT/jwks.json, OUT/tokens.txt (2 x COUNT lines: line 2i is subject i's first token,
line 2i+1 its second) and OUT/meta.json (issuer, audience, count, iat and exp in seconds), and
does nothing when OUT already holds tokens for COUNT subjects that stay valid for at least a
week more: signing 200,000 tokens takes a minute or two on 2 cores, and the
Java validator checks them against the wall clock, so they are valid from now for 400 days.
Needs PyJWT and cryptography (the interop venv has both).
"""

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUER = "https://idp.storm.ksasl.test"
AUDIENCE = "kafka-storm"
KID = "storm-rsa-1"
LIFETIME_S = 400 * 86400
WEEK_S = 7 * 86400

_key = None


def _init(pem: bytes) -> None:
    global _key
    _key = serialization.load_pem_private_key(pem, password=None)


def _sign(args: tuple[int, int, int]) -> list[str]:
    start, stop, iat = args
    return [
        jwt.encode(
            {"iss": ISSUER, "aud": AUDIENCE, "sub": f"svc-{i:06d}", "iat": iat, "exp": iat + LIFETIME_S,
             "scope": "kafka", "jti": f"{i}-{generation}"},
            _key, algorithm="RS256", headers={"kid": KID})
        for i in range(start, stop)
        for generation in (1, 2)
    ]


def fresh(out: Path, count: int) -> bool:
    try:
        meta = json.loads((out / "meta.json").read_text())
        lines = (out / "tokens.txt").read_text().count("\n")
    except (OSError, ValueError):
        return False
    return meta.get("count") == count and lines == 2 * count and meta.get("exp", 0) > time.time() + WEEK_S


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "target" / "storm")
    a = ap.parse_args()
    if a.count < 1:
        ap.error("--count must be at least 1")
    if fresh(a.out, a.count):
        print(f"storm tokens: {a.count} subjects in {a.out}, still valid")
        return
    t0 = time.monotonic()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    public.update(kid=KID, use="sig", alg="RS256")
    iat = int(time.time())
    chunk = 2_000
    jobs = [(s, min(s + chunk, a.count), iat) for s in range(0, a.count, chunk)]
    a.out.mkdir(parents=True, exist_ok=True)
    tmp = a.out / "tokens.txt.tmp"
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1, initializer=_init, initargs=(pem,)) as pool, \
            open(tmp, "w") as f:
        for tokens in pool.map(_sign, jobs):
            f.write("\n".join(tokens) + "\n")
    (a.out / "jwks.json").write_text(json.dumps({"keys": [public]}))
    os.replace(tmp, a.out / "tokens.txt")
    (a.out / "meta.json").write_text(json.dumps(
        {"issuer": ISSUER, "audience": AUDIENCE, "count": a.count, "iat": iat, "exp": iat + LIFETIME_S}))
    print(f"storm tokens: 2 x {a.count} signed in {time.monotonic() - t0:.1f} s into {a.out}")


if __name__ == "__main__":
    main()
