#!/usr/bin/env bash
# Measure real programs under mapped, static and adaptive, each run recorded
# with EMBER_TRACE, for ember-sim's validation (ember-sim --trace, then
# tools/bench/sim_validate.py). One JSON record per workload and variant in
# $EMBER_RESULTS/measured.jsonl; the traces beside it, gzipped.
#   validate.sh [hf-generate] [torch-decode] [reread] [llama-cpp]
# Its settings are environment variables, each once in settings.sh with its
# default (EMBER_BENCH_BUDGET, EMBER_VALIDATE_VARIANTS, and EMBER_LLAMA_BENCH
# with EMBER_GGUF for llama-cpp).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../setup.sh"
source "$here/settings.sh"
bench_settings_apply
results=${EMBER_RESULTS:-$here/results/validation}
mkdir -p "$results/traces"
budget=$EMBER_BENCH_BUDGET
G=$((1 << 30))
variants=$EMBER_VALIDATE_VARIANTS

# One run of a program under a variant: its own JSON on stdout becomes the record's "program" field.
measure() {
  local workload=$1 variant=$2; shift 2
  local trace="$results/traces/$workload-$variant.trace" stats; stats=$(mktemp /tmp/ember-validate.XXXXXX.json)
  local t0 t1 out
  t0=$(date +%s.%N)
  out=$("$EMBER_BUILD/bin/ember-run" --driver real --mode "$variant" --budget "$budget" --stats "$stats" \
	--trace "$trace" --log info "$@" 2>"$results/traces/$workload-$variant.log")
  local rc=$?
  t1=$(date +%s.%N)
  echo "$out" >>"$results/traces/$workload-$variant.log"
  python3 - "$workload" "$variant" "$budget" "$stats" "$rc" "$t0" "$t1" "$out" <<'PY' >>"$results/measured.jsonl"
import json, sys
workload, variant, budget, stats_path, rc, t0, t1, out = sys.argv[1:]
rec = {"workload": workload, "variant": variant, "budget": budget, "exit": int(rc),
       "wall_seconds": round(float(t1) - float(t0), 3)}
prog = None
for line in out.splitlines()[::-1]:
    line = line.strip()
    if line.startswith("{"):
        try:
            prog = json.loads(line)
            break
        except ValueError:
            pass
if prog is None:
    # llama-bench prints a markdown table: take tokens per second from its tg row
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[-3].startswith("tg"):
            tps = float(cells[-2].split()[0])
            tokens = int(cells[-3][2:])
            prog = {"bench": "llama-cpp", "tokens": tokens, "tokens_per_second": tps, "seconds": tokens / tps}
rec["program"] = prog
if prog and "seconds" in prog:
    rec["measured_seconds"] = prog["seconds"]
try:
    st = json.load(open(stats_path))
    devs = st.get("devices", [])
    rec["bytes_promoted"] = sum(d.get("bytes_promoted", 0) for d in devs)
    rec["bytes_demoted"] = sum(d.get("bytes_demoted", 0) for d in devs)
    rec["uvm_events"] = st.get("uvm_events")
except (OSError, ValueError):
    rec["stats"] = "missing"
print(json.dumps(rec))
PY
  rm -f "$stats"
  gzip -f "$trace" 2>/dev/null
  tail -n 1 "$results/measured.jsonl"
}

for workload in "$@"; do
  for v in $variants; do
    case $workload in
      hf-generate) measure hf-generate "$v" --manage-all 1 -- python3 "$here/hf_generate.py" llama 13b 8 1 ;;
      torch-decode) measure torch-decode "$v" --manage-all 1 -- python3 "$here/torch_decode.py" $((24 * G)) 8 1 ;;
      reread) measure reread "$v" -- "$EMBER_BUILD/bin/ember-uvm-bench" reread $((24 * G)) 20 1 ;;
      llama-cpp)
        [ -x "$EMBER_LLAMA_BENCH" ] && [ -s "$EMBER_GGUF" ] || { echo "llama-cpp: no llama-bench or model: not run" >&2; continue; }
        # no warm-up, one repetition: the timed run is the trace's only generation, from its first launch
        GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 measure llama-cpp "$v" -- "$EMBER_LLAMA_BENCH" -m "$EMBER_GGUF" -p 0 -n 8 -r 1 \
          --no-warmup -ngl 99 ;;
      *) echo "validate.sh: unknown workload $workload" >&2; exit 2 ;;
    esac
  done
done
