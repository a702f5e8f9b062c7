#!/usr/bin/env bash
# Prepared in session 44, not yet run: whether Ember's worker, advising and prefetching from its own
# thread, breaks a PyTorch CUDA graph capture (tools/bench/capture_probe.py). Plainly, then under
# Ember (adaptive, manage-all, a 2 GiB budget under 3 GiB of tensors touched in turn, so the worker
# moves data between captures), in global and thread-local capture modes. Pack with
# EMBER_PACK_TESTS=0; carry build-gpu. About a minute.
source tools/bench/device-call.sh c41-6
for mode in global thread_local; do
  stage "plain $mode"
  timeout 120 python3 tools/bench/capture_probe.py --mode $mode >"$R/plain-$mode.json" 2>"$R/plain-$mode.log"
  stage "ember $mode"
  EMBER_MANAGE_ALL=1 timeout 120 "$run" --driver real --mode adaptive --budget 2G --log debug \
    --stats "$R/ember-$mode.stats.json" -- python3 tools/bench/capture_probe.py --mode $mode \
    >"$R/ember-$mode.json" 2>"$R/ember-$mode.log"
  gzip -f "$R/ember-$mode.log"
  pack
done
cat "$R"/*.json
finish
