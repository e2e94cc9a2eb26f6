"""Amazon MSK's IAM authentication with real clients against the example broker
(examples/python/kafka_server.py --aws-region ... --aws-keys-file ... --tls-cert ... --tls-key,
connections.max.reauth.ms = 3000), in its own process, over TLS with a CA and a server
certificate made for this run:

* kafka-python 3 (``sasl_mechanism='AWS_MSK_IAM'``, ``security_protocol='SASL_SSL'``; it signs
  with the credentials botocore finds, here AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in this
  process's environment, read again at every authentication) produces and re-authenticates;
  in the middle the key is rotated (the new key added to the broker's key file, the
  environment switched to it, then the old key removed from the file) and nothing is refused;
* confluent-kafka (librdkafka) with ksasl.adapters.msk_oauth_cb (MSK's presigned OAUTHBEARER
  tokens, signed with the temporary credentials a ksasl Refresher holds) authenticates and
  re-authenticates on the same broker; its key is rotated too: the refresher gets new
  credentials, librdkafka asks for a new token at 80 % of the old one's life (which ends with
  the old credentials), re-authenticates with it, and then the old key is removed;
* refusals as MSK words them: a wrong secret, a host the broker does not allow, a clock
  20 minutes behind, and an action other than kafka-cluster:Connect (kafka-python's signer
  with its clock or its action patched), each told to the client as
  "[<request id>]: Access denied", with the reason in the broker's log under that request id.

No real AWS credentials are used: the environment gets made-up keys (and botocore's config
files point nowhere). Run with ksasl and botocore installed (tests/interop/requirements.txt).
"""

import base64
import datetime
import ipaddress
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
import types
import urllib.parse
import warnings
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

import ksasl
from ksasl.adapters import msk_oauth_cb

import confluent_kafka

pytest.importorskip("botocore", reason="kafka-python's AWS_MSK_IAM needs botocore")
with warnings.catch_warnings():  # kafka-python's schema loading uses deprecated importlib APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka
    import kafka.errors
    import kafka.net.sasl.msk as kafka_msk

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "kafka_server.py"
REGION = "us-east-1"
LIFETIME_MS = 3000  # connections.max.reauth.ms
TOPIC = "msk-iam"
# Made-up keys (letters and digits, as AWS's): kafka-python's first and second, librdkafka's
# first and second (temporary credentials, as a refresher holds).
OLD = {"access_key_id": "AKIAOLDKEY1", "secret_access_key": "old-secret/+=1", "principal": "alice"}
NEW = {"access_key_id": "ASIANEWKEY2", "secret_access_key": "new-secret/+=2", "principal": "alice",
       "session_token": "new-session-token/+="}
CAROL = {"access_key_id": "ASIACAROL3", "secret_access_key": "carol-secret", "principal": "carol",
         "session_token": "carol-session-3"}
CAROL_NEW = {"access_key_id": "ASIACAROL4", "secret_access_key": "carol-secret-4", "principal": "carol",
             "session_token": "carol-session-4"}
# How long librdkafka's first credentials last: its token's life ends with them, so it asks for
# a new token 80 % of the way (16 s), well after the rotation (about 7 s in).
CAROL_LIFETIME_MS = 20_000

AUTH = re.compile(r"connection (\d+): (authenticated|reauthenticated) (\S+) with (\S+), session lifetime")
REFUSED = re.compile(r"AWS_MSK_IAM request (\S+) refused: (.*?) \(the client was told: (.*)\)$")
DENIED = re.compile(r"\[([0-9a-f-]{36})\]: Access denied")


def make_certificates(directory: Path) -> None:
    """A CA and a server certificate for 127.0.0.1 and localhost (PEM), valid for a day."""
    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))

    def certificate(subject, issuer, public_key, signer, extensions):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
             .serial_number(x509.random_serial_number()).not_valid_before(valid[0]).not_valid_after(valid[1]))
        for ext, critical in extensions:
            b = b.add_extension(ext, critical=critical)
        return b.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ksasl test CA")])
    ca = certificate(ca_name, ca_name, ca_key.public_key(), ca_key, [
        (x509.BasicConstraints(ca=True, path_length=0), True),
        (x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                       encipher_only=False, decipher_only=False), True),
        (x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False),
    ])
    server = certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), ca_name,
                         key.public_key(), ca_key, [
        (x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                      x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False),
        (x509.BasicConstraints(ca=False, path_length=None), True),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
        (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False),
    ])
    (directory / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (directory / "server.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def write_keys(path: Path, *keys) -> None:
    """The broker's key file, replaced in one step (it reads the file when it changed)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(list(keys)))
    os.replace(tmp, path)


class Broker:
    """kafka_server.py with TLS and AWS keys, in its own process; its log is collected as it
    comes, so a test waits for what it expects instead of sleeping."""

    def __init__(self, certs: Path, keys: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--host", "127.0.0.1", "--port", "0", "-v",
             "--max-reauth-ms", str(LIFETIME_MS), "--aws-region", REGION, "--aws-keys-file", str(keys),
             "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.port = int(self.proc.stdout.readline())
        self.banner = self.proc.stdout.readline()
        self.lines = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.out = ""

    def _read(self) -> None:
        for line in self.proc.stderr:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def wait_for(self, condition, timeout: float, what: str) -> None:
        with self.changed:
            ok = self.changed.wait_for(lambda: condition(self), timeout)
        assert ok, f"{what} not seen in {timeout} s:\n" + "\n".join(self.lines)

    def mark(self) -> int:
        with self.changed:
            return len(self.lines)

    def auths(self, mechanism: str, kind: str = "reauthenticated", since: int = 0):
        """The principals of the (re-)authentications with `mechanism` logged after `since`."""
        with self.changed:
            lines = self.lines[since:]
        return [m.group(3) for m in map(AUTH.search, lines)
                if m and m.group(2) == kind and m.group(4) == mechanism]

    def refusals(self):
        """request id -> (reason, what the client was told)."""
        with self.changed:
            found = [REFUSED.search(line) for line in self.lines]
        return {m.group(1): (m.group(2), m.group(3)) for m in found if m}

    def stop(self) -> dict:
        """SIGTERM; the metrics it prints."""
        self.proc.send_signal(signal.SIGTERM)
        self.out = self.proc.stdout.read()
        assert self.proc.wait(timeout=20) == 0, self.log
        self.reader.join(10)
        return {k: float(v) for k, v in re.findall(r"^([a-z-]+) (\S+)$", self.out, re.M)}

    @property
    def log(self) -> str:
        with self.changed:
            return "\n".join(self.lines)


@pytest.fixture
def certs(tmp_path):
    make_certificates(tmp_path)
    return tmp_path


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """Only made-up credentials for botocore: no profile, no config files, no instance role."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)

    def use(key):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["access_key_id"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["secret_access_key"])
        if "session_token" in key:
            monkeypatch.setenv("AWS_SESSION_TOKEN", key["session_token"])
        else:
            monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)

    return use


class ClientLog(logging.Handler):
    """What kafka-python logs: the refusals the broker told it."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = []
        self.changed = threading.Condition()

    def emit(self, record):
        with self.changed:
            self.texts.append(record.getMessage())
            self.changed.notify_all()

    def denied(self, since: int):
        with self.changed:
            return [m.group(1) for t in self.texts[since:] for m in [DENIED.search(t)] if m]


@pytest.fixture
def client_log():
    handler, logger = ClientLog(), logging.getLogger("kafka")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def kafka_python_producer(port: int, certs: Path, client_id: str, **kw):
    return kafka.KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SASL_SSL",
        ssl_cafile=str(certs / "ca.pem"), sasl_mechanism="AWS_MSK_IAM", client_id=client_id,
        enable_idempotence=False, acks="all", linger_ms=0, **kw)


def aws_credentials(key: dict, lifetime_ms: int) -> ksasl.AwsCredentials:
    return ksasl.AwsCredentials(key["access_key_id"], key["secret_access_key"], key["session_token"],
                                int(time.time() * 1000) + lifetime_ms)


def signing_key(token: str) -> str:
    """The access key id an MSK token was signed with (its X-Amz-Credential's first part)."""
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Credential"][0].split("/")[0]


def run_confluent_kafka(port: int, certs: Path, refresher: ksasl.Refresher, broker: "Broker",
                        stop: threading.Event, seen: dict) -> None:
    """librdkafka with MSK's OAUTHBEARER tokens from ksasl, signed with the credentials
    `refresher` holds, until `stop`; each token's signing key, and the broker's log position
    then, go to seen["tokens"]."""
    oauth_cb = msk_oauth_cb(REGION, refresher)

    def recording_oauth_cb(config):
        token, expiry = oauth_cb(config)
        seen["tokens"].append((signing_key(token), broker.mark()))
        return token, expiry

    conf = {
        "bootstrap.servers": f"127.0.0.1:{port}",
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(certs / "ca.pem"),
        "sasl.mechanism": "OAUTHBEARER",
        "oauth_cb": recording_oauth_cb,
        "client.id": "ck-msk",
        "enable.idempotence": False,
        "linger.ms": 0,
        "error_cb": lambda err: seen["errors"].append(str(err)),
    }
    producer = confluent_kafka.Producer(conf)

    def delivered(err, _msg):
        seen["acked" if err is None else "errors"].append(err)

    try:
        while not stop.is_set():
            producer.produce(TOPIC, value=b"from librdkafka", on_delivery=delivered)
            producer.poll(0.25)  # serves oauth_cb, delivery reports, errors
        seen["unflushed"] = producer.flush(10)
    finally:
        producer.close()


def test_kafka_python_and_librdkafka_rotate_keys(certs, tmp_path, aws_env):
    keys = tmp_path / "keys.json"
    write_keys(keys, OLD, CAROL)
    aws_env(OLD)
    refresher = ksasl.Refresher()
    refresher.set_aws_credentials(aws_credentials(CAROL, CAROL_LIFETIME_MS), "carol")
    broker = Broker(certs, keys)
    stop, seen = threading.Event(), {"acked": [], "errors": [], "tokens": []}
    ck = threading.Thread(target=run_confluent_kafka, args=(broker.port, certs, refresher, broker, stop, seen))
    producer, futures = None, []
    t0 = time.monotonic()
    try:
        assert "SASL_SSL" in broker.banner
        ck.start()
        producer = kafka_python_producer(broker.port, certs, "kp-msk")

        def produce_until(condition, timeout, what):
            """kafka-python sends a record every 0.25 s until the broker logged `condition`."""
            end = time.monotonic() + timeout
            while not condition(broker):
                assert time.monotonic() < end, f"{what} not seen in {timeout} s:\n{broker.log}"
                futures.append(producer.send(TOPIC, b"from kafka-python"))
                with broker.changed:
                    broker.changed.wait(0.25)

        produce_until(lambda b: len(b.auths("AWS_MSK_IAM")) >= 2, 20, "two AWS_MSK_IAM re-authentications")
        # Rotation, right after a re-authentication (so none is being signed meanwhile): the
        # broker learns the new keys, kafka-python's environment and librdkafka's refresher move
        # to them, then the old keys go.
        before = len(broker.auths("AWS_MSK_IAM"))
        produce_until(lambda b: len(b.auths("AWS_MSK_IAM")) > before, 10, "a re-authentication")
        write_keys(keys, OLD, NEW, CAROL, CAROL_NEW)
        aws_env(NEW)
        refresher.set_aws_credentials(aws_credentials(CAROL_NEW, 3_600_000), "carol")
        rotated = broker.mark()
        produce_until(lambda b: len(b.auths("AWS_MSK_IAM", since=rotated)) >= 1, 10,
                      "a re-authentication after the rotation")
        write_keys(keys, NEW, CAROL, CAROL_NEW)
        removed = broker.mark()
        produce_until(lambda b: len(b.auths("AWS_MSK_IAM", since=removed)) >= 2, 15,
                      "two re-authentications without the old key")

        def new_token_used(b):
            """librdkafka got a token of the new key, and re-authenticated after that."""
            marks = [mark for key, mark in list(seen["tokens"]) if key == CAROL_NEW["access_key_id"]]
            return bool(marks) and len(b.auths("OAUTHBEARER", since=marks[0])) >= 1

        produce_until(new_token_used, CAROL_LIFETIME_MS / 1000 + 10, "librdkafka re-authenticating with the new key")
        write_keys(keys, NEW, CAROL_NEW)
        carol_removed = broker.mark()
        produce_until(lambda b: len(b.auths("OAUTHBEARER", since=carol_removed)) >= 2, 15,
                      "two OAUTHBEARER re-authentications without carol's old key")
        producer.flush(10)
    finally:
        stop.set()
        ck.join(30)
        if producer is not None:
            producer.close(timeout=5)
        metrics = broker.stop()
    elapsed = time.monotonic() - t0
    log = broker.log
    signed_with = [key for key, _ in seen["tokens"]]
    info = f"after {elapsed:.1f} s\n{log}\n{metrics}\nlibrdkafka: {seen['errors']}, tokens of {signed_with}"
    # kafka-python: every record acknowledged, at least four re-authentications, all as alice.
    assert futures and all(f.succeeded() for f in futures), info
    msk = broker.auths("AWS_MSK_IAM")
    assert len(msk) >= 4 and set(msk) == {"User:alice"}, info
    assert len(broker.auths("AWS_MSK_IAM", since=removed)) >= 2, info
    # librdkafka: MSK tokens of carol's keys, authenticated and re-authenticated; its first
    # tokens were signed with the old key, the later ones with the new key only.
    assert not ck.is_alive() and seen["acked"] and not seen["errors"] and seen.get("unflushed") == 0, info
    assert set(broker.auths("OAUTHBEARER", "authenticated")) == {"User:carol"}, info
    assert set(broker.auths("OAUTHBEARER")) == {"User:carol"} and len(broker.auths("OAUTHBEARER")) >= 4, info
    assert signed_with[0] == CAROL["access_key_id"] and signed_with[-1] == CAROL_NEW["access_key_id"], signed_with
    assert len(broker.auths("OAUTHBEARER", since=carol_removed)) >= 2, info
    # Nothing refused, nothing expired.
    assert metrics["failed-authentication-total"] == 0, info
    assert metrics["failed-reauthentication-total"] == 0, info
    assert metrics["expired-connections-killed-count"] == 0 and "closed: expired" not in log, info
    assert metrics["successful-reauthentication-total"] == len(msk) + len(broker.auths("OAUTHBEARER")), info
    print(info)


def refused_once(port: int, certs: Path, log: ClientLog, name: str) -> str:
    """kafka-python bootstraps until it read a refusal (it sometimes handles the broker's close
    before the error response: it then retries); the request id the client was told."""
    since, end = len(log.texts), time.monotonic() + 20
    while not log.denied(since):
        assert time.monotonic() < end, "\n".join(log.texts[since:])
        try:
            kafka_python_producer(port, certs, name, bootstrap_timeout_ms=2000).close(timeout=5)
        except kafka.errors.KafkaTimeoutError:
            pass  # "Unable to bootstrap": every attempt was refused
        else:
            raise AssertionError(f"{name}: authenticated")
    return log.denied(since)[0]


class StaleClock(datetime.datetime):
    """kafka-python's signer clock, 20 minutes behind (AWS allows 15 minutes)."""

    @classmethod
    def now(cls, tz=None):
        return datetime.datetime.now(tz) - datetime.timedelta(minutes=20)


def test_refusals_reach_kafka_python_as_msk_words_them(certs, tmp_path, aws_env, client_log, monkeypatch):
    keys = tmp_path / "keys.json"
    write_keys(keys, OLD)
    open_broker = Broker(certs, keys)
    other_host = Broker(certs, keys, "--aws-host", "b-1.demo.kafka.us-east-1.amazonaws.com")
    told = {}
    try:
        aws_env(dict(OLD, secret_access_key="a-wrong-secret"))
        told["the signature does not verify"] = refused_once(open_broker.port, certs, client_log, "wrong-secret")
        aws_env(OLD)
        told["the request is signed for another host"] = refused_once(other_host.port, certs, client_log, "wrong-host")
        with monkeypatch.context() as m:
            m.setattr(kafka_msk, "datetime", types.SimpleNamespace(datetime=StaleClock, timezone=datetime.timezone))
            told["the signature has expired"] = refused_once(open_broker.port, certs, client_log, "stale")
        init = kafka_msk.AwsMskIamClient.__init__

        def alter_cluster(self, *args, **kw):
            init(self, *args, **kw)
            self.action = "kafka-cluster:AlterCluster"  # signed as such, but not Connect

        with monkeypatch.context() as m:
            m.setattr(kafka_msk.AwsMskIamClient, "__init__", alter_cluster)
            told["the action is not kafka-cluster:Connect"] = refused_once(open_broker.port, certs, client_log, "action")
        # The right key, host, clock and action still get in.
        ok = kafka_python_producer(open_broker.port, certs, "ok")
        try:
            assert ok.partitions_for(TOPIC) == {0}
        finally:
            ok.close(timeout=5)
    finally:
        metrics = {b: b.stop() for b in (open_broker, other_host)}
    refusals = {**open_broker.refusals(), **other_host.refusals()}
    info = f"{open_broker.log}\n{other_host.log}\nclient: {client_log.texts}"
    for reason, request_id in told.items():
        # What the client read is "[<request id>]: Access denied"; the broker logged why.
        assert request_id in refusals, (reason, info)
        why, client_text = refusals[request_id]
        assert why == reason and client_text == f"[{request_id}]: Access denied", (reason, info)
    shown = info + "".join(b.out for b in metrics)
    assert "a-wrong-secret" not in shown and OLD["secret_access_key"] not in shown
    assert open_broker.auths("AWS_MSK_IAM", "authenticated") and metrics[open_broker]["successful-authentication-total"] >= 1
    assert not other_host.auths("AWS_MSK_IAM", "authenticated"), info
