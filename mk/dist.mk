# ksasl: the artifacts users install, and their check away from the build tree (issue 21).
# Included by the top-level Makefile.
#
#   dist        writes to $(DIST) (dist/): the Python wheel (abi3, manylinux) and sdist, the
#               Java jar with its native library, sources and javadoc jars, POM and a file://
#               Maven repository, the C/C++ tarball ksasl-<version>-linux-x86_64.tar.gz and the
#               Debian package, and SHA256SUMS; every version checked against Cargo.toml's
#   dist-check  installs each artifact where no Rust toolchain and no build tree is reachable,
#               and runs it: the wheel in a fresh venv (the binding's tests, the example broker
#               with confluent-kafka), the jar in a fresh Maven project (Kafka's Java client
#               re-authenticating against it), the tarball and the .deb under C and C++
#               consumers (pkg-config and CMake, shared and static)
#
# The scripts are packaging/dist/{c,python,java}.sh (build|check DIST).

DIST ?= $(CURDIR)/dist

.PHONY: dist dist-check

dist: java-native python-binding
	$(PYTHON) packaging/version.py check
	rm -rf '$(DIST)'
	packaging/dist/c.sh build '$(DIST)'
	packaging/dist/python.sh build '$(DIST)'
	packaging/dist/java.sh build '$(DIST)'
	cd '$(DIST)' && sha256sum *.tar.gz *.whl *.deb *.jar *.pom > SHA256SUMS
	@echo "dist: $(DIST)"; cd '$(DIST)' && ls -l *.tar.gz *.whl *.deb *.jar *.pom | awk '{printf "  %10d  %s\n", $$5, $$9}'

dist-check: dist
	packaging/dist/c.sh check '$(DIST)'
	packaging/dist/python.sh check '$(DIST)'
	packaging/dist/java.sh check '$(DIST)'
	@echo "dist-check: every artifact installed and ran without Rust or the build tree"
