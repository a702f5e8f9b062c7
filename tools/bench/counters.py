"""Access counters against the launch scan alone, in ember-sim.

    python3 tools/bench/counters.py [--sim build/bin/ember-sim] [--out FILE] [--only REGEX] [--jobs N]

Replays the recorded real-program traces (tools/bench/results/suite/diag:
transformers generate() and llama.cpp at 1.5x, each as recorded under
static and under adaptive; the MoE model, k-means, BFS and the star
queries as recorded under adaptive; the wavefront, nw.cu, under both at
both sizes, its launches reading what the built-in nw reads (ember-sim
--kernel-reads); the older bfs and star ones) and runs every
built-in workload at 0.5x and 1.5x of a 16 GiB budget, the Needleman-Wunsch
wavefront (nw: the launch scan credits whole allocations; nw-scalar: it
credits one region of each matrix) among them. Each case runs Ember-adaptive

  - scan:            the launch scan alone (a stock driver);
  - counters:        with the access-counter model, its notifications taken
                     by the shim's reader (shim/signal/counters.c) when the
                     event queue is drained as the shim drains it: by the
                     worker after its passes and at least every 100 ms, and
                     when a launch finds notifications in the queue, by the
                     worker it wakes, 50 us later (uvm_events.c,
                     ember_uvm_events_at_launch);
  - counters_prompt: the same with each launch's notifications delivered
                     when it ends (counter_drain_ms=0): the bound on
                     delivery;
  - counters_worker: the worker's own drains only (counter_nudge=0), as the
                     shim drained the queue before launches woke it;

and, for reference, static, mapped and everything resident. One JSON object
per case goes to the output (default tools/bench/results/counters.jsonl),
in a fixed order; the model is deterministic, so the file regenerates
byte for byte. A table goes to stdout.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIAG = os.path.join("tools", "bench", "results", "suite", "diag")
TRACES = ["hf-llama-1.5-static", "hf-llama-1.5-adaptive", "llama-cpp-1.5-static", "llama-cpp-1.5-adaptive",
          "bfs-static", "bfs-mapped", "star-static", "star-mapped",
          "hf-mixtral-1.5-adaptive", "kmeans-1.5-adaptive", "bfs-0.5-adaptive", "bfs-1.5-adaptive",
          "star-1.5-adaptive", "nw-0.5-static", "nw-0.5-adaptive", "nw-1.5-static", "nw-1.5-adaptive"]
# A wavefront trace names each matrix whole at every launch (its kernels get base pointers only, so the
# scan credits whole allocations): replayed as is, every launch would read 8 or 24 GB. Its launches read
# what ember-sim's model of the same program (nw.cu, the built-in nw) reads; the rest is as recorded.
KERNEL_READS = {"nw-0.5-static": "nw", "nw-0.5-adaptive": "nw", "nw-1.5-static": "nw", "nw-1.5-adaptive": "nw"}
# Not pathfinder's traces: each of its launches names the whole wall, and a replay charges what a launch
# names as read, so its replays take thousands of seconds (3,796 s at 1.5x, against 0.37 on the H200).
WORKLOADS = ["reread", "strided", "random", "window", "phase", "decode", "scan", "wavefront", "nw", "nw-scalar"]
BUDGET = 16 << 30
SIZES = [(0.5, "8G"), (1.5, "24G")]
SEED = "7"
MODES = {
    "scan": ["--variant", "adaptive"],
    "counters": ["--variant", "adaptive", "--param", "counters=1"],
    "counters_prompt": ["--variant", "adaptive", "--param", "counters=1", "--param", "counter_drain_ms=0"],
    "counters_worker": ["--variant", "adaptive", "--param", "counters=1", "--param", "counter_nudge=0"],
    "static": ["--variant", "static"],
    "mapped": ["--variant", "mapped"],
    "resident": ["--variant", "resident"],
}
KEEP = ["sim_seconds", "window_seconds", "bytes_promoted", "bytes_demoted", "migrations", "launches",
        "notifications", "credited", "repeats", "withheld"]


def cases():
    for t in TRACES:
        yield {"case": t, "source": "trace", "trace": os.path.join(DIAG, t + ".trace.gz"),
               "kernel_reads": KERNEL_READS.get(t)}
    for w in WORKLOADS:
        for ratio, ws in SIZES:
            yield {"case": "%s@%gx" % (w, ratio), "source": "built-in", "workload": w, "working_set_arg": ws,
                   "ratio_arg": ratio}


def command(sim, case, mode):
    if case["source"] == "trace":
        src = ["--trace", os.path.join(ROOT, case["trace"])]
        if case["kernel_reads"]:
            src += ["--kernel-reads", case["kernel_reads"]]
    else:
        src = ["--workload", case["workload"], "--working-set", case["working_set_arg"], "--budget", "16G",
               "--seed", SEED]
    return [sim] + src + MODES[mode] + ["--json"]


def run_one(sim, case, mode):
    if case["source"] == "trace" and mode == "resident" and not case["kernel_reads"]:
        return None  # not run: a trace's "everything resident" is what its recorded run measured
    out = subprocess.run(command(sim, case, mode), check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "bin", "ember-sim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tools", "bench", "results", "counters.jsonl"))
    ap.add_argument("--only", help="run only the cases whose name matches this regular expression")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    todo = [c for c in cases() if not a.only or re.search(a.only, c["case"])]
    if not todo:
        sys.exit("counters.py: no case matches --only %s" % a.only)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {(c["case"], m): pool.submit(run_one, a.sim, c, m) for c in todo for m in MODES}
        results = {k: f.result() for k, f in futures.items()}
    rows = []
    for c in todo:
        row = {"bench": "counters", "case": c["case"], "source": c["source"]}
        first = results[(c["case"], "scan")]
        if c["source"] == "trace":
            row["trace"] = c["trace"]
            if c["kernel_reads"]:
                row["kernel_reads"] = c["kernel_reads"]
        else:
            row["workload"] = c["workload"]
        row["working_set"] = first["working_set"]
        row["budget"] = first["budget"]
        row["ratio"] = first["ratio"]
        for m in MODES:
            r = results[(c["case"], m)]
            if r is not None:
                row[m] = {k: r[k] for k in KEEP if k in r}
        s, k, p = row["scan"], row["counters"], row["counters_prompt"]
        # the timed window (a trace's timed phase, nw's last run, else from the first launch): scan / counters
        row["speedup_counters"] = round(s["window_seconds"] / k["window_seconds"], 4) if k["window_seconds"] else None
        row["speedup_counters_prompt"] = (round(s["window_seconds"] / p["window_seconds"], 4)
                                          if p["window_seconds"] else None)
        w = row["counters_worker"]
        row["speedup_counters_worker"] = (round(s["window_seconds"] / w["window_seconds"], 4)
                                          if w["window_seconds"] else None)
        rows.append(row)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=False) + "\n")
    gib = float(1 << 30)
    print("%-24s %10s %10s %10s %8s %8s %8s  %s" % ("case", "scan s", "counters", "prompt", "x", "x prompt",
                                                    "x worker", "promoted/demoted GiB: scan | counters | prompt"))
    for row in rows:
        s, k, p = row["scan"], row["counters"], row["counters_prompt"]
        print("%-24s %10.4f %10.4f %10.4f %8.3f %8.3f %8.3f  %.1f/%.1f | %.1f/%.1f | %.1f/%.1f" % (
            row["case"], s["window_seconds"], k["window_seconds"], p["window_seconds"], row["speedup_counters"] or 0,
            row["speedup_counters_prompt"] or 0, row["speedup_counters_worker"] or 0,
            s["bytes_promoted"] / gib, s["bytes_demoted"] / gib,
            k["bytes_promoted"] / gib, k["bytes_demoted"] / gib, p["bytes_promoted"] / gib,
            p["bytes_demoted"] / gib))
    print("wrote %s (%d cases)" % (os.path.relpath(a.out), len(rows)))


if __name__ == "__main__":
    main()
