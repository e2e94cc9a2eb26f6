"""asyncio helpers for the connection drivers.

The Rust core never waits: when it needs something only the host can produce, it stops and
says what (``ServerConnection.host_task()``, ``ClientConnection.pending_work()``), and these
wrappers only await it on the event loop and hand the answer back.

* ``AsyncServerConnection`` answers credential requests with an ``async`` lookup (a database
  query, say).
* Both ``AsyncServerConnection`` and ``AsyncClientConnection`` drive mechanisms written in
  Python whose ``start``/``step`` are ``async def`` (a call to an in-house token service, a
  cloud signer): the mechanism's coroutine is awaited and the exchange resumes with its result.
  An exception raised by the coroutine fails the exchange like one raised by a synchronous
  mechanism (HOST_MECHANISM_FAILED with its text, or the KsaslError's own code). Cancelling the
  awaiting task leaves the connection waiting; close it.
"""

import inspect
from typing import Any, Awaitable, Callable, Optional, Tuple, Union

from ksasl._ksasl import ClientConfig, ClientConnection, ServerConfig, ServerConnection
from ksasl.errors import KsaslError

Lookup = Callable[[str, str, bool], Union[Any, Awaitable[Any]]]
ServerOutput = Tuple[str, bytes, Optional[int], Optional[KsaslError]]
ClientEvent = Tuple[str, Optional[bytes], Optional[KsaslError]]


async def _finish(work: Any) -> Any:
    """Awaits a mechanism's coroutine; an exception it raises becomes the result to resume
    with, so that the driver fails the exchange in its defined way."""
    try:
        return await work
    except Exception as e:  # not BaseException: cancellation propagates
        return e


async def settle_server(
    conn: ServerConnection, output: ServerOutput, lookup: Optional[Lookup] = None, now_ms: Optional[int] = None
) -> ServerOutput:
    """Settles what a ``ServerConnection`` call left to the host, as long as its
    ``host_task()`` names something: awaits a mechanism's work, or answers a credential request
    with ``lookup``. Returns the last output, with every frame to write."""
    frames = output[1]
    while True:
        task = conn.host_task()
        if task is None:
            return (output[0], frames, output[2], output[3])
        kind, value = task
        if kind == "mechanism":
            output = conn.resume(await _finish(value), now_ms)
        else:
            if lookup is None:
                raise RuntimeError("a mechanism asked for a credential and no lookup was given")
            answer = lookup(value["mechanism"], value["username"], value["token_authenticated"])
            if inspect.isawaitable(answer):
                answer = await answer
            output = conn.provide_credential(answer, now_ms)
        frames += output[1]


async def settle_client(conn: ClientConnection, event: ClientEvent, now_ms: Optional[int] = None) -> ClientEvent:
    """Awaits the mechanism work a ``ClientConnection`` call left, as long as there is some;
    returns the last event."""
    while True:
        work = conn.pending_work()
        if work is None:
            return event
        event = conn.resume(await _finish(work), now_ms)


class AsyncServerConnection:
    """A ``ServerConnection`` whose credential lookups and ``async`` mechanism methods are
    awaited. For the lookup, use a registry whose password servers were added without
    credentials (``add_password_servers()``); ``lookup`` may be None when no mechanism asks."""

    def __init__(self, config: ServerConfig, lookup: Optional[Lookup] = None) -> None:
        self.conn = ServerConnection(config)
        self._lookup = lookup

    async def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> ServerOutput:
        """As ``ServerConnection.handle_frame``, with what the host must settle settled."""
        return await settle_server(self.conn, self.conn.handle_frame(frame, now_ms), self._lookup, now_ms)

    def gate(self, api_key: int, now_ms: Optional[int] = None) -> str:
        return self.conn.gate(api_key, now_ms)

    @property
    def ready(self) -> bool:
        return self.conn.ready

    def session(self) -> Optional["dict[str, Any]"]:
        return self.conn.session()

    def __getattr__(self, name: str) -> Any:
        # Everything else (next_deadline, host_task, ...) as on the driver.
        return getattr(self.conn, name)


class AsyncClientConnection:
    """A ``ClientConnection`` whose ``async`` mechanism methods are awaited. Every other method
    is the driver's own; ``handle_frame`` is a coroutine that never returns "pending"."""

    def __init__(self, config: ClientConfig) -> None:
        self.conn = ClientConnection(config)

    async def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> ClientEvent:
        """As ``ClientConnection.handle_frame``; write ``transmit()`` afterwards."""
        return await settle_client(self.conn, self.conn.handle_frame(frame, now_ms), now_ms)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)
