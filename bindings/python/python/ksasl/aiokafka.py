"""KIP-368 re-authentication for aiokafka, driven by the ksasl client driver (opt-in).

aiokafka authenticates a connection once and never again, so a broker with
``connections.max.reauth.ms`` closes every connection when its session ends. This module
replaces aiokafka's SASL step with ksasl's ``ClientConnection``: it reads the session lifetime
the broker grants, re-authenticates at Kafka's point (85-95 % of the lifetime), holds the
requests sent meanwhile and writes them, in order, once the new session is in place. Responses
to requests already in flight are handed back to aiokafka in arrival order.

Usage::

    import ksasl.aiokafka
    integration = ksasl.aiokafka.enable()    # before creating producers and consumers
    ...                                       # aiokafka as usual: PLAIN, SCRAM-SHA-256/512,
                                              # or OAUTHBEARER with ksasl.adapters.AsyncTokenProvider
    integration.metrics()                     # Kafka's client SASL metrics, summed
    ksasl.aiokafka.disable()

GSSAPI (Kerberos) takes its ticket from a ``ksasl.KerberosLogin`` (a keytab, no ``kinit``),
renewed on Kafka's schedule by the core's thread; aiokafka's own ``sasl_kerberos_service_name``
and ``sasl_kerberos_domain_name`` (default: the broker's host) name the broker's principal,
and aiokafka still requires the ``gssapi`` package to be importable::

    login = ksasl.KerberosLogin(principal="alice@EXAMPLE.COM", keytab="alice.keytab")
    login.login()
    renewal = ksasl.BackgroundRefresher.kerberos(login)
    integration = ksasl.aiokafka.enable(kerberos_login=login)
    ...                                       # aiokafka with sasl_mechanism="GSSAPI"
    renewal.stop()

It was written against aiokafka's private connection class and refuses to import on another
aiokafka release line than the ones in ``SUPPORTED``.
"""

import asyncio
import time
from typing import Any, Awaitable, Callable, Deque, Dict, List, Optional, Tuple
from collections import deque

import aiokafka  # type: ignore[import-untyped]
import aiokafka.conn as _conn  # type: ignore[import-untyped]
import aiokafka.errors as _errors  # type: ignore[import-untyped]

from ksasl._ksasl import ClientConfig, ClientConnection, KerberosLogin, MechanismRegistry
from ksasl.errors import KsaslError

#: aiokafka release lines this integration was written and tested for.
SUPPORTED = ("0.14.",)

if not aiokafka.__version__.startswith(SUPPORTED):
    raise ImportError(
        f"ksasl.aiokafka supports aiokafka {', '.join(v + 'x' for v in SUPPORTED)}, "
        f"not {aiokafka.__version__}: it replaces parts of aiokafka's private connection "
        "class, so it refuses to run on a version it was not tested with"
    )

_API_SASL_HANDSHAKE = 17
_API_SASL_AUTHENTICATE = 36


def _now_ms() -> int:
    return int(time.time() * 1000)


class Integration:
    """The installed integration: one ksasl client configuration (and its metrics) per
    distinct set of credentials."""

    def __init__(self, reauth_timing: str = "kafka", kerberos_login: Optional[KerberosLogin] = None) -> None:
        self.reauth_timing = reauth_timing
        #: The Kerberos login of GSSAPI connections.
        self.kerberos_login = kerberos_login
        #: (host, port, close reason) of every connection closed while the integration was on.
        self.closes: List[Tuple[str, int, Any]] = []
        #: connections closed (by either side) in the middle of a re-authentication.
        self.closed_while_reauthenticating = 0
        self._configs: Dict[Tuple[Any, ...], Tuple[ClientConfig, Any]] = {}

    def config_for(self, conn: "_conn.AIOKafkaConnection", known: Tuple[int, Optional[int]]) -> Tuple[ClientConfig, Any]:
        mechanism = conn._sasl_mechanism
        provider = conn._sasl_oauth_token_provider
        # GSSAPI's service principal: aiokafka's service name at the domain name or broker host.
        service = (conn._sasl_kerberos_service_name, conn._sasl_kerberos_domain_name or conn.host)
        key: Tuple[Any, ...] = (mechanism, conn._sasl_plain_username, conn._sasl_plain_password, id(provider),
                                known, service)
        found = self._configs.get(key)
        if found is not None:
            return found
        registry = MechanismRegistry()
        if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            registry.add_password_clients(conn._sasl_plain_username, conn._sasl_plain_password)
        elif mechanism == "OAUTHBEARER":
            refresher = getattr(provider, "refresher", None)
            if refresher is None:
                raise ValueError(
                    "ksasl.aiokafka: OAUTHBEARER needs a ksasl token provider "
                    "(ksasl.adapters.AsyncTokenProvider), whose refresher supplies every "
                    "re-authentication with a current token"
                )
            registry.add_oauthbearer_client(refresher)
        elif mechanism == "GSSAPI":
            if self.kerberos_login is None:
                raise ValueError(
                    "ksasl.aiokafka: GSSAPI needs a ksasl.KerberosLogin "
                    "(ksasl.aiokafka.enable(kerberos_login=...)), whose ticket every "
                    "re-authentication uses"
                )
            registry.add_gssapi_client(self.kerberos_login, *service)
        else:
            raise ValueError(f"ksasl.aiokafka: mechanism {mechanism} is not supported")
        config = ClientConfig(
            registry,
            mechanism,
            client_id=conn._client_id,
            reauth_timing=self.reauth_timing,
            known_versions=known,
        )
        self._configs[key] = (config, provider)
        return config, provider

    def metrics(self, now_ms: Optional[int] = None) -> Dict[str, float]:
        """Kafka's client SASL metrics summed over every configuration (totals are exact;
        rates and averages are summed too, so read them per configuration if you need them)."""
        out: Dict[str, float] = {}
        for config, _ in self._configs.values():
            for k, v in config.metrics(now_ms).items():
                out[k] = out.get(k, 0.0) + v
        return out


class ReauthenticatingConnection(_conn.AIOKafkaConnection):  # type: ignore[misc]
    """aiokafka's connection with the SASL phase and re-authentication run by ksasl."""

    integration: Optional[Integration] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ksasl: Optional[ClientConnection] = None
        self._ksasl_provider: Any = None
        self._ksasl_auth: Optional["asyncio.Future[None]"] = None
        self._ksasl_timer: Optional[asyncio.TimerHandle] = None
        self._ksasl_held: Deque[Tuple[Any, bool, "asyncio.Future[Any]"]] = deque()
        self._ksasl_refreshing = False
        #: (event, wall ms) of every authentication of this connection, for tests and logs.
        self.ksasl_events: List[Tuple[str, int]] = []

    # --- authentication -------------------------------------------------------------------

    async def _do_sasl_handshake(self) -> None:
        integration = type(self).integration
        if integration is None:
            return await super()._do_sasl_handshake()  # type: ignore[no-any-return]
        handshake = self._versions.get(_API_SASL_HANDSHAKE)
        if handshake is None:
            raise _errors.UnsupportedSaslMechanismError("the broker does not offer SaslHandshake")
        authenticate = self._versions.get(_API_SASL_AUTHENTICATE)
        known = (min(handshake[1], 1), min(authenticate[1], 2) if authenticate and handshake[1] >= 1 else None)
        config, provider = integration.config_for(self, known)
        self._ksasl_provider = provider
        await self._refresh_token()
        driver = ClientConnection(config)
        self._ksasl_auth = self._loop.create_future()
        self._ksasl = driver
        driver.start(_now_ms())
        self._write_sasl()
        try:
            await asyncio.wait_for(asyncio.shield(self._ksasl_auth), self._request_timeout)
        except asyncio.TimeoutError:
            exc = _errors.KafkaConnectionError(f"SASL authentication with {self._host}:{self._port} timed out")
            self.close(reason=_conn.CloseReason.AUTH_FAILURE, exc=exc)
            raise exc from None
        self._schedule()

    async def _refresh_token(self) -> None:
        # A ksasl token provider updates its refresher when asked for a token.
        provider = self._ksasl_provider
        if provider is not None and callable(getattr(provider, "token", None)):
            await provider.token()

    def _write_sasl(self) -> None:
        if self._ksasl is None or self._writer is None:
            return
        data = self._ksasl.transmit()
        if data:
            self._writer.write(data)

    def _fail(self, exc: KsaslError) -> None:
        error = _errors.SaslAuthenticationFailed(str(exc))
        error.__cause__ = exc
        auth = self._ksasl_auth
        if auth is not None and not auth.done():
            auth.set_exception(error)
        self.close(reason=_conn.CloseReason.AUTH_FAILURE, exc=error)

    # --- frames ---------------------------------------------------------------------------

    def _handle_frame(self, resp: bytes) -> None:
        driver = self._ksasl
        if driver is None:
            return super()._handle_frame(resp)  # type: ignore[no-any-return]
        now = _now_ms()
        try:
            event, frame, _ = driver.handle_frame(resp, now)
        except KsaslError as e:
            self._fail(e)
            return None
        if event == "application":
            return super()._handle_frame(frame)  # type: ignore[no-any-return]
        if event != "continue":
            self.ksasl_events.append((event, now))
        if event == "authenticated":
            if self._ksasl_auth is not None and not self._ksasl_auth.done():
                self._ksasl_auth.set_result(None)
        elif event in ("reauthenticated", "reauth_failed"):
            self._flush_held()
            self._schedule()
        self._write_sasl()
        return None

    # --- requests -------------------------------------------------------------------------

    def send(self, request: Any, expect_response: bool = True) -> Awaitable[Any]:
        driver = self._ksasl
        if driver is None or self._writer is None:
            return super().send(request, expect_response)  # type: ignore[no-any-return]
        try:
            ready = not self._ksasl_held and driver.before_request(_now_ms())
        except KsaslError as e:
            self._fail(e)
            return super().send(request, expect_response)  # type: ignore[no-any-return]
        self._write_sasl()  # before_request may have started a due re-authentication
        if ready:
            return super().send(request, expect_response)  # type: ignore[no-any-return]
        fut: "asyncio.Future[Any]" = self._loop.create_future()
        self._ksasl_held.append((request, expect_response, fut))
        return asyncio.wait_for(fut, self._request_timeout)

    def _flush_held(self) -> None:
        while self._ksasl_held:
            request, expect_response, fut = self._ksasl_held.popleft()
            if fut.done():
                continue
            inner = asyncio.ensure_future(super().send(request, expect_response))
            inner.add_done_callback(lambda t, f=fut: _copy(t, f))

    # --- timer ----------------------------------------------------------------------------

    def _schedule(self) -> None:
        if self._ksasl_timer is not None:
            self._ksasl_timer.cancel()
            self._ksasl_timer = None
        if self._ksasl is None:
            return
        deadline = self._ksasl.next_deadline()
        if deadline is None:
            return
        delay = max(0.0, (deadline - _now_ms()) / 1000.0)
        self._ksasl_timer = self._loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._ksasl_timer = None
        if self._ksasl is None or self._writer is None or self._ksasl_refreshing:
            return
        self._ksasl_refreshing = True
        task = asyncio.ensure_future(self._reauthenticate())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def _reauthenticate(self) -> None:
        try:
            await self._refresh_token()
            driver = self._ksasl
            if driver is None or self._writer is None:
                return
            try:
                started = driver.handle_timeout(_now_ms())
            except KsaslError as e:
                self._fail(e)
                return
            self._write_sasl()
            if not started:
                self._schedule()
        finally:
            self._ksasl_refreshing = False

    def close(self, reason: Any = None, exc: Optional[BaseException] = None) -> Any:
        integration = type(self).integration
        if integration is not None and self._reader is not None:
            integration.closes.append((self._host, self._port, reason))
            if self._ksasl is not None and self._ksasl.reauthenticating:
                # The broker may have finished this re-authentication (and counted it) while
                # its answer was still on the way: the client never sees it complete.
                integration.closed_while_reauthenticating += 1
        if self._ksasl_timer is not None:
            self._ksasl_timer.cancel()
            self._ksasl_timer = None
        held, self._ksasl_held = self._ksasl_held, deque()
        result = super().close(reason=reason, exc=exc)
        for _, _, fut in held:
            if not fut.done():
                err = _errors.KafkaConnectionError(f"Connection at {self._host}:{self._port} closed")
                if exc is not None:
                    err.__cause__ = exc
                fut.set_exception(err)
        self._ksasl = None
        return result


def _copy(source: "asyncio.Future[Any]", target: "asyncio.Future[Any]") -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
    elif source.exception() is not None:
        target.set_exception(source.exception())  # type: ignore[arg-type]
    else:
        target.set_result(source.result())


_original: Optional[Callable[..., Any]] = None


def enable(reauth_timing: str = "kafka", kerberos_login: Optional[KerberosLogin] = None) -> Integration:
    """Makes every aiokafka connection created from now on authenticate through ksasl and
    re-authenticate as the broker's session lifetime requires. ``kerberos_login``: the login
    GSSAPI connections use (keep it renewed, e.g. with ``BackgroundRefresher.kerberos``).
    Returns the integration, whose ``metrics()`` gives Kafka's client SASL metrics."""
    global _original
    integration = Integration(reauth_timing, kerberos_login)
    ReauthenticatingConnection.integration = integration
    if _original is None:
        _original = _conn.AIOKafkaConnection
        _conn.AIOKafkaConnection = ReauthenticatingConnection
    return integration


def disable() -> None:
    """Restores aiokafka's own connection class for connections created from now on."""
    global _original
    if _original is not None:
        _conn.AIOKafkaConnection = _original
        _original = None
    ReauthenticatingConnection.integration = None
