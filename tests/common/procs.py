"""Small helpers shared by the test harnesses that start real servers (tests/kerberos/kdc.py,
tests/broker/broker.py, tests/oidc/keycloak.py). Standard library only."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def set_pdeathsig() -> None:
    """Run in a child before exec (``preexec_fn``): the kernel sends it SIGTERM when the
    harness process dies, so a killed test run leaves no server behind."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log (read from its last 64 KiB), for error messages."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            data = f.read().decode("utf-8", "replace")
        return "\n".join(data.splitlines()[-lines:])
    except OSError:
        return f"<{path} not readable>"
