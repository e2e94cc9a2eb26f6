# ksasl: `make demo` and `make test` work on a fresh machine with Rust and Python 3.
CARGO  ?= cargo
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test test-rust test-interop lint bench clean

demo:
	$(CARGO) run --quiet --example demo

test: test-rust test-interop

test-rust:
	$(CARGO) test
	$(CARGO) bench --no-run --quiet

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets --quiet -- -D warnings

# The Python environment for interop tests, rebuilt when the requirements change.
$(VENV)/.installed: tests/interop/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r tests/interop/requirements.txt
	touch $@

test-interop: $(VENV)/.installed
	$(CARGO) build --quiet --example stdio_peer
	KSASL_STDIO_PEER=target/debug/examples/stdio_peer $(PY) -m pytest -q tests/interop
	# Fresh keys and tokens from PyJWT on every run, validated by the Rust OAUTHBEARER tests.
	mkdir -p target
	$(PY) tests/vectors/gen_jwt.py > target/jwt-fresh.json
	KSASL_JWT_VECTORS=target/jwt-fresh.json $(CARGO) test --quiet --test oauthbearer

# Criterion benchmarks, then OpenSSL's PBKDF2 via hashlib in the same run for comparison.
bench: $(VENV)/.installed
	$(CARGO) bench --bench scram --bench oauthbearer --bench kafka --bench refresh -- --noplot
	$(PY) benches/pbkdf2_openssl.py

clean:
	$(CARGO) clean
	rm -rf $(VENV) .pytest_cache
