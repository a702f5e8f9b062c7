#!/usr/bin/env python3
"""Checkpoint loading's records, from device calls that ran hf_generate.py's `load DIR`.

    load_records.py OUT CALL_DIR=COMMIT ...

Each CALL_DIR is an unpacked call archive holding gpu.txt (device-call.sh)
and load/ARCH-VARIANT-ROUND.json (hf_generate.py's record, its last line),
with ARCH-VARIANT-ROUND.stats.json beside it for Ember's variants and
ARCH-VARIANT-ROUND.log ending in the process's `rc N`. OUT (one JSON object
a line, `bench: hf-load`) is written anew from the calls given, one record
per process: its card, the model, the variant (resident: no Ember), the
round, from_pretrained's seconds, the generations' seconds, the bytes Ember
moved, whether the host's touches made converted memory past the budget
(populate_host, EMBER_POPULATE_HOST), and the code measured. A process that failed is a record with its
error, so that the report can say what did not run.
"""
import glob
import json
import os
import re
import sys

from suite_record import last_json

# ARCH-VARIANT-ROUND.json: resident (no Ember), Ember's modes, or a call's own variant (populate)
NAME = re.compile(r"^(?P<arch>[a-z]+)-(?P<variant>[a-z0-9_]+)-(?P<round>\d+)\.json$")


def record_of(path):
    """The process's record: the last JSON line it printed, else None (a process that printed none)."""
    with open(path) as f:
        return last_json(f.read())


def exit_code(log):
    try:
        with open(log) as f:
            found = re.findall(r"^rc (\d+)$", f.read(), re.M)
        return int(found[-1]) if found else None
    except OSError:
        return None


def records(call, commit, out_dir):
    with open(os.path.join(call, "gpu.txt")) as f:
        gpu = f.read().split(",")[0].strip()
    for path in sorted(glob.glob(os.path.join(call, "load", "*.json"))):
        m = NAME.match(os.path.basename(path))
        if not m or path.endswith(".stats.json"):
            continue
        base = path[: -len(".json")]
        rec = {"bench": "hf-load", "gpu": gpu, "arch": m["arch"], "variant": m["variant"], "round": int(m["round"]),
               "code": commit, "call": os.path.relpath(call, out_dir)}
        out = record_of(path)
        rc = exit_code(base + ".log")
        if not out or "load_seconds" not in out:
            rec["error"] = f"no record (exit {rc})"
            yield rec
            continue
        rec.update({k: out[k] for k in ("size", "params", "working_set_bytes", "load_seconds", "run_seconds",
                                        "transformers", "torch") if k in out})
        stats = {}
        if os.path.exists(base + ".stats.json"):
            with open(base + ".stats.json") as f:
                stats = json.load(f)
        if stats:
            # the calls' "populate" processes ran adaptive with EMBER_POPULATE_HOST=1: the mode is the variant, and
            # whether the host's touches made the pages (the stats say so since they name it; before, the bytes did)
            devices = stats.get("devices") or []
            rec["variant"] = stats.get("mode", rec["variant"])
            rec["populate_host"] = stats.get("populate_host", sum(d.get("bytes_populated", 0) for d in devices) > 0)
            for key in ("bytes_promoted", "bytes_demoted", "migrate_seconds"):
                rec[key] = sum(d.get(key, 0) for d in devices)
            if devices:
                rec["budget_bytes"], rec["high_bytes"] = devices[0].get("budget_bytes"), devices[0].get("high_bytes")
        elif rec["variant"] == "populate":  # its stats did not come: what the call ran is still known
            rec.update(variant="adaptive", populate_host=True)
        yield rec


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit("usage: load_records.py OUT CALL_DIR=COMMIT ...")
    rows = []
    for arg in sys.argv[2:]:
        call, commit = arg.rsplit("=", 1)
        rows += list(records(call, commit, os.path.dirname(os.path.abspath(sys.argv[1]))))
    with open(sys.argv[1], "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"load_records: {len(rows)} records to {sys.argv[1]}")


if __name__ == "__main__":
    main()
