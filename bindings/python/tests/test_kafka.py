"""Connection drivers, OAUTHBEARER, refresher, tracker and adapters from Python, on a virtual
clock (every call gets now_ms)."""

import json
import os
import struct

import pytest

import ksasl
from ksasl import (
    AuthenticationError,
    ClientConfig,
    ClientConnection,
    CredentialError,
    JwksValidator,
    Refresher,
    MechanismRegistry,
    ServerConfig,
    ServerConnection,
    CredentialStore,
    Tracker,
    unsecured_oauth_token,
)
from ksasl.adapters import TokenProvider, confluent_kafka_oauth_cb

T0 = 1_800_000_000_000
HERE = os.path.dirname(__file__)


def frames(data: bytes):
    out = []
    while data:
        (n,) = struct.unpack(">i", data[:4])
        out.append(data[4 : 4 + n])
        data = data[4 + n :]
    return out


def metadata_request(corr: int) -> bytes:
    body = struct.pack(">hhih", 3, 0, corr, -1)
    return struct.pack(">i", len(body)) + body


class Pair:
    def __init__(self, client_cfg, server_cfg):
        self.client = ClientConnection(client_cfg)
        self.server = ServerConnection(server_cfg)
        self.events = []
        self.app = []
        self.closed = None

    def pump(self, now, extra=b""):
        to_server = extra + self.client.transmit()
        while to_server:
            to_client = b""
            for f in frames(to_server):
                # The gate alone routes every frame: only "process" reaches the handlers.
                (key, _, corr) = struct.unpack(">hhi", f[:8])
                verdict = self.server.gate(key, now)
                if verdict in ("close_expired", "close"):
                    self.closed = "expired" if verdict == "close_expired" else "failed"
                    return
                if verdict == "process":
                    assert self.server.ready
                    to_client += struct.pack(">ii", 4, corr)
                    continue
                assert verdict in ("begin_reauthentication", "not_authenticated"), verdict
                action, out, _, _ = self.server.handle_frame(f, now)
                to_client += out
                assert action in ("continue", "authenticated", "reauthenticated"), action
            for f in frames(to_client):
                ev, app, _ = self.client.handle_frame(f, now)
                if ev == "application":
                    self.app.append(struct.unpack(">i", app[:4])[0])
                elif ev != "continue":
                    self.events.append(ev)
            to_server = self.client.transmit()


def password_pair(mech, max_reauth_ms=3000, timing="kafka"):
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    clients = MechanismRegistry()
    clients.add_password_clients("alice", "alice-secret")
    return ClientConfig(clients, mech, client_id="py", reauth_timing=timing), ServerConfig(servers, max_reauth_ms=max_reauth_ms)


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_authentication_and_reauthentication_with_requests_in_flight(mech):
    ccfg, scfg = password_pair(mech)
    p = Pair(ccfg, scfg)
    p.client.start(T0)
    p.pump(T0)
    assert p.events == ["authenticated"]
    s = p.client.session()
    assert s["lifetime_ms"] == 3000 and T0 + 2550 <= s["reauth_at_ms"] < T0 + 2850
    assert p.server.session()["principal"] == "User:alice"
    now, corr = T0, 0
    while now < T0 + 12_000:
        now += 250
        if p.client.handle_timeout(now):
            pass
        if p.client.before_request(now):
            p.pump(now, metadata_request(corr))
            corr += 1
        else:
            p.pump(now)
        assert p.closed is None
    assert p.events.count("reauthenticated") >= 3
    assert p.app == list(range(corr))
    m = scfg.metrics(now)
    assert m["successful-reauthentication-total"] == p.events.count("reauthenticated")
    assert m["expired-connections-killed-count"] == 0


def test_the_gate_never_processes_without_a_live_session():
    """Issue 17, defect 1: before authentication, during a re-authentication and after a
    failure the gate refuses every request."""
    ccfg, scfg = password_pair("PLAIN")
    server = ServerConnection(scfg)
    assert {server.gate(k, T0) for k in range(-1, 81)} == {"not_authenticated"}
    p = Pair(ccfg, scfg)
    p.client.start(T0)
    p.pump(T0)
    assert p.events == ["authenticated"] and p.server.gate(3, T0) == "process"
    assert p.server.gate(17, T0 + 1000) == "begin_reauthentication"
    handshake = struct.pack(">hhih", 17, 1, 7, -1) + struct.pack(">h", 5) + b"PLAIN"
    action, _, _, _ = p.server.handle_frame(handshake, T0 + 1000)
    assert action == "continue"
    assert {p.server.gate(k, T0 + 1000) for k in range(-1, 81)} == {"not_authenticated"}
    wrong = b"\0alice\0wrong"
    authenticate = struct.pack(">hhih", 36, 1, 8, -1) + struct.pack(">i", len(wrong)) + wrong
    action, _, _, error = p.server.handle_frame(authenticate, T0 + 1000)
    assert action == "fail_at" and error.name == "INVALID_CREDENTIALS"
    assert {p.server.gate(k, T0 + 1000) for k in range(-1, 81)} == {"close"}


def test_a_request_in_the_middle_of_an_exchange_is_answered_as_kafka_does():
    """Issue 17, defect 5: Metadata during the exchange gets Kafka 4.4's error response;
    Produce (no schema in ksasl) is left to the host with what it needs to answer."""
    vectors = os.path.join(HERE, "..", "..", "..", "tests", "vectors", "kafka44_refusals.json")
    with open(vectors) as f:
        recorded = json.load(f)
    _, scfg = password_pair("PLAIN")
    for name in ("metadata_v4", "metadata_v12", "api_versions_v3", "describe_delegation_token_v2"):
        server = ServerConnection(scfg)
        first, second = (bytes.fromhex(r) for r in recorded[name]["requests"])
        assert server.handle_frame(first, T0)[0] == "continue"
        action, out, deadline, error = server.handle_frame(second, T0)
        assert (action, deadline, error.name) == ("fail_at", T0 + 100, "ILLEGAL_SASL_STATE")
        assert frames(out) == [bytes.fromhex(recorded[name]["kafka_4_4"][1])], name
        assert server.refused_request() is None
    server = ServerConnection(scfg)
    assert server.refused_request() is None
    first, second = (bytes.fromhex(r) for r in recorded["produce_v3_one_partition"]["requests"])
    server.handle_frame(first, T0)
    action, out, _, error = server.handle_frame(second, T0)
    assert (action, out) == ("fail_at", b"")
    assert server.refused_request() == {
        "api_key": 0,
        "api_version": 3,
        "correlation_id": 2,
        "error_code": 34,
        "error_message": "Unexpected Kafka request of type PRODUCE during SASL authentication.",
    }
    assert error.message == server.refused_request()["error_message"]
    # A request Kafka cannot read is not answered, and nothing is left to the host.
    server = ServerConnection(scfg)
    first, second = (bytes.fromhex(r) for r in recorded["metadata_v14"]["requests"])
    server.handle_frame(first, T0)
    action, out, _, _ = server.handle_frame(second, T0)
    assert (action, out, server.refused_request()) == ("close_now", b"", None)


def test_unknown_users_fail_like_wrong_passwords_with_the_mask():
    """Issue 17, enumeration resistance: an unknown SCRAM user gets a challenge and fails at
    the final message with a wrong password's code and text; the host sees unknown_user."""
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    with pytest.raises(ksasl.KsaslError) as e:
        ServerConfig(servers, unknown_user_mask=(b"short", 4096))
    assert e.value.name == "INVALID_CONFIG"
    scfg = ServerConfig(servers, unknown_user_mask=(b"a secret shared by every broker", 4096))

    def login(user):
        clients = MechanismRegistry()
        clients.add_password_clients(user, "not-the-password")
        client = ClientConnection(ClientConfig(clients, "SCRAM-SHA-256"))
        server = ServerConnection(scfg)
        client.start(T0)
        steps = []
        while True:
            (frame,) = frames(client.transmit())
            action, out, _, error = server.handle_frame(frame, T0)
            steps.append(action)
            if action != "continue":
                (answer,) = frames(out)
                return steps, answer[4:], error
            for f in frames(out):
                client.handle_frame(f, T0)

    wrong_steps, wrong_answer, wrong = login("alice")
    unknown_steps, unknown_answer, unknown = login("mallory")
    assert wrong_steps == unknown_steps and unknown_steps[-1] == "fail_at" and len(unknown_steps) >= 3
    assert wrong_answer == unknown_answer  # the final SaslAuthenticate response, byte for byte
    assert (wrong.name, wrong.client_message) == (unknown.name, unknown.client_message)
    assert unknown.name == "INVALID_CREDENTIALS"
    assert dict(unknown.details).get("unknown_user") == "true"
    assert "unknown_user" not in dict(wrong.details)


def test_without_reauthentication_the_broker_closes_at_expiry():
    ccfg, scfg = password_pair("SCRAM-SHA-256", timing="disabled")
    p = Pair(ccfg, scfg)
    p.client.start(T0)
    p.pump(T0)
    p.pump(T0 + 3000, metadata_request(0))
    assert p.closed is None and p.app == [0]
    p.pump(T0 + 3001, metadata_request(1))
    assert p.closed == "expired"
    assert scfg.metrics(T0 + 3001)["expired-connections-killed-count"] == 1


def test_oauthbearer_refresher_tracker_and_token_bound_sessions():
    refresher = Refresher()
    assert refresher.poll(T0)
    t = unsecured_oauth_token("alice", lifetime_seconds=60, now_ms=T0)
    assert refresher.set_token(t["token"], t["expiry_ms"], "alice", {"logicalCluster": "lkc-1"}, T0) == 1
    with pytest.raises(CredentialError) as e:
        refresher.set_token(t["token"], 3600, "alice", None, T0)
    assert e.value.name == "INVALID_CREDENTIAL_EXPIRY" and "relative" in e.value.message
    servers = MechanismRegistry()
    servers.add_oauthbearer_server()
    clients = MechanismRegistry()
    clients.add_oauthbearer_client(refresher)
    scfg = ServerConfig(servers, max_reauth_ms=30_000)
    p = Pair(ClientConfig(clients, "OAUTHBEARER", reauth_timing="librdkafka"), scfg)
    tracker = Tracker(refresher, spread_window_ms=0)
    p.client.start(T0)
    p.pump(T0)
    tracker.authenticated(1, refresher.generation, p.client.session())
    assert p.server.session()["extensions"] == {"logicalCluster": "lkc-1"}
    assert p.server.session()["credential_expiry_ms"] == T0 + 60_000
    due = refresher.next_deadline()
    assert T0 + 48_000 <= due < T0 + 51_000
    refresh, ids = tracker.poll(due)
    assert refresh and ids == []
    t2 = unsecured_oauth_token("alice", lifetime_seconds=60, now_ms=due)
    refresher.set_token(t2["token"], t2["expiry_ms"], "alice", None, due)
    refresh, ids = tracker.poll(due)
    assert ids == [1]
    assert p.client.start_reauthentication(due)
    p.pump(due)
    assert p.events[-1] == "reauthenticated"
    assert p.server.session()["credential_expiry_ms"] == due + 60_000


def test_jwks_validator_with_shared_vectors():
    with open(os.path.join(HERE, "..", "..", "..", "tests", "vectors", "jwt.json")) as f:
        v = json.load(f)
    j = JwksValidator(v["issuer"], [v["audience"]])
    assert j.set_jwks(json.dumps(v["jwks"]), v["now_ms"]) == 4
    for t in v["tokens"]:
        if t["expect"] == "ok":
            assert j.validate(t["token"], v["now_ms"])["principal"] == "alice", t["name"]
        elif t["expect"].startswith("TOKEN"):
            with pytest.raises(ksasl.KsaslError) as e:
                j.validate(t["token"], v["now_ms"])
            assert e.value.name == t["expect"], t["name"]
    with pytest.raises(ksasl.MisuseError):
        j.set_jwks("not json")


def test_callback_validator_and_exception_passthrough():
    class Nope(Exception):
        pass

    def validate(token, now_ms):
        if token == "good-token":
            return ("svc", now_ms + 60_000)
        if token == "raise":
            raise Nope("validator down")
        return None

    servers = MechanismRegistry()
    servers.add_oauthbearer_server(validate)
    for token, outcome in [("good-token", "ok"), ("bad-token", "rejected"), ("raise", Nope)]:
        refresher = Refresher()
        refresher.poll(T0)
        refresher.set_token(token, T0 + 60_000, "svc", None, T0)
        clients = MechanismRegistry()
        clients.add_oauthbearer_client(refresher)
        c = ksasl.ClientExchange(clients, "OAUTHBEARER")
        s = ksasl.ServerExchange(servers, "OAUTHBEARER")
        first, _ = c.start(T0)
        if outcome is Nope:
            with pytest.raises(Nope):
                s.step(first, T0)
            continue
        status, reply = s.step(first, T0)
        if outcome == "ok":
            assert status == "done" and s.outcome()["principal"] == "User:svc"
        else:
            assert status == "challenge" and reply == b'{"status":"invalid_token"}'
            ack, _ = c.step(reply, T0)
            assert ack == b"\x01"
            with pytest.raises(AuthenticationError) as e:
                s.step(ack, T0)
            assert e.value.name == "TOKEN_REJECTED"


def test_adapters_never_return_an_expired_token():
    issued = []

    def fetch():
        now = int(__import__("time").time() * 1000)
        t = unsecured_oauth_token("alice", lifetime_seconds=2, now_ms=now)
        issued.append(t["expiry_ms"])
        return t["token"], t["expiry_ms"], "alice", {"identityPoolId": "pool-1"}

    cb = confluent_kafka_oauth_cb(fetch)
    token, expiry_s, principal, ext = cb("")
    assert principal == "alice" and ext == {"identityPoolId": "pool-1"}
    assert expiry_s > __import__("time").time(), "an absolute expiry in seconds, in the future"
    provider = TokenProvider(fetch)
    assert provider.token() and provider.extensions() == {"identityPoolId": "pool-1"}
    assert len(issued) == 2


def test_api_versions_after_authentication_come_from_the_config():
    servers = MechanismRegistry()
    servers.add_password_servers()
    config = ServerConfig(servers, api_versions=[(3, 0, 12)])
    req = struct.pack(">hhih", 18, 0, 5, -1)
    out = config.api_versions_response(req)
    (size, corr, err, n) = struct.unpack(">iihi", out[:14])
    assert size == len(out) - 4 and corr == 5 and err == 0
    entries = [struct.unpack(">hhh", out[14 + 6 * i : 20 + 6 * i]) for i in range(n)]
    assert (3, 0, 12) in entries
    with pytest.raises(ksasl.MisuseError):
        ServerConfig(servers, api_versions=[(17, 0, 3)])
    with pytest.raises(ksasl.KsaslError):
        config.api_versions_response(metadata_request(1)[4:])
