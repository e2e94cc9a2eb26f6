"""Delegation tokens against a real Kafka 4.4 broker, with ksasl as the client:

- a ksasl client logged in with SCRAM asks the broker for a token with ksasl's codec
  (CreateDelegationToken), then logs in with it through SCRAM `tokenauth`;
- the broker caps that session by the token's expiry (delegation.token.expiry.time.ms = 8 s,
  connections.max.reauth.ms = 60 s);
- after a RenewDelegationToken the re-authentication gets a longer session;
- after an ExpireDelegationToken the next login is refused;
- the broker refuses token requests on a token-authenticated connection (64).

Uses the Python client of test_ksasl_clients.py (ksasl.ClientConnection over a socket)."""

from __future__ import annotations

import socket
import struct
import sys
import time
from pathlib import Path

import pytest

import ksasl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from broker import KafkaBroker  # noqa: E402

EXPIRY_MS = 8_000
USERS = {"alice": "alice-secret"}


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture(scope="module")
def broker():
    with KafkaBroker(USERS, reauth_ms=60_000, delegation_token_expiry_time_ms=EXPIRY_MS,
                     delegation_token_max_lifetime_ms=120_000) as b:
        yield b


class Conn:
    """A synchronous Kafka connection whose SASL runs through ksasl.ClientConnection."""

    def __init__(self, port: int, registry: ksasl.Registry, mechanism: str) -> None:
        self.conn = ksasl.ClientConnection(ksasl.ClientConfig(registry, mechanism, client_id="ksasl-tokens"))
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.corr = 0
        self.conn.start(now_ms())
        self.pump_until(lambda ev: ev == "authenticated")

    def _frame(self) -> bytes:
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack(">i", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    f, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    return f
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionResetError("closed by the broker")
            self.buf += data

    def flush(self) -> None:
        out = self.conn.transmit()
        if out:
            self.sock.sendall(out)

    def pump_until(self, done):
        """Handles frames until done(event) is true; returns (event, frame)."""
        self.flush()
        while True:
            ev, app, _ = self.conn.handle_frame(self._frame(), now_ms())  # raises on failure
            self.flush()
            if done(ev):
                return ev, app

    def call(self, build) -> bytes:
        """Sends build(correlation_id) as an application request; returns the response frame."""
        assert self.conn.before_request(now_ms())
        self.corr += 1
        self.sock.sendall(build(self.corr))
        _, app = self.pump_until(lambda ev: ev == "application")
        return app

    def reauthenticate(self) -> dict:
        assert self.conn.start_reauthentication(now_ms())
        self.pump_until(lambda ev: ev == "reauthenticated")
        return self.conn.session()

    def close(self) -> None:
        self.sock.close()


def password_registry(user: str) -> ksasl.Registry:
    r = ksasl.MechanismRegistry()
    r.add_password_clients(user, USERS[user])
    return r


def token_login(port: int, token: dict, mechanism: str, attempts: int = 20) -> Conn:
    """Logs in with the token; the broker learns a new token through its metadata log, so a
    login right after the create may fail once or twice."""
    registry = ksasl.MechanismRegistry()
    registry.add_token_clients(token["token_id"], token["hmac_base64"])
    for i in range(attempts):
        try:
            return Conn(port, registry, mechanism)
        except ksasl.AuthenticationError:
            if i == attempts - 1:
                raise
            time.sleep(0.25)
    raise AssertionError("unreachable")


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_token_from_the_broker_logs_in_renews_and_expires(broker, mechanism):
    admin = Conn(broker.port, password_registry("alice"), "SCRAM-SHA-512")
    try:
        version = 3
        resp = admin.call(lambda corr: ksasl.create_token_request(version, corr, client_id="ksasl-tokens"))
        token = ksasl.parse_create_token_response(version, resp)
        assert token["owner"] == "User:alice" and token["requester"] == "User:alice"
        assert token["expiry_ms"] - token["issue_ms"] == EXPIRY_MS
        assert len(token["hmac_base64"]) == 88

        # Log in with the token: the session is capped by the token's expiry.
        user = token_login(broker.port, token, mechanism)
        try:
            first = user.conn.session()
            assert 0 < first["lifetime_ms"] <= EXPIRY_MS, first
            assert first["expiry_ms"] <= token["expiry_ms"] + 50

            # The broker refuses token requests on a token-authenticated connection.
            resp = user.call(lambda corr: ksasl.create_token_request(1, corr))
            with pytest.raises(ksasl.CredentialError) as e:
                ksasl.parse_create_token_response(1, resp)
            assert e.value.name == "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"

            # Renew later in the token's life: the next re-authentication gets a longer
            # session than what was left of the first one.
            time.sleep(2.5)
            resp = admin.call(lambda corr: ksasl.renew_or_expire_token_request(2, corr, token["hmac"], EXPIRY_MS))
            new_expiry = ksasl.parse_token_expiry_response(2, resp)
            assert new_expiry > token["expiry_ms"]
            left_before = token["expiry_ms"] - now_ms()
            time.sleep(1.2)  # brokers refuse a re-authentication within a second of the last
            second = user.reauthenticate()
            assert second["lifetime_ms"] > left_before, (second, left_before)
            assert second["expiry_ms"] <= new_expiry + 50

            # Expire it now: logins with it are refused.
            resp = admin.call(lambda corr: ksasl.renew_or_expire_token_request(2, corr, token["hmac"], -1,
                                                                                expire=True))
            assert ksasl.parse_token_expiry_response(2, resp) <= now_ms()
        finally:
            user.close()
        deadline = time.time() + 10
        while True:
            try:
                c = token_login(broker.port, token, mechanism, attempts=1)
                c.close()
            except ksasl.AuthenticationError as e:
                assert "invalid credentials" in str(e) or "Authentication failed" in str(e), e
                break
            assert time.time() < deadline, "the expired token still logs in"
            time.sleep(0.25)
    finally:
        admin.close()


def test_describe_and_renew_errors_from_the_broker(broker):
    admin = Conn(broker.port, password_registry("alice"), "SCRAM-SHA-256")
    try:
        token = ksasl.parse_create_token_response(
            1, admin.call(lambda corr: ksasl.create_token_request(1, corr, renewers=["User:bob"])))
        # The broker learns its new token through the metadata log: ask until it lists it.
        deadline = time.time() + 10
        while True:
            described = ksasl.parse_describe_tokens_response(
                3, admin.call(lambda corr: ksasl.describe_tokens_request(3, corr, owners=["alice"])))
            mine = [t for t in described if t["token_id"] == token["token_id"]]
            if mine or time.time() > deadline:
                break
            time.sleep(0.25)
        assert mine and mine[0]["renewers"] == ["User:bob"] and mine[0]["hmac"] == token["hmac"]
        # An HMAC the broker never issued.
        with pytest.raises(ksasl.CredentialError) as e:
            ksasl.parse_token_expiry_response(
                1, admin.call(lambda corr: ksasl.renew_or_expire_token_request(1, corr, b"\x01" * 64, 1000)))
        assert e.value.name == "DELEGATION_TOKEN_NOT_FOUND"
    finally:
        admin.close()
