"""OAUTHBEARER with a real identity provider, from clients ksasl did not write: Keycloak
(tests/oidc/keycloak.py, over HTTPS with a CA made for the run) issues 12-second tokens, and
the example broker (examples/python/kafka_server.py, connections.max.reauth.ms = 5000)
validates them against Keycloak's JWKS endpoint with ksasl.JwksEndpoint. The adapters fetch a
due token on the re-authentication's path (an HTTPS round trip to Keycloak), and Kafka's
clients re-authenticate at 85-95 % of the session: 5-second sessions leave 250 ms or more for
it, where 3-second ones left a loaded 2-core machine too little once.

A session also ends with its token (Kafka's rule: the lifetime is the smaller of
connections.max.reauth.ms and the token's remaining life). On Kafka's default schedule
(sasl.login.refresh.window.factor 0.8) a 12-second token is used until about 2 s are left,
so sessions of 2 s, whose last 5 % (100 ms) a produce request sent just before the client's
re-authentication point can miss on a loaded machine: the broker then closes the connection
(once in CI). The ksasl adapters' refreshers here use window factor 0.5, so every token they
hand out has about 6 s left and every session gets its full 5 s; librdkafka refreshes at 80 %
on its own schedule (about 2.4 s left).

Three clients produce at once, each against its own broker, while Keycloak rotates its signing
key (a new key with a higher priority, then, once every token of the old one has expired, the
old key disabled):

* confluent-kafka with librdkafka's own OIDC login (``sasl.oauthbearer.method=oidc``);
* kafka-python with ``ksasl.adapters.TokenProvider(ksasl.OidcLogin(...))``;
* aiokafka with ``ksasl.adapters.AsyncTokenProvider(ksasl.OidcLogin(...))`` and ksasl.aiokafka.

Every record must be acknowledged, every producing connection must re-authenticate through the
run, the first token of the new key must be held for one JWKS refetch rather than refused, and
nothing may be refused or killed. Kafka's Java client does the same against the Java example
server (examples/java, OidcClientTest).

A second test stops the provider in the middle of a run (a TCP relay in front of Keycloak is
closed): the refresher keeps the current token until it expires and counts the failures, then
has none to give, and gets a new one as soon as the provider is back.
"""

import asyncio
import base64
import json
import os
import pathlib
import socket
import sys
import threading
import time
import warnings

import pytest

import ksasl
from ksasl.adapters import AsyncTokenProvider, TokenProvider

import confluent_kafka

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka

import aiokafka

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "python"))
sys.path.insert(0, str(ROOT / "tests" / "oidc"))
import kafka_server  # noqa: E402
from keycloak import Keycloak  # noqa: E402

TOKEN_LIFESPAN_S = 12
LIFETIME_MS = 5000  # connections.max.reauth.ms (see the module docstring)
RUN_S = 32.0
ROTATE_AT_S = 7.0
DISABLE_AT_S = ROTATE_AT_S + TOKEN_LIFESPAN_S + 3.0  # every old-key token has expired
TOPIC = "oidc-test"


def now_ms() -> int:
    return int(time.time() * 1000)


def kid(token: str) -> str:
    head = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"]


@pytest.fixture(scope="module")
def kc():
    with Keycloak(token_lifespan_s=TOKEN_LIFESPAN_S) as k:
        yield k


class Run:
    """One client against its own example broker validating against the provider's JWKS."""

    def __init__(self, name: str, idp: dict) -> None:
        self.name, self.idp = name, idp
        self.endpoint = kafka_server.jwks_endpoint(idp["jwks_uri"], idp["issuer"], idp["audience"],
                                                   idp["ca_pem"])
        self.server = kafka_server.KafkaServer(max_reauth_ms=LIFETIME_MS,
                                               oauthbearer_validator=self.endpoint)
        self.produced = self.acked = 0
        self.errors: list = []
        self.kids: list = []  # the signing key of each token the ksasl adapters fetched
        self.exc = None

    def login(self):
        """The adapters' token source: an OidcLogin, recording each token's key id."""
        c = self.idp["secret_client"]
        login = ksasl.OidcLogin(self.idp["token_endpoint"], client_id=c["id"],
                                client_secret=c["secret"], ca_file=self.idp["ca_pem"])

        def fetch():
            t = login()
            self.kids.append(kid(t[0]))
            return t
        return fetch

    @property
    def connections(self):
        return [c for c in self.server.connections if c.authentications]


def paced(step) -> None:
    start = time.monotonic()
    while time.monotonic() < start + RUN_S:
        step()


def run_confluent_kafka(r: Run, port: int) -> None:
    c = r.idp["secret_client"]
    producer = confluent_kafka.Producer({
        "bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.token.endpoint.url": r.idp["token_endpoint"],
        "sasl.oauthbearer.client.id": c["id"], "sasl.oauthbearer.client.secret": c["secret"],
        "https.ca.location": r.idp["ca_pem"],
        "enable.idempotence": False, "acks": "all", "linger.ms": 0, "message.timeout.ms": 10000,
    })

    def delivered(err, _msg):
        if err is None:
            r.acked += 1
        else:
            r.errors.append(str(err))

    def step():
        producer.produce(TOPIC, b"x", on_delivery=delivered)
        r.produced += 1
        producer.poll(0.25)

    try:
        paced(step)
        assert producer.flush(10) == 0
    finally:
        producer.close()


def run_kafka_python(r: Run, port: int) -> None:
    producer = kafka.KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=TokenProvider(r.login(), ksasl.Refresher(window_factor=0.5)),
        enable_idempotence=False, acks="all", linger_ms=0)
    futures = []

    def step():
        futures.append(producer.send(TOPIC, b"x"))
        r.produced += 1
        time.sleep(0.25)

    try:
        paced(step)
        producer.flush(10)
        for f in futures:
            if f.succeeded():
                r.acked += 1
            else:
                r.errors.append(repr(f.exception) if f.is_done else "not acknowledged")
    finally:
        producer.close(timeout=5)


def run_aiokafka(r: Run, port: int) -> None:
    import ksasl.aiokafka as ka

    async def produce():
        producer = aiokafka.AIOKafkaProducer(
            bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="OAUTHBEARER", retry_backoff_ms=100,
            sasl_oauth_token_provider=AsyncTokenProvider(r.login(),
                                                         ksasl.Refresher(window_factor=0.5)))
        await producer.start()
        try:
            end = time.monotonic() + RUN_S
            while time.monotonic() < end:
                r.produced += 1
                try:
                    await producer.send_and_wait(TOPIC, b"x")
                    r.acked += 1
                except Exception as e:
                    r.errors.append(repr(e))
                await asyncio.sleep(0.25)
        finally:
            await producer.stop()

    ka.enable()
    try:
        asyncio.run(produce())
    finally:
        ka.disable()


RUNNERS = {"confluent-kafka": run_confluent_kafka, "kafka-python": run_kafka_python,
           "aiokafka": run_aiokafka}


@pytest.fixture(scope="module")
def runs(kc):
    idp = kc.info()
    runs = {name: Run(name, idp) for name in RUNNERS}

    def go(r: Run) -> None:
        try:
            port = r.server.start_in_thread()
            try:
                RUNNERS[r.name](r, port)
            finally:
                time.sleep(0.2)
                r.server.stop_thread()
                r.endpoint.stop()
        except BaseException as e:
            r.exc = e

    keys_before = {k["kid"] for k in kc.signing_keys()}
    threads = [threading.Thread(target=go, args=(r,), name=r.name) for r in runs.values()]
    start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(max(0.0, start + ROTATE_AT_S - time.monotonic()))
    new_kid = kc.rotate_key()
    time.sleep(max(0.0, start + DISABLE_AT_S - time.monotonic()))
    kc.disable_keys_except(new_kid)
    for t in threads:
        t.join(RUN_S + 60)
        assert not t.is_alive(), f"{t.name} did not finish"
    for r in runs.values():  # shown with -s
        print(f"\n{r.name}: produced {r.produced}, acknowledged {r.acked}, errors {r.errors[:3]}, "
              f"kids {r.kids}, metrics {r.server.metrics()}")
    return runs, keys_before, new_kid


@pytest.mark.parametrize("client", list(RUNNERS))
def test_client_logs_in_at_the_provider_and_reauthenticates_through_a_key_rotation(runs, client):
    all_runs, old_kids, new_kid = runs
    r = all_runs[client]
    assert r.exc is None, repr(r.exc)
    m = r.server.metrics()
    info = f"{client}: metrics {m}, errors {r.errors[:3]}"
    assert r.produced >= RUN_S / 0.25 * 0.8 and r.errors == [] and r.acked == r.produced, info
    assert m["expired-connections-killed-count"] == 0, info
    assert m["failed-authentication-total"] == 0 and m["failed-reauthentication-total"] == 0, info
    producing = [c for c in r.connections if c.records]
    assert producing, info
    for c in producing:
        # A live connection all through the run, re-authenticated before each session ended.
        assert c.reauthentications >= RUN_S * 1000 // LIFETIME_MS - 2, (c, info)
        for (t0, lifetime, exp), (t1, _, _) in zip(c.authentications, c.authentications[1:]):
            assert t1 - t0 <= lifetime and exp is not None and t0 + lifetime <= exp, info
        # Keycloak's tokens: the principal is the service account's subject, never a name
        # the client chose; tokens were refreshed several times during the run.
        assert c.principal.startswith("User:") and c.principal != "User:alice", info
        assert len({exp for _, _, exp in c.authentications}) >= 3, info
    if r.kids:  # the ksasl adapters' tokens: both keys signed tokens, the new one last
        assert set(r.kids) & old_kids and r.kids[-1] == new_kid, (r.kids, new_kid)


def test_the_server_refuses_a_token_it_cannot_verify(kc):
    """The negative control: an unsecured token for "alice" is refused by the same server."""
    idp = kc.info()
    server = kafka_server.KafkaServer(
        max_reauth_ms=LIFETIME_MS,
        oauthbearer_validator=kafka_server.jwks_endpoint(idp["jwks_uri"], idp["issuer"],
                                                         idp["audience"], idp["ca_pem"]))
    port = server.start_in_thread()
    try:
        def fetch():
            t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=60)
            return t["token"], t["expiry_ms"], t["principal"], None
        with pytest.raises(kafka.errors.KafkaError):
            kafka.KafkaProducer(
                bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=TokenProvider(fetch),
                request_timeout_ms=3000, max_block_ms=3000, api_version=(2, 6)).send(TOPIC, b"x")
    finally:
        server.stop_thread()
    m = server.metrics()
    assert m["failed-authentication-total"] >= 1 and m["successful-authentication-total"] == 0


class Relay:
    """A TCP relay on 127.0.0.1 in front of Keycloak: ``close()`` makes the provider
    unreachable (connections refused, open ones cut), ``open()`` brings it back on the same
    port."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.port = 0
        self.listener = None
        self.socks: list = []
        self.lock = threading.Lock()

    def open(self) -> None:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        self.port, self.listener = s.getsockname()[1], s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def close(self) -> None:
        with self.lock:
            listener, self.listener, socks, self.socks = self.listener, None, self.socks, []
        if listener is not None:
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread: refused from now
            listener.close()
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                a, _ = listener.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                a.close()
                continue
            with self.lock:
                if self.listener is not listener:
                    a.close()
                    b.close()
                    return
                self.socks += [a, b]
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self._pump, args=(x, y), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def wait_for(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_provider_down_during_a_refresh(kc):
    idp = kc.info()
    relay = Relay(idp["port"])
    relay.open()
    try:
        c = idp["secret_client"]
        login = ksasl.OidcLogin(idp["token_endpoint"].replace(f":{idp['port']}/", f":{relay.port}/"),
                                client_id=c["id"], client_secret=c["secret"],
                                ca_file=idp["ca_pem"], retry_backoff_ms=50,
                                retry_backoff_max_ms=200, connect_timeout_ms=1000)
        refresher = ksasl.Refresher()
        thread = login.start(refresher)  # the first token before it returns
        try:
            first = refresher.current()
            relay.close()
            # The refresh falls due (Kafka's schedule: about 80 % of 12 s) and fails; the
            # current token stays in use until it expires.
            wait_for(lambda: refresher.failures()[0] >= 1, TOKEN_LIFESPAN_S, "a failed refresh")
            failures, reason = refresher.failures()
            # The login's own retries (sasl.login.retry.backoff.*) ran out first.
            assert "attempts in" in reason and "refused" in reason.lower(), reason
            assert refresher.current()["token"] == first["token"]
            # Past its expiry there is no token to give: current() refuses.
            time.sleep(max(0.0, (first["expiry_ms"] - now_ms()) / 1000 + 0.1))
            with pytest.raises(ksasl.KsaslError) as e:
                refresher.current()
            assert refresher.failures()[0] >= failures
            print(f"\nno token after expiry: {e.value.name}: {e.value}")
            # The provider comes back: the refresher's next retry gets a new token.
            relay.open()
            t = wait_for(lambda: _current_or_none(refresher), 15, "a token after the outage")
            assert t["token"] != first["token"] and t["expiry_ms"] > now_ms()
            assert refresher.failures()[0] == 0
        finally:
            thread.stop()
    finally:
        relay.close()


def _current_or_none(refresher):
    try:
        return refresher.current()
    except ksasl.KsaslError:
        return None
