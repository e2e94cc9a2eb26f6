"""Type stubs of the native module, with what each call means (the native docstrings are
short). Every ``now_ms`` is milliseconds since the Unix epoch (None: the wall clock)."""

from typing import Any, Callable, Optional, Tuple, Union

from ksasl.errors import KsaslError

__version__: str
#: ``(api_key, min_version, max_version)`` of DescribeUserScramCredentials and
#: AlterUserScramCredentials (KIP-554), as ``CredentialStore.handle_scram_request`` serves them.
SCRAM_CREDENTIAL_API_VERSIONS: list[Tuple[int, int, int]]

# None (unknown user), a password, or (kind, value[, expiry_ms[, token_owner]]) with kind
# "password", "scram", "unknown", "unavailable" or "later" (lookups only).
CredentialAnswer = Union[None, str, Tuple[Any, ...]]
CredentialLookup = Callable[[str, str, bool], CredentialAnswer]
# ("credential", {"mechanism", "username", "token_authenticated"}) or ("mechanism", awaitable).
HostTask = Optional[Tuple[str, Any]]
ClientStep = Optional[Tuple[Optional[bytes], bool]]
ServerStep = Tuple[str, Optional[bytes]]
ClientEvent = Tuple[str, Optional[bytes], Optional[KsaslError]]
ServerOutput = Tuple[str, bytes, Optional[int], Optional[KsaslError]]

class CredentialStore:
    """Users and delegation tokens in memory; thread-safe."""

    def __init__(self) -> None: ...
    def add_user(self, username: str, password: str, iterations: Optional[int] = None) -> None:
        """Adds or replaces a user for PLAIN and both SCRAM mechanisms (iterations: 4096 by
        default)."""
    def set_scram(self, username: str, mechanism: str, credential: str) -> None:
        """Sets a user's SCRAM credential from Kafka's ``salt=...,stored_key=...,...`` text."""
    def set_user_expiry(self, username: str, expiry_ms: Optional[int]) -> None:
        """Sets (None: clears) an absolute expiry on a user's credentials."""
    def remove_user(self, username: str) -> bool:
        """Returns whether the user existed."""
    def handle_scram_request(self, frame: bytes) -> bytes:
        """Serves a DescribeUserScramCredentials (50) or AlterUserScramCredentials (51) request
        (``frame`` without its length prefix) of a connection the host authenticated and
        authorized, with Kafka's rules and error texts; returns the length-prefixed response. A
        changed credential is what the user's next login or re-authentication must present.
        A request that does not parse raises KsaslError (close the connection, as Kafka does)."""
    def set_token(self, token_id: str, mechanism: str, credential: str, owner: str,
                  expiry_ms: Optional[int] = None) -> None:
        """Adds a delegation token's SCRAM credential, owned by ``owner``."""

class MechanismRegistry:
    """Client and server mechanisms by name, with their credentials."""

    def __init__(self) -> None: ...
    def add_password_servers(self, credentials: Union[CredentialStore, CredentialLookup, None] = None,
                             tokens: Optional["TokenAuthority"] = None) -> None:
        """Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. Users come from a store, a
        callable ``(mechanism, username, token_authenticated) -> answer`` (its exception reaches
        the caller of the step unchanged), or None: the host answers each request (the pull
        form). Delegation-token logins come from ``tokens`` when given."""
    def add_password_clients(self, username: str, password: str) -> None:
        """Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password."""
    def add_token_clients(self, token_id: str, token_hmac: str) -> None:
        """Adds SCRAM clients that log in with a delegation token (``tokenauth=true``)."""
    def add_refreshing_password_clients(self, refresher: "Refresher") -> None:
        """Adds PLAIN and SCRAM clients logging in with the refresher's current password
        credential (a delegation token installed with ``Refresher.set_delegation_token``)."""
    def add_oauthbearer_server(
        self,
        validator: Union["JwksValidator", "JwksEndpoint", Callable[[str, int], Optional[Tuple[str, int]]], None] = None,
        required_scope: Optional[list[str]] = None,
        clock_skew_ms: Optional[int] = None,
    ) -> None:
        """Adds an OAUTHBEARER server validating with Kafka's unsecured validator (None, with
        ``required_scope`` and ``clock_skew_ms``), a ``JwksValidator``, or a callable
        ``(token, now_ms) -> (principal, expiry_ms) | None``. Verdicts are cached."""
    def add_oauthbearer_client(self, refresher: "Refresher") -> None:
        """Adds an OAUTHBEARER client presenting the refresher's current token."""
    def add_aws_msk_iam_client(
        self,
        host: str,
        region: str,
        credentials: Union["AwsCredentials", "Refresher"],
        user_agent: Optional[str] = None,
        key_order: Optional[str] = None,
    ) -> None:
        """Adds an ``AWS_MSK_IAM`` client signing for the broker ``host`` (as the client
        connects to it) in ``region``, with fixed ``AwsCredentials`` or with the AWS credentials
        a ``Refresher`` holds at each (re-)authentication. ``user_agent`` (None: ksasl's) and
        ``key_order``: "java" (aws-msk-iam-auth's JSON, the default) or "kafka-python"."""
    def add_aws_msk_iam_server(self, keys: "AwsKeyStore", region: str, hosts: Optional[list[str]] = None) -> None:
        """Adds an ``AWS_MSK_IAM`` verifying server: a payload must be signed for ``region`` by
        a key of ``keys`` (read at each exchange: keys added or removed later count), for one
        of ``hosts`` (None or empty: any host), within AWS's time window. A refusal tells the
        client only ``[<request id>]: Access denied``; the reason is in the server's error."""
    def add_msk_oauthbearer_client(
        self, region: str, credentials: Union["AwsCredentials", "Refresher"], user_agent: Optional[str] = None
    ) -> None:
        """Adds an OAUTHBEARER client presenting MSK's presigned tokens for ``region``
        (aws-msk-iam-sasl-signer's), signed at each (re-)authentication."""
    def add_msk_oauthbearer_server(self, keys: "AwsKeyStore", region: str) -> None:
        """Adds an OAUTHBEARER server accepting MSK's presigned tokens for ``region`` signed by a
        key of ``keys``; the session ends when the token's signature does (or the key's
        credentials expire). Every token is checked against the keys as they are, so a removed
        key's tokens are refused at once. Replaces another OAUTHBEARER server of this
        registry."""
    def add_client_mechanism(self, name: str, factory: Callable[[], Any]) -> None:
        """A client mechanism written in Python: ``factory()`` makes one object per exchange,
        whose ``start(now_ms)`` and ``step(challenge, now_ms)`` return ``(message or None,
        done)`` (or are ``async def``: see ``pending_work``)."""
    def add_server_mechanism(self, name: str, factory: Callable[[], Any]) -> None:
        """A server mechanism written in Python: ``factory()`` makes one object per exchange,
        whose ``step(response, now_ms)`` returns ``("challenge", bytes)`` or ``("done", message
        or None, authorization id, credential expiry ms or None)`` (or is ``async def``). A
        ``KsaslError`` raised keeps its code; any other exception is HOST_MECHANISM_FAILED."""
    def add_gssapi_client(self, login: "KerberosLogin", service_name: str, host: str, mutual: bool = False) -> None:
        """Adds a GSSAPI client for the service ``service_name@host``
        (``sasl.kerberos.service.name`` and the broker's host name as its principal spells it)
        on ``login``'s current ticket at every (re-)authentication; ``mutual`` also asks the
        broker to prove itself (an extra round trip Kafka's client does not make)."""
    def add_gssapi_server(self, keytab: Optional[str] = None, principal: Optional[str] = None,
                          service_name: Optional[str] = None, rules: Optional[str] = None,
                          cap_session_at_ticket: bool = True) -> None:
        """Adds a GSSAPI server with the broker's ``keytab`` (None: the default keytab,
        ``KRB5_KTNAME``) and ``principal`` (``kafka/broker1.example.com@REALM``; None: any key
        of the keytab), ``service_name`` (None: the principal's first part) and
        ``sasl.kerberos.principal.to.local.rules`` as Kafka's list value (``"RULE:...,DEFAULT"``;
        None: ``DEFAULT``). ``cap_session_at_ticket`` ends each session with the client's
        service ticket. The keytab is read now: a missing one raises here."""
    def client_mechanisms(self) -> list[str]: ...
    def server_mechanisms(self) -> list[str]: ...

class ClientExchange:
    """One client exchange without Kafka framing: ``start``, ``step`` and ``resume`` return
    ``(message or None, done)``, or None while an ``async`` mechanism method runs (await
    ``pending_work()``, then ``resume`` with its result or exception). A call made while another
    thread is inside one (say a PBKDF2) waits for it."""

    def __init__(self, registry: MechanismRegistry, mechanism: str) -> None: ...
    def start(self, now_ms: Optional[int] = None) -> ClientStep: ...
    def step(self, challenge: bytes, now_ms: Optional[int] = None) -> ClientStep: ...
    def pending_work(self) -> Optional[Any]: ...
    def resume(self, result: Any) -> ClientStep: ...
    def server_failed(self, server_message: Optional[str] = None) -> None:
        """Records that the server failed the exchange; raises the resulting error."""
    @property
    def mechanism(self) -> str: ...
    @property
    def complete(self) -> bool: ...

class ServerExchange:
    """One server exchange without Kafka framing: ``step``, ``provide_credential`` and
    ``resume`` return ``(kind, message or None)`` with kind "challenge", "need_credential",
    "pending" or "done"; ``host_task()`` says what the exchange waits for. ``outcome()``, after
    "done": who authenticated and the KIP-368 session granted under ``max_reauth_ms``
    (``lifetime_ms``, ``expiry_ms``); ``client_message``, after a failure: what a broker tells
    the client."""

    def __init__(self, registry: MechanismRegistry, mechanism: str, max_reauth_ms: Optional[int] = None) -> None: ...
    def step(self, response: bytes, now_ms: Optional[int] = None) -> ServerStep: ...
    def provide_credential(self, answer: CredentialAnswer, now_ms: Optional[int] = None) -> ServerStep: ...
    def host_task(self) -> HostTask: ...
    def resume(self, result: Any, now_ms: Optional[int] = None) -> ServerStep: ...
    def outcome(self) -> Optional[dict[str, Any]]: ...
    @property
    def client_message(self) -> Optional[str]: ...

class ClientConfig:
    """Configuration of client connections: only the arguments given are passed to the core,
    which checks them and keeps Kafka's defaults for the others. ``reauth_timing``: "kafka",
    "librdkafka", "franz-go" or "disabled"; ``known_versions``: ``(handshake_version,
    authenticate_version or None)`` skips ApiVersions; ``software``: ``(name, version)``."""

    def __init__(
        self,
        registry: MechanismRegistry,
        mechanism: str,
        client_id: Optional[str] = None,
        reauth_timing: Optional[str] = None,
        api_versions_version: Optional[int] = None,
        reauth_retry_ms: Optional[int] = None,
        reauth_min_delay_ms: Optional[int] = None,
        max_receive_size: Optional[int] = None,
        known_versions: Optional[Tuple[int, Optional[int]]] = None,
        software: Optional[Tuple[str, str]] = None,
    ) -> None: ...
    def metrics(self, now_ms: Optional[int] = None) -> dict[str, float]:
        """Kafka's client metrics over every connection of this configuration."""

class ClientConnection:
    """A client connection's SASL state (Kafka framing, KIP-368). ``handle_frame(frame)`` (a
    frame without its length prefix) and ``resume(result)`` return ``(event, frame, error)``:
    "continue", "application" (frame: the very object passed in), "authenticated",
    "reauthenticated", "reauth_failed" (error: why) or "pending" (await ``pending_work()``,
    then ``resume``); they raise when the authentication fails. Write ``transmit()`` after each
    call; call ``handle_timeout`` at ``next_deadline()``."""

    def __init__(self, config: ClientConfig) -> None: ...
    def start(self, now_ms: Optional[int] = None) -> None: ...
    def transmit(self) -> bytes: ...
    def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> ClientEvent: ...
    def pending_work(self) -> Optional[Any]: ...
    def resume(self, result: Any, now_ms: Optional[int] = None) -> ClientEvent: ...
    def closed(self, now_ms: Optional[int] = None) -> None:
        """The broker closed the connection: raises the error to report."""
    def next_deadline(self) -> Optional[int]: ...
    def handle_timeout(self, now_ms: Optional[int] = None) -> bool: ...
    def reauth_pending(self, now_ms: Optional[int] = None) -> bool: ...
    def before_request(self, now_ms: Optional[int] = None) -> bool:
        """Before an application request: True to send it now, False to hold it."""
    def start_reauthentication(self, now_ms: Optional[int] = None) -> bool:
        """Starts a re-authentication now (deferred, returning False, within a second of the
        last)."""
    def session(self) -> Optional[dict[str, Any]]: ...
    @property
    def reauthenticating(self) -> bool: ...

class ServerConfig:
    """Configuration of one listener's server connections (only the arguments given are passed
    to the core): ``max_reauth_ms`` is ``connections.max.reauth.ms``, ``max_reauth_ms_for``
    its value per mechanism; ``api_versions`` adds ``(api_key, min, max)`` entries;
    ``unknown_user_mask=(secret, iterations)`` turns on enumeration resistance (an unknown
    PLAIN or SCRAM user fails exactly as a wrong password does; the secret, at least 16 bytes,
    must be the same on every broker; the error's ``unknown_user`` detail tells the host).
    ``legacy_gssapi=True`` accepts a pre-0.10 client's raw GSSAPI token as its first packet
    (off by default, as in Kafka 4.x)."""

    def __init__(
        self,
        registry: MechanismRegistry,
        enabled_mechanisms: Optional[list[str]] = None,
        max_reauth_ms: Optional[int] = None,
        max_reauth_ms_for: Optional[dict[str, int]] = None,
        max_receive_size: Optional[int] = None,
        failed_authentication_delay_ms: Optional[int] = None,
        reauth_retry_ms: Optional[int] = None,
        api_versions: Optional[list[Tuple[int, int, int]]] = None,
        max_request_size: Optional[int] = None,
        unknown_user_mask: Optional[Tuple[bytes, int]] = None,
        legacy_gssapi: Optional[bool] = None,
    ) -> None: ...
    def metrics(self, now_ms: Optional[int] = None) -> dict[str, float]: ...
    def api_versions_response(self, frame: bytes) -> bytes:
        """The answer to an ApiVersions request frame (Kafka's clients ask again once
        authenticated)."""

class ServerConnection:
    """A server connection's SASL state. ``handle_frame``, ``provide_credential`` and ``resume``
    return ``(action, frames, deadline_ms, error)``: write ``frames``, and "continue",
    "authenticated", "reauthenticated", "reauth_failed" (the old session holds; error: why),
    "fail_at" (close at ``deadline_ms``; error: why), "close_now" (error: why), or settle
    ``host_task()`` ("need_credential", "pending"). An error carries ``client_message``, what
    the client was told. ``frames`` are the frames queued since the last call. Ask ``gate(api_key)`` for each request:
    "process" (only under a live session), "begin_reauthentication" or "not_authenticated" (pass
    the frame to ``handle_frame``), "close_expired" or "close" (close without answering)."""

    def __init__(self, config: ServerConfig) -> None: ...
    def handle_frame(self, frame: bytes, now_ms: Optional[int] = None) -> ServerOutput: ...
    def provide_credential(self, answer: CredentialAnswer, now_ms: Optional[int] = None) -> ServerOutput: ...
    def host_task(self) -> HostTask: ...
    def resume(self, result: Any, now_ms: Optional[int] = None) -> ServerOutput: ...
    def gate(self, api_key: int, now_ms: Optional[int] = None) -> str: ...
    def check_frame_size(self, declared: int, now_ms: Optional[int] = None) -> int:
        """A frame's declared length (its 4-byte prefix), checked before the body is read:
        the body's size, or ProtocolError (close without reading the body)."""
    @staticmethod
    def illegal_state_response(frame: bytes) -> Optional[bytes]: ...
    def refused_request(self) -> Optional[dict[str, Any]]:
        """After a "fail_at" without frames: the request (other than SaslAuthenticate) that
        interrupted the exchange, when ksasl does not have its API's schema. ksasl answers
        ApiVersions, SaslHandshake, Metadata and the delegation-token APIs itself; for others
        the host writes Kafka's error response for that API (``api_key``, ``api_version``,
        ``correlation_id``, ``error_code`` 34 ILLEGAL_SASL_STATE, ``error_message``) at the
        deadline, or closes without answering if it cannot read the request. None otherwise."""
    @property
    def ready(self) -> bool: ...
    def next_deadline(self) -> Optional[int]: ...
    def session(self) -> Optional[dict[str, Any]]: ...

class JwksValidator:
    """A signed-JWT validator (KIP-768) whose JWKS the host supplies (``set_jwks``; fetch again
    at ``next_refresh_ms()``). The options are Kafka's ``sasl.oauthbearer.*`` ones, the core's
    defaults when not given; ``algorithms`` are JOSE names ("RS256", "EdDSA", ...); HMAC
    algorithms need ``hmac_secret``. ``validate`` returns ``{"principal", "expiry_ms",
    "scope"}`` or raises."""

    def __init__(
        self,
        expected_issuer: Optional[str] = None,
        expected_audiences: Optional[list[str]] = None,
        clock_skew_ms: Optional[int] = None,
        subject_claim_name: Optional[str] = None,
        scope_claim_name: Optional[str] = None,
        validate_iat: Optional[bool] = None,
        algorithms: Optional[list[str]] = None,
        hmac_secret: Optional[bytes] = None,
        max_token_size: Optional[int] = None,
        refresh_period_ms: Optional[int] = None,
        unknown_kid_interval_ms: Optional[int] = None,
    ) -> None: ...
    def set_jwks(self, jwks_json: str, now_ms: Optional[int] = None) -> int: ...
    def next_refresh_ms(self) -> int: ...
    def validate(self, token: str, now_ms: Optional[int] = None) -> dict[str, Any]: ...

class OidcLogin:
    """A token login at an identity provider's token endpoint (OAuth 2 client credentials or
    the JWT-bearer grant; KIP-768, KIP-1139), over HTTPS with certificate verification (against
    ``ca_file``/``ca_pem``, else Mozilla's roots) and Kafka's retry plan. Option names follow
    Kafka's ``sasl.oauthbearer.*`` and ``sasl.login.*`` properties. ``client_auth`` is
    ``client_secret_basic`` (the default with a secret), ``client_secret_post``,
    ``private_key_jwt`` (the default with an assertion key and no secret) or ``none``.
    Calling the login returns ``(token, expiry_ms, principal, extensions)``, what every adapter
    of ``ksasl.adapters`` takes. A refused request raises ``CredentialError`` with code
    ``OIDC_REQUEST_REFUSED`` and the provider's ``error_description``; an unreachable provider
    ``OIDC_PROVIDER_UNAVAILABLE`` after the retries; an unknown CA ``TLS_CERTIFICATE_REFUSED``."""

    def __init__(
        self,
        token_endpoint_url: str,
        client_id: Optional[str] = None,
        client_secret: Optional[str] = None,
        client_auth: Optional[str] = None,
        grant_type: Optional[str] = None,
        scope: Optional[str] = None,
        extensions: Optional[dict[str, str]] = None,
        header_urlencode: Optional[bool] = None,
        sub_claim_name: Optional[str] = None,
        scope_claim_name: Optional[str] = None,
        assertion_private_key_pem: Optional[str] = None,
        assertion_private_key_file: Optional[str] = None,
        assertion_algorithm: Optional[str] = None,
        assertion_key_id: Optional[str] = None,
        assertion_issuer: Optional[str] = None,
        assertion_subject: Optional[str] = None,
        assertion_audience: Optional[str] = None,
        assertion_exp_seconds: Optional[int] = None,
        assertion_nbf_seconds: Optional[int] = None,
        assertion_include_jti: Optional[bool] = None,
        retry_backoff_ms: Optional[int] = None,
        retry_backoff_max_ms: Optional[int] = None,
        ca_file: Optional[str] = None,
        ca_pem: Optional[str] = None,
        connect_timeout_ms: Optional[int] = None,
        read_timeout_ms: Optional[int] = None,
    ) -> None: ...
    def fetch(self, now_ms: Optional[int] = None) -> dict[str, Any]: ...
    def request(self, now_ms: Optional[int] = None) -> dict[str, Any]: ...
    def token_from_response(self, status: int, body: bytes) -> dict[str, Any]: ...
    def __call__(self) -> tuple[str, int, str, dict[str, str]]: ...
    def start(self, refresher: Refresher) -> "OidcRefresh": ...

class OidcRefresh:
    """The core's refresh thread running an ``OidcLogin`` for a ``Refresher``."""

    def stop(self) -> None: ...

class JwksEndpoint:
    """A JWKS endpoint (``sasl.oauthbearer.jwks.endpoint.url``) keeping a ``JwksValidator``'s
    keys fresh: ``start()`` runs the core's fetch thread (at start, every refresh period, at
    once for an unknown ``kid``, with retry backoff after a failure). Given as a server's
    validator, it holds a token signed by a key it does not know yet for one refetch instead
    of refusing it."""

    def __init__(
        self,
        url: str,
        validator: JwksValidator,
        ca_file: Optional[str] = None,
        ca_pem: Optional[str] = None,
        connect_timeout_ms: Optional[int] = None,
        read_timeout_ms: Optional[int] = None,
    ) -> None: ...
    def fetch(self, now_ms: Optional[int] = None) -> int: ...
    def poll(self, now_ms: Optional[int] = None) -> int: ...
    def validate(self, token: str, now_ms: Optional[int] = None) -> dict[str, Any]: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...

class ClientSetup:
    """A client of a ``client.properties`` as the core reads it: Kafka's names
    (``sasl.mechanism``, ``sasl.jaas.config``, ``sasl.login.*``, ``sasl.oauthbearer.*``) or
    librdkafka's (``sasl.mechanisms``, ``sasl.username``, ``sasl.oauthbearer.config``, ...).
    Raises MisuseError (INVALID_CONFIG) naming the key, the expected form and Kafka's default.
    What the host still does is ``login``: ``"ready"`` (nothing; OAUTHBEARER tokens are made by
    the refresher's own login: call ``refresher.run_due()`` at ``refresher.next_deadline()``, or
    ``BackgroundRefresher.scheduled(refresher)``), ``"oidc"`` (the same, the login is at the
    identity provider), ``"host_token"`` (librdkafka's refresh callback: the host sets tokens)
    or ``"kerberos"`` (register a GSSAPI client, then ``with_registry``)."""

    def __init__(self, text: str) -> None: ...
    @staticmethod
    def from_dict(properties: dict[str, str]) -> "ClientSetup": ...
    @property
    def config(self) -> Optional[ClientConfig]:
        """The connections' configuration; None for Kerberos until ``with_registry``."""
    @property
    def refresher(self) -> Optional[Refresher]:
        """For OAUTHBEARER: the refresher the configuration's client takes tokens from."""
    @property
    def login(self) -> str: ...
    @property
    def kerberos(self) -> Optional[Tuple[str, Optional[str], Optional[str]]]:
        """``(service_name, principal, keytab)`` of a Kerberos login."""
    @property
    def mechanism(self) -> str: ...
    @property
    def security_protocol(self) -> str: ...
    @property
    def unknown(self) -> list[str]:
        """``sasl.*`` names the core does not know (log them)."""
    @property
    def warnings(self) -> list[str]: ...
    @property
    def effective(self) -> list[Tuple[str, str]]:
        """The effective settings, secrets as ``[hidden]``."""
    def with_registry(self, registry: MechanismRegistry) -> None: ...

class ServerSetup:
    """One SASL listener of a broker's ``server.properties`` (the text, not a file name), as
    the core builds it with Kafka's precedence (``listener.name.<l>.<m>.`` then
    ``listener.name.<l>.`` then unprefixed): PLAIN users from the listener's PLAIN JAAS entry
    (``user_<name>="<password>"``), SCRAM users from ``scram_store`` only (None: every SCRAM
    login is refused, as on a broker without credentials), OAUTHBEARER with Kafka's unsecured
    validator or a JWKS endpoint, ``connections.max.reauth.ms`` per mechanism, the receive
    limit and the failed-authentication delay. Raises ``MisuseError`` (``INVALID_CONFIG``)
    naming the setting to fix, and ``NotImplementedError`` for a listener that enables GSSAPI
    (the core gives a binding no GSSAPI server settings to register from a listener). Read-only."""

    def __init__(self, text: str, listener: str, scram_store: Optional[CredentialStore] = None,
                 api_versions: Optional[list[Tuple[int, int, int]]] = None) -> None:
        """``api_versions``: the host's own APIs ``(api_key, min_version, max_version)``, listed
        in the listener's ApiVersions answer beside the SASL ones (a broker or proxy lists what
        it serves, such as Metadata, or Kafka's clients refuse it)."""
    @property
    def config(self) -> ServerConfig:
        """The listener's configuration, for its ``ServerConnection``s."""
    @property
    def jwks(self) -> list[Tuple[str, JwksEndpoint]]:
        """``(sasl.oauthbearer.jwks.endpoint.url, endpoint)`` for a listener validating
        OAUTHBEARER tokens against an identity provider's keys (with the JAAS entry's
        ``ssl.truststore.*`` and the ``sasl.login.*.timeout.ms`` settings), else empty. The
        endpoints are not started: the host calls ``fetch()`` (or not) and ``start()``, and
        ``stop()`` when the listener closes; until keys arrive every token is refused."""
    @property
    def tokens(self) -> Optional["TokenAuthority"]:
        """With ``delegation.token.secret.key``: the token authority SCRAM ``tokenauth`` logins
        are checked against (token APIs 38-41 are listed in ApiVersions; serve them with
        ``TokenAuthority.handle_request``)."""

def sasl_listeners(text: str) -> list[str]:
    """The SASL listeners of ``server.properties`` text (``listeners`` with
    ``listener.security.protocol.map``), in order, named as in ``listeners``."""

def listener_address(text: str, listener: str) -> Optional[Tuple[str, int]]:
    """Where ``listener`` of ``server.properties`` text listens: ``(host, port)`` from its
    ``listeners`` entry (an empty host: every interface; IPv6 without brackets), or None."""
def choose_listener(text: str, listener: Optional[str] = None) -> str:
    """The listener a host serves from ``server.properties`` text: ``listener`` when given (names
    ignore case) and it is one of the file's SASL listeners, or any name when the file lists
    none; without it, the file's only SASL listener. Raises ``MisuseError`` (``INVALID_CONFIG``)
    naming the listeners to choose from otherwise."""

def unsecured_oauth_token(principal: str, lifetime_seconds: Optional[int] = None, scope: Optional[list[str]] = None,
                          now_ms: Optional[int] = None) -> dict[str, Any]: ...

class Refresher:
    """Refreshes OAUTHBEARER tokens (or delegation tokens) on Kafka's schedule, librdkafka's
    shape: ``poll()`` is True when a fetch is due; answer with ``set_token`` (an ABSOLUTE
    expiry in ms) or ``set_token_failure`` (the old token stays while valid, retried after the
    backoff). ``current()`` never returns an expired token."""

    def __init__(
        self,
        window_factor: Optional[float] = None,
        window_jitter: Optional[float] = None,
        min_period_seconds: Optional[int] = None,
        buffer_seconds: Optional[int] = None,
        relogin_allowed_before_logout: Optional[bool] = None,
        retry_backoff_ms: Optional[int] = None,
        retry_backoff_max_ms: Optional[int] = None,
    ) -> None: ...
    def poll(self, now_ms: Optional[int] = None) -> bool: ...
    def run_due(self, now_ms: Optional[int] = None) -> bool:
        """Runs the refresher's own login when due (a ``ClientSetup``'s); True when it ran."""
    def set_token(self, token: str, expiry_ms: int, principal: str, extensions: Optional[dict[str, str]] = None,
                  now_ms: Optional[int] = None) -> int: ...
    def set_token_failure(self, reason: str, now_ms: Optional[int] = None) -> None: ...
    def set_delegation_token(self, token: dict[str, Any], now_ms: Optional[int] = None) -> int: ...
    def set_aws_credentials(self, credentials: "AwsCredentials", principal: str, now_ms: Optional[int] = None) -> int:
        """Installs temporary AWS credentials (they must carry ``expires_at_ms``), as
        ``set_token`` installs a token; AWS_MSK_IAM and MSK OAUTHBEARER clients given this
        refresher sign with them from now on. Returns the generation."""
    def next_deadline(self) -> Optional[int]: ...
    def failures(self) -> tuple[int, Optional[str]]:
        """Failed refreshes since the last success, and the last reason."""
    @property
    def generation(self) -> int: ...
    def current(self, now_ms: Optional[int] = None) -> dict[str, Any]: ...

class BackgroundRefresher:
    """The core's refresh thread: calls ``callback(now_ms)`` when a refresh is due; the callback
    answers the refresher, and an exception it raises is reported as the failed refresh.
    ``BackgroundRefresher.kerberos(login)``: the thread that renews a Kerberos login (its first
    login at once, then each one its schedule plans; a failed login is retried on the login's
    own plan and counted in ``failures``)."""

    def __init__(self, refresher: Refresher, callback: Callable[[int], None]) -> None: ...
    @staticmethod
    def scheduled(refresher: Refresher) -> "BackgroundRefresher":
        """The thread running the refresher's own login when due (a ``ClientSetup``'s)."""
    @staticmethod
    def kerberos(login: "KerberosLogin") -> "BackgroundRefresher": ...
    def stop(self) -> None:
        """Stops the thread and waits for it to end (also done when the object is freed)."""

class KerberosLogin:
    """A Kerberos login for GSSAPI clients (JAAS ``Krb5LoginModule``'s options): with a
    ``keytab``, a new ticket-granting ticket for ``principal`` (required) from it at every
    login, without ``kinit`` and without touching the user's credential cache; without, the
    ticket in ``ccache`` (None: the default cache, ``KRB5CCNAME``) for ``principal`` (None: the
    cache's), renewed in the cache at the KDC at each later login as ``kinit -R`` would. Logins are planned on Kafka's schedule: ``window_factor``, ``jitter`` and
    ``min_time_before_relogin_ms`` are ``sasl.kerberos.ticket.renew.window.factor`` (0.80),
    ``.ticket.renew.jitter`` (0.05) and ``sasl.kerberos.min.time.before.relogin`` (60,000),
    Kafka's defaults when not given. Nothing is read until ``login()`` or ``poll()``; drive it
    with ``poll()`` at ``next_login_ms`` or with ``BackgroundRefresher.kerberos(login)``.
    Thread-safe. MIT Kerberos reads ``KRB5_CONFIG``, ``KRB5CCNAME`` and ``KRB5RCACHEDIR`` from
    the environment."""

    def __init__(
        self,
        principal: Optional[str] = None,
        keytab: Optional[str] = None,
        ccache: Optional[str] = None,
        window_factor: Optional[float] = None,
        jitter: Optional[float] = None,
        min_time_before_relogin_ms: Optional[int] = None,
    ) -> None: ...
    def login(self, now_ms: Optional[int] = None) -> None:
        """Logs in now (reads the keytab or cache, asks the KDC) and plans the next login. On
        failure (``KERBEROS_LOGIN_FAILED``, ``GSSAPI_UNAVAILABLE``) the previous ticket, if any,
        stays in use and a retry is planned."""
    def poll(self, now_ms: Optional[int] = None) -> bool:
        """Logs in if one is due at ``now_ms``; returns whether it did."""
    @property
    def next_login_ms(self) -> Optional[int]:
        """When the next login is due (ms since the epoch)."""
    @property
    def ticket_end_ms(self) -> Optional[int]:
        """When the current ticket-granting ticket ends, if there is one."""
    @property
    def logins(self) -> int:
        """Successful logins so far."""
    @property
    def failures(self) -> int:
        """Failed logins so far."""

def gssapi_available() -> bool:
    """Whether the system's GSS-API library (MIT Kerberos, ``libgssapi_krb5.so.2``) loads; it
    is loaded on first use, and without it every GSSAPI call raises ``GSSAPI_UNAVAILABLE``."""

class ConfigReport:
    """What ``check_config`` found for one scope. Read-only."""

    @property
    def scope(self) -> str:
        """``"client"``, or ``"listener <NAME>"`` for a listener of a broker configuration."""
    @property
    def effective(self) -> list[Tuple[str, str]]:
        """The effective settings as ``(name, value)`` pairs, in order; secrets are shown as
        ``[hidden]``."""
    @property
    def unknown(self) -> list[str]:
        """The ``sasl.*`` and ``ksasl.*`` names the library does not know."""
    @property
    def warnings(self) -> list[str]:
        """Settings without effect, one sentence each."""

def check_config(text: str, listener: Optional[str] = None) -> list[ConfigReport]:
    """Reads ``.properties`` text (not a file name) as ksasl reads a configuration: a Kafka or
    librdkafka client's (one report), or, when ``listener`` is given or the text looks like a
    broker's ``server.properties``, that listener's (one report) or every SASL listener's.
    Raises ``MisuseError`` (``INVALID_CONFIG``) naming the setting to fix; no password appears
    in a report or an error."""

class Tracker:
    """Which connections use which token generation: ``poll()`` returns ``(refresh_needed,
    [connection ids to re-authenticate])``."""

    def __init__(self, refresher: Refresher, spread_window_ms: Optional[int] = None,
                 early_refresh_lead_ms: Optional[int] = None) -> None: ...
    def authenticated(self, id: int, generation: int, session: dict[str, Any]) -> None: ...
    def forget(self, id: int) -> None: ...
    def next_deadline(self) -> Optional[int]: ...
    def poll(self, now_ms: Optional[int] = None) -> Tuple[bool, list[int]]: ...

def sleep_ms(next_deadline: Optional[int], now_ms: Optional[int] = None) -> int:
    """How long a refresh loop sleeps (ms) before it polls again (the core's rule)."""

class TokenAuthority:
    """Creates, renews, expires, describes and sweeps delegation tokens with Kafka's rules and
    ``delegation.token.*`` defaults, serves Kafka's token APIs (``handle_request``: a request
    frame without its length, the framed response) and answers ``tokenauth`` logins. Tokens are
    dicts; principals ``TYPE:NAME`` or a user name; a period of -1 is the default."""

    def __init__(self, secret_key: str, max_lifetime_ms: Optional[int] = None, expiry_time_ms: Optional[int] = None,
                 expiry_check_interval_ms: Optional[int] = None) -> None: ...
    def create(self, owner: str, requester: Optional[str] = None, renewers: list[str] = ..., max_lifetime_ms: int = -1,
               now_ms: Optional[int] = None) -> dict[str, Any]: ...
    def renew(self, hmac: bytes, caller: str, period_ms: int = -1, now_ms: Optional[int] = None) -> int: ...
    def expire(self, hmac: bytes, caller: str, period_ms: int = -1, now_ms: Optional[int] = None) -> int: ...
    def describe(self, owners: Optional[list[str]] = None) -> list[dict[str, Any]]: ...
    def sweep(self, now_ms: Optional[int] = None) -> list[str]: ...
    def next_sweep_ms(self) -> int: ...
    def hmac(self, token_id: str) -> bytes: ...
    def export_records(self) -> str: ...
    def import_records(self, records: str) -> int: ...
    def handle_request(self, frame: bytes, principal: str, token_authenticated: bool = False,
                       now_ms: Optional[int] = None) -> bytes: ...

def create_token_request(version: int, correlation_id: int, renewers: list[str] = ..., max_lifetime_ms: int = -1,
                         owner: Optional[str] = None, client_id: Optional[str] = None) -> bytes: ...
def renew_or_expire_token_request(version: int, correlation_id: int, hmac: bytes, period_ms: int, expire: bool = False,
                                  client_id: Optional[str] = None) -> bytes: ...
def describe_tokens_request(version: int, correlation_id: int, owners: Optional[list[str]] = None,
                            client_id: Optional[str] = None) -> bytes: ...
def parse_create_token_response(version: int, frame: bytes) -> dict[str, Any]: ...
def parse_token_expiry_response(version: int, frame: bytes) -> int: ...
def parse_describe_tokens_response(version: int, frame: bytes) -> list[dict[str, Any]]: ...

class AwsCredentials:
    """AWS credentials (an access key pair, with the session token of temporary credentials and
    their expiry in ms since the epoch). The secret and the token stay inside: no attribute or
    repr shows them."""

    def __init__(
        self,
        access_key_id: str,
        secret_access_key: str,
        session_token: Optional[str] = None,
        expires_at_ms: Optional[int] = None,
    ) -> None: ...
    @property
    def access_key_id(self) -> str: ...
    @property
    def expires_at_ms(self) -> Optional[int]: ...
    @property
    def has_session_token(self) -> bool: ...

class AwsKeyStore:
    """The access keys an AWS_MSK_IAM (or MSK OAUTHBEARER) server accepts, each with the
    principal it authenticates as; thread-safe, and changeable while the server runs."""

    def __init__(self) -> None: ...
    def add(self, credentials: AwsCredentials, principal: str) -> None:
        """Adds or replaces the key ``credentials.access_key_id``."""
    def remove(self, access_key_id: str) -> bool:
        """Returns whether the key was there."""

def msk_token(
    region: str,
    credentials: Union[AwsCredentials, Refresher],
    user_agent: Optional[str] = None,
    now_ms: Optional[int] = None,
) -> Tuple[str, int]:
    """MSK's presigned OAUTHBEARER token for ``region``, byte for byte as
    aws-msk-iam-sasl-signer writes it, and when it expires (ms since the epoch: the signing
    second plus 15 minutes, or the credentials' expiry if sooner), signed with ``credentials`` or a ``Refresher``'s current AWS
    credentials, for a client with its own OAUTHBEARER support (see
    ``ksasl.adapters.msk_oauth_cb``). ``user_agent`` None: ksasl's."""
