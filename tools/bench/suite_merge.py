#!/usr/bin/env python3
"""Merge the archives of several device calls into the matrix's records.

    suite_merge.py DEST CALL_DIR=COMMIT ...   (in call order, oldest first)

A lent GPU's call has a time limit, so one session's matrix comes back in
pieces: each CALL_DIR is an unpacked device-suite.sh archive, and COMMIT
the code it measured. Records are keyed by (bench, scale, variant); a later
call's record replaces an earlier one's, and a record that names no code yet
is stamped with its call's (`code`). Records already in DEST stay unless
replaced. A call's probes and launch-overhead records replace DEST's; its
logs and diag files are copied beside them. Then records without a bound
get one from DEST's probes (suite_record.py --rebound).
"""
import json
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(rec):
    return rec.get("bench"), rec.get("scale"), rec.get("variant")


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit("usage: suite_merge.py DEST CALL_DIR=COMMIT ...")
    dest = sys.argv[1]
    records = {key(r): r for r in load(os.path.join(dest, "suite.jsonl"))}
    budget = None
    for arg in sys.argv[2:]:
        call, commit = arg.rsplit("=", 1)
        for rec in load(os.path.join(call, "suite.jsonl")):
            rec.setdefault("code", commit)
            if str(rec.get("bound_note", "")).startswith("no bound"):
                rec.pop("bound_note")  # made where no probe ran: bounded below
                rec.pop("bound_seconds", None)
            records[key(rec)] = rec
            budget = rec.get("budget_bytes", budget)
        for name in ("probe.json", "sparse-probe.json", "gather-probe.jsonl", "overhead.jsonl", "machine.txt"):
            if os.path.exists(os.path.join(call, name)):
                shutil.copy(os.path.join(call, name), os.path.join(dest, name))
        for sub in ("logs", "diag"):
            if os.path.isdir(os.path.join(call, sub)):
                shutil.copytree(os.path.join(call, sub), os.path.join(dest, sub), dirs_exist_ok=True)
    with open(os.path.join(dest, "suite.jsonl"), "w") as f:
        for rec in records.values():
            f.write(json.dumps(rec) + "\n")
    if budget:
        subprocess.run([sys.executable, os.path.join(here, "suite_record.py"), "--rebound", dest,
                        "--budget", str(budget)], check=True)


if __name__ == "__main__":
    main()
