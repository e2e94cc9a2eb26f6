#!/usr/bin/env bash
# The Java binding as a Maven artifact, called from the repository root:
#
#   packaging/dist/java.sh build DIST   deploys org.ksasl:ksasl (jar with the native library,
#                                       sources jar, javadoc jar, pom) to the file repository
#                                       DIST/maven and copies the four files to DIST/
#   packaging/dist/java.sh check DIST   builds and runs packaging/java-consumer in a temporary
#                                       directory against DIST/maven only (see check below)
#
# `build` needs bindings/java/target/native/libksasl_jni.so staged (`make java-native`). The
# version is the root Cargo.toml's [package] version; bindings/java/pom.xml must say the same.
# MVN names Maven (default mvn).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MVN=${MVN:-mvn}
GROUP_PATH=org/ksasl/ksasl
REPO_ID=ksasl-dist

die() {
    echo "java.sh: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 build|check DIST" >&2
    exit 2
}

# The root Cargo.toml's [package] version, the single source (packaging/version.py reads it).
VERSION=$(python3 "$ROOT/packaging/version.py")
[ -n "$VERSION" ] || die "no version from packaging/version.py"

# Maven, quiet and niced (2-core machines build other things meanwhile), its output without
# the colour codes Debian's Maven 3.8 writes even to a pipe.
mvn_quiet() {
    nice "$MVN" -q -B -Dstyle.color=never "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
}

size_line() {
    local bytes
    bytes=$(stat -c %s "$1")
    awk -v f="$(basename "$1")" -v b="$bytes" 'BEGIN { printf "  %-28s %10d bytes %9.1f KiB\n", f, b, b / 1024 }'
}

build() {
    local dist=$1
    python3 "$ROOT/packaging/version.py" check > /dev/null || die "the versions disagree (packaging/version.py check)"
    local so=$ROOT/bindings/java/target/native/libksasl_jni.so
    [ -s "$so" ] || die "$so is not staged: run \`make java-native\` first"

    mkdir -p "$dist"
    dist=$(cd "$dist" && pwd)
    # A clean slate for this artifact only (DIST is shared with the other packaging scripts).
    rm -rf "${dist:?}/maven/$GROUP_PATH"
    # Jar entries dated by the last commit (as c.sh dates its tarball): the same tree and
    # native library give the same bytes.
    local stamp
    stamp=$(git -C "$ROOT" log -1 --format=%cI 2>/dev/null || true)
    # deploy without install: the build leaves ~/.m2 alone. It builds in a folder of its own,
    # not bindings/java/target: `make test` runs the broker suite meanwhile, whose JVMs load
    # classes lazily from bindings/java/target's jar, and rewriting that jar under them fails
    # them with NoClassDefFoundError.
    BUILD_DIR=$(mktemp -d)
    trap 'rm -rf "$BUILD_DIR"' EXIT
    (cd "$ROOT/bindings/java" && mvn_quiet -DskipTests -Dmaven.install.skip=true \
        "-Dksasl.build.dir=$BUILD_DIR" \
        ${stamp:+"-Dproject.build.outputTimestamp=$stamp"} \
        "-DaltDeploymentRepository=$REPO_ID::file://$dist/maven" deploy)

    local dir=$dist/maven/$GROUP_PATH/$VERSION f
    for f in "ksasl-$VERSION.jar" "ksasl-$VERSION-sources.jar" "ksasl-$VERSION-javadoc.jar" "ksasl-$VERSION.pom"; do
        [ -s "$dir/$f" ] || die "$dir/$f was not deployed"
        [ -s "$dir/$f.sha1" ] || die "$dir/$f.sha1 was not deployed"
        cp "$dir/$f" "$dist/$f"
    done
    # What a public repository (Maven Central) looks for in the POM, and the jar's manifest.
    python3 - "$dir/ksasl-$VERSION.pom" "$dir/ksasl-$VERSION.jar" "$VERSION" <<'EOF'
import sys
import xml.etree.ElementTree as ET
import zipfile
pom, jar, version = sys.argv[1:]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
root = ET.parse(pom).getroot()
problems = []
for path in ["groupId", "artifactId", "version", "name", "description", "url",
             "licenses/license/name", "licenses/license/url", "developers/developer/name",
             "scm/connection", "scm/developerConnection", "scm/url"]:
    if not (root.findtext("/".join("m:" + p for p in path.split("/")), namespaces=ns) or "").strip():
        problems.append("the POM has no " + path)
with zipfile.ZipFile(jar) as z:
    manifest = dict(l.split(": ", 1) for l in z.read("META-INF/MANIFEST.MF").decode().splitlines() if ": " in l)
    if "org/ksasl/native/linux-x86_64/libksasl_jni.so" not in z.namelist():
        problems.append("the jar holds no org/ksasl/native/linux-x86_64/libksasl_jni.so")
for key in ["Implementation-Title", "Implementation-Vendor"]:
    if not manifest.get(key):
        problems.append("the manifest has no " + key)
if manifest.get("Implementation-Version") != version:
    problems.append("the manifest's Implementation-Version is %r, not %s" % (manifest.get("Implementation-Version"), version))
for p in problems:
    print("java.sh: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
    echo "java: org.ksasl:ksasl:$VERSION deployed to file://$dist/maven"
    for f in "ksasl-$VERSION.jar" "ksasl-$VERSION-sources.jar" "ksasl-$VERSION-javadoc.jar" "ksasl-$VERSION.pom"; do
        size_line "$dist/$f"
    done
}

# Proves the deployed artifacts on a clean project, as a user without this repository would
# see them:
#   - a fresh local repository (TMP/m2) and settings of our own (no ~/.m2/settings.xml, no
#     global mirrors). Third-party artifacts come first from a view of ~/.m2/repository
#     without org/ksasl (symbolic links, read as a file:// repository: fast and offline when
#     the cache is warm; Maven Central only for what it lacks), so org.ksasl:ksasl can only
#     come from DIST/maven. The resolved copy must record ksasl-dist as its origin, match
#     DIST's bytes, and be the jar the JVM loaded the classes from;
#   - examples/java's server sources compiled against the published jar, plus
#     packaging/java-consumer's Main (see there for what it checks);
#   - a cwd outside the repository and a PATH without the Rust toolchain.
check() {
    local dist=$1
    [ -d "$dist" ] || die "$dist does not exist: run \`$0 build $dist\` first"
    dist=$(cd "$dist" && pwd)
    local published=$dist/maven/$GROUP_PATH/$VERSION/ksasl-$VERSION.jar
    [ -s "$published" ] || die "$published is missing: run \`$0 build $dist\` first"

    local started=$SECONDS
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
    case "$TMP/" in "$ROOT"/*) die "the temporary directory $TMP is inside the repository" ;; esac

    # The project: the consumer, plus the one copy of the example server's sources.
    local project=$TMP/project
    mkdir -p "$project/src/main/java"
    cp -R "$ROOT/packaging/java-consumer/." "$project/"
    cp -R "$ROOT/examples/java/src/main/java/." "$project/src/main/java/"

    # The cache view: every group of ~/.m2/repository except org.ksasl (and its subgroups).
    local cache_src=${KSASL_M2_CACHE:-$HOME/.m2/repository} cache=$TMP/cache e
    mkdir -p "$cache/org"
    if [ -d "$cache_src" ]; then
        for e in "$cache_src"/*; do
            if [ -e "$e" ] && [ "$(basename "$e")" != org ]; then ln -s "$e" "$cache/"; fi
        done
        for e in "$cache_src"/org/*; do
            if [ -e "$e" ] && [ "$(basename "$e")" != ksasl ]; then ln -s "$e" "$cache/org/"; fi
        done
    fi
    [ ! -e "$cache/org/ksasl" ] || die "the cache view still holds org/ksasl"

    cat > "$TMP/settings.xml" <<EOF
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">
  <localRepository>$TMP/m2</localRepository>
  <profiles>
    <profile>
      <id>warm-cache</id>
      <repositories>
        <repository>
          <id>warm-cache</id>
          <url>file://$cache</url>
          <releases><enabled>true</enabled><checksumPolicy>ignore</checksumPolicy></releases>
          <snapshots><enabled>false</enabled></snapshots>
        </repository>
      </repositories>
      <pluginRepositories>
        <pluginRepository>
          <id>warm-cache</id>
          <url>file://$cache</url>
          <releases><enabled>true</enabled><checksumPolicy>ignore</checksumPolicy></releases>
          <snapshots><enabled>false</enabled></snapshots>
        </pluginRepository>
      </pluginRepositories>
    </profile>
  </profiles>
  <activeProfiles>
    <activeProfile>warm-cache</activeProfile>
  </activeProfiles>
</settings>
EOF

    # No Rust toolchain on PATH: the jar must not need one.
    local clean_path
    clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vE 'cargo|rustup' | paste -sd: -)
    if PATH=$clean_path command -v cargo >/dev/null 2>&1; then
        die "cargo is still on PATH without its cargo/rustup entries: $(PATH=$clean_path command -v cargo)"
    fi

    cd "$project"
    echo "java check: $project (PATH without cargo/rustup: cargo not found)"
    local t0=$SECONDS
    PATH=$clean_path mvn_quiet -s "$TMP/settings.xml" -gs "$TMP/settings.xml" \
        "-Dmaven.repo.local=$TMP/m2" "-Dksasl.repo=file://$dist/maven" "-Dksasl.version=$VERSION" process-classes
    echo "java check: consumer built in $((SECONDS - t0)) s"

    # Where org.ksasl:ksasl came from.
    local resolved=$TMP/m2/$GROUP_PATH/$VERSION/ksasl-$VERSION.jar
    local origin_file=$TMP/m2/$GROUP_PATH/$VERSION/_remote.repositories origin
    [ -s "$resolved" ] || die "org.ksasl:ksasl:$VERSION was not resolved into $TMP/m2"
    origin=$(sed -n "s/^ksasl-$VERSION\.jar>\(.*\)=\$/\1/p" "$origin_file")
    echo "java check: org.ksasl:ksasl:$VERSION resolved from repository '$origin' into $resolved"
    [ "$origin" = "$REPO_ID" ] || die "the ksasl jar came from '$origin', not from $REPO_ID (file://$dist/maven)"
    cmp -s "$resolved" "$published" || die "the resolved jar differs from $published"
    local classpath
    classpath=$(cat target/classpath.txt)
    case ":$classpath:" in *":$resolved:"*) ;; *) die "the class path does not use $resolved: $classpath" ;; esac
    case ":$classpath:" in
        *":$HOME/.m2/repository/org/ksasl/"* | *":$ROOT/"*)
            die "the class path takes something from ~/.m2/repository/org/ksasl or the build tree: $classpath" ;;
    esac

    t0=$SECONDS
    local out=$TMP/run.log
    PATH=$clean_path timeout 120 java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -cp "target/classes:$classpath" org.ksasl.consumer.Main "$VERSION" 2>&1 | tee "$out" \
        || die "the consumer failed (exit ${PIPESTATUS[0]})"
    echo "java check: consumer ran in $((SECONDS - t0)) s"
    local loaded
    loaded=$(sed -n 's/^ksasl-jar=//p' "$out")
    [ "$loaded" = "$resolved" ] || die "the JVM loaded org.ksasl from '$loaded', not from $resolved"
    case "$loaded" in "$HOME/.m2/repository/org/ksasl/"*) die "the JVM loaded ~/.m2's ksasl jar" ;; esac

    echo "java check: OK in $((SECONDS - started)) s; org.ksasl:ksasl:$VERSION from file://$dist/maven"
    for e in "ksasl-$VERSION.jar" "ksasl-$VERSION-sources.jar" "ksasl-$VERSION-javadoc.jar"; do
        size_line "$dist/maven/$GROUP_PATH/$VERSION/$e"
    done
}

[ $# -eq 2 ] || usage
case "$1" in
    build) build "$2" ;;
    check) check "$2" ;;
    *) usage ;;
esac
