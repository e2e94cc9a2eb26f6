"""OIDC from Python against a real Keycloak (tests/oidc/keycloak.py, started once for this
module, or the one KSASL_OIDC_INFO describes): token logins (client secret, signed client
assertion, the sans-IO form over Python's own HTTP client), JWKS endpoints, the adapters, and
the failures a user meets (wrong secret, unknown CA)."""

import asyncio
import json
import os
import pathlib
import ssl
import sys
import time
import urllib.error
import urllib.request

import pytest

import ksasl
from ksasl.adapters import AsyncTokenProvider, TokenProvider, confluent_kafka_oauth_cb

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests" / "oidc"))
from keycloak import Keycloak  # noqa: E402


@pytest.fixture(scope="module")
def idp():
    path = os.environ.get("KSASL_OIDC_INFO")
    if path:
        yield json.loads(pathlib.Path(path).read_text())
        return
    with Keycloak() as kc:
        yield kc.info()


def secret_login(idp, **kw):
    c = idp["secret_client"]
    return ksasl.OidcLogin(idp["token_endpoint"], client_id=c["id"],
                           client_secret=kw.pop("client_secret", c["secret"]),
                           ca_file=kw.pop("ca_file", idp["ca_pem"]), **kw)


def endpoint(idp):
    v = ksasl.JwksValidator(expected_issuer=idp["issuer"], expected_audiences=[idp["audience"]])
    return ksasl.JwksEndpoint(idp["jwks_uri"], v, ca_file=idp["ca_pem"])


def test_client_secret_token_validates_against_the_jwks_endpoint(idp):
    t = secret_login(idp, extensions={"traceId": "t1"}).fetch()
    now = int(time.time() * 1000)
    assert abs(t["expiry_ms"] - now - idp["token_lifespan_s"] * 1000) < 5000
    assert t["expiry_ms"] - t["start_ms"] == idp["token_lifespan_s"] * 1000
    e = endpoint(idp)
    v = e.validate(t["token"])  # no keys yet: held for one fetch, then accepted
    assert (v["principal"], v["expiry_ms"]) == (t["principal"], t["expiry_ms"])


def test_signed_client_assertion(idp):
    login = ksasl.OidcLogin(idp["token_endpoint"], client_id=idp["jwt_client"]["id"],
                            assertion_private_key_file=idp["jwt_client"]["key_pem"],
                            assertion_audience=idp["issuer"], assertion_include_jti=True,
                            ca_file=idp["ca_pem"])
    t = login.fetch()
    assert endpoint(idp).validate(t["token"])["principal"] == t["principal"]


def test_the_sans_io_form_over_pythons_own_http_client(idp):
    login = secret_login(idp, scope="profile")
    r = login.request()
    assert r["method"] == "POST" and r["url"] == idp["token_endpoint"]
    assert r["body"] == b"grant_type=client_credentials&scope=profile"
    req = urllib.request.Request(r["url"], data=r["body"], method=r["method"],
                                 headers=dict(r["headers"]))
    ctx = ssl.create_default_context(cafile=idp["ca_pem"])
    with urllib.request.urlopen(req, context=ctx, timeout=10) as answer:
        t = login.token_from_response(answer.status, answer.read())
    assert endpoint(idp).validate(t["token"])["principal"] == t["principal"]


def test_wrong_secret_raises_the_providers_description(idp):
    with pytest.raises(ksasl.CredentialError) as e:
        secret_login(idp, client_secret="not-the-secret").fetch()
    assert e.value.name == "OIDC_REQUEST_REFUSED"
    assert e.value.details["error_description"] == "Invalid client or Invalid client credentials"
    assert "not-the-secret" not in str(e.value)


def test_an_unknown_ca_is_refused(idp):
    with pytest.raises(ksasl.CredentialError) as e:
        secret_login(idp, ca_file=idp["other_ca_pem"]).fetch()
    assert e.value.name == "TLS_CERTIFICATE_REFUSED", e.value
    v = ksasl.JwksValidator()
    with pytest.raises(ksasl.CredentialError) as e:
        ksasl.JwksEndpoint(idp["jwks_uri"], v).fetch()  # Mozilla's roots
    assert e.value.name == "TLS_CERTIFICATE_REFUSED"


def test_bad_settings_name_what_to_fix(idp):
    with pytest.raises(ksasl.MisuseError, match="token.endpoint.url"):
        ksasl.OidcLogin("ftp://x", client_id="a", client_secret="b")
    with pytest.raises(ksasl.MisuseError, match="client secret"):
        ksasl.OidcLogin(idp["token_endpoint"], client_id="a")
    with pytest.raises(ksasl.MisuseError, match="CA file"):
        secret_login(idp, ca_file="/nonexistent/ca.pem")


def test_the_adapters_take_a_login(idp):
    login = secret_login(idp, extensions={"traceId": "t1"})
    token, expiry_s, principal, extensions = confluent_kafka_oauth_cb(login)("")
    assert expiry_s < 1e11 and extensions == {"traceId": "t1"}
    assert endpoint(idp).validate(token)["principal"] == principal
    assert TokenProvider(login).token().count(".") == 2
    provider = AsyncTokenProvider(login)
    assert asyncio.run(provider.token()).count(".") == 2
    assert provider.extensions() == {"traceId": "t1"}


def test_start_logs_in_first_then_refreshes_on_the_core_thread(idp):
    r = ksasl.Refresher()
    thread = secret_login(idp, extensions={"traceId": "t1"}).start(r)
    try:
        cur = r.current()  # the first token is there when start() returns
        assert cur["generation"] == 1 and cur["extensions"] == {"traceId": "t1"}
        assert endpoint(idp).validate(cur["token"])["principal"] == cur["principal"]
        assert r.next_deadline() > cur["expiry_ms"] - idp["token_lifespan_s"] * 1000
    finally:
        thread.stop()
    # A login that cannot succeed fails at start, with the provider's reason.
    r = ksasl.Refresher()
    with pytest.raises(ksasl.CredentialError) as e:
        secret_login(idp, client_secret="wrong").start(r)
    assert e.value.name == "OIDC_REQUEST_REFUSED"
    assert r.generation == 0 and r.failures()[0] == 1
