"""Drivers for a ``Refresher`` outside the sans-IO core: the core's refresh thread
(``RefresherThread``) and an asyncio task (``run_refresher``). Both call ``fetch`` when a refresh
is due (the core's schedule and sleep rule) and install its answer; a failing ``fetch`` keeps the
old token while it is valid and is retried after the refresher's backoff.

``fetch`` returns ``(token, expiry_ms, principal, extensions)`` with an ABSOLUTE expiry in
milliseconds since the epoch; for the asyncio driver it may be a coroutine function.
"""

import asyncio
import atexit
import inspect
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple, Union

from ksasl._ksasl import BackgroundRefresher, Refresher, sleep_ms

Answer = Tuple[str, int, str, Optional[Dict[str, str]]]
Fetch = Callable[[], Union[Answer, Awaitable[Answer]]]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _install(refresher: Refresher, answer: Any, now: int) -> None:
    token, expiry_ms, principal, extensions = answer
    refresher.set_token(token, expiry_ms, principal, extensions or {}, now)


class RefresherThread:
    """Refreshes on the core's background thread (``BackgroundRefresher``, on the wall clock);
    use as a context manager or call ``stop()``. Exceptions raised by ``fetch`` are kept in
    ``errors`` (and reported to the refresher as failed refreshes)."""

    def __init__(self, refresher: Refresher, fetch: Callable[[], Answer]) -> None:
        self.refresher = refresher
        self._fetch = fetch
        self.errors: List[Exception] = []
        self._driver = BackgroundRefresher(refresher, self._refresh)
        atexit.register(self.stop)

    def _refresh(self, now_ms: int) -> None:
        try:
            _install(self.refresher, self._fetch(), now_ms)
        except Exception as e:
            self.errors.append(e)
            raise  # the core records the failed refresh with the exception's text

    def stop(self) -> None:
        atexit.unregister(self.stop)
        self._driver.stop()

    def __enter__(self) -> "RefresherThread":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


async def run_refresher(
    refresher: Refresher,
    fetch: Fetch,
    clock: Callable[[], int] = _now_ms,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> None:
    """Runs until cancelled: the asyncio variant of ``RefresherThread``. ``clock`` (ms) and
    ``sleep`` (seconds) default to the wall clock and ``asyncio.sleep``."""
    while True:
        now = clock()
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
        await sleep(sleep_ms(refresher.next_deadline(), clock()) / 1000.0)
