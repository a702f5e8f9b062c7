#!/usr/bin/env bash
# Session 37, call 2, at main's head (5f6379b): llama.cpp 13B F16 at 1.5x of a 16 GiB budget through
# the harness, for the records: resident, static and adaptive in rounds of a process each in turn, the
# order turning each round (EMBER_LLAMA_ROUNDS_BIG=7), then llama.cpp's own -ngl peer. Call 1 ran the
# head's adaptive at 1.537-1.639 s per 8 tokens by llama-bench directly (median 1.583, six processes),
# against 570b8f7's 1.646-1.661 (1.653). The link's rate is probed before and after.
source tools/bench/device-call.sh c2
probe() {
  stage "probe $1"
  timeout 90 build/bin/ember-uvm-bench probe $((4 << 30)) >"$R/probe-$1.json" 2>"$R/probe-$1.err"
  pack
}
probe 0
stage "llama rounds"
out=$R/llama-head; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS="resident static adaptive llama-ngl" EMBER_LLAMA_ROUNDS_BIG=7 \
  EMBER_SUITE_TIMEOUT=90 timeout $((520 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
pack
probe 1
stage done
pack
cat "$R"/probe-*.json
records
cat "$out/progress.log" "$R/progress.log"
