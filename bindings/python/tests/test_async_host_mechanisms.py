"""Mechanisms written in Python with ``async def`` methods (a call to a token service, a
signer): the Rust core stops with "pending", the coroutine is awaited on the event loop, and
the exchange resumes with its result. The same HMAC challenge-response as in
test_host_mechanisms.py, negotiated among the built-ins, authenticating, re-authenticating
with its credential expiry bounding the session, refused on a principal change; an exception
raised by a coroutine, a bad result, or a resume at the wrong time fail with the library's
errors and leave the drivers in a defined state. Time is virtual (now_ms passed in)."""

import asyncio
import hashlib
import hmac
import struct

import pytest

import ksasl
from ksasl import ClientConfig, ClientConnection, CredentialStore, MechanismRegistry, ServerConfig, ServerConnection
from ksasl.aio import AsyncClientConnection, AsyncServerConnection

T0 = 1_800_000_000_000
NAME = "X-ASYNC-HMAC"
KEYS = {"alice": (b"alice-key", T0 + 5_000), "mallory": (b"mallory-key", T0 + 60_000)}


def frames(data):
    out = []
    while data:
        (n,) = struct.unpack(">i", data[:4])
        out.append(data[4 : 4 + n])
        data = data[4 + n :]
    return out


class AsyncHmacClient:
    """Fetches its key from a (simulated) remote key service on every answer."""

    user = ["alice"]
    fault = [None]
    calls = []

    def __init__(self):
        self.answered = False

    async def start(self, now_ms):
        await asyncio.sleep(0)
        self.calls.append("start")
        return (self.user[0].encode(), False)

    async def step(self, challenge, now_ms):
        await asyncio.sleep(0)  # the key service
        self.calls.append("step")
        if self.fault[0] == "raise":
            raise ConnectionError("key service unreachable")
        if self.answered:
            return (None, True)
        self.answered = True
        return (hmac.new(KEYS[self.user[0]][0], challenge, hashlib.sha256).digest(), False)


class AsyncHmacServer:
    fault = [None]

    def __init__(self):
        self.user = None
        self.challenge = b""

    async def step(self, response, now_ms):
        await asyncio.sleep(0)  # the user directory
        if self.fault[0] == "garbage":
            return "not a tuple"
        if self.fault[0] == "raise":
            raise RuntimeError("directory timeout")
        if self.user is None:
            self.user = response.decode()
            if self.user not in KEYS:
                raise ksasl.AuthenticationError("unknown user", 301, "UNKNOWN_USER", "authentication", {})
            self.challenge = struct.pack(">q", now_ms)
            return ("challenge", self.challenge)
        key, expiry = KEYS[self.user]
        if not hmac.compare_digest(hmac.new(key, self.challenge, hashlib.sha256).digest(), response):
            raise ksasl.AuthenticationError("wrong HMAC", 300, "INVALID_CREDENTIALS", "authentication", {})
        return ("done", b"", self.user, expiry)


@pytest.fixture(autouse=True)
def reset():
    AsyncHmacClient.user[0] = "alice"
    AsyncHmacClient.fault[0] = None
    AsyncHmacClient.calls.clear()
    AsyncHmacServer.fault[0] = None


def configs(max_reauth_ms=0):
    store = CredentialStore()
    store.add_user("bob", "bob-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    servers.add_server_mechanism(NAME, AsyncHmacServer)
    assert NAME in servers.server_mechanisms() and "SCRAM-SHA-512" in servers.server_mechanisms()
    clients = MechanismRegistry()
    clients.add_client_mechanism(NAME, AsyncHmacClient)
    return ClientConfig(clients, NAME), ServerConfig(servers, max_reauth_ms=max_reauth_ms)


async def apump(client, server, now):
    """Moves frames both ways until quiet; returns the client's events."""
    events, data = [], client.transmit()
    while data:
        out = b""
        for f in frames(data):
            if server.ready:
                assert server.gate(struct.unpack(">h", f[:2])[0], now) == "begin_reauthentication"
            action, o, _, _ = await server.handle_frame(f, now)
            assert action != "pending"
            out += o
        for f in frames(out):
            ev, _, _ = await client.handle_frame(f, now)
            events.append(ev)
        data = client.transmit()
    return events


def test_async_mechanisms_authenticate_and_reauthenticate():
    async def main():
        cc, sc = configs()
        client, server = AsyncClientConnection(cc), AsyncServerConnection(sc)
        client.start(T0)
        first = await apump(client, server, T0)
        s = server.session()
        due = client.next_deadline()
        assert client.handle_timeout(due)
        second = await apump(client, server, due)
        return first, s, due, second, server.session()

    first, s, due, second, s2 = asyncio.run(main())
    assert first[-1] == "authenticated"
    assert s["principal"] == "User:alice" and s["mechanism"] == NAME
    # connections.max.reauth.ms is off: the key's expiry alone bounds the session.
    assert s["lifetime_ms"] == 5_000 and s["credential_expiry_ms"] == T0 + 5_000
    assert T0 + 4_250 <= due <= T0 + 4_750
    assert second[-1] == "reauthenticated"
    assert s2["expiry_ms"] == T0 + 5_000
    # Every mechanism call went through a coroutine: start, the HMAC, the server's last word.
    assert AsyncHmacClient.calls == ["start", "step", "step"] * 2


def test_async_principal_change_is_refused():
    async def main():
        cc, sc = configs(max_reauth_ms=3_000)
        client, server = AsyncClientConnection(cc), AsyncServerConnection(sc)
        client.start(T0)
        await apump(client, server, T0)
        AsyncHmacClient.user[0] = "mallory"
        due = client.next_deadline()
        client.handle_timeout(due)
        await apump(client, server, due)

    with pytest.raises(ksasl.AuthenticationError) as e:
        asyncio.run(main())
    assert "Cannot change principals during re-authentication from User.alice: User.mallory" in str(e.value)


async def run_until_error(client, server, now):
    actions = []
    data = client.transmit()
    while data:
        out = b""
        for f in frames(data):
            action, o, _, _ = await server.handle_frame(f, now)
            actions.append(action)
            out += o
        for f in frames(out):
            try:
                await client.handle_frame(f, now)
            except ksasl.KsaslError as e:
                return actions, e
        data = client.transmit()
    return actions, None


def test_a_raising_client_coroutine_fails_the_client():
    AsyncHmacClient.fault[0] = "raise"

    async def main():
        cc, sc = configs()
        client, server = AsyncClientConnection(cc), AsyncServerConnection(sc)
        client.start(T0)
        return client, server, await run_until_error(client, server, T0)

    client, server, (_, error) = asyncio.run(main())
    assert isinstance(error, ksasl.AuthenticationError)
    assert error.name == "HOST_MECHANISM_FAILED"
    assert "key service unreachable" in str(error)
    assert server.session() is None
    # Failed, not stuck: nothing is pending, and the connection refuses to go on.
    assert client.pending_work() is None
    with pytest.raises(ksasl.KsaslError):
        client.resume((None, True), T0)


@pytest.mark.parametrize("fault,code", [("raise", "HOST_MECHANISM_FAILED"), ("garbage", "HOST_MECHANISM_FAILED")])
def test_a_failing_server_coroutine_fails_the_exchange(fault, code):
    AsyncHmacServer.fault[0] = fault

    async def main():
        cc, sc = configs()
        client, server = AsyncClientConnection(cc), AsyncServerConnection(sc)
        client.start(T0)
        return server, await run_until_error(client, server, T0)

    server, (actions, error) = asyncio.run(main())
    assert actions[-1] == "fail_at"
    # The client sees Kafka's generic text, never the host's.
    assert isinstance(error, ksasl.AuthenticationError)
    assert "directory timeout" not in str(error)
    assert server.session() is None and not server.ready


def test_the_sync_drivers_expose_pending_work():
    AsyncHmacClient.user[0] = "eve"  # no key: the server coroutine raises UNKNOWN_USER

    # Drive the server by hand to see the raw "pending" action and the resumed failure.
    cc, sc = configs()
    client, server = ClientConnection(cc), ServerConnection(sc)
    client.start(T0)
    for _ in range(2):  # ApiVersions, then SaslHandshake
        (request,) = frames(client.transmit())
        action, out, _, _ = server.handle_frame(request, T0)
        assert action == "continue"
        ev, _, _ = client.handle_frame(frames(out)[0], T0)
    assert ev == "pending"  # the client's async start()
    work = client.pending_work()
    assert asyncio.iscoroutine(work)
    ev, _, _ = client.resume(asyncio.run(work), T0)
    assert ev == "continue"
    (token,) = frames(client.transmit())
    action, out, _, _ = server.handle_frame(token, T0)
    assert action == "pending" and out == b""
    # A frame while the server mechanism works: refused, and the connection must close.
    assert server.handle_frame(token, T0)[0] == "close_now"
    kind, work = server.host_task()
    assert kind == "mechanism"

    async def finish():
        try:
            return await work
        except Exception as e:
            return e

    action, out, deadline, error = server.resume(asyncio.run(finish()), T0)
    assert action == "fail_at" and deadline == T0 + 100
    with pytest.raises(ksasl.AuthenticationError) as e:
        client.handle_frame(frames(out)[0], T0)
    assert "Authentication failed" in str(e.value)
    assert server.host_task() is None
    assert sc.metrics(T0)["failed-authentication-total"] == 1


def test_a_ksasl_error_from_a_coroutine_keeps_its_code():
    servers = MechanismRegistry()
    servers.add_server_mechanism(NAME, AsyncHmacServer)
    s = ksasl.ServerExchange(servers, NAME)
    assert s.step(b"eve", T0) == ("pending", None)

    async def finish(work):
        try:
            return await work
        except Exception as e:
            return e

    with pytest.raises(ksasl.AuthenticationError) as e:
        s.resume(asyncio.run(finish(s.host_task()[1])), T0)
    assert e.value.name == "UNKNOWN_USER" and e.value.code == 301
    assert "Authentication failed" in s.client_message


def test_resume_at_the_wrong_time_is_refused_and_changes_nothing():
    cc, sc = configs()
    client, server = ClientConnection(cc), ServerConnection(sc)
    with pytest.raises(ksasl.MisuseError) as e:
        client.resume((b"x", False), T0)
    assert e.value.name == "WRONG_STATE"
    with pytest.raises(ksasl.MisuseError):
        server.resume(("challenge", b"x"), T0)
    assert client.pending_work() is None and server.host_task() is None

    # Still usable afterwards.
    async def main():
        c, s = AsyncClientConnection(cc), AsyncServerConnection(sc)
        c.conn, s.conn = client, server
        c.start(T0)
        return await apump(c, s, T0)

    assert asyncio.run(main())[-1] == "authenticated"


def test_low_level_authenticators_wait_for_coroutines():
    cc, sc = configs()
    servers = MechanismRegistry()
    servers.add_server_mechanism(NAME, AsyncHmacServer)
    clients = MechanismRegistry()
    clients.add_client_mechanism(NAME, AsyncHmacClient)
    c, s = ksasl.ClientExchange(clients, NAME), ksasl.ServerExchange(servers, NAME)

    async def settle(work):
        return await work

    assert c.start(T0) is None  # pending
    first = c.resume(asyncio.run(settle(c.pending_work())))
    assert first == (b"alice", False)
    assert s.step(first[0], T0) == ("pending", None)
    # Another message before the coroutine finished: refused, the exchange still waits.
    with pytest.raises(ksasl.MisuseError):
        s.step(b"alice", T0)
    status, challenge = s.resume(asyncio.run(settle(s.host_task()[1])), T0)
    assert status == "challenge"
    assert c.step(challenge, T0) is None
    proof = c.resume(asyncio.run(settle(c.pending_work())))
    assert s.step(proof[0], T0) == ("pending", None)
    status, last = s.resume(asyncio.run(settle(s.host_task()[1])), T0)
    assert status == "done"
    assert s.outcome()["principal"] == "User:alice"
    assert s.outcome()["credential_expiry_ms"] == T0 + 5_000
    with pytest.raises(ksasl.MisuseError):
        s.resume(("done", b"", "alice", None), T0)
