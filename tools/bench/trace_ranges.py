#!/usr/bin/env python3
"""A recorded trace with one allocation's launch ranges as another scan would have credited them.

    trace_ranges.py IN OUT --alloc ID [--scale KERNELS:FACTOR] [--piece KERNELS:WHOLE:BYTES]

--scale multiplies by FACTOR the ranges of 1 MiB or more that the listed kernels (the trace's kernel
numbers, comma-separated) credit in allocation ID: a count the scan took as 4-byte elements that the
kernel's name declares 2-byte (FACTOR 0.5). --piece replaces a range of exactly WHOLE bytes credited
by the listed kernels with BYTES: a pointer at the allocation's base taken for the whole of it, where
the scan now takes a piece. Repeatable. Other lines are copied as they are; lines that are not text
(the stack bytes of 186a9d5's fix) are copied through with their bytes replaced.
"""
import argparse
import gzip


def kernels_and(spec, arity):
    parts = spec.split(":")
    if len(parts) != arity:
        raise argparse.ArgumentTypeError(f"{spec}: want {arity} fields separated by ':'")
    return set(parts[0].split(",")), parts[1:]


def rewrite(src_path, out_path, alloc, scales=(), pieces=()):
    """Copy src_path to out_path with alloc's ranges rescanned: scales are (kernels, [factor]) and pieces
    (kernels, [whole, bytes]), as kernels_and parses --scale and --piece. Returns how many changed."""
    opener = gzip.open if out_path.endswith(".gz") else open
    changed = 0
    with gzip.open(src_path, "rt", errors="replace") as src, opener(out_path, "wt") as out:
        for line in src:
            f = line.split()
            if len(f) > 5 and f[0] == "L":
                ranges = []
                for r in f[5:]:
                    p = r.split(":")
                    if len(p) >= 3 and p[0] == alloc and p[2].isdigit():
                        size = int(p[2])
                        for kernels, (factor,) in scales:
                            if f[3] in kernels and size >= 1 << 20:
                                size = int(size * float(factor))
                        for kernels, (whole, piece) in pieces:
                            if f[3] in kernels and size == int(whole):
                                size = int(piece)
                        if size != int(p[2]):
                            p[2] = str(size)
                            changed += 1
                    ranges.append(":".join(p))
                line = " ".join(f[:5] + ranges) + "\n"
            out.write(line)
    return changed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--alloc", required=True)
    ap.add_argument("--scale", action="append", default=[], type=lambda s: kernels_and(s, 2))
    ap.add_argument("--piece", action="append", default=[], type=lambda s: kernels_and(s, 3))
    args = ap.parse_args(argv)
    changed = rewrite(args.src, args.out, args.alloc, args.scale, args.piece)
    print(f"trace_ranges: {changed} ranges changed")


if __name__ == "__main__":
    main()
