#!/usr/bin/env python3
"""Refresh the matrix's stalest kernel cells: plan a device call, then merge what it brought back.

    suite_cells.py plan [--seconds N] [--rounds K] [--name NAME] [--older-than REV] [--results DIR]
    suite_cells.py merge CALL_DIR COMMIT [--results DIR]

The matrix's records come from many device calls, and a record measured
code older than a later fix does not show it (the report lists each
record's code). `plan` prints a call script for device-call.sh that re-runs
the kernel cells (the suite's workloads; not hf or llama.cpp, which have
helpers of their own) whose records measured the oldest code, a (workload,
size) at a time with resident, static, adaptive and the program's own
hints, so that the variants that the criteria compare are measured in the
same call: a process per variant in turn, K rounds, the order turning each
round. A group is as old as its Ember records' code (resident and hints run
without Ember); groups older than REV (default: the newest code among the
records) are taken oldest first while their records' own wall times fit N
seconds. Off and mapped, which no criterion compares with
another variant at the same size (mapped takes minutes), are left out.

`merge` reads such a call's cells (CALL_DIR/W-SCALE-VARIANT-ROUND/suite.jsonl)
and makes one record per cell: the median of its processes' medians, each
process's median in runs_seconds (suite_record.from_kernel_processes), the
bytes moved by their median, stamped with COMMIT. Each replaces the
matrix's record of that cell in DIR/suite.jsonl, whose bound is then drawn
again from DIR's probes (suite_record.py --rebound), as are the bounds of
the other records of its (workload, size), which take its resident run's
compute. Records of another
card than the matrix's are refused: the matrix is one GPU's.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import suite_record  # noqa: E402

RESULTS = os.path.join(here, "results", "suite")
# the variants a group re-runs, in a round's order before it turns: Ember's, and what the criteria compare them with
VARIANTS = ("resident", "static", "adaptive", "hints")
EMBER = ("static", "adaptive")  # whose code makes a group stale: the others run without Ember
CELL_OVERHEAD = 2  # seconds a cell costs beyond its record's wall time: start-up, packing (ab-43's calls 7 and 8)
BOUND_FIELDS = ("bound_seconds", "bound_note", "bound_warm_seconds", "link_warm_seconds",
                "link_bound_tokens_per_second")


def load(path):
    """Every line as JSON, or an error: suite_record.load_jsonl skips what does not parse, and a merge writes the
    matrix back, so a line skipped would be a record lost."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def commit_time(code, cache={}):
    """When code was committed (seconds since the epoch); 0, the stalest, for a code git does not know."""
    if code not in cache:
        try:
            out = subprocess.run(["git", "-C", here, "log", "-1", "--format=%ct", code, "--"],
                                 capture_output=True, text=True, check=True).stdout.strip()
            cache[code] = int(out) if out else 0
        except (subprocess.CalledProcessError, ValueError):
            cache[code] = 0
    return cache[code]


def kernel_groups(rows):
    """Each kernel (bench, scale)'s records of VARIANTS, with the commit time of its Ember records' oldest code."""
    groups = {}
    for r in rows:
        b = r.get("bench")
        if "scale" not in r or not b or b.startswith(("hf-", "llama")) or r.get("variant") not in VARIANTS:
            continue
        groups.setdefault((b, r["scale"]), []).append(r)
    return {g: (min((commit_time(r.get("code", "")) for r in rs if r["variant"] in EMBER), default=0), rs)
            for g, rs in groups.items()}


def plan(args):
    rows = load(os.path.join(args.results, "suite.jsonl"))
    groups = sorted(kernel_groups(rows).items(), key=lambda kv: (kv[1][0], kv[0]))
    # groups measured at the newest code are fresh, unless --older-than says which code is
    newest = (commit_time(args.older_than) if args.older_than else
              max((commit_time(r.get("code", "")) for r in rows if r.get("variant") in EMBER), default=0))
    taken, spent = [], 0
    for (bench, scale), (when, rs) in groups:
        if when >= newest:
            continue
        cost = args.rounds * sum((r.get("wall_seconds") or 0) + CELL_OVERHEAD for r in rs)
        if spent + cost > args.seconds:
            continue
        taken.append((bench, scale, [v for v in VARIANTS if any(r["variant"] == v for r in rs)],
                      sorted({r.get("code", "?") for r in rs})))
        spent += cost
    lines = ["#!/usr/bin/env bash",
             f"# Made by suite_cells.py plan --seconds {args.seconds} --rounds {args.rounds}: the stalest kernel cells,",
             "# a (workload, size) at a time with its variants, a process per variant in turn, the order turning",
             f"# each round; about {spent} s by the records' wall times. Pack with EMBER_PACK_TESTS=0; carry build-gpu.",
             "# Then: suite_cells.py merge CALL_DIR COMMIT.",
             f"source tools/bench/device-call.sh {args.name}"]
    for bench, scale, variants, codes in taken:
        lines.append(f"# {bench} {scale}x, measured at {', '.join(codes)}")
        lines.append(f"for round in $(seq 0 {args.rounds - 1}); do")
        lines.append(f"  order=\"{' '.join(variants)}\"")
        lines.append("  [ $((round % 2)) = 1 ] && order=$(echo $order | tr ' ' '\\n' | tac | tr '\\n' ' ')")
        lines.append(f"  for v in $order; do time_left 30 && cell {bench} {scale} $v $round; done")
        lines.append("done")
    lines.append("finish")
    print("\n".join(lines))
    if not taken:
        print("suite_cells: no group fits", args.seconds, "seconds", file=sys.stderr)
    return 0


CELL = re.compile(r"^(?P<bench>[a-z]+)-(?P<scale>[0-9.]+)-(?P<variant>[a-z]+)-(?P<round>[0-9]+)$")


def merged(records, commit):
    """One cell's records (a process each) as one record of the matrix."""
    done = [r for r in records if "error" not in r and "seconds" in r]
    if not done:
        return records[0] if records else None
    rec = suite_record.from_kernel_processes(done)
    if len(done) > 1:
        for k in ("h2d_bytes", "d2h_bytes", "wall_seconds"):
            if all(k in r for r in done):
                rec[k] = statistics.median(r[k] for r in done)
    for k in BOUND_FIELDS:
        rec.pop(k, None)
    rec["code"] = commit
    return rec


def merge(args):
    cells = {}
    for path in sorted(glob.glob(os.path.join(args.call_dir, "*", "suite.jsonl"))):
        m = CELL.match(os.path.basename(os.path.dirname(path)))
        if not m:
            continue
        for r in load(path):
            if r.get("bench") == m["bench"] and r.get("variant") == m["variant"]:
                cells.setdefault((m["bench"], float(m["scale"]), m["variant"]), []).append(r)
    if not cells:
        sys.exit(f"suite_cells: no cells (W-SCALE-VARIANT-ROUND/suite.jsonl) under {args.call_dir}")
    dest = os.path.join(args.results, "suite.jsonl")
    rows = load(dest)
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), None)
    budget = next((r["budget_bytes"] for r in rows if r.get("budget_bytes")), None)
    for key, recs in sorted(cells.items()):
        other = {r.get("gpu") for r in recs if r.get("gpu")} - {gpu}
        if gpu and other:
            sys.exit(f"suite_cells: {key[0]} {key[1]}x {key[2]} ran on {', '.join(sorted(other))}, "
                     f"the matrix on {gpu}: not merged")
    for (bench, scale, variant), recs in sorted(cells.items()):
        rec = merged(recs, args.commit)
        rows = [r for r in rows if (r.get("bench"), r.get("scale"), r.get("variant")) != (bench, scale, variant)]
        rows.append(rec)
        for r in rows:  # a group's bounds take its resident run's compute: all of them are drawn again
            if (r.get("bench"), r.get("scale")) == (bench, scale):
                for k in BOUND_FIELDS:
                    r.pop(k, None)
        print(f"suite_cells: {bench} {scale}x {variant}: {rec.get('seconds', rec.get('error'))} "
              f"({rec.get('processes', 1)} processes, {args.commit})")
    with open(dest, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    suite_record.rebound(args.results, budget)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("plan", help="print a device call's script that re-runs the stalest kernel cells")
    p.add_argument("--seconds", type=int, default=480, help="the call's time for cells (default 480)")
    p.add_argument("--rounds", type=int, default=2, help="processes per variant, in turn (default 2)")
    p.add_argument("--name", default="cells", help="the call's name for device-call.sh (default cells)")
    p.add_argument("--older-than", metavar="REV",
                   help="only groups whose Ember records measured code older than REV (default: the newest code "
                        "among the records)")
    p.add_argument("--results", default=RESULTS)
    m = sub.add_parser("merge", help="merge a call's cells into the matrix")
    m.add_argument("call_dir")
    m.add_argument("commit")
    m.add_argument("--results", default=RESULTS)
    args = ap.parse_args()
    if args.what == "plan" and (args.seconds <= 0 or args.rounds <= 0):
        ap.error("--seconds and --rounds must be positive")
    return plan(args) if args.what == "plan" else merge(args)


if __name__ == "__main__":
    sys.exit(main())
