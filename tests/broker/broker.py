"""Run a real Apache Kafka 4.x broker (KRaft, single node) for tests.

Standard library only. Typical use from pytest::

    import sys, pathlib
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "broker"))
    from broker import KafkaBroker

    @pytest.fixture(scope="module")
    def kafka():
        with KafkaBroker(users={"alice": "alice-secret"}) as b:
            yield b

and from a shell (starts a broker, prints its endpoints, stops on Ctrl-C)::

    python3 tests/broker/broker.py [--reauth-ms 3000] [--jwks FILE] [--keep-logs]

See tests/broker/README.md for what is configured and why.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from certs import CertError, make_ca, make_server_cert  # noqa: E402
from procs import set_pdeathsig, tail  # noqa: E402

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
TARGET = HERE / "target"
LIB_DIR = TARGET / "broker-lib"
LOGS_ROOT = TARGET / "broker-logs"
CLASSES_DIR = TARGET / "classes"
JMX_SOURCE = HERE / "JmxQuery.java"
LAUNCHER_SOURCE = HERE / "KafkaLauncher.java"
TOKEN_SOURCE = HERE / "TokenTool.java"
GSSAPI_SOURCE = HERE / "GssapiTool.java"

#: Kafka version fetched by pom.xml (override with KSASL_KAFKA_VERSION=4.1.1).
KAFKA_VERSION = os.environ.get("KSASL_KAFKA_VERSION", "4.4.0")

DEFAULT_USERS = {"alice": "alice-secret", "bob": "bob-secret", "admin": "admin-secret"}
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
JWT_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
ALLOWED_URLS_PROPERTY = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
#: mechanisms of the GSSAPI listener (only with kerberos=...)
GSSAPI_MECHANISMS = ("GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

READY_MARKER = "Kafka Server started"


class BrokerError(RuntimeError):
    """The broker (or a helper tool) failed; the message carries the relevant log tail."""


# --------------------------------------------------------------------------- classpath

def java_bin(tool: str = "java") -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / tool).exists():
        return str(Path(home) / "bin" / tool)
    found = shutil.which(tool)
    if not found:
        raise BrokerError(f"'{tool}' not found (set JAVA_HOME or PATH)")
    return found


def _stamp_text() -> str:
    return f"kafka={KAFKA_VERSION}\npom={POM.stat().st_mtime_ns}:{POM.stat().st_size}\n"


def ensure_classpath(quiet: bool = True) -> Path:
    """Return target/broker-lib, fetching it with Maven first if needed.

    The copy is skipped when target/broker-lib/.complete matches the Kafka
    version and pom.xml. A file lock makes concurrent callers wait for each other.
    """
    stamp = LIB_DIR / ".complete"
    if stamp.exists() and stamp.read_text() == _stamp_text():
        return LIB_DIR
    TARGET.mkdir(parents=True, exist_ok=True)
    with open(TARGET / ".fetch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == _stamp_text():
            return LIB_DIR
        if LIB_DIR.exists():
            shutil.rmtree(LIB_DIR)
        mvn = os.environ.get("MVN") or shutil.which("mvn")
        if not mvn:
            raise BrokerError("Maven ('mvn') not found; it is needed once to fetch the Kafka broker jars")
        cmd = [mvn, "-q", "-B", "-f", str(POM), f"-Dkafka.version={KAFKA_VERSION}",
               "dependency:copy-dependencies"]
        if not quiet:
            print("fetching Kafka broker classpath:", " ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=1800)
        jars = list(LIB_DIR.glob("*.jar")) if LIB_DIR.exists() else []
        if proc.returncode != 0 or not any(j.name.startswith("kafka_2.13-") for j in jars):
            raise BrokerError(f"Maven fetch of the Kafka classpath failed (exit {proc.returncode}):\n"
                              + proc.stdout[-6000:])
        stamp.write_text(_stamp_text())
    return LIB_DIR


# --------------------------------------------------------------------------- helpers

def _compiled(source: Path, classpath: str | None = None) -> Path | None:
    """Compile a helper (JmxQuery, KafkaLauncher, TokenTool, GssapiTool .java) once into
    target/classes/<name>/ with javac; None if javac is unavailable or fails (callers then
    use Java's single-file source launcher, which recompiles on every run)."""
    out = CLASSES_DIR / source.stem
    cls = out / (source.stem + ".class")
    if cls.exists() and cls.stat().st_mtime >= source.stat().st_mtime:
        return out
    try:
        javac = java_bin("javac")
    except BrokerError:
        return None
    tmp = Path(tempfile.mkdtemp(prefix=source.stem + ".", dir=_mkdir(CLASSES_DIR)))
    try:
        cp = ["-cp", classpath] if classpath else []
        res = subprocess.run([javac, "-nowarn", *cp, "-d", str(tmp), str(source)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=180)
        if res.returncode != 0:
            return None
        if out.exists():
            shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)  # atomic: concurrent callers never see a half-written dir
        return out
    except (OSError, subprocess.SubprocessError):
        return out if cls.exists() else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _sweep_stale_workdirs() -> None:
    """Remove temp dirs left behind by test processes that were SIGKILLed (their broker
    died with them through PR_SET_PDEATHSIG; only the directory remained)."""
    for d in Path(tempfile.gettempdir()).glob("ksasl-kafka-*"):
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


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def free_ports(n: int) -> list[int]:
    """n distinct free TCP ports on 127.0.0.1 (sockets are held open until all are chosen)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def random_cluster_id() -> str:
    """Kafka's Uuid text form: 16 random bytes, URL-safe base64 without padding, not starting with '-'."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def _check_credential(kind: str, value: str) -> None:
    # Keep values safe for both the JAAS parser and the --add-scram parser.
    if not value or re.search(r'[\s"\\,=\[\]]', value):
        raise ValueError(f"{kind} {value!r}: must be non-empty without whitespace, quotes, backslash, ',', '=', '[' or ']'")


LOG4J2_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <File name="file" fileName="${sys:ksasl.log.file}" append="true">
      <PatternLayout pattern="[%d{ISO8601}] %p %m (%c)%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Logger name="kafka" level="INFO"/>
    <Logger name="org.apache.kafka" level="INFO"/>
    <Logger name="org.apache.kafka.common.security" level="${sys:ksasl.security.level:-INFO}"/>
    <Logger name="org.apache.kafka.common.network" level="${sys:ksasl.network.level:-INFO}"/>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Logger name="org.apache.kafka.storage.internals.log" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
  </Loggers>
</Configuration>
"""


def _aggregate(rows: list[dict]) -> dict:
    """Combine per-processor attribute maps: sum counters/rates, max of -max, mean of -avg."""
    buckets: dict[str, list] = {}
    for row in rows:
        for k, v in row.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) and v is not None:
                continue
            buckets.setdefault(k, []).append(v)
    out = {}
    for k, vals in buckets.items():
        nums = [v for v in vals if v is not None]
        if k.endswith("-avg"):
            out[k] = sum(nums) / len(nums) if nums else None
        elif k.endswith("-max"):
            out[k] = max(nums) if nums else None
        else:
            total = sum(nums)
            if k.endswith(("-total", "-count")) and float(total).is_integer():
                total = int(total)
            out[k] = total
    return out


# --------------------------------------------------------------------------- broker

class KafkaBroker:
    """A single-node Kafka broker+controller (KRaft combined mode) on 127.0.0.1.

    Listeners (all on 127.0.0.1, random free ports):
      SASL      SASL_PLAINTEXT, mechanisms PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
                (unsecured JWS validator)                                   -> .bootstrap
      SSL       SASL_SSL (TLS, no client certificate), the same four mechanisms and JAAS entries
                as SASL; server certificate for IP 127.0.0.1 and DNS localhost, signed by a
                CA made at start in the workdir (only when ssl=True)   -> .ssl_bootstrap, .ssl_ca_pem
      JWT       SASL_PLAINTEXT, OAUTHBEARER validated against a JWKS file
                (only when jwks_json or jwks_endpoint is given)              -> .jwt_bootstrap
      GSSAPI    SASL_PLAINTEXT, GSSAPI (Kerberos) + PLAIN + SCRAM-SHA-256/512, bound to
                127.0.0.1 but advertised as localhost (service principal kafka/localhost)
                (only when kerberos is given)                                -> .gssapi_bootstrap
      INTERNAL  PLAINTEXT, inter-broker listener, no authentication          -> .internal_bootstrap
      CONTROLLER PLAINTEXT, KRaft controller                                 -> .controller_port
    plus a JMX port (.jmx_port).

    Arguments:
      users            name -> password; every user gets PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 credentials.
      reauth_ms        connections.max.reauth.ms of the SASL, SSL, JWT and GSSAPI listeners (None/0 = disabled).
      ssl              add the SSL listener (SASL_SSL). Its TLS material is made with the openssl
                       command into <workdir>/tls/: ca.pem (+ ca.key), server.pem/server.key and
                       keystore.pem (the key, unencrypted PKCS#8, then server.pem; the CA is not sent),
                       which the listener loads as a PEM key store. Clients trust .ssl_ca_pem.
      jwks_json        JWKS document (str, or dict serialised to JSON) holding the public key(s)
                       used to verify JWTs on the JWT listener. None = no JWT listener.
      jwt_issuer       expected 'iss' (None = accept any issuer).
      jwt_audience     expected 'aud' (str or list; None = accept any audience).
      jwt_clock_skew_s sasl.oauthbearer.clock.skew.seconds for the JWT listener.
      jwks_endpoint    instead of jwks_json: an https:// JWKS URL (an identity provider's, such as
                       tests/oidc/keycloak.py's) the JWT listener fetches and refreshes itself;
                       jwks_ca_pem names the PEM file of the CA its certificate chains to.
      kerberos         a started tests/kerberos/kdc.py Kdc (or anything with .krb5_conf,
                       .keytab(name), .principal(name)): adds the GSSAPI listener, whose
                       service principal is kerberos_principal (default kafka/localhost;
                       its keytab comes from kerberos.keytab(...) unless kerberos_keytab is given).
      delegation_token_max_lifetime_ms / delegation_token_expiry_time_ms /
      delegation_token_expiry_check_interval_ms: delegation token settings (None = Kafka default).
      scram_iterations iteration count used for the SCRAM credentials created at format time.
      extra_config     dict of additional/overriding server.properties entries.
      keep_logs        copy the logs to target/broker-logs/<timestamp>/ on stop (also done
                       automatically when the with-block raised or KSASL_KEEP_BROKER_LOGS=1).
      startup_timeout  seconds to wait for "Kafka Server started".
      heap             JVM -Xmx value.
      jvm_args         extra JVM options for the broker, e.g. ["-Dksasl.security.level=DEBUG"]
                       (raises org.apache.kafka.common.security logging; ksasl.network.level
                       does the same for org.apache.kafka.common.network).
      jmx_agent        use the JDK's -Dcom.sun.management.jmxremote.* agent instead of
                       KafkaLauncher.java (the agent adds a wildcard-bound local connector port).
    """

    def __init__(self, users: dict | None = None, *, reauth_ms: int | None = 3000,
                 jwks_json=None, jwt_issuer: str | None = None, jwt_audience=None,
                 jwt_clock_skew_s: int | None = None,
                 jwks_endpoint: str | None = None, jwks_ca_pem: str | os.PathLike | None = None,
                 ssl: bool = False, kerberos=None, kerberos_principal: str = "kafka/localhost",
                 kerberos_keytab: str | os.PathLike | None = None,
                 delegation_token_max_lifetime_ms: int | None = None,
                 delegation_token_expiry_time_ms: int | None = None,
                 delegation_token_expiry_check_interval_ms: int | None = None,
                 delegation_token_secret: str | None = None,
                 scram_iterations: int = 4096,
                 extra_config: dict | None = None, keep_logs: bool = False,
                 startup_timeout: float = 90.0, heap: str = "512m", quiet: bool = True,
                 jmx_agent: bool = False, jvm_args=()):
        self.users = dict(DEFAULT_USERS if users is None else users)
        for name, pw in self.users.items():
            _check_credential("user name", name)
            _check_credential("password", pw)
        self.reauth_ms = reauth_ms
        if isinstance(jwks_json, dict):
            jwks_json = json.dumps(jwks_json)
        self.jwks_json = jwks_json
        self.jwt_issuer = jwt_issuer
        self.jwt_audience = jwt_audience
        self.jwt_clock_skew_s = jwt_clock_skew_s
        if jwks_endpoint is not None and jwks_json is not None:
            raise BrokerError("give jwks_json or jwks_endpoint, not both")
        self.jwks_endpoint = jwks_endpoint
        self.jwks_ca_pem = jwks_ca_pem
        self.ssl = ssl
        self.kerberos = kerberos
        self.kerberos_principal = kerberos_principal
        self.kerberos_keytab = kerberos_keytab
        self.delegation_token_max_lifetime_ms = delegation_token_max_lifetime_ms
        self.delegation_token_expiry_time_ms = delegation_token_expiry_time_ms
        self.delegation_token_expiry_check_interval_ms = delegation_token_expiry_check_interval_ms
        self.delegation_token_secret = delegation_token_secret or secrets.token_hex(16)
        self.scram_iterations = scram_iterations
        self.extra_config = dict(extra_config or {})
        self.keep_logs = keep_logs or os.environ.get("KSASL_KEEP_BROKER_LOGS") == "1"
        self.startup_timeout = startup_timeout
        self.heap = heap
        self.quiet = quiet
        self.jmx_agent = jmx_agent
        self.jvm_args = list(jvm_args)

        self.proc: subprocess.Popen | None = None
        self.workdir: Path | None = None
        self.kept_logs_dir: Path | None = None
        self.port = self.ssl_port = self.jwt_port = self.gssapi_port = None
        self.internal_port = self.controller_port = None
        self.jmx_port = None
        self.cluster_id = None
        self.startup_seconds = None

    # ---- public endpoints

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ssl_bootstrap(self) -> str | None:
        """127.0.0.1:<port> of the SASL_SSL listener (ssl=True); its certificate also names
        localhost, so localhost:<port> verifies too."""
        return f"127.0.0.1:{self.ssl_port}" if self.ssl_port else None

    @property
    def ssl_ca_pem(self) -> Path | None:
        """The PEM file of the CA that signed the SSL listener's certificate (ssl=True, while
        the broker runs: it lives in the workdir)."""
        return self.workdir / "tls" / "ca.pem" if self.ssl_port and self.workdir else None

    @property
    def jwt_bootstrap(self) -> str | None:
        return f"127.0.0.1:{self.jwt_port}" if self.jwt_port else None

    @property
    def gssapi_bootstrap(self) -> str | None:
        """localhost:<port> of the GSSAPI listener: clients must use the host name of the
        service principal (kafka/localhost), the socket is bound to 127.0.0.1 only."""
        return f"localhost:{self.gssapi_port}" if self.gssapi_port else None

    @property
    def internal_bootstrap(self) -> str:
        return f"127.0.0.1:{self.internal_port}"

    @property
    def log_path(self) -> Path | None:
        base = self.kept_logs_dir or self.workdir
        return base / "server.log" if base else None

    @property
    def jwks_url(self) -> str | None:
        if self.jwks_endpoint is not None:
            return self.jwks_endpoint
        if self.jwks_json is None or self.workdir is None:
            return None
        return (self.workdir / "jwks.json").as_uri()

    # ---- context manager

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop(keep_logs=self.keep_logs or exc_type is not None)
        return False

    # ---- configuration

    def server_properties(self) -> dict:
        assert self.workdir is not None
        w = self.workdir
        listeners = [f"SASL://127.0.0.1:{self.port}", f"INTERNAL://127.0.0.1:{self.internal_port}"]
        proto = ["SASL:SASL_PLAINTEXT", "INTERNAL:PLAINTEXT", "CONTROLLER:PLAINTEXT"]
        if self.ssl_port is not None:
            listeners.append(f"SSL://127.0.0.1:{self.ssl_port}")
            proto.append("SSL:SASL_SSL")
        if self.jwt_port is not None:
            listeners.append(f"JWT://127.0.0.1:{self.jwt_port}")
            proto.append("JWT:SASL_PLAINTEXT")
        advertised = ",".join(listeners)
        if self.kerberos is not None:
            # bound to 127.0.0.1, advertised under the host name of the service principal
            listeners.append(f"GSSAPI://127.0.0.1:{self.gssapi_port}")
            advertised += f",GSSAPI://localhost:{self.gssapi_port}"
            proto.append("GSSAPI:SASL_PLAINTEXT")
        listeners.append(f"CONTROLLER://127.0.0.1:{self.controller_port}")

        plain_users = " ".join(f'user_{n}="{p}"' for n, p in self.users.items())
        props = {
            # KRaft combined mode, dynamic quorum bootstrapped with `format --standalone`
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listeners": ",".join(listeners),
            "advertised.listeners": advertised + f",CONTROLLER://127.0.0.1:{self.controller_port}",
            "listener.security.protocol.map": ",".join(proto),
            "inter.broker.listener.name": "INTERNAL",
            "log.dirs": str(w / "data"),
            "num.network.threads": "2",
            "num.io.threads": "4",
            "num.partitions": "1",
            "default.replication.factor": "1",
            "min.insync.replicas": "1",
            "auto.create.topics.enable": "true",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # SASL listener: four mechanisms
            "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            "listener.name.sasl.sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            "listener.name.sasl.plain.sasl.jaas.config": f"{PLAIN_MODULE} required {plain_users};",
            "listener.name.sasl.scram-sha-256.sasl.jaas.config": f"{SCRAM_MODULE} required;",
            "listener.name.sasl.scram-sha-512.sasl.jaas.config": f"{SCRAM_MODULE} required;",
            # default server callback for OAUTHBEARER = unsecured (alg "none") validator
            "listener.name.sasl.oauthbearer.sasl.jaas.config":
                f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="broker";',
            # delegation tokens (SCRAM with tokenauth=true)
            "delegation.token.secret.key": self.delegation_token_secret,
        }
        if self.reauth_ms:
            props["listener.name.sasl.connections.max.reauth.ms"] = str(self.reauth_ms)
        if self.ssl_port is not None:
            pre = "listener.name.ssl."
            # A file-based PEM key store: the private key (unencrypted PKCS#8: Kafka accepts it
            # when ssl.key.password is unset) followed by the certificate chain. Kafka refuses
            # ssl.keystore.password with type PEM; no trust store, since no client certificates.
            props.update({
                pre + "ssl.keystore.type": "PEM",
                pre + "ssl.keystore.location": str(w / "tls" / "keystore.pem"),
                pre + "ssl.client.auth": "none",
                pre + "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
                pre + "plain.sasl.jaas.config": f"{PLAIN_MODULE} required {plain_users};",
                pre + "scram-sha-256.sasl.jaas.config": f"{SCRAM_MODULE} required;",
                pre + "scram-sha-512.sasl.jaas.config": f"{SCRAM_MODULE} required;",
                pre + "oauthbearer.sasl.jaas.config":
                    f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="broker";',
            })
            if self.reauth_ms:
                props[pre + "connections.max.reauth.ms"] = str(self.reauth_ms)
        for key, val in (("delegation.token.max.lifetime.ms", self.delegation_token_max_lifetime_ms),
                         ("delegation.token.expiry.time.ms", self.delegation_token_expiry_time_ms),
                         ("delegation.token.expiry.check.interval.ms",
                          self.delegation_token_expiry_check_interval_ms)):
            if val is not None:
                props[key] = str(val)
        if self.jwks_json is not None or self.jwks_endpoint is not None:
            pre = "listener.name.jwt.oauthbearer."
            # Kafka builds the JWKS fetch's TLS context from ssl.* options of the JAAS entry.
            # With any option, the broker's own (unused) login makes an unsecured token, which
            # needs a subject.
            trust = (f' ssl.truststore.type="PEM" ssl.truststore.location="{self.jwks_ca_pem}"'
                     ' unsecuredLoginStringClaim_sub="broker"' if self.jwks_ca_pem else "")
            props.update({
                "listener.name.jwt.sasl.enabled.mechanisms": "OAUTHBEARER",
                pre + "sasl.jaas.config": f"{OAUTH_MODULE} required{trust};",
                pre + "sasl.server.callback.handler.class": JWT_VALIDATOR,
                pre + "sasl.oauthbearer.jwks.endpoint.url": self.jwks_url,
            })
            if self.jwt_issuer is not None:
                props[pre + "sasl.oauthbearer.expected.issuer"] = self.jwt_issuer
            else:
                props[pre + "sasl.oauthbearer.allow.unverified.issuer"] = "true"
            if self.jwt_audience is not None:
                aud = self.jwt_audience
                props[pre + "sasl.oauthbearer.expected.audience"] = aud if isinstance(aud, str) else ",".join(aud)
            else:
                props[pre + "sasl.oauthbearer.allow.unverified.audience"] = "true"
            if self.jwt_clock_skew_s is not None:
                props[pre + "sasl.oauthbearer.clock.skew.seconds"] = str(self.jwt_clock_skew_s)
            if self.reauth_ms:
                props["listener.name.jwt.connections.max.reauth.ms"] = str(self.reauth_ms)
        if self.kerberos is not None:
            pre = "listener.name.gssapi."
            service, _, host = self.kerberos_principal.partition("/")
            props.update({
                pre + "sasl.enabled.mechanisms": ",".join(GSSAPI_MECHANISMS),
                "sasl.kerberos.service.name": service,
                pre + "gssapi.sasl.jaas.config":
                    f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{self._service_keytab()}" '
                    f'principal="{self.kerberos.principal(self.kerberos_principal)}";',
                pre + "plain.sasl.jaas.config": f"{PLAIN_MODULE} required {plain_users};",
                pre + "scram-sha-256.sasl.jaas.config": f"{SCRAM_MODULE} required;",
                pre + "scram-sha-512.sasl.jaas.config": f"{SCRAM_MODULE} required;",
            })
            if self.reauth_ms:
                props[pre + "connections.max.reauth.ms"] = str(self.reauth_ms)
        props.update({k: str(v) for k, v in self.extra_config.items()})
        return props

    def _write_properties(self, path: Path, props: dict) -> None:
        def esc(v: str) -> str:
            return v.replace("\\", "\\\\").replace("\n", "\\n")
        path.write_text("".join(f"{k}={esc(v)}\n" for k, v in props.items()))

    def _jvm_args(self, log_file: str) -> list[str]:
        assert self.workdir is not None
        args = [
            java_bin(), f"-Xmx{self.heap}", "-Xms128m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.xml'}",
            f"-Dksasl.log.file={self.workdir / log_file}",
        ]
        if self.jwks_url:
            args.append(f"-D{ALLOWED_URLS_PROPERTY}={self.jwks_url}")
        if self.kerberos is not None:
            args.append(f"-Djava.security.krb5.conf={self.kerberos.krb5_conf}")
        return args + self.jvm_args

    def _make_tls_material(self) -> None:
        """<workdir>/tls/: a CA, a server certificate for 127.0.0.1 and localhost signed by it,
        and keystore.pem (key + chain) for the SSL listener's PEM key store."""
        assert self.workdir is not None
        d = self.workdir / "tls"
        try:
            make_ca(d, "ca", "ksasl broker test CA")
            cert, key = make_server_cert(d, "server", ca="ca", ips=("127.0.0.1",), dns=("localhost",))
        except CertError as e:
            raise BrokerError(f"making the SSL listener's certificates failed: {e}") from e
        (d / "keystore.pem").write_text(key.read_text() + cert.read_text())
        os.chmod(d / "keystore.pem", 0o600)

    def _service_keytab(self) -> str:
        return str(self.kerberos_keytab or self.kerberos.keytab(self.kerberos_principal))

    # ---- lifecycle

    def start(self) -> "KafkaBroker":
        if self.proc is not None:
            raise BrokerError("broker already started")
        lib = ensure_classpath(quiet=self.quiet)
        last_error = None
        for _attempt in range(3):
            try:
                self._start_once(lib)
                return self
            except BrokerError as e:
                last_error = e
                port_clash = "Address already in use" in str(e) or "BindException" in str(e)
                self._kill()
                self._cleanup(keep_logs=not port_clash or self.keep_logs)
                if not port_clash:
                    raise
        raise last_error  # type: ignore[misc]

    def _start_once(self, lib: Path) -> None:
        t0 = time.monotonic()
        _sweep_stale_workdirs()
        self.workdir = Path(tempfile.mkdtemp(prefix="ksasl-kafka-"))
        (self.workdir / "owner.pid").write_text(str(os.getpid()))
        self.kept_logs_dir = None
        (self.port, self.ssl_port, self.jwt_port, self.gssapi_port, self.internal_port,
         self.controller_port, self.jmx_port) = free_ports(7)
        if not self.ssl:
            self.ssl_port = None
        if self.jwks_json is None and self.jwks_endpoint is None:
            self.jwt_port = None
        if self.kerberos is None:
            self.gssapi_port = None
        w = self.workdir
        (w / "log4j2.xml").write_text(LOG4J2_XML)
        if self.jwks_json is not None:
            (w / "jwks.json").write_text(self.jwks_json)
        if self.ssl_port is not None:
            self._make_tls_material()
        props = self.server_properties()
        self._write_properties(w / "server.properties", props)
        self.cluster_id = random_cluster_id()
        cp = f"{lib}/*"

        fmt = self._jvm_args("format.log") + ["-cp", cp, "kafka.tools.StorageTool", "format",
                                              "--config", str(w / "server.properties"),
                                              "--cluster-id", self.cluster_id, "--standalone"]
        for name, pw in self.users.items():
            for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                fmt += ["--add-scram", f"{mech}=[name={name},password={pw},iterations={self.scram_iterations}]"]
        res = subprocess.run(fmt, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=120)
        (w / "format.out").write_text(res.stdout)
        if res.returncode != 0:
            raise BrokerError(f"kafka storage format failed (exit {res.returncode}):\n{res.stdout[-4000:]}\n"
                              f"{tail(w / 'format.log', 40)}")

        jmx = self.jmx_port
        cmd = self._jvm_args("server.log")
        if self.jmx_agent:
            # JDK agent: also opens the JDK's local connector on a wildcard random port.
            cmd += [f"-Dcom.sun.management.jmxremote.port={jmx}",
                    f"-Dcom.sun.management.jmxremote.rmi.port={jmx}",
                    "-Dcom.sun.management.jmxremote.authenticate=false",
                    "-Dcom.sun.management.jmxremote.ssl=false",
                    "-Dcom.sun.management.jmxremote.local.only=true",
                    "-Dcom.sun.management.jmxremote.host=127.0.0.1",
                    "-Djava.rmi.server.hostname=127.0.0.1",
                    "-cp", cp, "kafka.Kafka", str(w / "server.properties")]
        else:
            cmd += [f"-Dksasl.jmx.port={jmx}", "-Djava.rmi.server.hostname=127.0.0.1"]
            launcher = _compiled(LAUNCHER_SOURCE)
            if launcher:
                cmd += ["-cp", f"{cp}:{launcher}", "KafkaLauncher"]
            else:
                cmd += ["-cp", cp, str(LAUNCHER_SOURCE)]
            cmd.append(str(w / "server.properties"))
        (w / "command.txt").write_text(" ".join(cmd) + "\n")
        console = open(w / "console.log", "wb")
        try:
            self.proc = subprocess.Popen(cmd, cwd=w, stdin=subprocess.DEVNULL, stdout=console,
                                         stderr=subprocess.STDOUT, preexec_fn=set_pdeathsig)
        finally:
            console.close()
        self._wait_ready(t0)
        self.startup_seconds = time.monotonic() - t0

    def _wait_ready(self, t0: float) -> None:
        assert self.proc is not None and self.workdir is not None
        log = self.workdir / "server.log"
        deadline = t0 + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise BrokerError(self._failure_text(f"broker exited with status {self.proc.returncode}"))
            if log.exists():
                text = log.read_text(errors="replace")
                if (READY_MARKER in text and self._port_open(self.port)
                        and (self.ssl_port is None or self._port_open(self.ssl_port))):
                    return
                if "BindException" in text or "Address already in use" in text:
                    raise BrokerError(self._failure_text("port clash"))
            if time.monotonic() > deadline:
                raise BrokerError(self._failure_text(f"broker not ready after {self.startup_timeout:.0f} s"))
            time.sleep(0.25)

    @staticmethod
    def _port_open(port) -> bool:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
        return False

    def _failure_text(self, what: str) -> str:
        assert self.workdir is not None
        return (f"{what}; workdir {self.workdir}\n--- server.log (tail) ---\n{tail(self.workdir / 'server.log', 80)}\n"
                f"--- console.log (tail) ---\n{tail(self.workdir / 'console.log', 30)}")

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _kill(self, timeout: float = 30.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def _cleanup(self, keep_logs: bool) -> None:
        w, self.workdir = self.workdir, None
        if w is None:
            return
        if keep_logs:
            dest = LOGS_ROOT / time.strftime("%Y%m%d-%H%M%S")
            n = 1
            while dest.exists():
                dest = LOGS_ROOT / (time.strftime("%Y%m%d-%H%M%S") + f"-{n}")
                n += 1
            dest.mkdir(parents=True)
            for name in ("server.log", "format.log", "format.out", "console.log", "server.properties",
                         "command.txt", "jwks.json", "tools.log"):
                if (w / name).exists():
                    shutil.copy2(w / name, dest / name)
            self.kept_logs_dir = dest
            print(f"[ksasl broker] logs kept in {dest}", file=sys.stderr)
        shutil.rmtree(w, ignore_errors=True)

    def stop(self, keep_logs: bool | None = None) -> None:
        """SIGTERM the broker (SIGKILL after 30 s), then delete its temp dir (logs copied first if asked)."""
        self._kill()
        self._cleanup(self.keep_logs if keep_logs is None else keep_logs)

    # ---- JMX

    def _jmx_command(self) -> list[str]:
        classes = _compiled(JMX_SOURCE)
        if classes:
            return [java_bin(), "-XX:TieredStopAtLevel=1", "-cp", str(classes), "JmxQuery"]
        return [java_bin(), str(JMX_SOURCE)]  # single-file source launch

    def jmx(self, *patterns: str, attributes=None) -> list[dict]:
        """Raw MBeans matching the ObjectName patterns: [{name, domain, properties, attributes}]."""
        if not self.jmx_port:
            raise BrokerError("broker not started")
        patterns = patterns or ("kafka.server:type=socket-server-metrics,*",)
        cmd = self._jmx_command() + [f"127.0.0.1:{self.jmx_port}", *patterns]
        if attributes:
            cmd += ["--attrs", ",".join(attributes)]
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        if res.returncode != 0:
            raise BrokerError(f"JmxQuery failed ({res.returncode}): {res.stderr.strip()}")
        return json.loads(res.stdout)

    def socket_server_metrics_by_listener(self) -> dict:
        """{listener: {attribute: value}} over kafka.server:type=socket-server-metrics MBeans.

        Kafka registers these per (listener, networkProcessor); values are combined per
        listener: counters and rates summed, '-max' maximised, '-avg' averaged over the
        processors that have a value (unweighted). MBeans without a listener tag go under ''.
        """
        per: dict[str, list] = {}
        for mb in self.jmx("kafka.server:type=socket-server-metrics,*"):
            props = mb["properties"]
            if set(props) - {"type", "listener", "networkProcessor"}:
                continue  # e.g. per-client-software connection gauges
            per.setdefault(props.get("listener", ""), []).append(mb["attributes"])
        return {lst: _aggregate(rows) for lst, rows in per.items()}

    def socket_server_metrics(self, listener: str | None = None) -> dict:
        """Aggregated socket-server metrics of one listener ('SASL', 'SSL', 'JWT', 'INTERNAL',
        'CONTROLLER', 'GSSAPI'), or of all listeners together when listener is None (counters summed
        over listeners; '-avg' is then the mean of the listeners' averages). Keys include
        successful-authentication-total, failed-authentication-total,
        successful-reauthentication-total, failed-reauthentication-total,
        successful-authentication-no-reauth-total, reauthentication-latency-avg/-max,
        expired-connections-killed-count (None for an average/max with no samples)."""
        by = self.socket_server_metrics_by_listener()
        if listener is not None:
            return by.get(listener, {})
        return _aggregate([r for lst, r in by.items() if lst])

    def expired_connections_killed(self) -> int:
        """Kafka's Yammer gauge kafka.network:type=SocketServer,name=ExpiredConnectionsKilledCount.

        Caveat (observed on 4.4.0): in this combined broker+controller node the gauge stays 0
        even when socket_server_metrics('SASL')['expired-connections-killed-count'] grows
        (probably the controller's socket server registered the gauge name first). Prefer
        the socket-server metric."""
        rows = self.jmx("kafka.network:type=SocketServer,name=ExpiredConnectionsKilledCount")
        return int(sum(r["attributes"].get("Value") or 0 for r in rows))

    # ---- delegation tokens (Admin API through TokenTool.java)

    def token_tool(self, mechanism: str, user: str, password: str, *args: str,
                   bootstrap: str | None = None) -> object:
        """Run TokenTool.java (kafka-clients Admin) and return its parsed JSON output."""
        if not self.workdir:
            raise BrokerError("broker not started")
        cp = f"{LIB_DIR}/*"
        classes = _compiled(TOKEN_SOURCE, cp)
        main = ["-cp", f"{cp}:{classes}", "TokenTool"] if classes else ["-cp", cp, str(TOKEN_SOURCE)]
        cmd = [java_bin(), "-XX:TieredStopAtLevel=1",
               f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.xml'}",
               f"-Dksasl.log.file={self.workdir / 'tools.log'}",
               *main, bootstrap or self.bootstrap, mechanism, user, password, *map(str, args)]
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if res.returncode != 0:
            raise BrokerError(f"TokenTool {' '.join(map(str, args))} failed: {res.stderr.strip()[-2000:]}")
        return json.loads(res.stdout)

    def create_delegation_token(self, user: str = "alice", password: str | None = None,
                                mechanism: str = "SCRAM-SHA-512", max_lifetime_ms: int = -1,
                                renewers=()) -> dict:
        """Create a delegation token owned by `user` (authenticating with PLAIN or SCRAM).

        Returns {tokenId, hmac (standard base64; the SCRAM password), owner, issueTimestamp,
        expiryTimestamp, maxTimestamp, renewers}. Authenticate with it over SCRAM as
        username=tokenId, password=hmac, extension tokenauth=true.
        """
        password = self.users[user] if password is None else password
        return self.token_tool(mechanism, user, password, "create", max_lifetime_ms, ",".join(renewers))

    def renew_delegation_token(self, hmac: str, period_ms: int = -1, user: str = "alice",
                               mechanism: str = "SCRAM-SHA-512") -> int:
        return self.token_tool(mechanism, user, self.users[user], "renew", hmac, period_ms)["expiryTimestamp"]

    def expire_delegation_token(self, hmac: str, period_ms: int = -1, user: str = "alice",
                                mechanism: str = "SCRAM-SHA-512") -> int:
        return self.token_tool(mechanism, user, self.users[user], "expire", hmac, period_ms)["expiryTimestamp"]

    def describe_delegation_tokens(self, user: str = "alice", mechanism: str = "SCRAM-SHA-512") -> list:
        return self.token_tool(mechanism, user, self.users[user], "describe")

    # ---- GSSAPI (Kafka's Java client with JDK Kerberos, through GssapiTool.java)

    def gssapi_client(self, name: str = "alice", seconds: float = 12, topic: str | None = None,
                      keytab: str | os.PathLike | None = None, bootstrap: str | None = None,
                      jvm_args=(), timeout: float = 120) -> dict:
        """Produce and consume with kafka-clients over SASL/GSSAPI as Kerberos principal `name`
        (keytab from the Kdc unless given) for `seconds`, then return GssapiTool's JSON:
        {principal, topic, produced, consumed, missing, seconds, client_metrics, totals}.
        Raises BrokerError (with the tool's "ERROR ..." line) when it fails."""
        if not self.workdir or self.kerberos is None:
            raise BrokerError("broker not started with kerberos=...")
        cp = f"{LIB_DIR}/*"
        classes = _compiled(GSSAPI_SOURCE, cp)
        main = ["-cp", f"{cp}:{classes}", "GssapiTool"] if classes else ["-cp", cp, str(GSSAPI_SOURCE)]
        kt = str(keytab or self.kerberos.keytab(name))
        cmd = [java_bin(), "-XX:TieredStopAtLevel=1",
               f"-Djava.security.krb5.conf={self.kerberos.krb5_conf}",
               f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.xml'}",
               f"-Dksasl.log.file={self.workdir / 'tools.log'}", *jvm_args,
               *main, bootstrap or self.gssapi_bootstrap, kt, self.kerberos.principal(name), str(seconds)]
        if topic:
            cmd.append(topic)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                             env=env)
        if res.returncode != 0:
            raise BrokerError(f"GssapiTool failed: {res.stderr.strip()[-3000:]}")
        return json.loads(res.stdout)

    # ---- misc

    def log_text(self) -> str:
        p = self.log_path
        return p.read_text(errors="replace") if p and p.exists() else ""

    def __repr__(self):
        state = "running" if self.is_running() else "stopped"
        return (f"<KafkaBroker {state} sasl={self.bootstrap} ssl={self.ssl_bootstrap} jwt={self.jwt_bootstrap} "
                f"gssapi={self.gssapi_bootstrap} jmx={self.jmx_port}>")


# --------------------------------------------------------------------------- CLI

def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="Start a throw-away Kafka broker on 127.0.0.1 until Ctrl-C.")
    ap.add_argument("--reauth-ms", type=int, default=3000, help="connections.max.reauth.ms (0 = off)")
    ap.add_argument("--jwks", help="JWKS file enabling the JWT listener")
    ap.add_argument("--jwt-issuer")
    ap.add_argument("--jwt-audience")
    ap.add_argument("--user", action="append", default=[], metavar="NAME=PASSWORD",
                    help="user (repeatable); default alice, bob, admin")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra server property")
    ap.add_argument("--ssl", action="store_true",
                    help="add the SASL_SSL listener (ssl_bootstrap; clients trust ssl_ca_pem)")
    ap.add_argument("--kerberos", action="store_true",
                    help="also start a KDC (tests/kerberos/kdc.py) and a GSSAPI listener")
    ap.add_argument("--keep-logs", action="store_true")
    ap.add_argument("--fetch-only", action="store_true", help="only fetch the classpath and exit")
    a = ap.parse_args(argv)
    if a.fetch_only:
        print(ensure_classpath(quiet=False))
        return 0
    users = dict(u.split("=", 1) for u in a.user) or None
    extra = dict(s.split("=", 1) for s in a.set)
    jwks = Path(a.jwks).read_text() if a.jwks else None
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with contextlib.ExitStack() as stack:
        kdc = None
        if a.kerberos:
            sys.path.insert(0, str(HERE.parent / "kerberos"))
            from kdc import Kdc
            kdc = stack.enter_context(Kdc())
        b = stack.enter_context(KafkaBroker(users, reauth_ms=a.reauth_ms or None, jwks_json=jwks,
                                            jwt_issuer=a.jwt_issuer, jwt_audience=a.jwt_audience,
                                            ssl=a.ssl, kerberos=kdc, extra_config=extra, keep_logs=a.keep_logs))
        info = {"bootstrap": b.bootstrap, "ssl_bootstrap": b.ssl_bootstrap,
                "ssl_ca_pem": b.ssl_ca_pem and str(b.ssl_ca_pem), "jwt_bootstrap": b.jwt_bootstrap,
                "gssapi_bootstrap": b.gssapi_bootstrap,
                "internal_bootstrap": b.internal_bootstrap, "controller_port": b.controller_port,
                "jmx_port": b.jmx_port, "users": b.users, "log_path": str(b.log_path),
                "pid": b.proc.pid if b.proc else None,
                "startup_seconds": round(b.startup_seconds or 0, 1)}
        if kdc is not None:
            info["kerberos"] = kdc.info()
        print(json.dumps(info, indent=2), flush=True)
        try:
            while not stop and b.is_running():
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
