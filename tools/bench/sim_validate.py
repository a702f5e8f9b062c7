"""Replay the recorded real runs in ember-sim and compare with what was measured.

    python3 sim_validate.py EMBER_SIM RESULTS_DIR OUT.jsonl

RESULTS_DIR holds measured.jsonl (tools/bench/validate.sh, on the GPU) and
the traces it recorded (<workload>-<variant>.trace.gz, beside it or in traces/). Each measured run is
replayed under its own variant with the default (H200) profile; the
simulated time is the phase the program timed (from its ember_flush to the
end, else from its first launch). One record per workload and variant goes
to OUT.jsonl; a table goes to stdout.
"""
import json
import os
import subprocess
import sys

TOLERANCE = 0.25


def replay(sim, trace, variant):
    out = subprocess.run([sim, "--trace", trace, "--variant", variant, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def within(sim, measured):
    if measured == 0:
        return sim == 0
    return abs(sim / measured - 1) <= TOLERANCE


def main():
    sim, results, out_path = sys.argv[1:4]
    machine = open(os.path.join(results, "machine.txt")).read()
    gpu = next((line.split(":", 1)[1].split("(")[0].strip() for line in machine.splitlines()
                if line.startswith("GPU 0")), "unknown")
    rows = []
    for line in open(os.path.join(results, "measured.jsonl")):
        m = json.loads(line)
        name = f"{m['workload']}-{m['variant']}.trace.gz"
        trace = next((p for p in (os.path.join(results, name), os.path.join(results, "traces", name))
                      if os.path.exists(p)), "")
        if m.get("exit") != 0 or "measured_seconds" not in m or not os.path.exists(trace):
            rows.append({"workload": m["workload"], "variant": m["variant"], "gpu": gpu,
                         "note": "not replayed: the measured run failed or left no trace"})
            continue
        s = replay(sim, trace, m["variant"])
        rec = {
            "workload": m["workload"], "variant": m["variant"], "gpu": gpu, "budget": m["budget"],
            "working_set_bytes": s["working_set"], "profile": "default (H200)",
            "measured_seconds": round(m["measured_seconds"], 4), "sim_seconds": round(s["window_seconds"], 4),
            "time_error": round(s["window_seconds"] / m["measured_seconds"] - 1, 4),
            "measured_bytes_promoted": m.get("bytes_promoted"), "sim_bytes_promoted": s["bytes_promoted"],
            "measured_bytes_demoted": m.get("bytes_demoted"), "sim_bytes_demoted": s["bytes_demoted"],
            "launches": s["launches"],
        }
        rec["time_within_25pct"] = within(s["window_seconds"], m["measured_seconds"])
        rec["bytes_within_25pct"] = (within(s["bytes_promoted"], m.get("bytes_promoted") or 0) and
                                     within(s["bytes_demoted"], m.get("bytes_demoted") or 0))
        rows.append(rec)
    with open(out_path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    gib = 1 << 30
    print(f"{'workload':14} {'variant':9} {'measured s':>10} {'sim s':>8} {'error':>7}   "
          f"{'promoted GiB meas/sim':>22} {'demoted GiB meas/sim':>21}")
    for r in rows:
        if "sim_seconds" not in r:
            print(f"{r['workload']:14} {r['variant']:9} {r['note']}")
            continue
        print(f"{r['workload']:14} {r['variant']:9} {r['measured_seconds']:10.3f} {r['sim_seconds']:8.3f} "
              f"{100 * r['time_error']:+6.0f}%   {r['measured_bytes_promoted'] / gib:10.2f} / {r['sim_bytes_promoted'] / gib:6.2f}   "
              f"{r['measured_bytes_demoted'] / gib:9.2f} / {r['sim_bytes_demoted'] / gib:6.2f}")


if __name__ == "__main__":
    main()
