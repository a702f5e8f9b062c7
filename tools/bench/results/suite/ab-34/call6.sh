#!/usr/bin/env bash
# session 34, call 6, at 66e2b6b's shim ("head": up to eight threads, half the processors) against the same
# with up to sixteen, all the processors ("all", carried as build/lib-try/libember.so). (1) ember-touch-probe
# (4 GiB): how the host's touches scale with threads, and a kernel's write after. (2) init_phases.py under
# adaptive at a 16 GiB budget: llama 13b and mixtral 8x1.5b, two rounds of a process each in turn. Stops at 330 s.
source tools/bench/device-call.sh c6
stage "touch probe"
timeout 60 build/bin/ember-touch-probe $((4 << 30)) >"$R/touch-probe.json" 2>"$R/touch-probe.err"
echo "rc $?" >>"$R/touch-probe.err"
pack
cp build/lib/libember.so build/lib-head.so
cp build/lib-try/libember.so build/lib-all.so
use() { cp "build/lib-$1.so" build/lib/libember.so; }
one() { # arch size shim round
  local label=$1-$3-$4
  stage "$label"
  use "$3"
  (cd tools/bench && timeout 90 "$run" --driver real --mode adaptive --budget 16G --manage-all 1 --log info -- \
    python3 init_phases.py "$1" "$2" >"$R/$label.json" 2>"$R/$label.err")
  echo "rc $?" >>"$R/$label.err"
  pack
}
for round in 0 1; do
  order=(head all)
  [ $((round % 2)) = 1 ] && order=(all head)
  for s in "${order[@]}"; do [ "$SECONDS" -lt 330 ] && one llama 13b "$s" "$round"; done
  for s in "${order[@]}"; do [ "$SECONDS" -lt 330 ] && one mixtral 8x1.5b "$s" "$round"; done
done
use head
stage done
pack
cat "$R/touch-probe.json" "$R/touch-probe.err"
for f in "$R"/*-*-[0-9].json; do echo "$(basename "$f" .json): $(cat "$f")"; done
cat "$R/progress.log"
