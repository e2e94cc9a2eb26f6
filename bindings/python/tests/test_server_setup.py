"""ksasl.ServerSetup and ksasl.sasl_listeners: a listener of server.properties built by the core,
proven in memory by a ClientConnection against a ServerConnection on a virtual clock: the
listener's mechanisms, its PLAIN JAAS users, the host's SCRAM store and the session lifetime per
mechanism; JWKS endpoints handed to the host unstarted; GSSAPI with its keytab read at once."""


import pytest

import ksasl
from test_kafka import frames  # the frames of a buffer, as the other driver tests split them
from ksasl import (
    ClientConfig,
    ClientConnection,
    CredentialStore,
    JwksEndpoint,
    KsaslError,
    MechanismRegistry,
    MisuseError,
    ServerConfig,
    ServerConnection,
    ServerSetup,
    choose_listener,
    sasl_listeners,
)

T0 = 1_800_000_000_000
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

BROKER = f"""\
listeners=CLIENT://:9092,INTERNAL://:9093,EXTERNAL://:9094
listener.security.protocol.map=CLIENT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_SSL
sasl.enabled.mechanisms=PLAIN
connections.max.reauth.ms=600000
listener.name.internal.plain.connections.max.reauth.ms=5000
listener.name.internal.plain.sasl.jaas.config={PLAIN_MODULE} required \\
    user_bob="bob-secret" user_carol="carol-secret";
listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER
listener.name.external.scram-sha-256.connections.max.reauth.ms=7000
listener.name.external.scram-sha-256.sasl.jaas.config={SCRAM_MODULE} required;
listener.name.external.oauthbearer.sasl.jaas.config={OAUTH_MODULE} required;
"""


def login(server_config: ServerConfig, mechanism: str, user: str, password: str):
    """One authentication in memory: the server's session, or the error it failed with."""
    registry = MechanismRegistry()
    registry.add_password_clients(user, password)
    client = ClientConnection(ClientConfig(registry, mechanism))
    server = ServerConnection(server_config)
    client.start(T0)
    while server.session() is None:
        to_client = b""
        for f in frames(client.transmit()):
            action, out, _, error = server.handle_frame(f, T0)
            if action in ("fail_at", "close_now"):
                return error
            to_client += out
        for f in frames(to_client):
            client.handle_frame(f, T0)
    assert client.session()["lifetime_ms"] == server.session()["lifetime_ms"]
    return server.session()


def test_the_sasl_listeners_of_a_file():
    assert sasl_listeners(BROKER) == ["INTERNAL", "EXTERNAL"]
    assert sasl_listeners("sasl.enabled.mechanisms=PLAIN\n") == []
    with pytest.raises(MisuseError) as e:
        sasl_listeners("listeners=X://:1\nlistener.security.protocol.map=Y:SASL_SSL\n")
    assert e.value.name == "INVALID_CONFIG" and "X" in e.value.message


def test_the_listener_to_serve():
    assert choose_listener(BROKER, "external") == "external"
    assert choose_listener("sasl.enabled.mechanisms=PLAIN\n", "L") == "L"
    with pytest.raises(MisuseError) as e:
        choose_listener(BROKER)
    assert e.value.name == "INVALID_CONFIG" and "INTERNAL, EXTERNAL" in e.value.message


def test_plain_users_and_the_session_lifetime_come_from_the_listener():
    setup = ServerSetup(BROKER, "INTERNAL")
    assert isinstance(setup.config, ServerConfig) and setup.jwks == []
    s = login(setup.config, "PLAIN", "bob", "bob-secret")
    assert (s["principal"], s["mechanism"], s["lifetime_ms"]) == ("User:bob", "PLAIN", 5000)
    assert isinstance(login(setup.config, "PLAIN", "bob", "wrong"), KsaslError)
    refused = login(setup.config, "SCRAM-SHA-256", "bob", "bob-secret")
    assert isinstance(refused, KsaslError) and refused.name == "UNSUPPORTED_SASL_MECHANISM", refused
    # The lower-case name reads the same listener.
    assert login(ServerSetup(BROKER, "internal").config, "PLAIN", "carol", "carol-secret")["lifetime_ms"] == 5000


def test_scram_users_come_from_the_host_store_only():
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    config = ServerSetup(BROKER, "EXTERNAL", scram_store=store).config
    s = login(config, "SCRAM-SHA-256", "alice", "alice-secret")
    assert (s["principal"], s["lifetime_ms"]) == ("User:alice", 7000)
    assert isinstance(login(config, "SCRAM-SHA-256", "alice", "wrong"), KsaslError)
    assert isinstance(login(config, "PLAIN", "alice", "alice-secret"), KsaslError)
    # Without a store, no SCRAM user exists.
    assert isinstance(login(ServerSetup(BROKER, "EXTERNAL").config, "SCRAM-SHA-256", "alice", "alice-secret"),
                      KsaslError)


def test_jwks_endpoints_are_handed_to_the_host_unstarted():
    text = (
        "sasl.enabled.mechanisms=OAUTHBEARER\n"
        "listener.name.l.oauthbearer.sasl.server.callback.handler.class="
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler\n"
        "sasl.oauthbearer.jwks.endpoint.url=https://idp.example.com/jwks\n"
        "sasl.oauthbearer.expected.audience=kafka\n"
        f"listener.name.l.oauthbearer.sasl.jaas.config={OAUTH_MODULE} required "
        "ssl.truststore.type=PEM;\n"
    )
    setup = ServerSetup(text, "L")
    ((url, endpoint),) = setup.jwks
    assert url == "https://idp.example.com/jwks" and isinstance(endpoint, JwksEndpoint)
    endpoint.stop()  # never started: nothing to stop
    # Until keys arrive, a token is refused.
    token = ksasl.unsecured_oauth_token("alice", now_ms=T0)["token"]
    with pytest.raises(KsaslError):
        endpoint.validate(token, T0)


def test_gssapi_and_invalid_listeners_raise():
    text = (
        "sasl.enabled.mechanisms=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        "listener.name.l.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule "
        'required useKeyTab=true keyTab="/k/kafka.keytab" principal="kafka/broker@EXAMPLE.COM";\n'
    )
    # GSSAPI is finished at once: the keytab is read now (here it does not exist).
    with pytest.raises(KsaslError) as e:
        ServerSetup(text, "L")
    assert e.value.message.startswith("listener L: GSSAPI: ") and "/k/kafka.keytab" in e.value.message
    with pytest.raises(MisuseError) as e:
        ServerSetup("sasl.enabled.mechanisms=PLAIN\n", "L")
    assert e.value.name == "INVALID_CONFIG" and "listener.name.l.plain.sasl.jaas.config" in e.value.message
    with pytest.raises(AttributeError):
        setattr(ServerSetup(BROKER, "INTERNAL"), "config", None)


def test_delegation_tokens_come_from_the_listener_settings():
    text = BROKER + "delegation.token.secret.key=shared-secret\ndelegation.token.expiry.time.ms=5000\n"
    setup = ServerSetup(text, "EXTERNAL", scram_store=CredentialStore())
    assert ServerSetup(BROKER, "EXTERNAL").tokens is None
    tokens = setup.tokens
    assert isinstance(tokens, ksasl.TokenAuthority)
    token = tokens.create("User:carol", now_ms=T0)
    assert token["expiry_ms"] == T0 + 5000
    # A tokenauth login against the listener: the session ends with the token.
    registry = MechanismRegistry()
    registry.add_token_clients(token["token_id"], token["hmac_base64"])
    client = ClientConnection(ClientConfig(registry, "SCRAM-SHA-256"))
    server = ServerConnection(setup.config)
    client.start(T0 + 1000)
    while server.session() is None:
        to_client = b""
        for f in frames(client.transmit()):
            action, out, _, error = server.handle_frame(f, T0 + 1000)
            assert action not in ("fail_at", "close_now"), error
            to_client += out
        for f in frames(to_client):
            client.handle_frame(f, T0 + 1000)
    assert server.session()["principal"] == "User:carol"
    assert server.session()["lifetime_ms"] == 4000  # the token, not the 7000 of the listener
