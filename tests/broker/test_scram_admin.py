"""KIP-554 (DescribeUserScramCredentials, AlterUserScramCredentials) answered by ksasl's
credential store (through the Python example broker, examples/python/kafka_server.py) and by
a real Kafka 4.4 broker, for the same request sequence, compared byte for byte.

The requests are encoded here by hand from Kafka's message schemas (both APIs have one
version, 0, flexible), so the peer's bytes do not come from ksasl's own encoder. Both servers
start with the same users (PLAIN and SCRAM-SHA-256/512 at 4096 iterations).

Two things differ by design and are normalised before comparing:
- Kafka lists a user's credentials in the order of a HashMap keyed by an enum (identity hash
  codes: not stable between JVMs); ksasl lists SCRAM-SHA-256 first. The credential infos of a
  user are sorted on both sides.
- The broker applies an alteration through its metadata log, so a describe right after it may
  not see it yet: after each alteration the broker is polled until its describe-all equals
  ksasl's (which is then itself a comparison).
Everything else (result order, error codes, messages, tagged fields) must be equal bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

import ksasl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "examples" / "python"))
from broker import KafkaBroker  # noqa: E402
from test_delegation_tokens import Conn  # noqa: E402

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
KSASL_TOOL = Path(os.environ.get("KSASL_TOOL", ROOT / "target" / "debug" / "ksasl"))
SHA256, SHA512 = 1, 2


# --- the two requests, encoded from Kafka's JSON schemas ---------------------------------

def uvarint(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def cstring(s: str) -> bytes:
    b = s.encode()
    return uvarint(len(b) + 1) + b


def cbytes(b: bytes) -> bytes:
    return uvarint(len(b) + 1) + b


def carray(items: Optional[List[bytes]]) -> bytes:
    if items is None:
        return uvarint(0)
    return uvarint(len(items) + 1) + b"".join(items)


TAGS = b"\x00"  # an empty tagged-field section


def request(api_key: int, corr: int, body: bytes, version: int = 0) -> bytes:
    client_id = b"scram-admin"
    header = struct.pack(">hhih", api_key, version, corr, len(client_id)) + client_id + TAGS
    frame = header + body
    return struct.pack(">i", len(frame)) + frame


def describe(users: Optional[List[str]]):
    body = carray(None if users is None else [cstring(u) + TAGS for u in users]) + TAGS
    return lambda corr: request(50, corr, body)


def salted(mechanism: int, password: str, salt: bytes, iterations: int) -> bytes:
    name = "sha256" if mechanism == SHA256 else "sha512"
    return hashlib.pbkdf2_hmac(name, password.encode(), salt, iterations)


def alter(deletions: List[Tuple[str, int]], upsertions: List[Tuple[str, int, int, str]]):
    dels = [cstring(n) + struct.pack(">b", m) + TAGS for n, m in deletions]
    ups = []
    for name, m, iterations, password in upsertions:
        salt = os.urandom(32)
        ups.append(cstring(name) + struct.pack(">bi", m, iterations) + cbytes(salt)
                   + cbytes(salted(m, password, salt, max(iterations, 1))) + TAGS)
    body = carray(dels) + carray(ups) + TAGS
    return lambda corr: request(51, corr, body)


# --- reading a DescribeUserScramCredentials response, to normalise it ---------------------

def read_uvarint(b: bytes, pos: int) -> Tuple[int, int]:
    n = shift = 0
    while True:
        c = b[pos]
        pos += 1
        n |= (c & 0x7F) << shift
        if c < 0x80:
            return n, pos
        shift += 7


def normalise_describe(frame: bytes) -> bytes:
    """The response with each user's credential infos sorted (bytes otherwise unchanged)."""
    out = bytearray(frame[:4 + 1 + 4 + 2])  # correlation id, header tags, throttle, error
    pos = len(out)
    n, p2 = read_uvarint(frame, pos)  # error message
    pos = p2 + max(n - 1, 0)
    out += frame[len(out):pos]
    n, pos2 = read_uvarint(frame, pos)  # results
    out += frame[pos:pos2]
    pos = pos2
    for _ in range(max(n - 1, 0)):
        start = pos
        ln, pos = read_uvarint(frame, pos)  # user
        pos += ln - 1
        pos += 2  # error code
        ln, pos = read_uvarint(frame, pos)  # error message
        pos += max(ln - 1, 0)
        out += frame[start:pos]
        k, pos2 = read_uvarint(frame, pos)  # credential infos
        out += frame[pos:pos2]
        pos = pos2
        infos = []
        for _ in range(max(k - 1, 0)):
            infos.append(frame[pos:pos + 6])
            assert frame[pos + 5] == 0  # no tagged fields
            pos += 6
        out += b"".join(sorted(infos))
        assert frame[pos] == 0
        out += frame[pos:pos + 1]
        pos += 1
    out += frame[pos:]
    return bytes(out)


# --- the servers ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kafka():
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime")
    with KafkaBroker(USERS, reauth_ms=60_000) as b:
        yield int(b.bootstrap.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def ours():
    from kafka_server import KafkaServer

    server = KafkaServer(max_reauth_ms=60_000, users=USERS)
    port = server.start_in_thread()
    try:
        yield server, port
    finally:
        server.stop_thread()


def login(port: int, user: str = "alice", password: str = "alice-secret",
          mechanism: str = "SCRAM-SHA-256") -> Conn:
    r = ksasl.MechanismRegistry()
    r.add_password_clients(user, password)
    return Conn(port, r, mechanism)


def call(c: Conn, build) -> bytes:
    return c.call(build)


SEQUENCE = [
    ("describe every user", describe(None), False),
    ("describe with an empty list", describe([]), False),
    ("describe named users, one twice, one unknown",
     describe(["bob", "nobody", "alice", "bob", "bob"]), False),
    ("upsert thirteen users (the result map doubles) and refuse five",
     alter([("nobody", SHA256), ("", SHA512), ("bob", 0)],
           [(f"user{i}", SHA256 if i % 2 else SHA512, 4096 + i, f"pw{i}") for i in range(13)]
           + [("low", SHA256, 4095, "x"), ("high", SHA512, 16385, "x"), ("odd", 3, 4096, "x"),
              ("user3", SHA512, 4096, "again")]), True),
    ("describe after the upserts", describe(None), False),
    ("describe some of them", describe(["user12", "user0", "user7", "low"]), False),
    ("delete one mechanism of a user, rotate another, delete an unknown one",
     alter([("alice", SHA512), ("user5", SHA256), ("ghost", SHA256)],
           [("bob", SHA256, 8192, "bob-rotated")]), True),
    ("describe at the end", describe(None), False),
    ("an empty alteration", alter([], []), False),
]


def test_describe_and_alter_answers_are_kafkas(kafka, ours):
    server, port = ours
    theirs_conn, ours_conn = login(kafka), login(port)
    try:
        for what, build, changes in SEQUENCE:
            frame = build(0)
            # One request frame, sent as is to both (same correlation id and bytes).
            theirs = call(theirs_conn, lambda corr: frame[:8] + struct.pack(">i", corr) + frame[12:])
            mine = call(ours_conn, lambda corr: frame[:8] + struct.pack(">i", corr) + frame[12:])
            if frame[5] == 50:
                theirs, mine = normalise_describe(theirs), normalise_describe(mine)
            assert mine == theirs, f"{what}:\n kafka {theirs.hex()}\n ksasl {mine.hex()}"
            if changes:
                mine_all = normalise_describe(call(ours_conn, describe(None)))
                deadline = time.monotonic() + 10
                while True:
                    theirs_all = normalise_describe(call(theirs_conn, describe(None)))
                    if theirs_all == mine_all or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                assert mine_all == theirs_all, f"after {what}:\n kafka {theirs_all.hex()}\n ksasl {mine_all.hex()}"
    finally:
        theirs_conn.close()
        ours_conn.close()
    # The changed credentials are the ones logins are checked against, on both.
    for p in (kafka, port):
        for attempt in range(40):
            try:
                login(p, "bob", "bob-rotated").close()
                break
            except ksasl.AuthenticationError:
                assert attempt < 39
                time.sleep(0.25)
        with pytest.raises(ksasl.AuthenticationError):
            login(p, "bob", "bob-secret")
        login(p, "user1", "pw1").close()  # SHA-256 for odd numbers
        login(p, "user2", "pw2", "SCRAM-SHA-512").close()
        with pytest.raises(ksasl.AuthenticationError):
            login(p, "alice", "alice-secret", "SCRAM-SHA-512")  # deleted
        login(p, "alice", "alice-secret", "SCRAM-SHA-256").close()


def test_a_version_kafka_does_not_have_closes_the_connection(kafka, ours):
    _, port = ours
    for p in (kafka, port):
        c = login(p)
        try:
            frame = describe(None)(1)
            bad = frame[:6] + struct.pack(">h", 1) + frame[8:]
            assert c.conn.before_request(int(time.time() * 1000))
            c.sock.sendall(bad)
            with pytest.raises((ConnectionError, OSError)):
                c._frame()
        finally:
            c.close()


def admin_properties(path: Path, password: str = "alice-secret") -> Path:
    path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
                    f'required username="alice" password="{password}";\n')
    return path


@pytest.mark.parametrize("server", ["kafka", "ksasl"])
def test_the_scram_credential_tool_sets_a_password_through_the_api(kafka, ours, server, tmp_path):
    """`ksasl scram-credential --bootstrap`: the credential it prints, set through
    AlterUserScramCredentials on a Kafka 4.4 broker and on ksasl's server, and read back."""
    port = kafka if server == "kafka" else ours[1]
    new_password = f"carol-{server}-secret"
    args = [str(KSASL_TOOL), "scram-credential", "--mechanism", "SCRAM-SHA-512", "--iterations",
            "8192", "--user", "carol", "--bootstrap", f"127.0.0.1:{port}", "--config"]
    r = subprocess.run(args + [str(admin_properties(tmp_path / "admin.properties"))],
                       input=new_password + "\n", capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "set: SCRAM-SHA-512 for carol" in r.stdout, out
    assert "described: carol: SCRAM-SHA-512=[iterations=8192]" in r.stdout, out
    assert new_password not in out and "alice-secret" not in out, "a password was printed"
    for attempt in range(40):
        try:
            login(port, "carol", new_password, "SCRAM-SHA-512").close()
            break
        except ksasl.AuthenticationError:
            assert attempt < 39, "the new credential never logged in"
            time.sleep(0.25)
    # A refused admin login: the broker's error, exit 1, nothing set, no password printed.
    r = subprocess.run(args + [str(admin_properties(tmp_path / "bad.properties", "wrong-pw"))],
                       input="other-secret\n", capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "failed: " in r.stdout and "set:" not in r.stdout, out
    assert "other-secret" not in out and "wrong-pw" not in out, "a password was printed"
    login(port, "carol", new_password, "SCRAM-SHA-512").close()
