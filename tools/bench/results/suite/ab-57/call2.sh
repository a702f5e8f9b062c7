#!/usr/bin/env bash
# Session 61, call 2, at the head: cuMemGetAddressRange answered for memory made whole in host memory,
# and the dma-buf refusal's warning.
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"; carry build-gpu.
# 1. the torture with threads of the virtual memory API, 4 + 4 threads: without Ember (whether the
#    driver's own free memory comes back), then under Ember (manage-all, 64 MiB budget), twice;
# 2. ipc_probe.py under manage-all: one warning each for the IPC and the dma-buf refusals;
# 3. on an H200 (the matrix's card) only, token generation and the model's build at 1.5x;
# 4. every GPU test at the defaults, in the time left.
source tools/bench/device-call.sh c57-2
out=$R/torture; mkdir -p "$out"
stage "torture without Ember: 4 managed + 4 VMM threads, 20 s"
timeout 60 build/bin/ember-torture 4 20 4 4 >"$out/plain.out" 2>"$out/plain.err"
echo "torture without Ember: rc $?; $(tr '\n' ' ' <"$out/plain.out") $(head -c 600 "$out/plain.err")"
for k in 1 2; do
  stage "torture under Ember $k: 4 + 4 threads, 30 s, manage-all, 64 MiB"
  timeout 90 "$run" --driver real --mode adaptive --budget 64M --manage-all 1 --log warn -- \
    build/bin/ember-torture 4 30 4 4 >"$out/ember-$k.out" 2>"$out/ember-$k.err"
  echo "torture under Ember $k: rc $?; $(tr '\n' ' ' <"$out/ember-$k.out") $(head -c 600 "$out/ember-$k.err")"
  pack
done
out=$R/ipc; mkdir -p "$out"; stage "ipc and dma-buf under manage-all"
timeout 60 "$run" --driver real --manage-all 1 -- python3 tools/bench/ipc_probe.py >"$out/ember.out" 2>"$out/ember.err"
echo "under manage-all: $(cat "$out/ember.out"); $(grep -c 'cuIpcGetMemHandle:' "$out/ember.err") IPC and $(grep -c 'cuMemGetHandleForAddressRange:' "$out/ember.err") dma-buf warning(s)"
pack
if grep -q H200 "$R/gpu.txt"; then
  EMBER_CALL_SECONDS=$((call_seconds - 120)) call_seconds=$((call_seconds - 120)) hf_cells "resident static adaptive"
fi
time_left 120 && gpu_tests $((call_seconds - SECONDS - 30))
finish
