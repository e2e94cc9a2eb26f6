"""A mechanism written in Python (an HMAC challenge-response) registered next to the built-ins:
negotiated by the server driver, authenticates, re-authenticates with its credential expiry
bounding the session, refused on a principal change; misbehaving mechanisms (raising, a bad
answer, nothing to send, talking after the end) fail with the library's errors and the host's
message."""

import hashlib
import hmac
import struct

import pytest

import ksasl
from ksasl import ClientConfig, ClientConnection, CredentialStore, MechanismRegistry, ServerConfig, ServerConnection

T0 = 1_800_000_000_000
NAME = "X-HMAC-CHALLENGE"
KEYS = {"alice": (b"alice-key", T0 + 5_000), "mallory": (b"mallory-key", T0 + 60_000)}


def frames(data):
    out = []
    while data:
        (n,) = struct.unpack(">i", data[:4])
        out.append(data[4 : 4 + n])
        data = data[4 + n :]
    return out


class HmacClient:
    user = ["alice"]  # shared by the tests to switch principals
    fault = [None]

    def __init__(self):
        self.answered = False

    def start(self, now_ms):
        if self.fault[0] == "nothing":
            return (None, False)
        if self.fault[0] == "raise":
            raise RuntimeError("token service unreachable")
        return (self.user[0].encode(), False)

    def step(self, challenge, now_ms):
        if self.answered:
            return (b"more", False) if self.fault[0] == "after-end" else (None, True)
        self.answered = True
        key = KEYS[self.user[0]][0]
        return (hmac.new(key, challenge, hashlib.sha256).digest(), False)


class HmacServer:
    fault = [None]

    def __init__(self):
        self.user = None
        self.challenge = b""

    def step(self, response, now_ms):
        if self.fault[0] == "garbage":
            return "yes please"
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
    HmacClient.user[0] = "alice"
    HmacClient.fault[0] = None
    HmacServer.fault[0] = None


def setup(max_reauth_ms=0):
    store = CredentialStore()
    store.add_user("bob", "bob-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    servers.add_server_mechanism(NAME, HmacServer)
    clients = MechanismRegistry()
    clients.add_client_mechanism(NAME, HmacClient)
    assert NAME in servers.server_mechanisms() and "SCRAM-SHA-256" in servers.server_mechanisms()
    server_config = ServerConfig(servers, max_reauth_ms=max_reauth_ms)
    return ClientConnection(ClientConfig(clients, NAME)), ServerConnection(server_config)


def pump(client, server, now):
    events, data = [], client.transmit()
    while data:
        out = b""
        for f in frames(data):
            if server.ready:
                assert server.gate(struct.unpack(">h", f[:2])[0], now) == "begin_reauthentication"
            action, o, _, _ = server.handle_frame(f, now)
            out += o
            events.append(action)
        for f in frames(out):
            ev, _, _ = client.handle_frame(f, now)
            events.append(ev)
        data = client.transmit()
    return events


def test_python_mechanism_authenticates_and_reauthenticates():
    client, server = setup()
    client.start(T0)
    assert "authenticated" in pump(client, server, T0)
    s = server.session()
    assert s["principal"] == "User:alice" and s["mechanism"] == NAME
    assert s["lifetime_ms"] == 5_000 and s["credential_expiry_ms"] == T0 + 5_000
    due = client.next_deadline()
    assert T0 + 4_250 <= due <= T0 + 4_750
    assert client.handle_timeout(due)
    assert "reauthenticated" in pump(client, server, due)


def test_principal_change_is_refused():
    client, server = setup(max_reauth_ms=3_000)
    client.start(T0)
    pump(client, server, T0)
    HmacClient.user[0] = "mallory"
    due = client.next_deadline()
    client.handle_timeout(due)
    with pytest.raises(ksasl.AuthenticationError) as e:
        pump(client, server, due)
    assert "Cannot change principals during re-authentication from User.alice: User.mallory" in str(e.value)


def pump_collect(client, server, now):
    """Like pump, but records the server's actions and the client's failure."""
    actions, error, data = [], None, client.transmit()
    while data and error is None:
        out = b""
        for f in frames(data):
            action, o, _, _ = server.handle_frame(f, now)
            out += o
            actions.append(action)
        for f in frames(out):
            try:
                client.handle_frame(f, now)
            except ksasl.KsaslError as e:
                error = e
                break
        data = client.transmit()
    return actions, error


@pytest.mark.parametrize("fault", ["raise", "nothing"])
def test_misbehaving_client_mechanism(fault):
    HmacClient.fault[0] = fault
    client, server = setup()
    client.start(T0)
    _, error = pump_collect(client, server, T0)
    assert isinstance(error, ksasl.AuthenticationError), error
    assert error.name == "HOST_MECHANISM_FAILED"
    assert ("token service unreachable" if fault == "raise" else "no message") in str(error)
    assert server.session() is None
    # The client connection is failed, not stuck.
    with pytest.raises(ksasl.KsaslError):
        client.start(T0)


def test_misbehaving_server_mechanism():
    HmacServer.fault[0] = "garbage"
    client, server = setup()
    client.start(T0)
    actions, error = pump_collect(client, server, T0)
    assert actions[-1] == "fail_at"
    assert isinstance(error, ksasl.AuthenticationError)
    assert server.session() is None and not server.ready


def test_client_talking_after_the_end_fails():
    # As with Kafka's client, a client mechanism that is not complete after the server's last
    # message sends another SaslAuthenticate; the authenticated server answers it with
    # ILLEGAL_SASL_STATE (as Kafka's request handlers do), and the client fails.
    HmacClient.fault[0] = "after-end"
    client, server = setup()
    client.start(T0)
    data, error = client.transmit(), None
    while data and error is None:
        out = b""
        for f in frames(data):
            if server.ready:
                assert server.gate(struct.unpack(">h", f[:2])[0], T0) == "process"
                out += ServerConnection.illegal_state_response(f)
            else:
                out += server.handle_frame(f, T0)[1]
        for f in frames(out):
            try:
                client.handle_frame(f, T0)
            except ksasl.KsaslError as e:
                error = e
        data = client.transmit()
    assert isinstance(error, ksasl.KsaslError), error
    assert "ILLEGAL_SASL_STATE" in str(error) or error.code == 215, error


def test_an_unknown_user_is_refused_with_kafkas_text():
    HmacClient.user[0] = "eve"  # no key: the server mechanism raises UNKNOWN_USER
    client, server = setup()
    client.start(T0)
    actions, error = pump_collect(client, server, T0)
    assert actions[-1] == "fail_at"
    assert isinstance(error, ksasl.AuthenticationError)
    assert server.session() is None
