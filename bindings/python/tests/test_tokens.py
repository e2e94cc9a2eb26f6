"""Delegation tokens from Python: HMACs and SCRAM passwords checked against hashlib/hmac,
the authority's rules, records, the codec, and a token login through the drivers."""

import base64
import hashlib
import hmac as hmac_mod
import struct

import pytest

import ksasl
from ksasl import (
    ClientConfig,
    ClientConnection,
    CredentialError,
    Refresher,
    MechanismRegistry,
    ServerConfig,
    ServerConnection,
    CredentialStore,
    TokenAuthority,
)

T0 = 1_800_000_000_000


def frames(data):
    out = []
    while data:
        (n,) = struct.unpack(">i", data[:4])
        out.append(data[4 : 4 + n])
        data = data[4 + n :]
    return out


def test_hmac_and_password_match_an_independent_computation():
    a = TokenAuthority("a-secret-key")
    t = a.create("alice", now_ms=T0)
    expected = hmac_mod.new(b"a-secret-key", t["token_id"].encode(), hashlib.sha512).digest()
    assert t["hmac"] == expected == a.hmac(t["token_id"])
    assert t["hmac_base64"] == base64.b64encode(expected).decode()
    assert len(t["hmac_base64"]) == 88
    assert len(t["token_id"]) == 22 and not t["token_id"].startswith("-")
    # Reference section 7.2's example.
    ref = hmac_mod.new(b"secret", b"AAECAwQFBgcICQoLDA0ODw", hashlib.sha512).digest()
    assert base64.b64encode(ref).decode() == (
        "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA=="
    )
    assert TokenAuthority("secret").hmac("AAECAwQFBgcICQoLDA0ODw") == ref


def test_authority_rules_and_errors():
    a = TokenAuthority("k", max_lifetime_ms=100_000, expiry_time_ms=10_000)
    t = a.create("User:alice", renewers=["bob"], now_ms=T0)
    assert (t["owner"], t["requester"], t["renewers"]) == ("User:alice", "User:alice", ["User:bob"])
    assert (t["expiry_ms"], t["max_ms"]) == (T0 + 10_000, T0 + 100_000)
    assert a.renew(t["hmac"], "bob", now_ms=T0 + 1) == T0 + 10_001
    with pytest.raises(CredentialError) as e:
        a.renew(t["hmac"], "carol", now_ms=T0 + 2)
    assert e.value.name == "DELEGATION_TOKEN_OWNER_MISMATCH"
    with pytest.raises(CredentialError) as e:
        a.renew(b"\x00" * 64, "alice", now_ms=T0)
    assert e.value.name == "DELEGATION_TOKEN_NOT_FOUND"
    with pytest.raises(CredentialError) as e:
        a.create("alice", renewers=["Group:ops"], now_ms=T0)
    assert e.value.name == "INVALID_PRINCIPAL_TYPE"
    with pytest.raises(CredentialError) as e:
        a.renew(t["hmac"], "alice", now_ms=T0 + 50_000)
    assert e.value.name == "DELEGATION_TOKEN_EXPIRED"
    assert a.sweep(T0 + 50_000) == [t["token_id"]]
    assert a.next_sweep_ms() == T0 + 50_000 + 3_600_000
    with pytest.raises(ksasl.MisuseError):
        TokenAuthority("")
    # Records: no secret inside, round trip, malformed input refused.
    t2 = a.create("alice", now_ms=T0)
    records = a.export_records()
    assert t2["hmac_base64"] not in records
    b = TokenAuthority("k")
    assert b.import_records(records) == 1
    assert b.describe(["alice"])[0]["hmac"] == t2["hmac"]
    with pytest.raises(CredentialError):
        b.import_records('[{"tokenId": "short"}]')


def test_token_login_through_the_drivers_with_a_refresher():
    a = TokenAuthority("k", expiry_time_ms=10_000)
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store, tokens=a)
    server_config = ServerConfig(servers)
    t = a.create("alice", now_ms=T0)
    refresher = Refresher()
    assert refresher.poll(T0)
    assert refresher.set_delegation_token(t, T0) == 1
    clients = MechanismRegistry()
    clients.add_refreshing_password_clients(refresher)
    client = ClientConnection(ClientConfig(clients, "SCRAM-SHA-512"))
    server = ServerConnection(server_config)
    client.start(T0)
    data = client.transmit()
    events = []
    while data:
        out = b""
        for f in frames(data):
            _, o, _, _ = server.handle_frame(f, T0)
            out += o
        for f in frames(out):
            ev, _, _ = client.handle_frame(f, T0)
            events.append(ev)
        data = client.transmit()
    assert "authenticated" in events
    s = server.session()
    assert s["principal"] == "User:alice" and s["credential_expiry_ms"] == T0 + 10_000
    assert s["lifetime_ms"] == 10_000  # capped by the token
    # The refresher wants a renewed token before the expiry.
    assert refresher.next_deadline() < T0 + 10_000


def test_codec_round_trip_through_the_authority():
    a = TokenAuthority("k")
    req = ksasl.create_token_request(3, 5, renewers=["bob"], client_id="py")
    resp = a.handle_request(req[4:], "alice", now_ms=T0)
    t = ksasl.parse_create_token_response(3, resp[4:])
    assert t["owner"] == "User:alice" and t["hmac"] == a.hmac(t["token_id"])
    r = ksasl.renew_or_expire_token_request(2, 6, t["hmac"], 1000)
    assert ksasl.parse_token_expiry_response(2, a.handle_request(r[4:], "bob", now_ms=T0)[4:]) == T0 + 1000
    d = ksasl.describe_tokens_request(3, 7, owners=["alice"])
    tokens = ksasl.parse_describe_tokens_response(3, a.handle_request(d[4:], "alice", now_ms=T0)[4:])
    assert [x["token_id"] for x in tokens] == [t["token_id"]] and tokens[0]["renewers"] == ["User:bob"]
    e = ksasl.renew_or_expire_token_request(1, 8, t["hmac"], -1, expire=True)
    assert ksasl.parse_token_expiry_response(1, a.handle_request(e[4:], "alice", now_ms=T0)[4:]) == T0
    with pytest.raises(CredentialError) as err:
        ksasl.parse_token_expiry_response(1, a.handle_request(e[4:], "alice", now_ms=T0)[4:])
    assert err.value.name == "DELEGATION_TOKEN_NOT_FOUND"
    # A token-authenticated connection may not ask (64).
    c = ksasl.create_token_request(1, 9)
    with pytest.raises(CredentialError) as err:
        ksasl.parse_create_token_response(1, a.handle_request(c[4:], "alice", token_authenticated=True)[4:])
    assert err.value.name == "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"
    assert err.value.details["kafka_error_code"] == "64"
