"""Every ksasl client against a real Apache Kafka 4.4 broker (tests/broker/broker.py) with
connections.max.reauth.ms = 3000:

- the C example client (examples/c/kafka_client.c, over the C ABI), a Python client on the
  binding (below), and a Java client on the JNI binding (KsaslJavaClient.java) each
  authenticate with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER and send Metadata
  requests for more than four session lifetimes, all twelve at once;
- the broker's own JMX counters (socket-server-metrics of the SASL listener), read before and
  after, agree with the clients' own metrics: as many re-authentications as the clients
  counted, none failed, no connection killed for expiry;
- negative controls: a client that does not re-authenticate is closed by the broker at the end
  of its session; a client changing its principal on re-authentication is refused; a wrong
  password is refused with the broker's text;
- signed JWTs on the broker's JWKS-file listener: a token signed by the JWKS key is accepted and
  re-authenticates with a refreshed token (whose shorter expiry caps the next session); an
  expired or foreign-key token is refused with the broker's JSON status.

Needs the C client (make target/c/kafka_client) and the Java binding jar (make java-binding);
their paths may be given by KSASL_C_CLIENT and KSASL_JAR."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ksasl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from broker import KafkaBroker, java_bin  # noqa: E402
from clients import (C_CLIENT, JAR, USERS, PyClient, compiled_java_client, delta, now_ms,  # noqa: E402
                     parse_metrics)

LIFETIME_MS = 3000
RUN_MS = 13_500  # more than four session lifetimes
MIN_REAUTHS = 4
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
ISSUER, AUDIENCE = "https://issuer.ksasl.test", "kafka-test"


# --- keys and tokens for the JWT listener ------------------------------------------------------

def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwk(key, kid: str) -> dict:
    n = key.public_key().public_numbers()
    size = lambda i: (i.bit_length() + 7) // 8  # noqa: E731
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": _b64u(n.n.to_bytes(size(n.n), "big")), "e": _b64u(n.e.to_bytes(size(n.e), "big"))}


def signed_token(key, kid: str, sub: str, exp_ms: int, iat_ms: int | None = None) -> str:
    import jwt  # PyJWT

    iat = (iat_ms if iat_ms is not None else now_ms()) // 1000
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "iat": iat, "exp": exp_ms // 1000, "scope": "kafka"}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture(scope="module")
def jwt_key():
    return rsa_key()


@pytest.fixture(scope="module")
def broker(jwt_key):
    jwks = {"keys": [jwk(jwt_key, "ksasl-test-1")]}
    with KafkaBroker(USERS, reauth_ms=LIFETIME_MS, jwks_json=jwks, jwt_issuer=ISSUER, jwt_audience=AUDIENCE,
                     ssl=True) as b:
        yield b


def sasl_metrics(broker: KafkaBroker, listener: str = "SASL") -> dict:
    return broker.socket_server_metrics(listener)


# --- the main run: every client, every mechanism, at once ---------------------------------------

@pytest.fixture(scope="module")
def java_client_classes():
    """KsaslJavaClient compiled once against the binding's jar."""
    with compiled_java_client() as classes:
        yield classes


@pytest.fixture(scope="module")
def main_run(broker, java_client_classes):
    assert C_CLIENT.is_file(), f"{C_CLIENT} is missing: run make target/c/kafka_client"
    before = sasl_metrics(broker)
    port = str(broker.port)
    procs = {}
    for mech in MECHANISMS:
        args = ["127.0.0.1", port, mech, "alice", USERS["alice"], str(RUN_MS), str(MIN_REAUTHS)]
        procs[("C", mech)] = subprocess.Popen([str(C_CLIENT), *args], stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, text=True)
        procs[("Java", mech)] = subprocess.Popen(
            [java_bin(), "-Xcheck:jni", "-cp", f"{JAR}:{java_client_classes}", "KsaslJavaClient", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    py = {mech: PyClient(broker.port, mech) for mech in MECHANISMS}
    threads = [threading.Thread(target=c.run, args=(RUN_MS,)) for c in py.values()]
    for t in threads:
        t.start()
    results = {}
    try:
        for key, p in procs.items():
            out, _ = p.communicate(timeout=120)
            results[key] = (p.returncode, out)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        for t in threads:
            t.join(60)
    time.sleep(1.0)  # let the broker record the closes
    after = sasl_metrics(broker)
    return before, after, results, py


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", ["C", "Python", "Java"])
def test_client_reauthenticates_against_kafka(main_run, client, mechanism):
    _, _, results, py = main_run
    if client == "Python":
        c = py[mechanism]
        assert c.error is None, c.error
        assert c.sent > 0 and c.answered == c.sent
        assert c.reauths >= MIN_REAUTHS, c.events
        assert c.metric("successful-reauthentication-total") == c.reauths
        return
    code, out = results[(client, mechanism)]
    assert code == 0, out
    m = re.search(r"(\d+) Metadata requests sent, (\d+) answered, (\d+) re-authentications", out)
    assert m and int(m.group(1)) == int(m.group(2)) and int(m.group(3)) >= MIN_REAUTHS, out
    assert parse_metrics(out)["successful-reauthentication-total"] == int(m.group(3)), out
    assert "WARNING in native method" not in out


def test_broker_counters_agree_with_the_clients(main_run):
    before, after, results, py = main_run
    client_reauths = sum(parse_metrics(out)["successful-reauthentication-total"] for _, out in results.values())
    client_reauths += sum(c.metric("successful-reauthentication-total") for c in py.values())
    client_auths = sum(parse_metrics(out)["successful-authentication-total"] for _, out in results.values())
    client_auths += sum(c.metric("successful-authentication-total") for c in py.values())
    assert client_reauths >= 12 * MIN_REAUTHS
    assert delta(after, before, "successful-reauthentication-total") == client_reauths
    assert delta(after, before, "successful-authentication-total") == client_auths == 12
    assert delta(after, before, "failed-reauthentication-total") == 0
    assert delta(after, before, "expired-connections-killed-count") == 0


# --- negative controls --------------------------------------------------------------------------

def test_client_without_reauthentication_is_closed_at_expiry(broker, main_run):
    before = sasl_metrics(broker)
    c = PyClient(broker.port, "SCRAM-SHA-256", reauth_timing="disabled")
    c.run(8000)
    assert isinstance(c.error, ConnectionResetError), c.error
    assert c.authenticated_at is not None and c.closed_at is not None
    # Kafka closes lazily: on the first request after the session ended (one every 250 ms).
    assert LIFETIME_MS <= c.closed_at - c.authenticated_at <= LIFETIME_MS + 1500
    assert c.reauths == 0
    after = sasl_metrics(broker)
    assert delta(after, before, "expired-connections-killed-count") >= 1


def test_principal_change_on_reauthentication_is_refused(broker, main_run):
    before = sasl_metrics(broker)
    refresher = ksasl.Refresher()
    refresher.poll(now_ms())
    t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=3600)
    refresher.set_token(t["token"], t["expiry_ms"], t["principal"])
    c = PyClient(broker.port, "OAUTHBEARER", refresher=refresher)

    def switch_principal(client, now):
        if client.refresher.current()["principal"] == "alice":
            client.refresher.poll(now)
            other = ksasl.unsecured_oauth_token("bob", lifetime_seconds=3600)
            client.refresher.set_token(other["token"], other["expiry_ms"], other["principal"])

    c.before_reauth = switch_principal
    c.run(6000)
    assert isinstance(c.error, ksasl.AuthenticationError), c.error
    assert "Cannot change principals during re-authentication from User.alice: User.bob" in str(c.error)
    assert c.reauths == 0
    after = sasl_metrics(broker)
    assert delta(after, before, "failed-reauthentication-total") == 1


@pytest.mark.parametrize("version", [3, 4, 5])
def test_every_api_versions_version_is_understood_by_kafka(broker, version):
    # Kafka 4.4 speaks ApiVersions v0-5; v5 carries the (unset) cluster and node fields.
    c = PyClient(broker.port, "SCRAM-SHA-256", api_versions_version=version)
    c.run(1000)
    assert c.error is None, c.error
    assert c.authenticated_at is not None and c.answered > 0


@pytest.mark.parametrize("mechanism,text", [
    ("PLAIN", "Authentication failed: Invalid username or password"),
    ("SCRAM-SHA-256", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"),
    ("SCRAM-SHA-512", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"),
])
def test_wrong_password_is_refused_with_the_brokers_text(broker, mechanism, text):
    c = PyClient(broker.port, mechanism, password="not-the-password")
    c.run(3000)
    assert isinstance(c.error, ksasl.AuthenticationError), c.error
    assert text in str(c.error)
    assert c.authenticated_at is None


# --- signed JWTs ---------------------------------------------------------------------------------

def test_signed_jwt_accepted_and_refreshed(broker, jwt_key):
    refresher = ksasl.Refresher()
    refresher.poll(now_ms())
    refresher.set_token(signed_token(jwt_key, "ksasl-test-1", "carol", now_ms() + 60_000),
                        now_ms() + 60_000, "carol")
    c = PyClient(broker.jwt_port, "OAUTHBEARER", refresher=refresher)
    refreshed = {}

    def refresh(client, now):
        # Before every re-authentication, a fresh token expiring in 2.5 s (whole seconds in the
        # JWT, so 1.5 to 2.5 s): the broker caps each new session by it. Refreshing every time
        # keeps the connection alive; a token left to run out would (rightly) get the
        # connection closed once its last session ends.
        exp = now + 2500
        client.refresher.poll(now)
        client.refresher.set_token(signed_token(jwt_key, "ksasl-test-1", "carol", exp), exp, "carol")
        refreshed["exp"] = exp

    c.before_reauth = refresh
    c.run(4500)
    assert c.error is None, c.error
    assert c.reauths >= 1
    session = c.conn.session()
    # The re-authenticated session ends no later than the refreshed token.
    assert session["lifetime_ms"] < LIFETIME_MS
    assert session["expiry_ms"] <= refreshed["exp"] + 50


@pytest.mark.parametrize("case", ["expired", "foreign-key"])
def test_bad_signed_jwt_is_refused_with_the_brokers_status(broker, jwt_key, case):
    if case == "expired":
        token = signed_token(jwt_key, "ksasl-test-1", "carol", now_ms() - 60_000, iat_ms=now_ms() - 120_000)
    else:
        token = signed_token(rsa_key(), "ksasl-test-1", "carol", now_ms() + 60_000)
    refresher = ksasl.Refresher()
    refresher.poll(now_ms())
    # The refresher never offers an expired token, so give it a future expiry: the broker
    # judges the token's own exp claim.
    refresher.set_token(token, now_ms() + 60_000, "carol")
    c = PyClient(broker.jwt_port, "OAUTHBEARER", refresher=refresher)
    c.run(3000)
    assert isinstance(c.error, ksasl.AuthenticationError), c.error
    assert c.error.details.get("status") == "invalid_token", (c.error, c.error.details)
    assert c.authenticated_at is None


# --- ksasl probe: the command-line tool users run when authentication fails ----------------------

KSASL_TOOL = Path(os.environ.get("KSASL_TOOL", HERE.parents[1] / "target" / "debug" / "ksasl"))
MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
           "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
           "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
           "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"}


def client_properties(mechanism: str, password: str = USERS["alice"], tls_ca: str | None = None) -> str:
    if mechanism == "OAUTHBEARER":
        # 6 s tokens: both re-authentications get a 3 s session, and the second one comes after
        # the token's refresh (at 80-85 % of its life), with a new token.
        options = 'unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds="6"'
        extra = "sasl.login.refresh.min.period.seconds=0\nsasl.login.refresh.buffer.seconds=0\n"
    else:
        options = f'username="alice" password="{password}"'
        extra = ""
    if tls_ca is not None:
        extra += f"ssl.truststore.type=PEM\nssl.truststore.location={tls_ca}\n"
    protocol = "SASL_SSL" if tls_ca is not None else "SASL_PLAINTEXT"
    return (f"security.protocol={protocol}\nsasl.mechanism={mechanism}\n{extra}"
            f"sasl.jaas.config={MODULES[mechanism]} required \\\n    {options};\n")


def probe(port: int, properties: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    config = tmp_path / "client.properties"
    config.write_text(properties)
    r = subprocess.run([str(KSASL_TOOL), "probe", "--bootstrap", f"127.0.0.1:{port}",
                        "--config", str(config), *args], capture_output=True, text=True, timeout=60)
    for secret in USERS.values():
        assert secret not in r.stdout + r.stderr, "the probe printed a password"
    return r


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_probe_authenticates_and_reauthenticates(broker, mechanism, tmp_path):
    before = sasl_metrics(broker)
    r = probe(broker.port, client_properties(mechanism), tmp_path, "--reauth", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    credential = "unsecured-token" if mechanism == "OAUTHBEARER" else "password"
    assert lines[0] == f"config: SASL_PLAINTEXT {mechanism} ({credential})"
    assert re.fullmatch(r"broker: \d+ APIs; ApiVersions v0-\d, SaslHandshake v0-1, "
                        r"SaslAuthenticate v0-2", lines[1]), lines[1]
    assert lines[2].startswith("listener mechanisms: ")
    assert set(lines[2].split(": ")[1].split(", ")) == set(MECHANISMS)
    assert re.fullmatch(rf"authenticated: User:alice with {mechanism} in \d+ ms", next(
        line for line in lines if line.startswith("authenticated: "))), r.stdout
    assert f"session lifetime: {LIFETIME_MS} ms" in lines
    for i in (1, 2):
        assert any(re.fullmatch(rf"re-authenticated {i}/2 in \d+ ms; session lifetime: \d+ ms", line)
                   for line in lines), r.stdout
    if mechanism == "OAUTHBEARER":
        assert lines[3].startswith("token: principal alice, expires ")
        assert any(line.startswith("token: a new one, expires ") for line in lines), r.stdout
    # The broker counted the same: one more authentication and two re-authentications, none
    # failed.
    after = sasl_metrics(broker)
    assert delta(after, before, "successful-reauthentication-total") == 2
    assert delta(after, before, "failed-reauthentication-total") == 0
    assert delta(after, before, "failed-authentication-total") == 0


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_probe_explains_a_wrong_password(broker, mechanism, tmp_path):
    r = probe(broker.port, client_properties(mechanism, password="not-the-password"), tmp_path)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    failed = next(line for line in lines if line.startswith("failed: "))
    if mechanism == "PLAIN":
        assert failed.endswith("Authentication failed: Invalid username or password"), failed
    else:
        assert failed.endswith("Authentication failed during authentication due to invalid "
                               f"credentials with SASL mechanism {mechanism}"), failed
    assert lines[-1].startswith("likely: wrong username or password")
    assert "authenticated" not in r.stdout


def test_probe_explains_an_unsupported_mechanism(broker, tmp_path):
    # The JWT listener enables OAUTHBEARER only.
    r = probe(broker.jwt_port, client_properties("SCRAM-SHA-256"), tmp_path)
    assert r.returncode == 1
    assert r.stdout.splitlines()[-3:] == [
        "listener mechanisms: OAUTHBEARER",
        "failed: UNSUPPORTED_SASL_MECHANISM (Kafka error 33)",
        "likely: this listener does not enable SCRAM-SHA-256; set sasl.mechanism to one of the "
        "mechanisms above, or enable it on the broker (sasl.enabled.mechanisms)",
    ]


def test_probe_explains_an_unsigned_token_on_a_jwks_listener(broker, tmp_path):
    r = probe(broker.jwt_port, client_properties("OAUTHBEARER"), tmp_path)
    assert r.returncode == 1
    failed = next(line for line in r.stdout.splitlines() if line.startswith("failed: "))
    assert "invalid_token" in failed, r.stdout
    assert r.stdout.splitlines()[-1].startswith("likely: "), r.stdout


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_probe_over_tls(broker, mechanism, tmp_path):
    before = sasl_metrics(broker, "SSL")
    r = probe(broker.ssl_port, client_properties(mechanism, tls_ca=str(broker.ssl_ca_pem)), tmp_path,
              "--reauth", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"config: SASL_SSL {mechanism} (password)"
    assert any(line.startswith(f"authenticated: User:alice with {mechanism}") for line in lines)
    assert any(line.startswith("re-authenticated 1/1") for line in lines), r.stdout
    after = sasl_metrics(broker, "SSL")
    assert delta(after, before, "successful-reauthentication-total") == 1


def test_probe_refuses_an_untrusted_broker_certificate(broker, tmp_path):
    sys.path.insert(0, str(HERE.parent / "common"))
    from certs import make_ca  # noqa: E402
    other_ca = make_ca(tmp_path, "other-ca", cn="not the broker's CA")
    r = probe(broker.ssl_port, client_properties("PLAIN", tls_ca=str(other_ca)), tmp_path)
    assert r.returncode == 1
    assert "certificate" in r.stderr and "ssl.truststore.location" in r.stderr, r.stderr
    assert "authenticated" not in r.stdout
    # TLS against the plaintext listener is told apart too.
    r = probe(broker.port, client_properties("PLAIN", tls_ca=str(broker.ssl_ca_pem)), tmp_path,
              "--timeout-ms", "3000")
    assert r.returncode == 1 and "security.protocol" in r.stderr, r.stderr
