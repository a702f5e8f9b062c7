#!/usr/bin/env bash
# Session 45. Pack with EMBER_PACK_TESTS=0; carry build-gpu. ember-capture-probe with its new cases
# (cuMemAllocManaged from a thread beside a capture; the captured stream's own frees of memory
# allocated before it, and an allocation and free inside it), without Ember, then under the head
# (EMBER_MANAGE_ALL=1, adaptive, a 1 GiB budget).
source tools/bench/device-call.sh c42-6
stage "capture probe"
timeout 60 build/bin/ember-capture-probe >"$R/capture-probe.jsonl" 2>"$R/capture-probe.log"
stage "capture probe under ember"
EMBER_MANAGE_ALL=1 timeout 60 "$run" --driver real --mode adaptive --budget 1G --log info -- \
  build/bin/ember-capture-probe >"$R/capture-probe-ember.jsonl" 2>"$R/capture-probe-ember.log"
tail -8 "$R/capture-probe.jsonl" "$R/capture-probe-ember.jsonl"
finish
