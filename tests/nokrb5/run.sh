#!/usr/bin/env bash
# Runs the C test suite, the Python binding's tests and the Java binding's tests (the jar's
# surefire and failsafe suites, already built) with the MIT GSS-API library hidden
# (bind-mounted over by an empty file in a private mount namespace, as root): libksasl.so, the
# Python extension and the jar must load and pass everything that is not GSSAPI, and GSSAPI
# must fail with GSSAPI_UNAVAILABLE (NoKerberosTest in Java).
# Usage: tests/nokrb5/run.sh C_TEST_BINARY PYTHON [JAVA_PROJECT_DIR [MVN]]
set -euo pipefail
ctest=$1 py=$2 java=${3:-} mvn=${4:-mvn}
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  echo "tests/nokrb5: needs root and unshare(1) to hide the Kerberos libraries" >&2
  exit 1
fi
exec unshare -m bash -euo pipefail -c '
  hidden=0
  for f in /usr/lib/x86_64-linux-gnu/libgssapi_krb5.so* /lib/x86_64-linux-gnu/libgssapi_krb5.so*; do
    [ -e "$f" ] || continue
    mount --bind /dev/null "$f"; hidden=$((hidden+1))
  done
  echo "tests/nokrb5: $hidden library files hidden"
  KSASL_TEST_NO_GSSAPI=1 "$0"
  "$1" -c "
import ksasl
assert not ksasl.gssapi_available()
r = ksasl.MechanismRegistry()
try:
    r.add_gssapi_server(principal=\"kafka/localhost@EXAMPLE.COM\")
    raise SystemExit(\"GSSAPI worked without its library\")
except ksasl.KsaslError as e:
    assert e.name == \"GSSAPI_UNAVAILABLE\", e
print(\"tests/nokrb5: Python: GSSAPI_UNAVAILABLE as expected\")
"
  "$1" -m pytest -q -p no:warnings bindings/python/tests --deselect bindings/python/tests/test_gssapi.py --ignore bindings/python/tests/test_gssapi.py
  if [ -n "$2" ]; then
    log=$(mktemp)
    (cd "$2" && env -u KSASL_KDC_INFO KSASL_TEST_NO_GSSAPI=1 "$3" -o -q -B surefire:test failsafe:integration-test failsafe:verify \
        -Dksasl.test.jvm=-Xcheck:jni) > "$log" 2>&1 || { cat "$log"; rm -f "$log"; exit 1; }
    rm -f "$log"
    grep -q "Tests run: 1, Failures: 0, Errors: 0, Skipped: 0" "$2"/target/surefire-reports/org.ksasl.NoKerberosTest.txt \
      || { echo "tests/nokrb5: NoKerberosTest did not run"; exit 1; }
    cat "$2"/target/surefire-reports/*.txt "$2"/target/failsafe-reports/*.txt | grep "Tests run" \
      | awk -F"[:,]" "{n+=\$2; f+=\$4; e+=\$6; s+=\$8} END {print \"tests/nokrb5: Java: \" n \" run, \" f \" failures, \" e \" errors, \" s \" skipped\"}"
  fi
' "$ctest" "$py" "$java" "$mvn"
