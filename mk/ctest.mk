# ksasl: the C test suite of the C ABI (tests/c), run plainly, under valgrind, and built with
# AddressSanitizer + UndefinedBehaviorSanitizer.
#
# Included by the top-level Makefile, or used on its own from the repository root:
#   make -f mk/ctest.mk CARGO=cargo c-tests
#
#   c-test           cargo build, then builds tests/c/*.c (with tests/vectors/config_invalid.json
#                    turned into a C table by tests/c/config_cases.py) against include/ksasl.h and
#                    target/debug/libksasl.so (the shared library, found through an rpath) and
#                    runs it; first checks that every function of include/ksasl.h is in the
#                    coverage table of tests/c/test_ffi.c and called from a test file
#   c-test-valgrind  runs the same binary under valgrind (memcheck), as two processes at once
#                    (CTEST_VALGRIND_FIRST's groups, and the others): no invalid reads/writes,
#                    no definite or indirect leaks ("still reachable" blocks of Rust's std
#                    runtime would be accepted; there are none today); the full logs are kept
#                    in target/c/tests/valgrind-{1,2}.log and printed when valgrind reports errors
#   c-test-asan      builds the tests with -fsanitize=address,undefined, linked with the static
#                    library target/debug/libksasl.a, and runs them with LeakSanitizer on (no
#                    suppressions are needed: the Rust side leaks nothing LeakSanitizer sees)
#   c-tests          all three
#
# Everything built goes under target/c/tests/.

CTEST_MK   := $(abspath $(lastword $(MAKEFILE_LIST)))
CTEST_ROOT := $(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(CTEST_MK)))))

# Standalone: the default goal is c-tests. Included: leave the including Makefile's alone.
ifeq ($(abspath $(firstword $(MAKEFILE_LIST))),$(CTEST_MK))
.DEFAULT_GOAL := c-tests
endif

CARGO         ?= cargo
CTEST_CC      ?= gcc
CTEST_PYTHON  ?= python3
VALGRIND      ?= valgrind

CTEST_SRC     := $(CTEST_ROOT)/tests/c
CTEST_OUT     := $(CTEST_ROOT)/target/c/tests
KSASL_ROOT    ?= $(CTEST_ROOT)
include $(CTEST_ROOT)/mk/target.mk
CTEST_LIBDIR  := $(KSASL_CARGO_TARGET)/debug
CTEST_HEADER  := $(CTEST_ROOT)/include/ksasl.h
CTEST_SRCS    := $(sort $(wildcard $(CTEST_SRC)/*.c))
# tests/vectors/config_invalid.json as a C table for test_config.c.
CTEST_GEN     := $(CTEST_OUT)/config_cases.h $(CTEST_OUT)/config_table.h
CTEST_DEPS    := $(CTEST_SRCS) $(CTEST_SRC)/check.h $(CTEST_HEADER) $(CTEST_OUT)/libksasl.stamp \
	$(CTEST_GEN)
CTEST_CFLAGS  := -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -pthread -I$(CTEST_ROOT)/include \
	-I$(CTEST_OUT)
CTEST_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CTEST_BIN     := $(CTEST_OUT)/test_ffi
CTEST_ASAN    := $(CTEST_OUT)/test_ffi_asan

# The panic-boundary test panics on purpose; its backtrace (RUST_BACKTRACE=1) is only noise.
CTEST_ENV     := RUST_BACKTRACE=0
CTEST_VALGRIND_FLAGS := --leak-check=full --error-exitcode=1 \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	--num-callers=40
CTEST_ASAN_OPTIONS := detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
CTEST_UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1

.PHONY: c-tests c-test c-test-valgrind c-test-asan c-test-coverage c-test-force

c-tests: c-test c-test-valgrind c-test-asan

c-test-force:

# Builds the Rust library; the stamp takes the shared library's time, so the tests are relinked
# only when cargo produced a new library.
$(CTEST_OUT)/libksasl.stamp: c-test-force
	cd $(CTEST_ROOT) && $(CARGO) build --quiet
	@mkdir -p $(@D)/lib
	@test -f $(CTEST_LIBDIR)/libksasl.so && test -f $(CTEST_LIBDIR)/libksasl.a
	@soname=$$(objdump -p $(CTEST_LIBDIR)/libksasl.so | awk '/SONAME/ {print $$2}'); \
	  if [ -n "$$soname" ]; then ln -sfn $(CTEST_LIBDIR)/libksasl.so $(@D)/lib/$$soname; fi
	@touch -r $(CTEST_LIBDIR)/libksasl.so $@

$(CTEST_OUT)/config_cases.h: $(CTEST_ROOT)/tests/vectors/config_invalid.json $(CTEST_SRC)/config_cases.py
	@mkdir -p $(@D)
	$(CTEST_PYTHON) $(CTEST_SRC)/config_cases.py $< > $@.tmp && mv $@.tmp $@

# tests/vectors/config_table.json as a C table for test_config_table.c.
$(CTEST_OUT)/config_table.h: $(CTEST_ROOT)/tests/vectors/config_table.json $(CTEST_SRC)/config_table.py
	@mkdir -p $(@D)
	$(CTEST_PYTHON) $(CTEST_SRC)/config_table.py $< > $@.tmp && mv $@.tmp $@

# Linked with the shared library: its soname (libksasl.so.<major>) is resolved through an
# rpath to target/c/tests/lib, where a link of that name points at target/debug/libksasl.so
# (cargo does not make the versioned name).
$(CTEST_BIN): $(CTEST_DEPS)
	@mkdir -p $(@D)
	$(CTEST_CC) $(CTEST_CFLAGS) $(CTEST_SRCS) -o $@ $(CTEST_LIBDIR)/libksasl.so \
	  -Wl,-rpath,$(CTEST_OUT)/lib -Wl,-rpath,$(CTEST_LIBDIR)

$(CTEST_ASAN): $(CTEST_DEPS)
	@mkdir -p $(@D)
	$(CTEST_CC) $(CTEST_CFLAGS) $(CTEST_SAN) $(CTEST_SRCS) -o $@ \
	  $(CTEST_LIBDIR)/libksasl.a -lpthread -ldl -lm

# Every function declared in include/ksasl.h must be in tests/c/test_ffi.c's coverage table
# and called from one of the other test files.
c-test-coverage:
	@fns=$$(grep -oE '^[A-Za-z_][A-Za-z0-9_ ]*[ *]ksasl_[a-z0-9_]+\(' $(CTEST_HEADER) \
	    | grep -oE 'ksasl_[a-z0-9_]+\($$' | tr -d '(' | sort -u); \
	  n=0; missing=0; \
	  for f in $$fns; do \
	    n=$$((n + 1)); \
	    grep -q "FN($$f)" $(CTEST_SRC)/test_ffi.c \
	      || { echo "c-test-coverage: $$f is not in the coverage table of tests/c/test_ffi.c" >&2; missing=1; }; \
	    grep -lE "\\b$$f\\(" $(filter-out %/test_ffi.c,$(CTEST_SRCS)) >/dev/null \
	      || { echo "c-test-coverage: $$f is not called from any tests/c/test_*.c" >&2; missing=1; }; \
	  done; \
	  [ $$missing = 0 ] && echo "c-test-coverage: all $$n functions of include/ksasl.h are tested"

c-test: c-test-coverage $(CTEST_BIN)
	$(CTEST_ENV) $(CTEST_BIN)

# Under valgrind the suite runs as two processes at once (it is single-threaded, and valgrind
# makes it the longest step of `make test`): the groups of CTEST_VALGRIND_FIRST, and every
# other group (`test_ffi --not ...`, so a new group is never left out). Each has its own log.
CTEST_VALGRIND_FIRST ?= tokens exchanges
c-test-valgrind: $(CTEST_BIN)
	@rm -f $(CTEST_OUT)/valgrind*.log $(CTEST_OUT)/valgrind*.out
	@pids=""; \
	  for shard in 1 2; do \
	    if [ $$shard = 1 ]; then groups="$(CTEST_VALGRIND_FIRST)"; else groups="--not $(CTEST_VALGRIND_FIRST)"; fi; \
	    echo "valgrind $(CTEST_BIN) $$groups"; \
	    $(CTEST_ENV) $(VALGRIND) $(CTEST_VALGRIND_FLAGS) --log-file=$(CTEST_OUT)/valgrind-$$shard.log \
	      $(CTEST_BIN) $$groups > $(CTEST_OUT)/valgrind-$$shard.out 2>&1 & pids="$$pids $$!"; \
	  done; \
	  status=0; for p in $$pids; do wait $$p || status=1; done; \
	  for shard in 1 2; do \
	    cat $(CTEST_OUT)/valgrind-$$shard.out; \
	    grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|All heap blocks' \
	      $(CTEST_OUT)/valgrind-$$shard.log | sed 's/^==[0-9]*== */valgrind: /'; \
	    if ! grep -q 'ERROR SUMMARY: 0 errors' $(CTEST_OUT)/valgrind-$$shard.log; then \
	      cat $(CTEST_OUT)/valgrind-$$shard.log; status=1; fi; \
	  done; \
	  exit $$status

c-test-asan: $(CTEST_ASAN)
	$(CTEST_ENV) ASAN_OPTIONS=$(CTEST_ASAN_OPTIONS) UBSAN_OPTIONS=$(CTEST_UBSAN_OPTIONS) \
	  $(CTEST_ASAN)
	@echo "c-test-asan: no AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer reports"
