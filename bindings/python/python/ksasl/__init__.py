"""ksasl: sans-IO SASL authentication for Apache Kafka (PLAIN, SCRAM-SHA-256/512,
OAUTHBEARER) with KIP-368 re-authentication. The native core is written in Rust."""

from ksasl._ksasl import Client, Registry, Server, Store, __version__
from ksasl.errors import (
    AuthenticationError,
    CredentialError,
    InternalError,
    KsaslError,
    MisuseError,
    ProtocolError,
)

__all__ = [
    "AuthenticationError",
    "Client",
    "CredentialError",
    "InternalError",
    "KsaslError",
    "MisuseError",
    "ProtocolError",
    "Registry",
    "Server",
    "Store",
    "__version__",
]
