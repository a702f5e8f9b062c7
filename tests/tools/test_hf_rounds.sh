#!/usr/bin/env bash
# hf_rounds.py without torch or a GPU: a stand-in hf_generate.measure beside
# a copy of it. Its children are separate processes, forked one after another,
# each printing its record with variant, round and child; a child that fails
# prints an error record and the parent's exit status says so; under Ember
# (preloaded, on the simulated driver) each child reports Ember active and its
# library mapped, and without Ember neither.
#   test_hf_rounds.sh LIBEMBER LIBEMBER_SIM
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench=$(cd "$(dirname "$0")/../../tools/bench" && pwd)
lib=$1 sim=$2
scratch dir
cp "$bench/hf_rounds.py" "$bench/ember_hooks.py" "$dir/"
cat >"$dir/hf_generate.py" <<'PY'
import os
def measure(arch, size, new_tokens, runs):
    if os.path.exists("fail-once"):  # the first child to find it fails
        os.remove("fail-once")
        raise RuntimeError("out of memory")
    return {"bench": "hf-generate", "arch": arch, "size": size, "new_tokens": new_tokens,
            "seconds": 0.1, "load_seconds": 0.5, "run_seconds": [0.1] * runs, "pid": os.getpid()}
PY
cd "$dir"
python3 hf_rounds.py static 1 3 llama tiny 8 2 >plain.jsonl
touch fail-once
rc=0
python3 hf_rounds.py adaptive 0 2 llama tiny 8 2 >failing.jsonl || rc=$?
[ "$rc" = 1 ] || { echo "a failed child: the parent exited $rc, not 1" >&2; exit 1; }
LD_PRELOAD=$lib EMBER_REAL_LIBCUDA=$sim EMBER_MODE=adaptive python3 hf_rounds.py adaptive 2 1 llama tiny 8 2 >ember.jsonl
python3 - "$lib" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open("plain.jsonl")]
assert [r["child"] for r in rows] == [0, 1, 2], rows
assert all(r["variant"] == "static" and r["round"] == 1 and r["size"] == "tiny" for r in rows), rows
assert len({r["pid"] for r in rows}) == 3 and os.getpid() not in {r["pid"] for r in rows}, rows
assert not any(r["ember_active"] for r in rows) and all(r["drivers"] == [] for r in rows), rows
failing = [json.loads(l) for l in open("failing.jsonl")]
assert failing[0]["child"] == 0 and "out of memory" in failing[0]["error"], failing
assert failing[1]["child"] == 1 and failing[1]["seconds"] == 0.1, failing
ember = [json.loads(l) for l in open("ember.jsonl")]
assert len(ember) == 1 and ember[0]["ember_active"] is True, ember
assert os.path.realpath(sys.argv[1]) in map(os.path.realpath, ember[0]["drivers"]), ember
PY
echo "hf_rounds: ok"
