"""aiokafka 0.14 (no KIP-368 of its own) with ksasl.aiokafka against the example broker
(examples/python/kafka_server.py, connections.max.reauth.ms = 3000): a producer sends for 10 s
with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER. With the integration every producing
connection re-authenticates before its session ends and none is killed; stock aiokafka's
connection is cut off by the broker (kept as the control). The real-broker run, with a
consumer group, is in tests/broker."""

import asyncio
import importlib
import sys
import time
from pathlib import Path

import pytest

import ksasl
from ksasl.adapters import AsyncTokenProvider

import aiokafka
from aiokafka import AIOKafkaProducer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python"
sys.path.insert(0, str(EXAMPLE))
import kafka_server  # noqa: E402

LIFETIME_MS = 3000
RUN_S = 10.0


def client_settings(mechanism: str) -> dict:
    kw = dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism)
    if mechanism == "OAUTHBEARER":
        def fetch():
            t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=15)
            return t["token"], t["expiry_ms"], t["principal"], None

        kw["sasl_oauth_token_provider"] = AsyncTokenProvider(fetch)
    else:
        kw.update(sasl_plain_username="alice", sasl_plain_password="alice-secret")
    return kw


MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]


async def produce(mechanism: str):
    """One producer against its own broker for RUN_S seconds."""
    server = kafka_server.KafkaServer(max_reauth_ms=LIFETIME_MS)
    port = await server.start()
    acked, errors = 0, []
    try:
        producer = AIOKafkaProducer(
            bootstrap_servers=f"127.0.0.1:{port}", retry_backoff_ms=100, **client_settings(mechanism)
        )
        await producer.start()
        try:
            end = time.monotonic() + RUN_S
            while time.monotonic() < end:
                try:
                    await producer.send_and_wait("reauth-test", b"x")
                    acked += 1
                except Exception as e:  # recorded: the stock client sees its connection cut
                    errors.append(e)
                await asyncio.sleep(0.1)
        finally:
            await producer.stop()
    finally:
        await asyncio.sleep(0.1)
        await server.stop()
    return server, acked, errors


@pytest.fixture(scope="module")
def integrated_runs():
    """Every mechanism at once, in one event loop, with the integration enabled."""
    import ksasl.aiokafka as ka

    async def all_mechanisms():
        return await asyncio.gather(*(produce(m) for m in MECHANISMS))

    integration = ka.enable()
    try:
        results = asyncio.run(all_mechanisms())
    finally:
        ka.disable()
    return integration, dict(zip(MECHANISMS, results))


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_aiokafka_reauthenticates_with_the_integration(integrated_runs, mechanism):
    integration, runs = integrated_runs
    server, acked, errors = runs[mechanism]
    assert not errors
    assert acked >= 50
    m = server.metrics()
    assert m["expired-connections-killed-count"] == 0
    producing = [c for c in server.connections if c.requests.get(0)]
    assert producing, "no produce requests reached the broker"
    for c in producing:
        reauths = len(c.authentications) - 1
        assert reauths >= int(RUN_S * 1000 / LIFETIME_MS) - 1, c
        # Each re-authentication came before the previous session's end.
        for (t0, life, _), (t1, _, _) in zip(c.authentications, c.authentications[1:]):
            assert t1 - t0 < life
    total = sum(r[0].metrics()["successful-reauthentication-total"] for r in runs.values())
    # A server may count a re-authentication whose answer the client never read, when stop()
    # closed the connection in the middle of it; nothing else may differ.
    counted = integration.metrics()["successful-reauthentication-total"]
    assert total - integration.closed_while_reauthenticating <= counted <= total, (
        counted, total, integration.closed_while_reauthenticating)


def test_stock_aiokafka_is_cut_off_by_the_broker():
    import ksasl.aiokafka as ka

    ka.disable()
    server, acked, _ = asyncio.run(produce("PLAIN"))
    assert server.metrics()["expired-connections-killed-count"] >= 1
    assert server.metrics()["successful-reauthentication-total"] == 0
    assert acked > 0


def test_refuses_an_aiokafka_it_was_not_written_for(monkeypatch):
    monkeypatch.setattr(aiokafka, "__version__", "0.15.0")
    sys.modules.pop("ksasl.aiokafka", None)
    with pytest.raises(ImportError, match="supports aiokafka 0.14.x, not 0.15.0"):
        importlib.import_module("ksasl.aiokafka")
    sys.modules.pop("ksasl.aiokafka", None)
