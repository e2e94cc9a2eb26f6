#!/usr/bin/env python3
"""A minimal Kafka broker on asyncio whose every connection is authenticated and gated by ksasl.

It speaks just enough of the Kafka protocol for real producers (librdkafka through
confluent-kafka, kafka-python) to connect and produce: Metadata v0-v4 (one broker, node 0, at
this server's address; any topic asked for is created with one partition) and Produce v3,
and for a consumer without a group ListOffsets v1 and Fetch v4 (record batches are kept in
memory)
(records are counted, not stored), and KIP-554's DescribeUserScramCredentials and
AlterUserScramCredentials (``kafka-configs --entity-type users --alter --add-config
'SCRAM-SHA-256=[password=...]'``, Kafka's Admin client), served by the ksasl credential store
the SCRAM logins are checked against: a changed password is what the user's next login or
re-authentication must present. Everything SASL is ksasl's:

* until ``conn.ready``, each request frame goes to ``conn.handle_frame()``, which answers
  ApiVersions (listing this broker's APIs, given as ``ServerConfig(api_versions=...)``),
  SaslHandshake and SaslAuthenticate for PLAIN, SCRAM-SHA-256/512, OAUTHBEARER and, given a
  keytab, GSSAPI (Kerberos);
* every request first passes ``conn.gate(api_key)``: "process" (a live session: answer it),
  "not_authenticated" (a frame of the exchange: to ``handle_frame()``), "begin_reauthentication"
  (a KIP-368 re-authentication: to ``handle_frame()``), "close" (the connection failed) or
  "close_expired" (the session outlived ``connections.max.reauth.ms`` or its credential: close
  without answering, as Kafka does).

Run it alone::

    python examples/python/kafka_server.py --port 0 --max-reauth-ms 3000

(users: alice / alice-secret; OAUTHBEARER accepts unsecured tokens, or with
``--jwks-endpoint-url URL --expected-issuer ISS --expected-audience AUD --ca-file ca.pem`` an
identity provider's signed ones; add ``--keytab
kafka.keytab --principal kafka/localhost@EXAMPLE.COM`` for GSSAPI, with KRB5_CONFIG pointing
at the realm), or as one listener of a broker's ``server.properties``::

    python examples/python/kafka_server.py --port 0 --config server.properties --listener EXTERNAL

With AWS keys, it also serves Amazon MSK's IAM authentication: ``AWS_MSK_IAM`` (kafka-python's
and the Java ``aws-msk-iam-auth``'s payloads) and MSK's presigned OAUTHBEARER tokens (which then
replace the unsecured ones), verified by ksasl against the keys given, for one region::

    python examples/python/kafka_server.py --port 0 --aws-region us-east-1 \
        --aws-keys-file keys.json --tls-cert server.pem --tls-key server.key

(``keys.json``: a list of ``{"access_key_id", "secret_access_key", "principal"}`` objects, with
``"session_token"`` and ``"expires_at_ms"`` for temporary credentials; the file is read again
whenever it changes, so a key rotation is an edit of the file; ``--aws-key
KEY_ID:SECRET:PRINCIPAL`` gives a key on the command line; ``--aws-host NAME``, repeatable,
limits the host names clients may sign for). kafka-python speaks AWS_MSK_IAM only over TLS
(``security_protocol='SASL_SSL'``): ``--tls-cert``/``--tls-key`` make the listener SASL_SSL.

(ksasl reads the listener's ``sasl.enabled.mechanisms``, its PLAIN JAAS entry's ``user_``
options, ``connections.max.reauth.ms`` per mechanism, the OAUTHBEARER validation, unsecured or
at a JWKS endpoint, and its limits; SCRAM users are alice / alice-secret, as without a file,
since Kafka keeps SCRAM credentials in its metadata; GSSAPI from the JAAS entry's keyTab and
principal, sasl.kerberos.service.name and sasl.kerberos.principal.to.local.rules, with
KRB5_CONFIG pointing at the realm), or from Python::

    server = KafkaServer(max_reauth_ms=3000)
    port = server.start_in_thread()      # or: port = await server.start() in a running loop
    ...
    server.stop_thread()                 # or: await server.stop()
    server.metrics()                     # Kafka's metric names
    server.connections                   # one ConnectionStats per connection

Not a broker: records live in memory only, there are no consumer groups, no idempotent or
transactional producing (clients must disable idempotence), and a request for any other API
closes the connection. ApiVersions after authentication gets the same answer as before it
(``ServerConfig.api_versions_response``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import signal
import ssl
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import ksasl
import ksasl.aio

log = logging.getLogger("kafka_server")

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
SASL_HANDSHAKE, API_VERSIONS, SASL_AUTHENTICATE = 17, 18, 36
# The APIs this broker implements, (api_key, min_version, max_version). ksasl adds its own
# (ApiVersions, SaslHandshake, SaslAuthenticate) to the ApiVersions response.
APIS = [(PRODUCE, 3, 3), (FETCH, 4, 4), (LIST_OFFSETS, 1, 1), (METADATA, 0, 4)]
APIS += ksasl.SCRAM_CREDENTIAL_API_VERSIONS  # KIP-554, served by the credential store
SCRAM_CREDENTIAL_APIS = {key for key, _, _ in ksasl.SCRAM_CREDENTIAL_API_VERSIONS}
NODE_ID = 0
UNKNOWN_TOPIC_OR_PARTITION, ILLEGAL_SASL_STATE = 3, 34


def now_ms() -> int:
    return int(time.time() * 1000)


# --- Kafka wire format (big-endian; only the non-flexible versions used here) -------------

def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def string(s: Optional[str]) -> bytes:
    if s is None:
        return i16(-1)
    b = s.encode()
    return i16(len(b)) + b


def array(items: List[bytes]) -> bytes:
    return i32(len(items)) + b"".join(items)


class Reader:
    """Reads a request body field by field."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def _take(self, fmt: str) -> int:
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(v)

    def int8(self) -> int:
        return self._take(">b")

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def int64(self) -> int:
        return self._take(">q")

    def _sized(self, n: int) -> Optional[bytes]:
        if n < 0:
            return None
        if self.pos + n > len(self.data):
            raise ValueError("truncated request")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def string(self) -> Optional[str]:
        b = self._sized(self.int16())
        return None if b is None else b.decode()

    def bytes(self) -> Optional[bytes]:
        return self._sized(self.int32())

    def array(self, item: Callable[[], Any]) -> Optional[List[Any]]:
        n = self.int32()
        return None if n < 0 else [item() for _ in range(n)]


def count_records(records: Optional[bytes]) -> int:
    """Records in a Produce partition's record set: v2 batches carry a count; legacy (v0/v1)
    messages count one each (a compressed wrapper counts as one). Both formats start with an
    8-byte offset, a 4-byte length of the rest, and have the magic byte at offset 16."""
    n, pos = 0, 0
    while records and pos + 17 <= len(records):
        (size,) = struct.unpack_from(">i", records, pos + 8)
        if records[pos + 16] >= 2:
            n += struct.unpack_from(">i", records, pos + 57)[0]
        else:
            n += 1
        pos += 12 + size
    return n


# --- AWS keys -------------------------------------------------------------------------------

class AwsKeys:
    """The AWS keys the broker accepts for AWS_MSK_IAM and MSK's OAUTHBEARER tokens (a
    ``ksasl.AwsKeyStore``), signed for ``region`` and, when ``hosts`` are given, for one of
    those host names. Keys come as dicts (``access_key_id``, ``secret_access_key``,
    ``principal``, optional ``session_token`` and ``expires_at_ms``) and from ``file``, a JSON
    list of them, which ``sync()`` reads again when it changed: the broker calls it before
    each authentication, so keys added to or removed from the file count from the next one."""

    def __init__(self, region: str, keys: Optional[List[Dict[str, Any]]] = None,
                 file: Optional[str] = None, hosts: Optional[List[str]] = None) -> None:
        self.region, self.file, self.hosts = region, file, hosts
        self.store = ksasl.AwsKeyStore()
        self._from_file: "set[str]" = set()
        self._seen: Optional[Tuple[int, int, int]] = None  # the file's inode, mtime and size
        for key in keys or []:
            self.add(key)
        if file is not None:
            self.sync(strict=True)

    def add(self, key: Dict[str, Any]) -> str:
        """Adds (or replaces) one key; returns its access key id."""
        credentials = ksasl.AwsCredentials(key["access_key_id"], key["secret_access_key"],
                                           key.get("session_token"), key.get("expires_at_ms"))
        self.store.add(credentials, key["principal"])
        return credentials.access_key_id

    def sync(self, strict: bool = False) -> None:
        """Reads the key file again if it changed: its keys are added (or replaced), and the
        ones it listed before and no longer does are removed. A file that cannot be read
        leaves the keys as they are (``strict``: raises instead)."""
        if self.file is None:
            return
        try:
            st = os.stat(self.file)
            seen = (st.st_ino, st.st_mtime_ns, st.st_size)
            if seen == self._seen:
                return
            with open(self.file, encoding="utf-8") as f:
                entries = json.load(f)
            ids = {self.add(entry) for entry in entries}
        except (OSError, ValueError, KeyError, TypeError) as e:
            if strict:
                raise
            log.warning("%s: keeping the AWS keys as they were: %s", self.file, e)
            return
        for gone in self._from_file - ids:
            self.store.remove(gone)
        self._from_file, self._seen = ids, seen
        log.info("%s: %d AWS keys", self.file, len(ids))


def parse_aws_key(text: str) -> Dict[str, Any]:
    """``KEY_ID:SECRET:PRINCIPAL`` (the principal may contain ':', an ARN does)."""
    parts = text.split(":", 2)
    if len(parts) != 3:
        raise ValueError("an AWS key is KEY_ID:SECRET:PRINCIPAL")
    return {"access_key_id": parts[0], "secret_access_key": parts[1], "principal": parts[2]}


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server TLS context with the certificate chain ``cert`` and its private key (PEM)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


# --- The broker -----------------------------------------------------------------------------

@dataclass
class ConnectionStats:
    """What the server saw on one connection."""

    id: int
    peer: str
    opened_ms: int
    client_id: Optional[str] = None
    mechanism: Optional[str] = None
    principal: Optional[str] = None
    # One entry per successful authentication (the first, then each re-authentication):
    # (now_ms, session lifetime sent, credential expiry or None).
    authentications: List[Tuple[int, int, Optional[int]]] = field(default_factory=list)
    requests: Dict[int, int] = field(default_factory=dict)  # api_key -> count, after auth
    records: int = 0
    closed_ms: Optional[int] = None
    # "client" (EOF), "expired" (gate said close_expired), "auth_failed", "protocol",
    # "stopped" (server stop)
    close_reason: Optional[str] = None
    # Why an authentication or re-authentication failed (the KsaslError ksasl reported, and
    # what the client was told), the last one.
    auth_error: Optional[ksasl.KsaslError] = None

    @property
    def reauthentications(self) -> int:
        return max(0, len(self.authentications) - 1)


class KafkaServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        max_reauth_ms: int = 3000,
        users: Optional[Dict[str, str]] = None,
        failed_authentication_delay_ms: int = 100,
        mechanisms: Optional[Dict[str, Callable[[], Any]]] = None,
        keytab: Optional[str] = None,
        principal: Optional[str] = None,
        principal_to_local_rules: Optional[str] = None,
        oauthbearer_validator: Any = None,
        config: Optional[ksasl.ServerConfig] = None,
        scram_store: Optional[ksasl.CredentialStore] = None,
        aws: Optional[AwsKeys] = None,
        tls: Optional[ssl.SSLContext] = None,
    ) -> None:
        # The users SCRAM logins are checked against, which KIP-554's requests describe and
        # change (with ``config``: the store the listener was built with, if any).
        self.store: Optional[ksasl.CredentialStore]
        if config is not None:
            # A listener of server.properties (listener_config()): the other arguments, but
            # host and port, are the file's business.
            self.config = config
            self.store = scram_store
        else:
            self.store = scram_store or user_store(users)
            registry = ksasl.MechanismRegistry()
            registry.add_password_servers(self.store)  # PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
            # OAUTHBEARER: unsecured (alg "none") tokens, or signed ones checked by the validator
            # given (a ksasl.JwksEndpoint for an identity provider's JWKS: see jwks_endpoint()).
            registry.add_oauthbearer_server(oauthbearer_validator)
            if aws is not None:
                # AWS_MSK_IAM, and OAUTHBEARER with MSK's presigned tokens instead of the
                # unsecured ones (one OAUTHBEARER validator per listener, as on MSK).
                if oauthbearer_validator is not None:
                    raise ValueError("OAUTHBEARER takes MSK's tokens with AWS keys: no validator too")
                registry.add_aws_msk_iam_server(aws.store, aws.region, aws.hosts)
                registry.add_msk_oauthbearer_server(aws.store, aws.region)
            # Mechanisms written in Python (KIP-43): name -> factory of objects whose step() is
            # a plain or an async method (see MechanismRegistry.add_server_mechanism).
            for name, factory in (mechanisms or {}).items():
                registry.add_server_mechanism(name, factory)
            if keytab is not None:
                # GSSAPI: the broker's keytab and principal (JAAS keyTab, principal), and
                # sasl.kerberos.principal.to.local.rules as Kafka's list value (None: DEFAULT).
                registry.add_gssapi_server(keytab=keytab, principal=principal, rules=principal_to_local_rules)
            self.config = ksasl.ServerConfig(
                registry,
                max_reauth_ms=max_reauth_ms,  # connections.max.reauth.ms
                failed_authentication_delay_ms=failed_authentication_delay_ms,
                api_versions=APIS,
            )
        self.host, self.port = host, port
        self.aws, self.tls = aws, tls
        self.topics: Dict[str, int] = {}  # name -> partition count
        self.next_offset: Dict[Tuple[str, int], int] = {}
        # (topic, partition) -> [(base offset, record count, v2 batch with its base offset)]
        self.logs: Dict[Tuple[str, int], List[Tuple[int, int, bytes]]] = {}
        self._produced = asyncio.Event()  # set (and replaced) whenever records are appended
        self._fetch_wait_ms = 0  # how long the Fetch just answered may wait for records
        self.connections: List[ConnectionStats] = []
        self._ids = itertools.count(1)
        self._server: Optional[asyncio.AbstractServer] = None
        self._tasks: "set[asyncio.Task[Any]]" = set()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None

    def metrics(self) -> Dict[str, float]:
        """ksasl's metrics of every connection, with Kafka's names."""
        return self.config.metrics()

    # --- lifecycle ----------------------------------------------------------------------

    async def start(self) -> int:
        """Listens in the running event loop; returns the port."""
        self._server = await asyncio.start_server(self._serve, self.host, self.port, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        """Stops listening and closes every connection."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    def start_in_thread(self) -> int:
        """Runs the server in a thread with its own event loop; returns the port."""
        ready, failed = threading.Event(), []
        loop = self._loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as e:  # e.g. the port is taken: raised by start_in_thread
                failed.append(e)
                loop.close()
                return
            finally:
                ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"kafka-server-{self.port}", daemon=True)
        self._thread.start()
        ready.wait()
        if failed:
            raise failed[0]
        return self.port

    def stop_thread(self, timeout: float = 10) -> None:
        """Stops a server started by start_in_thread() and waits for its thread."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    # --- one connection -----------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        peer = "%s:%s" % writer.get_extra_info("peername")[:2]
        stats = ConnectionStats(next(self._ids), peer, now_ms())
        self.connections.append(stats)
        conn = ksasl.ServerConnection(self.config)
        try:
            stats.close_reason = await self._run(conn, stats, reader, writer)
        except asyncio.CancelledError:
            stats.close_reason = "stopped"
        except (ConnectionError, asyncio.IncompleteReadError):
            stats.close_reason = "client"
        except Exception:
            log.exception("connection %d: closing", stats.id)
            stats.close_reason = "protocol"
        finally:
            stats.closed_ms = now_ms()
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, asyncio.CancelledError):
                pass
            self._tasks.discard(task)
            log.info("connection %d (%s) closed: %s after %d re-authentications", stats.id,
                     stats.peer, stats.close_reason, stats.reauthentications)

    async def _run(
        self, conn: ksasl.ServerConnection, stats: "ConnectionStats", reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> str:
        """Serves requests until the connection ends; returns why it ended."""
        while True:
            try:
                (declared,) = struct.unpack(">i", await reader.readexactly(4))
                # Kafka's limits, on the length alone: sasl.server.max.receive.size until the
                # session is live, socket.request.max.bytes after. Nothing is read past them.
                try:
                    size = conn.check_frame_size(declared)
                except ksasl.KsaslError as e:
                    log.info("connection %d: %s", stats.id, e)
                    return "protocol"
                if size < 8:
                    return "protocol"
                frame = await reader.readexactly(size)
            except (asyncio.IncompleteReadError, ConnectionError):
                return "client"
            # The gate routes every frame: only "process" (a live session) reaches the handlers.
            api_key = struct.unpack_from(">h", frame)[0]
            verdict = conn.gate(api_key)
            if verdict == "close_expired":
                log.info("connection %d: session expired, closing", stats.id)
                return "expired"
            if verdict == "close":
                return "auth_failed"
            if verdict == "process":
                response: Optional[bytes]
                if api_key == API_VERSIONS:
                    # Clients ask again once authenticated: the same answer as before.
                    response = self.config.api_versions_response(frame)
                elif api_key == FETCH:
                    response = await self.long_poll(frame, stats)
                else:
                    response = self.handle_request(frame, stats)
                if response is None:
                    return "protocol"
                writer.write(response)
                await writer.drain()
                continue
            # "not_authenticated" (the exchange's frame) or "begin_reauthentication" (this
            # SaslHandshake starts a re-authentication): the connection takes the frame.
            if not await self._authenticate(conn, stats, frame, writer):
                return "auth_failed"

    async def _authenticate(
        self, conn: ksasl.ServerConnection, stats: "ConnectionStats", frame: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """One (re-)authentication frame through ksasl; False when the connection must close."""
        if self.aws is not None:
            self.aws.sync()  # the key file, if it changed
        now = now_ms()
        # An async mechanism's step stops the driver with "pending"; settle_server awaits it on
        # this event loop and resumes the exchange, so other connections keep being served.
        action, out, deadline_ms, error = await ksasl.aio.settle_server(conn, conn.handle_frame(frame, now))
        if error is not None:  # why the connection (or its re-authentication) failed
            stats.auth_error = error
            log.info("connection %d: %s: %s (the client was told: %s)", stats.id, action, error,
                     error.client_message)
        if action == "fail_at":  # Kafka delays the failure response, then closes
            refused = conn.refused_request()
            if not out and refused is not None:
                # A request of an API ksasl has no schema for interrupted the exchange (ksasl
                # answers the others itself): Kafka's error response for it, if readable.
                out = self.refusal(frame, refused) or b""
            await asyncio.sleep(max(0, (deadline_ms or now) - now_ms()) / 1000)
            writer.write(out)
            await writer.drain()
            return False
        if action == "close_now":
            return False
        writer.write(out)
        await writer.drain()
        if action in ("authenticated", "reauthenticated"):
            s = conn.session()
            assert s is not None
            stats.mechanism, stats.principal = s["mechanism"], s["principal"]
            stats.authentications.append((now, s["lifetime_ms"], s["credential_expiry_ms"]))
            log.info("connection %d: %s %s with %s, session lifetime %d ms", stats.id, action,
                     s["principal"], s["mechanism"], s["lifetime_ms"])
        return True

    # --- requests -----------------------------------------------------------------------

    async def long_poll(self, frame: bytes, stats: ConnectionStats) -> Optional[bytes]:
        """Fetch: answered at once when there are records, else once some are produced or the
        request's max_wait_ms has passed."""
        self._fetch_wait_ms = 0
        response = self.handle_request(frame, stats)
        if response is None or not self._fetch_wait_ms:
            return response
        try:
            await asyncio.wait_for(self._produced.wait(), self._fetch_wait_ms / 1000)
        except asyncio.TimeoutError:
            pass
        stats.requests[FETCH] -= 1  # counted again below
        return self.handle_request(frame, stats)

    def handle_request(self, frame: bytes, stats: ConnectionStats) -> Optional[bytes]:
        """The response frame to an authenticated request (b"" for none), or None to close."""
        r = Reader(frame)
        api_key, version, corr = r.int16(), r.int16(), r.int32()
        stats.client_id = r.string()
        stats.requests[api_key] = stats.requests.get(api_key, 0) + 1
        if api_key in SCRAM_CREDENTIAL_APIS and self.store is not None:
            # Kafka's authorizer (ALTER or DESCRIBE on the cluster) is not modelled: every
            # authenticated principal may.
            try:
                return self.store.handle_scram_request(frame)
            except ksasl.KsaslError as e:
                log.warning("connection %d: bad SCRAM credential request: %s", stats.id, e)
                return None
        body: Optional[bytes]
        if api_key == METADATA and version <= 4:
            body = self.metadata(version, r)
        elif api_key == FETCH and version == 4:
            body = self.fetch(r)
        elif api_key == LIST_OFFSETS and version == 1:
            body = self.list_offsets(r)
        elif api_key == PRODUCE and version == 3:
            body = self.produce(r, stats)
            if body is None:  # acks=0: no response
                return b""
        elif api_key == SASL_HANDSHAKE:
            # The gate did not allow a re-authentication (Kafka allows one per second):
            # Kafka's answer is ILLEGAL_SASL_STATE, and the client reconnects.
            body = i16(ILLEGAL_SASL_STATE) + array([])
        else:
            log.warning("connection %d: unsupported request %d v%d", stats.id, api_key, version)
            return None
        response = i32(corr) + body
        return i32(len(response)) + response

    def refusal(self, frame: bytes, refused: Dict[str, Any]) -> Optional[bytes]:
        """Kafka's error response to a Produce v3 request that interrupted a SASL exchange
        (every partition with the error), or None when Kafka would close without answering:
        another API or version this broker cannot read, a malformed request, or acks=0."""
        if (refused["api_key"], refused["api_version"]) != (PRODUCE, 3):
            return None
        r = Reader(frame)
        r.int16(), r.int16(), r.int32(), r.string()  # the request header
        try:
            r.string()  # transactional_id
            acks = r.int16()
            r.int32()  # timeout_ms
            topics = r.array(lambda: (r.string(), r.array(lambda: (r.int32(), r.bytes()))))
        except (ValueError, struct.error):
            return None
        if topics is None or acks == 0 or any(n is None or p is None for n, p in topics):
            return None
        code = refused["error_code"]
        responses = [
            string(name) + array([i32(index) + i16(code) + i64(-1) + i64(-1) for index, _ in parts or []])
            for name, parts in topics
        ]
        response = i32(refused["correlation_id"]) + array(responses) + i32(0)  # throttle_time_ms
        return i32(len(response)) + response

    def metadata(self, version: int, r: Reader) -> bytes:
        requested = r.array(r.string)
        if requested is None or (version == 0 and not requested):
            names = sorted(self.topics)  # all topics
        else:
            names = requested
            for name in names:  # auto-create
                if name:
                    self.topics.setdefault(name, 1)
        broker = i32(NODE_ID) + string(self.host) + i32(self.port)
        if version >= 1:
            broker += string(None)  # rack
        topics = []
        for name in names:
            partitions = [
                i16(0) + i32(p) + i32(NODE_ID) + array([i32(NODE_ID)]) + array([i32(NODE_ID)])
                for p in range(self.topics.get(name, 0))
            ]
            error = 0 if name in self.topics else UNKNOWN_TOPIC_OR_PARTITION
            topics.append(i16(error) + string(name) + (b"\0" if version >= 1 else b"")
                          + array(partitions))
        out = i32(0) if version >= 3 else b""  # throttle_time_ms
        out += array([broker])
        if version >= 2:
            out += string("ksasl-example")  # cluster_id
        if version >= 1:
            out += i32(NODE_ID)  # controller_id
        return out + array(topics)

    def produce(self, r: Reader, stats: ConnectionStats) -> Optional[bytes]:
        r.string()  # transactional_id
        acks = r.int16()
        r.int32()  # timeout_ms
        responses = []
        for _ in range(r.int32()):
            name = r.string() or ""
            partitions = []
            for _ in range(r.int32()):
                index, records = r.int32(), r.bytes()
                if index >= self.topics.get(name, 0):
                    partitions.append(i32(index) + i16(UNKNOWN_TOPIC_OR_PARTITION) + i64(-1) + i64(-1))
                    continue
                n = count_records(records)
                stats.records += n
                base = self.next_offset.get((name, index), 0)
                self.next_offset[(name, index)] = base + n
                self.append(name, index, base, records or b"")
                # partition_index, error_code, base_offset, log_append_time_ms
                partitions.append(i32(index) + i16(0) + i64(base) + i64(-1))
            responses.append(string(name) + array(partitions))
        if acks == 0:
            return None
        return array(responses) + i32(0)  # throttle_time_ms

    def append(self, name: str, index: int, base: int, records: bytes) -> None:
        """Keeps the v2 batches of a Produce with their offsets (the base offset is outside
        the batch's CRC); legacy message sets are only counted."""
        log, pos = self.logs.setdefault((name, index), []), 0
        while pos + 61 <= len(records) and records[pos + 16] >= 2:
            end = pos + 12 + struct.unpack_from(">i", records, pos + 8)[0]
            n = struct.unpack_from(">i", records, pos + 57)[0]
            log.append((base, n, i64(base) + records[pos + 8 : end]))
            base, pos = base + n, end
        produced, self._produced = self._produced, asyncio.Event()
        produced.set()

    def fetch(self, r: Reader) -> bytes:
        r.int32()  # replica_id
        max_wait_ms = r.int32()
        r.int32(), r.int32(), r.int8()  # min_bytes, max_bytes, isolation_level
        found, responses = False, []
        for _ in range(r.int32()):
            name = r.string() or ""
            partitions = []
            for _ in range(r.int32()):
                index, offset, _ = r.int32(), r.int64(), r.int32()  # partition_max_bytes
                if index >= self.topics.get(name, 0):
                    partitions.append(i32(index) + i16(UNKNOWN_TOPIC_OR_PARTITION) + i64(-1) + i64(-1)
                                      + i32(-1) + i32(-1))
                    continue
                # Every batch holding an offset at or after the one asked for (the client
                # skips the records before it, as with Kafka).
                data = b"".join(b for base, n, b in self.logs.get((name, index), []) if base + n > offset)
                found = found or bool(data)
                end = self.next_offset.get((name, index), 0)
                # partition, error_code, high_watermark, last_stable_offset, no aborted
                # transactions (null), records
                partitions.append(i32(index) + i16(0) + i64(end) + i64(end) + i32(-1) + i32(len(data)) + data)
            responses.append(string(name) + array(partitions))
        self._fetch_wait_ms = 0 if found else max_wait_ms
        return i32(0) + array(responses)  # throttle_time_ms

    def list_offsets(self, r: Reader) -> bytes:
        """The earliest (timestamp -2: 0) or latest (any other) offset of each partition."""
        r.int32()  # replica_id
        responses = []
        for _ in range(r.int32()):
            name = r.string() or ""
            partitions = []
            for _ in range(r.int32()):
                index, timestamp = r.int32(), r.int64()
                if index >= self.topics.get(name, 0):
                    partitions.append(i32(index) + i16(UNKNOWN_TOPIC_OR_PARTITION) + i64(-1) + i64(-1))
                    continue
                offset = 0 if timestamp == -2 else self.next_offset.get((name, index), 0)
                partitions.append(i32(index) + i16(0) + i64(-1) + i64(offset))
            responses.append(string(name) + array(partitions))
        return array(responses)


def user_store(users: Optional[Dict[str, str]] = None) -> ksasl.CredentialStore:
    """The example's users (PLAIN and SCRAM): alice / alice-secret unless given."""
    store = ksasl.CredentialStore()
    for user, password in (users or {"alice": "alice-secret"}).items():
        store.add_user(user, password)
    return store


def listener_config(text: str, listener: str,
                    scram_store: Optional[ksasl.CredentialStore] = None
                    ) -> Tuple[ksasl.ServerConfig, List[ksasl.JwksEndpoint]]:
    """One SASL listener of server.properties ``text``, as ksasl reads it (ksasl.ServerSetup):
    its configuration, and its JWKS endpoints (if it validates OAUTHBEARER tokens at an
    identity provider), their keys fetched now (failing at start, not at the first client) and
    kept fresh on ksasl's thread. SCRAM users come from ``scram_store``, as Kafka's come from
    its metadata, not from the file. ApiVersions lists this broker's APIs beside ksasl's."""
    setup = ksasl.ServerSetup(text, listener, scram_store, api_versions=APIS)
    endpoints = [endpoint for _, endpoint in setup.jwks]
    for endpoint in endpoints:
        endpoint.fetch()
        endpoint.start()
    return setup.config, endpoints


def jwks_endpoint(url: str, issuer: Optional[str] = None, audience: Optional[str] = None,
                  ca_file: Optional[str] = None) -> "ksasl.JwksEndpoint":
    """The validator of a listener configured as Kafka's is for an identity provider
    (``sasl.oauthbearer.jwks.endpoint.url``, ``.expected.issuer``, ``.expected.audience``,
    ``ssl.truststore.location`` as PEM): its keys fetched now and kept fresh on ksasl's thread."""
    validator = ksasl.JwksValidator(expected_issuer=issuer,
                                    expected_audiences=[audience] if audience else None)
    endpoint = ksasl.JwksEndpoint(url, validator, ca_file=ca_file)
    endpoint.fetch()  # fail at start, not at the first client, when the provider is unreachable
    endpoint.start()
    return endpoint


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default=None,
                   help="default: the listener's host in --config's listeners (an empty one: "
                        "127.0.0.1), else 127.0.0.1")
    p.add_argument("--port", type=int, default=None,
                   help="0: a free port (printed); default: the listener's port in --config's "
                        "listeners, else 0")
    p.add_argument("--max-reauth-ms", type=int, help="connections.max.reauth.ms (default 3000)")
    p.add_argument("--keytab", help="the broker's keytab: enables GSSAPI")
    p.add_argument("--principal", help="the broker's Kerberos principal (kafka/host@REALM)")
    p.add_argument("--principal-to-local-rules", help="sasl.kerberos.principal.to.local.rules")
    p.add_argument("--jwks-endpoint-url", help="sasl.oauthbearer.jwks.endpoint.url: OAUTHBEARER "
                   "takes signed tokens of this identity provider instead of unsecured ones")
    p.add_argument("--expected-issuer", help="sasl.oauthbearer.expected.issuer")
    p.add_argument("--expected-audience", help="sasl.oauthbearer.expected.audience")
    p.add_argument("--ca-file", help="the CA certificates (PEM) of the JWKS endpoint")
    p.add_argument("--aws-region", help="serve AWS_MSK_IAM and MSK's OAUTHBEARER tokens signed "
                   "for this region, with the keys of --aws-key and --aws-keys-file")
    p.add_argument("--aws-key", action="append", metavar="KEY_ID:SECRET:PRINCIPAL",
                   help="an AWS access key and the principal it authenticates as (repeatable)")
    p.add_argument("--aws-keys-file", metavar="JSON", help="a JSON list of {access_key_id, "
                   "secret_access_key, principal[, session_token, expires_at_ms]}, read again "
                   "whenever it changes")
    p.add_argument("--aws-host", action="append", metavar="NAME", help="a host name AWS_MSK_IAM "
                   "clients may sign for (repeatable; default: any)")
    p.add_argument("--tls-cert", metavar="PEM", help="serve SASL_SSL: the certificate chain")
    p.add_argument("--tls-key", metavar="PEM", help="the private key of --tls-cert")
    p.add_argument("--config", metavar="SERVER_PROPERTIES", help="a broker's server.properties: "
                   "serve one of its SASL listeners as it says (mechanisms, PLAIN users, session "
                   "lifetimes, OAUTHBEARER validation) instead of the options above; SCRAM users "
                   "stay alice/alice-secret; clients authenticate but cannot produce (see "
                   "listener_config)")
    p.add_argument("--listener", help="with --config: the listener's name (default: the file's "
                   "only SASL listener)")
    p.add_argument("-v", "--verbose", action="store_true", help="log each connection")
    args = p.parse_args()
    flags = ["max_reauth_ms", "keytab", "principal", "principal_to_local_rules", "jwks_endpoint_url",
             "expected_issuer", "expected_audience", "ca_file", "aws_region", "aws_key", "aws_keys_file",
             "aws_host"]
    given = ["--" + f.replace("_", "-") for f in flags if getattr(args, f) is not None]
    text, listener = None, None
    if args.config is None:
        if args.listener is not None:
            p.error("--listener needs --config")
    elif given:
        p.error(f"--config takes the listener's settings from the file: drop {' '.join(given)}")
    else:
        with open(args.config, encoding="utf-8") as f:
            text = f.read()
        try:
            listener = ksasl.choose_listener(text, args.listener)
        except ksasl.KsaslError as e:
            p.error(f"{args.config}: {e}")
    max_reauth_ms = 3000 if args.max_reauth_ms is None else args.max_reauth_ms
    aws: Optional[AwsKeys] = None
    aws_given = [f"--{f}" for f in ("aws-key", "aws-keys-file", "aws-host")
                 if getattr(args, f.replace("-", "_")) is not None]
    if args.aws_region is None and aws_given:
        p.error(f"{' '.join(aws_given)}: requires --aws-region")
    if args.aws_region is not None:
        if args.aws_key is None and args.aws_keys_file is None:
            p.error("--aws-region needs --aws-key or --aws-keys-file")
        if args.jwks_endpoint_url is not None:
            p.error("with --aws-region OAUTHBEARER takes MSK's tokens: drop --jwks-endpoint-url")
        try:
            keys = [parse_aws_key(k) for k in args.aws_key or []]
            aws = AwsKeys(args.aws_region, keys, args.aws_keys_file, args.aws_host)
        except (OSError, ValueError, KeyError, TypeError) as e:  # KsaslError is a ValueError
            p.error(f"AWS keys: {e}")
    if (args.tls_cert is None) != (args.tls_key is None):
        p.error("--tls-cert and --tls-key go together")
    tls = None
    if args.tls_cert is not None:
        try:
            tls = tls_context(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as e:
            p.error(f"TLS: {e}")
    # Where to listen: the options, else the listener's entry in the file's listeners.
    address = None
    if text is not None and listener is not None:
        try:
            address = ksasl.listener_address(text, listener)
        except ksasl.KsaslError as e:
            p.error(f"{args.config}: {e}")
    if args.host is None:
        args.host = (address[0] if address else "") or "127.0.0.1"
    if args.port is None:
        args.port = address[1] if address else 0
    from_file: Optional[Tuple[ksasl.ServerConfig, List[ksasl.JwksEndpoint]]] = None
    store = user_store()
    if text is not None and listener is not None:
        try:
            from_file = listener_config(text, listener, store)
        except (ksasl.KsaslError, NotImplementedError) as e:
            p.exit(1, f"{p.prog}: {args.config}, listener {listener}: {e}\n")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(message)s")

    async def run() -> None:
        endpoints: List[ksasl.JwksEndpoint] = []
        if from_file is not None:
            config, endpoints = from_file
            server = KafkaServer(args.host, args.port, config=config, scram_store=store, tls=tls)
            about = (f"listener {listener} of {args.config}; SCRAM users: alice/alice-secret; "
                     "clients authenticate but cannot produce")
        else:
            jwks = (jwks_endpoint(args.jwks_endpoint_url, args.expected_issuer,
                                  args.expected_audience, args.ca_file)
                    if args.jwks_endpoint_url else None)
            server = KafkaServer(args.host, args.port, max_reauth_ms, keytab=args.keytab,
                                 principal=args.principal,
                                 principal_to_local_rules=args.principal_to_local_rules,
                                 oauthbearer_validator=jwks, aws=aws, tls=tls)
            about = f"users: alice/alice-secret; connections.max.reauth.ms={max_reauth_ms}"
            if aws is not None:
                about += f"; AWS_MSK_IAM and MSK OAUTHBEARER tokens for {aws.region}"
        stopping = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):  # before the port is printed: scripts may stop us then
            asyncio.get_running_loop().add_signal_handler(sig, stopping.set)
        port = await server.start()
        print(port, flush=True)  # first line: the port, for scripts
        protocol = "SASL_SSL" if tls is not None else "SASL_PLAINTEXT"
        print(f"listening on {args.host}:{port}, {protocol} ({about}); Ctrl-C stops", flush=True)
        await stopping.wait()
        await server.stop()
        for endpoint in endpoints:
            endpoint.stop()
        for name, value in sorted(server.metrics().items()):
            print(f"{name} {value}")

    asyncio.run(run())


if __name__ == "__main__":
    main()
