"""OAUTHBEARER with a real identity provider: Keycloak (tests/oidc/keycloak.py, over HTTPS with
a CA made for the run) issues 10-second tokens, and the real Kafka 4.4 broker's JWT listener
validates them against Keycloak's JWKS endpoint (fetched by the broker over HTTPS, trusting
that CA through the JAAS entry's ssl.truststore.* options, with the allowed.urls property set).

ksasl's Python client logs in with ksasl.OidcLogin (client secret, and a signed client
assertion), refreshed on the core's thread on Kafka's schedule; the C client
(examples/c/kafka_client.c) with ksasl_oidc_login from a file of Kafka property names,
refreshed in its own loop; the Java client (KsaslJavaClient.java) with the binding's
OidcLogin from the same file, refreshed on the core's thread. Each re-authenticates every 3 s (connections.max.reauth.ms):
every session must be renewed with the current token, and no connection may be killed by
the broker."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ksasl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "oidc"))
from broker import KafkaBroker, java_bin  # noqa: E402
from clients import C_CLIENT, JAR, USERS, PyClient, compiled_java_client, delta, parse_metrics  # noqa: E402
from keycloak import AUDIENCE, Keycloak  # noqa: E402

TOKEN_LIFESPAN_S = 10
RUN_MS = 36_000


@pytest.fixture(scope="module")
def idp():
    with Keycloak(token_lifespan_s=TOKEN_LIFESPAN_S) as kc:
        yield kc.info()


@pytest.fixture(scope="module")
def kafka(idp):
    with KafkaBroker(USERS, reauth_ms=3000, jwks_endpoint=idp["jwks_uri"],
                     jwks_ca_pem=idp["ca_pem"], jwt_issuer=idp["issuer"],
                     jwt_audience=AUDIENCE) as b:
        yield b


def refresher() -> ksasl.Refresher:
    # Kafka's algorithm with the floors lowered for 10-second tokens: refresh at about 80 %.
    return ksasl.Refresher(min_period_seconds=0, buffer_seconds=0)


def logins(idp) -> dict[str, ksasl.OidcLogin]:
    return {
        "client secret": ksasl.OidcLogin(
            idp["token_endpoint"], client_id=idp["secret_client"]["id"],
            client_secret=idp["secret_client"]["secret"], ca_file=idp["ca_pem"]),
        "signed client assertion": ksasl.OidcLogin(
            idp["token_endpoint"], client_id=idp["jwt_client"]["id"],
            assertion_private_key_file=idp["jwt_client"]["key_pem"],
            assertion_audience=idp["issuer"], assertion_include_jti=True, ca_file=idp["ca_pem"]),
    }


def client_process(kafka, idp, tmp_path, name: str, settings: dict, command: list) -> subprocess.Popen:
    """The C or Java example client with OIDC settings from a properties file (Kafka's names)."""
    f = tmp_path / f"{name.replace(' ', '-').replace(',', '')}.properties"
    f.write_text("".join(f"{k}={v}\n" for k, v in {
        "sasl.oauthbearer.token.endpoint.url": idp["token_endpoint"],
        "ssl.truststore.location": idp["ca_pem"],
        "sasl.login.refresh.min.period.seconds": "0",
        "sasl.login.refresh.buffer.seconds": "0", **settings}.items()))
    return subprocess.Popen([*command, "127.0.0.1", str(kafka.jwt_port), "OAUTHBEARER",
                             f"oidc:{f}", "-", str(RUN_MS), str(RUN_MS // 3000 - 2)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_clients_reauthenticate_with_tokens_refreshed_from_the_provider(kafka, idp, tmp_path):
    assert C_CLIENT.is_file(), f"{C_CLIENT} is missing: run make target/c/kafka_client"
    assert JAR.is_file(), f"{JAR} is missing: run make java-binding"
    secret = {"clientId": idp["secret_client"]["id"], "clientSecret": idp["secret_client"]["secret"]}
    assertion = {"clientId": idp["jwt_client"]["id"],
                 "sasl.oauthbearer.assertion.private.key.file": idp["jwt_client"]["key_pem"],
                 "sasl.oauthbearer.assertion.claim.aud": idp["issuer"],
                 "sasl.oauthbearer.assertion.claim.jti.include": "true"}
    with compiled_java_client() as classes:
        java = [java_bin(), "-Xcheck:jni", "-cp", f"{JAR}:{classes}", "KsaslJavaClient"]
        before = kafka.socket_server_metrics("JWT")
        processes = {
            name: client_process(kafka, idp, tmp_path, name, settings, command)
            for name, settings, command in [
                ("C, client secret", secret, [str(C_CLIENT)]),
                ("C, signed client assertion", assertion, [str(C_CLIENT)]),
                ("Java, client secret", secret, java),
                ("Java, signed client assertion", assertion, java),
            ]
        }
        run_python_clients_and_check(kafka, idp, before, processes)


def run_python_clients_and_check(kafka, idp, before, processes) -> None:
    runs = []
    for name, login in logins(idp).items():
        r = refresher()
        thread = login.start(r)
        client = PyClient(kafka.jwt_port, "OAUTHBEARER", refresher=r)
        runs.append((name, r, thread, client, threading.Thread(target=client.run, args=(RUN_MS,))))
    for *_, t in runs:
        t.start()
    for *_, t in runs:
        t.join()
    for _, _, thread, _, _ in runs:
        thread.stop()
    outputs = {name: p.communicate(timeout=60)[0] for name, p in processes.items()}
    after = kafka.socket_server_metrics("JWT")

    process_reauths = 0
    for name, p in processes.items():
        out = outputs[name]
        assert p.returncode == 0, f"{name}:\n{out}"
        tokens = int(out.split(" tokens from the identity provider")[0].rsplit("\n", 1)[-1])
        assert tokens >= 4, f"{name}: {tokens} tokens\n{out}"
        process_reauths += int(parse_metrics(out)["successful-reauthentication-total"])

    for name, r, _, c, _ in runs:
        assert c.error is None, f"{name}: {c.error!r}"
        assert c.sent > 100 and c.answered == c.sent, f"{name}: {c.sent} sent, {c.answered} answered"
        # A session every 3 s at most (less when the token ends sooner): at least 10 renewals.
        assert c.reauths >= RUN_MS // 3000 - 2, f"{name}: {c.reauths} re-authentications"
        # A token every ~8 s: at least 4 from the provider, none failed.
        assert r.generation >= 4, f"{name}: generation {r.generation}"
        failures = r.failures()
        assert failures[0] == 0, f"{name}: {failures}"
    reauths = sum(c.reauths for *_, c, _ in runs) + process_reauths
    assert delta(after, before, "successful-authentication-total") == 2 + len(processes)
    assert delta(after, before, "successful-reauthentication-total") == reauths
    assert delta(after, before, "failed-authentication-total") == 0
    assert delta(after, before, "failed-reauthentication-total") == 0
    assert delta(after, before, "expired-connections-killed-count") == 0
