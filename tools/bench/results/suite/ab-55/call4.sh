#!/usr/bin/env bash
# Session 59, call 4: call 3 cut to the device time left (about 120 s after a start). At the head: the GPU
# tests of JAX (whose pool maps VMM memory, split past the budget) and the C runtime programs
# (runtime_*), then the unload lines of the GPU tests' PyTorch and JAX programs under manage-all at
# EMBER_LOG=debug. Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c55-4
gpu_tests 80 -R "jax|runtime"
mkdir -p "$R/unloads"
for prog in torch jax; do
  out=$R/unloads/$prog; stage "unloads: $prog"
  timeout 45 "$run" --driver real --log debug --manage-all 1 -- python3 tests/gpu/${prog}_prog.py >"$out.out" 2>"$out.err"
  echo "rc $?" >>"$out.err"
  echo "$prog: $(tail -n 1 "$out.err"), $(grep -c 'cuModuleUnload:' "$out.err") module unloads ($(grep 'cuModuleUnload:' "$out.err" | grep -o '[0-9]* kernels' | awk '{s+=$1} END {print s+0}') kernels forgotten), $(grep -c 'cuLibraryUnload:' "$out.err") library unloads"
  gzip -f "$out.err"
  pack
done
finish
