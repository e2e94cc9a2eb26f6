"""The exceptions of ksasl. Every failure is a ``KsaslError`` with the library's stable
``code`` (an int), its ``name`` (``"INVALID_CREDENTIALS"``, ...), its ``kind``, structured
``details`` and, for a failure a server reported, ``client_message``: the text the client was
told (Kafka's generic sentence unless the mechanism discloses a specific one). Caller misuse is
also a ``ValueError``; misuse of an object's state (a step after the end, a call at the wrong
time) is a ``StateError``."""

from typing import Dict, Iterable, Optional, Tuple, Type, Union


class KsaslError(Exception):
    """A ksasl failure."""

    def __init__(
        self,
        message: str,
        code: int,
        name: str,
        kind: str,
        details: Union[Dict[str, str], Iterable[Tuple[str, str]]],
        client_message: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.name = name
        self.kind = kind
        self.details = dict(details)
        self.client_message = client_message

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class MisuseError(KsaslError, ValueError):
    """The API was used wrongly (bad argument, wrong state, unknown mechanism)."""


class StateError(MisuseError):
    """A call that the object's state does not allow (after the end, after a failure, or
    nothing pending)."""


class ProtocolError(KsaslError):
    """The peer sent bytes that break the protocol."""


class AuthenticationError(KsaslError):
    """The exchange was well formed but authentication failed."""


class CredentialError(KsaslError):
    """A credential is unusable (format, iterations, expiry, lookup failure)."""


class InternalError(KsaslError):
    """A fault inside the library."""


_BY_KIND: Dict[str, Type[KsaslError]] = {
    "misuse": MisuseError,
    "protocol": ProtocolError,
    "authentication": AuthenticationError,
    "credential": CredentialError,
    "internal": InternalError,
}


def _from_core(
    args: Tuple[str, int, str, str, Iterable[Tuple[str, str]]], client_message: Optional[str], state: bool
) -> KsaslError:
    """The exception for a core error (called by the native module)."""
    cls = StateError if state else _BY_KIND.get(args[3], KsaslError)
    return cls(*args, client_message=client_message)
