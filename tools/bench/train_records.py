#!/usr/bin/env python3
"""Training's records, from device calls that ran train_step.py.

    train_records.py OUT CALL_DIR=COMMIT[,PREFIX=COMMIT...][,machine=NAME] ...

Each CALL_DIR is an unpacked call archive holding train/NAME.json
(train_step.py's JSON line) and, for Ember's variants, NAME.stats.json
beside it. OUT (one JSON object a line, `bench: train-step`) is written anew
from the calls given, one record per process: train_step.py's own fields,
the call, the code measured, the bytes Ember moved and its high watermark,
and the rate at which the call's sparse probe read and wrote mapped memory
at once in 64 KiB pieces (suite/sparse-probe.json: the report's bound). The code is COMMIT,
or for a process whose NAME starts with PREFIX (an A/B's other library,
such as adaptive-base=38cb4b60), that PREFIX's. The machine is the call's
session (ab-60 for ab-60/call2), or NAME where the session's calls ran on
more than one: the report compares a machine's runs only among themselves.
"""
import glob
import json
import os
import sys

from suite_record import last_json


def moved(stats_path):
    """The bytes the process's GPU 0 promoted and demoted, from Ember's statistics; {} without them."""
    try:
        with open(stats_path) as f:
            dev = json.load(f)["devices"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return {}
    return {"bytes_promoted": dev.get("bytes_promoted"), "bytes_demoted": dev.get("bytes_demoted"),
            "high_bytes": dev.get("high_bytes")}


def read_write_rate(call_dir):
    """Mapped memory read and written at once in 64 KiB pieces (B/s) by the call's sparse probe; {} without one."""
    try:
        with open(os.path.join(call_dir, "suite", "sparse-probe.json")) as f:
            rate = json.load(f)["rates_Bps"]["mapped-read-write/65536"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {"mapped_read_write_Bps": rate}


def main():
    if len(sys.argv) < 3 or not all("=" in a for a in sys.argv[2:]):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = []
    for arg in sys.argv[2:]:
        call_dir, codes = arg.split("=", 1)
        code, *others = codes.split(",")
        by_prefix = dict(o.split("=", 1) for o in others if "=" in o)
        call = "/".join(os.path.normpath(call_dir).split(os.sep)[-2:])
        machine = by_prefix.pop("machine", call.split("/")[0])
        rate = read_write_rate(call_dir)  # the call's, one for all its processes
        for path in sorted(glob.glob(os.path.join(call_dir, "train", "*.json"))):
            if path.endswith(".stats.json"):
                continue
            with open(path) as f:
                r = last_json(f.read())
            if not r:
                continue
            process = os.path.basename(path)[:-5]
            mine = [c for p, c in by_prefix.items() if process.startswith(p)]
            r.update({"call": call, "code": mine[0] if mine else code, "process": process, "machine": machine})
            r.update(moved(path[:-5] + ".stats.json"))
            r.update(rate)
            out.append(r)
    with open(sys.argv[1], "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")
    print(f"train_records: {len(out)} records in {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
