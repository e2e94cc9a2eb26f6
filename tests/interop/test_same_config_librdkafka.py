"""One librdkafka configuration, two clients: confluent-kafka (librdkafka) and ksasl's
ClientSetup, which reads librdkafka's names the way the core reads them. Both connect to the
example broker (examples/python/kafka_server.py), which records what it saw on each
connection: the mechanism, the principal it authenticated, and for OAUTHBEARER the expiry of
every token presented (re-authentication every 1.5 s).

For each configuration both must use the same mechanism and be authenticated as the same
principal; for librdkafka's unsecured tokens both must refresh at librdkafka's point, 80 % of
the token's remaining life: ksasl's refresher says when it is due, and librdkafka's is read
from the tokens the broker saw (the second token was made that long after the first; librdkafka
checks its refresh time once a second, so it may be up to a second late)."""

from __future__ import annotations

import pathlib
import socket
import struct
import sys
import time

import pytest

import confluent_kafka
import ksasl

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "python"))
import kafka_server  # noqa: E402

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
LIFE_S = 10
CONFIGS = {
    "plain": {"sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"},
    "scram-256": {"sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": "bob", "sasl.password": "bob-secret"},
    "scram-512": {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret"},
    "unsecured-jwt": {"sasl.mechanisms": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": "true",
                      "sasl.oauthbearer.config": f"principal=carol lifeSeconds={LIFE_S} extension_traceId=7"},
}
EXPECTED = {"plain": ("PLAIN", "User:alice"), "scram-256": ("SCRAM-SHA-256", "User:bob"),
            "scram-512": ("SCRAM-SHA-512", "User:alice"), "unsecured-jwt": ("OAUTHBEARER", "User:carol")}


@pytest.fixture(scope="module")
def server():
    s = kafka_server.KafkaServer(max_reauth_ms=1500, users=USERS)
    port = s.start_in_thread()
    try:
        yield s, port
    finally:
        s.stop_thread()


def now_ms() -> int:
    return int(time.time() * 1000)


def seen(server, client_id: str):
    """The authenticated connections of one client."""
    return [c for c in server.connections if c.client_id == client_id and c.authentications]


def run_confluent_kafka(port: int, config: dict, client_id: str, seconds: float) -> None:
    p = confluent_kafka.Producer({**config, "bootstrap.servers": f"127.0.0.1:{port}",
                                  "security.protocol": "SASL_PLAINTEXT", "client.id": client_id,
                                  "enable.idempotence": False, "linger.ms": 0})
    errors = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p.produce("same-config", b"x", on_delivery=lambda e, _m: e and errors.append(str(e)))
        p.poll(0.2)
    assert p.flush(10) == 0 and errors == [], errors


def run_ksasl(port: int, setup: ksasl.ClientSetup) -> None:
    """One authentication over a socket, then a Metadata request answered."""
    conn = ksasl.ClientConnection(setup.config)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        buf = b""

        def frame() -> bytes:
            nonlocal buf
            while True:
                if len(buf) >= 4:
                    (n,) = struct.unpack(">i", buf[:4])
                    if len(buf) >= 4 + n:
                        f, buf = buf[4:4 + n], buf[4 + n:]
                        return f
                data = s.recv(65536)
                assert data, "closed by the server"
                buf += data

        conn.start(now_ms())
        while True:
            s.sendall(conn.transmit())
            event, _, _ = conn.handle_frame(frame(), now_ms())
            if event == "authenticated":
                break
        assert conn.before_request(now_ms())
        metadata_v0 = struct.pack(">hhih", 3, 0, 1, 0) + struct.pack(">i", 0)
        s.sendall(struct.pack(">i", len(metadata_v0)) + metadata_v0)
        event, _, _ = conn.handle_frame(frame(), now_ms())
        assert event == "application"


@pytest.mark.parametrize("name", list(CONFIGS))
def test_confluent_kafka_and_ksasl_read_a_librdkafka_config_alike(server, name):
    s, port = server
    config = CONFIGS[name]
    mechanism, principal = EXPECTED[name]
    oauth = name == "unsecured-jwt"
    run_confluent_kafka(port, config, f"rdkafka-{name}", 2 * LIFE_S if oauth else 1.0)
    theirs = seen(s, f"rdkafka-{name}")
    assert theirs, "confluent-kafka never authenticated"
    assert {(c.mechanism, c.principal) for c in theirs} == {(mechanism, principal)}
    setup = ksasl.ClientSetup.from_dict({**config, "security.protocol": "SASL_PLAINTEXT",
                                         "client.id": f"ksasl-{name}"})
    assert setup.mechanism == mechanism and setup.unknown == []
    if oauth:
        r = setup.refresher
        t0 = now_ms()
        assert r.run_due(t0)
        token = r.current(t0)
        assert token["expiry_ms"] == t0 + LIFE_S * 1000 and token["extensions"] == {"traceId": "7"}
        ours_delay = r.next_deadline() - t0
        assert ours_delay == int(0.8 * LIFE_S * 1000)
        # librdkafka's tokens, from the expiries the broker saw in order.
        expiries = sorted({exp for c in theirs for _, _, exp in c.authentications if exp})
        assert len(expiries) >= 2, expiries
        theirs_delay = expiries[1] - expiries[0]
        assert ours_delay - 50 <= theirs_delay <= ours_delay + 1200, (theirs_delay, ours_delay)
    before = len(s.connections)
    run_ksasl(port, setup)
    ours = [c for c in s.connections[before:] if c.authentications]
    assert [(c.mechanism, c.principal) for c in ours] == [(mechanism, principal)]
