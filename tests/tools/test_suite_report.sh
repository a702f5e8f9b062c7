#!/usr/bin/env bash
# The evaluation matrix's records and report without a GPU: suite_record.py
# turns each kind of program output (ember-suite, hf_generate.py,
# llama-bench -o jsonl, a time-out, a crash) into a record with its bound,
# and suite_report.py makes a report that lists what was not measured.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench=$(cd "$(dirname "$0")/../../tools/bench" && pwd)
scratch dir
cd "$dir"
echo '{"device_read_Bps": 4e12, "mapped_read_Bps": 5e10, "prefetch_Bps": 4e10, "prefetch_bulk_Bps": 5e10}' >probe.json
echo '{"rates_Bps": {"mapped-read/128": 2.5e10, "mapped-populated-write/65536": 4e10, "mapped-read-write/65536": 5e10}}' >sparse-probe.json
printf '%s\n' '{"bench": "gather-probe", "where": "device", "tensor": "down", "case": "index", "gb_per_s": 1472.1}' \
  '{"bench": "gather-probe", "where": "mapped", "tensor": "down", "case": "index", "gb_per_s": 40.23}' >gather-probe.jsonl
G=$((1 << 30)) budget=$((16 << 30))
rec() { python3 "$bench/suite_record.py" --budget $budget --gpu test --results . "$@" >>suite.jsonl; }
suite() { echo "{\"bench\": \"$1\", \"working_set_bytes\": $2, \"seconds\": $3, \"first_seconds\": $3, \"runs_seconds\": [$3], \"compute_seconds\": $4, \"read_bytes\": $5, \"sparse\": $6, \"verified\": true}"; }
# kmeans at 1.5x: 24 GiB, 10 passes; resident compute 0.4 s
rec --bench kmeans --scale 1.5 --variant resident --out "$(suite kmeans $((24 * G)) 0.5 0.4 $((240 * G)) false)"
rec --bench kmeans --scale 1.5 --variant static --out "$(suite kmeans $((24 * G)) 3.0 3.0 $((240 * G)) false)"
# bfs: sparse, so the bound uses the sparse rate
rec --bench bfs --scale 1.5 --variant resident --out "$(suite bfs $((24 * G)) 0.2 0.1 $((24 * G)) true)"
rec --bench bfs --scale 1.5 --variant static --out "$(suite bfs $((24 * G)) 5.0 5.0 $((24 * G)) true)"
# star: arrays read unequally (one 12 GiB column ten times, the other once): the oracle keeps the first
star_out() { echo "{\"bench\": \"star\", \"working_set_bytes\": $((24 * G)), \"seconds\": 2, \"first_seconds\": 2, \"runs_seconds\": [2], \"compute_seconds\": 2, \"reads_by_array\": [[$((12 * G)), $((12 * G))], [$((12 * G)), $((120 * G))]], \"read_bytes\": $((132 * G)), \"sparse\": false, \"verified\": true}"; }
rec --bench star --scale 1.5 --variant resident --out "$(suite star $((24 * G)) 0.1 0.05 $((132 * G)) false)"
rec --bench star --scale 1.5 --variant adaptive --out "$(star_out)"
rec --bench nw --scale 1.5 --variant mapped --rc 124 --timeout 150 --out ""
# the wavefront 5.5x off resident, where the program's own hints (ember-suite's placed) make 5.33x: the tier's ceiling,
# which Ember reaches within 1.05x
rec --bench nw --scale 1.5 --variant resident --out "$(suite nw $((24 * G)) 0.06 0.06 $((24 * G)) true)"
rec --bench nw --scale 1.5 --variant static --out "$(suite nw $((24 * G)) 0.33 0.33 $((24 * G)) true)"
rec --bench nw --scale 1.5 --variant hints --peer hints --out "$(suite nw $((24 * G)) 0.32 0.32 $((24 * G)) true)"
# traffic array by array: pathfinder's two 4 MiB rows, read and written at every step, are kept resident before
# its 24 GiB wall, read once; bitonic's one array read and written ten times over crosses the link both ways at
# once, at the rate the probe measured for the two together (5e10), not each direction's own in parallel
M=$((1 << 20))
traffic() { echo "{\"bench\": \"$1\", \"working_set_bytes\": $2, \"seconds\": 9, \"first_seconds\": 9, \"runs_seconds\": [9], \"compute_seconds\": 9, \"traffic_by_array\": $3, \"read_bytes\": $4, \"written_bytes\": $5, \"sparse\": false, \"verified\": true}"; }
rec --bench pathfinder --scale 1.5 --variant static --out "$(traffic pathfinder $((24 * G + 8 * M)) "[[$((24 * G)), $((24 * G)), 0], [$((4 * M)), $((12 * G)), $((12 * G))], [$((4 * M)), $((12 * G)), $((12 * G))]]" $((48 * G)) $((24 * G)))"
rec --bench bitonic --scale 1.5 --variant static --out "$(traffic bitonic $((24 * G)) "[[$((24 * G)), $((240 * G)), $((240 * G))]]" $((240 * G)) $((240 * G)))"
rec --bench star --scale 0.5 --variant static --rc 139 --out "ember-suite: a crash"
rec --bench hf-llama --scale 1.5 --variant resident --out '{"new_tokens": 8, "run_seconds": [0.2], "working_set_bytes": 26000000000, "load_seconds": 0.5, "seconds": 0.2, "tokens_per_second": 40, "expert_bytes": 0}'
rec --bench hf-llama --scale 1.5 --variant adaptive --out '{"new_tokens": 8, "run_seconds": [2.0], "working_set_bytes": 26000000000, "load_seconds": 0.7, "seconds": 2.0, "tokens_per_second": 4, "expert_bytes": 0}'
rec --bench llama-cpp --scale 1.5 --variant static --out '{"model_size": 26000000000, "n_gen": 8, "n_gpu_layers": 99, "samples_ns": [2000000000, 2100000000, 1900000000]}'
# within 1.25x of its bound (1.494 s) yet short of the 0.9 its criterion asks
rec --bench llama-cpp --scale 1.5 --variant adaptive --out '{"model_size": 26000000000, "n_gen": 8, "n_gpu_layers": 99, "samples_ns": [1700000000, 1750000000, 1650000000]}'
# hf_rounds.py's output: a line a child; four children make one record, the median of their medians
kids() { local v=$1; shift; local i=0 s; for s in "$@"; do
  echo "{\"bench\": \"hf-generate\", \"new_tokens\": 8, \"run_seconds\": [$s, $s], \"run_cpu_seconds\": [$s, 0.1], \"run_stolen_seconds\": [0.0, 0.02], \"run_cpu_probe_seconds\": [0.004, 0.004], \"working_set_bytes\": 8000000000, \"load_seconds\": 0.5, \"seconds\": $s, \"expert_bytes\": 0, \"variant\": \"$v\", \"round\": 0, \"child\": $i}"
  i=$((i + 1)); done; }
rec --bench hf-llama --scale 0.5 --variant resident --out "$(kids resident 0.20 0.26 0.24 0.22)"
rec --bench hf-llama --scale 0.5 --variant adaptive --out "$(kids adaptive 0.25 0.36 0.30 0.29)"
rec --bench hf-llama --scale 0.5 --variant static --out "$(kids static 0.27 0.28 0.26 0.32)"
# past 1.10x of resident at 0.5x, within 1.25x of its bound: its note comes in a section of its own
rec --bench hf-mixtral --scale 0.5 --variant resident --out "$(kids resident 0.10 0.11 0.10 0.10)"
rec --bench hf-mixtral --scale 0.5 --variant adaptive --out "$(kids adaptive 0.115 0.12 0.11 0.118)"
# llama-bench processes in rounds at 0.5x: a line a process; three make one record, the median of their medians
lb() { echo "{\"model_size\": 8000000000, \"n_gen\": 8, \"n_gpu_layers\": 99, \"samples_ns\": [$1, $2, $3]}"; }
rec --bench llama-cpp --scale 0.5 --variant adaptive --out "$(lb 40000000 41000000 39000000; echo 'llama-bench: a log line'; lb 43000000 42000000 42500000; lb 38000000 38500000 60000000)"
# ember-suite processes in rounds: three make one record, the median of their medians and of their first runs
rec --bench radix --scale 0.5 --variant adaptive --out "$(suite radix $((8 * G)) 0.3 0.2 $((8 * G)) false; suite radix $((8 * G)) 0.1 0.1 $((8 * G)) false; suite radix $((8 * G)) 0.2 0.15 $((8 * G)) false)"
bench=$bench python3 - <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["bench"])
from suite_record import HIGH_WATERMARK  # config.def's EMBER_HIGH_WATERMARK, which the bounds take
kp = [r for r in map(json.loads, open("suite.jsonl")) if r["bench"] == "radix"][0]
assert kp["processes"] == 3 and kp["runs_seconds"] == [0.3, 0.1, 0.2] and kp["seconds"] == 0.2 and kp["first_seconds"] == 0.2, kp
lp = [r for r in map(json.loads, open("suite.jsonl")) if r["bench"] == "llama-cpp" and r["scale"] == 0.5][0]
assert lp["processes"] == 3 and lp["runs_seconds"] == [0.04, 0.0425, 0.0385] and lp["seconds"] == 0.04, lp
rows = {(r["bench"], r["variant"]): r for r in map(json.loads, open("suite.jsonl")) if r["scale"] == 1.5 or r["bench"] != "hf-llama"}
half = {r["variant"]: r for r in map(json.loads, open("suite.jsonl")) if r["bench"] == "hf-llama" and r["scale"] == 0.5}
assert half["adaptive"]["processes"] == 4 and abs(half["adaptive"]["seconds"] - 0.295) < 1e-9, half["adaptive"]
assert abs(half["adaptive"]["runs_cpu_seconds"][1] - 0.23) < 1e-9 and half["adaptive"]["runs_stolen_seconds"] == [0.01] * 4, half["adaptive"]
assert half["adaptive"]["runs_seconds"] == [0.25, 0.36, 0.30, 0.29] and abs(half["adaptive"]["resident_seconds"] - 0.23) < 1e-9
high = (16 << 30) * HIGH_WATERMARK // 100
ws = 24 << 30
# kmeans: warm bound is the longer of compute and 240 GiB x (24 GiB - high)/24 GiB at 50 GB/s
k = rows["kmeans", "static"]
want = max(0.4, (240 << 30) * (ws - high) / ws / 5e10)
assert abs(k["bound_warm_seconds"] - want) < 1e-3 * want, (k["bound_warm_seconds"], want)
assert k["resident_seconds"] == 0.5
assert abs(k["link_warm_seconds"] - want) < 1e-3 * want, (k["link_warm_seconds"], want)  # the link alone: all of it
b = rows["bfs", "static"]
assert "sparse" in b["bound_note"] and b["bound_warm_seconds"] > (24 << 30) * (ws - high) / ws / 5e10
assert rows["nw", "mapped"]["error"].startswith("timed out") and rows["nw", "mapped"]["seconds_at_least"] == 150
assert "error" in rows["star", "static"]
st = rows["star", "adaptive"]  # 14.4 GiB resident: all of the much-read column and 2.4 GiB of the other
want = (12 << 30) * (12 * 2**30 - (high - (12 << 30))) / (12 << 30) / 5e10
assert abs(st["bound_warm_seconds"] - want) < 1e-3 * want, (st["bound_warm_seconds"], want)
assert "busiest" in st["bound_note"], st["bound_note"]
p = rows["pathfinder", "static"]  # the rows resident, the wall's rest read at 5e10: no writes cross the link
want = (24 * 2**30 - (high - 8 * 2**20)) / 5e10
assert abs(p["bound_warm_seconds"] - want) < 1e-3 * want, (p["bound_warm_seconds"], want)
b = rows["bitonic", "static"]  # both ways at once: (reads + writes) past the high watermark at 5e10
want = 2 * (240 << 30) * (ws - high) / ws / 5e10
assert abs(b["bound_warm_seconds"] - want) < 1e-3 * want, (b["bound_warm_seconds"], want)
assert "both at once" in b["bound_note"], b["bound_note"]
h = rows["hf-llama", "adaptive"]
assert abs(h["link_bound_tokens_per_second"] - 5e10 / (26e9 - high)) < 1e-6
assert abs(h["bound_seconds"] - max(0.2, 8 * (26e9 - high) / 5e10)) < 1e-9
l = rows["llama-cpp", "static"]
assert l["seconds"] == 2.0 and l["runs_seconds"] == [2.0, 2.1, 1.9] and l["tokens"] == 8
print("records: ok")
PY
# checkpoint loading (load_records.py): a call's archive with its card, two processes per variant and one that died;
# "populate" is adaptive with EMBER_POPULATE_HOST=1, which the stats name (an older process's stats do not: its
# bytes populated tell), and a process whose stats did not come is still the variant its file names
mkdir -p call/load && echo 'NVIDIA H200, 143771 MiB, 5, 16' >call/gpu.txt
for v in resident:4.0:4.4 adaptive:5.6:6.2 populate:4.8:5.2; do
  IFS=: read -r name a b <<<"$v"
  for round in 0 1; do
    t=$([ $round = 0 ] && echo "$a" || echo "$b")
    printf 'progress\n{"size": "13b", "params": 13, "working_set_bytes": 26, "load_seconds": %s, "run_seconds": [1.0]}\n' "$t" \
      >"call/load/llama-$name-$round.json"
    echo "rc 0" >"call/load/llama-$name-$round.log"
  done
done
for round in 0 1; do
  echo '{"mode": "adaptive", "devices": [{"bytes_promoted": 3221225472, "bytes_demoted": 1073741824, "bytes_populated": 0, "budget_bytes": 17179869184}]}' \
    >call/load/llama-adaptive-$round.stats.json
done
echo '{"mode": "adaptive", "populate_host": true, "devices": [{"bytes_promoted": 2147483648, "bytes_demoted": 0, "budget_bytes": 17179869184}]}' \
  >call/load/llama-populate-0.stats.json
: >call/load/llama-static-0.json && echo "rc 137" >call/load/llama-static-0.log
python3 "$bench/load_records.py" load.jsonl call=abc1234 >/dev/null
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("load.jsonl")]
assert len(rows) == 7, rows
dead = [r for r in rows if r["variant"] == "static"][0]
assert dead["error"] == "no record (exit 137)" and dead["gpu"] == "NVIDIA H200" and dead["code"] == "abc1234", dead
a0 = [r for r in rows if r["variant"] == "adaptive" and r["round"] == 0 and not r["populate_host"]][0]
assert a0["load_seconds"] == 5.6 and a0["bytes_promoted"] == 3 << 30 and a0["call"] == "call", a0
pop = sorted(r["load_seconds"] for r in rows if r["variant"] == "adaptive" and r["populate_host"])
assert pop == [4.8, 5.2], rows
print("load records: ok")
PY
# training's records: train_step.py's lines, Ember's statistics beside its own variants only
mkdir -p tcall/call1/train
for v in resident-1.5:0.05 static-1.5:0.55 adaptive-1.5:0.52 offload-1.5:0.50; do
  IFS=: read -r name t <<<"$v"
  printf 'noise\n{"bench": "train-step", "variant": "%s", "gpu": "NVIDIA H100", "steps": 5, "median_step_seconds": %s, "build_seconds": 1.0, "step_seconds": [%s]}\n' \
    "$name" "$t" "$t" >"tcall/call1/train/$name.json"
done
echo '{"devices": [{"bytes_promoted": 2147483648, "bytes_demoted": 1073741824}]}' >tcall/call1/train/adaptive-1.5.stats.json
# another session's machine, an A/B of two libraries: its base's processes named for their prefix's commit
mkdir -p tcall2/call1/train
for v in resident-1.5:resident-1.5:0.1 adaptive-head-1:adaptive-1.5:0.4 adaptive-base-1:adaptive-def5678-1.5:0.5; do
  IFS=: read -r process name t <<<"$v"
  printf '{"bench": "train-step", "variant": "%s", "gpu": "NVIDIA H100", "steps": 12, "median_step_seconds": %s, "build_seconds": 2.0, "step_seconds": [%s], "gpu_peak_bytes": 30000000000}\n' \
    "$name" "$t" "$t" >"tcall2/call1/train/$process.json"
done
# its probe (mapped reads and writes at once, 50 GB/s) and Ember's high watermark (20 GB of a 30 GB peak): 10 GB
# cross each way a step, 0.4 s, longer than resident's 0.1
for process in adaptive-head-1 adaptive-base-1; do
  echo '{"devices": [{"bytes_promoted": 1073741824, "bytes_demoted": 0, "high_bytes": 20000000000}]}' \
    >"tcall2/call1/train/$process.stats.json"
done
mkdir -p tcall2/call1/suite
echo '{"sparse_probe": true, "rates_Bps": {"mapped-read/65536": 5.1e10, "mapped-read-write/65536": 5e10}}' \
  >tcall2/call1/suite/sparse-probe.json
# a call of that session on a machine of its own (the first was given back): its runs apart from the first's
mkdir -p tcall2/call2/train
printf '{"bench": "train-step", "variant": "adaptive-1.5", "gpu": "NVIDIA H100", "steps": 12, "median_step_seconds": 0.8, "build_seconds": 2.0, "step_seconds": [0.8]}\n' \
  >tcall2/call2/train/adaptive-head-2.json
python3 "$bench/train_records.py" train.jsonl tcall/call1=abc1234 tcall2/call1=abc9999,adaptive-base=def5678 \
  tcall2/call2=abc9999,machine=tcall2/call2 >/dev/null
python3 - <<'PY'
import json
all_rows = list(map(json.loads, open("train.jsonl")))
rows = {r["variant"]: r for r in all_rows if r["call"] == "tcall/call1"}
assert sorted(rows) == ["adaptive-1.5", "offload-1.5", "resident-1.5", "static-1.5"], rows
a = rows["adaptive-1.5"]
assert a["call"] == "tcall/call1" and a["code"] == "abc1234" and a["bytes_demoted"] == 1 << 30, a
assert "bytes_promoted" not in rows["offload-1.5"], rows  # no Ember there: no statistics
codes = {r["process"]: r["code"] for r in all_rows if r["call"] == "tcall2/call1"}
assert codes == {"resident-1.5": "abc9999", "adaptive-head-1": "abc9999", "adaptive-base-1": "def5678"}, codes
machines = {r["call"]: r["machine"] for r in all_rows}
assert machines == {"tcall/call1": "tcall", "tcall2/call1": "tcall2", "tcall2/call2": "tcall2/call2"}, machines
print("train records: ok")
PY
echo '{"kmeans@1.5": "a cause measured", "hf-mixtral@0.5": "a launch cost measured", "launch-overhead": "what the loops miss",
  "bitonic@1.5": {"cause": "the link, both ways", "history": "how that was found"}}' >notes.json
python3 "$bench/suite_report.py" . REPORT.md >/dev/null 2>&1
grep -q '^## The issue.s criteria' REPORT.md
grep -q '^| NVIDIA H100 | adaptive-1.5 | abc1234 | 5 | 1 | 0.52 (0.52-0.52) | 10.40 | - | - | 1.00 | 2.0 / 1.0 | tcall/call1 |$' REPORT.md
grep -q '^| NVIDIA H100 | offload-1.5 | - | 5 | 1 | 0.5 (0.5-0.5) | 10.00 | - | - | 1.00 | - | tcall/call1 |$' REPORT.md
# each session against its own resident: tcall2's adaptive 0.4 s over its 0.1, not tcall's 0.05; its bound 0.4 s
grep -q '^| NVIDIA H100 | adaptive-1.5 | abc9999 | 12 | 1 | 0.4 (0.4-0.4) | 4.00 | 0.4 | 1.00 | 2.00 | 1.0 / 0.0 | tcall2/call1 |$' REPORT.md
grep -q '^| NVIDIA H100 | adaptive-def5678-1.5 | def5678 | 12 | 1 | 0.5 (0.5-0.5) | 5.00 | 0.4 | 1.25 | 2.00 | 1.0 / 0.0 | tcall2/call1 |$' REPORT.md
# the call on a machine of its own: no resident of its machine to compare with
grep -q '^| NVIDIA H100 | adaptive-1.5 | abc9999 | 12 | 1 | 0.8 (0.8-0.8) | - | - | - | 2.00 | - | tcall2/call2 |$' REPORT.md
# beside the bound (the longer of the two), the token's time if resident's run and the link's share did not overlap
grep -q "hf-llama reaches 0.8 of its bound | no | .*; 0.8[0-9] of 1.[0-9]* s, resident's 0.200 s plus the link's 1.[0-9]* s (nothing overlapped)" REPORT.md
# short of its criterion (0.8 of the bound) yet within 1.25x of it: the report still says why, or that nothing has
grep -A2 '^## Token generation short of its criterion' REPORT.md | grep -q 'llama-cpp at 1.5x\*\* (adaptive, 1.14x its bound): not yet explained'
grep -q '^| mapped | down | 40.2 |$' REPORT.md # the gather probe's rates
grep -q 'kmeans at 1.5x.*a cause measured' REPORT.md
# the issue's ten workloads: transformers counted once, within its bound only if both architectures are
grep 'on at least 7 of the 10 workloads' REPORT.md | grep -q '| no | [0-9] of [0-9]*: .*; transformers (hf-llama [0-9.]*x, hf-mixtral -x) counted once'
# a note with its history: the cause in the report, linked to the history's heading in REPORT-HISTORY.md
grep -q 'bitonic at 1.5x.*the link, both ways \[How it was measured.\](REPORT-HISTORY.md#bitonic-at-15x)$' REPORT.md
grep -A4 '^## bitonic at 1.5x$' REPORT-HISTORY.md | grep -q '^how that was found$'
! grep -q 'how that was found' REPORT.md
# where each 1.5x run sits: kmeans's static 3 s against its bound, resident's compute (0.4 s) plus the link's time,
# nothing overlapped, and no hints
python3 - <<'PY'
row = next(l for l in open("REPORT.md") if l.startswith("| kmeans | ") and "(static)" in l).split(" | ")
bound, compute, serial, hints, ember = float(row[1]), float(row[2]), float(row[3]), row[4], row[5]
assert compute == 0.4 and abs(serial - (0.4 + bound)) < 0.01 and hints == "-" and ember == "3 (static)", row
PY
grep -q '^what the loops miss$' REPORT.md # the launch-overhead note, under its table
grep -A3 '^## Cases at 0.5x more than 1.10x of resident' REPORT.md |
  grep -q 'hf-mixtral at 0.5x\*\* (adaptive, 1.16x of resident): a launch cost measured'
grep -q 'bfs at 1.5x.*not yet explained' REPORT.md
grep -q 'nw 1.5x mapped: timed out after 150 s' REPORT.md
grep -q "the wavefront within 3x of resident, or at the mapped tier's ceiling | yes | 5.50; the program's own hints.*: 0.32 s, 5.33x of resident; Ember 0.33 s, 1.03x of the hints" REPORT.md
grep -q '^| nw | .* | hints 0.32 |' REPORT.md # the peer column
grep -q 'kmeans 1.5x hints' REPORT.md # not measured
grep -q '^## Not measured' REPORT.md && grep -q 'hf-mixtral 1.5x static' REPORT.md
# adaptive's 0.295 s is 1.28x resident's 0.23, but their processes' ranges overlap: not resolved, not failed
# with the ratio of each process's time to its own CPU probe's (hf_generate.cpu_probe)
grep -q 'hf-llama 1.28 cold, 1.28 warm (not resolved: 4 processes 0.25-0.36 s against 4 0.2-0.26; 1.28 against each process.s CPU probe)' REPORT.md
grep -q 'hf-llama@0.5x 0.932 (not resolved: 4 processes 0.25-0.36 s against 4 0.26-0.32)' REPORT.md
# without the host's touches, adaptive's median 5.9 s over resident's 4.2: 1.40x; with them (the default) 5.0 s, 1.19x,
# which the criterion takes, the processes' ranges apart
grep -q '^| NVIDIA H200 | call | hf-llama 13b | adaptive, EMBER_POPULATE_HOST=0 | 2 | 5.90 (5.60-6.20) | 1.40 | 3.0 / 1.0 |$' REPORT.md
grep -q '^| NVIDIA H200 | call | hf-llama 13b | adaptive | 2 | 5.00 (4.80-5.20) | 1.19 | 2.0 / 0.0 |$' REPORT.md
grep -q 'loading a checkpoint under manage-all (adaptive) .* | yes | hf-llama 13b on the NVIDIA H200 1.19x (2 processes against 2, call) |' REPORT.md
# the plots, where matplotlib is there to draw them: each beside the records, each linked from the report
if python3 -c "import matplotlib" 2>/dev/null; then
  for p in speedup bound floors peers; do
    [ -s "$p.png" ] && grep -q "^!\[$p.png\](.*$p.png)$" REPORT.md || { echo "FAIL: plot $p" >&2; exit 1; }
  done
fi
echo "report: ok"
