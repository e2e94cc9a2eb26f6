#!/usr/bin/env bash
# Runs the ksasl fuzz targets with cargo-fuzz (libFuzzer), each for SECONDS, and prints the
# executions per target. Fails if any target crashes (its input lands in
# fuzz/artifacts/<target>/).
#
#   fuzz/run.sh SECONDS [TARGET...]      # default: every target
#
# The committed corpus fuzz/corpus/<target> is read, never written: new inputs go to
# fuzz/corpus-tmp/<target> (ignored by git). Environment:
#   FUZZ_TOOLCHAIN  cargo toolchain argument (default +nightly)
#   FUZZ_SANITIZER  none (default: safe Rust, several times faster) or address
#   FUZZ_JOBS       build jobs (default 2)
#   FUZZ_ARGS       extra libFuzzer arguments (e.g. "-runs=1000000" or "-jobs=2 -workers=2")
#   FUZZ_STATS      a file to append "target executions seconds exec/s" lines to
set -euo pipefail

cd "$(dirname "$0")"
ALL=(sasl_messages jwt kafka_codec credentials server_driver client_driver config aws_msk_iam)
SECONDS_PER_TARGET=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")
TOOLCHAIN=${FUZZ_TOOLCHAIN:-+nightly}
SANITIZER=${FUZZ_SANITIZER:-none}
JOBS=${FUZZ_JOBS:-2}

if ! cargo "$TOOLCHAIN" fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked -j "$JOBS"
fi

mkdir -p target/fuzz-logs
echo "building the fuzz targets (sanitizer: $SANITIZER)"
CARGO_BUILD_JOBS=$JOBS cargo "$TOOLCHAIN" fuzz build -s "$SANITIZER" >target/fuzz-build.log 2>&1 \
    || { cat target/fuzz-build.log; exit 1; }

for t in "${TARGETS[@]}"; do
    if [ ! -d "corpus/$t" ] || [ -z "$(ls -A "corpus/$t")" ]; then
        echo "writing the seed corpora"
        CARGO_BUILD_JOBS=$JOBS cargo "$TOOLCHAIN" run --quiet --release --example seeds
        break
    fi
done

mkdir -p target/fuzz-logs
failed=()
printf '%-15s %15s %10s %8s\n' target executions exec/s seconds
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus-tmp/$t"
    log="target/fuzz-logs/$t.log"
    start=$(date +%s)
    # shellcheck disable=SC2086
    if cargo "$TOOLCHAIN" fuzz run -s "$SANITIZER" "$t" "corpus-tmp/$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -timeout=30 \
        -max_len=8192 -rss_limit_mb=2048 ${FUZZ_ARGS:-} >"$log" 2>&1; then
        status=ok
    else
        status=CRASH
        failed+=("$t")
    fi
    end=$(date +%s)
    execs=$(grep -ah 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
    rate=$(grep -ah 'stat::average_exec_per_sec' "$log" | awk '{s += $2} END {print s + 0}')
    printf '%-15s %15s %10s %8s %s\n' "$t" "$execs" "$rate" "$((end - start))" \
        "$([ $status = ok ] || echo "CRASH: see $log and artifacts/$t")"
    [ -n "${FUZZ_STATS:-}" ] && echo "$t $execs $((end - start)) $rate" >>"$FUZZ_STATS"
done

if [ ${#failed[@]} -ne 0 ]; then
    for t in "${failed[@]}"; do
        echo "== $t"
        grep -aE 'panicked|assert|SUMMARY|Test unit written' "target/fuzz-logs/$t.log" | head -20
    done
    echo "fuzzing found crashes in: ${failed[*]}"
    exit 1
fi
