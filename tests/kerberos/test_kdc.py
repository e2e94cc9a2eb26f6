"""The throw-away KDC of kdc.py: start, keytabs (good, wrong, stale), lifetimes, the CLI."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from kdc import REALM, Kdc  # noqa: E402


@pytest.fixture(scope="module")
def kdc():
    with Kdc(max_life="5m", principal_max_life={"minute": "1m"},
             principals=("alice", "bob", "kafka/localhost", "minute")) as k:
        yield k


def run(kdc, *cmd, ccache=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
    env.update(kdc.env(ccache))
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)


def test_started_quickly_on_loopback(kdc):
    assert kdc.is_running()
    assert kdc.startup_seconds < 5
    text = kdc.krb5_conf.read_text()
    assert f"kdc = 127.0.0.1:{kdc.port}" in text and "udp_preference_limit = 1" in text
    env = kdc.env()
    assert env["KRB5CCNAME"] == f"FILE:{kdc.dir}/ccache"
    assert Path(env["KRB5_CONFIG"]).parent == kdc.dir
    if shutil.which("ss"):
        for proto in ("-lntp", "-lnup"):
            lines = [ln for ln in subprocess.run(["ss", proto], capture_output=True, text=True).stdout.splitlines()
                     if f"pid={kdc.pid}," in ln]
            assert lines and all(f"127.0.0.1:{kdc.port} " in ln for ln in lines), lines


def test_kinit_with_keytab(kdc, tmp_path):
    cc = tmp_path / "cc"
    kdc.kinit_keytab("alice", ccache=cc)
    tickets = kdc.tickets(cc)
    assert [t["server"] for t in tickets] == [f"krbtgt/{REALM}@{REALM}"]
    # a service ticket for the broker principal
    res = run(kdc, "kvno", f"kafka/localhost@{REALM}", ccache=cc)
    assert res.returncode == 0, res.stderr
    assert f"kafka/localhost@{REALM}" in [t["server"] for t in kdc.tickets(cc)]


def test_wrong_key_keytab_refused(kdc, tmp_path):
    wrong = kdc.wrong_keytab("alice")
    res = kdc.kinit_keytab("alice", keytab=wrong, ccache=tmp_path / "cc", check=False)
    assert res.returncode != 0
    assert "Password incorrect" in res.stderr or "Preauthentication failed" in res.stderr, res.stderr
    kdc.kinit_keytab("alice", ccache=tmp_path / "cc")  # the real key still works


def test_stale_keytab_refused_after_key_change(kdc, tmp_path):
    stale = kdc.stale_keytab("bob")
    res = kdc.kinit_keytab("bob", keytab=stale, ccache=tmp_path / "cc", check=False)
    assert res.returncode != 0
    assert "Password incorrect" in res.stderr or "Preauthentication failed" in res.stderr, res.stderr
    kdc.kinit_keytab("bob", ccache=tmp_path / "cc")  # the rewritten keytab has the new key


def test_ticket_lifetimes(kdc, tmp_path):
    kdc.kinit_keytab("alice", ccache=tmp_path / "a")
    (tgt,) = kdc.tickets(tmp_path / "a")
    assert tgt["end"] - tgt["start"] == 300  # realm max_life
    kdc.kinit_keytab("minute", ccache=tmp_path / "m")
    (tgt,) = kdc.tickets(tmp_path / "m")
    assert tgt["end"] - tgt["start"] == 60  # per-principal max_life
    kdc.add_principal("short", max_life=10)
    kdc.kinit_keytab("short", ccache=tmp_path / "s", lifetime="1h")  # asks for more, gets 10 s
    (tgt,) = kdc.tickets(tmp_path / "s")
    assert tgt["end"] - tgt["start"] == 10


def test_expired_ticket_refused(kdc, tmp_path):
    kdc.add_principal("brief", max_life=2)
    cc = tmp_path / "cc"
    kdc.kinit_keytab("brief", ccache=cc)
    (tgt,) = kdc.tickets(cc)
    deadline = time.monotonic() + 2 + kdc.clockskew + 10
    while True:
        res = run(kdc, "kvno", f"kafka/localhost@{REALM}", ccache=cc)
        if res.returncode != 0:
            break
        assert time.monotonic() < deadline, "ticket still usable long after its end time"
        time.sleep(0.2)
    assert "expired" in res.stderr.lower(), res.stderr
    assert time.time() >= tgt["end"] - 1


def test_add_principal_without_keytab(kdc):
    assert kdc.add_principal("nokeytab", keytab=False) is None
    assert "nokeytab@KSASL.TEST" in kdc.kadmin("listprincs")
    assert kdc.principal("x/y") == "x/y@KSASL.TEST"


def test_cli_prints_json_when_ready_and_stops_on_sigterm(tmp_path):
    proc = subprocess.Popen([sys.executable, str(HERE / "kdc.py"), "--max-life", "1m",
                             "--principal", "carol:30s", "--wrong-keytab", "alice"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        assert info["realm"] == REALM and info["kdc"] == f"127.0.0.1:{info['port']}"
        assert set(info["keytabs"]) == {"alice", "bob", "kafka/localhost", "carol"}
        assert Path(info["wrong_keytabs"]["alice"]).exists()
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
        env.update(info["env"])
        env["KRB5CCNAME"] = f"FILE:{tmp_path}/cc"
        res = subprocess.run(["kinit", "-k", "-t", info["keytabs"]["carol"], info["principals"]["carol"]],
                             env=env, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, proc.stderr.read()
        assert not Path(info["dir"]).exists()
        with pytest.raises(ProcessLookupError):
            os.kill(info["pid"], 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ensure_installed_is_cheap_when_present_and_clear_when_not(monkeypatch):
    import kdc as kdc_module
    t0 = time.monotonic()
    paths = kdc_module.ensure_installed()
    assert all(paths.values()) and time.monotonic() - t0 < 0.5
    monkeypatch.setattr(kdc_module, "_which", lambda name: None if name == "krb5kdc" else "/bin/true")
    monkeypatch.setattr(kdc_module.os, "geteuid", lambda: 1000)
    with pytest.raises(kdc_module.KdcError, match="apt-get install -y krb5-kdc"):
        kdc_module.ensure_installed()
