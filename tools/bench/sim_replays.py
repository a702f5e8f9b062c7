"""The replays of the recorded traces (the H200's, and some H100 calls') that the results README cites, as records.

    python3 sim_replays.py EMBER_SIM OUT.jsonl

One JSON line per replay: ember-sim's own record (--json) plus what was
replayed (trace, kernel_reads, launches, watermarks, burst) and, for the
trace's own variant, what the GPU recorded of the same run (recorded_gpu
names the card): its moves (the trace's stats.json beside it) and its timed
window (recorded_window_seconds: from the last ember_flush a launch follows
to the end of the last wait after that phase's launches, the rule ember-sim's
window follows). The traces are tools/bench/results/suite/diag and the
calls' folders named below; every replay uses the built-in H200 profile.
Groups (the "group" field):
  moves        each adaptive 1.5x trace, sync and async: moves against the H200's
  burst        star's trace with its first run issued 1 ms apart (trace_burst.py), async, both watermarks
  watermarks   each 1.5x trace, static and adaptive, async, 90/85 against 97/93
  models       pathfinder and hf-mixtral with and without their --kernel-reads, sync
  recorded     each adaptive 1.5x trace, and bfs's three from ab-33's call 1 (5e07a3b, before the
               per-cycle rule's touches of one cycle), --launches recorded: the policy's moves on the
               H200's own clock against the H200's
  radix        radix's 1.5x traces from ab-37's calls 6 and 7 (adaptive), async and recorded: whether the
               buffers its passes read four times a run take the room of its input, read once
  scan-types   llama.cpp's trace with its weights' ranges as the scan now credits them (trace_ranges.py):
               the output norm at the buffer's base a 20 KiB piece (eb80af3), alone, and with it the F16
               matrix kernels' ranges halved (their mangled names declare __half, 051153a); adaptive,
               async and on the recorded clock
  partial-rank the radix and scan-types replays, and each adaptive 1.5x trace on its recorded clock (as in
               recorded), with EMBER_PARTIAL_RANK=1: hot regions a launch covered in part ranked at half their demand
  pieces       EMBER_PIECES (regions covered in part credited their parts, a guessed extent ending at the
               next piece, per-cycle ranks between cycles alike) against the default: llama.cpp's trace of
               ab-40's call 6 (an H100 at 2cdfa8d) as recorded and with its fused gate pointer's ranges as
               the rule takes them (--piece, the gate alone, not through the up tensor behind it), async
               and on the recorded clock, and under EMBER_PARTIAL_RANK as well; radix's traces, async and recorded; each adaptive 1.5x trace recorded
  gpu-pieces   cnn's and radix's traces of ab-44's call 4 (an H100 at b357850, five runs a process) and of
               ab-45's call 3 (an H100 at eb41528, under the per-cycle reference rule), one under the
               defaults and one under EMBER_PIECES each, replayed both ways, async and recorded: whether the
               replay's moves are the GPU's
  train        train_step.py's traces at 1.5x (adaptive; ab-58's call 1 an H100 at 7220cd8, ab-59's call 1 an
               H100 at 88978159, ab-60's calls 2 and 3 an H100 and call 5 an H200, each at 2010ffbf and at
               49af0584, whose scan reads PyTorch's tensor lists by their blocks), sync, async and
               recorded: the moves against the GPU's
  first-run    star's traces from ab-26's call 1, ab-27's call 7, ab-28's call 8 and ab-29's call 1 (the H200,
               97/93 and 90/85; ab-29's under the exchange of df189a5),
               async with --kernel-reads star: when
               the columns' fill and the dimension tables arrived, in the replay and on the H200
"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

import trace_burst
import trace_ranges

DIAG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "suite", "diag")
SUITE = os.path.dirname(DIAG)
# star's first runs on the H200 at 97/93 and 90/85, each traced (the later ones with EMBER_LOG=debug)
FIRST_RUNS = ("ab-26/call1/wm97-0", "ab-26/call1/wm90-0", "ab-27/call7/wm97-0", "ab-27/call7/wm90-17",
              "ab-28/call8/star-debug", "ab-29/call1/suite", "ab-30/call4/star-base-0", "ab-30/call4/star-head-0")
SPAN = 64 << 20  # EMBER_SPAN's default: an allocation no larger is a table that may be wanted
WATERMARKS = {"90/85": ("90", "85"), "97/93": ("97", "93")}
# what the scan credits llama.cpp's weights buffer (allocation 0 of diag's trace) with: its kernels 0 and 13
# (the output norm at the buffer's base) and its F16 matrix kernels 1, 9, 10, 14, 22 and 23
LLAMA_RESCANS = {
    "norm-piece": ["--piece", "0,13:25704878080:20480"],
    "norm-piece-f16": ["--piece", "0,13:25704878080:20480", "--scale", "1,9,10,14,22,23:0.5"],
}
# radix's sort at 1.5x under adaptive on the H200, traced
# EMBER_PARTIAL_RANK on: the partial-rank group replays these against radix, scan-types and recorded (off)
PARTIAL_RANK = ("partial_rank=1",)
RADIX_RUNS = ("ab-37/call6/radix-adaptive-0", "ab-37/call6/radix-adaptive-1", "ab-37/call7/radix-adaptive-0")
PIECES = ("pieces=1",)
# llama.cpp at 2cdfa8d (an H100, traced): its fused gate-and-up kernels (10, 23) credit the gate tensor at four
# bytes an element, 283 MB through the up tensor behind it; under EMBER_PIECES the 141 MB of the gate alone
LLAMA_TRACED = os.path.join(SUITE, "ab-40", "call6", "llama-head-traced.trace.gz")
LLAMA_GATE = "10,23:283115520:141557760"
# cnn and radix traced on an H100 under the defaults (head) and under EMBER_PIECES (pieces), five runs each
GPU_PIECES = ("ab-44/call4/cnn-head-0", "ab-44/call4/cnn-pieces-0", "ab-44/call4/radix-head-0",
              "ab-44/call4/radix-pieces-0", "ab-45/call3/cnn-head-0", "ab-45/call3/cnn-pieces-0",
              "ab-45/call3/radix-head-0", "ab-45/call3/radix-pieces-0")

# train_step.py's traced processes (their trace and stats.json beside each other)
TRAIN_RUNS = ("ab-58/call1/train/adaptive-1.5", "ab-59/call1/train/adaptive-head-1",
              "ab-60/call2/train/adaptive-base-1", "ab-60/call2/train/adaptive-head-1",
              "ab-60/call3/train/adaptive-base-4", "ab-60/call3/train/adaptive-head-4",
              "ab-60/call5/train/adaptive-base-4", "ab-60/call5/train/adaptive-head-4")


def kernel_reads(name):
    """The in-place model of what the trace's kernels read, where one exists."""
    for prefix, model in (("nw-", "nw"), ("star-", "star"), ("pathfinder-", "pathfinder"), ("hf-mixtral-", "moe")):
        if name.startswith(prefix):
            return model
    return None


def card(trace):
    """The GPU that recorded the trace: the first line of gpu.txt in its call's folder (or one above), else the
    matrix's machine.txt (the H200 of the suite's own diag)."""
    d = os.path.dirname(os.path.abspath(trace))
    while d.startswith(SUITE) and d != SUITE:
        path = os.path.join(d, "gpu.txt")
        if os.path.exists(path):
            return open(path).readline().split(",")[0].strip()
        d = os.path.dirname(d)
    for line in open(os.path.join(SUITE, "machine.txt")):
        if line.startswith("GPU 0: "):
            return line[len("GPU 0: "):].split(" (")[0].strip()
    return None


def recorded(trace):
    """What the GPU recorded (recorded_gpu names it): moves from the stats beside the trace, and the timed
    window from the trace (read past the stack bytes that ab-37's radix traces hold in three L lines, fixed
    in 186a9d5)."""
    out = {"recorded_gpu": card(trace)}
    stats = trace[: -len(".trace.gz")] + ".stats.json"
    if os.path.exists(stats):
        dev = json.load(open(stats))["devices"][0]
        out.update(recorded_bytes_promoted=dev["bytes_promoted"], recorded_bytes_demoted=dev["bytes_demoted"])
    lines = [line.split() for line in gzip.open(trace, "rt", errors="replace")]
    mark = start = None
    for f in lines:
        if f and f[0] == "X":
            mark = int(f[1])
        elif f and f[0] == "L" and mark is not None:
            start = mark
    if start is None:
        return out
    end = None
    for f in lines:
        if len(f) < 2 or not f[1].isdigit() or int(f[1]) < start:
            continue
        t = int(f[1])
        if f[0] in ("F", "X") and t > start and end is not None:
            break
        if f[0] == "L":
            end = max(end or 0, t)
        elif f[0] == "W" and end is not None:
            end = max(end, int(f[2]))
    if end is not None:
        out["recorded_window_seconds"] = (end - start) / 1e9
    return out


def arrivals(sizes, moves):
    """From M lines (time id first count P|D ...): when the last small table first arrived (tables_in_seconds:
    a table demoted and promoted again in a later run counts at its first arrival) and when the fill completed
    (columns_in_seconds: the last promotion of a large allocation before the first demotion)."""
    moved = [(int(f[1]), int(f[2]), sizes.get(int(f[2]), 0), f[5]) for f in moves if f[0] == "M"]
    first_in = {}
    for t, ident, size, kind in moved:
        if kind == "P" and 0 < size <= SPAN:
            first_in[ident] = min(t, first_in.get(ident, t))
    if not first_in:
        return {}
    first_out = min([t for t, _, _, kind in moved if kind == "D"], default=None)
    columns = [t for t, _, size, kind in moved if kind == "P" and size > SPAN and (first_out is None or t < first_out)]
    return {"tables_in_seconds": max(first_in.values()) / 1e9,
            "columns_in_seconds": max(columns) / 1e9 if columns else None}


def replay(sim, trace, variant, launches="sync", model=None, marks=None, moves=None, params=()):
    cmd = [sim, "--trace", trace, "--variant", variant, "--launches", launches, "--json"]
    for p in params:
        cmd += ["--param", p]
    if moves:
        cmd += ["--moves", moves]
    if model:
        cmd += ["--kernel-reads", model]
    if marks:
        cmd += ["--param", f"high_watermark={marks[0]}", "--param", f"low_watermark={marks[1]}"]
    rec = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
    return rec


def main():
    sim, out_path = sys.argv[1:3]
    rows = []

    def add(group, trace, variant, launches="sync", model=None, marks=None, burst=False, label=None, params=()):
        name = label or os.path.basename(trace)[: -len(".trace.gz")]
        rec = replay(sim, trace, variant, launches, model, WATERMARKS[marks] if marks else None, params=params)
        rec.update(group=group, trace=name, kernel_reads=model, launches=launches, watermarks=marks or "recorded",
                   burst=burst, params=list(params))
        if not burst and name.endswith("-" + variant):
            rec.update(recorded(trace))
        rows.append(rec)
        print(f"{group:10} {name:26} {variant:8} {launches:5} {marks or '':5} {model or '':10} "
              f"{rec['window_seconds']:.3f} s", flush=True)

    adaptive = sorted(glob.glob(os.path.join(DIAG, "*-1.5-adaptive.trace.gz")))
    for trace in adaptive:
        if any(k in trace for k in ("star", "hf-", "llama-cpp")):
            for launches in ("sync", "async"):
                add("moves", trace, "adaptive", launches)
    star = os.path.join(DIAG, "star-1.5-adaptive.trace.gz")
    with tempfile.TemporaryDirectory() as tmp:
        burst = os.path.join(tmp, "star-burst.trace")
        trace_burst.main([star, burst])
        for marks in WATERMARKS:
            add("burst", burst, "adaptive", "async", "star", marks, burst=True, label="star-1.5-adaptive-burst")
    for trace in sorted(glob.glob(os.path.join(DIAG, "*-1.5-*.trace.gz"))):
        name = os.path.basename(trace)
        for variant in ("static", "adaptive"):
            for marks in WATERMARKS:
                add("watermarks", trace, variant, "async", kernel_reads(name), marks)
    for trace in (os.path.join(DIAG, "pathfinder-1.5-adaptive.trace.gz"),
                  os.path.join(DIAG, "hf-mixtral-1.5-adaptive.trace.gz")):
        for model in (None, kernel_reads(os.path.basename(trace))):
            for variant in ("resident", "static", "adaptive", "mapped"):
                add("models", trace, variant, "sync", model)
    for trace in adaptive + sorted(glob.glob(os.path.join(SUITE, "ab-33", "call1", "bfs-adaptive-*", "diag",
                                                          "bfs-1.5-adaptive.trace.gz"))):
        label = None
        if not trace.startswith(DIAG):
            label = os.path.relpath(os.path.dirname(os.path.dirname(trace)), SUITE) + "/bfs-1.5-adaptive"
        add("recorded", trace, "adaptive", "recorded", label=label)
    for run in RADIX_RUNS:
        for launches in ("async", "recorded"):
            add("radix", os.path.join(SUITE, run, "diag", "radix-1.5-adaptive.trace.gz"), "adaptive", launches,
                label=f"{run}/radix-1.5-adaptive")
    with tempfile.TemporaryDirectory() as tmp:
        for label, how in LLAMA_RESCANS.items():
            rescanned = os.path.join(tmp, f"llama-cpp-{label}.trace.gz")
            trace_ranges.main([os.path.join(DIAG, "llama-cpp-1.5-adaptive.trace.gz"), rescanned, "--alloc", "0"] + how)
            for launches in ("async", "recorded"):
                add("scan-types", rescanned, "adaptive", launches, label=f"llama-cpp-1.5-adaptive-{label}")
                add("partial-rank", rescanned, "adaptive", launches, label=f"llama-cpp-1.5-adaptive-{label}",
                    params=PARTIAL_RANK)
    for run in RADIX_RUNS:
        for launches in ("async", "recorded"):
            add("partial-rank", os.path.join(SUITE, run, "diag", "radix-1.5-adaptive.trace.gz"), "adaptive", launches,
                label=f"{run}/radix-1.5-adaptive", params=PARTIAL_RANK)
    for trace in adaptive:
        add("partial-rank", trace, "adaptive", "recorded", params=PARTIAL_RANK)
    with tempfile.TemporaryDirectory() as tmp:
        gate = os.path.join(tmp, "llama-gate.trace.gz")
        trace_ranges.main([LLAMA_TRACED, gate, "--alloc", "0", "--piece", LLAMA_GATE])
        # partial rank too: the H100's processes under it demoted 1.06-1.51 GB (ab-40's call 6), the replay's check
        for params in ((), PIECES, PARTIAL_RANK):
            for launches in ("async", "recorded"):
                add("pieces", LLAMA_TRACED, "adaptive", launches, label="ab-40/call6/llama-cpp-1.5-adaptive",
                    params=params)
                add("pieces", gate, "adaptive", launches, label="ab-40/call6/llama-cpp-1.5-adaptive-gate",
                    params=params)
    for run in RADIX_RUNS:
        for params in ((), PIECES):
            for launches in ("async", "recorded"):
                add("pieces", os.path.join(SUITE, run, "diag", "radix-1.5-adaptive.trace.gz"), "adaptive", launches,
                    label=f"{run}/radix-1.5-adaptive", params=params)
    for trace in adaptive:
        for params in ((), PIECES):
            add("pieces", trace, "adaptive", "recorded", params=params)
    for run in GPU_PIECES:
        bench = run.rsplit("/", 1)[1].split("-")[0]
        for params in ((), PIECES):
            for launches in ("async", "recorded"):
                add("gpu-pieces", os.path.join(SUITE, run, "diag", f"{bench}-1.5-adaptive.trace.gz"), "adaptive",
                    launches, label=f"{run}/{bench}-1.5-adaptive", params=params)
    for run in TRAIN_RUNS:
        for launches in ("sync", "async", "recorded"):
            add("train", os.path.join(SUITE, run + ".trace.gz"), "adaptive", launches,
                label=run.split("/train/")[0] + "/train-1.5-" + run.split("/train/")[1])
    for run in FIRST_RUNS:
        trace = os.path.join(SUITE, run, "diag", "star-1.5-adaptive.trace.gz")
        lines = [line.split() for line in gzip.open(trace, "rt", errors="replace")]
        sizes = {int(f[2]): int(f[4]) for f in lines if f and f[0] == "A"}
        with tempfile.TemporaryDirectory() as tmp:
            moves = os.path.join(tmp, "moves")
            rec = replay(sim, trace, "adaptive", "async", "star", moves=moves)
            with open(moves) as f:
                rec.update(arrivals(sizes, [line.split() for line in f if line.startswith("M ")]))
        h = arrivals(sizes, lines)
        rec.update(group="first-run", trace=f"{run}/star-1.5-adaptive", kernel_reads="star",
                   launches="async", watermarks="recorded", burst=False,
                   recorded_gpu=card(trace), recorded_tables_in_seconds=h.get("tables_in_seconds"),
                   recorded_columns_in_seconds=h.get("columns_in_seconds"))
        rows.append(rec)
        print(f"first-run  {run:32} tables in at {rec.get('tables_in_seconds')} s ({rec['recorded_gpu']} "
              f"{rec['recorded_tables_in_seconds']}), columns {rec.get('columns_in_seconds')} (recorded "
              f"{rec['recorded_columns_in_seconds']})", flush=True)
    with open(out_path, "w") as f:
        for rec in rows:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
