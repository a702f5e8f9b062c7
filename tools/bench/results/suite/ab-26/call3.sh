#!/usr/bin/env bash
# session 26, call 3: (1) Ember's share of a launch at 0.5x, with more than one process a variant:
# op_profile.py (ab-24/src) over hf-mixtral 8x1b-12, without Ember, off, static and adaptive, two rounds of a
# process each in turn, each figure read against its own process's aten::mul. (2) hf-mixtral at 1.5x under
# adaptive with EMBER_POPULATE_HOST 0 and 1, two rounds of a process each in turn (suite.sh hf, one record
# each): whether its first tokens are slower with the host's touches, and its loading time either way.
source tools/bench/device-call.sh c3
prof() { (cd tools/bench && timeout 70 "$@" python3 results/suite/ab-24/src/op_profile.py mixtral 8x1b-12 8); }
for round in 0 1; do
  order="none off static adaptive"
  [ $round = 1 ] && order="adaptive static off none"
  for v in $order; do
    time_left 300 || { stage "profile $v round $round: no time left"; continue; }
    stage "profile $v round $round"
    f=$R/prof-$v-$round
    case $v in
      none) prof env >"$f.json" 2>"$f.log" ;;
      off) prof "$run" --driver real --mode off -- >"$f.json" 2>"$f.log" ;;
      *) prof "$run" --driver real --mode "$v" --manage-all 1 --budget 16G --stats "$f.stats.json" -- >"$f.json" 2>"$f.log" ;;
    esac
    pack
  done
done
python3 - "$R" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "prof-*.json"))):
    if path.endswith(".stats.json"):
        continue
    try:
        ops = {o["name"]: o for o in json.load(open(path))["ops"]}
    except Exception as e:
        print(os.path.basename(path), "failed", e)
        continue
    per = lambda name: ops[name]["self_cpu_us"] / ops[name]["count"] if name in ops else float("nan")
    print(os.path.basename(path), "cudaLaunchKernel us", round(per("cudaLaunchKernel"), 2), "aten::mul us",
          round(per("aten::mul"), 2), "ratio", round(per("cudaLaunchKernel") / per("aten::mul"), 3))
PY
for round in 0 1; do
  for pop in 0 1; do
    [ $round = 1 ] && pop=$((1 - pop))
    time_left 70 || { stage "hf-mixtral populate $pop round $round: no time left"; continue; }
    stage "hf-mixtral 1.5x adaptive populate $pop round $round"
    out=$R/pop$pop-$round; mkdir -p "$out" && cp "$R"/suite/*probe.json "$out/"
    EMBER_POPULATE_HOST=$pop EMBER_RESULTS=$out EMBER_SUITE_SCALES=1.5 EMBER_SUITE_VARIANTS=adaptive \
      EMBER_SUITE_SKIP='hf-llama-*' EMBER_SUITE_TIMEOUT=80 timeout 100 bash tools/bench/suite.sh hf >"$out/suite.log" 2>&1
    pack
  done
done
stage done
pack
for f in "$R"/pop*/suite.jsonl; do
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(sys.argv[1].split('/')[-2], r.get('variant'), r.get('runs_seconds'), r.get('load_seconds'), r.get('error'))
" "$f"
done
cat "$R/progress.log"
