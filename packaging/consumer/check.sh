#!/usr/bin/env bash
# Builds and runs the consumer programs of packaging/consumer against an installed ksasl: with
# pkg-config and with CMake's find_package(ksasl), C and C++, linked to the shared library and
# to the static one. The shared builds must load libksasl.so.<major> from the installation, the
# static ones must not load it at all. Used by `make install-check` and `make dist-check`.
#
#   packaging/consumer/check.sh PREFIX WORKDIR VERSION
#
# PREFIX holds lib/ (libksasl.so.*, libksasl.a, pkgconfig/ksasl.pc, cmake/ksasl/), include/
# and bin/ksasl. WORKDIR is created for the builds. Compilers and tools: KSASL_CC (gcc),
# KSASL_CXX (g++), PKG_CONFIG (pkg-config), CMAKE (cmake).
set -euo pipefail

[ $# = 3 ] || { echo "usage: $0 PREFIX WORKDIR VERSION" >&2; exit 2; }
prefix=$(cd "$1" && pwd); work=$2; version=$3
src=$(cd "$(dirname "$0")" && pwd)
cc=${KSASL_CC:-gcc}; cxx=${KSASL_CXX:-g++}; pkgconfig=${PKG_CONFIG:-pkg-config}; cmake=${CMAKE:-cmake}
lib=$prefix/lib
soname=libksasl.so.${version%%.*}
cflags=(-std=c11 -Wall -Wextra -Werror -pedantic)
cxxflags=(-std=c++17 -Wall -Wextra -Werror -pedantic)
mkdir -p "$work"

fail() { echo "consumer check: $*" >&2; exit 1; }
pc() { PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_LIBDIR="$lib/pkgconfig" "$pkgconfig" "$@"; }

# The installation itself: the soname chain, and the version everywhere.
[ "$(readlink "$lib/$soname")" = "libksasl.so.$version" ] || fail "$lib/$soname does not point at libksasl.so.$version"
[ "$(readlink "$lib/libksasl.so")" = "$soname" ] || fail "$lib/libksasl.so does not point at $soname"
# (Outputs are read whole before grep: with pipefail, `grep -q` leaving early could fail the
# pipeline by SIGPIPE on the writer.)
dynamic=$(readelf -d "$lib/libksasl.so.$version")
grep -q "SONAME.*\[$soname\]" <<<"$dynamic" || fail "libksasl.so.$version has no soname $soname"
[ "$(pc --modversion ksasl)" = "$version" ] || fail "pkg-config says version $(pc --modversion ksasl), not $version"
grep -q "^#define KSASL_VERSION_STRING \"$version\"" "$prefix/include/ksasl.h" || fail "ksasl.h is not version $version"
tool_version=$("$prefix/bin/ksasl" version)
case "$tool_version" in *"$version"*) ;; *) fail "bin/ksasl version says '$tool_version', not $version";; esac
echo "installation: $lib/libksasl.so.$version ($soname), pkg-config $version, ksasl.h $version, bin/ksasl: $tool_version"

# run NAME SHARED|STATIC: runs a consumer, checks where libksasl comes from and the version it prints.
run() {
    local exe=$1 kind=$2 out libs
    if [ "$kind" = shared ]; then
        libs=$(ldd "$exe" || true)
        grep -q "$soname => $lib/$soname" <<<"$libs" || { echo "$libs"; fail "$exe does not load $lib/$soname"; }
    else
        libs=$(ldd "$exe" || true)
        ! grep -q libksasl <<<"$libs" || { echo "$libs"; fail "$exe (static) loads libksasl"; }
    fi
    out=$("$exe") || fail "$exe exited $?: $out"
    case "$out" in "ksasl $version "*) ;; *) fail "$exe printed '$out', not ksasl $version";; esac
    echo "  $(basename "$exe") ($kind): ${out%%$'\n'*}"  # its first line (no pipe: see above)
}

echo "pkg-config: $(pc --cflags --libs ksasl) | static: $(pc --static --libs ksasl)"
static_libs=$(pc --static --libs-only-l ksasl | sed -e 's/-lksasl\b//')
"$cc" "${cflags[@]}" "$src/main.c" -o "$work/c-pkgconfig" $(pc --cflags --libs ksasl) -Wl,-rpath,"$lib"
"$cxx" "${cxxflags[@]}" "$src/main.cpp" -o "$work/cpp-pkgconfig" $(pc --cflags --libs ksasl) -Wl,-rpath,"$lib"
"$cc" "${cflags[@]}" "$src/main.c" -o "$work/c-pkgconfig-static" $(pc --cflags ksasl) \
    -L"$lib" -Wl,-Bstatic -lksasl -Wl,-Bdynamic $static_libs
"$cxx" "${cxxflags[@]}" "$src/main.cpp" -o "$work/cpp-pkgconfig-static" $(pc --cflags ksasl) \
    -L"$lib" -Wl,-Bstatic -lksasl -Wl,-Bdynamic $static_libs
run "$work/c-pkgconfig" shared
run "$work/cpp-pkgconfig" shared
run "$work/c-pkgconfig-static" static
run "$work/cpp-pkgconfig-static" static

echo "CMake: find_package(ksasl) with CMAKE_PREFIX_PATH=$prefix"
"$cmake" -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" > "$work/cmake.log" || { cat "$work/cmake.log"; fail "cmake configure"; }
"$cmake" --build "$work/cmake" > "$work/cmake-build.log" || { cat "$work/cmake-build.log"; fail "cmake build"; }
grep "ksasl $version" "$work/cmake.log" | sed 's/^/  /'
run "$work/cmake/ksasl_consumer" shared
run "$work/cmake/ksasl_consumer_cpp" shared
run "$work/cmake/ksasl_consumer_static" static
run "$work/cmake/ksasl_consumer_cpp_static" static
echo "consumer check: ok ($prefix)"
