"""A throw-away Keycloak (a real OpenID Connect provider) on 127.0.0.1 for tests, over HTTPS.

Standard library only, plus the ``openssl`` and ``mvn`` commands. From pytest::

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "oidc"))
    from keycloak import Keycloak

    with Keycloak() as kc:             # realm "ksasl": a client-secret client, a signed-JWT client
        kc.info()                       # issuer, token and JWKS endpoints, CA file, clients (JSON)
        kc.rotate_key()                 # a new signing key with higher priority; the old one disabled

The JWT-bearer grant (RFC 7523 §2.1, KIP-1139; Keycloak's "JWT Authorization Grant", a default
feature of Keycloak 26.7, so the build needs no ``--features``): every realm has an identity
provider of type ``jwt-authorization-grant`` that trusts assertions whose ``iss`` is
``info()["jwt_grant"]["issuer"]`` signed (RS256) by ``grant.key``, a user linked to it under the
``sub`` ``info()["jwt_grant"]["subject"]``, and both clients allowed to use it. Keycloak wants the
assertion's ``aud`` to be the realm's issuer (or its token endpoint), a ``jti`` (it refuses a
replay), an ``iat`` at most 300 s old, and the client to authenticate (a confidential client:
without client authentication it answers 401 ``invalid_client``).
``info()["jwt_grant"]``: ``issuer``, ``subject``, ``audience``, ``key_pem`` (the PKCS#8 key to sign
with), ``username`` (the user the token is issued for) and ``clients`` (the client ids allowed).

From anything else: ``python3 tests/oidc/keycloak.py --exec -- cmd ...`` runs ``cmd`` with
``KSASL_OIDC_INFO`` naming a JSON file of :meth:`Keycloak.info`, then stops Keycloak.

One server for many suites: ``python3 tests/oidc/keycloak.py --serve -- cmd ...`` launches one
Keycloak and runs ``cmd`` at once (while Keycloak boots) with ``KSASL_KEYCLOAK`` naming that
server. Every :class:`Keycloak` made under it (``--exec`` and ``--exit-on-stdin-eof`` too)
starts no process: it waits for the shared server and makes a realm of its own there (its own
clients, keys and token lifetime), deleted when it stops. ``make test`` runs its suites so.

What is cached, and where (``$KSASL_CACHE``, default ``~/.cache/ksasl``): the Keycloak
distribution from Maven Central (``org.keycloak:keycloak-quarkus-dist``), unpacked and built
once (``kc.sh build``: about a minute), and a database in which Keycloak has already
bootstrapped its master realm (about 30 s more). Each start copies that database into its own
directory, so a start takes about 15 to 30 s and leaves nothing behind. Each start also makes a
fresh CA, a server certificate for 127.0.0.1 signed by it, another CA that signed nothing
(for the unknown-CA test), a client key pair for ``private_key_jwt`` and the key of the
JWT-bearer grant's assertion issuer.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from certs import CertError, make_ca, make_server_cert  # noqa: E402
from procs import set_pdeathsig, tail  # noqa: E402

VERSION = "26.7.3"
REALM = "ksasl"
AUDIENCE = "kafka-broker"
ADMIN = ("ksasl-admin", "ksasl-admin-password")
# The JWT-bearer grant: the assertions' issuer (an identity provider of the realm), the subject
# they name and the Keycloak user that subject is linked to.
GRANT_IDP = "ksasl-assertion-issuer"
GRANT_ISSUER = "https://assertion-issuer.ksasl.test"
GRANT_SUBJECT = "kafka-grant-subject"
GRANT_USER = "kafka-grant-user"
JAVA_HOME = os.environ.get("KSASL_KEYCLOAK_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
CACHE = Path(os.environ.get("KSASL_CACHE", Path.home() / ".cache" / "ksasl"))
HOME = CACHE / f"keycloak-{VERSION}"
DIST = HOME / f"keycloak-{VERSION}"
TEMPLATE_DB = HOME / "template-db"
BUILD_OPTIONS = ["--db=dev-file", "--health-enabled=false", "--metrics-enabled=false"]


class KeycloakError(RuntimeError):
    """Keycloak (or a tool around it) failed; the message carries the relevant output."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _run(cmd: list, what: str, **kw) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise KeycloakError(f"{what} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p.stdout


def _java_env() -> dict:
    if not Path(JAVA_HOME, "bin", "java").exists():
        raise KeycloakError(f"Keycloak {VERSION} needs Java 21+: no JDK at {JAVA_HOME} "
                            "(set KSASL_KEYCLOAK_JAVA_HOME)")
    return {**os.environ, "JAVA_HOME": JAVA_HOME,
            "PATH": f"{JAVA_HOME}/bin:{os.environ.get('PATH', '')}"}


def _db_url(directory: Path) -> str:
    return f"jdbc:h2:file:{directory}/keycloakdb;NON_KEYWORDS=VALUE"


def ensure_dist(quiet: bool = True) -> Path:
    """The cached, built distribution and its template database, made on first use."""
    HOME.mkdir(parents=True, exist_ok=True)
    with open(HOME / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = HOME / ".complete"
        if marker.exists() and marker.read_text().strip() == VERSION:
            return DIST
        say = (lambda m: None) if quiet else (lambda m: print(f"keycloak: {m}", file=sys.stderr))
        shutil.rmtree(DIST, ignore_errors=True)
        shutil.rmtree(TEMPLATE_DB, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            say(f"fetching org.keycloak:keycloak-quarkus-dist:{VERSION} (about 180 MB) with Maven")
            _run(["mvn", "-q", "-B", "dependency:copy",
                  f"-Dartifact=org.keycloak:keycloak-quarkus-dist:{VERSION}:zip",
                  f"-DoutputDirectory={tmp}"], "mvn dependency:copy")
            _run(["unzip", "-q", f"{tmp}/keycloak-quarkus-dist-{VERSION}.zip", "-d", str(HOME)],
                 "unzip")
        say("building (kc.sh build)")
        _run([str(DIST / "bin" / "kc.sh"), "build", *BUILD_OPTIONS], "kc.sh build",
             env=_java_env(), cwd=DIST)
        say("bootstrapping the template database")
        with tempfile.TemporaryDirectory() as tmp:
            kc = Keycloak(_bootstrap=True, _certs_dir=Path(tmp))
            kc._db = TEMPLATE_DB
            TEMPLATE_DB.mkdir()
            kc._launch()
            kc.stop()
        marker.write_text(VERSION)
        return DIST


def _openssl(*args: str, cwd: Path) -> None:
    _run(["openssl", *args], "openssl " + args[0], cwd=cwd)


def make_certificates(d: Path) -> None:
    """ca.pem (+ key), server.pem/server.key for 127.0.0.1 and localhost, other-ca.pem,
    client.key (PKCS#8 RSA) with client.pem (self-signed) for private_key_jwt, and grant.key
    (PKCS#8 RSA) that signs the JWT-bearer grant's assertions."""
    try:
        make_ca(d, "ca", "ksasl test CA")
        make_ca(d, "other-ca", "ksasl unrelated CA")
        make_server_cert(d, "server", ca="ca", ips=("127.0.0.1",), dns=("localhost",))
    except CertError as e:
        raise KeycloakError(str(e)) from e
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key",
             "-out", "client.pem", "-days", "2", "-subj", "/CN=kafka-jwt", cwd=d)
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
             "-out", "grant.key", cwd=d)


class Keycloak:
    """One Keycloak process with the realm ``ksasl``: see the module documentation."""

    def __init__(self, *, token_lifespan_s: int = 60, _bootstrap: bool = False,
                 _certs_dir: Path | None = None, _server_only: bool = False):
        self.token_lifespan_s = token_lifespan_s
        self._bootstrap = _bootstrap
        self.proc: subprocess.Popen | None = None
        self.client_secret = "kafka-secret-" + secrets.token_hex(8)
        shared = os.environ.get("KSASL_KEYCLOAK")
        # Under `--serve`: a realm of its own on the shared server, no process.
        self._shared = bool(shared) and not (_bootstrap or _certs_dir or _server_only)
        self._make_realm_on_start = not _server_only
        if self._shared:
            server = json.loads(Path(shared).read_text())
            self._tmp, self.dir, self.port = None, Path(server["dir"]), server["port"]
            self._server_pid = server["pid"]
            self.realm = f"{REALM}-{secrets.token_hex(4)}"
        else:
            self._tmp = (None if _certs_dir
                         else tempfile.TemporaryDirectory(prefix="ksasl-keycloak-"))
            self.dir = _certs_dir or Path(self._tmp.name)
            self.port = free_port()
            self.realm = REALM
            make_certificates(self.dir)
        self._db = self.dir / "db"
        self._ssl = ssl.create_default_context(cafile=str(self.dir / "ca.pem"))

    @classmethod
    def attached(cls, info: dict) -> "Keycloak":
        """A handle on a running Keycloak described by :meth:`info` (for its admin calls)."""
        kc = cls.__new__(cls)
        kc.token_lifespan_s, kc.port = info["token_lifespan_s"], info["port"]
        kc.realm, kc._shared = info.get("realm", REALM), False
        kc.client_secret = info["secret_client"]["secret"]
        kc.dir, kc._tmp, kc.proc, kc._bootstrap = Path(info["ca_pem"]).parent, None, None, False
        kc._ssl = ssl.create_default_context(cafile=info["ca_pem"])
        return kc

    # --- addresses ---
    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return f"{self.base}/realms/{self.realm}"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/protocol/openid-connect/token"

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/protocol/openid-connect/certs"

    @property
    def log_path(self) -> Path:
        return self.dir / "keycloak.log"

    def info(self) -> dict:
        return {
            "issuer": self.issuer, "token_endpoint": self.token_endpoint,
            "jwks_uri": self.jwks_uri, "audience": AUDIENCE, "port": self.port,
            "ca_pem": str(self.dir / "ca.pem"), "other_ca_pem": str(self.dir / "other-ca.pem"),
            "secret_client": {"id": "kafka-secret", "secret": self.client_secret},
            "jwt_client": {"id": "kafka-jwt", "key_pem": str(self.dir / "client.key")},
            "jwt_grant": {"issuer": GRANT_ISSUER, "subject": GRANT_SUBJECT,
                          "audience": self.issuer, "key_pem": str(self.dir / "grant.key"),
                          "username": GRANT_USER, "clients": ["kafka-secret", "kafka-jwt"]},
            "token_lifespan_s": self.token_lifespan_s, "realm": self.realm,
            "pid": self._server_pid if self._shared else (self.proc and self.proc.pid),
            "shared": self._shared,
        }

    # --- life cycle ---
    def __enter__(self) -> "Keycloak":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "Keycloak":
        if self._shared:
            self._wait_ready(time.monotonic() + 240, self._server_pid)
            self._make_realm()
            return self
        ensure_dist()
        shutil.copytree(TEMPLATE_DB, self._db)
        try:
            self._launch()
            if self._make_realm_on_start:
                self._make_realm()
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, wait: bool = True) -> None:
        env = _java_env()
        if self._bootstrap:
            env["KC_BOOTSTRAP_ADMIN_USERNAME"], env["KC_BOOTSTRAP_ADMIN_PASSWORD"] = ADMIN
        cmd = [str(DIST / "bin" / "kc.sh"), "start", "--optimized", "--cache=local",
               f"--db-url={_db_url(self._db)}", "--hostname-strict=false",
               "--http-enabled=false", "--http-host=127.0.0.1", f"--https-port={self.port}",
               f"--https-certificate-file={self.dir / 'server.pem'}",
               f"--https-certificate-key-file={self.dir / 'server.key'}"]
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     cwd=DIST, preexec_fn=set_pdeathsig)
        log.close()
        if wait:
            self._wait_ready(time.monotonic() + 240, self.proc.pid)

    def _wait_ready(self, deadline: float, pid: int) -> None:
        """Polls the master realm's discovery document until it answers; KeycloakError if the
        process (``pid``) exits first or ``deadline`` passes."""
        while time.monotonic() < deadline:
            exited = self.proc.poll() is not None if self.proc else not _alive(pid)
            if exited:
                raise KeycloakError(f"Keycloak exited:\n{tail(self.log_path)}")
            with contextlib.suppress(OSError, urllib.error.URLError):
                self._get(f"{self.base}/realms/master/.well-known/openid-configuration")
                return
            time.sleep(0.25)
        raise KeycloakError(f"Keycloak did not answer within 240 s:\n{tail(self.log_path)}")

    def stop(self) -> None:
        if self._shared:
            self._shared = False  # once
            with contextlib.suppress(OSError, urllib.error.URLError, KeycloakError):
                self._send("DELETE", f"/{self.realm}")
            return
        p, self.proc = self.proc, None
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # --- HTTP ---
    def _get(self, url: str, token: str | None = None) -> object:
        req = urllib.request.Request(url)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(req, context=self._ssl, timeout=10) as r:
            body = r.read()
            return json.loads(body) if body else None

    def _send(self, method: str, path: str, body: object | None = None) -> None:
        req = urllib.request.Request(f"{self.base}/admin/realms{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
        req.add_header("Authorization", f"Bearer {self._admin_token()}")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self._ssl, timeout=30) as r:
                r.read()
        except urllib.error.HTTPError as e:
            raise KeycloakError(f"{method} {path}: HTTP {e.code} {e.read()[:500]!r}") from e

    def _admin_token(self) -> str:
        data = urllib.parse.urlencode({"grant_type": "password", "client_id": "admin-cli",
                                       "username": ADMIN[0], "password": ADMIN[1]}).encode()
        url = f"{self.base}/realms/master/protocol/openid-connect/token"
        with urllib.request.urlopen(url, data=data, context=self._ssl, timeout=30) as r:
            return json.load(r)["access_token"]

    def admin_get(self, path: str) -> object:
        return self._get(f"{self.base}/admin/realms{path}", self._admin_token())

    # --- the realm ---
    def _make_realm(self) -> None:
        der = subprocess.run(["openssl", "x509", "-in", str(self.dir / "client.pem"),
                              "-outform", "DER"], capture_output=True, check=True).stdout
        audience = {"name": "kafka-audience", "protocol": "openid-connect",
                    "protocolMapper": "oidc-audience-mapper",
                    "config": {"included.custom.audience": AUDIENCE,
                               "access.token.claim": "true", "id.token.claim": "false"}}
        service = {"enabled": True, "protocol": "openid-connect", "publicClient": False,
                   "serviceAccountsEnabled": True, "standardFlowEnabled": False,
                   "directAccessGrantsEnabled": False, "protocolMappers": [audience]}
        # Both clients may use the JWT-bearer grant with assertions of GRANT_IDP.
        grant = {"oauth2.jwt.authorization.grant.enabled": "true",
                 "oauth2.jwt.authorization.grant.idp": GRANT_IDP}
        self._send("POST", "", {
            "realm": self.realm, "enabled": True, "accessTokenLifespan": self.token_lifespan_s,
            "clients": [
                {**service, "clientId": "kafka-secret", "clientAuthenticatorType": "client-secret",
                 "secret": self.client_secret, "attributes": grant},
                {**service, "clientId": "kafka-jwt", "clientAuthenticatorType": "client-jwt",
                 "attributes": {"jwt.credential.certificate": base64.b64encode(der).decode(),
                                "token.endpoint.auth.signing.alg": "RS256", **grant}},
            ],
            **self._grant_issuer()})

    def _grant_issuer(self) -> dict:
        """The realm's part for the JWT-bearer grant: the identity provider that trusts
        GRANT_ISSUER's assertions (signed with grant.key, checked against its public key) and
        the user its subject GRANT_SUBJECT is linked to (Keycloak issues tokens only for a
        user linked to the provider under the assertion's ``sub``)."""
        spki = subprocess.run(["openssl", "pkey", "-in", str(self.dir / "grant.key"), "-pubout",
                               "-outform", "DER"], capture_output=True, check=True).stdout
        return {
            "identityProviders": [{
                "alias": GRANT_IDP, "providerId": "jwt-authorization-grant", "enabled": True,
                "config": {"issuer": GRANT_ISSUER, "useJwksUrl": "false",
                           "publicKeySignatureVerifier": base64.b64encode(spki).decode(),
                           "jwtAuthorizationGrantAssertionSignatureAlg": "RS256"}}],
            "users": [{
                "username": GRANT_USER, "enabled": True,
                "federatedIdentities": [{"identityProvider": GRANT_IDP, "userId": GRANT_SUBJECT,
                                         "userName": GRANT_SUBJECT}]}],
        }

    def signing_keys(self) -> list[dict]:
        """The realm's RS256 signing keys: kid, status, priority, providerId."""
        keys = self.admin_get(f"/{self.realm}/keys")["keys"]
        return [k for k in keys if k.get("algorithm") == "RS256" and k.get("use") == "SIG"]

    def rotate_key(self, priority: int = 200) -> str:
        """Adds a new RS256 key with a higher priority than the others and returns its kid;
        the old keys stay active (tokens they signed still validate) until
        :meth:`disable_keys_except` is called."""
        before = {k["kid"] for k in self.signing_keys()}
        realm_id = self.admin_get(f"/{self.realm}")["id"]
        self._send("POST", f"/{self.realm}/components", {
            "name": f"rotated-{secrets.token_hex(4)}", "providerId": "rsa-generated",
            "providerType": "org.keycloak.keys.KeyProvider", "parentId": realm_id,
            "config": {"priority": [str(priority)], "enabled": ["true"], "active": ["true"],
                       "algorithm": ["RS256"]}})
        new = [k["kid"] for k in self.signing_keys() if k["kid"] not in before]
        if len(new) != 1:
            raise KeycloakError(f"expected one new key, found {new}")
        return new[0]

    def disable_keys_except(self, kid: str) -> None:
        """Disables every RS256 key provider but the one holding ``kid``: its tokens stop
        validating once a verifier refetches the JWKS."""
        for k in self.signing_keys():
            if k["kid"] != kid:
                comp = self.admin_get(f"/{self.realm}/components/{k['providerId']}")
                comp["config"]["enabled"] = ["false"]
                comp["config"]["active"] = ["false"]
                self._send("PUT", f"/{self.realm}/components/{k['providerId']}", comp)


def serve(cmd: list[str]) -> int:
    """Launches one Keycloak (realm-less) and runs ``cmd`` at once, while it boots, with
    ``KSASL_KEYCLOAK`` naming it; stops it when ``cmd`` ends."""
    ensure_dist(quiet=False)
    kc = Keycloak(_server_only=True)
    try:
        shutil.copytree(TEMPLATE_DB, kc._db)
        kc._launch(wait=False)
        server = kc.dir / "server.json"
        server.write_text(json.dumps({"dir": str(kc.dir), "port": kc.port, "pid": kc.proc.pid}))
        print(f"keycloak: serving on 127.0.0.1:{kc.port} (pid {kc.proc.pid}) for: "
              f"{' '.join(cmd)}", file=sys.stderr, flush=True)
        return subprocess.call(cmd, env={**os.environ, "KSASL_KEYCLOAK": str(server)})
    finally:
        kc.stop()


def main(argv: list[str]) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--token-lifespan", type=int, default=60, help="access token lifetime (s)")
    ap.add_argument("--ensure", action="store_true", help="only fetch and build the cache")
    ap.add_argument("--attach", metavar="INFO_JSON",
                    help="act on the running Keycloak this info file describes")
    ap.add_argument("--rotate-key", action="store_true",
                    help="with --attach: add a higher-priority signing key, print its kid")
    ap.add_argument("--disable-keys-except", metavar="KID",
                    help="with --attach: disable every signing key but this one")
    ap.add_argument("--exit-on-stdin-eof", action="store_true",
                    help="print the info JSON, then stop when stdin closes (for test binaries)")
    ap.add_argument("--exec", action="store_true",
                    help="run the command after `--` with KSASL_OIDC_INFO set, then stop")
    ap.add_argument("--serve", action="store_true",
                    help="launch one Keycloak and run the command after `--` at once with "
                         "KSASL_KEYCLOAK set (each Keycloak made under it is a realm there)")
    cmd = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if (a.exec or a.serve) and not cmd:
        ap.error("--exec and --serve need a command after --")
    if a.serve:
        return serve(cmd)
    if a.attach:
        kc = Keycloak.attached(json.loads(Path(a.attach).read_text()))
        if a.rotate_key:
            print(kc.rotate_key())
        if a.disable_keys_except:
            kc.disable_keys_except(a.disable_keys_except)
        return 0
    if a.ensure:
        print(ensure_dist(quiet=False))
        return 0
    with Keycloak(token_lifespan_s=a.token_lifespan) as kc:
        info = kc.dir / f"info-{kc.realm}.json"
        info.write_text(json.dumps(kc.info()))
        if cmd:
            try:
                return subprocess.call(cmd, env={**os.environ, "KSASL_OIDC_INFO": str(info)})
            finally:
                info.unlink(missing_ok=True)
        print(json.dumps(kc.info()), flush=True)
        if a.exit_on_stdin_eof:
            sys.stdin.read()
            return 0
        with contextlib.suppress(KeyboardInterrupt):
            signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
