"""Turn tools/bench/results/*.jsonl into a Markdown table and a PNG plot.

    python3 report.py RESULTS_DIR
"""
import json
import os
import sys


def load(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def gib(b):
    return f"{b / (1 << 30):.1f} GiB"


NAMES = {"off": "stock UVM (off)", "mapped": "Ember mapped", "static": "Ember static",
         "adaptive": "Ember adaptive (default)"}


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    rows = [r for r in load(os.path.join(results, "uvm.jsonl")) if "error" not in r]
    failed = [r for r in load(os.path.join(results, "uvm.jsonl")) if "error" in r]
    lines = ["| bench | working set | budget | variant | seconds (median) | bound | x bound | x faster than mapped | moved to GPU by Ember, all runs |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(rows, key=lambda r: (r["bench"], r["working_set_bytes"], r["variant"])):
        mapped = next((m for m in rows if m["bench"] == r["bench"] and m["variant"] == "mapped"
                       and m["working_set_bytes"] == r["working_set_bytes"]), None)
        speed = f"{mapped['seconds'] / r['seconds']:.2f}" if mapped else "-"
        h2d = gib(r["h2d_bytes"]) if r.get("h2d_bytes") is not None else "n/a"
        lines.append(f"| {r['bench']} | {gib(r['working_set_bytes'])} | {gib(r['budget_bytes'])} | {r['variant']} | "
                     f"{r['seconds']:.3f} | {r['bound_seconds']:.3f} | {r['seconds'] / r['bound_seconds']:.2f} | "
                     f"{speed} | {h2d} |")
    for r in failed:
        lines.append(f"| {r['bench']} | {gib(r['working_set_bytes'])} | - | {r['variant']} | did not run | | | | |")
    gpu = rows[0]["gpu"] if rows else "no GPU"
    table = "\n".join(lines)
    with open(os.path.join(results, "uvm.md"), "w") as f:
        f.write(f"GPU: {gpu}. Each figure is the median of its runs; the bound is the oracle split "
                f"(residency up to the budget's 90% high watermark) at bandwidths measured in the same run.\n\n")
        f.write(table + "\n")
    print(table)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib is not installed; no plot", file=sys.stderr)
        return
    benches = sorted({r["bench"] for r in rows})
    if not benches:
        return
    fig, axes = plt.subplots(1, len(benches), figsize=(5 * len(benches), 4), squeeze=False)
    colors = {"off": "#888888", "mapped": "#d62728", "static": "#1f77b4", "adaptive": "#2ca02c"}
    for ax, bench in zip(axes[0], benches):
        sizes = sorted({r["working_set_bytes"] for r in rows if r["bench"] == bench})
        variants = [v for v in ("off", "mapped", "static", "adaptive") if any(r["variant"] == v and r["bench"] == bench for r in rows)]
        width = 0.8 / (len(variants) + 1)
        for i, v in enumerate(variants + ["bound"]):
            xs, ys = [], []
            for j, ws in enumerate(sizes):
                r = next((r for r in rows if r["bench"] == bench and r["working_set_bytes"] == ws
                          and (r["variant"] == v or (v == "bound" and r["variant"] == "static"))), None)
                if r:
                    xs.append(j + i * width)
                    ys.append(r["bound_seconds"] if v == "bound" else r["seconds"])
            if v == "bound":
                ax.bar(xs, ys, width, label="oracle bound", color="white", edgecolor="black", hatch="//")
            else:
                ax.bar(xs, ys, width, label=NAMES.get(v, v), color=colors[v])
        ax.set_xticks([j + width * len(variants) / 2 for j in range(len(sizes))])
        ax.set_xticklabels([gib(ws) for ws in sizes])
        ax.set_title(f"{bench} ({gpu}, budget {gib(rows[0]['budget_bytes'])})", fontsize=9)
        ax.set_ylabel("seconds (median, log scale; lower is better)")
        ax.set_yscale("log")
        ax.set_xlabel("working set")
        ax.legend(fontsize=8)
    fig.text(0.01, 0.005, "stock UVM (off) runs only where the working set fits the budget: "
             "past it, it would need more GPU memory than the budget allows.", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(os.path.join(results, "uvm.png"), dpi=120)
    print(f"wrote {os.path.join(results, 'uvm.png')}")


if __name__ == "__main__":
    main()
