#!/usr/bin/env bash
# Session 61, call 5, at the head: every kind of torture thread at once under several settings.
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"; carry build-gpu.
# ember-torture 4 25 8 4 4 (4 managed, 4 VMM, 4 stream-ordered threads, arrays to 8 MiB) under manage-all
# with the policy forced to churn (1 ms intervals, a heat ratio of 1), 64 MiB kept, in turn:
# adaptive at 64 MiB; static at 64 MiB; adaptive at 256 MiB; adaptive at 64 MiB with EMBER_SPLIT_VMM=0
# (VMM allocations past the budget whole in host memory); adaptive at 64 MiB with EMBER_POPULATE_ASYNC=0.
source tools/bench/device-call.sh c57-5
out=$R/torture; mkdir -p "$out"
tort() { # WHICH MODE BUDGET [VAR=VALUE...]
  local which=$1 mode=$2 budget=$3; shift 3
  stage "torture $which"
  env "$@" timeout 60 "$run" --driver real --mode "$mode" --budget "$budget" --manage-all 1 --keep-freed 64M \
    --interval-ms 1 --heat-ratio 1 --log info -- build/bin/ember-torture 4 25 8 4 4 >"$out/$which.out" 2>"$out/$which.err"
  echo "torture $which: rc $?; $(tr '\n' ' ' <"$out/$which.out") $(grep -v '^ember\[' "$out/$which.err" | head -c 400)"
  echo "  $(grep -E 'promotions|given memory the program' "$out/$which.err" | sed 's/^ember\[[0-9]*\] info: //' | tr '\n' ';')"
  pack
}
tort adaptive-64M adaptive 64M
tort static-64M static 64M
tort adaptive-256M adaptive 256M
tort adaptive-64M-nosplit adaptive 64M EMBER_SPLIT_VMM=0
tort adaptive-64M-syncpopulate adaptive 64M EMBER_POPULATE_ASYNC=0
finish
