#!/usr/bin/env bash
# Session 50, call 4 (call 2 again, the pool fixed as for call 3): where hf-llama 13b's build waits (call 1: EMBER_POPULATE_ASYNC=1 left the build's
# host time where it was, 1.11-1.20 s against 1.11-1.55, resident's 0.12-0.17). init_phases.py under
# EMBER_LOG=debug, whose "converting ... took" lines time each conversion of 5 ms or more step by step
# (the driver's allocation, the advice, the placement on the GPU, the host's touches): the touches
# before each allocation returns, in the background (EMBER_POPULATE_ASYNC=1), and none
# (EMBER_POPULATE_HOST=0), a process each, adaptive at a 16 GiB budget with manage-all, then static.
# Pack with EMBER_PACK_TESTS=0; carry build-gpu.
source tools/bench/device-call.sh c46-4
init() { # label mode [ember-run options]
  local label=$1 mode=$2; shift 2
  stage "init $label"
  (cd tools/bench && timeout 120 "$run" --driver real --mode "$mode" --budget 16G --manage-all 1 --log debug --log-time 1 \
    "$@" --stats "$R/init-$label.stats.json" -- python3 init_phases.py llama 13b >"$R/init-$label.json" 2>"$R/init-$label.err")
  echo "rc $?" >>"$R/init-$label.err"
  pack
}
init touch1 adaptive
init async1 adaptive --populate-async 1
init touch0 adaptive --populate-host 0
init static1 static
stage done
gzip -f "$R"/init-*.err
pack
for f in "$R"/init-*[0-9].json; do echo "$(basename "$f" .json): $(cat "$f")"; done | cut -c1-400
for f in "$R"/init-*.err.gz; do
  zcat "$f" | python3 -c "
import re, sys
n, tot, steps = 0, 0.0, [0.0] * 4
for l in sys.stdin:
    m = re.search(r'took ([\d.]+) ms: ([\d.]+) allocating, ([\d.]+) advising, ([\d.]+) placing, ([\d.]+) touching', l)
    if m:
        v = [float(x) for x in m.groups()]
        n += 1; tot += v[0]; steps = [a + b for a, b in zip(steps, v[1:])]
print(sys.argv[1].split('/')[-1], n, 'slow conversions,', round(tot / 1e3, 3), 's:', [round(s / 1e3, 3) for s in steps],
      '(allocating, advising, placing, touching)')
" "$f"
done
grep -h "rc [1-9]" <(zcat "$R"/init-*.err.gz)
cat "$R/progress.log"
