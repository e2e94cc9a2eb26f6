# ksasl: installation, install check and the C++ wrapper's checks.
#
# Included by the top-level Makefile, or used on its own from the repository root:
#   make -f mk/install.mk CARGO=cargo cpp-header-check cpp-examples install-check
#
#   install           cargo build --release, then install into $(DESTDIR)$(PREFIX):
#                     lib/libksasl.so.<version> (+ libksasl.so.<major>, libksasl.so links),
#                     lib/libksasl.a, include/ksasl.h, include/ksasl.hpp,
#                     lib/pkgconfig/ksasl.pc, lib/cmake/ksasl/ksaslConfig{,Version}.cmake,
#                     bin/ksasl (the command-line tool)
#                     KSASL_STRIP=1 strips the debug information (the release profile keeps
#                     line tables: 44 MB for the shared library, 8 MB without)
#   uninstall         removes what install installed
#   install-check     installs into target/install-check/prefix, then builds and runs
#                     packaging/consumer with pkg-config and with CMake (find_package), C and
#                     C++, shared and static (packaging/consumer/check.sh)
#   cpp-examples      builds examples/cpp/*.cpp against target/debug and runs each
#   cpp-header-check  compiles a translation unit including ksasl.hpp
#
# Everything built goes under target/ (cargo's output where cargo metadata says).

# This file's directory, before any other makefile is read.
KSASL_MK   := $(abspath $(lastword $(MAKEFILE_LIST)))
KSASL_ROOT := $(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(KSASL_MK)))))

# Standalone (make -f mk/install.mk): the default goal is the list of targets. Included: leave
# the including Makefile's default goal alone.
ifeq ($(abspath $(firstword $(MAKEFILE_LIST))),$(KSASL_MK))
.DEFAULT_GOAL := install-help
else
KSASL_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)
endif

CARGO      ?= cargo
KSASL_CC   ?= $(CC)
KSASL_CXX  ?= g++
PKG_CONFIG ?= pkg-config
CMAKE      ?= cmake
INSTALL    ?= install

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
BINDIR     ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
DESTDIR    ?=

# The version from Cargo.toml's [package] section; the soname is libksasl.so.<major>
# (build.rs), so that is the name the dynamic loader looks for.
KSASL_VERSION := $(shell sed -n '/^\[package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' $(KSASL_ROOT)/Cargo.toml | head -n 1)
KSASL_MAJOR   := $(word 1,$(subst ., ,$(KSASL_VERSION)))
KSASL_MINOR   := $(word 2,$(subst ., ,$(KSASL_VERSION)))
KSASL_SONAME  := libksasl.so.$(KSASL_MAJOR)

include $(KSASL_ROOT)/mk/target.mk
KSASL_TARGET  := $(KSASL_CARGO_TARGET)
KSASL_PKG     := $(KSASL_ROOT)/packaging
# What is built here, as opposed to by cargo, goes under the repository's target/.
KSASL_CPP_OUT := $(KSASL_ROOT)/target/cpp
KSASL_CHECK   := $(KSASL_ROOT)/target/install-check

KSASL_CXXFLAGS ?= -std=c++17 -Wall -Wextra -Werror -pedantic
KSASL_CFLAGS   ?= -std=c11 -Wall -Wextra -Werror -pedantic

# The substitutions for the templates in packaging/. When lib and include are directly under
# the prefix, ksasl.pc and ksaslConfig.cmake find the prefix from where they are (relocatable:
# the tarball and the .deb of mk/dist.mk); otherwise they name the directories.
KSASL_RELOCATABLE = $(and $(filter $(PREFIX)/lib,$(LIBDIR)),$(filter $(PREFIX)/include,$(INCLUDEDIR)))
KSASL_PC_PREFIX     = $(if $(KSASL_RELOCATABLE),$${pcfiledir}/../..,$(PREFIX))
KSASL_PC_LIBDIR     = $(if $(filter $(PREFIX)/%,$(LIBDIR)),$${exec_prefix}/$(patsubst $(PREFIX)/%,%,$(LIBDIR)),$(LIBDIR))
KSASL_PC_INCLUDEDIR = $(if $(filter $(PREFIX)/%,$(INCLUDEDIR)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(INCLUDEDIR)),$(INCLUDEDIR))
KSASL_CM_LIBDIR     = $(if $(KSASL_RELOCATABLE),$${_ksasl_prefix}/lib,$(LIBDIR))
KSASL_CM_INCLUDEDIR = $(if $(KSASL_RELOCATABLE),$${_ksasl_prefix}/include,$(INCLUDEDIR))
KSASL_SUBST = sed -e 's|@PREFIX@|$(KSASL_PC_PREFIX)|g' \
	-e 's|@CMAKE_LIBDIR@|$(KSASL_CM_LIBDIR)|g' -e 's|@CMAKE_INCLUDEDIR@|$(KSASL_CM_INCLUDEDIR)|g' \
	-e 's|@VERSION@|$(KSASL_VERSION)|g' \
	-e 's|@PC_LIBDIR@|$(KSASL_PC_LIBDIR)|g' -e 's|@PC_INCLUDEDIR@|$(KSASL_PC_INCLUDEDIR)|g' \
	-e 's|@SOMAJOR@|$(KSASL_MAJOR)|g' -e 's|@MINOR@|$(KSASL_MINOR)|g'

.PHONY: install-help install uninstall install-check cpp-examples cpp-header-check \
	ksasl-version-check ksasl-cargo-debug

install-help:
	@echo "ksasl $(KSASL_VERSION): make -f mk/install.mk [install|uninstall|install-check|cpp-examples|cpp-header-check]"
	@echo "  PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR)"

ksasl-version-check:
	@test -n "$(KSASL_VERSION)" || { echo "mk/install.mk: no version in $(KSASL_ROOT)/Cargo.toml" >&2; exit 1; }
	@case "$(PREFIX)$(LIBDIR)$(INCLUDEDIR)$(BINDIR)" in *'|'*) echo "mk/install.mk: '|' in a path" >&2; exit 1;; esac

# ---------------------------------------------------------------------------------------------
# install / uninstall

install: ksasl-version-check
	cd $(KSASL_ROOT) && $(CARGO) build --release
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(INCLUDEDIR)' \
		'$(DESTDIR)$(LIBDIR)/pkgconfig' '$(DESTDIR)$(LIBDIR)/cmake/ksasl'
	$(INSTALL) -m 0755 '$(KSASL_TARGET)/release/libksasl.so' '$(DESTDIR)$(LIBDIR)/libksasl.so.$(KSASL_VERSION)'
	ln -sfn 'libksasl.so.$(KSASL_VERSION)' '$(DESTDIR)$(LIBDIR)/$(KSASL_SONAME)'
	ln -sfn '$(KSASL_SONAME)' '$(DESTDIR)$(LIBDIR)/libksasl.so'
	$(INSTALL) -m 0644 '$(KSASL_TARGET)/release/libksasl.a' '$(DESTDIR)$(LIBDIR)/libksasl.a'
	$(INSTALL) -m 0755 '$(KSASL_TARGET)/release/ksasl' '$(DESTDIR)$(BINDIR)/ksasl'
	$(INSTALL) -m 0644 '$(KSASL_ROOT)/include/ksasl.h' '$(KSASL_ROOT)/include/ksasl.hpp' '$(DESTDIR)$(INCLUDEDIR)/'
	$(KSASL_SUBST) '$(KSASL_PKG)/ksasl.pc.in' > '$(DESTDIR)$(LIBDIR)/pkgconfig/ksasl.pc'
	$(KSASL_SUBST) '$(KSASL_PKG)/ksaslConfig.cmake.in' > '$(DESTDIR)$(LIBDIR)/cmake/ksasl/ksaslConfig.cmake'
	$(KSASL_SUBST) '$(KSASL_PKG)/ksaslConfigVersion.cmake.in' > '$(DESTDIR)$(LIBDIR)/cmake/ksasl/ksaslConfigVersion.cmake'
	$(if $(KSASL_STRIP),strip --strip-debug '$(DESTDIR)$(LIBDIR)/libksasl.so.$(KSASL_VERSION)' \
		'$(DESTDIR)$(LIBDIR)/libksasl.a' '$(DESTDIR)$(BINDIR)/ksasl')
	chmod 0644 '$(DESTDIR)$(LIBDIR)/pkgconfig/ksasl.pc' '$(DESTDIR)$(LIBDIR)/cmake/ksasl/ksaslConfig.cmake' \
		'$(DESTDIR)$(LIBDIR)/cmake/ksasl/ksaslConfigVersion.cmake'

uninstall: ksasl-version-check
	rm -f '$(DESTDIR)$(BINDIR)/ksasl' '$(DESTDIR)$(LIBDIR)/libksasl.so.$(KSASL_VERSION)' '$(DESTDIR)$(LIBDIR)/$(KSASL_SONAME)' \
		'$(DESTDIR)$(LIBDIR)/libksasl.so' '$(DESTDIR)$(LIBDIR)/libksasl.a' \
		'$(DESTDIR)$(INCLUDEDIR)/ksasl.h' '$(DESTDIR)$(INCLUDEDIR)/ksasl.hpp' \
		'$(DESTDIR)$(LIBDIR)/pkgconfig/ksasl.pc' \
		'$(DESTDIR)$(LIBDIR)/cmake/ksasl/ksaslConfig.cmake' \
		'$(DESTDIR)$(LIBDIR)/cmake/ksasl/ksaslConfigVersion.cmake'
	-rmdir '$(DESTDIR)$(LIBDIR)/cmake/ksasl' 2>/dev/null

# ---------------------------------------------------------------------------------------------
# install-check: a consumer built against a fresh installation, with pkg-config and with CMake.

KSASL_CHECK_PREFIX := $(KSASL_CHECK)/prefix

install-check: ksasl-version-check
	rm -rf '$(KSASL_CHECK)'
	$(MAKE) --no-print-directory -f '$(KSASL_MK)' install CARGO='$(CARGO)' \
		PREFIX='$(KSASL_CHECK_PREFIX)' DESTDIR=
	KSASL_CC='$(KSASL_CC)' KSASL_CXX='$(KSASL_CXX)' PKG_CONFIG='$(PKG_CONFIG)' CMAKE='$(CMAKE)' \
		'$(KSASL_PKG)/consumer/check.sh' '$(KSASL_CHECK_PREFIX)' '$(KSASL_CHECK)/consumer' '$(KSASL_VERSION)'
	@echo "install-check: ok ($(KSASL_CHECK_PREFIX))"

# ---------------------------------------------------------------------------------------------
# The C++ wrapper: examples and header check, against the debug build.

KSASL_CPP_SOURCES  := $(sort $(wildcard $(KSASL_ROOT)/examples/cpp/*.cpp))
KSASL_CPP_EXAMPLES := $(patsubst $(KSASL_ROOT)/examples/cpp/%.cpp,$(KSASL_CPP_OUT)/%,$(KSASL_CPP_SOURCES))
KSASL_HEADERS      := $(KSASL_ROOT)/include/ksasl.h $(KSASL_ROOT)/include/ksasl.hpp
# The executables need libksasl.so.<major> (the soname); cargo only writes libksasl.so, so a
# link in target/cpp/lib points at it, and the executables' rpath at that directory.
KSASL_CPP_SOLINK   := $(KSASL_CPP_OUT)/lib/$(KSASL_SONAME)

ksasl-cargo-debug:
	cd $(KSASL_ROOT) && $(CARGO) build --quiet

$(KSASL_TARGET)/debug/libksasl.so: ksasl-cargo-debug ;

$(KSASL_CPP_SOLINK): | ksasl-cargo-debug
	mkdir -p '$(@D)'
	ln -sfn '$(KSASL_TARGET)/debug/libksasl.so' '$@'

$(KSASL_CPP_EXAMPLES): $(KSASL_CPP_OUT)/%: $(KSASL_ROOT)/examples/cpp/%.cpp $(KSASL_HEADERS) $(KSASL_TARGET)/debug/libksasl.so | $(KSASL_CPP_SOLINK)
	$(KSASL_CXX) $(KSASL_CXXFLAGS) -I'$(KSASL_ROOT)/include' '$<' -o '$@' \
		-L'$(KSASL_TARGET)/debug' -lksasl -Wl,-rpath,'$(KSASL_CPP_OUT)/lib'

cpp-examples: ksasl-version-check $(KSASL_CPP_EXAMPLES)
	@test -n '$(KSASL_CPP_EXAMPLES)' || { echo "no examples in examples/cpp" >&2; exit 1; }
	@set -e; for x in $(KSASL_CPP_EXAMPLES); do \
		echo "== $$x"; \
		"$$x" || { echo "cpp-examples: $$x failed (exit $$?)" >&2; exit 1; }; \
	done

# ksasl.hpp on its own, twice (include guard), first in the translation unit: with the required
# flags, then with stricter warnings that projects commonly turn on, then as C++20.
KSASL_HEADER_CHECK_FLAGS := -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast \
	-Wnon-virtual-dtor -Wzero-as-null-pointer-constant

cpp-header-check:
	mkdir -p '$(KSASL_CPP_OUT)'
	printf '%s\n' '#include "ksasl.hpp"' '#include "ksasl.hpp"' \
		'int main() { return ksasl::version().empty() ? 1 : 0; }' > '$(KSASL_CPP_OUT)/header_check.cpp'
	$(KSASL_CXX) $(KSASL_CXXFLAGS) -I'$(KSASL_ROOT)/include' \
		-c '$(KSASL_CPP_OUT)/header_check.cpp' -o '$(KSASL_CPP_OUT)/header_check.o'
	$(KSASL_CXX) $(KSASL_CXXFLAGS) $(KSASL_HEADER_CHECK_FLAGS) -I'$(KSASL_ROOT)/include' \
		-c '$(KSASL_CPP_OUT)/header_check.cpp' -o '$(KSASL_CPP_OUT)/header_check_strict.o'
	$(KSASL_CXX) $(KSASL_CXXFLAGS) -std=c++20 -I'$(KSASL_ROOT)/include' \
		-c '$(KSASL_CPP_OUT)/header_check.cpp' -o '$(KSASL_CPP_OUT)/header_check_cxx20.o'
	@echo "cpp-header-check: ok"

ifneq ($(KSASL_SAVED_DEFAULT_GOAL),)
.DEFAULT_GOAL := $(KSASL_SAVED_DEFAULT_GOAL)
else ifneq ($(abspath $(firstword $(MAKEFILE_LIST))),$(KSASL_MK))
.DEFAULT_GOAL :=
endif
