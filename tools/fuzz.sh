#!/usr/bin/env bash
# Build the libFuzzer targets with clang in build-fuzz/ and run each for a while.
#   tools/fuzz.sh [SECONDS per target, default 20]
# The seeds in tests/fuzz/corpus/<target> are read; what the fuzzer finds
# goes to a temporary corpus, so the repository's stays as committed. A crash
# leaves its input in build-fuzz/crashes/ and fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
build=${EMBER_FUZZ_BUILD:-$root/build-fuzz}
command -v clang >/dev/null || { echo "fuzz: clang is needed (apt-get install clang)" >&2; exit 1; }
echo "fuzz: building the targets in $build"
CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_FUZZ=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_config fuzz_uvm_records fuzz_trace fuzz_launch_scan fuzz_counters \
  fuzz_kernel_types >/dev/null
mkdir -p "$build/crashes"
failed=0 passed=0
for t in config uvm_records trace launch_scan counters kernel_types; do
  work=$(mktemp -d)
  echo "fuzz: $t for ${seconds}s"
  # an input that takes over 10 s is a hang, and fails the run like a crash
  if "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
       -artifact_prefix="$build/crashes/$t-" "$work" "$root/tests/fuzz/corpus/$t" >"$build/fuzz-$t.log" 2>&1; then
    passed=$((passed + 1))
    grep -E "stat::number_of_executed_units|cov:" "$build/fuzz-$t.log" | tail -2 | sed "s/^/fuzz: $t: /"
  else
    failed=$((failed + 1))
    tail -30 "$build/fuzz-$t.log"
  fi
  rm -rf "$work"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
