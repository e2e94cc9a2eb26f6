"""Regression tests for the defects of issue 17 (hardening) seen from Python; the gate's
(defect 1) is in test_kafka.py, beside the connection pair it uses."""

import struct

import pytest

from ksasl import (
    ClientExchange,
    CredentialStore,
    KsaslError,
    MechanismRegistry,
    ProtocolError,
    ServerConfig,
    ServerConnection,
    ServerExchange,
)

T0 = 1_800_000_000_000


def registries():
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    servers = MechanismRegistry()
    servers.add_password_servers(store)
    clients = MechanismRegistry()
    clients.add_password_clients("alice", "alice-secret")
    return clients, servers


@pytest.mark.parametrize("mech", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_reserved_m_attribute_is_refused_on_both_sides(mech):
    """Defect 3: RFC 5802 (5.1) says a first message carrying m= must fail."""
    clients, servers = registries()
    with pytest.raises(ProtocolError) as e:
        ServerExchange(servers, mech).step(b"n,,m=ext,n=alice,r=abc", T0)
    assert e.value.name == "SCRAM_RESERVED_ATTRIBUTE" and e.value.code == 222
    client = ClientExchange(clients, mech)
    first, _ = client.start(T0)
    nonce = first.split(b",r=", 1)[1]
    with pytest.raises(ProtocolError) as e:
        client.step(b"m=x,r=" + nonce + b"xyz,s=QUJD,i=4096", T0)
    assert e.value.name == "SCRAM_RESERVED_ATTRIBUTE"


@pytest.mark.parametrize("version", [0, 1, 2])
def test_successful_authenticate_response_has_an_empty_message(version):
    """Defect 6: Kafka 4.4 answers a successful SaslAuthenticate with an empty error message,
    not a null one."""
    _, servers = registries()
    conn = ServerConnection(ServerConfig(servers, max_reauth_ms=10_000))
    handshake = struct.pack(">hhih", 17, 1, 1, -1) + struct.pack(">h", 5) + b"PLAIN"
    assert conn.handle_frame(handshake, T0)[0] == "continue"
    plain = b"\0alice\0alice-secret"
    if version < 2:
        request = struct.pack(">hhih", 36, version, 2, -1) + struct.pack(">i", len(plain)) + plain
    else:  # flexible: tagged fields after the header and the body, compact bytes
        request = struct.pack(">hhihB", 36, 2, 2, -1, 0) + bytes([len(plain) + 1]) + plain + b"\0"
    action, out, _, _ = conn.handle_frame(request, T0)
    assert action == "authenticated"
    body = {
        0: b"\0\0" + b"\0\0" + b"\0\0\0\0",
        1: b"\0\0" + b"\0\0" + b"\0\0\0\0" + struct.pack(">q", 10_000),
        2: b"\0" + b"\0\0" + b"\x01" + b"\x01" + struct.pack(">q", 10_000) + b"\0",
    }[version]
    want = struct.pack(">i", 2) + body
    assert out == struct.pack(">i", len(want)) + want


def test_errors_quote_little_of_the_peer():
    """Defect 4: a 30,000-character mechanism name (or any other peer field) appears in an
    error as at most 64 characters."""
    _, servers = registries()
    name = "M" * 30_000
    conn = ServerConnection(ServerConfig(servers))
    handshake = struct.pack(">hhih", 17, 1, 1, -1) + struct.pack(">h", len(name)) + name.encode()
    action, _, _, error = conn.handle_frame(handshake, T0)
    assert action in ("fail_at", "close_now") and error is not None
    assert error.name == "UNSUPPORTED_SASL_MECHANISM"
    assert len(str(error)) < 300 and "(30000 bytes)" in error.message, str(error)
    assert all(len(v) < 300 for v in error.details.values())
    with pytest.raises(KsaslError) as e:
        ServerExchange(servers, name)
    assert e.value.name == "UNKNOWN_MECHANISM" and len(str(e.value)) < 300, str(e.value)


def test_frame_sizes_are_checked_on_the_length_alone():
    """Defect 2: Kafka's limits apply to a frame's declared length, before the body is read."""
    clients, servers = registries()
    config = ServerConfig(servers, max_reauth_ms=10_000, max_request_size=1_000_000)
    conn = ServerConnection(config)
    assert conn.check_frame_size(524_288, T0) == 524_288
    with pytest.raises(ProtocolError) as e:
        conn.check_frame_size(100 * 1024 * 1024, T0)
    assert e.value.name == "MESSAGE_TOO_LARGE"
    assert e.value.message == "Failing SASL authentication due to invalid receive size"
    assert conn.gate(3, T0) == "close"
    with pytest.raises(ProtocolError) as e:
        ServerConnection(config).check_frame_size(-1, T0)
    assert e.value.name == "INVALID_FRAME_SIZE"
    with pytest.raises(KsaslError) as e:
        ServerConfig(servers, max_request_size=0)
    assert e.value.name == "INVALID_CONFIG"
