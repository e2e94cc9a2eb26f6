"""The SASL_SSL listener of the real-Kafka harness (KafkaBroker(ssl=True), listener SSL).

One broker for the module. TLS checked with Python's ssl module (the certificate chains to
.ssl_ca_pem and names 127.0.0.1 and localhost; an unrelated CA and a wrong host name are
refused), SASL over TLS with confluent-kafka (librdkafka) for every mechanism of the listener,
a wrong password refused, a client trusting another CA failing the handshake, and the
session lifetime (connections.max.reauth.ms) read from the broker's SaslAuthenticate answer.

Run:  .venv/bin/python -m pytest -q tests/broker/test_broker_ssl.py
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import struct
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "common"))
from broker import KafkaBroker  # noqa: E402
from certs import make_ca  # noqa: E402

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import KafkaError, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient  # noqa: E402

REAUTH_MS = 3000
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]


@pytest.fixture(scope="module")
def broker():
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime")
    if not shutil.which("mvn") and not (HERE / "target" / "broker-lib" / ".complete").exists():
        pytest.skip("no Maven and no fetched broker classpath")
    if not shutil.which("openssl"):
        pytest.skip("no openssl command")
    with KafkaBroker(USERS, reauth_ms=REAUTH_MS, ssl=True) as b:
        print(f"broker with SSL listener started in {b.startup_seconds:.1f} s")
        yield b


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory) -> Path:
    """A CA that signed nothing the broker has."""
    return make_ca(tmp_path_factory.mktemp("other-ca"), "other-ca", "ksasl unrelated CA")


def ck_config(broker, mechanism, user="alice", password=None, ca=None, **extra) -> dict:
    cfg = {"bootstrap.servers": broker.ssl_bootstrap, "security.protocol": "SASL_SSL",
           "ssl.ca.location": str(ca or broker.ssl_ca_pem),
           "ssl.endpoint.identification.algorithm": "https",  # librdkafka's default, made explicit
           "sasl.mechanism": mechanism, "socket.timeout.ms": 10000}
    if mechanism == "OAUTHBEARER":
        cfg.update({"enable.sasl.oauthbearer.unsecure.jwt": True,
                    "sasl.oauthbearer.config": f"principal={user}"})
    else:
        cfg.update({"sasl.username": user,
                    "sasl.password": broker.users[user] if password is None else password})
    cfg.update(extra)
    return cfg


def first_errors(cfg: dict, timeout: float = 15.0) -> list:
    """Errors librdkafka reports (error_cb) for a client that tries to connect with cfg."""
    errors: list = []
    admin = AdminClient({**cfg, "error_cb": errors.append})  # connects to the bootstrap at once
    deadline = time.monotonic() + timeout
    while not errors and time.monotonic() < deadline:
        admin.poll(0.2)
    return errors


def tls_context(cafile) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(cafile))
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def raw_plain_over_tls(broker, user: str, password: str) -> tuple[int, str | None, int]:
    """SaslHandshake v1 + SaslAuthenticate v1 (PLAIN) over TLS: (error, message, session lifetime ms)."""
    host, port = broker.ssl_bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=15) as raw, \
            tls_context(broker.ssl_ca_pem).wrap_socket(raw, server_hostname=host) as s:
        def request(corr: int, api_key: int, body: bytes) -> bytes:
            cid = b"ksasl-ssl-test"
            msg = struct.pack(">hhih", api_key, 1, corr, len(cid)) + cid + body
            s.sendall(struct.pack(">i", len(msg)) + msg)
            def exact(n: int) -> bytes:
                buf = b""
                while len(buf) < n:
                    chunk = s.recv(n - len(buf))
                    assert chunk, "broker closed the connection"
                    buf += chunk
                return buf

            buf = exact(struct.unpack(">i", exact(4))[0])
            assert struct.unpack(">i", buf[:4])[0] == corr
            return buf[4:]

        r = request(1, 17, struct.pack(">h", 5) + b"PLAIN")
        assert struct.unpack(">h", r[:2])[0] == 0
        token = b"\0" + user.encode() + b"\0" + password.encode()
        r = request(2, 36, struct.pack(">i", len(token)) + token)
        err, mlen = struct.unpack(">hh", r[:4])
        msg = r[4:4 + mlen].decode() if mlen >= 0 else None
        pos = 4 + max(mlen, 0)
        blen = struct.unpack(">i", r[pos:pos + 4])[0]
        pos += 4 + max(blen, 0)
        return err, msg, struct.unpack(">q", r[pos:pos + 8])[0]


# --------------------------------------------------------------------------- TLS itself

def test_ssl_listener_configuration(broker):
    assert broker.ssl_bootstrap.startswith("127.0.0.1:") and broker.ssl_bootstrap != broker.bootstrap
    assert broker.ssl_ca_pem.is_file() and broker.ssl_ca_pem.parent.parent == broker.workdir
    props = (broker.workdir / "server.properties").read_text()
    assert f"SSL://127.0.0.1:{broker.ssl_port}" in props and "SSL:SASL_SSL" in props
    assert "listener.name.ssl.ssl.keystore.type=PEM\n" in props
    assert "listener.name.ssl.ssl.client.auth=none\n" in props
    assert f"listener.name.ssl.connections.max.reauth.ms={REAUTH_MS}\n" in props
    assert "0.0.0.0" not in props


@pytest.mark.parametrize("server_hostname", ["127.0.0.1", "localhost"])
def test_certificate_chains_to_the_ca_and_names_the_host(broker, server_hostname):
    with socket.create_connection(("127.0.0.1", broker.ssl_port), timeout=10) as raw, \
            tls_context(broker.ssl_ca_pem).wrap_socket(raw, server_hostname=server_hostname) as s:
        cert = s.getpeercert()
        assert s.version() in ("TLSv1.2", "TLSv1.3")
    assert ("IP Address", "127.0.0.1") in cert["subjectAltName"]
    assert ("DNS", "localhost") in cert["subjectAltName"]


def test_tls_with_another_ca_or_host_name_is_refused(broker, other_ca):
    with socket.create_connection(("127.0.0.1", broker.ssl_port), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed: unable to get local issuer"):
            tls_context(other_ca).wrap_socket(raw, server_hostname="127.0.0.1")
    with socket.create_connection(("127.0.0.1", broker.ssl_port), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
            tls_context(broker.ssl_ca_pem).wrap_socket(raw, server_hostname="kafka.invalid")


# --------------------------------------------------------------------------- SASL over TLS

@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_authenticates_and_produces(broker, mechanism):
    md = AdminClient(ck_config(broker, mechanism)).list_topics(timeout=20)
    # the broker advertises the listener the client came in on
    assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == [broker.ssl_bootstrap]
    topic = "ssl-" + mechanism.lower()
    delivered, failed = [], []
    producer = Producer(ck_config(broker, mechanism, user="bob"))
    for i in range(3):
        producer.produce(topic, b"record-%d" % i,
                         on_delivery=lambda err, m: failed.append(err) if err else delivered.append(m.offset()))
    assert producer.flush(30) == 0
    assert not failed and len(set(delivered)) == 3


def test_wrong_password_is_refused(broker):
    before = broker.socket_server_metrics("SSL")
    errors = first_errors(ck_config(broker, "SCRAM-SHA-512", password="not-the-password"))
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in errors[0].str()
    err, msg, lifetime = raw_plain_over_tls(broker, "alice", "not-the-password")
    assert (err, msg, lifetime) == (58, "Authentication failed: Invalid username or password", 0)
    after = broker.socket_server_metrics("SSL")
    assert after["failed-authentication-total"] >= before["failed-authentication-total"] + 2
    assert after["successful-authentication-total"] == before["successful-authentication-total"]


def test_client_trusting_another_ca_fails_the_handshake(broker, other_ca):
    before = broker.socket_server_metrics("SSL")
    errors = first_errors(ck_config(broker, "PLAIN", ca=other_ca))
    assert errors and errors[0].code() == KafkaError._SSL, errors
    assert "certificate verify failed" in errors[0].str()
    after = broker.socket_server_metrics("SSL")
    assert after["successful-authentication-total"] == before["successful-authentication-total"]
    # the broker counts the failed TLS handshake as a failed authentication
    assert after["failed-authentication-total"] > before["failed-authentication-total"]


def test_session_lifetime_is_reauth_ms(broker):
    assert raw_plain_over_tls(broker, "alice", USERS["alice"]) == (0, "", REAUTH_MS)
