"""AWS_MSK_IAM and MSK's OAUTHBEARER tokens through the Python objects: kafka-python's payloads
and aws-msk-iam-sasl-signer's tokens (tests/vectors/aws_msk_iam.json) come out of and verify on
ksasl, exchanges both ways, MSK's refusals, a rotation through a Refresher, and no secret in
any repr or error."""

import base64
import json
import os
import time

import pytest

import ksasl
from ksasl import (
    AuthenticationError,
    AwsCredentials,
    AwsKeyStore,
    ClientExchange,
    CredentialError,
    MechanismRegistry,
    MisuseError,
    Refresher,
    ServerExchange,
)
from ksasl.adapters import msk_oauth_cb

HERE = os.path.dirname(__file__)
VECTORS = os.path.join(HERE, "..", "..", "..", "tests", "vectors", "aws_msk_iam.json")
NOW = 1_796_301_296_000
HOST = "b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com"
REGION = "us-east-1"
SECRET = "alice-secret/+="


@pytest.fixture(scope="module")
def vectors():
    with open(VECTORS) as f:
        return json.load(f)


def credentials_of(case):
    return AwsCredentials(case["access_key_id"], case["secret_access_key"], case["session_token"])


def alice(secret=SECRET, **kw):
    return AwsCredentials("AKIAALICE", secret, **kw)


def keys_with(*pairs):
    keys = AwsKeyStore()
    for creds, principal in pairs:
        keys.add(creds, principal)
    return keys


def server_registry(keys, hosts=(HOST,)):
    r = MechanismRegistry()
    r.add_aws_msk_iam_server(keys, REGION, list(hosts))
    r.add_msk_oauthbearer_server(keys, REGION)
    return r


def client_registry(credentials, host=HOST, region=REGION, **kw):
    r = MechanismRegistry()
    r.add_aws_msk_iam_client(host, region, credentials, **kw)
    return r


def login(clients, servers, mech="AWS_MSK_IAM", client_now=NOW, server_now=NOW):
    """One exchange; the server's outcome (raises the server's error on a refusal)."""
    client = ClientExchange(clients, mech)
    server = ServerExchange(servers, mech)
    msg, done = client.start(client_now)
    status, reply = server.step(msg, server_now)
    assert status == "done", status
    if reply is not None:
        last, done = client.step(reply, client_now)
        assert done and last is None
    assert client.complete
    return server.outcome()


def refused(clients, servers, mech="AWS_MSK_IAM", client_now=NOW, server_now=NOW, payload=None):
    """The server's refusal of one exchange (or of `payload`), and what the client is told."""
    server = ServerExchange(servers, mech)
    if payload is None:
        payload, _ = ClientExchange(clients, mech).start(client_now)
    with pytest.raises(AuthenticationError) as e:
        server.step(payload, server_now)
    return e.value, server.client_message


# --- the shared vectors -------------------------------------------------------------------


def test_kafka_pythons_payloads_come_out_of_and_verify_on_ksasl(vectors):
    cases = vectors["payloads"]
    assert len(cases) == 4
    for case in cases:
        creds = credentials_of(case)
        clients = client_registry(creds, case["host"], case["region"], user_agent=case["user_agent"],
                                  key_order="kafka-python")
        payload, done = ClientExchange(clients, "AWS_MSK_IAM").start(case["now_ms"])
        assert payload.decode() == case["payload"] and not done
        servers = MechanismRegistry()
        servers.add_aws_msk_iam_server(keys_with((creds, "python")), case["region"], [case["host"]])
        server = ServerExchange(servers, "AWS_MSK_IAM")
        status, answer = server.step(case["payload"].encode(), case["now_ms"])
        assert status == "done"
        answer = json.loads(answer)
        assert answer["version"] == "2020_10_22" and len(answer["request-id"]) == 36
        out = server.outcome()
        assert out["principal"] == "User:python" and out["mechanism"] == "AWS_MSK_IAM"
        assert out["credential_expiry_ms"] is None


def test_the_java_order_is_the_default_and_signs_the_same_request(vectors):
    case = vectors["payloads"][0]
    creds = credentials_of(case)
    java = ClientExchange(client_registry(creds, case["host"], case["region"],
                                          user_agent=case["user_agent"]), "AWS_MSK_IAM")
    payload, _ = java.start(case["now_ms"])
    assert payload.decode() != case["payload"]
    assert json.loads(payload) == json.loads(case["payload"])
    assert json.loads(ClientExchange(client_registry(creds), "AWS_MSK_IAM").start(NOW)[0])[
        "user-agent"].startswith("ksasl/")
    with pytest.raises(MisuseError) as e:
        client_registry(creds, key_order="jackson")
    assert e.value.name == "INVALID_ARGUMENT" and "jackson" in e.value.message


def test_the_msk_signers_tokens_come_out_of_and_validate_on_ksasl(vectors):
    cases = vectors["tokens"]
    assert len(cases) == 4
    for case in cases:
        creds = credentials_of(case)
        token, expiry = ksasl.msk_token(case["region"], creds, case["user_agent"], now_ms=case["now_ms"])
        assert (token, expiry) == (case["token"], case["expiry_ms"])
        cb = msk_oauth_cb(case["region"], creds, case["user_agent"])
        cb_token, cb_expiry = cb("")  # signed now: the region's URL, 15 minutes from now
        url = base64.urlsafe_b64decode(cb_token + "=" * (-len(cb_token) % 4)).decode()
        assert url.startswith(f"https://kafka.{case['region']}.amazonaws.com/?Action=kafka-cluster%3AConnect&")
        assert isinstance(cb_expiry, float) and 899 <= cb_expiry - time.time() <= 900
        # An OAUTHBEARER client presenting the same token, and the MSK validator taking it.
        clients = MechanismRegistry()
        clients.add_msk_oauthbearer_client(case["region"], creds, case["user_agent"])
        first, _ = ClientExchange(clients, "OAUTHBEARER").start(case["now_ms"])
        assert f"auth=Bearer {case['token']}\x01".encode() in first
        servers = MechanismRegistry()
        servers.add_msk_oauthbearer_server(keys_with((creds, "signer")), case["region"])
        server = ServerExchange(servers, "OAUTHBEARER")
        assert server.step(first, case["now_ms"])[0] == "done"
        out = server.outcome()
        assert out["principal"] == "User:signer" and out["credential_expiry_ms"] == case["expiry_ms"]
        # 901 s later the signature has expired.
        status, challenge = ServerExchange(servers, "OAUTHBEARER").step(first, case["now_ms"] + 901_000)
        assert status == "challenge" and b"invalid_token" in challenge


# --- exchanges and refusals -----------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "session-token/+="])
def test_round_trips(token):
    creds = alice(session_token=token, expires_at_ms=NOW + 3_600_000 if token else None)
    servers = server_registry(keys_with((creds, "alice")))
    out = login(client_registry(creds), servers)
    assert out["principal"] == "User:alice"
    assert out["credential_expiry_ms"] == (NOW + 3_600_000 if token else None)
    clients = MechanismRegistry()
    clients.add_msk_oauthbearer_client(REGION, creds)
    out = login(clients, servers, "OAUTHBEARER")
    assert out["principal"] == "User:alice" and out["credential_expiry_ms"] == NOW + 900_000


def check_refusal(e, client_message, why):
    assert e.code == 300 and e.name == "INVALID_CREDENTIALS", e
    assert why in e.message, e.message
    assert client_message.endswith("]: Access denied"), client_message
    request_id = e.details["request_id"]
    assert client_message == f"[{request_id}]: Access denied"
    shown = " ".join([str(e), e.message, repr(e.details), str(e.client_message), client_message])
    assert SECRET not in shown and "wrong-secret" not in shown and "session-token" not in shown


def test_msks_refusals():
    servers = server_registry(keys_with((alice(session_token="session-token"), "alice")))
    good = alice(session_token="session-token")
    cases = [
        (client_registry(alice("wrong-secret", session_token="session-token")), {}, "does not verify"),
        (client_registry(good, host="b-2.elsewhere"), {}, "another host"),
        (client_registry(good, region="eu-west-1"), {}, "another region"),
        (client_registry(good), {"client_now": NOW - 901_000}, "expired"),
        (client_registry(good), {"client_now": NOW + 901_000}, "ahead"),
        (client_registry(AwsCredentials("AKIAMALLORY", "m")), {}, "unknown"),
        (client_registry(alice(session_token="session-token-2")), {}, "session token"),
    ]
    for clients, kw, why in cases:
        check_refusal(*refused(clients, servers, **kw), why)
    # A valid payload whose action was edited: the server checks it before the signature.
    payload, _ = ClientExchange(client_registry(good), "AWS_MSK_IAM").start(NOW)
    edited = json.loads(payload)
    edited["action"] = "kafka-cluster:AlterCluster"
    check_refusal(*refused(None, servers, payload=json.dumps(edited).encode()), "action")
    # The same payload unedited passes.
    assert ServerExchange(servers, "AWS_MSK_IAM").step(payload, NOW)[0] == "done"


def test_msk_tokens_refused_by_the_validator():
    keys = keys_with((alice(), "alice"))
    servers = server_registry(keys)
    for creds, region in [(alice("wrong-secret"), REGION), (alice(), "eu-west-1")]:
        clients = MechanismRegistry()
        clients.add_msk_oauthbearer_client(region, creds)
        first, _ = ClientExchange(clients, "OAUTHBEARER").start(NOW)
        server = ServerExchange(servers, "OAUTHBEARER")
        # OAUTHBEARER refuses with a challenge (RFC 7628's error JSON), then the failure.
        status, challenge = server.step(first, NOW)
        assert status == "challenge" and b"invalid_token" in challenge
        with pytest.raises(AuthenticationError) as e:
            server.step(b"\x01", NOW)
        assert "wrong-secret" not in str(e.value) + repr(e.value.details)


def test_a_key_store_rotation_and_a_refresher_signing_with_the_current_credentials():
    first = alice(session_token="t1", expires_at_ms=NOW + 3_600_000)
    keys = keys_with((first, "alice"))
    servers = server_registry(keys)
    refresher = Refresher()
    with pytest.raises(CredentialError) as e:
        refresher.set_aws_credentials(alice(), "alice", NOW)  # no expiry
    assert e.value.name == "INVALID_CREDENTIAL_EXPIRY"
    assert refresher.set_aws_credentials(first, "alice", NOW) == 1
    assert NOW + 2_800_000 < refresher.next_deadline() < NOW + 3_100_000
    clients = client_registry(refresher)
    tokens = MechanismRegistry()
    tokens.add_msk_oauthbearer_client(REGION, refresher)
    assert login(clients, servers)["credential_expiry_ms"] == NOW + 3_600_000
    assert login(tokens, servers, "OAUTHBEARER")["principal"] == "User:alice"

    second = AwsCredentials("ASIATWO", "two", session_token="t2", expires_at_ms=NOW + 7_200_000)
    keys.add(second, "alice")
    assert refresher.set_aws_credentials(second, "alice", NOW + 1000) == 2
    assert keys.remove("AKIAALICE") and not keys.remove("AKIAALICE")
    payload, _ = ClientExchange(clients, "AWS_MSK_IAM").start(NOW + 2000)
    assert json.loads(payload)["x-amz-credential"].startswith("ASIATWO/")
    assert login(clients, servers, client_now=NOW + 2000, server_now=NOW + 2000)[
        "credential_expiry_ms"] == NOW + 7_200_000
    assert login(tokens, servers, "OAUTHBEARER", NOW + 2000, NOW + 2000)["principal"] == "User:alice"
    token, _ = ksasl.msk_token(REGION, refresher, now_ms=NOW + 2000)
    assert token == ksasl.msk_token(REGION, second, now_ms=NOW + 2000)[0]
    # Fixed credentials of the removed key are refused from now on.
    check_refusal(*refused(client_registry(first), servers, client_now=NOW + 2000,
                           server_now=NOW + 2000), "unknown")
    # Past every expiry nothing is signed.
    with pytest.raises(CredentialError) as e:
        ClientExchange(clients, "AWS_MSK_IAM").start(NOW + 7_200_000)
    assert e.value.name == "NO_VALID_CREDENTIAL"
    with pytest.raises(ksasl.KsaslError):
        ksasl.msk_token(REGION, alice(expires_at_ms=NOW), now_ms=NOW)


def test_reprs_and_errors_hide_secrets():
    creds = AwsCredentials("ASIAX", "very-secret", session_token="very-token", expires_at_ms=NOW)
    shown = repr(creds)
    assert "ASIAX" in shown and str(NOW) in shown
    assert "very-secret" not in shown and "very-token" not in shown
    assert creds.access_key_id == "ASIAX" and creds.expires_at_ms == NOW and creds.has_session_token
    assert not hasattr(creds, "secret_access_key") and not hasattr(creds, "session_token")
    keys = AwsKeyStore()
    keys.add(creds, "x")
    assert "very-secret" not in repr(keys)
    for bad in [("", "s"), ("AK/X", "s"), ("AKX", "")]:
        with pytest.raises(MisuseError) as e:
            AwsCredentials(*bad)
        assert e.value.name == "INVALID_ARGUMENT"
    with pytest.raises(MisuseError):
        AwsCredentials("AKX", "very-secret", session_token="")
    with pytest.raises(MisuseError) as e:
        keys.add(creds, "")
    assert "very-secret" not in str(e.value)
    with pytest.raises(TypeError):
        client_registry("not credentials")


def test_a_removed_keys_token_is_refused_at_once():
    keys = keys_with((alice(), "alice"))
    servers = server_registry(keys)
    clients = MechanismRegistry()
    clients.add_msk_oauthbearer_client(REGION, alice())
    first, _ = ClientExchange(clients, "OAUTHBEARER").start(NOW)
    assert ServerExchange(servers, "OAUTHBEARER").step(first, NOW)[0] == "done"
    keys.remove("AKIAALICE")
    assert ServerExchange(servers, "OAUTHBEARER").step(first, NOW + 1000)[0] == "challenge"
