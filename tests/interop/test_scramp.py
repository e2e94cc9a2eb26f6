"""Interop with an independent SCRAM implementation: Python's scramp.

scramp plays the client against the ksasl server and the server against the ksasl client,
for SCRAM-SHA-256 and SCRAM-SHA-512, with the right and a wrong password. ksasl runs as the
`stdio_peer` example binary (path in KSASL_STDIO_PEER), one base64 message per line.
"""

import base64
import os
import subprocess

import pytest
from scramp import ScramClient, ScramException, ScramMechanism

PEER = os.environ.get("KSASL_STDIO_PEER", "target/debug/examples/stdio_peer")
MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]


class Peer:
    """A running stdio_peer process, stopped by pid when the test ends."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [PEER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, message: str) -> None:
        self.proc.stdin.write(base64.b64encode(message.encode()).decode() + "\n")
        self.proc.stdin.flush()

    def read(self):
        line = self.proc.stdout.readline().strip()
        kind, _, rest = line.partition(" ")
        return kind, rest

    def close(self) -> int:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def b64(text: str) -> str:
    return base64.b64decode(text).decode()


@pytest.fixture(autouse=True)
def peer_binary_exists():
    assert os.path.exists(PEER), f"build the peer first: cargo build --example stdio_peer ({PEER})"


@pytest.mark.parametrize("mech", MECHANISMS)
def test_scramp_client_against_ksasl_server(mech):
    peer = Peer("server", mech, "alice", "alice-secret")
    client = ScramClient([mech], "alice", "alice-secret")
    peer.send(client.get_client_first())
    kind, rest = peer.read()
    assert kind == "CHALLENGE", rest
    client.set_server_first(b64(rest))
    peer.send(client.get_client_final())
    kind, rest = peer.read()
    assert kind == "DONE", rest
    server_final, principal = rest.split(" ", 1)
    assert principal == "User:alice"
    client.set_server_final(b64(server_final))  # raises if the signature is wrong
    assert peer.close() == 0


@pytest.mark.parametrize("mech", MECHANISMS)
def test_scramp_client_with_wrong_password_is_refused(mech):
    peer = Peer("server", mech, "alice", "alice-secret")
    client = ScramClient([mech], "alice", "not-the-password")
    peer.send(client.get_client_first())
    kind, rest = peer.read()
    assert kind == "CHALLENGE", rest
    client.set_server_first(b64(rest))
    peer.send(client.get_client_final())
    kind, rest = peer.read()
    assert kind == "ERR"
    assert rest.startswith("300 INVALID_CREDENTIALS"), rest
    assert "not-the-password" not in rest
    assert peer.close() == 1


@pytest.mark.parametrize("mech", MECHANISMS)
def test_ksasl_client_against_scramp_server(mech):
    m = ScramMechanism(mech)
    auth_info = m.make_auth_info("alice-secret", iteration_count=4096)
    server = m.make_server(lambda username: auth_info)
    peer = Peer("client", mech, "alice", "alice-secret")
    kind, rest = peer.read()
    assert kind == "SEND", rest
    server.set_client_first(b64(rest))
    peer.send(server.get_server_first())
    kind, rest = peer.read()
    assert kind == "SEND", rest
    server.set_client_final(b64(rest))  # raises if the proof is wrong
    peer.send(server.get_server_final())
    kind, rest = peer.read()
    assert (kind, rest) == ("DONE", "-")
    assert peer.close() == 0


@pytest.mark.parametrize("mech", MECHANISMS)
def test_ksasl_client_with_wrong_password_gets_scramp_error(mech):
    m = ScramMechanism(mech)
    auth_info = m.make_auth_info("alice-secret", iteration_count=4096)
    server = m.make_server(lambda username: auth_info)
    peer = Peer("client", mech, "alice", "wrong-password")
    kind, rest = peer.read()
    server.set_client_first(b64(rest))
    peer.send(server.get_server_first())
    kind, rest = peer.read()
    assert kind == "SEND", rest
    with pytest.raises(ScramException):
        server.set_client_final(b64(rest))
    final = server.get_server_final()
    assert final.startswith("e=")
    peer.send(final)
    kind, rest = peer.read()
    assert kind == "ERR"
    assert rest.startswith("211 SERVER_REPORTED_ERROR"), rest
    assert "invalid-proof" in rest
    assert peer.close() == 1


@pytest.mark.parametrize("mech", MECHANISMS)
def test_ksasl_client_detects_a_server_that_does_not_know_the_password(mech):
    """A scramp server holding another password's keys, which then claims success with its own
    signature: the ksasl client must refuse its server signature."""
    m = ScramMechanism(mech)
    auth_info = m.make_auth_info("alice-secret", iteration_count=4096)
    impostor_info = m.make_auth_info("something-else", iteration_count=4096, salt=auth_info[0])
    server = m.make_server(lambda username: auth_info)
    peer = Peer("client", mech, "alice", "alice-secret")
    kind, rest = peer.read()
    server.set_client_first(b64(rest))
    peer.send(server.get_server_first())
    kind, rest = peer.read()
    client_final = b64(rest)
    server.set_client_final(client_final)  # the genuine proof verifies
    # Sign the final message with the impostor's server key instead of the real one.
    from scramp.core import _make_auth_message, hmac as shmac

    auth_message = _make_auth_message(server.client_first_bare, server.server_first, client_final.rsplit(",p=", 1)[0])
    forged = "v=" + base64.b64encode(shmac(m.hf, impostor_info[2], auth_message)).decode()
    peer.send(forged)
    kind, rest = peer.read()
    assert kind == "ERR"
    assert rest.startswith("303 INVALID_SERVER_SIGNATURE"), rest
    assert peer.close() == 1


def test_scramp_vectors_match_ksasl_vectors():
    """scramp derives the same stored and server keys as the shared vector file."""
    import json

    here = os.path.dirname(__file__)
    with open(os.path.join(here, "..", "vectors", "scram.json")) as f:
        vectors = json.load(f)["vectors"]
    for v in vectors:
        m = ScramMechanism(v["mechanism"])
        salt = base64.b64decode(v["salt_b64"])
        salt_out, stored_key, server_key, iterations = m.make_auth_info(v["password"], iteration_count=v["iterations"], salt=salt)
        assert base64.b64encode(stored_key).decode() == v["stored_key_b64"], v["name"]
        assert base64.b64encode(server_key).decode() == v["server_key_b64"], v["name"]
