"""One client.properties, two clients: Kafka's Java client 4.4 and ksasl's (ClientSetup, which
reads the file the way the core reads it), against the real Kafka 4.4 broker. For each
configuration both must use the same mechanism, be authenticated by the broker as the same
principal (the owner of a delegation token the broker creates for the connection), and, for
OAUTHBEARER, schedule the token refresh alike (Kafka's sasl.login.refresh.* rule: Kafka's
login logs when it will refresh; ksasl's refresher says when it is due).

ksasl's clients: the Python binding's ClientSetup here, and through the C binding the same
file in tests/c (test_client_setup.c) and through Java ClientSetupTest; the comparison with
Kafka's client is made here, where both reach the same broker."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

import ksasl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from broker import LIB_DIR, KafkaBroker, _compiled, java_bin  # noqa: E402
from test_delegation_tokens import Conn  # noqa: E402

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
QUICK_REFRESH = ("sasl.login.refresh.window.factor=0.5\nsasl.login.refresh.window.jitter=0\n"
                 "sasl.login.refresh.min.period.seconds=0\nsasl.login.refresh.buffer.seconds=0\n")

CONFIGS = {
    "plain": f'sasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required username="alice" password="alice-secret";\n',
    "scram-256": f'sasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config={SCRAM} required \\\n  username="bob" password="bob-secret";\n',
    "scram-512": f'sasl.mechanism: SCRAM-SHA-512\nsasl.jaas.config = {SCRAM} required username=alice password="alice-secret" ;\n',
    # Kafka's defaults: refresh at 80-85 % of a 40 s token (the buffer and minimum period
    # do not fit in it).
    "oauthbearer": f'sasl.mechanism=OAUTHBEARER\nsasl.jaas.config={OAUTH} required \\\n  unsecuredLoginStringClaim_sub="carol" unsecuredLoginLifetimeSeconds="40";\n',
    # Configured: exactly half of the token's life.
    "oauthbearer-configured": QUICK_REFRESH + f'sasl.mechanism=OAUTHBEARER\nsasl.jaas.config={OAUTH} required unsecuredLoginStringClaim_sub="dave" unsecuredLoginLifetimeSeconds="40";\n',
}
EXPECTED = {"plain": ("PLAIN", "User:alice"), "scram-256": ("SCRAM-SHA-256", "User:bob"),
            "scram-512": ("SCRAM-SHA-512", "User:alice"), "oauthbearer": ("OAUTHBEARER", "User:carol"),
            "oauthbearer-configured": ("OAUTHBEARER", "User:dave")}
# (lowest, highest) refresh delay as a fraction of the token's life.
SCHEDULE = {"oauthbearer": (0.80, 0.85), "oauthbearer-configured": (0.5, 0.5)}

LOG4J2 = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders><File name="f" fileName="${sys:ksasl.log.file}"><PatternLayout pattern="%m%n"/></File></Appenders>
  <Loggers>
    <Logger name="org.apache.kafka.common.security.oauthbearer.internals.expiring" level="INFO"/>
    <Root level="WARN"><AppenderRef ref="f"/></Root>
  </Loggers>
</Configuration>
"""


@pytest.fixture(scope="module")
def broker():
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime")
    with KafkaBroker(USERS, reauth_ms=60_000) as b:
        yield b


def file_of(tmp_path: Path, name: str) -> Path:
    p = tmp_path / f"{name}.properties"
    p.write_text("security.protocol=SASL_PLAINTEXT\n" + CONFIGS[name])
    return p


def log_time(text: str) -> int:
    """Log4j2's rendering of a java.util.Date, in ms since the epoch."""
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000)


def kafka_client(broker: KafkaBroker, path: Path, tmp_path: Path) -> dict:
    cp = f"{LIB_DIR}/*"
    classes = _compiled(HERE / "SameConfigTool.java", cp)
    main = ["-cp", f"{cp}:{classes}", "SameConfigTool"] if classes else ["-cp", cp, str(HERE / "SameConfigTool.java")]
    (tmp_path / "log4j2.xml").write_text(LOG4J2)
    log = tmp_path / f"{path.stem}.log"
    cmd = [java_bin(), "-XX:TieredStopAtLevel=1", f"-Dlog4j2.configurationFile={tmp_path / 'log4j2.xml'}",
           f"-Dksasl.log.file={log}", *main, broker.bootstrap, str(path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    text = log.read_text() if log.exists() else ""
    valid = re.search(r"Expiring credential valid from (\S+) to (\S+)", text)
    until = re.search(r"re-login sleeping until: (\S+)", text)
    if valid and until:
        start, expiry = log_time(valid.group(1)), log_time(valid.group(2))
        out["refresh_fraction"] = (log_time(until.group(1)) - start) / (expiry - start)
    return out


def ksasl_client(broker: KafkaBroker, path: Path) -> dict:
    setup = ksasl.ClientSetup(path.read_text())
    out = {"mechanism": setup.mechanism}
    r = setup.refresher
    if r is not None:
        now = int(time.time() * 1000)
        assert r.run_due(now)
        token = r.current(now)
        out["refresh_fraction"] = (r.next_deadline() - now) / (token["expiry_ms"] - now)
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    conn = Conn.__new__(Conn)
    conn.conn = ksasl.ClientConnection(setup.config)
    conn.sock = __import__("socket").create_connection(("127.0.0.1", port), timeout=10)
    conn.buf, conn.corr = b"", 0
    try:
        conn.conn.start(int(time.time() * 1000))
        conn.pump_until(lambda ev: ev == "authenticated")
        answer = conn.call(lambda corr: ksasl.create_token_request(3, corr))
        out["owner"] = ksasl.parse_create_token_response(3, answer)["owner"]
    finally:
        conn.close()
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_kafkas_client_and_ksasls_read_a_file_alike(broker, name, tmp_path):
    path = file_of(tmp_path, name)
    theirs = kafka_client(broker, path, tmp_path)
    ours = ksasl_client(broker, path)
    mechanism, principal = EXPECTED[name]
    assert (theirs["mechanism"], theirs["owner"]) == (mechanism, principal), theirs
    assert (ours["mechanism"], ours["owner"]) == (mechanism, principal), ours
    if name in SCHEDULE:
        low, high = SCHEDULE[name]
        for who, got in (("kafka", theirs), ("ksasl", ours)):
            assert "refresh_fraction" in got, (who, got)
            assert low - 0.001 <= got["refresh_fraction"] <= high + 0.001, (who, got)
