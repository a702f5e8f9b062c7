#!/usr/bin/env bash
# session 29, call 2, at df189a5 (the exchange of a region read less a cycle for one read more).
# (1) Star at 1.5x under adaptive, EMBER_BATCH 16 (the default) against 64, two rounds of a process each in
# turn, traced: in call 1 the exchange of 5.8 GiB took 1.3 s of the second flight at 128 MiB a worker pass
# (four batches of 16 regions), and that flight took 0.75 s against the third's 0.30. (2) The 1.5x matrix
# under adaptive against the static records of 4b603ab: llama.cpp 13B F16, hf-llama 13b and hf-mixtral 8x1.5b
# (one process each, traced: the tokens' churn must stay under 5% of the weights), then the kernels, three
# processes each (star and bfs ran in call 1), bitonic last as time allows.
source tools/bench/device-call.sh c2
for round in 0 1; do
  for batch in 16 64; do
    stage "star adaptive, EMBER_BATCH=$batch, round $round"
    out=$R/star-batch$batch-$round
    mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_BATCH=$batch EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
      EMBER_SUITE_ONLY=star EMBER_SUITE_TRACE='star-1.5-adaptive' EMBER_SUITE_TIMEOUT=40 \
      timeout 60 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
    pack
  done
done
stage suite
wall=$((440 - SECONDS))
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_TIMEOUT=80 EMBER_SUITE_WALL=$wall EMBER_SUITE_ONLY="kmeans cnn nw radix pathfinder bitonic" \
  EMBER_SUITE_TRACE='llama-cpp-1.5-adaptive hf-mixtral-1.5-adaptive hf-llama-1.5-adaptive' \
  timeout $((wall + 80)) bash tools/bench/suite.sh llama hf kernels >"$R/suite.log" 2>&1
stage done
pack
for f in "$R"/star-batch*/suite.jsonl "$R/suite/suite.jsonl"; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('bytes_demoted'), r.get('error'))
" "$f"
done
cat "$R/progress.log" "$R/suite/progress.log"
