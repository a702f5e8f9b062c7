#!/usr/bin/env bash
# session 31, call 1, at the head (dd917bb's policy; only the probes changed since). (1) The sparse probe with its
# new case, a copy from one mapped allocation to another in 128-byte and 64 KiB pieces: what the link gives
# reads and writes at once, which the bounds of the wavefront, the sorts and k-means have taken to be each
# direction's own rate in parallel (never measured). (2) The demote probe's two cases of session 30 (random
# lookups with atomics; the legacy default stream): does a demotion on Ember's stream wait for them? (3) The
# kernels at 1.5x under adaptive, three processes each, at the head: the margin (3ab2f81) and the victim order
# (430268f) were measured on star alone. (4) hf-llama and hf-mixtral at 1.5x under adaptive, one process each.
source tools/bench/device-call.sh c1
stage "sparse probe"
timeout 120 build/bin/ember-sparse-probe $((4 << 30)) >"$R/sparse-probe.json" 2>"$R/sparse-probe.err"
echo "rc $?" >>"$R/sparse-probe.err"
stage "demote probe"
timeout 60 build/bin/ember-demote-probe $((2 << 30)) >"$R/demote-probe.json" 2>"$R/demote-probe.err"
echo "rc $?" >>"$R/demote-probe.err"
pack
stage kernels
wall=$((420 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_TIMEOUT=60 EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="star nw cnn radix pathfinder bfs kmeans" \
  timeout $((wall + 70)) bash tools/bench/suite.sh kernels hf >"$R/suite.log" 2>&1
stage done
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('first_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$R/suite/suite.jsonl"
cat "$R/sparse-probe.err" "$R/demote-probe.json" "$R/demote-probe.err" "$R/progress.log" "$R/suite/progress.log"
