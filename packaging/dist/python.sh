#!/usr/bin/env bash
# The Python distribution: one abi3 wheel (CPython 3.9+, manylinux) and the sdist, built by
# maturin from bindings/python, and their checks away from the build tree. Called from the
# repository root:
#
#   packaging/dist/python.sh build DIST   writes DIST/ksasl-<version>-cp39-abi3-<platform>.whl
#                                         (release, tagged with the lowest manylinux policy its
#                                         symbols allow, confirmed by auditwheel) and
#                                         DIST/ksasl-<version>.tar.gz
#   packaging/dist/python.sh check DIST   installs the wheel alone into a fresh venv with no Rust
#                                         toolchain on PATH and the cwd outside the repository,
#                                         runs the binding's tests and the real-client interop
#                                         test from a copy of them, then builds a wheel with pip
#                                         from the unpacked sdist (this step needs Rust)
#
# maturin and auditwheel live in a tools venv of their own (target/dist-tools, made on first
# use), not in the repository's .venv. The build reuses the release build of
# `make python-binding`: same target directory (<cargo's target directory>/bindings), same
# profile and features, and the same interpreter (pyo3's build script runs again whenever
# PYO3_PYTHON changes, so maturin is pointed at .venv/bin/python when it exists).
#
# The version is the root Cargo.toml's [package] version; bindings/python/Cargo.toml must say
# the same (maturin gives the wheel that crate's version, pyproject.toml declares it dynamic).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CRATE=$ROOT/bindings/python
TOOLS=$ROOT/target/dist-tools
TOOL_REQUIREMENTS=("maturin==1.16.0" "auditwheel==6.8.2")
# Cargo's output directory, as the Makefile has it (mk/target.mk), or as cargo says.
TARGET=${KSASL_CARGO_TARGET:-$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}
export CARGO_TARGET_DIR=$TARGET/bindings

die() {
    echo "python.sh: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 build|check DIST" >&2
    exit 2
}

# Seconds since an earlier `now`, with one decimal.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The interpreter maturin and pip build with: the one `make python-binding` uses, if it exists.
build_python() {
    if [ -x "$ROOT/.venv/bin/python" ]; then
        echo "$ROOT/.venv/bin/python"
    else
        command -v python3
    fi
}

# The tools venv, (re)made when missing or when the pinned versions change.
tools() {
    local stamp=$TOOLS/.requirements
    if [ ! -x "$TOOLS/bin/maturin" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${TOOL_REQUIREMENTS[*]}" ]; then
        echo "python.sh: making the build tools venv $TOOLS (${TOOL_REQUIREMENTS[*]})"
        rm -rf "$TOOLS"
        python3 -m venv "$TOOLS"
        "$TOOLS/bin/python" -m pip install --quiet --disable-pip-version-check "${TOOL_REQUIREMENTS[@]}"
        echo "${TOOL_REQUIREMENTS[*]}" > "$stamp"
    fi
}

# What cargo compiled, from a build log: the proof that a warm build reused its target.
compiled() {
    local crates n
    crates=$(sed -n 's/^ *Compiling \([^ ]*\) .*/\1/p' "$1")
    n=$(printf '%s' "$crates" | grep -c . || true)
    if [ "$n" = 0 ]; then
        echo "cargo compiled nothing: the release build in $CARGO_TARGET_DIR was reused"
    elif [ "$n" -le 5 ]; then
        echo "cargo compiled" $crates "(the rest of $CARGO_TARGET_DIR was reused)"
    else
        echo "cargo compiled $n crates in $CARGO_TARGET_DIR"
    fi
}

[ $# = 2 ] || usage
command=$1
mkdir -p "$2"
dist=$(cd "$2" && pwd)
# The root Cargo.toml's version; bindings/python/Cargo.toml (the wheel's) must agree.
version=$(python3 "$ROOT/packaging/version.py")
[ -n "$version" ] || die "no version from packaging/version.py"
python3 "$ROOT/packaging/version.py" check > /dev/null || die "the versions disagree (packaging/version.py check)"
sdist_name=ksasl-$version.tar.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build() {
    tools
    local py start log=$tmp/maturin.log
    py=$(build_python)
    rm -f "$dist/$sdist_name" "$dist"/ksasl-"$version"-*.whl

    # The wheel. maturin tags it with the lowest manylinux policy the extension's symbol versions
    # allow; --auditwheel check fails instead of grafting if it needs a shared library beyond
    # that policy (it should need none: libgssapi_krb5 is loaded at run time, not linked).
    start=$(now)
    (cd "$CRATE" && nice "$TOOLS/bin/maturin" build --release --interpreter "$py" \
        --auditwheel check --out "$tmp/wheel") > "$log" 2>&1 || { cat "$log"; die "maturin build failed"; }
    echo "python.sh: wheel built in $(since "$start") s"
    compiled "$log"
    local wheels=("$tmp"/wheel/*.whl)
    [ ${#wheels[@]} = 1 ] || die "expected one wheel, maturin made: ${wheels[*]}"
    local wheel=${wheels[0]} name
    name=$(basename "$wheel")
    case $name in
        ksasl-"$version"-cp39-abi3-manylinux*.whl) ;;
        *) die "$name: not an abi3 (cp39-abi3) manylinux wheel of version $version" ;;
    esac

    # auditwheel's own reading must agree with the tag: the policy it finds among the wheel's
    # platform tags, no external libraries beyond the policy, nothing that rules out manylinux.
    "$TOOLS/bin/auditwheel" show "$wheel" | sed 's/^/  auditwheel: /'
    "$TOOLS/bin/auditwheel" show --json "$wheel" > "$tmp/audit.json"
    "$TOOLS/bin/python" - "$tmp/audit.json" "$name" <<'EOF' || die "auditwheel: $name is not consistent with its tag"
import json, sys
audit = json.load(open(sys.argv[1]))
name = sys.argv[2]
platforms = name[: -len(".whl")].split("-")[-1].split(".")
problems = []
if audit["overall_tag"] not in platforms:
    problems.append(f"auditwheel's policy {audit['overall_tag']} is not among the tags {platforms}")
if audit["external_libs"]:
    problems.append(f"external shared libraries: {sorted(audit['external_libs'])}")
for flag in ("pyfpe", "ucs2", "unsupported_isa"):
    if audit[flag]:
        problems.append(f"auditwheel flags {flag}")
for p in problems:
    print(f"python.sh: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
    cp "$wheel" "$dist/"
    local tag=${name#ksasl-"$version"-}
    echo "python.sh: $dist/$name (tag ${tag%.whl}, $(stat -c %s "$wheel") bytes, $(du -h "$wheel" | cut -f1))"

    # The sdist: both crates as `cargo package --list` gives them (the root crate is a path
    # dependency), minus what pyproject.toml's [tool.maturin] exclude leaves out.
    (cd "$CRATE" && "$TOOLS/bin/maturin" sdist --out "$tmp/sdist") > "$log" 2>&1 \
        || { cat "$log"; die "maturin sdist failed"; }
    [ -f "$tmp/sdist/$sdist_name" ] || die "maturin sdist made $(ls "$tmp/sdist"), not $sdist_name"
    cp "$tmp/sdist/$sdist_name" "$dist/"
    echo "python.sh: $dist/$sdist_name ($(stat -c %s "$dist/$sdist_name") bytes, $(tar -tzf "$dist/$sdist_name" | wc -l) files)"
}

# PATH without the Rust toolchain (entries naming cargo or rustup).
path_without_rust() {
    local entry out=
    local IFS=:
    for entry in $PATH; do
        case $entry in *cargo* | *rustup*) continue ;; esac
        out=${out:+$out:}$entry
    done
    echo "$out"
}

# The pins of tests/interop/requirements.txt for the named packages.
requirements() {
    local name line
    for name in "$@"; do
        line=$(grep -iE "^$name[[:space:]]*(==|>=|~=|$)" "$ROOT/tests/interop/requirements.txt") \
            || die "tests/interop/requirements.txt has no $name"
        echo "$line"
    done
}

# The binding's tests and the real-client interop test, copied with what they read into a tree
# that mirrors the repository's layout (so their relative paths hold): the shared vectors, the
# KDC and Keycloak harnesses (tests/kerberos, tests/oidc, tests/common) and the example broker.
copy_tests() {
    local tree=$1 f
    for f in bindings/python/tests/*.py tests/vectors/*.json tests/common/*.py tests/kerberos/kdc.py \
        tests/oidc/keycloak.py tests/interop/test_real_clients.py examples/python/kafka_server.py; do
        mkdir -p "$tree/$(dirname "$f")"
        cp -p "$ROOT/$f" "$tree/$f"
    done
}

check() {
    local wheels=("$dist"/ksasl-"$version"-cp39-abi3-*.whl)
    [ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || die "expected one ksasl-$version-cp39-abi3 wheel in $dist (run build first)"
    local wheel=${wheels[0]} sdist=$dist/$sdist_name
    [ -f "$sdist" ] || die "no $sdist (run build first)"
    local tree=$tmp/tree venv=$tmp/venv reqs
    copy_tests "$tree"
    reqs=$(requirements pytest confluent-kafka kafka-python)

    # The wheel, where only the wheel can provide `import ksasl`: no Rust toolchain on PATH, no
    # PYTHONPATH, the cwd and every test file outside the repository.
    (
        PATH=$(path_without_rust)
        export PATH
        unset PYTHONPATH PYTHONHOME VIRTUAL_ENV
        cd "$tmp"
        ! command -v cargo > /dev/null || die "cargo is still on PATH: $(command -v cargo)"
        ! command -v rustc > /dev/null || die "rustc is still on PATH: $(command -v rustc)"
        python3 -m venv "$venv"
        local py=$venv/bin/python start
        start=$(now)
        "$py" -m pip install --quiet --disable-pip-version-check --no-index --no-deps "$wheel"
        local took
        took=$(since "$start")
        echo "python.sh: pip install $(basename "$wheel"): $took s"
        # A bound no copy-and-unzip comes near, only a build from source would.
        awk -v t="$took" 'BEGIN { exit !(t < 60) }' || die "installing the wheel took $took s"
        "$py" - "$version" "$venv" <<'EOF'
import os, sys
import ksasl, ksasl._ksasl
version, venv = sys.argv[1], os.path.realpath(sys.argv[2])
assert ksasl.__version__ == version, f"ksasl.__version__ is {ksasl.__version__}, Cargo.toml says {version}"
for module in (ksasl, ksasl._ksasl):
    where = os.path.realpath(module.__file__)
    assert where.startswith(venv + os.sep), f"{module.__name__} comes from {where}, not the venv"
print(f"python.sh: ksasl {ksasl.__version__} from {os.path.dirname(os.path.realpath(ksasl._ksasl.__file__))}"
      f", GSSAPI library {'found' if ksasl.gssapi_available() else 'absent'}")
EOF
        start=$(now)
        # shellcheck disable=SC2086 # one requirement a word
        "$py" -m pip install --quiet --disable-pip-version-check $reqs
        echo "python.sh: test dependencies installed in $(since "$start") s"

        cd "$tree"
        start=$(now)
        PYTHONMALLOC=debug "$py" -X dev -m pytest -q -p no:cacheprovider bindings/python/tests
        echo "python.sh: the binding's tests passed in $(since "$start") s"
        start=$(now)
        "$py" -m pytest -q -p no:cacheprovider tests/interop/test_real_clients.py
        echo "python.sh: the example broker with confluent-kafka and kafka-python passed in $(since "$start") s"
    )

    # The sdist builds a wheel on its own: unpacked outside the repository, its sources must be
    # the tree's, and pip builds it (maturin, Rust) into a wheel with the same files and metadata
    # as the one above.
    #
    # In a target directory of its own ($TARGET/dist-sdist, kept between runs: the dependencies
    # compile once, later runs compile ksasl and ksasl-python only). Not in $CARGO_TARGET_DIR:
    # cargo names a path dependency by its place relative to the workspace, which the sdist keeps,
    # so there the unpacked crates would be the very units of the tree's build; their artifacts
    # would replace the tree's, and the next `make python-binding` or wheel, fresh by mtime, would
    # ship code compiled from this temporary copy. The unpacked files get the current time
    # (tar -m): the archive dates them all alike, in the past, and cargo would otherwise take its
    # previous build of these crates as fresh.
    local src=$tmp/sdist/ksasl-$version
    mkdir -p "$tmp/sdist"
    tar -xzmf "$sdist" -C "$tmp/sdist"
    local pair
    for pair in src:src bindings/python/src:bindings/python/src bindings/python/python/ksasl:python/ksasl; do
        diff -r -x __pycache__ "$ROOT/${pair%%:*}" "$src/${pair#*:}" > "$tmp/diff" \
            || { cat "$tmp/diff"; die "$sdist_name: ${pair#*:} differs from the tree's ${pair%%:*}"; }
    done
    for f in pyproject.toml PKG-INFO LICENSE Cargo.toml build.rs bindings/python/Cargo.toml bindings/python/Cargo.lock; do
        [ -f "$src/$f" ] || die "$sdist_name has no $f"
    done
    local py start log=$tmp/pip-wheel.log
    py=$(build_python)
    start=$(now)
    (cd "$tmp" && CARGO_TARGET_DIR=$TARGET/dist-sdist nice "$py" -m pip wheel --verbose --disable-pip-version-check --no-deps \
        --wheel-dir "$tmp/from-sdist" "$src") > "$log" 2>&1 || { cat "$log"; die "pip could not build $sdist_name"; }
    echo "python.sh: pip built a wheel from $sdist_name in $(since "$start") s"
    CARGO_TARGET_DIR=$TARGET/dist-sdist compiled "$log"
    local built=("$tmp"/from-sdist/ksasl-"$version"-cp39-abi3-*.whl)
    [ -f "${built[0]}" ] || die "pip made no ksasl-$version-cp39-abi3 wheel from $sdist_name"
    "$py" - "$wheel" "${built[0]}" <<'EOF'
import sys, zipfile
def contents(path):
    with zipfile.ZipFile(path) as z:
        names = sorted(n for n in z.namelist() if not n.endswith("/RECORD"))
        meta = [n for n in names if n.endswith(".dist-info/METADATA")]
        return names, z.read(meta[0]) if len(meta) == 1 else None
dist, built = contents(sys.argv[1]), contents(sys.argv[2])
assert dist[0] == built[0], f"files differ: {sorted(set(dist[0]) ^ set(built[0]))}"
assert dist[1] is not None and dist[1] == built[1], "METADATA differs between the dist wheel and the sdist's"
print(f"python.sh: the sdist's wheel has the dist wheel's {len(dist[0])} files and metadata")
EOF
}

case $command in
    build) build ;;
    check) check ;;
    *) usage ;;
esac
