#!/usr/bin/env bash
# session 36, call 2, at the head (570b8f7's shim): the link's rates measured in the same call as
# llama.cpp's token generation at 1.5x under adaptive, which the records' bounds have taken from ab-31's
# seed probe (51.3 GB/s mapped reads, the fastest any call has measured: others made 49.6-51.2). The
# probe (ember-uvm-bench probe, 4 GiB) runs before, between and after two sets of four llama.cpp
# processes; then hf-llama processes until the call's time is spent.
source tools/bench/device-call.sh c2
probe() {
  stage "probe $1"
  timeout 90 build/bin/ember-uvm-bench probe $((4 << 30)) >"$R/probe-$1.json" 2>"$R/probe-$1.err"
  pack
}
llama() {
  stage "llama adaptive $1"
  out=$R/llama-head-$1; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_TIMEOUT=90 \
    timeout $((530 - SECONDS)) bash tools/bench/suite.sh llama >"$out/suite.log" 2>&1
  pack
}
probe 0
for i in 0 1 2 3; do time_left 80 && llama $i; done
probe 1
for i in 4 5 6 7; do time_left 80 && llama $i; done
probe 2
for i in 0 1 2; do
  time_left 60 || continue
  stage "hf-llama adaptive $i"
  out=$R/hf-head-$i; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-mixtral-*" \
    EMBER_SUITE_TIMEOUT=90 timeout $((530 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
  pack
done
stage done
pack
cat "$R"/probe-*.json
for f in "$R"/*-*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
