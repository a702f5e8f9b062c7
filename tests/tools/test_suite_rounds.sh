#!/usr/bin/env bash
# suite.sh's rounds without a GPU: stand-ins for nvidia-smi, llama-bench,
# ember-suite and hf_generate.py's measurement print made-up records; each
# variant's record must come from every round's process (a process per
# variant in turn), the resident one alone asked for resident placement, and
# a failed round must fail its record.
#   test_suite_rounds.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
build=$(cd "$1" && pwd)
bench=$(cd "$(dirname "$0")/../../tools/bench" && pwd)
scratch dir
mkdir -p "$dir/path" "$dir/build/bin"
printf '#!/bin/sh\necho "Stand-in GPU"\n' >"$dir/path/nvidia-smi"
# llama-bench: one line, its seconds from a counter so that each process differs
cat >"$dir/path/llama-bench" <<'SH'
#!/bin/sh
n=$(cat "$STAND_IN/llama-count" 2>/dev/null || echo 0); echo $((n + 1)) >"$STAND_IN/llama-count"
echo "{\"model_size\": 8000000000, \"n_gen\": 2, \"n_gpu_layers\": 99, \"samples_ns\": [$((40000000 + n * 1000000))]}"
SH
# ember-suite: lists one workload; "resident" as its fourth argument is echoed back; bfs exits 1 in its 3rd process
cat >"$dir/build/bin/ember-suite" <<'SH'
#!/bin/sh
[ "$1" = list ] && { echo "bfs stand-in"; exit 0; }
n=$(cat "$STAND_IN/suite-count" 2>/dev/null || echo 0); echo $((n + 1)) >"$STAND_IN/suite-count"
echo "{\"bench\": \"$1\", \"working_set_bytes\": $2, \"seconds\": 0.$((n + 1)), \"first_seconds\": 0.9, \"runs_seconds\": [0.9, 0.$((n + 1))], \"verified\": true, \"placement\": \"${4:-ember}\"}"
[ "$n" != 2 ]
SH
chmod +x "$dir/path/"* "$dir/build/bin/ember-suite"
ln -s "$build/bin/ember-run" "$dir/build/bin/ember-run"
ln -s "$build/lib" "$dir/build/lib"
export PATH="$dir/path:$PATH" STAND_IN=$dir EMBER_PREBUILT=1 EMBER_BUILD=$dir/build EMBER_BENCH_QUICK=1
export EMBER_SUITE_SCALES=0.5 EMBER_LLAMA_BENCH=$dir/path/llama-bench EMBER_GGUF_PY=$dir TMPDIR=$dir
# the model is written only when missing (quick mode's is ember-suite-tiny.gguf), and no 1.5x one is wanted
echo x >"$dir/ember-suite-tiny.gguf"
EMBER_RESULTS=$dir/llama EMBER_LLAMA_ROUNDS=2 bash "$bench/suite.sh" llama >/dev/null 2>&1 ||
  { echo "suite.sh llama failed"; cat "$dir/llama/logs/"* 2>/dev/null | tail; exit 1; }
[ ! -e "$dir/ember-suite-tiny.gguf" ] || { echo "suite.sh llama left its model behind"; exit 1; }
# at 1.5x: EMBER_LLAMA_ROUNDS_BIG rounds of the variants asked for, then llama.cpp's own partial offload once;
# EMBER_LLAMA_KEEP_MODELS keeps the model for the next
echo x >"$dir/ember-suite-tiny.gguf"
EMBER_RESULTS=$dir/llama-big EMBER_SUITE_SCALES=1.5 EMBER_LLAMA_ROUNDS_BIG=2 EMBER_SUITE_VARIANTS="static adaptive llama-ngl" \
  EMBER_LLAMA_KEEP_MODELS=1 bash "$bench/suite.sh" llama >/dev/null 2>&1 || { echo "suite.sh llama at 1.5x failed"; exit 1; }
[ -s "$dir/ember-suite-tiny.gguf" ] || { echo "EMBER_LLAMA_KEEP_MODELS=1 did not keep the model"; exit 1; }
EMBER_RESULTS=$dir/kernels EMBER_SUITE_PROCESSES=3 EMBER_SUITE_VARIANTS="resident static adaptive" \
  bash "$bench/suite.sh" kernels >/dev/null 2>&1 || { echo "suite.sh kernels failed"; exit 1; }
# token generation at 0.5x: a copy of the harness beside a stand-in for hf_generate.measure
mkdir -p "$dir/copy/bench"
cp "$bench/../setup.sh" "$dir/copy/"
cp "$bench/suite.sh" "$bench/settings.sh" "$bench/suite_record.py" "$bench/hf_rounds.py" "$bench/ember_hooks.py" \
  "$dir/copy/bench/"
mkdir -p "$dir/shim/config" # suite_record.py's bound reads the high watermark's default there
cp "$bench/../../shim/config/config.def" "$dir/shim/config/"
cat >"$dir/copy/bench/hf_generate.py" <<'PY'
import os
def measure(arch, size, new_tokens, runs):
    slow = 1 + os.getpid() % 3  # each child's CPU speed, in its probe and its generation alike
    return {"bench": "hf-generate", "arch": arch, "size": size, "new_tokens": new_tokens, "seconds": 0.1 * slow,
            "load_seconds": 0.5, "run_seconds": [0.1 * slow] * runs, "working_set_bytes": 8000000000,
            "expert_bytes": 0, "run_cpu_probe_seconds": [0.004 * slow] * runs}
PY
EMBER_RESULTS=$dir/hf EMBER_HF_ROUNDS=2 EMBER_HF_PROCESSES=3 EMBER_SUITE_VARIANTS="resident off adaptive" \
  bash "$dir/copy/bench/suite.sh" hf >/dev/null 2>&1 || { echo "suite.sh hf failed"; cat "$dir/hf/logs/"* | tail; exit 1; }
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
llama = {r["variant"]: r for r in map(json.loads, open(d + "/llama/suite.jsonl"))}
assert set(llama) == {"resident", "off", "static", "adaptive", "mapped"}, llama.keys()
seen = sorted(s for r in llama.values() for s in r["runs_seconds"])
assert all(r["processes"] == 2 and "error" not in r for r in llama.values()), llama
assert seen == [0.04 + i * 0.001 for i in range(10)] or len(set(seen)) == 10, seen  # each process once
order = [l.split()[3] for l in open(d + "/llama/progress.log") if "round" in l]
assert order[:5] == ["resident", "off", "static", "adaptive", "mapped"] and order[5:] == ["off", "static", "adaptive", "mapped", "resident"], order
big = {r["variant"]: r for r in map(json.loads, open(d + "/llama-big/suite.jsonl"))}
assert set(big) == {"static", "adaptive"} | {v for v in big if v.startswith("ngl-")} and len(big) == 3, big.keys()
assert big["static"]["processes"] == 2 and big["adaptive"]["processes"] == 2 and big["static"]["scale"] == 1.5, big
k = {r["variant"]: r for r in map(json.loads, open(d + "/kernels/suite.jsonl")) if r["scale"] == 0.5}
assert k["resident"]["placement"] == "resident" and k["static"]["placement"] == "ember", k
assert k["resident"]["processes"] == 3 and len(k["adaptive"]["runs_seconds"]) == 3, k
failed = [v for v, r in k.items() if "error" in r]
assert len(failed) == 1 and k[failed[0]]["error"] == "exit status 1", k  # the third process overall
hf = [r for r in map(json.loads, open(d + "/hf/suite.jsonl"))]
assert {r["bench"] for r in hf} == {"hf-llama", "hf-mixtral"} and {r["variant"] for r in hf} == {"resident", "off", "adaptive"}, hf
assert all(r["processes"] == 6 and r["scale"] == 0.5 and "error" not in r for r in hf), hf  # 2 rounds x 3 children
# each process's probe beside its seconds, in the same order: their ratio takes its CPU's speed out
assert all(len(r["runs_cpu_probe_seconds"]) == 6 and all(abs(s / p - 25) < 1e-9 for s, p in
           zip(r["runs_seconds"], r["runs_cpu_probe_seconds"])) for r in hf), hf
print("rounds: ok")
PY
