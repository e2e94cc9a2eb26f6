"""The C++ GSSAPI example (examples/cpp/gssapi.cpp, through ksasl.hpp) against a real MIT KDC,
under valgrind: a keytab login, an exchange mapped to User:alice and capped at the service
ticket, a replayed token refused with KERBEROS_REPLAY; no memory errors, no leaks.

Needs target/cpp/gssapi (make test-kerberos builds it); KSASL_CPP_GSSAPI may name another."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from kdc import Kdc  # noqa: E402

EXAMPLE = Path(os.environ.get("KSASL_CPP_GSSAPI", HERE.parents[1] / "target" / "cpp" / "gssapi"))


@pytest.fixture(scope="module")
def kdc():
    with Kdc() as k:
        yield k


def test_the_cpp_example_authenticates_and_refuses_a_replay_under_valgrind(kdc):
    assert EXAMPLE.is_file(), f"{EXAMPLE} is missing: make test-kerberos builds it"
    cmd = [str(EXAMPLE), kdc.principal("alice"), str(kdc.keytab("alice")),
           kdc.principal("kafka/localhost"), str(kdc.keytab("kafka/localhost"))]
    if shutil.which("valgrind"):
        cmd = ["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
               "--error-exitcode=9", *cmd]
    env = {**os.environ, **kdc.env(ccache=kdc.dir / "never-written")}
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "=> User:alice" in r.stdout, r.stdout
    assert "KERBEROS_REPLAY" in r.stdout and "BAD" not in r.stdout, r.stdout
    assert not (kdc.dir / "never-written").exists(), "the keytab login wrote no credential cache"
