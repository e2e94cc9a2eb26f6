"""The real Kafka broker with a GSSAPI listener, proven with Kafka's own Java client.

One MIT KDC (tests/kerberos/kdc.py) and one broker (kerberos=kdc) for the module. The
client is kafka-clients 4.4 with JDK Kerberos (GssapiTool.java, Krb5LoginModule with alice's
keytab), producing and consuming for 12 s while the broker's 3-second session lifetime
forces several re-authentications; the broker's JMX counters must agree with the client's.

Run:  .venv/bin/python -m pytest -q tests/broker/test_gssapi_broker.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "kerberos"))
from broker import BrokerError, KafkaBroker  # noqa: E402
from kdc import Kdc  # noqa: E402

REAUTH_MS = 3000
RUN_SECONDS = 12


@pytest.fixture(scope="module")
def kdc():
    with Kdc() as k:
        yield k


@pytest.fixture(scope="module")
def kafka(kdc):
    with KafkaBroker(kerberos=kdc, reauth_ms=REAUTH_MS) as b:
        yield b


def test_gssapi_listener_configuration(kafka, kdc):
    props = kafka.server_properties()
    assert f"GSSAPI://127.0.0.1:{kafka.gssapi_port}" in props["listeners"]
    assert f"GSSAPI://localhost:{kafka.gssapi_port}" in props["advertised.listeners"]
    assert props["listener.name.gssapi.sasl.enabled.mechanisms"].split(",")[0] == "GSSAPI"
    assert props["sasl.kerberos.service.name"] == "kafka"
    assert props["listener.name.gssapi.connections.max.reauth.ms"] == str(REAUTH_MS)
    assert 'principal="kafka/localhost@KSASL.TEST"' in props["listener.name.gssapi.gssapi.sasl.jaas.config"]
    assert kafka.gssapi_bootstrap == f"localhost:{kafka.gssapi_port}"
    if shutil.which("ss"):  # every listening socket of the broker JVM is on 127.0.0.1
        out = subprocess.run(["ss", "-lntpH"], capture_output=True, text=True).stdout
        # local address column: 127.0.0.1:<port> or [::ffff:127.0.0.1]:<port>
        local = [ln.split()[3] for ln in out.splitlines() if f"pid={kafka.proc.pid}," in ln]
        hosts = {addr.rsplit(":", 1)[0].strip("[]").replace("::ffff:", "") for addr in local}
        assert hosts == {"127.0.0.1"}, local
        assert any(addr.endswith(f":{kafka.gssapi_port}") for addr in local), local


def test_java_client_produces_consumes_and_reauthenticates(kafka):
    before = kafka.socket_server_metrics("GSSAPI")
    out = kafka.gssapi_client("alice", seconds=RUN_SECONDS)
    after = kafka.socket_server_metrics("GSSAPI")
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in (
        "successful-authentication-total", "failed-authentication-total",
        "successful-reauthentication-total", "failed-reauthentication-total")}

    assert out["principal"] == "User:alice"  # default principal.to.local rules
    assert out["produced"] > 0 and out["consumed"] == out["produced"] and out["missing"] == 0, out
    totals = out["totals"]
    assert totals["successful-reauthentication-total"] >= 3, out
    assert totals["failed-reauthentication-total"] == 0 and totals["failed-authentication-total"] == 0, out
    # producer and consumer each kept a connection busy across several session lifetimes
    for client in ("producer", "consumer"):
        assert out["client_metrics"][client]["successful-reauthentication-total"] >= 1, out
    # the broker saw the same
    assert delta["successful-reauthentication-total"] == totals["successful-reauthentication-total"], (delta, out)
    assert delta["successful-authentication-total"] == totals["successful-authentication-total"], (delta, out)
    assert delta["failed-authentication-total"] == 0 and delta["failed-reauthentication-total"] == 0, delta


def test_wrong_keytab_fails_at_client_login(kafka, kdc):
    before = kafka.socket_server_metrics("GSSAPI")
    with pytest.raises(BrokerError) as e:
        kafka.gssapi_client("alice", seconds=1, keytab=kdc.wrong_keytab("alice"))
    # the JDK's AS exchange fails, so the broker never sees an attempt
    assert "LoginException" in str(e.value) or "KrbException" in str(e.value), str(e.value)
    after = kafka.socket_server_metrics("GSSAPI")
    assert after.get("failed-authentication-total", 0) == before.get("failed-authentication-total", 0)


C_CLIENT = HERE.parents[1] / "target" / "c" / "kafka_client"


def test_ksasl_c_client_reauthenticates_with_gssapi_across_four_lifetimes(kafka, kdc):
    """ksasl's C client (examples/c/kafka_client.c: a keytab login, no kinit) against the real
    broker: at least 4 re-authentications over 4+ session lifetimes, no kill, and the broker's
    JMX counters move exactly as the client's metrics say."""
    assert C_CLIENT.is_file(), f"{C_CLIENT} is missing: run make target/c/kafka_client"
    import os
    env = {**os.environ, **kdc.env(ccache=kdc.dir / "never-written")}
    before = kafka.socket_server_metrics("GSSAPI")
    r = subprocess.run([str(C_CLIENT), "localhost", str(kafka.gssapi_port), "GSSAPI",
                        kdc.principal("alice"), str(kdc.keytab("alice")), str(5 * REAUTH_MS), "4"],
                       env=env, capture_output=True, text=True, timeout=60)
    after = kafka.socket_server_metrics("GSSAPI")
    assert r.returncode == 0, r.stdout + r.stderr
    metrics = dict(kv.split("=") for kv in r.stdout.split("metrics", 1)[1].split())
    reauths = int(float(metrics["successful-reauthentication-total"]))
    assert reauths >= 4, r.stdout
    assert after["successful-reauthentication-total"] - before.get("successful-reauthentication-total", 0) == reauths
    assert after["successful-authentication-total"] - before.get("successful-authentication-total", 0) == 1
    assert after.get("failed-authentication-total", 0) == before.get("failed-authentication-total", 0)
    assert not (kdc.dir / "never-written").exists(), "no kinit, no credential cache"
