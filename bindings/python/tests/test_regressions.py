"""Regression tests for the Python defects of issue 16, one test (or group) per defect."""

import json
import os
import struct
import sys
import threading
import time

import pytest

import ksasl
from ksasl import (
    ClientConfig,
    ClientConnection,
    ClientExchange,
    CredentialStore,
    JwksValidator,
    KsaslError,
    MechanismRegistry,
    Refresher,
    ServerConfig,
    ServerConnection,
    ServerExchange,
)

T0 = 1_800_000_000_000
HERE = os.path.dirname(__file__)


def frames(data):
    while data:
        (n,) = struct.unpack(">i", data[:4])
        yield data[4 : 4 + n]
        data = data[4 + n :]


def drive(client, server, now):
    """Moves frames until quiet or the client fails; returns the server's outputs, the
    client's events and the client's error."""
    outputs, events, data = [], [], client.transmit()
    while data:
        back = b""
        for f in frames(data):
            out = server.handle_frame(f, now)
            outputs.append(out)
            back += out[1]
        for f in frames(back):
            try:
                events.append(client.handle_frame(f, now))
            except KsaslError as e:
                return outputs, events, e
        data = client.transmit()
    return outputs, events, None


# (a) One exception slot was shared by every server of a registry: under threads, a
# callback's exception could reach another connection's caller.


def test_each_caller_gets_exactly_its_own_callback_exception():
    """8 threads log in through one registry whose lookup raises for half of the logins (and
    answers the others, whose SCRAM credential is then derived without the GIL, so the threads
    interleave): each raising login's caller gets its own exception, no other caller any."""

    class Boom(Exception):
        pass

    def lookup(mechanism, username, token_authenticated):
        if username.endswith("-ok"):
            return "secret"
        raise Boom(username)

    servers = MechanismRegistry()
    servers.add_password_servers(lookup)
    config = ServerConfig(servers)
    start = threading.Barrier(8)
    seen = {}

    def run(i):
        configs = []
        for user in (f"user{i}-ok", f"user{i}"):
            clients = MechanismRegistry()
            clients.add_password_clients(user, "secret")
            configs.append(ClientConfig(clients, "SCRAM-SHA-256"))
        got = []
        start.wait()
        for n in range(200):
            client, server = ClientConnection(configs[n % 2]), ServerConnection(config)
            client.start(T0)
            try:
                got.append(drive(client, server, T0)[1][-1][0])
            except Boom as e:
                got.append(e.args[0])
            except Exception as e:
                got.append(repr(e))
        seen[i] = got

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    for i in range(8):
        assert seen[i] == ["authenticated", f"user{i}"] * 100, seen[i]


# (b) `&mut self` methods held the pyo3 borrow while the GIL was released, so a concurrent
# call (even a getter) raised a borrow error instead of waiting.


def test_a_getter_waits_while_another_thread_logs_in_with_a_fresh_credential():
    store = CredentialStore()
    store.add_user("alice", "alice-secret", iterations=16384)  # the client's iteration cap
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    current = []
    done, calls, errors = threading.Event(), [], []

    def getter():
        while not done.is_set():
            began = time.monotonic()
            try:
                assert current[-1].mechanism == "SCRAM-SHA-512"
                current[-1].complete
            except Exception as e:
                errors.append(e)
                return
            calls.append(time.monotonic() - began)

    def login():
        clients = MechanismRegistry()
        clients.add_password_clients("alice", "alice-secret")  # fresh: no derived keys cached
        client, server = ClientExchange(clients, "SCRAM-SHA-512"), ServerExchange(servers, "SCRAM-SHA-512")
        current.append(client)
        first, _ = client.start(T0)
        _, server_first = server.step(first, T0)
        final, _ = client.step(server_first, T0)  # PBKDF2 without the GIL, the exchange locked
        _, server_final = server.step(final, T0)
        assert client.step(server_final, T0) == (None, True)

    login()
    t = threading.Thread(target=getter)
    t.start()
    try:
        began = time.monotonic()
        for _ in range(20):
            login()
        each = (time.monotonic() - began) / 20
    finally:
        done.set()
        t.join()
    assert errors == []
    assert calls, "the getter ran"
    assert max(calls) > each / 4, "a getter call waited for a login's PBKDF2"


# (c) The reasons behind fail_at, close_now and a failed re-authentication were dropped.


def password_pair(mechanism="SCRAM-SHA-256", password="alice-secret", retry_ms=None):
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    clients = MechanismRegistry()
    clients.add_password_clients("alice", password)
    client = ClientConnection(ClientConfig(clients, mechanism, reauth_retry_ms=retry_ms))
    server = ServerConnection(ServerConfig(servers, max_reauth_ms=3000, reauth_retry_ms=retry_ms))
    return store, client, server


def server_config():
    servers = MechanismRegistry()
    servers.add_password_servers(CredentialStore())
    return ServerConfig(servers)


def test_fail_at_comes_with_its_error_and_what_the_client_was_told():
    _, client, server = password_pair("PLAIN", password="wrong")
    client.start(T0)
    outputs, _, told = drive(client, server, T0)
    action, out, deadline, error = outputs[-1]
    assert action == "fail_at" and deadline == T0 + 100 and out
    assert isinstance(error, ksasl.AuthenticationError) and error.name == "INVALID_CREDENTIALS"
    assert error.client_message == "Authentication failed: Invalid username or password"
    assert told.details["server_message"] == error.client_message
    # A request that is not SASL before authentication: Kafka's reason, and no response.
    server = ServerConnection(server_config())
    metadata = struct.pack(">hhih", 3, 0, 1, -1)
    action, out, _, error = server.handle_frame(metadata, T0)
    assert action == "fail_at" and isinstance(error, ksasl.ProtocolError)
    assert error.name == "ILLEGAL_SASL_STATE" and "METADATA" in error.message


def test_close_now_comes_with_its_error():
    server = ServerConnection(server_config())
    assert server.handle_frame(struct.pack(">hhih", 3, 0, 1, -1), T0)[0] == "fail_at"
    action, out, deadline, error = server.handle_frame(b"anything", T0)
    assert (action, out, deadline) == ("close_now", b"", None)
    assert isinstance(error, ksasl.StateError) and error.name == "STEP_AFTER_FAILURE"
    # An answer nobody asked for: refused, nothing changes.
    server = ServerConnection(server_config())
    action, _, _, error = server.provide_credential("secret", T0)
    assert action == "close_now" and error.name == "WRONG_STATE"
    assert server.handle_frame(struct.pack(">hhih", 18, 0, 1, -1), T0)[0] == "continue"


def test_a_failed_reauthentication_comes_with_its_error_on_both_sides():
    store, client, server = password_pair(retry_ms=1000)
    client.start(T0)
    assert drive(client, server, T0)[1][-1][0] == "authenticated"
    store.add_user("alice", "changed")  # the password changed on the server
    due = client.next_deadline()
    assert client.handle_timeout(due)
    outputs, events, told = drive(client, server, due)
    assert told is None, "the old sessions hold (retry policy on both sides)"
    action, _, _, error = outputs[-1]
    assert action == "reauth_failed" and error.name == "INVALID_CREDENTIALS"
    assert error.client_message.startswith("Authentication failed during re-authentication")
    event, frame, client_error = events[-1]
    assert event == "reauth_failed" and frame is None
    assert client_error.name == "SERVER_REJECTED_AUTHENTICATION"
    assert error.client_message in client_error.message


# (d) JwksValidator took only issuer, one audience and skew: every option of the core's
# JwtValidatorConfig is a keyword argument now.


@pytest.fixture(scope="module")
def jwt():
    with open(os.path.join(HERE, "..", "..", "..", "tests", "vectors", "jwt.json")) as f:
        v = json.load(f)
    v["by_name"] = {t["name"]: t["token"] for t in v["tokens"]}
    return v


def check(jwt, token, **options):
    """The principal a validator with `options` gives `token`, or the error's name."""
    options.setdefault("expected_issuer", jwt["issuer"])
    options.setdefault("expected_audiences", [jwt["audience"]])
    j = JwksValidator(**options)
    j.set_jwks(json.dumps(jwt["jwks"]), jwt["now_ms"])
    try:
        return j.validate(jwt["by_name"][token], jwt["now_ms"])
    except KsaslError as e:
        return e.name


def test_every_jwt_validator_option(jwt):
    assert check(jwt, "rs256")["principal"] == "alice"
    # Audiences: a list; a token's audience must be one of them.
    assert check(jwt, "rs256", expected_audiences=["other", jwt["audience"]])["principal"] == "alice"
    assert check(jwt, "rs256", expected_audiences=["other"]) == "TOKEN_INVALID_AUDIENCE"
    # Claim names.
    assert check(jwt, "rs256", subject_claim_name="iss")["principal"] == jwt["issuer"]
    assert check(jwt, "rs256", scope_claim_name="aud")["scope"] == [jwt["audience"]]
    # iat check, clock skew.
    assert check(jwt, "iat-in-future")["principal"] == "alice"
    assert check(jwt, "iat-in-future", validate_iat=True) == "TOKEN_NOT_YET_VALID"
    assert check(jwt, "expired-within-skew")["principal"] == "alice"
    assert check(jwt, "expired-within-skew", clock_skew_ms=0) == "TOKEN_EXPIRED"
    # Algorithms by name; HMAC with a shared secret.
    assert check(jwt, "rs256", algorithms=["ES256"]) == "TOKEN_ALGORITHM_REFUSED"
    assert check(jwt, "hs256-shared-secret") == "TOKEN_ALGORITHM_REFUSED"
    secret = jwt["hmac_secret"].encode()
    hs = check(jwt, "hs256-shared-secret", algorithms=["RS256", "HS256"], hmac_secret=secret)
    assert hs["principal"] == "alice"
    with pytest.raises(ksasl.MisuseError) as e:
        JwksValidator(algorithms=["RS999"])
    assert e.value.name == "INVALID_CONFIG"
    with pytest.raises(ksasl.MisuseError):
        JwksValidator(algorithms=["HS256"])  # HMAC without a secret
    # Largest token.
    assert check(jwt, "rs256", max_token_size=100) == "TOKEN_TOO_LARGE"


def test_jwks_refresh_period_and_unknown_kid_interval(jwt):
    now, keys = jwt["now_ms"], json.dumps(jwt["jwks"])
    j = JwksValidator(jwt["issuer"], [jwt["audience"]], refresh_period_ms=600_000, unknown_kid_interval_ms=5_000)
    j.set_jwks(keys, now)
    assert j.next_refresh_ms() == now + 600_000
    unknown = jwt["by_name"]["unknown-kid"]
    with pytest.raises(KsaslError):
        j.validate(unknown, now)
    assert j.next_refresh_ms() == now, "an unknown kid asks for the JWKS at once"
    j.set_jwks(keys, now + 1)
    with pytest.raises(KsaslError):
        j.validate(unknown, now + 2)
    assert j.next_refresh_ms() == now + 1 + 600_000, "not again within the interval"
    with pytest.raises(KsaslError):
        j.validate(unknown, now + 5_001)
    assert j.next_refresh_ms() == now + 5_001


# (e) The single-exchange server did not report the KIP-368 session lifetime.


def plain_login(servers, **kwargs):
    clients = MechanismRegistry()
    clients.add_password_clients("alice", "alice-secret")
    client, server = ClientExchange(clients, "PLAIN"), ServerExchange(servers, "PLAIN", **kwargs)
    first, _ = client.start(T0)
    assert server.step(first, T0)[0] == "done"
    return server.outcome()


def test_the_single_exchange_server_reports_the_session_lifetime():
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    o = plain_login(servers)
    assert (o["lifetime_ms"], o["expiry_ms"]) == (0, None)
    o = plain_login(servers, max_reauth_ms=3000)
    assert (o["lifetime_ms"], o["expiry_ms"]) == (3000, T0 + 3000)
    store.set_user_expiry("alice", T0 + 1000)  # the credential's expiry bounds it (Kafka's formula)
    o = plain_login(servers, max_reauth_ms=3000)
    assert (o["lifetime_ms"], o["expiry_ms"], o["credential_expiry_ms"]) == (1000, T0 + 1000, T0 + 1000)


# (f) Error text never repeats the code name.


class Raises:
    def __init__(self):
        raise ksasl.AuthenticationError("no such key", 325, "HOST_MECHANISM_FAILED", "authentication", {})


def test_error_text_names_the_code_once():
    errors = []
    servers = MechanismRegistry()
    servers.add_server_mechanism("X-RAISES", Raises)
    with pytest.raises(KsaslError) as e:
        ServerExchange(servers, "X-RAISES")
    errors.append(e.value)
    clients = MechanismRegistry()
    clients.add_client_mechanism("X-RAISES", Raises)
    with pytest.raises(KsaslError) as e:
        ClientExchange(clients, "X-RAISES")
    errors.append(e.value)
    clients = MechanismRegistry()
    clients.add_password_clients("alice", "alice-secret")
    c = ClientExchange(clients, "SCRAM-SHA-256")
    c.start(T0)
    with pytest.raises(KsaslError) as e:
        c.server_failed("Authentication failed: nope")
    errors.append(e.value)
    _, client, server = password_pair("PLAIN", password="wrong")
    client.start(T0)
    outputs, _, told = drive(client, server, T0)
    errors += [told, outputs[-1][3]]
    for e in errors:
        assert str(e).count(e.name) == 1, str(e)
        assert not e.message.startswith(e.name), e.message
