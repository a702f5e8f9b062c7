#!/usr/bin/env bash
# Adaptive's CPU on the development machine (2 vCPUs, no GPU), builds side by side:
#   run.sh SIM_BEFORE_9561a5f SIM_BEFORE_2d31d73 SIM_NOW LIB_3cf1177 LIB_NOW
# replays of the recorded hf-llama and llama.cpp traces (ember-sim, user+system seconds, three runs each),
# and the launch hook (ember-callbench --launch, the simulated driver) of 3cf1177 against now.
set -euo pipefail
cd "$(dirname "$0")/../../../../.."
out=tools/bench/results/history/adaptive-cpu
sims=("b8be7de=$1" "a2314a6=$2" "now=$3")
: >"$out/replay-cpu.jsonl"
for t in hf-llama-1.5-static llama-cpp-1.5-adaptive; do
  for budget in 64G 16G; do
    for s in "${sims[@]}" "static=$3"; do
      name=${s%%=*} bin=${s#*=} variant=adaptive
      [ "$name" = static ] && variant=static
      for run in 1 2 3; do
        /usr/bin/time -f '%U %S' -o /tmp/cpu.$$ "$bin" --trace tools/bench/results/suite/diag/$t.trace.gz \
          --budget $budget --variant $variant --json >/tmp/out.$$ 2>/dev/null
        read -r u s </tmp/cpu.$$
        python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(json.dumps({'bench': 'replay-cpu', 'trace': sys.argv[2], 'budget': sys.argv[3], 'build': sys.argv[4], 'variant': sys.argv[5], 'run': int(sys.argv[6]), 'cpu_seconds': round(float(sys.argv[7]) + float(sys.argv[8]), 3), 'sim_seconds': r['sim_seconds'], 'bytes_promoted': r['bytes_promoted'], 'bytes_demoted': r['bytes_demoted']}))" \
          /tmp/out.$$ "$t" "$budget" "$name" "$variant" "$run" "$u" "$s" >>"$out/replay-cpu.jsonl"
      done
    done
  done
done
: >"$out/launch-hook.jsonl"
for lib in "3cf1177=$4" "now=$5"; do
  for mode in static adaptive; do
    EMBER_MODE=$mode EMBER_BUDGET=1G build/bin/ember-callbench --launch "$PWD/build/lib/libember-sim.so" "${lib#*=}" \
      "${lib%%=*}-$mode" 2>/dev/null >>"$out/launch-hook.jsonl"
  done
done
rm -f /tmp/cpu.$$ /tmp/out.$$
