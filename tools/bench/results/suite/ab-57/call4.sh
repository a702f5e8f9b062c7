#!/usr/bin/env bash
# Session 61, call 4, at the head: the torture's stream-ordered threads on the real driver.
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"
# EMBER_PACK_LIBS="mut=REV", REV a throwaway commit (6ca4b09, never on main, since deleted): the head
# with reused() in shim/abi/hooks_stream_ordered.c testing `if (0)` in place of
# `if (!same && EMBER_REAL(cuEventQuery)(e.freed) != CUDA_SUCCESS)`, so that kept memory goes to
# another stream without waiting for its free's event; carry build-gpu.
# 1. ember-torture 2 30 16 0 4 (2 managed, 4 stream-ordered threads, arrays to 16 MiB) without Ember;
# 2. the same for 30 s under Ember (manage-all, 1 GiB budget, 256 MiB kept), the head's library;
# 3. the same under the mutated library: the torture should see wrong outputs;
# 4. on an H200 (the matrix's card) only, token generation and the model's build at 1.5x.
source tools/bench/device-call.sh c57-4
out=$R/torture; mkdir -p "$out"
tort() { # WHICH SECONDS [EMBER...]
  local which=$1 limit=$2; shift 2
  stage "torture $which"
  timeout "$limit" "$@" build/bin/ember-torture 2 30 16 0 4 >"$out/$which.out" 2>"$out/$which.err"
  echo "torture $which: rc $?; $(tr '\n' ' ' <"$out/$which.out") $(grep -v '^ember\[' "$out/$which.err" | head -c 400)"
  echo "  $(grep -o '[0-9]* stream-ordered allocations were given memory[^;]*' "$out/$which.err")"
  pack
}
ember=("$run" --driver real --mode adaptive --budget 1G --manage-all 1 --keep-freed 256M --log info --)
tort plain 60
tort head 90 "${ember[@]}"
use mut
tort mutated 90 "${ember[@]}"
use head
if grep -q H200 "$R/gpu.txt"; then
  hf_cells "resident static adaptive"
fi
finish
