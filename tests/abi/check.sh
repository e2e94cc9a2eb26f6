#!/usr/bin/env bash
# Checks the C ABI's surface: the committed header is what build.rs generates, it compiles as
# strict C11 and C++17, and the shared library exports exactly the committed list of
# ksasl_* symbols (nothing else, in particular no Rust, JNI or Python symbols).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet
if git rev-parse --git-dir >/dev/null 2>&1; then
  if ! git diff --quiet -- include/ksasl.h; then
    echo "include/ksasl.h is stale: build.rs regenerated it; commit the new header" >&2
    git diff --stat -- include/ksasl.h >&2
    exit 1
  fi
fi
mkdir -p target/abi
printf '#include "ksasl.h"\nint main(void) { return ksasl_version() == 0; }\n' > target/abi/header.c
gcc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -c target/abi/header.c -o target/abi/header_c.o
g++ -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude -x c++ -c target/abi/header.c -o target/abi/header_cpp.o
nm -D --defined-only "${KSASL_CARGO_TARGET:-target}/debug/libksasl.so" | awk '{print $3}' | sort > target/abi/exports.txt
if grep -v '^ksasl_' target/abi/exports.txt; then
  echo "the library exports symbols without the ksasl_ prefix (above)" >&2
  exit 1
fi
if ! diff -u tests/abi/exports.txt target/abi/exports.txt; then
  echo "the exported symbols differ from tests/abi/exports.txt (update it deliberately)" >&2
  exit 1
fi
# Every exported function is declared in the header.
missing=0
while read -r sym; do
  grep -q "\b$sym(" include/ksasl.h || { echo "exported but not in the header: $sym" >&2; missing=1; }
done < target/abi/exports.txt
[ "$missing" = 0 ]
echo "abi: $(wc -l < target/abi/exports.txt) exported ksasl_ symbols, header fresh and strict-C11/C++17 clean"
