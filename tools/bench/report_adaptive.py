"""Tables and plots for run.sh adaptive: phase-shift, moving-window, torch-decode.

    python3 report_adaptive.py RESULTS_DIR
"""
import json
import os
import sys


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    path = os.path.join(results, "adaptive.jsonl")
    rows = [json.loads(l) for l in open(path) if l.strip()]
    ok = [r for r in rows if "error" not in r]
    gpu = ok[0]["gpu"] if ok else "no GPU"
    out = [f"GPU: {gpu}, budget {ok[0]['budget_bytes'] / 2**30:.0f} GiB. Bounds are per-phase oracles at bandwidths "
           "measured in the same run (probe.json).", ""]
    out += ["### Phase shift: re-read A (16 GiB) 8 times, then B (8 GiB) 40 times", "",
            "| variant | seconds | bound | x bound | recovery to 80% of resident (s) |", "| --- | --- | --- | --- | --- |"]
    for r in [r for r in ok if r["bench"] == "phase-shift"]:
        rec = "never" if r.get("recovery_seconds") is None else f"{r['recovery_seconds']:.3f}"
        out.append(f"| {r['variant']} | {r['seconds']:.3f} | {r['bound_seconds']:.3f} | "
                   f"{r['seconds'] / r['bound_seconds']:.2f} | {rec} |")
    out += ["", "### Moving hot set: a 14 GiB window, 8 phases of 4 passes, 42 GiB buffer", "",
            "| drift % | static s | adaptive s | oracle s | adaptive x oracle | adaptive faster than static |",
            "| --- | --- | --- | --- | --- | --- |"]
    for drift in sorted({r["drift"] for r in ok if r["bench"] == "moving-window"}):
        st = next((r for r in ok if r["bench"] == "moving-window" and r["drift"] == drift and r["variant"] == "static"), None)
        ad = next((r for r in ok if r["bench"] == "moving-window" and r["drift"] == drift and r["variant"] == "adaptive"), None)
        if st and ad:
            out.append(f"| {drift} | {st['seconds']:.3f} | {ad['seconds']:.3f} | {ad['bound_seconds']:.3f} | "
                       f"{ad['seconds'] / ad['bound_seconds']:.2f} | {st['seconds'] / ad['seconds']:.2f}x |")
    out += ["", "### Token generation (torch-decode, EMBER_MANAGE_ALL=1)", "",
            "| working set | variant | seconds for 8 tokens |", "| --- | --- | --- |"]
    for r in sorted([r for r in ok if r["bench"] == "torch-decode"], key=lambda r: (r["working_set_bytes"], r["variant"])):
        out.append(f"| {r['working_set_bytes'] / 2**30:.0f} GiB | {r['variant']} | {r['seconds']:.3f} |")
    out += ["", "### What the UVM tools event queue saw (EMBER_UVM_EVENTS, per run)", "",
            "| bench | variant | drift % | working set | migrations Ember asked for | by the driver | driver evictions "
            "| GPU faults | dropped |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in ok:
        u = r.get("uvm_events")
        if u is None:
            continue
        out.append(f"| {r['bench']} | {r['variant']} | {r.get('drift', '')} | {r['working_set_bytes'] / 2**30:.0f} GiB | "
                   f"{u['migrations_requested']} | {u['migrations_by_driver']} | {u['driver_evictions']} | "
                   f"{u['gpu_faults']} | {u['dropped']} |")
    unread = [f"{r['bench']} {r['variant']}" for r in ok if r.get("uvm_events") is None and r["variant"] != "off"]
    if unread:
        out.append(f"\nNo event counts (the queue was not read) for: {', '.join(unread)}.")
    for r in rows:
        if "error" in r:
            out.append(f"\n{r['bench']} {r['variant']}: did not run ({r['error']})")
    text = "\n".join(out) + "\n"
    open(os.path.join(results, "adaptive.md"), "w").write(text)
    print(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib is not installed; no plot", file=sys.stderr)
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    colors = {"mapped": "#d62728", "static": "#1f77b4", "adaptive": "#2ca02c"}
    for r in [r for r in ok if r["bench"] == "phase-shift"]:
        ts = [p[0] for p in r["series_GBps"]]
        bw = [p[1] for p in r["series_GBps"]]
        ax1.plot(ts, bw, ".-", label=r["variant"], color=colors[r["variant"]], markersize=3)
        ax1.axvline(r["shift_seconds"], color=colors[r["variant"]], linestyle=":", linewidth=0.8)
    ax1.set_yscale("log")
    ax1.set_xlabel("seconds since start (dotted: the shift to B)")
    ax1.set_ylabel("GB/s per pass (log)")
    ax1.set_title(f"phase shift, {gpu}, 16 GiB budget", fontsize=9)
    ax1.legend(fontsize=8)
    drifts = sorted({r["drift"] for r in ok if r["bench"] == "moving-window"})
    for i, v in enumerate(["static", "adaptive", "oracle"]):
        ys = []
        for d in drifts:
            r = next((r for r in ok if r["bench"] == "moving-window" and r["drift"] == d
                      and r["variant"] == ("adaptive" if v == "oracle" else v)), None)
            ys.append(0 if r is None else (r["bound_seconds"] if v == "oracle" else r["seconds"]))
        xs = [j + i * 0.27 for j in range(len(drifts))]
        if v == "oracle":
            ax2.bar(xs, ys, 0.27, label="per-phase oracle", color="white", edgecolor="black", hatch="//")
        else:
            ax2.bar(xs, ys, 0.27, label=v, color=colors[v])
    ax2.set_xticks([j + 0.27 for j in range(len(drifts))])
    ax2.set_xticklabels([f"{d}%" for d in drifts])
    ax2.set_xlabel("drift per phase")
    ax2.set_ylabel("seconds")
    ax2.set_title("moving 14 GiB window, 8 phases", fontsize=9)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(results, "adaptive.png"), dpi=120)
    print(f"wrote {os.path.join(results, 'adaptive.png')}")


if __name__ == "__main__":
    main()
