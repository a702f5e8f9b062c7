#!/usr/bin/env bash
# session 35, call 2, at 650b18d ("head"). (A) madvise(MADV_POPULATE_WRITE) in the host's touches against
# the touches alone (6445d0d, "touch", carried as build/lib-touch.so): init_phases.py, llama 13b past a
# 16 GiB budget under adaptive, four rounds of a process each in turn. (B) The head against try/gap-halves
# rebased on it (331a1b2, "gap", build/lib-gap.so) under adaptive at 1.5x: star, bfs and hf-mixtral, three
# rounds in turn; call 1 ran llama.cpp and hf-llama. The order turns each round.
source tools/bench/device-call.sh c2
cp build/lib/libember.so build/lib-head.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
init() { # shim round
  local label=llama-$1-$2
  stage "init $label"
  use "$1"
  (cd tools/bench && timeout 120 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info -- \
    python3 init_phases.py llama 13b >"$R/init-$label.json" 2>"$R/init-$label.err")
  echo "rc $?" >>"$R/init-$label.err"
  pack
}
for round in 0 1 2 3; do
  order=(head touch)
  [ $((round % 2)) = 1 ] && order=(touch head)
  for s in "${order[@]}"; do [ "$SECONDS" -lt 170 ] && init "$s" "$round"; done
done
for round in 0 1 2; do
  order=(gap head)
  [ $((round % 2)) = 1 ] && order=(head gap)
  for v in "${order[@]}"; do
    use "$v"
    for b in star bfs; do
      time_left 40 || continue
      stage "$b adaptive $v round $round"
      out=$R/$b-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
      EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=$b EMBER_SUITE_TIMEOUT=60 \
        timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
      pack
    done
    time_left 60 || continue
    stage "hf-mixtral adaptive $v round $round"
    out=$R/hf-$v-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_SKIP="hf-llama-*" \
      EMBER_SUITE_TIMEOUT=90 timeout $((530 - SECONDS)) bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
    pack
  done
done
use head
stage done
pack
for f in "$R"/init-*.json; do echo "$(basename "$f" .json): $(cat "$f")"; done | cut -c1-400
for f in "$R"/*-*-*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('bench'), r.get('variant'), r.get('seconds'), r.get('runs_seconds'), r.get('d2h_bytes'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
