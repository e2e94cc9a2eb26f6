"""The refresher's drivers: the asyncio task on a virtual clock (each sleep advances it by the
time the core asks for), and one real-clock smoke test of the core's background thread."""

import asyncio
import time

import ksasl
from ksasl.drivers import RefresherThread, run_refresher

T0 = 1_800_000_000_000


class VirtualClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += round(seconds * 1000)
        await asyncio.sleep(0)


def fetcher(clock, log, fail_on=(), lifetime_seconds=2):
    """Tokens of `lifetime_seconds`; the calls numbered in `fail_on` raise instead."""

    def fetch():
        log.append(clock())
        if len(log) in fail_on:
            raise ConnectionError("token endpoint down")
        t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=lifetime_seconds, now_ms=clock())
        return t["token"], t["expiry_ms"], "alice", None

    return fetch


def drive(refresher, fetch, clock, until):
    """Runs the asyncio driver until `until(refresher)` or a virtual minute has passed."""

    async def main():
        task = asyncio.create_task(run_refresher(refresher, fetch, clock=clock, sleep=clock.sleep))
        while not until(refresher) and clock() < T0 + 60_000:
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(main())


def test_asyncio_driver_refreshes_on_schedule():
    clock, log = VirtualClock(), []
    r = ksasl.Refresher()
    drive(r, fetcher(clock, log), clock, lambda r: r.generation >= 4)
    assert log[0] == T0, "the first token at once"
    # Kafka's schedule: 80 % of the token's life plus up to 5 % jitter.
    for a, b in zip(log, log[1:]):
        assert 1600 <= b - a <= 1700, log


def test_asyncio_driver_keeps_the_token_when_fetch_fails_and_retries_after_the_backoff():
    clock, log, seen = VirtualClock(), [], []
    r = ksasl.Refresher(retry_backoff_ms=500, retry_backoff_max_ms=500)

    def until(r):
        if len(log) == 2 and not seen:  # just after the failed refresh
            seen.append(r.current(clock())["generation"])
        return r.generation >= 2

    drive(r, fetcher(clock, log, fail_on=(2,), lifetime_seconds=10), clock, until)
    assert seen == [1], "the old token is still offered"
    assert log[2] - log[1] == 500, "retried after the refresher's backoff"


def test_asyncio_driver_with_an_async_fetch():
    clock, log = VirtualClock(), []
    sync_fetch = fetcher(clock, log)

    async def fetch():
        await asyncio.sleep(0)
        return sync_fetch()

    r = ksasl.Refresher()
    drive(r, fetch, clock, lambda r: r.generation >= 2)
    assert len(log) == 2 and 1600 <= log[1] - log[0] <= 1700


def test_the_background_thread_on_the_real_clock():
    """Smoke test of the core's refresh thread: it fetches at once, again before the two-second
    token expires (that fetch fails: the old token stays), and stops."""
    log, now = [], lambda: int(time.time() * 1000)
    r = ksasl.Refresher()
    with RefresherThread(r, fetcher(now, log, fail_on=(2,))) as driver:
        deadline = time.time() + 5
        while len(log) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert len(log) >= 2
        assert r.current()["generation"] == 1, "the old token is still offered"
    assert 1500 <= log[1] - log[0] < 2000
    assert isinstance(driver.errors[0], ConnectionError)
    calls = len(log)
    time.sleep(0.1)
    assert len(log) == calls, "stopped"
