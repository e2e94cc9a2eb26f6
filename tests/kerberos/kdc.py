"""A throw-away MIT Kerberos KDC on 127.0.0.1 for tests (realm KSASL.TEST).

Standard library only. From pytest::

    import sys, pathlib
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "kerberos"))
    from kdc import Kdc

    @pytest.fixture(scope="module")
    def kdc():
        with Kdc() as k:           # principals alice, bob, kafka/localhost, keytab for each
            yield k

    def test_x(kdc):
        env = {**os.environ, **kdc.env()}    # KRB5_CONFIG, KRB5_KDC_PROFILE, KRB5CCNAME, ...
        kdc.keytab("alice"); kdc.kinit_keytab("alice"); kdc.java_options()

From anything else (Rust, Java, a shell): ``python3 tests/kerberos/kdc.py`` prints one JSON
line once the KDC answers, then runs until SIGTERM/SIGINT and cleans up. See README.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from procs import set_pdeathsig, tail  # noqa: E402

REALM = "KSASL.TEST"
DEFAULT_PRINCIPALS = ("alice", "bob", "kafka/localhost")

#: binary -> Debian package providing it
BINARIES = {
    "krb5kdc": "krb5-kdc",
    "kdb5_util": "krb5-kdc",
    "kadmin.local": "krb5-admin-server",
    "kinit": "krb5-user",
    "klist": "krb5-user",
    "kvno": "krb5-user",
}
_SBIN_DIRS = ("/usr/sbin", "/sbin", "/usr/local/sbin")

_DURATION = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class KdcError(RuntimeError):
    """The KDC (or one of the MIT tools) failed; the message carries the relevant output."""


# --------------------------------------------------------------------------- installation

def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in _SBIN_DIRS:  # /usr/sbin is often missing from a non-root PATH
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def tool_paths() -> dict:
    """{binary: path or None} for the MIT tools the harness uses."""
    return {b: _which(b) for b in BINARIES}


def ensure_installed(quiet: bool = True) -> dict:
    """Make sure the MIT KDC and client tools exist; returns {binary: path}.

    When all are present this is a handful of stat() calls. Otherwise, as root, runs
    ``apt-get update && apt-get install -y krb5-kdc krb5-admin-server krb5-user``
    (non-interactive, serialised by a lock file); as another user raises KdcError.
    """
    paths = tool_paths()
    missing = [b for b, p in paths.items() if p is None]
    if not missing:
        return paths
    pkgs = sorted({BINARIES[b] for b in missing})
    if os.geteuid() != 0:
        raise KdcError(f"MIT Kerberos tools missing ({', '.join(missing)}) and not running as root; "
                       f"install them with: sudo apt-get install -y {' '.join(pkgs)}")
    apt = shutil.which("apt-get")
    if not apt:
        raise KdcError(f"MIT Kerberos tools missing ({', '.join(missing)}) and no apt-get; "
                       f"install the MIT krb5 KDC, admin tools and client tools")
    with open(Path(tempfile.gettempdir()) / "ksasl-krb5-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        paths = tool_paths()
        if all(paths.values()):
            return paths  # another process installed them meanwhile
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in ([apt, "update"],
                    [apt, "install", "-y", "--no-install-recommends", "krb5-kdc", "krb5-admin-server",
                     "krb5-user"]):
            if not quiet:
                print("[ksasl kdc]", " ".join(cmd), file=sys.stderr)
            res = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=900)
            if res.returncode != 0:
                raise KdcError(f"{' '.join(cmd)} failed (exit {res.returncode}):\n{res.stdout[-4000:]}")
        paths = tool_paths()
    still = [b for b, p in paths.items() if p is None]
    if still:
        raise KdcError(f"still missing after apt-get install: {', '.join(still)}")
    return paths


# --------------------------------------------------------------------------- helpers

def seconds(value) -> int:
    """'90', 90, '90s', '5m', '2h', '1d' -> seconds."""
    if isinstance(value, (int, float)):
        return int(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ValueError(f"bad duration {value!r} (use e.g. 30s, 5m, 2h, 1d)")
    return int(m.group(1)) * _UNITS[m.group(2)]


def _krb_duration(value) -> str:
    """A duration as MIT's profile/kadmin parser reads it ('300s' is fine for both)."""
    return f"{seconds(value)}s"


def free_udp_tcp_port(host: str = "127.0.0.1") -> int:
    """A port free for both TCP and UDP on host."""
    for _ in range(100):
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            t.bind((host, 0))
            port = t.getsockname()[1]
            u.bind((host, port))
            return port
        except OSError:
            continue
        finally:
            t.close()
            u.close()
    raise KdcError("no port free for both TCP and UDP on 127.0.0.1")


def _sweep_stale_dirs() -> None:
    """Remove temp dirs of test processes that were SIGKILLed (their KDC died with them)."""
    for d in Path(tempfile.gettempdir()).glob("ksasl-kdc-*"):
        try:
            owner = int((d / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except PermissionError:
            pass


def _principal_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


# keytab file format (MIT, version 0x0502), used to write keytabs holding wrong keys
def _read_keytab(path: Path) -> list[dict]:
    data = path.read_bytes()
    if data[:2] != b"\x05\x02":
        raise KdcError(f"{path}: not a version 0x0502 keytab")
    pos, out = 2, []
    while pos + 4 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if size <= 0:
            pos += -size
            continue
        rec, pos = data[pos:pos + size], pos + size
        p = 0
        (ncomp,) = struct.unpack_from(">H", rec, p)
        p += 2

        def counted(p):
            (n,) = struct.unpack_from(">H", rec, p)
            return rec[p + 2:p + 2 + n], p + 2 + n
        realm, p = counted(p)
        comps = []
        for _ in range(ncomp):
            c, p = counted(p)
            comps.append(c)
        name_type, timestamp, kvno8, enctype = struct.unpack_from(">IIBH", rec, p)
        p += 11
        key, p = counted(p)
        kvno = struct.unpack_from(">I", rec, p)[0] if len(rec) >= p + 4 else kvno8
        out.append({"realm": realm, "components": comps, "name_type": name_type, "timestamp": timestamp,
                    "kvno": kvno, "enctype": enctype, "key": key})
    return out


def _write_keytab(path: Path, entries: list[dict]) -> None:
    def counted(b: bytes) -> bytes:
        return struct.pack(">H", len(b)) + b
    blob = bytearray(b"\x05\x02")
    for e in entries:
        rec = struct.pack(">H", len(e["components"])) + counted(e["realm"])
        rec += b"".join(counted(c) for c in e["components"])
        rec += struct.pack(">IIBH", e["name_type"], e["timestamp"], e["kvno"] & 0xFF, e["enctype"])
        rec += counted(e["key"]) + struct.pack(">I", e["kvno"])
        blob += struct.pack(">i", len(rec)) + rec
    path.write_bytes(bytes(blob))
    path.chmod(0o600)


# --------------------------------------------------------------------------- the KDC

class Kdc:
    """An MIT krb5kdc for one realm, listening on 127.0.0.1:<port> (UDP and TCP).

    Arguments (all keyword, all optional):
      realm               realm name (KSASL.TEST)
      principals          principals created at start, each with its own keytab
                          (alice, bob, kafka/localhost)
      max_life            realm max ticket life and krb5.conf ticket_lifetime ('5m')
      max_renewable_life  realm max renewable life and krb5.conf renew_lifetime ('10m')
      principal_max_life  {principal: life} overriding max_life for some principals
      clockskew           seconds of allowed clock skew for KDC and clients (5), kept small so
                          that an expired ticket is really refused a few seconds after expiry
      preauth             require pre-authentication of every principal (True, like Active
                          Directory and FreeIPA): a wrong client key is then refused by the KDC
                          (PREAUTH_FAILED) instead of failing to decrypt the AS reply
      directory           use this directory (created if needed, kept after stop) instead of a
                          fresh /tmp/ksasl-kdc-XXXX (deleted on stop)
      startup_timeout     seconds to wait for the KDC to answer on its TCP port
      keep_dir            do not delete the temp directory on stop
    """

    def __init__(self, *, realm: str = REALM, principals=DEFAULT_PRINCIPALS, max_life="5m",
                 max_renewable_life="10m", principal_max_life: dict | None = None,
                 clockskew: int = 5, preauth: bool = True, directory: str | os.PathLike | None = None,
                 startup_timeout: float = 15.0, keep_dir: bool = False):
        self.realm = realm
        self.initial_principals = list(principals)
        self.max_life = seconds(max_life)
        self.max_renewable_life = seconds(max_renewable_life)
        self.principal_max_life = {k: seconds(v) for k, v in (principal_max_life or {}).items()}
        self.clockskew = int(clockskew)
        self.preauth = preauth
        self.requested_dir = Path(directory).resolve() if directory else None
        self.startup_timeout = startup_timeout
        self.keep_dir = keep_dir or self.requested_dir is not None

        self.dir: Path | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.keytabs: dict[str, Path] = {}
        self.startup_seconds: float | None = None
        self._tools: dict = {}

    # ---- paths and settings

    @property
    def krb5_conf(self) -> Path:
        return self._need_dir() / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self._need_dir() / "kdc.conf"

    @property
    def ccache(self) -> Path:
        """The FILE: credential cache named by env()['KRB5CCNAME'] (may not exist yet)."""
        return self._need_dir() / "ccache"

    @property
    def log_path(self) -> Path:
        return self._need_dir() / "kdc.log"

    @property
    def kdc_address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _need_dir(self) -> Path:
        if self.dir is None:
            raise KdcError("KDC not started")
        return self.dir

    def principal(self, name: str) -> str:
        """'alice' -> 'alice@KSASL.TEST' (names already holding '@' are returned as is)."""
        return name if "@" in name else f"{name}@{self.realm}"

    def keytab(self, name: str) -> Path:
        """The keytab of a principal created with keytab=True (e.g. 'alice', 'kafka/localhost')."""
        return self.keytabs[name.split("@")[0]]

    def env(self, ccache: str | os.PathLike | None = None) -> dict:
        """Environment variables that point MIT libraries and tools at this KDC only:
        KRB5_CONFIG, KRB5_KDC_PROFILE, KRB5CCNAME (FILE: cache in the temp dir, never the
        user's), KRB5RCACHEDIR (replay caches of MIT acceptors stay in the temp dir).
        Merge it into os.environ yourself: {**os.environ, **kdc.env()}."""
        d = self._need_dir()
        cc = ccache if ccache is not None else self.ccache
        cc = str(cc)
        if ":" not in cc.split("/")[0]:
            cc = "FILE:" + cc
        return {"KRB5_CONFIG": str(d / "krb5.conf"), "KRB5_KDC_PROFILE": str(d / "kdc.conf"),
                "KRB5CCNAME": cc, "KRB5RCACHEDIR": str(d)}

    def java_options(self) -> list[str]:
        """JVM flags for JDK Kerberos (Krb5LoginModule / GSSAPI) against this KDC."""
        return [f"-Djava.security.krb5.conf={self.krb5_conf}"]

    def jaas_keytab_entry(self, name: str, keytab: str | os.PathLike | None = None) -> str:
        """Krb5LoginModule JAAS line for Kafka's sasl.jaas.config using a principal's keytab."""
        kt = str(keytab or self.keytab(name))
        return (f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
                f'keyTab="{kt}" principal="{self.principal(name)}";')

    def info(self) -> dict:
        """Everything a non-Python test needs, as printed by the CLI."""
        return {"realm": self.realm, "kdc": self.kdc_address, "port": self.port, "dir": str(self.dir),
                "pid": self.pid, "krb5_conf": str(self.krb5_conf), "kdc_conf": str(self.kdc_conf),
                "env": self.env(), "java_options": self.java_options(),
                "principals": {n: self.principal(n) for n in self.keytabs},
                "keytabs": {n: str(p) for n, p in self.keytabs.items()},
                "clockskew": self.clockskew, "max_life": self.max_life,
                "max_renewable_life": self.max_renewable_life,
                "startup_seconds": round(self.startup_seconds or 0, 3)}

    # ---- context manager

    def __enter__(self) -> "Kdc":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    # ---- lifecycle

    def start(self) -> "Kdc":
        if self.proc is not None:
            raise KdcError("KDC already started")
        t0 = time.monotonic()
        self._tools = ensure_installed()
        _sweep_stale_dirs()
        if self.requested_dir:
            self.requested_dir.mkdir(parents=True, exist_ok=True)
            if (self.requested_dir / "principal").exists():
                raise KdcError(f"{self.requested_dir} already holds a KDC database; use an empty directory")
            self.dir = self.requested_dir
        else:
            self.dir = Path(tempfile.mkdtemp(prefix="ksasl-kdc-"))
        (self.dir / "owner.pid").write_text(str(os.getpid()))
        try:
            self.port = free_udp_tcp_port()
            self._write_config()
            self._run([self._tools["kdb5_util"], "create", "-s", "-W", "-r", self.realm, "-P",
                       secrets.token_hex(16)], "kdb5_util create")
            for name in self.initial_principals:
                self.add_principal(name)
            for _attempt in range(3):
                self._spawn()
                if self._wait_ready():
                    break
                # lost the port to someone else: new port, new config, again
                self._kill()
                self.port = free_udp_tcp_port()
                self._write_config()
            else:
                raise KdcError(f"krb5kdc did not start:\n{tail(self.log_path)}")
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _write_config(self) -> None:
        d = self._need_dir()
        r = self.realm
        (d / "krb5.conf").write_text(f"""[libdefaults]
 default_realm = {r}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 clockskew = {self.clockskew}
 ticket_lifetime = {self.max_life}s
 renew_lifetime = {self.max_renewable_life}s
 forwardable = true
 ignore_acceptor_hostname = false

[realms]
 {r} = {{
  kdc = 127.0.0.1:{self.port}
 }}

[domain_realm]
 localhost = {r}
 .localhost = {r}
 127.0.0.1 = {r}
""")
        (d / "kdc.conf").write_text(f"""[kdcdefaults]
 kdc_listen = 127.0.0.1:{self.port}
 kdc_tcp_listen = 127.0.0.1:{self.port}

[realms]
 {r} = {{
  database_name = {d}/principal
  key_stash_file = {d}/stash
  acl_file = {d}/kadm5.acl
  kdc_listen = 127.0.0.1:{self.port}
  kdc_tcp_listen = 127.0.0.1:{self.port}
  max_life = {self.max_life}s
  max_renewable_life = {self.max_renewable_life}s
  default_principal_flags = {"+preauth" if self.preauth else "-preauth"}
 }}

[logging]
 kdc = FILE:{d}/kdc.log
 admin_server = FILE:{d}/kadmin.log
 default = FILE:{d}/krb5lib.log
""")
        (d / "kadm5.acl").write_text("")

    def _tool_env(self, extra: dict | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
        env.update(self.env())
        env["LC_ALL"] = "C"
        env.update(extra or {})
        return env

    def _run(self, cmd: list, what: str, stdin: str | None = None, check: bool = True,
             extra_env: dict | None = None) -> subprocess.CompletedProcess:
        res = subprocess.run(cmd, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                             cwd=self.dir, env=self._tool_env(extra_env))
        if check and res.returncode != 0:
            raise KdcError(f"{what} failed (exit {res.returncode}):\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
        return res

    def kadmin(self, *queries: str) -> str:
        """Run kadmin.local queries (one process for all of them); returns stdout.
        kadmin.local exits 0 even when a query fails, so any unexpected stderr line is an error."""
        res = self._run([self._tools["kadmin.local"], "-r", self.realm], "kadmin.local",
                        stdin="".join(q + "\n" for q in queries))
        errors = [ln for ln in res.stderr.splitlines()
                  if ln.strip() and not ln.startswith(("No policy specified", "Authenticating as"))]
        if errors:
            raise KdcError("kadmin.local: " + "\n".join(errors) + "\nqueries: " + "; ".join(queries))
        return res.stdout

    def add_principal(self, name: str, keytab: bool = True, max_life=None, max_renewable_life=None,
                      password: str | None = None) -> Path | None:
        """Create a principal (random key unless a password is given); with keytab=True export its
        key to <dir>/<name>.keytab (returned, also in .keytabs). max_life / max_renewable_life
        (e.g. '1m', 300) cap its tickets below the realm's limits."""
        name = name.split("@")[0]
        if max_life is None:
            max_life = self.principal_max_life.get(name)
        opts = []
        if max_life is not None:
            opts.append(f'-maxlife "{_krb_duration(max_life)}"')
        if max_renewable_life is not None:
            opts.append(f'-maxrenewlife "{_krb_duration(max_renewable_life)}"')
        key = f'-pw "{password}"' if password is not None else "-randkey"
        queries = [f"addprinc {key} {' '.join(opts)} {self.principal(name)}"]
        path = None
        if keytab:
            path = self._need_dir() / f"{_principal_file_name(name)}.keytab"
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            queries.append(f"ktadd -k {path} -norandkey {self.principal(name)}")
        self.kadmin(*queries)
        if path:
            if not path.exists():
                raise KdcError(f"ktadd wrote no keytab for {name}")
            path.chmod(0o600)
            self.keytabs[name] = path
        return path

    def stale_keytab(self, name: str) -> Path:
        """Export the principal's current key to <dir>/<name>.stale.keytab, then give the
        principal a new random key (kvno + 1) and rewrite its normal keytab. The returned
        keytab holds the OLD key at the OLD kvno, as after a password change."""
        name = name.split("@")[0]
        p = self._need_dir() / f"{_principal_file_name(name)}.stale.keytab"
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
        self.kadmin(f"ktadd -k {p} -norandkey {self.principal(name)}", f"cpw -randkey {self.principal(name)}")
        if name in self.keytabs:
            self.keytabs[name].unlink()
            self.kadmin(f"ktadd -k {self.keytabs[name]} -norandkey {self.principal(name)}")
        p.chmod(0o600)
        return p

    def wrong_keytab(self, name: str) -> Path:
        """<dir>/<name>.wrong.keytab: same principal, same kvno and enctypes as the real
        keytab, but random keys (the KDC's key is untouched)."""
        name = name.split("@")[0]
        entries = _read_keytab(self.keytab(name))
        for e in entries:
            e["key"] = secrets.token_bytes(len(e["key"]))
        p = self._need_dir() / f"{_principal_file_name(name)}.wrong.keytab"
        _write_keytab(p, entries)
        return p

    def kinit_keytab(self, name: str = "alice", keytab: str | os.PathLike | None = None,
                     ccache: str | os.PathLike | None = None, lifetime=None, renewable=None,
                     check: bool = True) -> subprocess.CompletedProcess:
        """kinit -k -t <keytab> into the harness ccache (or `ccache`). Returns the
        CompletedProcess (stdout/stderr text); raises KdcError on failure when check=True."""
        cc = self.env(ccache)["KRB5CCNAME"]
        cmd = [self._tools["kinit"], "-k", "-t", str(keytab or self.keytab(name)), "-c", cc]
        if lifetime is not None:
            cmd += ["-l", _krb_duration(lifetime)]
        if renewable is not None:
            cmd += ["-r", _krb_duration(renewable)]
        cmd.append(self.principal(name))
        return self._run(cmd, f"kinit {name}", check=check, extra_env={"KRB5CCNAME": cc})

    def tickets(self, ccache: str | os.PathLike | None = None) -> list[dict]:
        """Tickets in a ccache, parsed from `klist`: [{server, start, end, renew_until}] with
        times as epoch seconds (UTC interpretation of klist's local-time output, LC_ALL=C)."""
        cc = self.env(ccache)["KRB5CCNAME"]
        res = self._run([self._tools["klist"], "-c", cc], "klist", extra_env={"TZ": "UTC"})
        out = []
        stamp = r"(\d\d/\d\d/\d\d \d\d:\d\d:\d\d)"
        for ln in res.stdout.splitlines():
            m = re.match(rf"^{stamp}\s+{stamp}\s+(\S+)", ln)
            if m:
                out.append({"server": m.group(3), "start": _klist_time(m.group(1)),
                            "end": _klist_time(m.group(2)), "renew_until": None})
            m = re.match(rf"^\s+renew until {stamp}", ln)
            if m and out:
                out[-1]["renew_until"] = _klist_time(m.group(1))
        return out

    def _spawn(self) -> None:
        d = self._need_dir()
        cmd = [self._tools["krb5kdc"], "-n", "-r", self.realm, "-P", str(d / "krb5kdc.pid")]
        (d / "command.txt").write_text(" ".join(cmd) + "\n")
        with open(d / "kdc.console", "ab") as console:
            self.proc = subprocess.Popen(cmd, cwd=d, env=self._tool_env(), stdin=subprocess.DEVNULL,
                                         stdout=console, stderr=subprocess.STDOUT,
                                         preexec_fn=set_pdeathsig)

    def _wait_ready(self) -> bool:
        """Poll the TCP port; False if the KDC exited (e.g. port taken), KdcError on timeout."""
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout
        delay = 0.005
        while True:
            if self.proc.poll() is not None:
                text = tail(self.log_path) + tail(self._need_dir() / "kdc.console")
                if "Address already in use" in text:
                    return False
                raise KdcError(f"krb5kdc exited with status {self.proc.returncode}:\n{text}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
            if time.monotonic() > deadline:
                raise KdcError(f"krb5kdc not answering on 127.0.0.1:{self.port} after "
                               f"{self.startup_timeout:.0f} s:\n{tail(self.log_path)}")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _kill(self, timeout: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM the KDC by pid (SIGKILL after 10 s), then delete the temp dir."""
        self._kill()
        d, self.dir = self.dir, None
        if d is not None and not self.keep_dir:
            shutil.rmtree(d, ignore_errors=True)

    def __repr__(self):
        state = "running" if self.is_running() else "stopped"
        return f"<Kdc {self.realm} {state} 127.0.0.1:{self.port} dir={self.dir}>"


def _klist_time(s: str) -> int:
    import calendar
    return calendar.timegm(time.strptime(s, "%m/%d/%y %H:%M:%S"))


# --------------------------------------------------------------------------- CLI

def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(
        description="Run a throw-away MIT KDC on 127.0.0.1. Prints one JSON line (env, keytabs, ...) "
                    "once it answers, then runs until SIGTERM/SIGINT, stops the KDC and removes its "
                    "temp dir.")
    ap.add_argument("--dir", help="use this directory (created if missing, kept at exit)")
    ap.add_argument("--realm", default=REALM)
    ap.add_argument("--max-life", default="5m", help="realm max ticket life (e.g. 60s, 5m, 1h)")
    ap.add_argument("--max-renewable-life", default="10m")
    ap.add_argument("--clockskew", type=int, default=5, help="allowed clock skew in seconds")
    ap.add_argument("--principal", action="append", default=[], metavar="NAME[:MAXLIFE]",
                    help="extra principal with its own keytab (repeatable), e.g. carol or short:1m")
    ap.add_argument("--wrong-keytab", action="append", default=[], metavar="NAME",
                    help="also write NAME.wrong.keytab (right kvno, wrong key); listed under wrong_keytabs")
    ap.add_argument("--die-with-parent", action="store_true",
                    help="exit (cleanly) when the process that started this one dies (PR_SET_PDEATHSIG; "
                         "careful: fires when the spawning *thread* ends)")
    ap.add_argument("--exit-on-stdin-eof", action="store_true",
                    help="exit (cleanly) when stdin reaches EOF, e.g. when the driver holding the pipe dies")
    ap.add_argument("--pretty", action="store_true", help="indent the JSON (it is then several lines)")
    ap.add_argument("--exec", dest="command", nargs="*", metavar="COMMAND",
                    help="(the last option; everything after it is the command) "
                         "instead of printing and waiting: run COMMAND with the KDC's environment "
                         "(KRB5_CONFIG, KRB5CCNAME, KRB5RCACHEDIR, ...) and KSASL_KDC_INFO naming a "
                         "JSON file of the info, then stop the KDC; exits with COMMAND's status. For "
                         "processes that cannot set their own environment (a JVM, a C test)")
    argv = list(sys.argv[1:] if argv is None else argv)
    command = []
    if "--exec" in argv:
        at = argv.index("--exec")
        argv, command = argv[:at], [c for c in argv[at + 1:]]
        if command[:1] == ["--"]:
            command = command[1:]
        if not command:
            ap.error("--exec needs a command")
    a = ap.parse_args(argv)
    a.command = command

    stop = {"signal": None}

    def on_signal(signum, _frame):
        stop["signal"] = signum
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    if a.die_with_parent:
        set_pdeathsig()
        if os.getppid() == 1:
            return 1

    extra = []
    for spec in a.principal:
        name, _, life = spec.partition(":")
        extra.append((name, life or None))
    kdc = Kdc(realm=a.realm, max_life=a.max_life, max_renewable_life=a.max_renewable_life,
              clockskew=a.clockskew, directory=a.dir)
    try:
        kdc.start()
        for name, life in extra:
            kdc.add_principal(name, max_life=life)
        info = kdc.info()
        info["wrong_keytabs"] = {n: str(kdc.wrong_keytab(n)) for n in a.wrong_keytab}
        info["cli_pid"] = os.getpid()
        if a.command:
            info_path = kdc.dir / "kdc-info.json"
            info_path.write_text(json.dumps(info, indent=2))
            env = {**os.environ, **kdc.env(), "KSASL_KDC_INFO": str(info_path)}
            child = subprocess.Popen(a.command, env=env)
            while True:
                try:
                    return child.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    if stop["signal"] is not None:
                        child.terminate()
                        return child.wait()
        if stop["signal"] is None:
            print(json.dumps(info, indent=2 if a.pretty else None), flush=True)
        eof = []
        if a.exit_on_stdin_eof:
            import threading

            def watch():
                with contextlib.suppress(Exception):
                    while sys.stdin.buffer.read1(4096):
                        pass
                eof.append(1)
                os.kill(os.getpid(), signal.SIGTERM)
            threading.Thread(target=watch, daemon=True).start()
        while stop["signal"] is None and kdc.is_running():
            time.sleep(0.2)  # a signal handler sets stop; sleep resumes, so at most 0.2 s late
        if stop["signal"] is None and not kdc.is_running():
            print(f"[ksasl kdc] krb5kdc exited unexpectedly:\n{tail(kdc.log_path)}", file=sys.stderr)
            return 1
        return 0
    except KdcError as e:
        print(f"[ksasl kdc] {e}", file=sys.stderr)
        return 1
    finally:
        kdc.stop()


if __name__ == "__main__":
    sys.exit(main())
