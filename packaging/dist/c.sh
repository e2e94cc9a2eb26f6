#!/usr/bin/env bash
# The C/C++ distribution: a relocatable tarball and a Debian package of the same installation
# (mk/install.mk with debug information stripped), and their checks away from the build tree.
#
#   packaging/dist/c.sh build DIST   writes DIST/ksasl-<version>-linux-x86_64.tar.gz and
#                                    DIST/ksasl_<version>_amd64.deb
#   packaging/dist/c.sh check DIST   unpacks the tarball in a temporary prefix and installs the
#                                    .deb with dpkg into a throw-away root, then builds and runs
#                                    packaging/consumer against each (pkg-config and CMake, C and
#                                    C++, shared and static), with no Rust toolchain on PATH
#
# Run from anywhere; CARGO, MAKE, KSASL_CC, KSASL_CXX, PKG_CONFIG and CMAKE are honoured.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(python3 "$root/packaging/version.py")
name=ksasl-$version-linux-x86_64
deb=ksasl_${version}_amd64.deb
[ $# = 2 ] || { echo "usage: $0 build|check DIST" >&2; exit 2; }
mkdir -p "$2"
dist=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# install PREFIX DESTDIR: the stripped installation of mk/install.mk (a release build).
install() {
    "${MAKE:-make}" --no-print-directory -s -C "$root" -f mk/install.mk install KSASL_STRIP=1 \
        CARGO="${CARGO:-cargo}" PREFIX="$1" DESTDIR="$2" > "$tmp/install.log" 2>&1 \
        || { cat "$tmp/install.log"; exit 1; }
}

# The newest glibc symbol version the library and the tool need: the .deb's libc6 dependency.
glibc_needed() {
    objdump -T "$@" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1
}

build() {
    # The tarball: the installation under ksasl-<version>-linux-x86_64/, with README, LICENSE
    # and CHANGELOG; sorted, owned by root and dated by the last commit, so it is reproducible.
    install "$tmp/$name" ""
    cp "$root/README.md" "$root/LICENSE" "$root/CHANGELOG.md" "$tmp/$name/"
    local date
    date=$(git -C "$root" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$date" \
        -C "$tmp" -czf "$dist/$name.tar.gz" "$name"

    # The .deb: the same files under /usr, the licence as Debian's copyright file.
    local pkg=$tmp/deb
    install /usr "$pkg"
    mkdir -p "$pkg/DEBIAN" "$pkg/usr/share/doc/ksasl"
    cp "$root/README.md" "$pkg/usr/share/doc/ksasl/"
    { echo "ksasl $version"; echo "License: Apache-2.0 (the text follows)"; echo; cat "$root/LICENSE"; } \
        > "$pkg/usr/share/doc/ksasl/copyright"
    gzip -9n < "$root/CHANGELOG.md" > "$pkg/usr/share/doc/ksasl/changelog.gz"
    local glibc size
    glibc=$(glibc_needed "$pkg/usr/lib/libksasl.so.$version" "$pkg/usr/bin/ksasl")
    size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
    cat > "$pkg/DEBIAN/control" <<EOF
Package: ksasl
Version: $version
Architecture: amd64
Maintainer: ksasl developers <ksasl@localhost>
Depends: libc6 (>= $glibc), libgcc-s1
Suggests: libgssapi-krb5-2
Section: libdevel
Priority: optional
Installed-Size: $size
Homepage: https://github.com/ksasl/ksasl
Description: SASL authentication and re-authentication for Kafka (C and C++)
 Sans-IO SASL client and server authenticators for Apache Kafka (PLAIN,
 SCRAM-SHA-256/512, OAUTHBEARER, GSSAPI) with KIP-368 re-authentication:
 the shared and static C libraries, ksasl.h and the C++17 wrapper ksasl.hpp,
 pkg-config and CMake files, and the ksasl command-line tool. GSSAPI loads
 the MIT Kerberos library at run time when it is used.
EOF
    (cd "$pkg" && find usr -type f -exec md5sum {} + | sort -k2) > "$pkg/DEBIAN/md5sums"
    dpkg-deb --root-owner-group -Zxz --build "$pkg" "$dist/$deb" > /dev/null
    echo "c: $dist/$name.tar.gz ($(stat -c %s "$dist/$name.tar.gz") bytes)"
    echo "c: $dist/$deb ($(stat -c %s "$dist/$deb") bytes, libc6 >= $glibc)"
}

# A PATH without the Rust toolchain: what the checks below run with.
no_rust_path() {
    local out="" dir
    IFS=: read -ra dirs <<< "$PATH"
    for dir in "${dirs[@]}"; do
        case "$dir" in *cargo*|*rustup*) ;; *) out=${out:+$out:}$dir;; esac
    done
    echo "$out"
}

check() {
    [ -f "$dist/$name.tar.gz" ] && [ -f "$dist/$deb" ] || { echo "c: run '$0 build $dist' first" >&2; exit 1; }
    # The consumer's sources are copied out; everything runs in the temporary directory.
    cp -r "$root/packaging/consumer" "$tmp/consumer"
    local path
    path=$(no_rust_path)
    if PATH=$path command -v cargo > /dev/null || PATH=$path command -v rustc > /dev/null; then
        echo "c: cargo or rustc is still on PATH after removing the toolchain's directories" >&2; exit 1
    fi
    cd "$tmp"

    echo "== the tarball, unpacked in $tmp/unpacked"
    mkdir unpacked
    tar -C unpacked -xzf "$dist/$name.tar.gz"
    local prefix=$tmp/unpacked/$name
    for f in README.md LICENSE CHANGELOG.md bin/ksasl include/ksasl.h include/ksasl.hpp lib/libksasl.a \
        "lib/libksasl.so.$version" lib/pkgconfig/ksasl.pc lib/cmake/ksasl/ksaslConfig.cmake; do
        [ -e "$prefix/$f" ] || { echo "c: the tarball has no $f" >&2; exit 1; }
    done
    PATH=$path bash "$tmp/consumer/check.sh" "$prefix" "$tmp/tarball-build" "$version"

    echo "== the .deb, installed by dpkg into the throw-away root $tmp/root"
    local droot=$tmp/root
    mkdir -p "$droot/var/lib/dpkg/info" "$droot/var/lib/dpkg/updates" "$droot/var/lib/dpkg/triggers"
    : > "$droot/var/lib/dpkg/status"
    # --force-depends: the throw-away root has no libc6 package; the libraries come from the host.
    dpkg --root="$droot" --force-not-root --force-depends --force-script-chrootless \
        --log=/dev/null -i "$dist/$deb" > "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; exit 1; }
    local installed
    installed=$(dpkg-query --admindir="$droot/var/lib/dpkg" -W -f='${Package} ${Version} ${Status}' ksasl)
    [ "$installed" = "ksasl $version install ok installed" ] || { echo "c: dpkg says '$installed'" >&2; exit 1; }
    echo "dpkg: $installed, $(dpkg-query --admindir="$droot/var/lib/dpkg" -L ksasl | grep -c .) paths"
    PATH=$path bash "$tmp/consumer/check.sh" "$droot/usr" "$tmp/deb-build" "$version"
    echo "c: the tarball and the .deb work without Rust ($name.tar.gz $(stat -c %s "$dist/$name.tar.gz") bytes, $deb $(stat -c %s "$dist/$deb") bytes)"
}

case "$1" in
    build) build ;;
    check) check ;;
    *) echo "usage: $0 build|check DIST" >&2; exit 2 ;;
esac
