"""aiokafka 0.14 against a real Kafka 4.4 broker with connections.max.reauth.ms = 3000.

With ksasl.aiokafka enabled, a consumer in a group and a producer run for more than five
session lifetimes: the broker kills no connection, no connection is dropped, the group never
rebalances, and every message produced is consumed. The same run with stock aiokafka (which
has no KIP-368) shows the broker killing its connections: kept as a test that documents the
difference."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path

import pytest

import ksasl
from ksasl.adapters import AsyncTokenProvider
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from broker import KafkaBroker  # noqa: E402
from clients import delta  # noqa: E402

LIFETIME_MS = 3000
RUN_S = 16.0  # more than five session lifetimes


@pytest.fixture(scope="module")
def broker():
    with KafkaBroker({"alice": "alice-secret"}, reauth_ms=LIFETIME_MS) as b:
        yield b


def settings(mechanism: str) -> dict:
    kw = dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism)
    if mechanism == "OAUTHBEARER":
        def fetch():
            t = ksasl.unsecured_oauth_token("alice", lifetime_seconds=3600)
            return t["token"], t["expiry_ms"], t["principal"], None

        kw["sasl_oauth_token_provider"] = AsyncTokenProvider(fetch)
    else:
        kw.update(sasl_plain_username="alice", sasl_plain_password="alice-secret")
    return kw


class Assignments(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.assigned = 0
        self.revoked = 0

    async def on_partitions_revoked(self, revoked):
        if revoked:
            self.revoked += 1

    async def on_partitions_assigned(self, assigned):
        self.assigned += 1


async def group_run(bootstrap: str, mechanism: str, run_s: float, kw: dict | None = None) -> dict:
    """A topic, a consumer in a group and a producer sending every 100 ms for run_s seconds;
    kw: aiokafka's security settings (default: settings(mechanism))."""
    topic = f"reauth-{mechanism.lower()}-{uuid.uuid4().hex[:6]}"
    kw = kw if kw is not None else settings(mechanism)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **kw)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()
    listener = Assignments()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=f"g-{topic}", auto_offset_reset="earliest",
                                session_timeout_ms=10_000, heartbeat_interval_ms=1000, **kw)
    consumer.subscribe([topic], listener=listener)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **kw)
    await consumer.start()
    await producer.start()
    produced, consumed, errors = [], [], []

    async def consume():
        async for msg in consumer:
            consumed.append(msg.value)

    task = asyncio.ensure_future(consume())
    try:
        end = time.monotonic() + run_s
        i = 0
        while time.monotonic() < end:
            value = f"m{i}".encode()
            try:
                await producer.send_and_wait(topic, value)
                produced.append(value)
            except Exception as e:  # the stock client loses connections
                errors.append(repr(e))
            i += 1
            await asyncio.sleep(0.1)
        drain = time.monotonic() + 10
        while len(consumed) < len(produced) and time.monotonic() < drain:
            await asyncio.sleep(0.1)
        generation = consumer._coordinator.generation
    finally:
        task.cancel()
        await producer.stop()
        await consumer.stop()
    return {"produced": produced, "consumed": consumed, "errors": errors, "assigned": listener.assigned,
            "revoked": listener.revoked, "generation": generation}


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "OAUTHBEARER", "PLAIN"])
def test_aiokafka_group_and_producer_survive_session_ends_with_the_integration(broker, mechanism):
    import ksasl.aiokafka as ka

    before = broker.socket_server_metrics("SASL")
    integration = ka.enable()
    try:
        r = asyncio.run(group_run(broker.bootstrap, mechanism, RUN_S))
    finally:
        ka.disable()
    after = broker.socket_server_metrics("SASL")
    assert_nothing_lost(r, integration, before, after, LIFETIME_MS)


def assert_nothing_lost(r: dict, integration, before: dict, after: dict, lifetime_ms: int) -> None:
    """A group_run of RUN_S seconds with ksasl.aiokafka, between two readings of the broker's
    listener counters: nothing killed, dropped or refused, no rebalance, every message
    consumed, and the re-authentications the broker counted are the integration's."""
    assert delta(after, before, "expired-connections-killed-count") == 0
    assert delta(after, before, "failed-authentication-total") == 0
    assert delta(after, before, "failed-reauthentication-total") == 0
    assert not r["errors"], r["errors"]
    assert len(r["produced"]) >= 100
    assert sorted(r["consumed"]) == sorted(r["produced"])
    assert r["assigned"] == 1 and r["revoked"] == 0, r  # no rebalance
    # No connection dropped while running: only closes that the clients' stop() made, or
    # aiokafka dropping its bootstrap connection (reason IDLE_DROP / none), never a broken one.
    broken = [c for c in integration.closes if c[2] is not None and c[2].name in
              ("CONNECTION_BROKEN", "CONNECTION_TIMEOUT", "OUT_OF_SYNC", "AUTH_FAILURE")]
    assert not broken, integration.closes
    # Every long-lived connection (producer, group coordinator, fetcher) re-authenticated
    # about once per session: the broker counted them, and so did the integration.
    reauths = delta(after, before, "successful-reauthentication-total")
    assert reauths >= 3 * int(RUN_S * 1000 / lifetime_ms) - 3, reauths
    # The broker may count a re-authentication whose answer the client never read, when the
    # client's stop() closed the connection in the middle of it; nothing else may differ.
    counted = integration.metrics()["successful-reauthentication-total"]
    assert reauths - integration.closed_while_reauthenticating <= counted <= reauths, (
        counted, reauths, integration.closed_while_reauthenticating)


def test_stock_aiokafka_connections_are_killed_by_the_broker(broker):
    import ksasl.aiokafka as ka

    ka.disable()
    before = broker.socket_server_metrics("SASL")
    r = asyncio.run(group_run(broker.bootstrap, "SCRAM-SHA-512", 8.0))
    after = broker.socket_server_metrics("SASL")
    killed = delta(after, before, "expired-connections-killed-count")
    assert killed >= 1
    assert delta(after, before, "successful-reauthentication-total") == 0
    print(f"stock aiokafka: {killed:.0f} connections killed by the broker, {len(r['errors'])} send errors, "
          f"{r['assigned']} assignments, {r['revoked']} revocations")
