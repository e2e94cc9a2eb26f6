#!/usr/bin/env bash
# Runs the C test suite and the Python binding's tests with the MIT GSS-API library hidden
# (bind-mounted over by an empty file in a private mount namespace, as root): libksasl.so and
# the Python extension must load and pass everything that is not GSSAPI, and GSSAPI must fail
# with GSSAPI_UNAVAILABLE. Usage: tests/nokrb5/run.sh C_TEST_BINARY PYTHON
set -euo pipefail
ctest=$1 py=$2
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
' "$ctest" "$py"
