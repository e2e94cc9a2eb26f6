"""Only real names (issue 20): every Kafka property name ksasl reads (`ksasl config names`) or
cites anywhere in its sources and documentation exists in Kafka 4.4's own configuration
definitions (the consumer's, producer's, admin client's and broker's ConfigDefs, read from the
jars by ConfigNames.java), and every librdkafka name it reads is known to the librdkafka of
the confluent-kafka wheel. ksasl's own options carry the `ksasl.` prefix.

No broker is started: this needs only the broker's classpath and the ksasl tool."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from broker import LIB_DIR, _compiled, ensure_classpath, java_bin  # noqa: E402

KSASL_TOOL = Path(os.environ.get("KSASL_TOOL", ROOT / "target" / "debug" / "ksasl"))

# A property name as text cites it: dotted lower-case words starting with one of these.
CITED = re.compile(r"(?<![\w.$/-])((?:sasl|ssl|security|connections?|delegation|enable\.sasl|"
                   r"listener\.name\.[a-z0-9_<>-]+(?:\.[a-z0-9<>-]+)?)\.[a-z0-9]+(?:\.[a-z0-9]+)*)"
                   r"(?![\w*<(-]|\.[\w*<])")
# Text that matches but names no property.
NOT_PROPERTIES = {
    "sasl.h", "sasl.hpp", "sasl.so",  # file names
    "ssl.truststore",  # a prefix in prose ("ssl.truststore.* options")
    # misspelt on purpose: examples showing that an unknown name is reported
    "sasl.login.refresh.buffer.secs", "sasl.oauthbearer.clientid",
}
SOURCES = ["src", "bindings/python/src", "bindings/python/python", "bindings/java/src/main",
           "bindings/java/native/src", "include", "examples", "README.md", "CHANGELOG.md",
           "BENCHMARKS.md", "docs"]


@pytest.fixture(scope="module")
def kafka_names() -> set[str]:
    cp = f"{ensure_classpath()}/*"
    source = HERE / "ConfigNames.java"
    classes = _compiled(source, cp)
    main = ["-cp", f"{cp}:{classes}", "ConfigNames"] if classes else ["-cp", cp, str(source)]
    out = subprocess.run([java_bin(), *main], capture_output=True, text=True, timeout=120, check=True)
    names = set(out.stdout.split())
    assert "sasl.jaas.config" in names and "connections.max.reauth.ms" in names, "ConfigDefs read"
    return names


@pytest.fixture(scope="module")
def ksasl_names() -> dict[str, set[str]]:
    out = subprocess.run([str(KSASL_TOOL), "config", "names"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    names: dict[str, set[str]] = {}
    for line in out.splitlines():
        origin, name = line.split(" ", 1)
        names.setdefault(origin, set()).add(name)
    return names


def is_kafka_name(name: str, kafka: set[str]) -> bool:
    """A Kafka name, or one under Kafka's listener prefix (`listener.name.L.` and an optional
    mechanism, as AbstractConfig.valuesWithPrefixOverride reads them)."""
    if name in kafka:
        return True
    m = re.fullmatch(r"listener\.name\.[a-z0-9_<>-]+\.(.+)", name)
    if not m:
        return False
    rest = m.group(1)
    return rest in kafka or rest.split(".", 1)[-1] in kafka


def test_every_kafka_name_ksasl_reads_is_kafkas(kafka_names, ksasl_names):
    missing = sorted(n for n in ksasl_names["kafka"] if n not in kafka_names)
    assert not missing, f"names ksasl reads as Kafka's that Kafka 4.4 does not define: {missing}"
    assert all(n.startswith("ksasl.") for n in ksasl_names["ksasl"])


def cited_names() -> dict[str, set[str]]:
    cited: dict[str, set[str]] = {}
    for entry in SOURCES:
        path = ROOT / entry
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                      and p.suffix in {".rs", ".in", ".py", ".pyi", ".java",
                                                                       ".h", ".hpp", ".md", ".c", ".cpp"})
        for f in files:
            text = f.read_text(errors="replace")
            if f.suffix == ".rs":
                # Unit tests feed misspelt and made-up names on purpose.
                text = text.split("#[cfg(test)]")[0]
            for m in CITED.finditer(text):
                cited.setdefault(m.group(1), set()).add(str(f.relative_to(ROOT)))
    return cited


def test_every_name_ksasl_cites_exists(kafka_names, ksasl_names):
    cited = cited_names()
    assert len(cited) > 50, "the scan finds the names the sources cite"
    librdkafka = ksasl_names.get("librdkafka", set())
    unknown = {n: sorted(where)[:3] for n, where in cited.items()
               if n not in NOT_PROPERTIES and not is_kafka_name(n, kafka_names) and n not in librdkafka}
    assert not unknown, f"names cited that neither Kafka 4.4 nor librdkafka defines: {unknown}"


def test_every_librdkafka_name_ksasl_reads_is_librdkafkas(ksasl_names):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    unknown = []
    for name in sorted(ksasl_names["librdkafka"]):
        try:
            # A value no property accepts: librdkafka says either that the value is wrong or
            # that the property does not exist.
            p = confluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:1", name: "\x01bogus"})
            p.flush(0)
        except (confluent_kafka.KafkaException, ValueError, TypeError) as e:
            if "No such configuration property" in str(e):
                unknown.append(name)
    assert not unknown, f"librdkafka {confluent_kafka.libversion()[0]} does not know {unknown}"
