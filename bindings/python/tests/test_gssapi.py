"""GSSAPI from Python against a real MIT KDC (tests/kerberos/kdc.py, one for this module):
logins from keytabs without kinit, both sides of the exchange over the system GSS-API through
the connection drivers (with KIP-368 re-authentication), principal-to-local rules, each
failure's own code, and the login's renewal schedule with short tickets.

Kerberos checks tickets against the real clock, so every call here runs on the wall clock
(or, for the drivers, a clock that starts at the wall clock)."""

import os
import struct
import sys
import time
from pathlib import Path

import pytest

import ksasl
from ksasl import (
    AuthenticationError,
    BackgroundRefresher,
    ClientConfig,
    ClientConnection,
    ClientExchange,
    CredentialError,
    KerberosLogin,
    KsaslError,
    MechanismRegistry,
    MisuseError,
    ServerConfig,
    ServerConnection,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "kerberos"))
from kdc import Kdc  # noqa: E402

KERBEROS_TICKET_EXPIRED, KERBEROS_REPLAY, KERBEROS_WRONG_SERVICE = 326, 327, 328
KERBEROS_KEY_MISMATCH, KERBEROS_NAME_UNMAPPED, KERBEROS_LOGIN_FAILED = 329, 412, 414
BROKER = "kafka/localhost@KSASL.TEST"
SHORT_LIFE_S = 12
GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism GSSAPI"

pytestmark = pytest.mark.skipif(not ksasl.gssapi_available(), reason="no MIT GSS-API library")


def wall() -> int:
    return int(time.time() * 1000)


@pytest.fixture(scope="module")
def kdc():
    saved = dict(os.environ)
    with Kdc(principals=("alice", "bob", "kafka/localhost", "other/localhost")) as k:
        k.add_principal("short", max_life=f"{SHORT_LIFE_S}s")
        k.wrong_keytab("kafka/localhost")
        k.wrong_keytab("alice")
        # MIT Kerberos reads these when a context is made: set before any GSSAPI call.
        os.environ.update(k.env())
        try:
            yield k
        finally:
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture(scope="module")
def alice(kdc):
    login = KerberosLogin(principal="alice@KSASL.TEST", keytab=str(kdc.keytab("alice")))
    login.login()
    return login


def servers(kdc, keytab=None, principal=BROKER, **kw):
    r = MechanismRegistry()
    r.add_gssapi_server(keytab=str(keytab or kdc.keytab("kafka/localhost")), principal=principal, **kw)
    return r


def clients(login, service="kafka", mutual=False):
    r = MechanismRegistry()
    r.add_gssapi_client(login, service, "localhost", mutual=mutual)
    return r


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
    """A client and a server driver joined in memory; Metadata requests get empty answers."""

    def __init__(self, client_registry, server_registry, max_reauth_ms=None, **server_kw):
        self.client = ClientConnection(ClientConfig(client_registry, "GSSAPI", client_id="py"))
        self.server_config = ServerConfig(server_registry, max_reauth_ms=max_reauth_ms, **server_kw)
        self.server = ServerConnection(self.server_config)
        self.events, self.app = [], []
        self.server_error = None
        self.closed = None

    def pump(self, now, extra=b""):
        to_server = extra + self.client.transmit()
        while to_server:
            to_client = b""
            for f in frames(to_server):
                key, _, corr = struct.unpack(">hhi", f[:8])
                verdict = self.server.gate(key, now)
                if verdict in ("close_expired", "close"):
                    self.closed = verdict
                    return
                if verdict == "process":
                    to_client += struct.pack(">ii", 4, corr)
                    continue
                action, out, _, error = self.server.handle_frame(f, now)
                to_client += out
                if error is not None:
                    self.server_error = error
                if action not in ("continue", "authenticated", "reauthenticated"):
                    self.closed = action
            for f in frames(to_client):
                ev, app, _ = self.client.handle_frame(f, now)  # raises when authentication fails
                if ev == "application":
                    self.app.append(struct.unpack(">i", app[:4])[0])
                elif ev != "continue":
                    self.events.append(ev)
            to_server = self.client.transmit()

    def connect(self, now):
        self.client.start(now)
        self.pump(now)


def refused(client_registry, server_registry):
    """Runs one authentication that must fail: (the server's error, the client's exception)."""
    p = Pair(client_registry, server_registry)
    with pytest.raises(KsaslError) as raised:
        p.connect(wall())
    return p.server_error, raised.value


def test_gssapi_is_available_and_listed(kdc, alice):
    assert ksasl.gssapi_available()
    assert clients(alice).client_mechanisms() == ["GSSAPI"]
    assert servers(kdc).server_mechanisms() == ["GSSAPI"]


def test_login_from_a_keytab_needs_no_kinit(kdc):
    login = KerberosLogin(principal="bob@KSASL.TEST", keytab=str(kdc.keytab("bob")))
    assert (login.logins, login.failures, login.ticket_end_ms) == (0, 0, None)
    assert login.poll(), "the first poll logs in"
    now = wall()
    end = login.ticket_end_ms
    # The realm's 5-minute tickets; the next login at 80-85 % of the ticket's life, after
    # Kafka's one-minute minimum.
    assert now + 290_000 <= end <= now + 301_000
    life = end - now
    assert now + 0.79 * life <= login.next_login_ms <= now + 0.86 * life
    assert not login.poll()
    login.login()
    assert (login.logins, login.failures) == (2, 0)
    # No kinit: the credential cache named by KRB5CCNAME was never written.
    assert not kdc.ccache.exists()


def test_login_from_a_credential_cache(kdc, tmp_path):
    cache = tmp_path / "bob.ccache"
    kdc.kinit_keytab("bob", ccache=cache)
    login = KerberosLogin(ccache=f"FILE:{cache}")
    login.login()
    assert login.logins == 1 and login.ticket_end_ms is not None
    p = Pair(clients(login), servers(kdc))
    p.connect(wall())
    assert p.events == ["authenticated"]
    assert p.server.session()["principal"] == "User:bob"


@pytest.mark.parametrize("mutual", [False, True])
def test_exchange_through_the_drivers_and_reauthentication(kdc, alice, mutual):
    p = Pair(clients(alice, mutual=mutual), servers(kdc), max_reauth_ms=3000)
    start = now = wall()
    p.connect(now)
    assert p.events == ["authenticated"]
    s = p.server.session()
    assert (s["principal"], s["mechanism"], s["lifetime_ms"]) == ("User:alice", "GSSAPI", 3000)
    # The session is capped at the service ticket, which ends with alice's login.
    assert abs(s["credential_expiry_ms"] - alice.ticket_end_ms) <= 2000
    assert p.client.session()["lifetime_ms"] == 3000
    # Four session lifetimes, a request every 250 ms: a re-authentication in each.
    corr = 0
    while now < start + 12_000:
        now += 250
        p.client.handle_timeout(now)
        if p.client.before_request(now):
            p.pump(now, metadata_request(corr))
            corr += 1
        else:
            p.pump(now)
        assert p.closed is None and p.server_error is None
    assert p.events.count("reauthenticated") >= 3, p.events
    assert p.app == list(range(corr))
    m = p.server_config.metrics(now)
    assert m["successful-reauthentication-total"] == p.events.count("reauthenticated")
    assert m["expired-connections-killed-count"] == 0


def test_without_the_cap_the_session_has_no_credential_expiry(kdc, alice):
    p = Pair(clients(alice), servers(kdc, cap_session_at_ticket=False))
    p.connect(wall())
    assert p.server.session()["credential_expiry_ms"] is None


def test_principal_to_local_rules(kdc, alice):
    def principal(rules):
        p = Pair(clients(alice), servers(kdc, rules=rules))
        p.connect(wall())
        return p.server.session()["principal"]

    assert principal(None) == "User:alice"
    assert principal("DEFAULT") == "User:alice"
    assert principal("RULE:[1:$1@$0](alice@KSASL.TEST)s/.*/kafka-admin/,DEFAULT") == "User:kafka-admin"
    assert principal("RULE:[1:$1](.*)s/(.*)/$1/U") == "User:ALICE"
    # No rule applies: refused with its own code; the client hears Kafka's generic sentence.
    server_error, client_error = refused(clients(alice), servers(kdc, rules="RULE:[2:$1](.*)s/.*/x/"))
    assert (server_error.code, server_error.name) == (KERBEROS_NAME_UNMAPPED, "KERBEROS_NAME_UNMAPPED")
    assert isinstance(server_error, CredentialError)
    assert isinstance(client_error, AuthenticationError)
    # A rule Kafka would not accept is refused when the server is set up.
    with pytest.raises(MisuseError):
        servers(kdc, rules="RULE:[1:$1](.*)s/x")


def test_a_ticket_for_another_service_is_refused(kdc, alice):
    # The client asks for other/localhost; the broker only has kafka/localhost's key.
    server_error, client_error = refused(clients(alice, service="other"), servers(kdc))
    assert server_error.code == KERBEROS_WRONG_SERVICE, server_error
    assert isinstance(server_error, AuthenticationError)
    assert server_error.client_message == GENERIC
    assert GENERIC in str(client_error)
    # A service the KDC does not know fails on the client, before anything is sent.
    ex = ClientExchange(clients(alice, service="nosuch"), "GSSAPI")
    with pytest.raises(AuthenticationError) as e:
        ex.start()
    assert e.value.code == KERBEROS_WRONG_SERVICE
    assert "not found in Kerberos database" in e.value.message


def test_a_wrong_broker_keytab_is_refused(kdc, alice):
    wrong = kdc.dir / "kafka_localhost.wrong.keytab"
    server_error, client_error = refused(clients(alice), servers(kdc, keytab=wrong))
    assert server_error.code == KERBEROS_KEY_MISMATCH, server_error
    assert server_error.client_message == GENERIC
    assert isinstance(client_error, AuthenticationError)


def test_a_replayed_token_is_refused(kdc, alice):
    client = ClientExchange(clients(alice), "GSSAPI")
    ap_req, _ = client.start()
    assert ap_req
    registry = servers(kdc)
    first = ksasl.ServerExchange(registry, "GSSAPI")
    assert first.step(ap_req)[0] == "challenge"
    with pytest.raises(AuthenticationError) as e:
        ksasl.ServerExchange(registry, "GSSAPI").step(ap_req)
    assert e.value.code == KERBEROS_REPLAY


def test_a_wrong_or_missing_client_keytab_fails_the_login(kdc):
    wrong = KerberosLogin(principal="alice@KSASL.TEST", keytab=str(kdc.dir / "alice.wrong.keytab"))
    before = wall()
    with pytest.raises(CredentialError) as e:
        wrong.login()
    assert (e.value.code, e.value.name) == (KERBEROS_LOGIN_FAILED, "KERBEROS_LOGIN_FAILED")
    assert (wrong.logins, wrong.failures, wrong.ticket_end_ms) == (0, 1, None)
    assert wrong.next_login_ms >= before + 1000, "a retry is planned, no sooner than 1 s later"
    # A client on a login that never succeeded fails with the login's error.
    with pytest.raises(CredentialError) as e:
        ClientExchange(clients(wrong), "GSSAPI").start()
    assert e.value.code == KERBEROS_LOGIN_FAILED

    missing = KerberosLogin(principal="alice@KSASL.TEST", keytab="/nonexistent/alice.keytab")
    with pytest.raises(CredentialError) as e:
        missing.login()
    assert e.value.code == KERBEROS_LOGIN_FAILED
    # A keytab without its principal is a configuration error, found at once.
    with pytest.raises(MisuseError, match="principal"):
        KerberosLogin(keytab=str(kdc.keytab("alice")))
    with pytest.raises(MisuseError, match="window.factor"):
        KerberosLogin(principal="alice@KSASL.TEST", keytab=str(kdc.keytab("alice")), window_factor=1.5)


def test_a_missing_broker_keytab_is_reported_when_the_server_is_set_up(kdc):
    r = MechanismRegistry()
    with pytest.raises(MisuseError) as e:
        r.add_gssapi_server(keytab="/nonexistent/kafka.keytab", principal=BROKER)
    # A configuration error, found before the GSS-API is asked.
    assert e.value.name == "INVALID_CONFIG", e.value
    assert "/nonexistent/kafka.keytab does not exist" in str(e.value)
    assert r.server_mechanisms() == []
    # A server needs a service name: its principal's first part, or given.
    with pytest.raises(MisuseError):
        r.add_gssapi_server(keytab=str(kdc.keytab("kafka/localhost")))


def test_a_pre_0_10_client_sends_a_raw_gssapi_token_first(kdc, alice):
    def first_packet(legacy):
        server = ServerConnection(ServerConfig(servers(kdc), legacy_gssapi=legacy))
        client = ClientExchange(clients(alice), "GSSAPI")
        token, _ = client.start()
        return server, client, server.handle_frame(token)

    server, client, (action, out, _, _) = first_packet(True)
    for _ in range(3):
        if action == "authenticated":
            break
        assert action == "continue"
        (challenge,) = frames(out)  # raw framing: one length-prefixed token
        message, _ = client.step(challenge)
        action, out, _, _ = server.handle_frame(message)
    assert action == "authenticated" and out == b""
    assert server.session()["principal"] == "User:alice"
    # Off by default, as in Kafka 4.x: the same first packet is refused.
    _, _, (action, _, _, _) = first_packet(None)
    assert action not in ("continue", "authenticated")


def test_short_tickets_are_renewed_in_the_background_and_each_session_ends_with_its_ticket(kdc):
    """`short` gets 12-second tickets: Kafka's client would wait its one-minute minimum and let
    them expire; the core plans each login at 80-85 % of the ticket's life. Two renewals by the
    core's thread, an authentication every second along the way."""
    short = KerberosLogin(principal="short@KSASL.TEST", keytab=str(kdc.keytab("short")))
    registry, broker = clients(short), servers(kdc)
    ends, seen = [], []
    thread = BackgroundRefresher.kerberos(short)
    try:
        deadline = time.time() + 3 * SHORT_LIFE_S
        while short.logins < 3 and time.time() < deadline:
            if short.ticket_end_ms is not None:
                if not ends or ends[-1] != short.ticket_end_ms:
                    ends.append(short.ticket_end_ms)
                now = wall()
                assert short.next_login_ms < short.ticket_end_ms, "the next login is inside the ticket's life"
                p = Pair(registry, broker)
                p.connect(now)
                s = p.server.session()
                assert s["principal"] == "User:short"
                assert now < s["credential_expiry_ms"] <= short.ticket_end_ms + 1000
                seen.append(s["credential_expiry_ms"])
            time.sleep(0.5)
    finally:
        thread.stop()
    if ends[-1] != short.ticket_end_ms:
        ends.append(short.ticket_end_ms)
    p = Pair(registry, broker)
    p.connect(wall())
    seen.append(p.server.session()["credential_expiry_ms"])
    assert short.logins == 3 and short.failures == 0, (short.logins, ends)
    assert len(ends) == 3 and ends == sorted(ends), ends
    # Each renewal came before the ticket in use ended, at 80-85 % of its life.
    for a, b in zip(ends, ends[1:]):
        assert 0.75 * SHORT_LIFE_S * 1000 <= b - a <= 0.9 * SHORT_LIFE_S * 1000, ends
    assert len(set(seen)) >= 3, "re-authentications used the renewed tickets"
    logins = short.logins
    time.sleep(0.2)
    assert short.logins == logins


def test_poll_drives_the_schedule_on_any_clock(kdc):
    short = KerberosLogin(principal="short@KSASL.TEST", keytab=str(kdc.keytab("short")),
                          window_factor=0.5, jitter=0.0, min_time_before_relogin_ms=0)
    now = wall()
    assert short.poll(now)
    life = short.ticket_end_ms - now
    assert short.next_login_ms == now + life // 2
    assert not short.poll(short.next_login_ms - 1)
    assert short.poll(short.next_login_ms)
    assert short.logins == 2
