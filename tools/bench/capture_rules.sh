#!/usr/bin/env bash
# capture_rules.sh PROBE SIM RECORDED: ember-capture-probe run on the simulated
# driver (SIM, libember-sim.so, as the probe's libcuda.so.1) must give, case by
# case, the results RECORDED on a GPU (the JSON lines the
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
# a case is what it did (every field but its results), its outcome the results
key = lambda r: tuple(sorted((k, v) for k, v in r.items() if not k.endswith("_result")))
outcome = lambda r: tuple(sorted((k, v) for k, v in r.items() if k.endswith("_result")))
gpu = {key(r): r for r in map(json.loads, open(sys.argv[1]))}
sim = {key(r): r for r in map(json.loads, open(sys.argv[2]))}
if gpu.keys() != sim.keys():
    sys.exit(f"the cases differ: {sorted(set(gpu) ^ set(sim))}")
bad = [(k, outcome(gpu[k]), outcome(sim[k])) for k in gpu if outcome(gpu[k]) != outcome(sim[k])]
for k, g, s in bad:
    print(f"{dict(k)}: the GPU gave {dict(g)}, the simulated driver {dict(s)}")
print(f"{len(gpu) - len(bad)} of {len(gpu)} cases as on the GPU")
sys.exit(1 if bad else 0)
PY
