# ksasl: `make demo` and `make test` work on a fresh machine with Rust (cargo), Python 3,
# gcc/g++, valgrind, cmake, pkg-config, Java 17 and Maven (artifacts come from Maven Central);
# the MIT Kerberos KDC and tools are apt-get installed by tests/kerberos/kdc.py when missing (as root).
CARGO  ?= cargo
PYTHON ?= python3
CC     ?= gcc
VENV   := .venv
PY     := $(VENV)/bin/python
CFLAGS_STRICT := -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -Iexamples/c
KSASL_ROOT    := $(CURDIR)
include mk/target.mk
# Cargo's output directory (mk/target.mk); what the Makefile builds itself stays in target/.
OUT           := $(KSASL_CARGO_TARGET)
RUST_STATIC   := $(OUT)/debug/libksasl.a -lpthread -ldl -lm
# The ksasl tool, for the tests that run it.
export KSASL_TOOL := $(OUT)/debug/ksasl
C_EXAMPLES    := demo scram_inprocess refresher kafka_client mini_broker

.PHONY: bench-java bench-gssapi bench-storm bench-oidc demo demo-mechanisms test test-suites test-rust test-interop test-python python-binding test-c lint bench clean c-examples c-run-examples abi-check java-native java-binding test-java test-kerberos test-broker test-c-and-broker cpp-valgrind soak fuzz fuzz-smoke

# The main job: a C program drives a broker-side and two client-side connection drivers over
# loopback TCP with a 3-second session lifetime: authentication, re-authentication (one after
# a token refresh), and a client without re-authentication cut off at expiry.
demo: target/c/demo
	./target/c/demo

# Every mechanism in one process, with failure cases, from Rust.
demo-mechanisms:
	$(CARGO) run --quiet --example demo

# Everything, under one Keycloak (tests/oidc/keycloak.py --serve) launched first and booting
# while the lint runs: each OIDC suite makes a realm of its own on it instead of starting a
# Keycloak of its own (about 30 s each).
test:
	$(PYTHON) tests/oidc/keycloak.py --serve -- $(MAKE) --no-print-directory test-suites

test-suites: lint test-rust fuzz-smoke test-python test-interop test-java test-kerberos test-nokrb5 test-c-and-broker

# (The benchmarks are compiled and linted by clippy --all-targets in `lint`.)
test-rust:
	$(CARGO) test

# Formatting, clippy, and the module graph: no circles among the core's modules, inside the C
# ABI, the Python crate or the JNI crate, and nothing imported from a crate root.
lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets --quiet -- -D warnings
	$(PYTHON) tests/arch/modgraph.py src
	$(PYTHON) tests/arch/modgraph.py bindings/python/src
	$(PYTHON) tests/arch/modgraph.py bindings/java/native/src

# The Python environment for interop tests, rebuilt when the requirements change. The gssapi
# package (kafka-python's and aiokafka's GSSAPI) has no wheel for Linux: pip builds it, which
# needs MIT Kerberos's headers and krb5-config (libkrb5-dev), apt-get installed when missing (root).
$(VENV)/.installed: tests/interop/requirements.txt
	@command -v krb5-config >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && DEBIAN_FRONTEND=noninteractive apt-get update -q \
	  && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libkrb5-dev; } \
	  || { echo "pip builds gssapi from source: install libkrb5-dev (MIT Kerberos headers)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r tests/interop/requirements.txt
	touch $@

# The Python and JNI crates build in one target directory: ksasl and the dependencies they
# share (same features, release profile) compile once for both.
BINDINGS_TARGET := $(OUT)/bindings

# The Python binding, built by maturin through pip into the venv.
python-binding: $(VENV)/.installed
	(cd bindings/python && $(CARGO) fmt --check)
	CARGO_TARGET_DIR=$(BINDINGS_TARGET) $(PY) -m pip install --quiet ./bindings/python

# Independent peers: scramp, PyJWT, and real Kafka clients (confluent-kafka, kafka-python)
# against the asyncio example server in examples/python.
test-interop: python-binding
	$(CARGO) build --quiet --example stdio_peer
	KSASL_STDIO_PEER=$(OUT)/debug/examples/stdio_peer $(PY) -m pytest -q tests/interop
	# Fresh keys and tokens from PyJWT on every run, validated by the Rust OAUTHBEARER tests.
	mkdir -p target
	$(PY) tests/vectors/gen_jwt.py > target/jwt-fresh.json
	KSASL_JWT_VECTORS=target/jwt-fresh.json $(CARGO) test --quiet --test oauthbearer

# The Python binding (pyo3, built by maturin through pip), under -X dev and the debug allocator.
test-python: python-binding
	$(PY) -m mypy --strict examples/python bindings/python/python/ksasl
	PYTHONMALLOC=debug $(PY) -X dev -m pytest -q bindings/python/tests

# --- C ABI -------------------------------------------------------------------------------
$(OUT)/debug/libksasl.a: FORCE
	$(CARGO) build --quiet

# The ksasl command-line tool (`ksasl probe` in tests/broker): cargo builds it with the library.
$(OUT)/debug/ksasl: $(OUT)/debug/libksasl.a

target/c/%: examples/c/%.c examples/c/frames.h include/ksasl.h $(OUT)/debug/libksasl.a
	@mkdir -p target/c
	$(CC) $(CFLAGS_STRICT) $< $(RUST_STATIC) -o $@

c-examples: $(addprefix target/c/,$(C_EXAMPLES))

# Runs every C example; the TCP client runs against the mini broker on a free loopback port,
# which stops by itself and is also killed by pid; then both with Keycloak (tests/oidc).
c-run-examples: c-examples
	./target/c/scram_inprocess
	./target/c/refresher
	./target/c/demo > target/c/demo.log || (cat target/c/demo.log; exit 1)
	@tail -9 target/c/demo.log
	rm -f target/c/broker.port
	./target/c/mini_broker target/c/broker.port 2000 alice alice-secret 10 > target/c/mini_broker.log 2>&1 & echo $$! > target/c/mini_broker.pid
	@for i in $$(seq 100); do [ -s target/c/broker.port ] && break; sleep 0.05; done
	python3 tests/c/oversize_prefix.py $$(cat target/c/broker.port) || { kill $$(cat target/c/mini_broker.pid); exit 1; }
	./target/c/kafka_client 127.0.0.1 $$(cat target/c/broker.port) SCRAM-SHA-512 alice alice-secret 4500 2; \
	  status=$$?; kill $$(cat target/c/mini_broker.pid) 2>/dev/null; rm -f target/c/mini_broker.pid; exit $$status
	# The same two with an identity provider: tokens from Keycloak, keys from its JWKS endpoint.
	$(PYTHON) tests/oidc/keycloak.py --token-lifespan 10 --exec -- $(PYTHON) tests/c/oidc_examples.py

abi-check:
	bash tests/abi/check.sh

-include mk/ctest.mk
-include mk/install.mk
include mk/dist.mk

test-c: abi-check c-run-examples $(if $(wildcard mk/ctest.mk),c-tests) $(if $(wildcard mk/install.mk),cpp-header-check cpp-examples cpp-valgrind install-check) dist-check

# The C++ examples again under valgrind: no errors, no definite or indirect leaks.
cpp-valgrind: cpp-examples
	@for src in examples/cpp/*.cpp; do \
	  x=target/cpp/$$(basename $$src .cpp); \
	  valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1 $$x > target/cpp/valgrind-$$(basename $$x).log 2>&1 \
	    || { cat target/cpp/valgrind-$$(basename $$x).log; echo "cpp-valgrind: $$x failed"; exit 1; }; \
	done; echo "cpp-valgrind: every C++ example clean under valgrind"

# --- Java binding (JNI) --------------------------------------------------------------------
MVN       ?= mvn
MVN_FLAGS := -q -B
JNI_LIB   := $(BINDINGS_TARGET)/release/libksasl_jni.so
JNI_WARNINGS := WARNING in native method|FATAL ERROR in native method|JNI local refs

# The JNI library (its own crate beside the Python one), checked to export only JNI entry
# points, one for each native method of Native.java, then staged for the jar.
java-native:
	cd bindings/java/native && export CARGO_TARGET_DIR=$(BINDINGS_TARGET) && $(CARGO) fmt --check \
	  && $(CARGO) clippy --quiet --release -- -D warnings && $(CARGO) build --quiet --release
	bash tests/abi/jni_exports.sh $(JNI_LIB)
	mkdir -p bindings/java/target/native
	cp $(JNI_LIB) bindings/java/target/native/

# The jar (with the native library inside) in the local Maven repository.
java-binding: java-native
	cd bindings/java && $(MVN) $(MVN_FLAGS) install -DskipTests

# The KDC of the Java GSSAPI tests (tests/kerberos/kdc.py): MIT Kerberos, loaded into the JVM,
# reads KRB5_CONFIG, KRB5CCNAME and KRB5RCACHEDIR from the process environment, which a JVM cannot
# set for itself, so Maven runs under `kdc.py --exec` (which also sets KSASL_KDC_INFO, the JSON
# the tests read keytab paths from; without it the GSSAPI tests are skipped). The binding's
# tests also run under tests/oidc/keycloak.py --exec (JAVA_IDP): a Keycloak for the OIDC tests
# (KSASL_OIDC_INFO).
JAVA_KDC := $(PYTHON) $(CURDIR)/tests/kerberos/kdc.py --principal other/localhost --principal brief:4s \
	--wrong-keytab kafka/localhost --wrong-keytab alice --exec --
JAVA_IDP := $(PYTHON) $(CURDIR)/tests/oidc/keycloak.py --exec --

# JUnit 5 under -Xcheck:jni: the binding's tests (surefire), the packaged jar loaded in fresh
# JVMs (failsafe), and the example server driven by Kafka's Java client, each Maven run with a
# throw-away KDC for the GSSAPI tests. Any JNI warning fails.
test-java: java-native
	@mkdir -p target
	(cd bindings/java && $(JAVA_KDC) $(JAVA_IDP) $(MVN) $(MVN_FLAGS) install -Dksasl.test.jvm=-Xcheck:jni) > target/java-test.log 2>&1 || (cat target/java-test.log; exit 1)
	$(if $(wildcard examples/java/pom.xml),(cd examples/java && $(JAVA_KDC) $(JAVA_IDP) $(MVN) $(MVN_FLAGS) test -Dksasl.test.jvm=-Xcheck:jni) >> target/java-test.log 2>&1 || (cat target/java-test.log; exit 1))
	java -Xcheck:jni -cp bindings/java/target/ksasl-$(KSASL_VERSION).jar:bindings/java/target/test-classes org.ksasl.LoadCheck >> target/java-test.log 2>&1
	@if grep -hE "$(JNI_WARNINGS)" target/java-test.log $$(find bindings/java/target examples/java/target -name '*.dumpstream' 2>/dev/null); then \
	  echo "JNI warnings under -Xcheck:jni (above)"; exit 1; fi
	@grep -h "loaded-from=" target/java-test.log
	@cat bindings/java/target/surefire-reports/*.txt bindings/java/target/failsafe-reports/*.txt $$(ls examples/java/target/surefire-reports/*.txt 2>/dev/null) | grep "Tests run" | awk -F'[:,]' '{n+=$$2; f+=$$4; e+=$$6} END {print "java tests: " n " run, " f " failures, " e " errors"}'

# --- Kerberos: a throw-away MIT KDC ---------------------------------------------------------
# tests/kerberos/kdc.py starts krb5kdc on a free 127.0.0.1 port (realm KSASL.TEST, ~0.1 s);
# it apt-get installs krb5-kdc, krb5-admin-server and krb5-user first when a tool is missing
# (root only). The broker's GSSAPI test (tests/broker/test_gssapi_broker.py) uses it too, and
# tests/kerberos runs the C++ GSSAPI example against it under valgrind.
test-kerberos: $(VENV)/.installed $(KSASL_CPP_OUT)/gssapi
	$(PY) -m pytest -q -p no:warnings tests/kerberos

# The C suite, the Python binding's tests and the jar's tests with the MIT GSS-API library
# hidden (a private mount namespace, as root): everything but GSSAPI works, GSSAPI says what
# is missing.
test-nokrb5: python-binding c-test java-binding
	tests/nokrb5/run.sh target/c/tests/test_ffi $(PY) bindings/java $(MVN)

# --- a real Apache Kafka broker ------------------------------------------------------------
# Kafka 4.4 (fetched by Maven into ~/.m2 on the first run) in KRaft mode on 127.0.0.1:
# the harness smoke tests, every ksasl client (C, Python, Java) with every mechanism,
# negative controls and signed JWTs, aiokafka with ksasl.aiokafka, and a GSSAPI listener
# (with the KDC of tests/kerberos) proven with Kafka's Java client. Broker logs of a
# failed start stay in tests/broker/target/broker-logs.
BROKER_DEPS   := python-binding target/c/kafka_client target/c/mini_broker java-binding $(OUT)/debug/ksasl
BROKER_PYTEST := $(PY) -m pytest -q -p no:warnings tests/broker

test-broker: $(BROKER_DEPS)
	$(BROKER_PYTEST)

# `make test` runs the C suite and the broker suite side by side: the C suite (valgrind, then
# the C++ examples, the installation check and dist-check) keeps the cores busy for about 11 minutes, at a
# lower priority (nice), while the broker suite (about 9 minutes) mostly waits on session and
# ticket lifetimes but must not be starved of CPU. The broker suite's output goes to
# target/test-broker.log, printed when both are done; either failing fails the target.
test-c-and-broker: $(BROKER_DEPS)
	@mkdir -p target
	@$(BROKER_PYTEST) > target/test-broker.log 2>&1 & broker=$$!; \
	  echo "test-broker: running in the background (pid $$broker, target/test-broker.log)"; \
	  nice -n 10 $(MAKE) --no-print-directory test-c; c=$$?; \
	  wait $$broker; b=$$?; \
	  echo "--- test-broker (target/test-broker.log) ---"; cat target/test-broker.log; \
	  [ $$c = 0 ] || echo "test-c failed"; [ $$b = 0 ] || echo "test-broker failed"; \
	  [ $$c = 0 ] && [ $$b = 0 ]

# --- coverage-guided fuzzing (fuzz/, FUZZING.md) ---------------------------------------------
# cargo-fuzz on the nightly toolchain (installed by fuzz/run.sh if missing): every target for
# FUZZ_SECONDS each, with the executions per target; a crash fails the run and leaves its
# input in fuzz/artifacts/<target>/.
FUZZ_SECONDS ?= 600
fuzz:
	fuzz/run.sh $(FUZZ_SECONDS)

# The smoke in `make test`: every target for 5 seconds.
fuzz-smoke:
	fuzz/run.sh 5

# --- soak (not part of `make test`) -------------------------------------------------------
# 1,000 client connections over loopback against a ksasl server (a child process) with a
# 2-second session lifetime for 240 s: every client re-authenticates 100+ times while sending
# requests; PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER with refreshed tokens. Prints requests
# sent/answered, re-authentications per connection, expiry kills, failures and the server's
# RSS every second; exits non-zero if a figure misses (examples/soak.rs; BENCHMARKS.md).
soak:
	$(CARGO) run --release --quiet --example soak

# --- benchmarks ----------------------------------------------------------------------------
# Criterion benchmarks and 1-vs-2-thread scaling, then OpenSSL's PBKDF2 via hashlib, the C-call
# overhead and the C scaling figures in the same run.
bench: $(VENV)/.installed
	$(CARGO) bench --bench scram --bench oauthbearer --bench kafka --bench refresh --bench scaling --bench pbkdf2_floor -- --noplot
	$(PYTHON) tests/kerberos/kdc.py --max-life 1h --exec -- $(CARGO) bench --bench gssapi -- --noplot
	$(PY) benches/pbkdf2_openssl.py
	$(MAKE) python-binding
	$(PY) benches/python_bench.py
	$(CARGO) build --release --quiet
	@mkdir -p target/c
	$(CC) -O2 -std=c11 -Iinclude -Iexamples/c benches/c/gate.c $(OUT)/release/libksasl.a -lpthread -ldl -lm -o target/c/gate_bench
	./target/c/gate_bench
	$(CC) -O2 -std=c11 -Iinclude benches/c/scaling.c $(OUT)/release/libksasl.a -lpthread -ldl -lm -o target/c/scaling_bench
	./target/c/scaling_bench tests/vectors/jwt.json

# OIDC against a real Keycloak (tests/oidc/keycloak.py): token fetches, JWKS refreshes and the
# validation of the provider's tokens, over HTTPS (BENCHMARKS.md).
bench-oidc:
	$(CARGO) build --release --quiet --example oidc_bench
	$(PYTHON) tests/oidc/keycloak.py --exec -- $(OUT)/release/examples/oidc_bench

# JMH benchmarks of the Java binding next to Rust and Kafka's ScramSaslServer (BENCHMARKS.md).
bench-java: java-binding
	KSASL_BENCH_RUST=1 bash benches/java/run.sh

# The re-authentication storm (BENCHMARKS.md): 100,000 authenticated connections that all
# re-authenticate within 10 s of simulated time, on ksasl's drivers (benches/storm.rs) and on
# Kafka's own server classes (benches/java Storm, JMH), one right after the other. The RS256
# tokens (2 per connection) are signed once by benches/storm_tokens.py into target/storm.
bench-storm: $(VENV)/.installed java-binding
	$(PY) benches/storm_tokens.py
	$(CARGO) bench --bench storm
	bash benches/java/run.sh Storm

# GSSAPI per login: ksasl in Rust and through JNI next to the JDK's GSSAPI SaslServer and
# SaslClient as Kafka makes them, under one throw-away MIT KDC (BENCHMARKS.md, about 7 minutes).
bench-gssapi: java-binding
	KSASL_BENCH_RUST=1 bash benches/java/run.sh gssapi

clean:
	$(CARGO) clean
	rm -rf $(VENV) .pytest_cache bindings/java/target bindings/java/native/target

FORCE:
