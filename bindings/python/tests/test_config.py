"""Invalid configuration values give the same error codes in every binding: each case of
tests/vectors/config_invalid.json (read at run time) is fed to ClientConfig, ServerConfig or
Refresher through the keyword argument of the same name, and the error's name is checked."""

import json
import os

import pytest

from ksasl import ClientConfig, KsaslError, MechanismRegistry, Refresher, ServerConfig

TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "vectors", "config_invalid.json")
with open(TABLE) as f:
    CASES = json.load(f)["cases"]


def registry() -> MechanismRegistry:
    """PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients and servers, as the table says."""
    r = MechanismRegistry()
    r.add_password_servers()
    r.add_password_clients("alice", "alice-secret")
    return r


def build(case):
    name, value = case["set"], case["value"]
    if case["config"] == "refresher":
        return Refresher(**{name: value})
    if case["config"] == "client":
        if name == "mechanism":
            return ClientConfig(registry(), value)
        return ClientConfig(registry(), "PLAIN", **{name: tuple(value) if isinstance(value, list) else value})
    assert case["config"] == "server", case
    # The setters that take several values: one mechanism's value, one advertised API.
    kwargs = {
        "max_reauth_ms_for": lambda: {"max_reauth_ms_for": {value[0]: value[1]}},
        "api_version": lambda: {"api_versions": [tuple(value)]},
        "unknown_user_mask": lambda: {"unknown_user_mask": (value[0].encode(), value[1])},
    }.get(name, lambda: {name: value})()
    return ServerConfig(registry(), **kwargs)


def test_the_table_is_read():
    assert len(CASES) >= 30
    assert {c["config"] for c in CASES} == {"client", "server", "refresher"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['config']}-{c['set']}={c['value']}")
def test_an_invalid_value_gives_the_shared_code(case):
    with pytest.raises(KsaslError) as e:
        build(case)
    assert e.value.name == case["code"], e.value


def test_the_defaults_are_valid():
    ClientConfig(registry(), "SCRAM-SHA-512")
    ServerConfig(registry())
    Refresher()
