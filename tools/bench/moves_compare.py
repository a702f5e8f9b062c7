"""What a recorded run moved, beside what its replay moved, allocation by allocation.

    python3 moves_compare.py TRACE[.gz] MOVES [--variant V]

TRACE is an EMBER_TRACE file; MOVES is what `ember-sim --trace TRACE
--moves MOVES` wrote (its M lines after a '# variant' line; --variant picks
one, by default the first). For each allocation of the trace: its size, and
for the recording and the replay, the moves and bytes promoted and demoted
and when it was first promoted, in seconds after that side's first move
(a replay's clock runs apart from the recording's: its advice costs, its
kernels). The allocations whose first promotion differs by more than
100 ms, or that only one side promoted, come first, marked *: where a
replay and the GPU part ways.
"""
import argparse
import gzip
import sys

REGION = 2 << 20


def region_bytes(size, first, count):
    end = min(size, (first + count) * REGION)
    return max(0, end - first * REGION)


def tally(lines, sizes):
    """{alloc id: [promotions, bytes promoted, demotions, bytes demoted, first promotion or None]}, the first
    promotion in ns after the side's first move: a replay's clock runs apart from the recording's"""
    out = {}
    t0 = min((int(f[1]) for f in lines), default=0)
    for f in lines:
        t, aid, first, count, kind = int(f[1]) - t0, int(f[2]), int(f[3]), int(f[4]), f[5]
        row = out.setdefault(aid, [0, 0, 0, 0, None])
        b = region_bytes(sizes.get(aid, 0), first, count)
        if kind == "P":
            row[0] += 1
            row[1] += b
            row[4] = t if row[4] is None else min(row[4], t)
        else:
            row[2] += 1
            row[3] += b
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("moves")
    ap.add_argument("--variant")
    a = ap.parse_args()
    opener = gzip.open if a.trace.endswith(".gz") else open
    sizes, recorded = {}, []
    with opener(a.trace, "rt") as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[0] == "A":
                sizes[int(p[2])] = int(p[4])
            elif len(p) >= 6 and p[0] == "M" and p[5] in ("P", "D") and (len(p) < 7 or p[6] == "1"):
                recorded.append(p)  # a move the driver carried out (its seventh field: ok)
    replayed, variant, chosen = [], None, None
    with open(a.moves) as f:
        for line in f:
            p = line.split()
            if p and p[0] == "#":
                variant = p[1] if len(p) > 1 else ""
                if chosen is None and (a.variant is None or variant == a.variant):
                    chosen = variant
                continue
            if p and p[0] == "M" and variant == chosen and chosen is not None:
                replayed.append(p)
    if chosen is None:
        sys.exit(f"moves_compare: no '# {a.variant}' section in {a.moves}" if a.variant else
                 f"moves_compare: {a.moves} has no '# variant' line: not ember-sim --moves output")
    rec, rep = tally(recorded, sizes), tally(replayed, sizes)

    def first(row):
        return None if not row or row[4] is None else row[4] / 1e9

    def apart(aid):
        r, s = first(rec.get(aid)), first(rep.get(aid))
        return (r is None) != (s is None) or (r is not None and abs(r - s) > 0.1)

    print(f"replay: {chosen}; MiB promoted / demoted (moves), and the first promotion (s after the first move)")
    print(f"{'alloc':>5} {'size MiB':>10} | {'recorded':^34} | {'replayed':^34}")
    for aid in sorted(sizes, key=lambda i: (not apart(i), i)):
        cols = []
        for t in (rec, rep):
            row = t.get(aid, [0, 0, 0, 0, None])
            when = f"{row[4] / 1e9:.3f}" if row[4] is not None else "never"
            cols.append(f"{row[1] / 2**20:9.0f} / {row[3] / 2**20:7.0f} ({row[0]}/{row[2]}) {when:>7}")
        mark = " *" if apart(aid) else ""
        print(f"{aid:>5} {sizes[aid] / 2**20:>10.1f} | {cols[0]:>34} | {cols[1]:>34}{mark}")


if __name__ == "__main__":
    main()
