#!/usr/bin/env bash
# Session 46, at d66a0cf. Pack with EMBER_PACK_TESTS=0; carry build-gpu.
# Model initialisation under manage-all at 1.5x of a 16 GiB budget on this card, now: hf-llama 13b and
# hf-mixtral 8x1.5b, resident and adaptive, a process each in turn, two rounds, the order turning
# (the records' load_seconds, the build and draw of the weights). The report's criterion reads the
# H200's 3.07x and 3.78x from older code; this says where the head stands on an H100.
source tools/bench/device-call.sh c43-4
for round in 0 1; do
  for model in llama mixtral; do
    order="resident adaptive"; [ $round = 1 ] && order="adaptive resident"
    for v in $order; do
      time_left 60 || break
      out=$R/hf-$model-$v-$round; stage "hf-$model $v round $round"
      mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
      skip="hf-mixtral-*"; [ $model = mixtral ] && skip="hf-llama-*"
      EMBER_LOG=info EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=$v EMBER_SUITE_SKIP="$skip" \
        EMBER_SUITE_TIMEOUT=90 timeout 120 bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
      gzip -f "$out"/logs/*.log 2>/dev/null
      python3 - "$out/suite.jsonl" <<'PY' | tee -a "$R/init.txt"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(sys.argv[1].split("/")[-2], "load", r.get("load_seconds"), "gen", r.get("seconds"), r.get("error", ""))
PY
      pack
    done
  done
done
finish
