"""asyncio helpers. ``AsyncServerConnection`` answers credential requests with an ``async``
lookup (a database query, say) through the pull form: the Rust core stops with
"need_credential", the lookup is awaited on the event loop, and the answer is provided."""

import inspect
from typing import Any, Awaitable, Callable, Optional, Tuple, Union

from ksasl._ksasl import ServerConfig, ServerConnection

Lookup = Callable[[str, str, bool], Union[Any, Awaitable[Any]]]


class AsyncServerConnection:
    """A ``ServerConnection`` whose credential lookups are awaited. Use a registry whose
    password servers were added without credentials (``add_password_servers()``)."""

    def __init__(self, config: ServerConfig, lookup: Lookup) -> None:
        self.conn = ServerConnection(config)
        self._lookup = lookup

    async def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> Tuple[str, bytes, Optional[int]]:
        action, out, deadline = self.conn.handle_frame(frame, now_ms)
        while action == "need_credential":
            req = self.conn.credential_request()
            assert req is not None
            answer = self._lookup(req["mechanism"], req["username"], req["token_auth"])
            if inspect.isawaitable(answer):
                answer = await answer
            action, more, deadline = self.conn.provide_credential(answer, now_ms)
            out += more
        return action, out, deadline

    def gate(self, api_key: int, now_ms: Optional[int] = None) -> str:
        return self.conn.gate(api_key, now_ms)

    @property
    def ready(self) -> bool:
        return self.conn.ready

    def session(self) -> Optional["dict[str, Any]"]:
        return self.conn.session()
