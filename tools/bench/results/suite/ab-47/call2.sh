#!/usr/bin/env bash
# Session 51, call 2. Pack with the tests (EMBER_PACK_TESTS unset); carry build-gpu.
# Call 1's runtime_small_budget and runtime_adaptive still warned after the reset: the runtime_prog
# binaries ask cuGetProcAddress for "cuDevicePrimaryCtxReset" and "cuDevicePrimaryCtxRelease" (their
# strings), and the first forms were not hooked. Now each form is. 1. The runtime GPU tests again;
# 2. runtime_prog under a 64 MiB budget with manage-all at EMBER_LOG=debug, its teardown lines;
# 3. on an H200 only, call 1's hf cells.
source tools/bench/device-call.sh c47-2
stage "gpu tests"
(cd build && EMBER_GPU_TIMEOUT=60 timeout 200 ctest -L gpu -R "runtime|torch_manage_all" --output-on-failure >"$R/gpu-tests.log" 2>&1)
grep -E "Test +#|tests passed|FAIL|warned" "$R/gpu-tests.log" | head -30
stage "runtime_prog at debug"
EMBER_MANAGE_ALL=1 timeout 60 "$run" --driver real --mode static --budget 64M --log debug -- build/bin/runtime_prog \
  >"$R/runtime-debug.out" 2>"$R/runtime-debug.err"; echo "rc $?" >>"$R/runtime-debug.out"
grep -E "torn down|is reset|forgets|cannot track|warn|failed" "$R/runtime-debug.err" | head -20
tail -2 "$R/runtime-debug.out"
pack
if grep -q H200 "$R/gpu.txt"; then
  sed -n '/^if grep -q H200/,/^else$/p' tools/bench/results/suite/ab-47/call1.sh | sed '1d;$d' >"$R/hf.sh"
  source "$R/hf.sh"
fi
finish
