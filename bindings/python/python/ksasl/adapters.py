"""Adapters that give Python Kafka clients tokens refreshed on Kafka's schedule.

``fetch`` is the application's token source: a callable returning
``(token, expiry_ms, principal, extensions)`` where ``expiry_ms`` is ABSOLUTE milliseconds since
the epoch (the refresher refuses relative or second-based values with a message saying so).
An ``OidcLogin`` is such a callable: tokens from an identity provider in three lines::

    login = ksasl.OidcLogin("https://idp/realms/r/protocol/openid-connect/token",
                            client_id="kafka", client_secret=secret, ca_file="ca.pem")
    conf["oauth_cb"] = confluent_kafka_oauth_cb(login)   # or TokenProvider(login)

Amazon MSK's IAM tokens (signed locally, no identity provider) for confluent-kafka::

    credentials = ksasl.AwsCredentials(key_id, secret, session_token)   # or a Refresher
    conf.update({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"})
    conf["oauth_cb"] = msk_oauth_cb("us-east-1", credentials)
"""

import asyncio
import time
from typing import Any, Callable, Dict, Optional, Tuple, Union

from ksasl._ksasl import AwsCredentials, Refresher, msk_token

Fetch = Callable[[], Tuple[str, int, str, Optional[Dict[str, str]]]]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _current(refresher: Refresher, fetch: Fetch, force: bool = False) -> Dict[str, Any]:
    now = _now_ms()
    # The refresher's own schedule decides, unless the client itself asks for a new token
    # (librdkafka calls oauth_cb at its own refresh point, 80 % of the token's life).
    due = refresher.poll(now)
    if force and not due and refresher.generation > 0:
        due = True
    if due:
        try:
            token, expiry_ms, principal, extensions = fetch()
        except Exception as e:  # the old token stays in use while it is valid
            refresher.set_token_failure(f"{type(e).__name__}: {e}", now)
        else:
            refresher.set_token(token, expiry_ms, principal, extensions or {}, now)
    return refresher.current(now)


def confluent_kafka_oauth_cb(
    fetch: Fetch, refresher: Optional[Refresher] = None
) -> Callable[[str], Tuple[str, float, str, Dict[str, str]]]:
    """An ``oauth_cb`` for confluent-kafka (librdkafka): returns
    ``(token, absolute expiry in SECONDS, principal, extensions)``, never a relative expiry."""
    r = refresher or Refresher()

    def oauth_cb(_config: str) -> Tuple[str, float, str, Dict[str, str]]:
        t = _current(r, fetch, force=True)
        return t["token"], t["expiry_ms"] / 1000.0, t["principal"], t["extensions"]

    return oauth_cb


def msk_oauth_cb(
    region: str, credentials: Union[AwsCredentials, Refresher], user_agent: Optional[str] = None
) -> Callable[[str], Tuple[str, float]]:
    """An ``oauth_cb`` for confluent-kafka presenting Amazon MSK's IAM tokens (what
    aws-msk-iam-sasl-signer's ``generate_auth_token`` gives): each call signs a fresh token for
    ``region`` with ``credentials``, or with the AWS credentials a ``Refresher`` holds then
    (``Refresher.set_aws_credentials``), and returns ``(token, absolute expiry in SECONDS)``.
    Signing is local and cheap, so librdkafka's own schedule (80 % of the token's life) is
    followed as is."""

    def oauth_cb(_config: str) -> Tuple[str, float]:
        token, expires_at_ms = msk_token(region, credentials, user_agent)
        return token, expires_at_ms / 1000.0

    return oauth_cb


class TokenProvider:
    """A ``sasl_oauth_token_provider`` for kafka-python and aiokafka: every (re-)authentication
    gets the token that is current by Kafka's refresh schedule (never an expired one)."""

    def __init__(self, fetch: Fetch, refresher: Optional[Refresher] = None) -> None:
        self.refresher = refresher or Refresher()
        self._fetch = fetch

    def token(self) -> str:
        return str(_current(self.refresher, self._fetch)["token"])

    def extensions(self) -> Dict[str, str]:
        return dict(_current(self.refresher, self._fetch)["extensions"])


class AsyncTokenProvider(TokenProvider):
    """The same for aiokafka, whose provider's ``token()`` is a coroutine. A due refresh runs
    ``fetch`` on a worker thread (``asyncio.to_thread``), so a blocking source such as
    ``OidcLogin`` never stalls the event loop."""

    async def token(self) -> str:  # type: ignore[override]
        return await asyncio.to_thread(super().token)


def _register_with_clients() -> None:
    """kafka-python 3.x and aiokafka accept only instances of their AbstractTokenProvider
    (an ABC): register the adapters as virtual subclasses when those libraries are present."""
    for module, name, cls in [
        ("kafka.net.sasl.oauth", "AbstractTokenProvider", TokenProvider),
        ("kafka.sasl.oauth", "AbstractTokenProvider", TokenProvider),
        ("aiokafka.abc", "AbstractTokenProvider", AsyncTokenProvider),
    ]:
        try:
            abc_class = getattr(__import__(module, fromlist=[name]), name)
            abc_class.register(cls)
        except Exception:  # the library, or that module of it, is not installed
            continue


_register_with_clients()
