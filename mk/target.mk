# ksasl: where cargo puts what it builds, asked of cargo itself (`cargo metadata`), so that
# CARGO_TARGET_DIR, a `build.target-dir` in a .cargo/config.toml, or the default <root>/target
# all work. Included by the Makefile, mk/ctest.mk and mk/install.mk after they set KSASL_ROOT
# (the repository root) and CARGO; computed once and handed to sub-makes and scripts through
# the environment as KSASL_CARGO_TARGET.
ifndef KSASL_CARGO_TARGET
KSASL_CARGO_TARGET := $(shell cd '$(KSASL_ROOT)' && $(or $(CARGO),cargo) metadata --format-version 1 --no-deps \
	| python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
ifeq ($(KSASL_CARGO_TARGET),)
$(error cargo metadata did not say where cargo builds (is cargo on PATH?))
endif
endif
export KSASL_CARGO_TARGET
