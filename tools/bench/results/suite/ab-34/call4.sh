#!/usr/bin/env bash
# session 34, call 4: the host's touches a region at a time, from 8 MiB up (touch_threads.h), against the
# head (d071fb6, carried as build/lib-try/libember.so, "parent": one thread below 64 MiB, 32 MiB chunks).
# Call 3 found hf-llama 13b's build past a 16 GiB budget spent in cuMemAlloc: each mapped 50 MiB weight
# 24 ms on one thread, each 136 MiB one 29 ms. init_phases.py under adaptive: llama 13b, four rounds of a
# process each in turn, the order turning each round; then mixtral 8x1.5b, two rounds. Stops at 400 s.
source tools/bench/device-call.sh c4
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-parent.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
one() { # arch size shim round
  local label=$1-$3-$4
  stage "$label"
  use "$3"
  (cd tools/bench && timeout 120 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info -- \
    python3 init_phases.py "$1" "$2" >"$R/$label.json" 2>"$R/$label.err")
  echo "rc $?" >>"$R/$label.err"
  pack
}
for round in 0 1 2 3; do
  order=(head parent)
  [ $((round % 2)) = 1 ] && order=(parent head)
  for s in "${order[@]}"; do [ "$SECONDS" -lt 400 ] && one llama 13b "$s" "$round"; done
done
for round in 0 1; do
  order=(parent head)
  [ $((round % 2)) = 1 ] && order=(head parent)
  for s in "${order[@]}"; do [ "$SECONDS" -lt 400 ] && one mixtral 8x1.5b "$s" "$round"; done
done
use head
stage done
pack
for f in "$R"/*.json; do echo "$(basename "$f" .json): $(cat "$f")"; done
grep -H "host's touches\|at exit: peak" "$R"/*.err | sed 's|.*/||' | cut -c1-220
cat "$R/progress.log"
