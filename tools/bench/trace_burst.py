"""A recorded trace with one run's launches issued in a burst, as a faster host issues them.

    python3 trace_burst.py IN.trace[.gz] OUT.trace [--run N] [--apart-us US]

A run is what follows the trace's Nth X line (ember_flush) up to the next
one (N from 1, default 1). Its launches are moved to the first one's time
plus US microseconds each (default 1000: star's eight queries went out in
11 ms on the H200 at 4b31bf6, in 0.5 s when db9923b's trace was recorded),
and the run's recorded waits that the moved launches now pass are dropped:
the host no longer waited there. Everything else is kept. For replays with
ember-sim --launches async, where the policy sees launches at the host's
time (tools/bench/results/suite/README.md, eleventh session).
"""
import argparse
import gzip
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--run", type=int, default=1)
    ap.add_argument("--apart-us", type=int, default=1000)
    a = ap.parse_args(argv)
    opener = gzip.open if a.trace.endswith(".gz") else open
    with opener(a.trace, "rt") as f:
        lines = f.read().splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith("X ")]
    if not 1 <= a.run <= len(marks):
        sys.exit(f"trace_burst: the trace has {len(marks)} X lines, no run {a.run}")
    start = marks[a.run - 1]
    end = marks[a.run] if a.run < len(marks) else len(lines)
    launches = [i for i in range(start, end) if lines[i].startswith("L ")]
    if not launches:
        sys.exit(f"trace_burst: run {a.run} has no launch")
    t0 = int(lines[launches[0]].split()[1])
    last = t0 + (len(launches) - 1) * a.apart_us * 1000
    moved = {i: t0 + k * a.apart_us * 1000 for k, i in enumerate(launches)}  # line: its launch's new time
    last_recorded = int(lines[launches[-1]].split()[1])
    out = []
    for i, line in enumerate(lines):
        f = line.split()
        if i in moved:
            f[1] = str(moved[i])
            line = " ".join(f)
        elif start < i < end and f[0] == "W" and t0 <= int(f[1]) < last_recorded:
            continue  # a wait between launches that now go out together
        out.append(line)
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"trace_burst: run {a.run}: {len(launches)} launches within {(last - t0) / 1e6:.1f} ms")


if __name__ == "__main__":
    main()
