#!/usr/bin/env bash
# suite_cells.py without a GPU: `plan` takes the kernel groups whose records
# measured the oldest code first, as many as fit the call's seconds, with all
# of each group's variants in turn; `merge` makes one record per cell from
# its rounds' processes, with its bound drawn again, and refuses another card's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench=$(cd "$(dirname "$0")/../../tools/bench" && pwd)
head=$(git -C "$bench" rev-parse --short HEAD)
scratch dir
cd "$dir"
mkdir -p m
echo '{"device_read_Bps": 4e12, "mapped_read_Bps": 5e10, "prefetch_Bps": 4e10, "prefetch_bulk_Bps": 5e10}' >m/probe.json
echo '{"rates_Bps": {"mapped-read/128": 2.5e10, "mapped-populated-write/65536": 4e10}}' >m/sparse-probe.json
rec() { # bench scale variant code wall seconds
  echo "{\"bench\": \"$1\", \"scale\": $2, \"variant\": \"$3\", \"code\": \"$4\", \"wall_seconds\": $5, \"seconds\": $6, \"gpu\": \"H200\", \"budget_bytes\": 17179869184, \"working_set_bytes\": 25769803776, \"compute_seconds\": $6, \"runs_seconds\": [$6], \"bound_seconds\": 9, \"bound_warm_seconds\": 9}"
}
{ rec nw 1.5 resident "$head" 3 0.06; rec nw 1.5 static "$head" 13 0.33; rec nw 1.5 adaptive "$head" 11 0.33
  rec radix 1.5 resident "$head" 1 0.09; rec radix 1.5 static unknown0 7 1.1; rec radix 1.5 adaptive "$head" 6 1.1
  rec radix 1.5 mapped unknown0 13 2.0
  rec bfs 1.5 static unknown0 400 0.6
  echo '{"bench": "hf-llama", "scale": 1.5, "variant": "adaptive", "code": "unknown0", "seconds": 1.6, "bound_seconds": 1.46}'; } >m/suite.jsonl
python3 "$bench/suite_cells.py" plan --seconds 60 --rounds 2 --name c1 --results m >plan.sh
# radix's group (its static at code git does not know: the oldest) fits (2 x (1 + 7 + 6 + 3 x 2) = 40 s); bfs's
# does not fit; nw's, whose Ember records measured the newest code, is fresh; mapped and hf are never planned
grep -q '^source tools/bench/device-call.sh c1$' plan.sh || fail "the call's name"
grep -q '^  order="resident static adaptive"$' plan.sh || fail "radix's variants in order: $(cat plan.sh)"
grep -q 'cell radix 1.5 \$v \$round' plan.sh || fail "radix planned"
! grep -q 'cell nw\|cell bfs\|mapped\|hf-llama' plan.sh || fail "only radix fits: $(cat plan.sh)"
grep -q '^finish$' plan.sh || fail "the call ends with finish"
bash -n plan.sh || fail "the plan is not a bash script"
python3 "$bench/suite_cells.py" plan --seconds 1000 --rounds 1 --results m >plan1000.sh
grep -q "cell bfs 1.5" plan1000.sh || fail "bfs fits in 1000 s"
! grep -q "cell nw 1.5" plan1000.sh || fail "nw is fresh"
# a call's cells: two rounds of radix's static and one of its resident, and a cell of another folder's kind
call=$dir/call && mkdir -p "$call"/radix-1.5-static-0 "$call"/radix-1.5-static-1 "$call"/radix-1.5-resident-0 "$call"/suite
cellrec() { echo "{\"bench\": \"radix\", \"scale\": 1.5, \"variant\": \"$1\", \"gpu\": \"H200\", \"budget_bytes\": 17179869184, \"working_set_bytes\": 25769803776, \"seconds\": $2, \"first_seconds\": $3, \"compute_seconds\": $2, \"runs_seconds\": [$2], \"d2h_bytes\": $4, \"h2d_bytes\": 100, \"wall_seconds\": 7, \"read_bytes\": 51539607552}"; }
cellrec static 1.2 3.0 10 >"$call"/radix-1.5-static-0/suite.jsonl
cellrec static 1.0 2.8 30 >"$call"/radix-1.5-static-1/suite.jsonl
cellrec resident 0.08 0.3 0 >"$call"/radix-1.5-resident-0/suite.jsonl
cellrec adaptive 5.0 5.0 0 >"$call"/suite/suite.jsonl
python3 "$bench/suite_cells.py" merge "$call" abc1234 --results m >merge.log
python3 - <<'PY'
import json
rows = {(r["bench"], r["variant"]): r for r in map(json.loads, open("m/suite.jsonl"))}
s = rows["radix", "static"]
assert s["seconds"] == 1.1 and s["runs_seconds"] == [1.2, 1.0] and s["processes"] == 2, s
assert s["first_seconds"] == 2.9 and s["d2h_bytes"] == 20 and s["code"] == "abc1234", s
assert s["bound_seconds"] != 9 and "last probe" in s["bound_note"] and "link_warm_seconds" in s, s
r = rows["radix", "resident"]
assert r["seconds"] == 0.08 and r["code"] == "abc1234" and "processes" not in r, r
# radix's adaptive, not in the call, keeps its record, with its bound drawn again beside the new resident's
a = rows["radix", "adaptive"]
assert a["seconds"] == 1.1 and a["code"] != "abc1234" and a["bound_seconds"] != 9, a
assert rows["nw", "static"]["bound_seconds"] == 9  # another group's bound stays
assert sum(1 for k in rows if k == ("radix", "static")) == 1
print("merge: ok")
PY
# another card's cells are refused, and the matrix is left as it was
cp m/suite.jsonl before.jsonl
sed -i 's/"H200"/"H100"/' "$call"/radix-1.5-static-0/suite.jsonl
if python3 "$bench/suite_cells.py" merge "$call" def5678 --results m 2>refused.log; then fail "another card merged"; fi
grep -q 'ran on H100, the matrix on H200: not merged' refused.log || fail "the refusal says why: $(cat refused.log)"
cmp -s before.jsonl m/suite.jsonl || fail "a refused merge changed the matrix"
echo "suite_cells: ok"
