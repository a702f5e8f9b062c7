"""What would Ember do for my job at 4x my GPU's memory? One plot, from ember-sim.

    python3 what_if.py EMBER_SIM TRACE OUT.png [OUT.jsonl]

The left panel replays a recorded run (EMBER_TRACE; by default the H200
recording of transformers generate() on a 26 GB Llama-13B shape) with the
GPU's budget shrunk from 2x the working set down to a quarter of it, under
stock UVM, Ember-mapped, Ember-static and Ember-adaptive. The right panel
does the same for the simulator's built-in workloads at 4x. Every point is
simulated with the default (H200, PCIe Gen5) profile; lower is better.
"""
import json
import subprocess
import sys

VARIANTS = ["uvm", "mapped", "static", "adaptive"]
LABELS = {"uvm": "stock UVM (off)", "mapped": "Ember mapped", "static": "Ember static", "adaptive": "Ember adaptive"}
RATIOS = [0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0]
WORKLOADS = ["decode", "reread", "random", "scan", "window", "wavefront"]


def sim(args):
    out = subprocess.run(args + ["--json"], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    ember_sim, trace, png = sys.argv[1:4]
    jsonl = sys.argv[4] if len(sys.argv) > 4 else None
    records = []
    ws = sim([ember_sim, "--trace", trace, "--variant", "mapped"])[0]["working_set"]
    for ratio in RATIOS:
        budget = int(ws / ratio) // (2 << 20) * (2 << 20)
        for r in sim([ember_sim, "--trace", trace, "--variant", ",".join(VARIANTS), "--budget", str(budget)]):
            r.update(panel="trace", ratio=ratio, trace=trace.rsplit("/", 1)[-1])
            records.append(r)
    for w in WORKLOADS:
        for r in sim([ember_sim, "--workload", w, "--working-set", "64G", "--budget", "16G",
                      "--variant", ",".join(VARIANTS)]):
            r.update(panel="builtin", ratio=4.0)
            records.append(r)
    if jsonl:
        with open(jsonl, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.1, 1]})
    for v in VARIANTS:
        pts = sorted((r["ratio"], r["window_seconds"]) for r in records if r["panel"] == "trace" and r["variant"] == v)
        left.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=LABELS[v])
    left.axvline(1.0, color="grey", linestyle=":")
    left.set_yscale("log")
    left.set_xlabel("working set / GPU budget (26 GB model; 4 = a 6.5 GB GPU)")
    left.set_ylabel("simulated time of 8 generated tokens [s] (lower is better)")
    left.set_title("transformers generate(), Llama-13B shape, recorded on an H200")
    left.legend()
    width = 0.2
    for i, v in enumerate(VARIANTS):
        ys = [next(r["sim_seconds"] for r in records if r["panel"] == "builtin" and r["workload"] == w and r["variant"] == v)
              for w in WORKLOADS]
        right.bar([k + (i - 1.5) * width for k in range(len(WORKLOADS))], ys, width, label=LABELS[v])
    right.set_xticks(range(len(WORKLOADS)))
    right.set_xticklabels(WORKLOADS)
    right.set_yscale("log")
    right.set_ylabel("simulated time [s] (lower is better)")
    right.set_title("built-in workloads at 4x: 64 GiB on a 16 GiB budget")
    right.legend(fontsize=8)
    fig.suptitle("ember-sim, default H200 profile (PCIe Gen5)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    for w in WORKLOADS:
        row = {r["variant"]: r["sim_seconds"] for r in records if r["panel"] == "builtin" and r["workload"] == w}
        print(f"{w:10} " + "  ".join(f"{v} {row[v]:9.3f}s" for v in VARIANTS))
    for ratio in RATIOS:
        row = {r["variant"]: r["window_seconds"] for r in records if r["panel"] == "trace" and r["ratio"] == ratio}
        print(f"trace x{ratio:<5} " + "  ".join(f"{v} {row[v]:9.3f}s" for v in VARIANTS))


if __name__ == "__main__":
    main()
