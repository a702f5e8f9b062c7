#!/usr/bin/env bash
# Not run in session 65 or 66: no machine was lent; ready for a later session.
# Session 65, call 2: call 1 cut down to what the session's last device time allows (call 1 never
# started): which training libraries the machine's python has, and the two GPU tests of the tensor
# lists (training's expectation, never yet run on a GPU, and apex's form in a program of our own).
# Pack with EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c61-2
python3 -m pip list 2>/dev/null | grep -i -E "^(torch|apex|deepspeed|transformer.engine|transformer_engine|accelerate|transformers) " \
  | tee "$R/frameworks.txt"
gpu_tests $((call_seconds - SECONDS - 80)) -R 'apex_tensor_lists|torch_train_past_budget'
# the apex-style program traced, so that what its launches were credited can be read against the chunks
out=$R/apex; mkdir -p "$out"; stage "tensor_lists_prog traced"
EMBER_TRACE=$out/trace EMBER_STATS=$out/stats.json timeout 60 "$run" --driver real --mode adaptive --budget 256M \
  --manage-all 1 -- build/bin/tensor_lists_prog >"$out/out.txt" 2>"$out/err.txt"
echo "tensor_lists_prog: rc $? $(tail -n 1 "$out/out.txt"), $(grep -o '"launches_tensor_lists": [0-9]*' "$out/stats.json")"
gzip -f "$out/trace"; pack
finish
