"""Drivers for a ``Refresher`` outside the sans-IO core: a thread, and an asyncio task. Both
sleep until the refresher's exact next deadline (the wall clock), call ``fetch`` when a refresh
is due, and install its answer; a failing ``fetch`` keeps the old token while it is valid and
is retried after the refresher's backoff.

``fetch`` returns ``(token, expiry_ms, principal, extensions)`` with an ABSOLUTE expiry in
milliseconds since the epoch; for the asyncio driver it may be a coroutine function.
"""

import asyncio
import inspect
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple, Union

from ksasl._ksasl import Refresher

Answer = Tuple[str, int, str, Optional[Dict[str, str]]]
Fetch = Callable[[], Union[Answer, Awaitable[Answer]]]

# While a request is outstanding the refresher has no deadline; look again this often (ms).
_IDLE_MS = 1000


def _now_ms() -> int:
    return int(time.time() * 1000)


def _install(refresher: Refresher, answer: Any, now: int) -> None:
    token, expiry_ms, principal, extensions = answer
    refresher.set_token(token, expiry_ms, principal, extensions or {}, now)


class RefresherThread:
    """Refreshes in a daemon thread; use as a context manager or call ``stop()``."""

    def __init__(self, refresher: Refresher, fetch: Callable[[], Answer]) -> None:
        self.refresher = refresher
        self._fetch = fetch
        self._stop = threading.Event()
        self.errors: "list[Exception]" = []
        self._thread = threading.Thread(target=self._run, name="ksasl-refresh", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = _now_ms()
            if self.refresher.poll(now):
                try:
                    _install(self.refresher, self._fetch(), now)
                except Exception as e:  # kept for the host; the old token stays valid
                    self.errors.append(e)
                    self.refresher.set_token_failure(f"{type(e).__name__}: {e}", now)
            deadline = self.refresher.next_deadline()
            wait_ms = _IDLE_MS if deadline is None else max(0, min(deadline - _now_ms(), _IDLE_MS))
            self._stop.wait(wait_ms / 1000.0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> "RefresherThread":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


async def run_refresher(refresher: Refresher, fetch: Fetch) -> None:
    """Runs until cancelled: the asyncio variant of ``RefresherThread``."""
    while True:
        now = _now_ms()
        if refresher.poll(now):
            try:
                answer = fetch()
                if inspect.isawaitable(answer):
                    answer = await answer
                _install(refresher, answer, now)
            except asyncio.CancelledError:
                refresher.set_token_failure("cancelled", now)
                raise
            except Exception as e:
                refresher.set_token_failure(f"{type(e).__name__}: {e}", now)
        deadline = refresher.next_deadline()
        wait_ms = _IDLE_MS if deadline is None else max(0, min(deadline - _now_ms(), _IDLE_MS))
        await asyncio.sleep(wait_ms / 1000.0)
