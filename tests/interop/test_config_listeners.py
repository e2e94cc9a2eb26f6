"""The example broker configured from a broker's server.properties (examples/python/kafka_server.py
--config FILE --listener NAME, one listener per process) against real clients: the file has
two SASL listeners (and a PLAINTEXT one) whose mechanisms, PLAIN users and session lifetimes
differ, with Kafka's precedence: INTERNAL inherits sasl.enabled.mechanisms=PLAIN and takes its
users from its PLAIN JAAS entry's user_ options; EXTERNAL enables SCRAM-SHA-256 (users from the
example's store: alice / alice-secret) and OAUTHBEARER validated against a JWKS endpoint (a local
HTTP server, tokens signed by PyJWT); connections.max.reauth.ms is set per mechanism over an
unprefixed 600000.

confluent-kafka (librdkafka) and kafka-python authenticate on each listener for a few seconds:
allowed mechanisms succeed with the session lifetime of that listener and mechanism, which the
client reports receiving (librdkafka's security debug log, kafka-python's re-authentication
schedule) and librdkafka re-authenticates within; a mechanism the listener does not enable, a
wrong password and a SCRAM user trying PLAIN are refused. The broker's own log (-v) and the
metrics it prints on SIGTERM agree.

The listener's ServerConfig, built by the core from the file, lists the example broker's APIs
beside ksasl's in ApiVersions (ServerSetup's api_versions)."""

import json
import logging
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

import ksasl
from ksasl.adapters import confluent_kafka_oauth_cb

import confluent_kafka

with warnings.catch_warnings():  # kafka-python's schema loading uses deprecated importlib APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "kafka_server.py"
SESSION_S = 6.0  # how long each client stays
LIFETIMES = {("INTERNAL", "PLAIN"): 2000, ("EXTERNAL", "SCRAM-SHA-256"): 3000, ("EXTERNAL", "OAUTHBEARER"): 2500}

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
JWKS_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"


def server_properties(jwks_url: str) -> str:
    return f"""\
process.roles=broker
node.id=1
listeners=INTERNAL://127.0.0.1:19092,EXTERNAL://127.0.0.1:19093,REPLICATION://127.0.0.1:19094
listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT,REPLICATION:PLAINTEXT
sasl.enabled.mechanisms=PLAIN
connections.max.reauth.ms=600000
listener.name.internal.plain.connections.max.reauth.ms=2000
listener.name.internal.plain.sasl.jaas.config={PLAIN} required \\
    username="broker" password="broker-secret" user_broker="broker-secret" user_bob="bob-secret";
listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER
listener.name.external.scram-sha-256.connections.max.reauth.ms=3000
listener.name.external.scram-sha-256.sasl.jaas.config={SCRAM} required;
listener.name.external.oauthbearer.connections.max.reauth.ms=2500
listener.name.external.oauthbearer.sasl.server.callback.handler.class={JWKS_HANDLER}
listener.name.external.oauthbearer.sasl.oauthbearer.jwks.endpoint.url={jwks_url}
listener.name.external.oauthbearer.sasl.oauthbearer.expected.audience=kafka
listener.name.external.oauthbearer.sasl.jaas.config={OAUTH} required;
"""


# (client, listener, mechanism, user, password, expected: "ok", "unsupported" or "refused")
SCENARIOS = [
    ("confluent-kafka", "INTERNAL", "PLAIN", "bob", "bob-secret", "ok"),
    ("confluent-kafka", "INTERNAL", "PLAIN", "bob", "wrong", "refused"),
    ("confluent-kafka", "INTERNAL", "PLAIN", "alice", "alice-secret", "refused"),  # a SCRAM user
    ("confluent-kafka", "INTERNAL", "SCRAM-SHA-256", "alice", "alice-secret", "unsupported"),
    ("confluent-kafka", "EXTERNAL", "SCRAM-SHA-256", "alice", "alice-secret", "ok"),
    ("confluent-kafka", "EXTERNAL", "SCRAM-SHA-256", "alice", "wrong", "refused"),
    ("confluent-kafka", "EXTERNAL", "OAUTHBEARER", "alice", None, "ok"),
    ("confluent-kafka", "EXTERNAL", "PLAIN", "bob", "bob-secret", "unsupported"),
    ("kafka-python", "INTERNAL", "PLAIN", "bob", "bob-secret", "ok"),
    ("kafka-python", "INTERNAL", "SCRAM-SHA-512", "alice", "alice-secret", "unsupported"),
    ("kafka-python", "EXTERNAL", "SCRAM-SHA-256", "alice", "alice-secret", "ok"),
    ("kafka-python", "EXTERNAL", "SCRAM-SHA-256", "alice", "wrong", "refused"),
]


class Jwks:
    """An identity provider's key: a JWKS at a local HTTP endpoint, tokens signed with it."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = dict(json.loads(RSAAlgorithm.to_jwk(self.key.public_key())), kid="k1", use="sig", alg="RS256")
        body = json.dumps({"keys": [jwk]}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/jwks"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def fetch(self):
        """A token for ksasl.adapters: (token, expiry_ms, principal, extensions)."""
        now = int(time.time())
        claims = {"sub": "alice", "aud": "kafka", "iat": now, "exp": now + 60}
        token = jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "k1"})
        return token, (now + 60) * 1000, "alice", None


class Broker:
    """kafka_server.py --config FILE --listener NAME -v, in its own process."""

    def __init__(self, config: Path, listener: str) -> None:
        self.listener = listener
        self.proc = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--port", "0", "--config", str(config), "--listener", listener, "-v"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.port = int(self.proc.stdout.readline())
        self.banner = self.proc.stdout.readline()  # "listening on ...": nothing else until SIGTERM
        self.log = self.out = ""

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.out, self.log = self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0, self.log

    def metrics(self) -> dict:
        return {k: float(v) for k, v in re.findall(r"^([a-z-]+) (\S+)$", self.out, re.M)}

    def authentications(self):
        """(connection, "authenticated" or "reauthenticated", principal, mechanism, lifetime)."""
        found = re.findall(r"connection (\d+): (authenticated|reauthenticated) (\S+) with (\S+), "
                           r"session lifetime (\d+) ms", self.log)
        return [(int(c), kind, p, m, int(lt)) for c, kind, p, m, lt in found]

    def failures(self):
        """The codes of the failed authentications."""
        return re.findall(r"connection \d+: (?:fail_at|close_now): ([A-Z_]+):", self.log)


class Run:
    """One client on one listener for SESSION_S (or until the refusal it expects)."""

    def __init__(self, client, listener, mechanism, user, password, expected) -> None:
        self.client, self.listener, self.mechanism = client, listener, mechanism
        self.user, self.password, self.expected = user, password, expected
        self.name = f"{client}-{listener}-{mechanism}-{user}-{expected}"
        self.lifetimes = []  # the session lifetimes the client reports receiving
        self.errors = []  # the authentication errors the client reports
        self.exc = None


def run_confluent_kafka(r: Run, port: int, jwks: Jwks) -> None:
    rd = logging.getLogger(f"librdkafka.{r.name}")
    rd.propagate = False
    rd.setLevel(logging.DEBUG)

    class Seen(logging.Handler):
        def emit(self, record):
            m = re.search(r"Received session lifetime (\d+) ms from broker", record.getMessage())
            if m:
                r.lifetimes.append(int(m.group(1)))

    rd.addHandler(Seen())
    conf = {
        "bootstrap.servers": f"127.0.0.1:{port}",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": r.mechanism,
        "client.id": r.name,
        "enable.idempotence": False,
        "debug": "security",
        "logger": rd,
        "error_cb": lambda err: r.errors.append(err) if err.code() == confluent_kafka.KafkaError._AUTHENTICATION else None,
    }
    if r.mechanism == "OAUTHBEARER":
        conf["oauth_cb"] = confluent_kafka_oauth_cb(jwks.fetch, ksasl.Refresher())
    else:
        conf.update({"sasl.username": r.user, "sasl.password": r.password})
    producer = confluent_kafka.Producer(conf)
    try:
        end = time.monotonic() + SESSION_S
        while time.monotonic() < end and not (r.expected != "ok" and r.errors):
            producer.poll(0.1)  # serves the logger, error_cb and oauth_cb
    finally:
        producer.close()


class KafkaPythonLog(logging.Handler):
    """kafka-python's connection log, per client (its I/O thread is kafka-io-<client_id>)."""

    runs = {}

    def emit(self, record):
        r = self.runs.get(record.threadName.removeprefix("kafka-io-"))
        if r is None:
            return
        text = record.getMessage()
        m = re.search(r"Scheduling SASL re-authentication in [\d.]+s \(session_lifetime_ms=(\d+)\)", text)
        if m:
            r.lifetimes.append(int(m.group(1)))
        m = re.search(r"Connection lost: (?:\[Error \d+\] )?(\w+)", text)
        if m:
            r.errors.append(m.group(1))


def run_kafka_python(r: Run, port: int, jwks: Jwks) -> None:
    KafkaPythonLog.runs[r.name] = r
    try:
        kafka.KafkaProducer(
            bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SASL_PLAINTEXT",
            sasl_mechanism=r.mechanism, sasl_plain_username=r.user, sasl_plain_password=r.password,
            client_id=r.name, enable_idempotence=False, bootstrap_timeout_ms=int(SESSION_S * 1000 / 2),
        ).close()
    except kafka.errors.KafkaError:
        pass  # a refused login ends the run; the log holds what happened


RUNNERS = {"confluent-kafka": run_confluent_kafka, "kafka-python": run_kafka_python}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both listeners' brokers, every client at once; the tests read the outcomes."""
    jwks = Jwks()
    config = tmp_path_factory.mktemp("broker") / "server.properties"
    config.write_text(server_properties(jwks.url))
    handler = KafkaPythonLog()
    net = logging.getLogger("kafka.net.connection")
    net.addHandler(handler)
    net.setLevel(logging.DEBUG)
    brokers = {name: Broker(config, name) for name in ("INTERNAL", "EXTERNAL")}
    try:
        all_runs = [Run(*s) for s in SCENARIOS]

        def go(r: Run) -> None:
            try:
                RUNNERS[r.client](r, brokers[r.listener].port, jwks)
            except BaseException as e:  # reported by the test
                r.exc = e

        threads = [threading.Thread(target=go, args=(r,), name=r.name) for r in all_runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(SESSION_S + 30)
            assert not t.is_alive(), f"{t.name} did not finish"
    finally:
        net.removeHandler(handler)
        for b in brokers.values():
            b.stop()
        jwks.http.shutdown()
    for r in all_runs:  # shown with -s
        print(f"{r.name}: lifetimes {r.lifetimes}, errors {[str(e) for e in r.errors]}")
    for b in brokers.values():
        print(f"--- {b.listener}\n{b.log}\n{b.metrics()}")
    return {r.name: r for r in all_runs}, brokers


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: "-".join(x or "token" for x in s))
def test_each_client_gets_what_its_listener_allows(runs, scenario):
    runs, brokers = runs
    r = runs[Run(*scenario).name]
    assert r.exc is None, repr(r.exc)
    info = f"{r.name}: lifetimes {r.lifetimes}, errors {r.errors}\n{brokers[r.listener].log}"
    if r.expected == "ok":
        # The session lifetime of this listener and mechanism is what the client received; a
        # librdkafka connection stays and re-authenticates within each session.
        lifetime = LIFETIMES[(r.listener, r.mechanism)]
        assert r.lifetimes and set(r.lifetimes) == {lifetime} and not r.errors, info
        if r.client == "confluent-kafka":
            assert len(r.lifetimes) >= SESSION_S * 1000 // lifetime, info
        return
    assert r.errors and not r.lifetimes, info
    text = " ".join(str(e) for e in r.errors)
    if r.client == "kafka-python":
        # kafka-python often handles the broker's close before its error response (then
        # KafkaConnectionError); the error it does report is the right one.
        wanted = {"unsupported": "UnsupportedSaslMechanismError", "refused": "SaslAuthenticationFailedError"}
        assert set(r.errors) <= {wanted[r.expected], "KafkaConnectionError"}, info
    elif r.expected == "unsupported":
        assert "Unsupported SASL mechanism" in text and r.mechanism in text, info
    else:
        assert "Authentication failed" in text, info


@pytest.mark.parametrize("listener", ["INTERNAL", "EXTERNAL"])
def test_the_broker_saw_the_listener_settings(runs, listener):
    _, brokers = runs
    b = brokers[listener]
    m, auths = b.metrics(), b.authentications()
    info = f"{b.log}\n{m}"
    # Every session had this listener's lifetime for its mechanism, and only enabled mechanisms
    # with the right users got one.
    assert auths and all(lt == LIFETIMES[(listener, mech)] for _, _, _, mech, lt in auths), info
    expected = {"INTERNAL": {("User:bob", "PLAIN")},
                "EXTERNAL": {("User:alice", "SCRAM-SHA-256"), ("User:alice", "OAUTHBEARER")}}[listener]
    assert {(p, mech) for _, _, p, mech, _ in auths} == expected, info
    # librdkafka's connections re-authenticated (each mechanism's at least once), none expired.
    for p, mech in expected:
        reauths = [c for c, kind, p2, m2, _ in auths if kind == "reauthenticated" and (p2, m2) == (p, mech)]
        assert len(reauths) >= 1, (p, mech, info)
    assert m["successful-reauthentication-total"] == sum(kind == "reauthenticated" for _, kind, *_ in auths), info
    assert m["failed-reauthentication-total"] == 0 and m["expired-connections-killed-count"] == 0, info
    assert "closed: expired" not in b.log, info
    # The refusals: a mechanism not enabled here, and wrong credentials.
    failures = b.failures()
    assert m["failed-authentication-total"] == len(failures), info
    assert {"UNSUPPORTED_SASL_MECHANISM", "INVALID_CREDENTIALS"} <= set(failures), info
    # Each refused mechanism was refused as not enabled (SCRAM-SHA-512: kafka-python's attempt).
    refused = {"INTERNAL": ["SCRAM-SHA-256", "SCRAM-SHA-512"], "EXTERNAL": ["PLAIN"]}[listener]
    for mech in refused:
        assert f"UNSUPPORTED_SASL_MECHANISM: Unsupported SASL mechanism {mech}" in b.log, (mech, info)


def test_the_listener_is_chosen_from_the_file(tmp_path):
    """Without --listener the file's only SASL listener is served; with several, or an unknown
    name, or a flag the file overrides, the example refuses and names what to choose."""
    both = tmp_path / "both.properties"
    both.write_text(server_properties("http://127.0.0.1:1/jwks"))

    def example(*args):
        return subprocess.run([sys.executable, str(EXAMPLE), "--port", "0", *args],
                              capture_output=True, text=True, timeout=30)

    p = example("--config", str(both))
    assert p.returncode == 2 and "INTERNAL, EXTERNAL" in p.stderr and "--listener" in p.stderr, p.stderr
    p = example("--config", str(both), "--listener", "replication")
    assert p.returncode == 2 and "its SASL listeners are INTERNAL, EXTERNAL" in p.stderr, p.stderr
    p = example("--config", str(both), "--listener", "internal", "--max-reauth-ms", "5")
    assert p.returncode == 2 and "drop --max-reauth-ms" in p.stderr, p.stderr
    # The JWKS endpoint is fetched at start: an unreachable one fails there, naming the listener.
    p = example("--config", str(both), "--listener", "EXTERNAL")
    assert p.returncode == 1 and "listener EXTERNAL" in p.stderr, p.stderr
    gssapi = tmp_path / "gssapi.properties"
    gssapi.write_text("listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=GSSAPI\nsasl.kerberos.service.name=kafka\n"
                      "listener.name.sasl_plaintext.gssapi.sasl.jaas.config="
                      "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
                      'keyTab="/k/kafka.keytab" principal="kafka/broker@EXAMPLE.COM";\n')
    p = example("--config", str(gssapi))
    assert p.returncode == 1 and "GSSAPI" in p.stderr, p.stderr

    # The only SASL listener, by default.
    one = tmp_path / "one.properties"
    one.write_text("listeners=SASL_PLAINTEXT://:9092,PLAINTEXT://:9093\nsasl.enabled.mechanisms=PLAIN\n"
                   f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN} required user_bob=\"b\";\n")
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--port", "0", "--config", str(one)],
                            stdout=subprocess.PIPE, text=True)
    try:
        int(proc.stdout.readline())
        assert "listener SASL_PLAINTEXT of" in proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0


def test_the_example_listens_where_the_file_says(tmp_path):
    """Without --host and --port the example listens at its listener's entry in listeners."""
    import socket
    with socket.socket() as s:  # a port free now, for the file
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f = tmp_path / "at.properties"
    f.write_text(f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\nsasl.enabled.mechanisms=PLAIN\n"
                 f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN} required user_bob=\"b\";\n")
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--config", str(f)], stdout=subprocess.PIPE, text=True)
    try:
        assert int(proc.stdout.readline()) == port
        assert f"listening on 127.0.0.1:{port}" in proc.stdout.readline()
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
    bad = tmp_path / "bad.properties"
    bad.write_text("listeners=SASL_PLAINTEXT://127.0.0.1:notaport\nsasl.enabled.mechanisms=PLAIN\n")
    p = subprocess.run([sys.executable, str(EXAMPLE), "--config", str(bad)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and "listeners" in p.stderr, p.stderr
