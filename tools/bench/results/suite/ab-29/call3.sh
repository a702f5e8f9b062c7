#!/usr/bin/env bash
# session 29, call 3: how many regions a worker pass may exchange (EMBER_EXCHANGE, new: 16 by default) at 1.5x
# under adaptive, 16 against 64, a process each in turn: star (call 2: EMBER_BATCH=64, which raised both caps,
# took the exchanging flight to 0.58-0.61 s from 0.75-0.97, the next at 0.30 either way), then llama.cpp 13B F16,
# hf-mixtral 8x1.5b and hf-llama 13b, whose exchanges are smaller (replayed: the cap moves them by -2 to +6%).
source tools/bench/device-call.sh c3
ab() { # ab WHAT ROUNDS: suite.sh WHAT at 1.5x under adaptive, EMBER_EXCHANGE 16 and 64 in turn
  local what=$1 rounds=$2 round x out
  for round in $(seq 0 $((rounds - 1))); do
    for x in 16 64; do
      time_left 40 || return 0
      stage "$what EMBER_EXCHANGE=$x round $round"
      out=$R/$what-x$x-$round
      mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
      [ -e "$keep" ] && ln -f "$keep" "$model" # suite.sh removes the model after llama.cpp's runs
      EMBER_EXCHANGE=$x EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star \
        EMBER_SUITE_TIMEOUT=60 timeout 90 bash tools/bench/suite.sh "$what" >"$out/suite.log" 2>&1
      pack
    done
  done
}
model=${TMPDIR:-/tmp}/ember-suite-13b.gguf keep=${TMPDIR:-/tmp}/keep-13b.gguf
stage "pathfinder static and adaptive, 3 processes each"
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="static adaptive" EMBER_SUITE_PROCESSES=3 \
  EMBER_SUITE_ONLY=pathfinder EMBER_SUITE_TIMEOUT=40 timeout 90 bash tools/bench/suite.sh kernels >"$R/suite-pathfinder.log" 2>&1
pack
ab kernels 2
stage "writing the 13B model"
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" "$model" 13b >"$R/gguf.log" 2>&1 && ln -f "$model" "$keep"
ab llama 2
ab hf 1
stage done
pack
for f in "$R"/suite/suite.jsonl "$R"/*-x*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('scale') in (1.5, None): print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('runs_seconds'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
