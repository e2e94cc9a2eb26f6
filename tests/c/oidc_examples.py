"""The C examples with an identity provider: examples/c/mini_broker.c validating OAUTHBEARER
tokens against Keycloak's JWKS endpoint (a JWKS_FILE of Kafka's property names), and
examples/c/kafka_client.c logging in at Keycloak (oidc:FILE) and re-authenticating against it
with tokens refreshed from the provider. Also: a client with an unsecured token is refused,
and a broker whose JWKS endpoint is unreachable stops at start with the reason.

Run by `make c-run-examples` under tests/oidc/keycloak.py --exec (KSASL_OIDC_INFO, 10-second
tokens); every process it starts is stopped by pid.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROKER, CLIENT = ROOT / "target/c/mini_broker", ROOT / "target/c/kafka_client"
RUN_MS = 12000


def properties(path: Path, values: dict) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def start_broker(tmp: Path, jwks_file: Path, seconds: int) -> tuple:
    port_file = tmp / "broker.port"
    port_file.unlink(missing_ok=True)
    log = open(tmp / "mini_broker.log", "w+")
    p = subprocess.Popen([str(BROKER), str(port_file), "3000", "alice", "alice-secret", str(seconds),
                          str(jwks_file)], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and p.poll() is None:
        if port_file.exists() and port_file.read_text().strip():
            return p, int(port_file.read_text()), log
        time.sleep(0.05)
    p.kill()
    log.seek(0)
    sys.exit(f"mini_broker did not start:\n{log.read()}")


def main() -> int:
    idp = json.loads(Path(os.environ["KSASL_OIDC_INFO"]).read_text())
    with tempfile.TemporaryDirectory(prefix="ksasl-c-oidc-") as d:
        tmp = Path(d)
        jwks = properties(tmp / "jwks.properties", {
            "sasl.oauthbearer.jwks.endpoint.url": idp["jwks_uri"],
            "sasl.oauthbearer.expected.issuer": idp["issuer"],
            "sasl.oauthbearer.expected.audience": idp["audience"],
            "ssl.truststore.location": idp["ca_pem"]})
        login = properties(tmp / "login.properties", {
            "sasl.oauthbearer.token.endpoint.url": idp["token_endpoint"],
            "clientId": idp["secret_client"]["id"], "clientSecret": idp["secret_client"]["secret"],
            "ssl.truststore.location": idp["ca_pem"],
            "sasl.login.refresh.min.period.seconds": "0", "sasl.login.refresh.buffer.seconds": "0"})

        broker, port, log = start_broker(tmp, jwks, RUN_MS // 1000 + 8)
        try:
            ok = subprocess.run([str(CLIENT), "127.0.0.1", str(port), "OAUTHBEARER", f"oidc:{login}", "-",
                                 str(RUN_MS), str(RUN_MS // 3000 - 1)],
                                capture_output=True, text=True, timeout=60)
            refused = subprocess.run([str(CLIENT), "127.0.0.1", str(port), "OAUTHBEARER", "alice", "-",
                                      "1000"], capture_output=True, text=True, timeout=30)
        finally:
            broker.terminate()
            broker.wait(10)
        log.seek(0)
        broker_out = log.read()
        print(ok.stdout[-1500:], ok.stderr[-500:], sep="")
        print(broker_out[-1500:])
        problems = []
        if ok.returncode != 0:
            problems.append(f"the OIDC client failed ({ok.returncode})")
        tokens = [int(line.split()[0]) for line in ok.stdout.splitlines()
                  if line.endswith("tokens from the identity provider")]
        if not tokens or tokens[0] < 2:
            problems.append(f"expected tokens refreshed from the provider, got {tokens}")
        if refused.returncode == 0:
            problems.append("an unsecured token was accepted by a broker validating the JWKS")
        if "keys from" not in broker_out:
            problems.append("the broker did not fetch the key set at start")

        down = properties(tmp / "down.properties", {
            "sasl.oauthbearer.jwks.endpoint.url": "https://127.0.0.1:1/certs",
            "ssl.truststore.location": idp["ca_pem"], "sasl.login.connect.timeout.ms": "500"})
        dead = subprocess.run([str(BROKER), str(tmp / "x.port"), "3000", "a", "b", "5", str(down)],
                              capture_output=True, text=True, timeout=30)
        print(dead.stdout, dead.stderr, sep="")
        if dead.returncode == 0 or "JWKS endpoint" not in dead.stderr:
            problems.append("a broker with an unreachable JWKS endpoint did not stop at start")
    for p in problems:
        print(f"tests/c/oidc_examples.py: {p}", file=sys.stderr)
    if not problems:
        print("tests/c/oidc_examples.py: the C client and broker work with the identity provider")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
