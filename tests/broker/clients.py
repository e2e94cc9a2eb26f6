"""The ksasl clients the broker tests run against the real broker (test_ksasl_clients.py with
passwords and tokens, test_gssapi_broker.py with Kerberos): PyClient, a Kafka client in Python
over a plain socket whose SASL and KIP-368 re-authentication run through the binding's
ksasl.ClientConnection; the C example client (examples/c/kafka_client.c) and the Java one
(KsaslJavaClient.java on the binding's jar), whose paths may be given by KSASL_C_CLIENT and
KSASL_JAR; and parse_metrics for the "metrics ..." line both print."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ksasl

from broker import java_bin

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
C_CLIENT = Path(os.environ.get("KSASL_C_CLIENT", ROOT / "target" / "c" / "kafka_client"))
VERSION = subprocess.run(
    [sys.executable, str(ROOT / "packaging" / "version.py")], check=True, capture_output=True, text=True
).stdout.strip()
JAR = Path(os.environ.get("KSASL_JAR", ROOT / "bindings" / "java" / "target" / f"ksasl-{VERSION}.jar"))

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


def now_ms() -> int:
    return int(time.time() * 1000)


def metadata_request(corr: int) -> bytes:
    cid = b"ksasl-python-client"
    body = struct.pack(">hhih", 3, 0, corr, len(cid)) + cid + struct.pack(">i", 0)
    return struct.pack(">i", len(body)) + body


class PyClient:
    """Sends Metadata v0 every 250 ms once authenticated. The mechanism's client comes from
    ``registry`` when given; otherwise OAUTHBEARER uses ``refresher`` (or an unsecured token
    for ``user``) and the password mechanisms ``user`` with ``password`` (or USERS[user])."""

    def __init__(self, port: int, mechanism: str, user: str = "alice", password: str | None = None,
                 reauth_timing: str = "kafka", refresher: ksasl.Refresher | None = None,
                 api_versions_version: int = 0, registry: ksasl.MechanismRegistry | None = None) -> None:
        if registry is not None:
            self.registry = registry
        else:
            self.registry = ksasl.MechanismRegistry()
            if mechanism == "OAUTHBEARER":
                if refresher is None:
                    refresher = ksasl.Refresher()
                    refresher.poll(now_ms())
                    t = ksasl.unsecured_oauth_token(user, lifetime_seconds=3600)
                    refresher.set_token(t["token"], t["expiry_ms"], t["principal"])
                self.registry.add_oauthbearer_client(refresher)
            else:
                self.registry.add_password_clients(user, password if password is not None else USERS[user])
        self.refresher = refresher
        self.config = ksasl.ClientConfig(self.registry, mechanism, client_id="ksasl-python-client",
                                         reauth_timing=reauth_timing,
                                         api_versions_version=api_versions_version)
        self.conn = ksasl.ClientConnection(self.config)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.settimeout(0.02)
        self.buf = b""
        self.sent = self.answered = self.reauths = 0
        self.events: list[tuple[str, int]] = []
        self.error: Exception | None = None
        self.closed_at: int | None = None
        self.authenticated_at: int | None = None
        self.before_reauth = None  # called with (client, now) when a re-authentication is due

    def _frames(self):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return
        if not data:
            raise ConnectionResetError("closed by the broker")
        self.buf += data
        while len(self.buf) >= 4:
            (n,) = struct.unpack(">i", self.buf[:4])
            if len(self.buf) < 4 + n:
                break
            frame, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
            yield frame

    def flush(self) -> None:
        out = self.conn.transmit()
        if out:
            self.sock.sendall(out)

    def step(self, now: int, send_requests: bool = True) -> None:
        if self.authenticated_at is not None:
            deadline = self.conn.next_deadline()
            if deadline is not None and now >= deadline and self.before_reauth is not None:
                self.before_reauth(self, now)
            self.conn.handle_timeout(now)
            if send_requests and now >= getattr(self, "_next", 0) and self.conn.before_request(now):
                self.sock.sendall(metadata_request(self.sent))
                self.sent += 1
                self._next = now + 250
        self.flush()
        for frame in self._frames():
            event, _, _ = self.conn.handle_frame(frame, now_ms())  # raises when authentication fails
            if event == "application":
                self.answered += 1
            elif event != "continue":
                self.events.append((event, now_ms()))
                if event == "authenticated":
                    self.authenticated_at = now_ms()
                elif event == "reauthenticated":
                    self.reauths += 1
            self.flush()

    def run(self, duration_ms: int) -> None:
        t0 = now_ms()
        self.conn.start(t0)
        try:
            while now_ms() - t0 < duration_ms:
                self.step(now_ms())
            end = now_ms() + 2000
            while self.answered < self.sent and now_ms() < end:
                self.step(now_ms(), send_requests=False)
        except ConnectionResetError as e:
            self.closed_at = now_ms()
            self.error = e
        except ksasl.KsaslError as e:
            self.error = e
        finally:
            self.sock.close()

    def metric(self, name: str) -> float:
        return self.config.metrics()[name]


def delta(after: dict, before: dict, key: str) -> float:
    """How much a broker counter (socket_server_metrics) moved between two readings."""
    return (after.get(key) or 0) - (before.get(key) or 0)


def parse_metrics(output: str) -> dict:
    """The client's own SASL metrics from the line starting with "metrics"."""
    line = next(ln for ln in output.splitlines() if ln.startswith("metrics"))
    return {k: float(v) for k, v in re.findall(r"(\S+)=(\S+)", line)}


@contextlib.contextmanager
def compiled_java_client():
    """KsaslJavaClient compiled against the binding's jar, in a temporary class folder; run it
    with java -cp JAR:<folder> KsaslJavaClient ..."""
    assert JAR.is_file(), f"{JAR} is missing: run make java-binding"
    out = Path(tempfile.mkdtemp(prefix="ksasl-java-client-"))
    try:
        subprocess.run([java_bin("javac"), "-d", str(out), "-cp", str(JAR), str(HERE / "KsaslJavaClient.java")],
                       check=True)
        yield out
    finally:
        shutil.rmtree(out, ignore_errors=True)
