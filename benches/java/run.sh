#!/usr/bin/env bash
# Builds and runs the JMH benchmarks of the Java binding, then prints a Markdown table.
#
#   benches/java/run.sh                 # the whole suite (about 4 minutes on 2 cores)
#   benches/java/run.sh 'PerCall.gate'  # a subset: any JMH arguments (regexps, -p size=64, ...)
#   KSASL_BENCH_RUST=1 benches/java/run.sh   # also the Rust gate and SCRAM server login first
#   benches/java/run.sh gssapi          # the GSSAPI logins (Gssapi.*) against a throw-away KDC
#   KSASL_BENCH_RUST=1 benches/java/run.sh gssapi   # ... and the Rust GSSAPI bench, same KDC
#
# Needs org.ksasl:ksasl (the version of benches/java/pom.xml) in the local Maven repository (the Makefile's java install
# target), Maven, a JDK 17 and, for the empty-JNI floor benchmark, gcc. The GSSAPI mode also
# needs the MIT KDC tools (tests/kerberos/kdc.py installs them as root when missing).
set -euo pipefail
cd "$(dirname "$0")"

# GSSAPI mode: MIT Kerberos (in ksasl's native library) reads KRB5_CONFIG, KRB5CCNAME and
# KRB5RCACHEDIR from the environment, which a JVM cannot set for itself, so the script runs
# itself again under tests/kerberos/kdc.py --exec (one-hour tickets, so no ticket expires
# during a run). Other arguments go to JMH as usual; without any, all of Gssapi runs. Outside
# this mode the Gssapi benchmarks are left out unless a KDC is already there (KSASL_KDC_INFO).
gssapi=0
if [ "${1:-}" = gssapi ]; then
    shift
    if [ -z "${KSASL_KDC_INFO:-}" ]; then
        exec python3 ../../tests/kerberos/kdc.py --max-life 1h --exec -- "$PWD/run.sh" gssapi "$@"
    fi
    gssapi=1
    [ $# -gt 0 ] || set -- Gssapi
fi

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(java -version 2>&1 | head -1)"
mvn -q -B package

# The empty JNI function (floor of a JNI call); skipped if there is no C compiler.
jnifloor="$PWD/target/libjnifloor.so"
extra=()
java_home="$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")"
if command -v gcc >/dev/null && gcc -O2 -shared -fPIC -I"$java_home/include" -I"$java_home/include/linux" \
        -o "$jnifloor" src/main/c/jnifloor.c; then
    extra+=(-jvmArgsAppend "-Dksasl.bench.jnifloor=$jnifloor")
else
    echo "== no gcc: skipping the JNI floor benchmarks"
    extra+=(-e 'gate4_jniEmptyC|jniBox')
fi
if [ -n "${KSASL_KDC_INFO:-}" ]; then
    # The JDK's Kerberos reads the KDC's krb5.conf (kdc.py's java_options).
    krb5_conf="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["krb5_conf"])' "$KSASL_KDC_INFO")"
    extra+=(-jvmArgsAppend "-Djava.security.krb5.conf=$krb5_conf")
else
    extra+=(-e 'Gssapi')
fi

# Other builds on the machine distort the figures: wait (up to 5 minutes) for the 1-minute
# load average to fall under KSASL_BENCH_MAX_LOAD (default 1.5), then run anyway.
max_load="${KSASL_BENCH_MAX_LOAD:-1.5}"
for _ in $(seq 60); do
    awk -v max="$max_load" '{ exit !($1 > max) }' /proc/loadavg || break
    echo "== load $(cut -d' ' -f1 /proc/loadavg) > $max_load: waiting"
    sleep 5
done
echo "== load before the run:$(uptime | sed 's/.*load average//')"

# With KSASL_BENCH_RUST=1, the Rust figures to compare with, in the same session: the gate and
# the SCRAM server login (criterion, output kept out of the shared target/criterion). The Rust
# benches need the core only (no C ABI); each runs on its own, so one that does not build does
# not hide the other.
rust_bench() {
    (cd ../.. && CRITERION_HOME=/tmp/ksasl-java-bench-criterion \
        cargo bench --no-default-features --bench "$1" -- --noplot "$2") 2>&1 \
        | grep -E '^(kafka|SCRAM|gssapi)|time:|^error' | tee -a target/rust.log || true
}
if [ "${KSASL_BENCH_RUST:-0}" = 1 ]; then
    : > target/rust.log
    if [ "$gssapi" = 1 ]; then
        rust_bench gssapi gssapi/
    else
        rust_bench kafka 'kafka/gate$'
        rust_bench scram server_login
    fi
fi

# The iteration settings are the classes' annotations: 1 fork, 5 x 1 s measurement, 3 x 1 s
# warmup (5 x 1 s for Scram, whose Kafka side warms up slowly); -prof gc adds the allocation
# per operation.
java -jar target/benchmarks.jar -prof gc \
    -rf csv -rff target/results.csv "${extra[@]}" "$@" | tee target/jmh.log

echo "== load after the run:$(uptime | sed 's/.*load average//')"
java -cp target/benchmarks.jar org.ksasl.bench.Table target/results.csv | tee target/results.md
