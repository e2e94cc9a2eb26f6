"""The refresher's thread and asyncio drivers, on the real clock with two-second tokens."""

import asyncio
import threading
import time

import ksasl
from ksasl.drivers import RefresherThread, run_refresher


def fetcher(log):
    def fetch():
        now = int(time.time() * 1000)
        t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=2, now_ms=now)
        log.append(now)
        return t["token"], t["expiry_ms"], "alice", None

    return fetch


def test_thread_driver_refreshes_on_schedule_and_stops():
    log = []
    r = ksasl.Refresher()
    before = threading.active_count()
    with RefresherThread(r, fetcher(log)):
        deadline = time.time() + 5
        while len(log) < 2 and time.time() < deadline:
            time.sleep(0.05)
    assert len(log) >= 2
    assert 1500 <= log[1] - log[0] < 2000, "refreshed at 80-85 % of a 2 s token"
    assert threading.active_count() == before, "the thread ended"
    assert r.generation >= 2


def test_thread_driver_keeps_the_token_when_fetch_fails():
    log = []
    ok = fetcher(log)
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("token endpoint down")
        return ok()

    r = ksasl.Refresher()
    with RefresherThread(r, flaky) as driver:
        deadline = time.time() + 4
        while calls["n"] < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert r.current()["generation"] == 1, "the old token is still offered"
    assert isinstance(driver.errors[0], ConnectionError)


def test_asyncio_driver_with_an_async_fetch():
    log = []
    sync_fetch = fetcher(log)

    async def fetch():
        await asyncio.sleep(0)
        return sync_fetch()

    async def main():
        r = ksasl.Refresher()
        task = asyncio.create_task(run_refresher(r, fetch))
        for _ in range(100):
            if len(log) >= 2:
                break
            await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return r

    r = asyncio.run(main())
    assert len(log) >= 2 and r.generation >= 2
