#!/usr/bin/env bash
# capture_rules.sh PROBE SIM RECORDED: ember-capture-probe run on the simulated
# driver (SIM, libember-sim.so, as the probe's libcuda.so.1) must give, case by
# case, the call and capture results RECORDED on a GPU (the JSON lines the
# probe printed there). The sim's capture rules (sim/capture.c) are a model of
# the driver's; this keeps the model honest.
set -euo pipefail
probe=$1 sim=$2 recorded=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$sim" "$dir/libcuda.so.1"
LD_LIBRARY_PATH=$dir timeout 60 "$probe" >"$dir/sim.jsonl"
python3 - "$recorded" "$dir/sim.jsonl" <<'PY'
import json, sys
key = lambda r: (r["call"], r["capture"], r["caller"], r["caller_mode"])
gpu = {key(r): r for r in map(json.loads, open(sys.argv[1]))}
sim = {key(r): r for r in map(json.loads, open(sys.argv[2]))}
if gpu.keys() != sim.keys():
    sys.exit(f"the cases differ: {sorted(set(gpu) ^ set(sim))}")
bad = [(k, (gpu[k]["call_result"], gpu[k]["end_result"]), (sim[k]["call_result"], sim[k]["end_result"]))
       for k in gpu if (gpu[k]["call_result"], gpu[k]["end_result"]) != (sim[k]["call_result"], sim[k]["end_result"])]
for k, g, s in bad:
    print(f"{k}: the GPU gave {g}, the simulated driver {s}")
print(f"{len(gpu) - len(bad)} of {len(gpu)} cases as on the GPU")
sys.exit(1 if bad else 0)
PY
