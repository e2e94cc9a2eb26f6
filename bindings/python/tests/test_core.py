"""The Python binding over the core: vectors, every mechanism, errors, callbacks, the pull
form, and the GIL released around PBKDF2."""

import json
import os
import threading
import time

import pytest

import ksasl
from ksasl import (
    AuthenticationError,
    ClientExchange,
    CredentialError,
    CredentialStore,
    KsaslError,
    MechanismRegistry,
    MisuseError,
    ProtocolError,
    ServerExchange,
)

HERE = os.path.dirname(__file__)
VECTORS = os.path.join(HERE, "..", "..", "..", "tests", "vectors", "scram.json")
NOW = 1_800_000_000_000


def run(client: ClientExchange, server: ServerExchange):
    """Runs an exchange in memory; returns the server's outcome."""
    msg, done = client.start(NOW)
    while True:
        status, reply = server.step(msg or b"", NOW)
        if status == "done":
            if not done:
                last, done = client.step(reply or b"", NOW)
                assert done and last is None
            return server.outcome()
        assert status == "challenge", status
        msg, done = client.step(reply, NOW)


@pytest.fixture
def store():
    s = CredentialStore()
    s.add_user("alice", "alice-secret")
    return s


def registries(store, user="alice", password="alice-secret"):
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    clients = MechanismRegistry()
    clients.add_password_clients(user, password)
    return clients, servers


def test_version():
    assert ksasl.__version__.count(".") == 2


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_every_mechanism(store, mech):
    clients, servers = registries(store)
    out = run(ClientExchange(clients, mech), ServerExchange(servers, mech))
    assert out["principal"] == "User:alice"
    assert out["mechanism"] == mech
    assert out["credential_expiry_ms"] is None
    assert not out["token_authenticated"]


def test_shared_vectors_replayed_on_the_server():
    with open(VECTORS) as f:
        vectors = json.load(f)["vectors"]
    for v in vectors:
        cred = v.get("kafka_credential") or (
            f"salt={v['salt_b64']},stored_key={v['stored_key_b64']},server_key={v['server_key_b64']},iterations={v['iterations']}"
        )
        store = CredentialStore()
        clients = MechanismRegistry()
        if v["token_auth"]:
            store.set_token(v["username"], v["mechanism"], cred, "owner", NOW + 60_000)
            clients.add_token_clients(v["username"], v["password"])
        else:
            store.set_scram(v["username"], v["mechanism"], cred)
            clients.add_password_clients(v["username"], v["password"])
        servers = MechanismRegistry()
        servers.add_password_servers(store)
        out = run(ClientExchange(clients, v["mechanism"]), ServerExchange(servers, v["mechanism"]))
        if v["token_auth"]:
            assert out["principal"] == "User:owner" and out["token_authenticated"]
            assert out["credential_expiry_ms"] == NOW + 60_000
            assert out["extensions"] == {"tokenauth": "true"}
        else:
            assert out["principal"] == "User:user"


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_password_raises_with_code(store, mech):
    clients, servers = registries(store, password="nope")
    server = ServerExchange(servers, mech)
    with pytest.raises(AuthenticationError) as e:
        run(ClientExchange(clients, mech), server)
    assert e.value.code == 300 and e.value.name == "INVALID_CREDENTIALS" and e.value.kind == "authentication"
    assert isinstance(e.value, KsaslError)
    assert "nope" not in str(e.value)
    if mech == "PLAIN":
        assert server.client_message == "Authentication failed: Invalid username or password"
    else:
        assert server.client_message.endswith(f"invalid credentials with SASL mechanism {mech}")


def test_error_classes():
    with pytest.raises(MisuseError) as e:
        ClientExchange(MechanismRegistry(), "GSSAPI")
    assert isinstance(e.value, ValueError) and e.value.code == 104
    with pytest.raises(CredentialError) as e:
        CredentialStore().add_user("a", "b", iterations=100)
    assert e.value.name == "CREDENTIAL_ITERATIONS_TOO_LOW"
    with pytest.raises(CredentialError):
        CredentialStore().set_scram("a", "SCRAM-SHA-256", "salt=!!")
    with pytest.raises(MisuseError):
        CredentialStore().set_scram("a", "PLAIN", "x")
    clients, servers = registries(CredentialStore())
    s = ServerExchange(servers, "SCRAM-SHA-256")
    with pytest.raises(ProtocolError) as e:
        s.step(b"n,,n=alice")
    assert e.value.name == "MALFORMED_MESSAGE"
    with pytest.raises(MisuseError) as e:
        s.step(b"n,,n=alice,r=abc")
    assert e.value.name == "STEP_AFTER_FAILURE"
    c = ClientExchange(clients, "SCRAM-SHA-256")
    with pytest.raises(MisuseError):
        c.step(b"r=x")  # before start
    c.start()
    with pytest.raises(AuthenticationError) as e:
        c.server_failed("Authentication failed: go away")
    assert e.value.name == "SERVER_REJECTED_AUTHENTICATION"
    assert e.value.details["server_message"] == "Authentication failed: go away"


def test_credential_callback_forms():
    seen = []

    def lookup(mechanism, username, token_auth):
        seen.append((mechanism, username, token_auth))
        return {"alice": "alice-secret"}.get(username)

    servers = MechanismRegistry()
    servers.add_password_servers(lookup)
    for mech in ["PLAIN", "SCRAM-SHA-512"]:
        clients = MechanismRegistry()
        clients.add_password_clients("alice", "alice-secret")
        assert run(ClientExchange(clients, mech), ServerExchange(servers, mech))["principal"] == "User:alice"
        clients = MechanismRegistry()
        clients.add_password_clients("mallory", "x")
        with pytest.raises(AuthenticationError) as e:
            run(ClientExchange(clients, mech), ServerExchange(servers, mech))
        assert e.value.name == "UNKNOWN_USER"
    assert ("PLAIN", "alice", False) in seen


def test_an_exception_in_the_callback_reaches_the_caller_unchanged():
    class Boom(RuntimeError):
        pass

    boom = Boom("database down")

    def lookup(mechanism, username, token_auth):
        raise boom

    servers = MechanismRegistry()
    servers.add_password_servers(lookup)
    clients = MechanismRegistry()
    clients.add_password_clients("alice", "alice-secret")
    server = ServerExchange(servers, "SCRAM-SHA-256")
    with pytest.raises(Boom) as e:
        run(ClientExchange(clients, "SCRAM-SHA-256"), server)
    assert e.value is boom
    assert server.client_message.startswith("Authentication failed during authentication")


def test_pull_form_with_every_answer_kind():
    servers = MechanismRegistry()
    servers.add_password_servers()
    for answer in ["alice-secret", ("password", "alice-secret", NOW + 5000), None, ("unavailable", "db down")]:
        clients = MechanismRegistry()
        clients.add_password_clients("alice", "alice-secret")
        c, s = ClientExchange(clients, "SCRAM-SHA-256"), ServerExchange(servers, "SCRAM-SHA-256")
        first, _ = c.start(NOW)
        status, _ = s.step(first, NOW)
        assert status == "need_credential"
        assert s.host_task() == ("credential", {"mechanism": "SCRAM-SHA-256", "username": "alice", "token_authenticated": False})
        if answer is None or answer[0] == "unavailable":
            with pytest.raises(KsaslError) as e:
                s.provide_credential(answer, NOW)
            assert e.value.name in ("UNKNOWN_USER", "CREDENTIAL_LOOKUP_FAILED")
            assert "db down" not in s.client_message
            continue
        status, challenge = s.provide_credential(answer, NOW)
        assert status == "challenge"
        final, _ = c.step(challenge, NOW)
        status, verifier = s.step(final, NOW)
        assert status == "done"
        c.step(verifier, NOW)
        if isinstance(answer, tuple):
            assert s.outcome()["credential_expiry_ms"] == NOW + 5000
    with pytest.raises(ValueError):
        s.provide_credential(("later",), NOW)


def test_scram_logins_release_the_gil():
    """While one thread logs in with SCRAM and fresh client credentials (the client derives its
    keys: a PBKDF2 inside the native step), another Python thread keeps running: the GIL is
    released during the native work. The other thread's progress is counted only while a
    login's PBKDF2 step runs, instead of timing anything, so a loaded machine cannot make it
    fail (a held GIL gives the other thread no turn at all during the step)."""
    store = CredentialStore()
    store.add_user("alice", "alice-secret", iterations=16384)  # the client's iteration cap
    servers = MechanismRegistry()
    servers.add_password_servers(store)

    in_step, done = threading.Event(), threading.Event()
    ticks = [0]

    def logins():
        for _ in range(20):
            clients = MechanismRegistry()
            clients.add_password_clients("alice", "alice-secret")  # fresh: no cached keys
            c, s = ClientExchange(clients, "SCRAM-SHA-512"), ServerExchange(servers, "SCRAM-SHA-512")
            first, _ = c.start(NOW)
            _, server_first = s.step(first, NOW)
            in_step.set()
            final, _ = c.step(server_first, NOW)  # 16384 PBKDF2 rounds
            in_step.clear()
            status, last = s.step(final, NOW)
            assert status == "done" and c.step(last, NOW) == (None, True)
        done.set()

    def ticker():
        while not done.is_set():
            if in_step.is_set():
                ticks[0] += 1
            time.sleep(0)  # yields; with the GIL held elsewhere this line would block

    threads = [threading.Thread(target=logins), threading.Thread(target=ticker)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Twenty PBKDF2 steps of 16384 rounds: a released GIL lets the ticker loop many times
    # during them; a held one would leave it a tick or two per login at most.
    assert ticks[0] > 100, ticks
