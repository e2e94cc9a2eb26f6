"""ksasl.ClientSetup: a client of a client.properties (Kafka's names or librdkafka's) built by
the core, proven in memory against a ServerConnection on a virtual clock: the mechanism, the
credential, the OAUTHBEARER refresher and its schedule come from the properties."""

import pytest

from test_kafka import frames
from ksasl import (
    ClientConnection,
    ClientSetup,
    CredentialStore,
    MechanismRegistry,
    MisuseError,
    ServerConfig,
    ServerConnection,
)

T0 = 1_800_000_000_000
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def server_config() -> ServerConfig:
    store = CredentialStore()
    store.add_user("alice", "alice-secret")
    registry = MechanismRegistry()
    registry.add_password_servers(store)
    registry.add_oauthbearer_server()
    return ServerConfig(registry, max_reauth_ms=600_000)


def authenticate(setup: ClientSetup, now: int = T0):
    client = ClientConnection(setup.config)
    server = ServerConnection(server_config())
    client.start(now)
    while server.session() is None:
        to_client = b""
        for f in frames(client.transmit()):
            action, out, _, error = server.handle_frame(f, now)
            if action in ("fail_at", "close_now"):
                return error
            to_client += out
        for f in frames(to_client):
            client.handle_frame(f, now)
    return server.session()


def test_kafka_names():
    setup = ClientSetup(
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config={PLAIN_MODULE} required username="alice" password="alice-secret";\n')
    assert (setup.mechanism, setup.security_protocol, setup.login) == ("PLAIN", "SASL_SSL", "ready")
    assert setup.refresher is None and setup.unknown == []
    assert authenticate(setup)["principal"] == "User:alice"
    assert "alice-secret" not in repr(setup) + repr(setup.effective)


def test_librdkafka_names_from_a_dict():
    setup = ClientSetup.from_dict({
        "security.protocol": "sasl_plaintext", "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "alice", "sasl.password": "alice-secret", "sasl.bogus": "1",
    })
    assert setup.mechanism == "SCRAM-SHA-512" and setup.unknown == ["sasl.bogus"]
    assert authenticate(setup)["principal"] == "User:alice"
    wrong = ClientSetup.from_dict({"sasl.mechanisms": "SCRAM-SHA-512", "security.protocol": "SASL_PLAINTEXT",
                                   "sasl.username": "alice", "sasl.password": "nope"})
    assert "Invalid" in str(authenticate(wrong))


def test_unsecured_tokens_on_the_configured_schedule():
    setup = ClientSetup(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
        "sasl.login.refresh.window.factor=0.5\nsasl.login.refresh.window.jitter=0\n"
        "sasl.login.refresh.min.period.seconds=0\nsasl.login.refresh.buffer.seconds=0\n"
        f'sasl.jaas.config={OAUTH_MODULE} required unsecuredLoginStringClaim_sub="alice" '
        'unsecuredLoginLifetimeSeconds="60";\n')
    r = setup.refresher
    assert setup.login == "ready" and r is not None
    assert r.run_due(T0)
    token = r.current(T0)
    assert token["principal"] == "alice" and token["expiry_ms"] == T0 + 60_000
    assert r.next_deadline() == T0 + 30_000
    assert authenticate(setup)["principal"] == "User:alice"
    # The refresh falls due on the schedule, and makes a new token.
    assert not r.run_due(T0 + 29_999)
    assert r.run_due(T0 + 30_000) and r.current(T0 + 30_000)["expiry_ms"] == T0 + 90_000


def test_what_the_host_still_does():
    k = ClientSetup(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        'keyTab="/etc/alice.keytab" principal="alice@EXAMPLE.COM";\n')
    assert k.login == "kerberos" and k.config is None
    assert k.kerberos == ("kafka", "alice@EXAMPLE.COM", "/etc/alice.keytab")
    o = ClientSetup.from_dict({
        "security.protocol": "SASL_SSL", "sasl.mechanisms": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": "kafka",
        "sasl.oauthbearer.client.secret": "s3cr3t-value",
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token"})
    assert o.login == "oidc" and o.refresher is not None
    assert "s3cr3t-value" not in repr(o.effective) + repr(o)
    h = ClientSetup.from_dict({"security.protocol": "SASL_SSL", "sasl.mechanisms": "OAUTHBEARER"})
    assert h.login == "host_token"


def test_errors_name_the_key_and_keep_secrets():
    with pytest.raises(MisuseError) as e:
        ClientSetup("sasl.mechanism=PLAIN\nsasl.login.refresh.window.factor=2\n"
                    f'sasl.jaas.config={PLAIN_MODULE} required username="a" password="hunter2";\n')
    assert e.value.name == "INVALID_CONFIG"
    assert "sasl.login.refresh.window.factor" in e.value.message and "hunter2" not in str(e.value)
    with pytest.raises(MisuseError) as e:
        ClientSetup("security.protocol=PLAINTEXT\nsasl.mechanism=PLAIN\n")
    assert "PLAINTEXT" in e.value.message
