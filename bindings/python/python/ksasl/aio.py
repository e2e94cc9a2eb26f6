"""asyncio helpers for the connection drivers.

The Rust core never waits: when it needs something only the host can produce, it stops and
says so, and these wrappers do the awaiting on the event loop.

* ``AsyncServerConnection`` answers credential requests with an ``async`` lookup (a database
  query, say): the core stops with "need_credential", the lookup is awaited, and the answer is
  provided.
* Both ``AsyncServerConnection`` and ``AsyncClientConnection`` drive mechanisms written in
  Python whose ``start``/``step`` are ``async def`` (a call to an in-house token service, a
  cloud signer): the core stops with "pending", the mechanism's coroutine is awaited, and the
  exchange resumes with its result. An exception raised by the coroutine fails the exchange
  like one raised by a synchronous mechanism (HOST_MECHANISM_FAILED with its text, or the
  KsaslError's own code). Cancelling the awaiting task leaves the connection waiting; close it.
"""

import inspect
from typing import Any, Awaitable, Callable, Optional, Tuple, Union

from ksasl._ksasl import ClientConfig, ClientConnection, ServerConfig, ServerConnection

Lookup = Callable[[str, str, bool], Union[Any, Awaitable[Any]]]


async def _finish(work: Any) -> Any:
    """Awaits a mechanism's coroutine; an exception it raises becomes the result to resume
    with, so that the driver fails the exchange in its defined way."""
    try:
        return await work
    except Exception as e:  # not BaseException: cancellation propagates
        return e


async def settle_server(
    conn: ServerConnection,
    result: Tuple[str, bytes, Optional[int]],
    lookup: Optional[Lookup] = None,
    now_ms: Optional[int] = None,
) -> Tuple[str, bytes, Optional[int]]:
    """Finishes what a ``ServerConnection`` call left to the host: answers "need_credential"
    with ``lookup`` and awaits "pending" mechanism work, until the action is neither. Returns
    the last action, every frame to write (concatenated) and the deadline."""
    action, out, deadline = result
    while action in ("need_credential", "pending"):
        if action == "pending":
            answer = await _finish(conn.pending_work())
            action, more, deadline = conn.resume(answer, now_ms)
        else:
            req = conn.credential_request()
            assert req is not None
            if lookup is None:
                raise RuntimeError("a mechanism asked for a credential and no lookup was given")
            credential = lookup(req["mechanism"], req["username"], req["token_auth"])
            if inspect.isawaitable(credential):
                credential = await credential
            action, more, deadline = conn.provide_credential(credential, now_ms)
        out += more
    return action, out, deadline


async def settle_client(
    conn: ClientConnection, result: Tuple[str, Optional[bytes]], now_ms: Optional[int] = None
) -> Tuple[str, Optional[bytes]]:
    """Awaits the "pending" mechanism work a ``ClientConnection`` call left, until the event
    is another one; returns it."""
    event, data = result
    while event == "pending":
        answer = await _finish(conn.pending_work())
        event, data = conn.resume(answer, now_ms)
    return event, data


class AsyncServerConnection:
    """A ``ServerConnection`` whose credential lookups and ``async`` mechanism methods are
    awaited. For the lookup, use a registry whose password servers were added without
    credentials (``add_password_servers()``); ``lookup`` may be None when no mechanism asks."""

    def __init__(self, config: ServerConfig, lookup: Optional[Lookup] = None) -> None:
        self.conn = ServerConnection(config)
        self._lookup = lookup

    async def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> Tuple[str, bytes, Optional[int]]:
        """As ``ServerConnection.handle_frame``, never returning "need_credential" or
        "pending": those are answered here."""
        return await settle_server(self.conn, self.conn.handle_frame(frame, now_ms), self._lookup, now_ms)

    def gate(self, api_key: int, now_ms: Optional[int] = None) -> str:
        return self.conn.gate(api_key, now_ms)

    @property
    def ready(self) -> bool:
        return self.conn.ready

    def session(self) -> Optional["dict[str, Any]"]:
        return self.conn.session()

    def __getattr__(self, name: str) -> Any:
        # Everything else (metrics-free helpers, next_deadline, ...) as on the driver.
        return getattr(self.conn, name)


class AsyncClientConnection:
    """A ``ClientConnection`` whose ``async`` mechanism methods are awaited. Every other method
    is the driver's own; ``handle_frame`` is a coroutine that never returns "pending"."""

    def __init__(self, config: ClientConfig) -> None:
        self.conn = ClientConnection(config)

    async def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> Tuple[str, Optional[bytes]]:
        """As ``ClientConnection.handle_frame``; write ``transmit()`` afterwards."""
        return await settle_client(self.conn, self.conn.handle_frame(frame, now_ms), now_ms)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)
