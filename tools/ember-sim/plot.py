#!/usr/bin/env python3
"""Plots an ember-sim sweep (JSON lines) as time against working set / budget.

usage: plot.py SWEEP.jsonl OUT.png
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: plot.py SWEEP.jsonl OUT.png", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display on servers
        import matplotlib.pyplot as plt
    except ImportError:
        print("ember-sim: --plot needs matplotlib (pip install matplotlib); use --sweep for the numbers",
              file=sys.stderr)
        return 3
    series = {}
    workload = budget = None
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            workload, budget = r["workload"], r["budget"]
            series.setdefault(r["variant"], []).append((r["working_set"] / r["budget"], r["sim_seconds"]))
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, pts in series.items():
        xs, ys = zip(*sorted(pts))
        ax.plot(xs, ys, marker="o", label=name)
    ax.axvline(1.0, color="grey", linestyle=":", label="VRAM line")
    ax.set_yscale("log")
    ax.set_xlabel("working set / budget")
    ax.set_ylabel("simulated time [s]")
    ax.set_title("%s, budget %.1f GiB" % (workload, (budget or 0) / 2**30))
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
