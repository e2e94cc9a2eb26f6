"""The exceptions of ksasl. Every failure is a ``KsaslError`` with the library's stable
``code`` (an int), its ``name`` (``"INVALID_CREDENTIALS"``, ...), its ``kind`` and structured
``details``; caller misuse is also a ``ValueError``."""


class KsaslError(Exception):
    """A ksasl failure."""

    def __init__(self, message: str, code: int, name: str, kind: str, details: "dict[str, str]") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.name = name
        self.kind = kind
        self.details = dict(details)

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class MisuseError(KsaslError, ValueError):
    """The API was used wrongly (bad argument, wrong state, unknown mechanism)."""


class ProtocolError(KsaslError):
    """The peer sent bytes that break the protocol."""


class AuthenticationError(KsaslError):
    """The exchange was well formed but authentication failed."""


class CredentialError(KsaslError):
    """A credential is unusable (format, iterations, expiry, lookup failure)."""


class InternalError(KsaslError):
    """A fault inside the library."""
