#!/usr/bin/env bash
# session 28, call 9 (about two minutes): bitonic at 1.5x under static took 24.8 s in call 8 (97/93, one run) against
# 14.8 s at 90/85 in an earlier call (c0915ad), with 15.52 GiB resident and nothing else moved (14.40 at 90/85): less
# of the array mapped, yet slower. Whether the watermarks did it or the call's machine: static at 97/93 and 90/85,
# a process each in turn, twice, one run each (EMBER_SUITE_MAX_SECONDS), with the host's NUMA layout and the GPU's
# affinity beside them.
source tools/bench/device-call.sh c9
(numactl -H; nvidia-smi topo -m; lscpu | grep -i 'numa\|model name') >"$R/topo.txt" 2>&1
for wm in 97 90 90 97; do
  time_left 40 || { stage "bitonic $wm: no time left"; continue; }
  lo=$((wm == 90 ? 85 : 93)); out=$R/wm$wm-$SECONDS
  mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
  stage "bitonic static $wm/$lo"
  EMBER_HIGH_WATERMARK=$wm EMBER_LOW_WATERMARK=$lo EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_MAX_SECONDS=1 \
    EMBER_SUITE_VARIANTS=static EMBER_SUITE_ONLY=bitonic EMBER_SUITE_TIMEOUT=45 \
    timeout 60 bash tools/bench/suite.sh kernels >"$out/suite.log" 2>&1
  pack
done
stage done
pack
for d in "$R"/wm*; do
  echo "== $(basename "$d") $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r.get('runs_seconds'))" "$d/suite.jsonl" 2>&1)"
done
cat "$R/progress.log"
