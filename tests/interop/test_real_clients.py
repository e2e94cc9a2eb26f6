"""Real Kafka clients from PyPI against the example broker (examples/python/kafka_server.py),
whose every connection is authenticated and gated by ksasl with connections.max.reauth.ms =
3000: confluent-kafka (librdkafka) and kafka-python 3.x, each with PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512 and OAUTHBEARER (unsecured tokens of 15 seconds, refreshed on Kafka's schedule
through ksasl.adapters), produce for 20 seconds. The broker must see every connection
re-authenticate before its session expires, kill none, acknowledge every record and never see
an expired token; a client that does not re-authenticate (a raw ksasl client with
reauth_timing="disabled") is cut off after the session lifetime.

All scenarios run at once, each against its own broker (so each has its own metrics), which
keeps the file at about 25 seconds. Run with ksasl installed (pip install ./bindings/python).

Token lifetime: librdkafka asks oauth_cb for a new token at 80% of the current one's lifetime,
checked by a 1-second timer, and Kafka refuses a re-authentication within 1 s of the previous
one, so a session (capped by the token's expiry) must last well over 1 s: tokens of a few
seconds make librdkafka re-authenticate with tokens about to expire and reconnect. 15-second
tokens keep every session at 2 s or more while still refreshing during the run; the
confluent-kafka adapter fetches whenever librdkafka asks, so librdkafka's schedule and the
refresher's agree.
"""

import logging
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import ksasl  # noqa: E402  (make test installs ./bindings/python before this runs)
from ksasl.adapters import TokenProvider, confluent_kafka_oauth_cb  # noqa: E402

import confluent_kafka  # noqa: E402

with warnings.catch_warnings():  # kafka-python's schema loading uses deprecated importlib APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka
    import kafka.net.sasl.oauth
    import kafka.producer  # noqa: F401

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "kafka_server.py"
sys.path.insert(0, str(EXAMPLE.parent))
import kafka_server  # noqa: E402

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
CLIENTS = ["confluent-kafka", "kafka-python"]
LIFETIME_MS = 3000  # connections.max.reauth.ms
PRODUCE_S = 20.0  # how long each client produces
INTERVAL_S = 0.25  # one record every INTERVAL_S, then poll/flush
TOKEN_LIFETIME_S = 15  # OAUTHBEARER tokens are refreshed during the run (see above)
TOPIC = "reauth-test"

log = logging.getLogger("test_real_clients")


def refresher():
    """A refresher with Kafka's default sasl.login.refresh.* settings: the adapters fetch a new
    token when the client asks for one (librdkafka) or when Kafka's schedule says so."""
    return ksasl.Refresher()


KafkaPythonTokenProvider = TokenProvider
assert isinstance(TokenProvider(lambda: ("t", 0, "p", None)), kafka.net.sasl.oauth.AbstractTokenProvider), (
    "ksasl.adapters registers TokenProvider with kafka-python's AbstractTokenProvider"
)


def now_ms() -> int:
    return int(time.time() * 1000)


class Scenario:
    """One client (or the raw client) with one mechanism against its own broker."""

    def __init__(self, client: str, mechanism: str) -> None:
        self.client, self.mechanism = client, mechanism
        self.server = kafka_server.KafkaServer(max_reauth_ms=LIFETIME_MS)
        self.produced = self.acked = 0
        self.errors = []
        self.tokens = []  # (issued_ms, expiry_ms) of every OAUTHBEARER token fetched
        self.exc = None
        self.metrics = None
        self.extra = {}
        self.thread = threading.Thread(target=self._run, name=f"{client}-{mechanism}")

    def fetch(self):
        """The application's token source for ksasl.adapters: absolute expiry in ms."""
        t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=TOKEN_LIFETIME_S)
        self.tokens.append((now_ms(), t["expiry_ms"]))
        return t["token"], t["expiry_ms"], t["principal"], None

    def _run(self) -> None:
        try:
            port = self.server.start_in_thread()
            try:
                RUNNERS[self.client](self, port)
            finally:
                time.sleep(0.2)  # let the broker see the client's close
                self.server.stop_thread()
                self.metrics = self.server.metrics()
        except BaseException as e:  # reported by the test
            self.exc = e
            log.exception("%s %s", self.client, self.mechanism)

    @property
    def connections(self):
        return [c for c in self.server.connections if c.authentications]


def paced(deadline_s: float, step):
    """Calls step(wait) every INTERVAL_S until PRODUCE_S have passed; step waits `wait` s."""
    start = time.monotonic()
    tick = start
    while tick < start + deadline_s:
        tick += INTERVAL_S
        step(lambda: max(0.0, tick - time.monotonic()))


def run_confluent_kafka(s: Scenario, port: int) -> None:
    rdlog = logging.getLogger(f"librdkafka.{s.mechanism}")
    conf = {
        "bootstrap.servers": f"127.0.0.1:{port}",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": s.mechanism,
        "client.id": f"ck-{s.mechanism}",
        "enable.idempotence": False,
        "acks": "all",
        "linger.ms": 0,
        "message.timeout.ms": 10000,
        "logger": rdlog,
    }
    if s.mechanism == "OAUTHBEARER":
        conf["oauth_cb"] = confluent_kafka_oauth_cb(s.fetch, refresher())
    else:
        conf.update({"sasl.username": "alice", "sasl.password": "alice-secret"})
    producer = confluent_kafka.Producer(conf)

    def delivered(err, _msg):
        if err is None:
            s.acked += 1
        else:
            s.errors.append(str(err))

    def step(wait):
        producer.produce(TOPIC, value=b"record %d" % s.produced, on_delivery=delivered)
        s.produced += 1
        while wait() > 0:
            producer.poll(wait())  # serves delivery reports and oauth_cb

    try:
        paced(PRODUCE_S, step)
        s.extra["unflushed"] = producer.flush(10)
    finally:
        producer.close()


def run_kafka_python(s: Scenario, port: int) -> None:
    kw = dict(
        bootstrap_servers=f"127.0.0.1:{port}",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism=s.mechanism,
        client_id=f"kp-{s.mechanism}",
        enable_idempotence=False,
        acks="all",
        linger_ms=0,
    )
    if s.mechanism == "OAUTHBEARER":
        kw["sasl_oauth_token_provider"] = KafkaPythonTokenProvider(s.fetch, refresher())
    else:
        kw.update(sasl_plain_username="alice", sasl_plain_password="alice-secret")
    producer = kafka.KafkaProducer(**kw)
    futures = []

    def step(wait):
        futures.append(producer.send(TOPIC, b"record %d" % s.produced))
        s.produced += 1
        time.sleep(wait())

    try:
        paced(PRODUCE_S, step)
        producer.flush(10)
        for f in futures:
            if f.succeeded():
                s.acked += 1
            else:
                s.errors.append(repr(f.exception) if f.is_done else "not acknowledged")
    finally:
        producer.close(timeout=5)


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def read_frame(sock: socket.socket):
    """One frame's body, or None when the peer closed the connection."""
    def exactly(n):
        buf = b""
        while len(buf) < n:
            try:
                chunk = sock.recv(n - len(buf))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            buf += chunk
        return buf

    head = exactly(4)
    return None if head is None else exactly(struct.unpack(">i", head)[0])


def run_without_reauthentication(s: Scenario, port: int) -> None:
    """A raw ksasl client that never re-authenticates sends a Metadata v0 request every
    INTERVAL_S until the broker closes the connection."""
    registry = ksasl.MechanismRegistry()
    if s.mechanism == "OAUTHBEARER":
        refresher = ksasl.Refresher()
        refresher.poll()
        t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=60)  # outlives the session
        refresher.set_token(t["token"], t["expiry_ms"], "alice", None)
        registry.add_oauthbearer_client(refresher)
    else:
        registry.add_password_clients("alice", "alice-secret")
    config = ksasl.ClientConfig(registry, s.mechanism, client_id="raw", reauth_timing="disabled")
    conn = ksasl.ClientConnection(config)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        conn.start()
        sock.sendall(conn.transmit())
        while conn.session() is None:
            event, _, _ = conn.handle_frame(read_frame(sock))
            sock.sendall(conn.transmit())
        authenticated = time.monotonic()
        s.extra.update(responses=0, client_lifetime_ms=conn.session()["lifetime_ms"])
        corr = 1_000_000
        while time.monotonic() - authenticated < 10:
            assert conn.before_request()  # never holds requests back for a re-authentication
            sock.sendall(frame(struct.pack(">hhih", 3, 0, corr, 3) + b"raw" + struct.pack(">i", 0)))
            response = read_frame(sock)
            if response is None:
                s.extra["closed_after_ms"] = (time.monotonic() - authenticated) * 1000
                return
            event, _, _ = conn.handle_frame(response)
            assert event == "application"
            s.extra["responses"] += 1
            corr += 1
            time.sleep(INTERVAL_S)


RUNNERS = {
    "confluent-kafka": run_confluent_kafka,
    "kafka-python": run_kafka_python,
    "no-reauth": run_without_reauthentication,
}


@pytest.fixture(scope="module")
def scenarios():
    """Runs every scenario at once; the tests check the outcomes."""
    runs = {(c, m): Scenario(c, m) for c in [*CLIENTS, "no-reauth"] for m in MECHANISMS}
    for s in runs.values():
        s.thread.start()
    for s in runs.values():
        s.thread.join(PRODUCE_S + 60)
        assert not s.thread.is_alive(), f"{s.client} {s.mechanism} did not finish"
    for s in runs.values():  # shown with -s
        print(f"\n{s.client} {s.mechanism}: produced {s.produced}, acknowledged {s.acked}, "
              f"tokens {len(s.tokens)}, {s.extra}\n{describe(s)}")
    return runs


def describe(s: Scenario) -> str:
    return "\n".join(
        f"  conn {c.id}: {c.close_reason}, auth at +{[t - c.opened_ms for t, _, _ in c.authentications]} ms, "
        f"lifetimes {[lt for _, lt, _ in c.authentications]}, requests {c.requests}, records {c.records}"
        for c in s.server.connections
    )


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", CLIENTS)
def test_real_client_reauthenticates_and_is_never_cut_off(scenarios, client, mechanism):
    s = scenarios[(client, mechanism)]
    assert s.exc is None, repr(s.exc)
    info = f"{client} {mechanism}:\n{describe(s)}\nmetrics {s.metrics}"
    m = s.metrics

    # Every record produced was acknowledged, and the broker received each exactly once.
    assert s.produced >= 0.9 * PRODUCE_S / INTERVAL_S, info
    assert s.errors == [] and s.acked == s.produced, info
    assert sum(c.records for c in s.server.connections) == s.produced, info

    # No connection was closed for an expired session, no (re-)authentication failed.
    assert m["expired-connections-killed-count"] == 0, info
    assert all(c.close_reason != "expired" for c in s.server.connections), info
    assert m["failed-authentication-total"] == 0 and m["failed-reauthentication-total"] == 0, info
    conns = s.connections
    assert m["successful-authentication-total"] == len(conns), info
    assert m["successful-reauthentication-total"] == sum(c.reauthentications for c in conns), info

    # Each connection re-authenticated before each session ended: once per lifetime.
    for c in conns:
        assert c.mechanism == mechanism and c.principal == "User:alice", info
        for (t0, lifetime, _), (t1, _, _) in zip(c.authentications, c.authentications[1:]):
            assert 0 < lifetime <= LIFETIME_MS and t1 - t0 <= lifetime, info
        open_ms = c.closed_ms - c.authentications[0][0]
        assert c.reauthentications >= open_ms // LIFETIME_MS - 1, info
    # The connections that produced lived through the whole run: at least 3 re-authentications.
    producing = [c for c in conns if c.records]
    assert producing, info
    assert all(c.reauthentications >= 3 for c in producing), info
    # Connections that did not: the bootstrap connections, closed by the client after Metadata.
    assert all(c.closed_ms - c.opened_ms < LIFETIME_MS for c in conns if not c.records
               and c.reauthentications == 0), info

    if mechanism == "OAUTHBEARER":
        # The broker never saw an expired token: each (re-)authentication's credential expiry
        # lay ahead, the session lifetime never outlived it, and refreshed tokens were used.
        seen = [(t, lt, exp) for c in conns for (t, lt, exp) in c.authentications]
        assert all(exp is not None and exp > t and t + lt <= exp for t, lt, exp in seen), info
        assert len({exp for _, _, exp in seen}) >= 2, info
        assert len(s.tokens) >= 2, info


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_client_without_reauthentication_is_cut_off_at_expiry(scenarios, mechanism):
    s = scenarios[("no-reauth", mechanism)]
    assert s.exc is None, repr(s.exc)
    info = f"no-reauth {mechanism}: {s.extra}\n{describe(s)}\nmetrics {s.metrics}"
    assert s.extra["client_lifetime_ms"] == LIFETIME_MS, info
    # Requests were served for the whole session, then the first one after it was not.
    assert LIFETIME_MS <= s.extra["closed_after_ms"] <= LIFETIME_MS + 1000 * INTERVAL_S + 500, info
    assert s.extra["responses"] >= LIFETIME_MS / 1000 / INTERVAL_S - 2, info
    (c,) = s.connections
    assert c.close_reason == "expired" and c.reauthentications == 0, info
    assert s.metrics["expired-connections-killed-count"] == 1, info
    assert s.metrics["successful-reauthentication-total"] == 0, info


def test_example_runs_standalone():
    """`python kafka_server.py --port 0` prints its port, serves, and stops on SIGTERM
    printing its metrics."""
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--port", "0", "--max-reauth-ms", str(LIFETIME_MS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(proc.stdout.readline())
        registry = ksasl.MechanismRegistry()
        registry.add_password_clients("alice", "alice-secret")
        conn = ksasl.ClientConnection(ksasl.ClientConfig(registry, "SCRAM-SHA-512"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            conn.start()
            sock.sendall(conn.transmit())
            while conn.session() is None:
                conn.handle_frame(read_frame(sock))
                sock.sendall(conn.transmit())
        assert conn.session()["lifetime_ms"] == LIFETIME_MS
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "successful-authentication-total 1.0" in out.splitlines()


def test_example_closes_on_an_oversize_length_prefix():
    """Issue 17, defect 2: a frame declaring 100 MiB from an anonymous client is refused on its
    4-byte length alone: the broker closes without waiting for (or buffering) the body."""
    server = kafka_server.KafkaServer(max_reauth_ms=LIFETIME_MS)
    port = server.start_in_thread()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(struct.pack(">i", 100 * 1024 * 1024))
            assert sock.recv(1) == b"", "the broker answered instead of closing"
        m = server.metrics()
        assert m["failed-authentication-total"] == 1
    finally:
        server.stop_thread()
