"""ksasl: sans-IO SASL authentication for Apache Kafka (PLAIN, SCRAM-SHA-256/512,
OAUTHBEARER) with KIP-368 re-authentication. The native core is written in Rust."""

from ksasl._ksasl import (
    Client,
    ClientConfig,
    ClientConnection,
    JwksValidator,
    Refresher,
    Registry,
    Server,
    ServerConfig,
    ServerConnection,
    Store,
    Tracker,
    __version__,
    unsecured_token,
)
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
    "ClientConfig",
    "ClientConnection",
    "JwksValidator",
    "Refresher",
    "ServerConfig",
    "ServerConnection",
    "Tracker",
    "unsecured_token",
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
