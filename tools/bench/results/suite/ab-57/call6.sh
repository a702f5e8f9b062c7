#!/usr/bin/env bash
# Session 61, call 6, at the final head (kept memory tried from up to four other streams' frees).
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"; carry build-gpu.
# 1. the torture's stream-ordered threads beside managed ones (2 30 16 0 4; manage-all, 1 GiB budget,
#    256 MiB kept), and every kind of thread at once (4 25 8 4 4; 64 MiB budget, churning, 64 MiB kept);
# 2. every GPU test at the defaults, in the time left.
source tools/bench/device-call.sh c57-6
out=$R/torture; mkdir -p "$out"
stage "torture async"
timeout 60 "$run" --driver real --mode adaptive --budget 1G --manage-all 1 --keep-freed 256M --log info -- \
  build/bin/ember-torture 2 30 16 0 4 >"$out/async.out" 2>"$out/async.err"
echo "torture async: rc $?; $(tr '\n' ' ' <"$out/async.out") $(grep -v '^ember\[' "$out/async.err" | head -c 400)"
echo "  $(grep -o '[0-9]* stream-ordered allocations were given memory[^;]*' "$out/async.err")"
pack
stage "torture all"
timeout 60 "$run" --driver real --mode adaptive --budget 64M --manage-all 1 --keep-freed 64M --interval-ms 1 \
  --heat-ratio 1 --log info -- build/bin/ember-torture 4 25 8 4 4 >"$out/all.out" 2>"$out/all.err"
echo "torture all: rc $?; $(tr '\n' ' ' <"$out/all.out") $(grep -v '^ember\[' "$out/all.err" | head -c 400)"
pack
time_left 120 && gpu_tests $((call_seconds - SECONDS - 30))
finish
