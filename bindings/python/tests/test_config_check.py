"""ksasl.check_config over the table every binding shares (tests/vectors/config_table.json,
read at run time): each valid configuration gives its effective settings, unknown names and
number of warnings in the first report; each invalid one raises INVALID_CONFIG with the table's
text. The table's password never appears in a report, an error, or their str() and repr()."""

import json
import os

import pytest

from ksasl import ConfigReport, KsaslError, MisuseError, check_config

TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "vectors", "config_table.json")
with open(TABLE) as f:
    _TABLE = json.load(f)
VALID, INVALID = _TABLE["valid"], _TABLE["invalid"]

# Every password, secret and key in the table contains this marker.
SECRET = "hunter2-secret-XYZ"


def check(entry):
    """The entry's configuration through the binding: a listener for a broker's."""
    listener = entry["listener"] if entry["side"] == "server" else None
    return check_config(entry["properties"], listener)


def test_the_table_is_read():
    assert len(VALID) >= 32 and len(INVALID) >= 32
    assert {e["side"] for e in VALID + INVALID} == {"client", "server"}
    assert sum(SECRET in e["properties"] for e in VALID + INVALID) >= 32


@pytest.mark.parametrize("entry", VALID, ids=lambda e: e["name"])
def test_a_valid_configuration_gives_its_report(entry):
    reports = check(entry)
    assert reports and all(isinstance(r, ConfigReport) for r in reports)
    r = reports[0]
    assert r.effective == [tuple(p) for p in entry["effective"]]
    assert r.unknown == entry["unknown"]
    assert len(r.warnings) == entry["warnings"], r.warnings
    for r in reports:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in r.effective)
        for text in (repr(r), str(r), r.scope, *r.unknown, *r.warnings, *(v for _, v in r.effective)):
            assert SECRET not in text


@pytest.mark.parametrize("entry", INVALID, ids=lambda e: e["name"])
def test_an_invalid_configuration_raises_invalid_config(entry):
    with pytest.raises(MisuseError) as e:
        check(entry)
    assert e.value.name == "INVALID_CONFIG", e.value
    assert entry["error"] in e.value.message
    for text in (e.value.message, str(e.value), repr(e.value), *map(str, e.value.details.values())):
        assert SECRET not in text


def test_the_report_is_read_only_and_the_listener_optional():
    broker = (
        "listeners=A://:1,B://:2\nlistener.security.protocol.map=A:SASL_SSL,B:PLAINTEXT\n"
        "sasl.enabled.mechanisms=SCRAM-SHA-256\n"
        "listener.name.a.scram-sha-256.sasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required;\n"
    )
    (r,) = check_config(broker)
    assert r.scope == "listener A"
    assert check_config(broker, "A")[0].effective == r.effective
    assert repr(r).startswith("ConfigReport('listener A', [")
    with pytest.raises(AttributeError):
        r.scope = "client"  # type: ignore[misc]
    with pytest.raises(KsaslError):
        check_config(broker, listener="B")
