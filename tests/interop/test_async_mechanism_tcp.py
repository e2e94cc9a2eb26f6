"""A mechanism written in Python with ``async def`` methods on both ends of a real TCP
connection on 127.0.0.1: the asyncio example broker (examples/python/kafka_server.py) offers it
next to its built-in mechanisms, and a client built on ``ksasl.aio.AsyncClientConnection``
negotiates it, authenticates, sends Metadata requests, and re-authenticates before its
credential (which bounds the session, connections.max.reauth.ms being off) expires; the key
was renewed meanwhile, and the new session runs to the new expiry. A second
client switching principals on re-authentication is refused with Kafka's text. The broker
runs on the wall clock, so this test takes a few seconds of real time.

While one connection's server mechanism awaits, the broker keeps serving other connections on
the same event loop: two logins meet in the server mechanism (each waits until the other has
arrived), which could never happen if a pending mechanism blocked the broker."""

import asyncio
import hashlib
import hmac
import struct
import sys
import time
from pathlib import Path

import pytest

import ksasl
from ksasl.aio import AsyncClientConnection

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "kafka_server.py"
sys.path.insert(0, str(EXAMPLE.parent))
import kafka_server  # noqa: E402

NAME = "X-ASYNC-HMAC"
LIFETIME_MS = 2_500  # how long each key stays valid after the broker starts
DIRECTORY_DELAY_S = 0.3  # the server mechanism's simulated user-directory latency


def now_ms() -> int:
    return int(time.time() * 1000)


class Keys:
    """The shared secret store: user -> (key, expiry)."""

    table: "dict[str, tuple[bytes, int]]" = {}


class AsyncHmacServer:
    directory_calls = 0
    # When set: (arrivals, event); each first step waits until two logins have arrived.
    rendezvous: "tuple[list[int], asyncio.Event] | None" = None

    def __init__(self) -> None:
        self.user = None
        self.challenge = b""

    async def step(self, response: bytes, now: int):
        if self.user is None:
            AsyncHmacServer.directory_calls += 1
            if AsyncHmacServer.rendezvous is not None:
                arrivals, met = AsyncHmacServer.rendezvous
                arrivals.append(now)
                if len(arrivals) == 2:
                    met.set()
                await met.wait()
            await asyncio.sleep(DIRECTORY_DELAY_S)  # the user directory
            self.user = response.decode()
            if self.user not in Keys.table:
                raise ksasl.AuthenticationError("unknown user", 301, "UNKNOWN_USER", "authentication", {})
            self.challenge = struct.pack(">q", now) + hashlib.sha256(self.user.encode()).digest()[:8]
            return ("challenge", self.challenge)
        key, expiry = Keys.table[self.user]
        good = hmac.new(key, self.challenge, hashlib.sha256).digest()
        if not hmac.compare_digest(good, response):
            raise ksasl.AuthenticationError("wrong HMAC", 300, "INVALID_CREDENTIALS", "authentication", {})
        return ("done", b"", self.user, expiry)


class AsyncHmacClient:
    who = ["alice"]

    def __init__(self) -> None:
        self.answered = False

    async def start(self, now: int):
        await asyncio.sleep(0.01)  # the local key agent
        return (self.who[0].encode(), False)

    async def step(self, challenge: bytes, now: int):
        if self.answered:
            return (None, True)
        await asyncio.sleep(0.01)
        self.answered = True
        return (hmac.new(Keys.table[self.who[0]][0], challenge, hashlib.sha256).digest(), False)


def metadata_request(corr: int) -> bytes:
    """Metadata v1 for all topics, with its length prefix."""
    body = struct.pack(">hhih", 3, 1, corr, 4) + b"test" + struct.pack(">i", -1)
    return struct.pack(">i", len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    (n,) = struct.unpack(">i", await reader.readexactly(4))
    return await reader.readexactly(n)


class Client:
    """A Kafka client of its own: ksasl's client driver over asyncio streams."""

    def __init__(self, port: int) -> None:
        registry = ksasl.MechanismRegistry()
        registry.add_client_mechanism(NAME, AsyncHmacClient)
        self.conn = AsyncClientConnection(ksasl.ClientConfig(registry, NAME))
        self.port = port
        self.events: "list[str]" = []
        self.corr = 0

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def authenticate(self) -> str:
        """Runs frames until the (re-)authentication ends; returns the last event."""
        while True:
            data = self.conn.transmit()
            if data:
                self.writer.write(data)
                await self.writer.drain()
            event, _, _ = await self.conn.handle_frame(await read_frame(self.reader))
            if event != "continue":
                self.events.append(event)
                return event

    async def metadata(self) -> None:
        assert self.conn.before_request()
        self.corr += 1
        self.writer.write(metadata_request(self.corr))
        await self.writer.drain()
        event, frame, _ = await self.conn.handle_frame(await read_frame(self.reader))
        assert event == "application" and frame is not None
        assert struct.unpack(">i", frame[:4])[0] == self.corr

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except ConnectionError:
            pass


async def scenario() -> "dict[str, object]":
    t0 = now_ms()
    Keys.table = {"alice": (b"alice-key", t0 + LIFETIME_MS), "mallory": (b"mallory-key", t0 + 60_000)}
    AsyncHmacClient.who[0] = "alice"
    server = kafka_server.KafkaServer(max_reauth_ms=0, mechanisms={NAME: AsyncHmacServer}, failed_authentication_delay_ms=0)
    port = await server.start()
    try:
        alice = Client(port)
        await alice.open()
        alice.conn.start()
        first = await alice.authenticate()
        session = alice.conn.session()
        await alice.metadata()

        # Two more connections log in at once and meet inside the server mechanism.
        other, third = Client(port), Client(port)
        await other.open()
        await third.open()
        other.conn.start()
        third.conn.start()
        AsyncHmacServer.rendezvous = ([], asyncio.Event())
        started = time.monotonic()
        both = await asyncio.gather(other.authenticate(), third.authenticate())
        one_login_s = time.monotonic() - started
        AsyncHmacServer.rendezvous = None
        await third.close()

        # The key service renews alice's key; she re-authenticates when the client's schedule
        # says so (85-95 % of the session), and the new session runs to the new expiry.
        Keys.table["alice"] = (b"alice-key", t0 + 60_000)
        due = alice.conn.next_deadline()
        await asyncio.sleep(max(0, due - now_ms()) / 1000)
        assert alice.conn.handle_timeout()
        second = await alice.authenticate()
        await alice.metadata()
        after = alice.conn.session()

        # The second client switches to mallory for its re-authentication: refused.
        AsyncHmacClient.who[0] = "mallory"
        assert other.conn.start_reauthentication()
        with pytest.raises(ksasl.AuthenticationError) as refused:
            await other.authenticate()
        await alice.close()
        await other.close()
        await asyncio.sleep(0.1)
        return {
            "t0": t0,
            "first": first,
            "both": both,
            "session": session,
            "second": second,
            "after": after,
            "one_login_s": one_login_s,
            "refused": str(refused.value),
            "stats": [c for c in server.connections if c.mechanism == NAME],
            "metrics": server.metrics(),
        }
    finally:
        await server.stop()


def test_async_mechanism_over_tcp_authenticates_and_reauthenticates():
    # A broker blocked by a pending mechanism would never let the two logins meet: the
    # time limit turns that into a failure.
    r = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert r["first"] == "authenticated"
    assert r["second"] == "reauthenticated"
    assert r["both"] == ["authenticated", "authenticated"]
    # The key's expiry bounds the session: the broker's lifetime, as the client saw it.
    s = r["session"]
    assert 0 < s["lifetime_ms"] <= LIFETIME_MS
    assert s["expiry_ms"] <= r["t0"] + LIFETIME_MS + 100
    # The re-authentication's session ends when the renewed key does.
    assert 55_000 <= r["after"]["lifetime_ms"] <= 60_000 - LIFETIME_MS * 0.85 + 100
    # The concurrent logins each awaited the directory.
    assert r["one_login_s"] >= DIRECTORY_DELAY_S
    assert "Cannot change principals during re-authentication from User.alice: User.mallory" in r["refused"]
    alice = r["stats"][0]
    assert alice.principal == "User:alice" and alice.reauthentications == 1
    assert alice.requests.get(3) == 2  # both Metadata requests answered
    assert r["metrics"]["successful-reauthentication-total"] == 1
    assert r["metrics"]["failed-reauthentication-total"] == 1
