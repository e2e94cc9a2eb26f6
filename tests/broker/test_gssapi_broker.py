"""The real Kafka broker with a GSSAPI listener: Kafka's own Java client, and every ksasl client.

One MIT KDC (tests/kerberos/kdc.py) and one broker (kerberos=kdc) for the module, whose
3-second session lifetime forces a re-authentication every few seconds:

- kafka-clients 4.4 with JDK Kerberos (GssapiTool.java, Krb5LoginModule with alice's keytab)
  produces and consumes for 12 s; the broker's JMX counters must agree with the client's;
- ksasl's C, Python and Java clients, each logged in from a keytab with 1-minute tickets (and
  the C client once more with 2-minute tickets) run long enough for two ticket renewals, with
  no kinit anywhere and no credential cache written, and a Python client on a ticket cache
  filled once by kinit (kafka-python's setup), whose ticket ksasl renews at the KDC; every
  session ends in a re-authentication, the broker kills nothing, and its JMX counters agree
  with the clients';
- ksasl's GSSAPI server answers the broker's request sequences with the same bytes;
- aiokafka with ksasl.aiokafka and GSSAPI: a consumer group and a producer over five session
  lifetimes lose no connection and no message.

Run:  .venv/bin/python -m pytest -q tests/broker/test_gssapi_broker.py
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "kerberos"))
from broker import BrokerError, KafkaBroker, java_bin  # noqa: E402
from clients import C_CLIENT, JAR, PyClient, compiled_java_client, delta, parse_metrics  # noqa: E402
from kdc import Kdc  # noqa: E402
from test_wire_compare import Conn, authenticate_body, handshake, parse_authenticate  # noqa: E402

REAUTH_MS = 3000
RUN_SECONDS = 12
#: principals whose tickets (TGT and service tickets alike) last 1 and 2 minutes
SHORT_TICKETS = {"minute": 60, "twominutes": 120}


@pytest.fixture(scope="module")
def kdc():
    saved = dict(os.environ)
    with Kdc() as k:
        for name, life in SHORT_TICKETS.items():
            k.add_principal(name, max_life=f"{life}s")
        # ksasl's Python clients run in this process: MIT Kerberos reads KRB5_CONFIG and
        # friends when a context is made, so they are set before any GSSAPI call. The cache
        # named here must never appear: keytab logins keep their tickets in memory.
        os.environ.update(k.env(ccache=k.dir / "never-written"))
        try:
            yield k
        finally:
            os.environ.clear()
            os.environ.update(saved)


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


def test_ksasl_c_client_reauthenticates_with_gssapi_across_four_lifetimes(kafka, kdc):
    """ksasl's C client (examples/c/kafka_client.c: a keytab login, no kinit) against the real
    broker: at least 4 re-authentications over 4+ session lifetimes, no kill, and the broker's
    JMX counters move exactly as the client's metrics say."""
    assert C_CLIENT.is_file(), f"{C_CLIENT} is missing: run make target/c/kafka_client"
    env = dict(os.environ)  # the kdc fixture's KRB5_CONFIG, KRB5CCNAME, KRB5RCACHEDIR
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


# --- every ksasl client, on short tickets, across ticket renewals -------------------------------

#: how long each client runs: two logins after the first need 2 x 80-85 % of the ticket, plus margin
RENEWAL_RUN_MS = {60: 110_000, 120: 215_000}
LOGIN_LINE = re.compile(r"Kerberos login renewed")


@pytest.fixture(scope="module")
def fake_kinit(kdc):
    """A kinit first on PATH that leaves a mark if anything ever runs it."""
    bin_dir = kdc.dir / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    mark = kdc.dir / "kinit-was-run"
    script = bin_dir / "kinit"
    script.write_text(f"#!/bin/sh\ntouch '{mark}'\nexit 1\n")
    script.chmod(0o755)
    return bin_dir, mark


@pytest.fixture(scope="module")
def renewal_run(kafka, kdc, fake_kinit):
    """C, Python and Java clients on 1-minute tickets and the C client on 2-minute tickets, all
    at once against the broker, each logged in from its keytab and renewing on its own: the
    C client polls its login in its loop, the Python ones run BackgroundRefresher.kerberos, the
    Java one KerberosLogin.startRenewal; a second Python client's login reads a ticket cache
    filled once by the harness's kinit (by its full path, not the PATH one) and renews it."""
    import ksasl

    assert C_CLIENT.is_file(), f"{C_CLIENT} is missing: run make target/c/kafka_client"
    bin_dir, _ = fake_kinit
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    before = kafka.socket_server_metrics("GSSAPI")
    procs = {}
    with compiled_java_client() as classes:
        def start(key, cmd):
            procs[key] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        for name, life in SHORT_TICKETS.items():
            args = ["localhost", str(kafka.gssapi_port), "GSSAPI", kdc.principal(name), str(kdc.keytab(name)),
                    str(RENEWAL_RUN_MS[life]), "4"]
            start(("C", life), [str(C_CLIENT), *args])
            if life == 60:
                start(("Java", life), [java_bin(), "-Xcheck:jni", "-cp", f"{JAR}:{classes}", "KsaslJavaClient", *args])

        # Python: one client logged in from the keytab, and one on a ticket cache that the
        # user filled once with `kinit -r` (kafka-python's setup): ksasl renews the cache's
        # ticket at the KDC itself, as Kafka's client runs `kinit -R`.
        kdc.kinit_keytab("minute", ccache=kdc.dir / "user-cache", lifetime="60s", renewable="10m")
        user_cache = "FILE:" + str(kdc.dir / "user-cache")
        py = {}
        for kind, login in (
                ("keytab", ksasl.KerberosLogin(principal=kdc.principal("minute"), keytab=str(kdc.keytab("minute")))),
                ("cache", ksasl.KerberosLogin(ccache=user_cache))):
            login.login()
            registry = ksasl.MechanismRegistry()
            registry.add_gssapi_client(login, "kafka", "localhost")
            client = PyClient(kafka.gssapi_port, "GSSAPI", registry=registry)
            py[kind] = (client, login, login.ticket_end_ms, ksasl.BackgroundRefresher.kerberos(login),
                        threading.Thread(target=client.run, args=(RENEWAL_RUN_MS[60],)))
        for *_, thread in py.values():
            thread.start()
        results = {}
        try:
            for key, p in procs.items():
                out, _ = p.communicate(timeout=RENEWAL_RUN_MS[key[1]] / 1000 + 60)
                results[key] = (p.returncode, out)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
            for _, _, _, renewal, thread in py.values():
                thread.join(60)
                renewal.stop()
    time.sleep(1.0)  # let the broker record the closes
    after = kafka.socket_server_metrics("GSSAPI")
    return before, after, results, py


def _logins(client: str, out: str) -> int:
    if client == "C":  # one line per renewal after the first login
        return 1 + len(LOGIN_LINE.findall(out))
    m = re.search(r"Kerberos logins: (\d+) \((\d+) failed\)", out)
    assert m and m.group(2) == "0", out
    return int(m.group(1))


@pytest.mark.parametrize("client,life", [("C", 60), ("Python", 60), ("Java", 60), ("C", 120),
                                         ("Python-cache", 60)])
def test_ksasl_client_reauthenticates_across_ticket_renewals(renewal_run, client, life):
    """Each client outlives two of its tickets: it logged in at least three times (from its
    keytab, or from the renewed cache), re-authenticated at every session end (one per 3 s),
    and every request was answered."""
    _, _, results, py = renewal_run
    expected_reauths = RENEWAL_RUN_MS[life] // REAUTH_MS - 2
    if client.startswith("Python"):
        c, login, first_end, _, _ = py["cache" if client == "Python-cache" else "keytab"]
        assert c.error is None, c.error
        assert c.sent > 0 and c.answered == c.sent
        assert c.reauths >= expected_reauths, c.events
        assert c.metric("successful-reauthentication-total") == c.reauths
        assert login.logins >= 3 and login.failures == 0, (login.logins, login.failures)
        # the connection outlived its first ticket by more than one more ticket's life
        assert login.ticket_end_ms > first_end + 60_000, (login.ticket_end_ms, first_end)
        return
    code, out = results[(client, life)]
    assert code == 0, out
    m = re.search(r"(\d+) Metadata requests sent, (\d+) answered, (\d+) re-authentications", out)
    assert m and int(m.group(1)) == int(m.group(2)) > 0, out
    assert int(m.group(3)) >= expected_reauths, out
    assert parse_metrics(out)["successful-reauthentication-total"] == int(m.group(3)), out
    assert _logins(client, out) >= 3, out
    assert "WARNING in native method" not in out


def test_short_ticket_runs_agree_with_the_broker_and_never_ran_kinit(renewal_run, kdc, fake_kinit):
    before, after, results, py = renewal_run
    reauths = sum(parse_metrics(out)["successful-reauthentication-total"] for _, out in results.values())
    reauths += sum(c.metric("successful-reauthentication-total") for c, *_ in py.values())
    auths = sum(parse_metrics(out)["successful-authentication-total"] for _, out in results.values())
    auths += sum(c.metric("successful-authentication-total") for c, *_ in py.values())

    def d(key):
        return delta(after, before, key)

    assert auths == 5
    assert d("successful-authentication-total") == auths
    assert d("successful-reauthentication-total") == reauths
    assert d("failed-authentication-total") == 0 and d("failed-reauthentication-total") == 0
    assert d("expired-connections-killed-count") == 0
    _, mark = fake_kinit
    assert not mark.exists(), "something ran kinit"
    assert not (kdc.dir / "never-written").exists(), "a keytab login wrote a credential cache"


# --- aiokafka with ksasl.aiokafka -----------------------------------------------------------------

def test_aiokafka_with_gssapi_survives_session_ends_with_the_integration(kafka, kdc):
    """aiokafka's own GSSAPI has no re-authentication: the broker would close each connection
    when its 3-second session ends. With ksasl.aiokafka and a keytab login, a consumer group and
    a producer run for more than five session lifetimes: nothing is killed, nothing dropped,
    no rebalance, every message consumed."""
    import ksasl
    import ksasl.aiokafka as ka
    from test_aiokafka_broker import RUN_S, assert_nothing_lost, group_run

    login = ksasl.KerberosLogin(principal=kdc.principal("alice"), keytab=str(kdc.keytab("alice")))
    login.login()
    before = kafka.socket_server_metrics("GSSAPI")
    integration = ka.enable(kerberos_login=login)
    try:
        kw = dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI",
                  sasl_kerberos_service_name="kafka", sasl_kerberos_domain_name="localhost")
        r = asyncio.run(group_run(kafka.gssapi_bootstrap, "GSSAPI", RUN_S, kw=kw))
    finally:
        ka.disable()
    after = kafka.socket_server_metrics("GSSAPI")
    assert_nothing_lost(r, integration, before, after, REAUTH_MS)


# --- what a ksasl GSSAPI server sends, compared with the broker's -------------------------------

def _gssapi_runs(port: int, kdc, login) -> dict:
    """The same GSSAPI request sequences against one server (SaslHandshake v1, then
    SaslAuthenticate v0-2): what is compared of each answer. Kerberos tokens are random, so a
    token the server sends is compared by its length (or, for the optional mutual-auth reply,
    by its presence); every answer without a token, success or failure, byte for byte."""
    import ksasl

    def tokens(service="kafka", mutual=False):
        r = ksasl.MechanismRegistry()
        r.add_gssapi_client(login, service, "localhost", mutual)
        return ksasl.ClientExchange(r, "GSSAPI")

    def send(c, v, token):
        frame = c.request(36, v, authenticate_body(v, token))
        if frame is None:
            return "CLOSED", None
        corr, err, msg, auth, lifetime = parse_authenticate(v, frame)
        if auth:
            return ("token", corr, err, msg, len(auth), lifetime), auth
        return ("frame", frame.hex()), auth

    out = {}
    for v in (0, 1, 2):
        for mutual in (False, True):
            ex = tokens(mutual=mutual)
            first, _ = ex.start(int(time.time() * 1000))
            c = Conn(port)
            try:
                seen = [handshake(c, 1, "GSSAPI")]
                msg, done = first, False
                for _ in range(4):
                    record, auth = send(c, v, msg)
                    if mutual and record[0] == "token" and len(seen) == 1:
                        record = ("mutual-reply",) + record[1:4]  # its length is the acceptor's choice
                    seen.append(record)
                    if record == "CLOSED" or done:
                        break
                    msg, done = ex.step(auth)
                    if msg is None:
                        break
                out[f"v{v}_ok" + ("_mutual" if mutual else "")] = seen
            finally:
                c.close()

        def refused(name, first_token):
            c = Conn(port)
            try:
                seen = [handshake(c, 1, "GSSAPI"), send(c, v, first_token)[0]]
                if seen[-1] != "CLOSED":
                    seen.append(send(c, v, b"\x60\x00")[0])  # after a failure the server closes
                out[f"v{v}_{name}"] = seen
            finally:
                c.close()

        refused("garbage", b"\x60\x0a\x06\x09not-a-token")
        refused("not_a_gss_token", b"hello")
        refused("wrong_service", tokens(service="other").start()[0])
        # a replayed token: accepted once, then refused
        replay = tokens().start()[0]
        c = Conn(port)
        try:
            handshake(c, 1, "GSSAPI")
            assert send(c, v, replay)[0][0] == "token"
        finally:
            c.close()
        refused("replay", replay)
        # a good first token, then a final message that is not a wrap token
        ex = tokens()
        c = Conn(port)
        try:
            seen = [handshake(c, 1, "GSSAPI"), send(c, v, ex.start()[0])[0]]
            seen.append(send(c, v, b"not a wrap token")[0])
            if seen[-1] != "CLOSED":
                seen.append(send(c, v, b"x")[0])
            out[f"v{v}_bad_final"] = seen
        finally:
            c.close()
    return out


def test_ksasl_gssapi_server_answers_as_the_broker(kafka, kdc):
    """The Python example broker (ksasl's server) with GSSAPI, against the real broker, for the
    same request sequences: successful exchanges (with and without mutual authentication) and
    every refusal, in SaslAuthenticate v0, v1 and v2."""
    import ksasl
    sys.path.insert(0, str(HERE.parents[1] / "examples" / "python"))
    from kafka_server import KafkaServer

    if "other/localhost" not in kdc.keytabs:
        kdc.add_principal("other/localhost")
    login = ksasl.KerberosLogin(principal=kdc.principal("alice"), keytab=str(kdc.keytab("alice")))
    login.login()
    theirs = _gssapi_runs(kafka.gssapi_port, kdc, login)
    server = KafkaServer(max_reauth_ms=REAUTH_MS, keytab=str(kdc.keytab("kafka/localhost")),
                         principal=kdc.principal("kafka/localhost"))
    port = server.start_in_thread()
    try:
        ours = _gssapi_runs(port, kdc, login)
    finally:
        server.stop_thread()
    assert ours.keys() == theirs.keys() and len(ours) == 3 * 7
    differ = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not differ, differ


def test_ksasl_probe_with_gssapi(kafka, kdc, tmp_path):
    """`ksasl probe` with the JAAS entry Kafka's Java client would use (a keytab login, no
    kinit): authenticated as the keytab's principal, re-authenticated once, the broker's
    counters agreeing."""
    tool = Path(os.environ.get("KSASL_TOOL", HERE.parents[1] / "target" / "debug" / "ksasl"))
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        f'storeKey=true keyTab="{kdc.keytab("alice")}" principal="{kdc.principal("alice")}";\n')
    before = kafka.socket_server_metrics("GSSAPI")
    r = subprocess.run([str(tool), "probe", "--bootstrap", f"localhost:{kafka.gssapi_port}",
                        "--config", str(config), "--reauth", "1"],
                       env=dict(os.environ), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "config: SASL_PLAINTEXT GSSAPI (kerberos)"
    assert lines[2].startswith("listener mechanisms: ") and "GSSAPI" in lines[2]
    assert any(line.startswith(f"authenticated: Kerberos {kdc.principal('alice')} with GSSAPI")
               for line in lines), r.stdout
    assert f"session lifetime: {REAUTH_MS} ms" in lines
    assert any(line.startswith("re-authenticated 1/1") for line in lines), r.stdout
    after = kafka.socket_server_metrics("GSSAPI")
    assert after["successful-reauthentication-total"] - before.get("successful-reauthentication-total", 0) == 1
    # A keytab without the principal's key: the login fails and says what to check.
    config.write_text(config.read_text().replace(str(kdc.keytab("alice")), str(kdc.keytab("bob"))))
    r = subprocess.run([str(tool), "probe", "--bootstrap", f"localhost:{kafka.gssapi_port}",
                        "--config", str(config)], env=dict(os.environ), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    assert "failed: Kerberos login" in r.stdout and "likely: the keytab" in r.stdout, r.stdout
