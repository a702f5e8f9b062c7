#!/usr/bin/env bash
# session 27, call 7 (about a minute): why star's first run at 97/93 waits for its tables. In ab-26's call 1 (H200)
# the fill of the fact columns completed at 2.60 s, the eight queries had been issued by 2.34 s, and the demotion
# that made the tables' room is recorded done only at 5.00 s (25 ms on the GPU): run 1 took 3.0 s against 0.92 at
# 90/85, where the reclamation past the high watermark made the room at 2.87 s. A replay of the same trace makes it
# 0.22 s after the fill (results/sim/replays.jsonl, group first-run). With EMBER_LOG=debug (suite.sh passes it to ember-run) each advice or prefetch that holds its thread for 20 ms or more is
# logged with its size; star at 1.5x under adaptive, at the default (97/93) and at 90/85, a process each in turn, traced.
source tools/bench/device-call.sh c7
for wm in 97 90 97 90; do
  time_left 60 || { stage "star $wm: no time left"; continue; }
  lo=$((wm == 90 ? 85 : 93)); out=$R/wm$wm-$SECONDS
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "star adaptive $wm/$lo, debug log"
  EMBER_HIGH_WATERMARK=$wm EMBER_LOW_WATERMARK=$lo EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_LOG=debug \
    EMBER_SUITE_VARIANTS=adaptive EMBER_SUITE_ONLY=star EMBER_SUITE_TRACE='star-1.5-adaptive' \
    EMBER_SUITE_TIMEOUT=70 timeout 90 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
done
stage done
pack
for d in "$R"/wm*; do
  echo "== $(basename "$d") $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r.get('runs_seconds'))" "$d/suite.jsonl")"
  grep -h 'advice to prefer\|a prefetch to' "$d"/logs/*.log | head -20
done
cat "$R/progress.log"
