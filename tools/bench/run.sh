#!/usr/bin/env bash
# Benchmarks: build, run, write JSON records to tools/bench/results/.
#   run.sh callbench     ns per call, directly and through Ember, on the
#                        simulated driver and, where there is one, the real one
#   run.sh uvm           the placement benchmarks on a GPU (reread, random,
#                        torch-decode) at 0.5x and 1.5x of a budget, for the
#                        variants off, mapped and static; then report.py
#                        writes the table and the plot
#   run.sh adaptive      phase-shift, moving-window (drift 0-100%) and
#                        torch-decode for the adaptive variant against static,
#                        mapped and a per-phase oracle; records in adaptive.jsonl
# Its settings are environment variables, each once in settings.sh with its
# default (EMBER_BENCH_BUDGET, EMBER_BENCH_QUICK, EMBER_BENCH_UVM_EVENTS, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../setup.sh"
source "$here/settings.sh"
bench_settings_apply
results=${EMBER_RESULTS:-$here/results}
mkdir -p "$results"

gpu_name() {
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true
}

callbench() {
  local bench="$EMBER_BUILD/bin/ember-callbench" shim="$EMBER_BUILD/lib/libember.so"
  local out="$results/callbench.json" cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  : >"$out"
  "$bench" "$EMBER_BUILD/lib/libember-sim.so" "$shim" "simulated" |
    sed "s|}\$|, \"cpu\": \"$cpu\", \"gpu\": \"none\"}|" >>"$out"
  local real=""
  for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/lib; do
    [ -e "$d/libcuda.so.1" ] && { real=$d/libcuda.so.1; break; }
  done
  if [ -n "$real" ] && [ -n "$(gpu_name)" ]; then
    "$bench" "$real" "$shim" "real" |
      sed "s|}\$|, \"cpu\": \"$cpu\", \"gpu\": \"$(gpu_name)\"}|" >>"$out"
  else
    echo "callbench: no real driver or GPU here; only the simulated driver was measured" >&2
  fi
  python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'driver':10} {'call':40} {'direct ns':>10} {'ember ns':>10} {'added':>8}")
for r in rows:
    if r["variant"] != "direct":
        continue
    e = next(x for x in rows if x["variant"] == "ember" and x["call"] == r["call"] and x["driver"] == r["driver"])
    print(f"{r['driver']:10} {r['call']:40} {r['ns_per_call']:10.2f} {e['ns_per_call']:10.2f} {e['ns_per_call']-r['ns_per_call']:8.2f}")
PY
  echo "wrote $out"
}

# One record: run a workload under a variant and append its JSON, with the
# fields every record carries, to $results/uvm.jsonl.
uvm_record() {
  local bench=$1 variant=$2 ws=$3; shift 3
  local jsonl=${EMBER_JSONL:-$results/uvm.jsonl} # empty in the table: the results folder is this script's
  local stats; stats=$(mktemp /tmp/ember-bench-stats.XXXXXX.json)
  local env=(env)
  case $variant in
    off) ;;
    mapped|static|adaptive)
      env=("$EMBER_BUILD/bin/ember-run" --driver real --mode "$variant" --budget "$budget"
           --stats "$stats" --log info --uvm-events "$EMBER_BENCH_UVM_EVENTS")
      [ "$bench" = torch-decode ] && env+=(--manage-all 1)
      env+=(--) ;;
  esac
  local out
  # one log per run: the workload's own arguments (a drift, say) name it too
  local log; log="$results/uvm-$bench-$variant-$ws-$(echo "${@:3}" | tr -c 'A-Za-z0-9.\n' '_' | cut -c1-40).log"
  if ! out=$("${env[@]}" "$@" 2>"$log"); then
    echo "uvm: $bench $variant $ws failed; see $log" >&2
    printf '{"bench": "%s", "variant": "%s", "working_set_bytes": %s, "error": "run failed"}\n' \
      "$bench" "$variant" "$ws" >>"$jsonl"
    return 0
  fi
  python3 - "$out" "$stats" "$bench" "$variant" "$budget_bytes" "$gpu" "$results/probe.json" \
    >>"$jsonl" <<'PY'
import json, os, sys
rec = json.loads(sys.argv[1].strip().splitlines()[-1])
stats_path, bench, variant, budget, gpu, probe_path = sys.argv[2:8]
rec.update(bench=bench, variant=variant, gpu=gpu, budget_bytes=int(budget))
h2d = d2h = None
if os.path.getsize(stats_path):
    stats = json.load(open(stats_path))
    devs = stats["devices"]
    h2d = sum(d["bytes_promoted"] for d in devs)
    d2h = sum(d["bytes_demoted"] for d in devs)
    # what the driver's event queue saw: driver evictions must be zero under Ember
    if "uvm_events" in stats:
        rec["uvm_events"] = stats["uvm_events"]
    # which allocation calls the program used, and how many Ember converted
    if "entry_points" in stats:
        rec["entry_points"] = stats["entry_points"]
rec.update(h2d_bytes=h2d, d2h_bytes=d2h, bytes_note="migrations Ember made, summed over all runs of the process"
           if h2d is not None else "stock UVM migrations are not counted")
probe = json.load(open(probe_path))
# The oracle: the best split Ember is allowed (residency up to the budget's
# high watermark), moved once, then every pass at the measured bandwidths.
ws = rec["working_set_bytes"]
resident = min(ws, int(budget) * 90 // 100)
passes = rec.get("passes") or rec.get("tokens") or 1
per_pass = resident / probe["device_read_Bps"] + (ws - resident) / probe["mapped_read_Bps"]
# the faster of span-sized and single-call prefetch; torch moves at allocation, untimed
move = resident / max(probe["prefetch_Bps"], probe.get("prefetch_bulk_Bps", 0)) if bench != "torch-decode" else 0.0
if bench == "random":
    # uniform random reads: each lands resident with probability resident/ws
    frac = resident / ws
    per_pass = rec["reads"] * (frac / probe["device_random_reads_per_s"] + (1 - frac) / probe["mapped_random_reads_per_s"])
    passes = 1
rec["bound_seconds"] = move + passes * per_pass
high = int(budget) * 90 // 100
up = max(probe["prefetch_Bps"], probe.get("prefetch_bulk_Bps", 0))
down = probe.get("demote_bulk_Bps", 10e9)
hbm, mapped = probe["device_read_Bps"], probe["mapped_read_Bps"]
if bench == "phase-shift":
    # A: its best split, moved once; B: the cheaper of moving it in (evicting what it
    # needs of A) and reading it mapped, per the oracle
    a, b = rec["a_bytes"], rec["b_bytes"]
    ra = min(a, high)
    t_a = ra / up + rec["a_passes"] * (ra / hbm + (a - ra) / mapped)
    rb = min(b, high)
    evict = max(0, rb - (high - ra))
    t_b = min(evict / down + rb / up + rec["b_passes"] * (rb / hbm + (b - rb) / mapped),
              rec["b_passes"] * b / mapped)
    rec["bound_seconds"] = t_a + t_b
    rec["bound_note"] = "per-phase oracle: A's best split moved once; B moved in (evicting A as needed) or left mapped, whichever is faster"
    rec["resident_GBps"] = hbm / 1e9
if bench == "moving-window":
    w, passes = rec["window_bytes"], rec["passes"]
    total = 0.0
    for i, f in enumerate(rec["new_fraction"]):
        new = f * w
        promote = new / up + (new / down if i else 0) + passes * w / hbm
        leave_mapped = passes * (new / mapped + (w - new) / hbm) + (0 if i else 0)
        total += min(promote, leave_mapped)
    rec["bound_seconds"] = total
    rec["bound_note"] = "per-phase oracle: each phase's new part moved in (evicting as much) or read mapped, whichever is faster"
rec.pop("series_GBps_raw", None)
rec.setdefault("bound_note", "residency up to 90% of the budget, moved once, passes at measured bandwidths")
print(json.dumps(rec))
PY
  rm -f "$stats"
}

# The GPU and the budget of a GPU benchmark: sets gpu, budget, budget_bytes; fails without a GPU.
gpu_and_budget() {
  command -v nvidia-smi >/dev/null && [ -n "$(gpu_name)" ] || {
    echo "$1: no GPU here; these benchmarks need one" >&2; return 1; }
  [ -x "$EMBER_BUILD/bin/ember-uvm-bench" ] || { echo "$1: ember-uvm-bench was not built (no nvcc?)" >&2; return 1; }
  budget=$EMBER_BENCH_BUDGET
  budget_bytes=$(python3 -c "import sys; u={'K':10,'M':20,'G':30,'T':40}; s=sys.argv[1]; print(int(float(s[:-1])*(1<<u[s[-1].upper()])) if s[-1].isalpha() else int(s))" "$budget")
  gpu=$(gpu_name)
}

uvm() {
  gpu_and_budget uvm || return 1
  local bench=$EMBER_BUILD/bin/ember-uvm-bench passes=20 runs=3 reads=$((1 << 28)) tokens=8
  [ "$EMBER_BENCH_QUICK" = 1 ] && { passes=4; runs=1; reads=$((1 << 24)); tokens=2; }
  : >"$results/uvm.jsonl"
  "$bench" probe $((4 << 30)) >"$results/probe.json"
  cat "$results/probe.json"
  for scale in 0.5 1.5; do
    local ws; ws=$(python3 -c "print(int($budget_bytes * $scale) // (1 << 21) * (1 << 21))")
    local variants="mapped static"
    [ "$scale" = 0.5 ] && variants="off mapped static"
    for v in $variants; do
      uvm_record reread "$v" "$ws" "$bench" reread "$ws" "$passes" "$runs"
      uvm_record random "$v" "$ws" "$bench" random "$ws" "$reads" "$runs"
      uvm_record torch-decode "$v" "$ws" python3 "$here/torch_decode.py" "$ws" "$tokens" "$runs"
      tail -n 3 "$results/uvm.jsonl"
    done
  done
  python3 "$here/report.py" "$results"
}

adaptive() {
  gpu_and_budget adaptive || return 1
  local bench=$EMBER_BUILD/bin/ember-uvm-bench G=$((1 << 30))
  export EMBER_JSONL=$results/adaptive.jsonl
  : >"$EMBER_JSONL"
  [ -s "$results/probe.json" ] || "$bench" probe $((4 << 30)) >"$results/probe.json"
  local hbm; hbm=$(python3 -c "import json; print(json.load(open('$results/probe.json'))['device_read_Bps'])")
  for v in mapped static adaptive; do
    uvm_record phase-shift "$v" $((24 * G)) "$bench" phase-shift $((16 * G)) $((8 * G)) 8 40 "$hbm"
  done
  for drift in 0 10 25 50 100; do
    for v in static adaptive; do
      uvm_record moving-window "$v" $((14 * G)) "$bench" moving-window $((14 * G)) $((42 * G)) "$drift" 8 4
    done
  done
  for v in static adaptive; do
    uvm_record torch-decode "$v" $((24 * G)) python3 "$here/torch_decode.py" $((24 * G)) 8 3
  done
  uvm_record torch-decode adaptive $((8 * G)) python3 "$here/torch_decode.py" $((8 * G)) 8 3
  python3 "$here/report_adaptive.py" "$results"
}

case "${1:-callbench}" in
  callbench) callbench ;;
  uvm) uvm ;;
  adaptive) adaptive ;;
  *) echo "usage: run.sh [callbench|uvm|adaptive]" >&2; exit 2 ;;
esac
