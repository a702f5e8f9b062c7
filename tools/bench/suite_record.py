"""One record of the evaluation matrix (suite.sh), with its oracle bound.

    suite_record.py --bench B --scale S --variant V --peer P --budget BYTES --gpu NAME
                    --stats FILE --rc N --timeout S --wall S --results DIR --out TEXT
    suite_record.py --llama-layers SHAPE --budget BYTES     (llama.cpp's -ngl for the budget)
    suite_record.py --rebound DIR --budget BYTES  (bounds for DIR/suite.jsonl's records that lack one,
                                                   from DIR's probes: records made where no probe ran)
    suite_record.py ... --rounds FILE --child-variant NAME   (in place of --out: hf_rounds.py's children
                                                   of that variant, one record for them all; an --out
                                                   that is hf_rounds.py's output is read the same way)

The program's own JSON (the last JSON line it printed: ember-suite,
hf_generate.py, llama-bench -o jsonl) becomes the record (hf_rounds.py's
children of one variant become one: their median generation and load, each
process's median in runs_seconds, and how many processes), with the fields
every benchmark record carries: bench, variant, gpu, budget_bytes,
working_set_bytes, seconds, bound_seconds; plus scale, resident_seconds,
peer, bytes promoted and demoted (h2d_bytes, d2h_bytes) from Ember's
statistics.

The bound is an oracle that knows the workload's traffic and the machine's
rates measured in the same session (probe.json, sparse-probe.json) and
the run with everything resident:
- kernels (cold, against first_seconds; warm, bound_warm_seconds, against
  the median of the runs): the best amount r of the working set (up to the budget's
  high watermark, Ember's default: HIGH_WATERMARK) moved once at the prefetch rate; then the run takes the
  longer of its resident compute time, reading its traffic's non-resident
  share at the mapped tier's rate (the sparse rate for sparse workloads),
  and writing its writes' non-resident share at the mapped tier's write
  rate (reads and writes cross the link in opposite directions), or moving
  both at the rate the link gives the two directions at once, where the
  sparse probe measured it. Where the workload counts its traffic array by
  array (traffic_by_array), the non-resident share is what keeping the
  busiest bytes resident first leaves over, not an even share. Minimised
  over r.
- token generation: the resident per-token time, or reading each token's
  weights beyond the high watermark over the link, whichever is longer
  (an MoE token reads the shared weights and its experts' share of the rest).
"""
import argparse
import json
import os
import re
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))


def default_high_watermark():
    """EMBER_HIGH_WATERMARK's default, from the shim's one options table: the oracle may fill what Ember may."""
    with open(os.path.join(here, "..", "..", "shim", "config", "config.def")) as f:
        return int(re.search(r'EMBER_HIGH_WATERMARK, PERCENT, "(\d+)"', f.read()).group(1))


HIGH_WATERMARK = default_high_watermark()

sys.path.insert(0, here)


def last_json(text):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def json_lines(text):
    """The lines of text that are JSON, parsed; the others skipped."""
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def load_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json_lines(f.read())


def from_rounds(rows, variant):
    """hf_rounds.py's children of one variant as one program record; None if none of them finished."""
    kids = [r for r in rows if isinstance(r, dict) and r.get("variant") == variant and "seconds" in r]
    if not kids:
        return None
    prog = dict(kids[0])
    per_process = [k["seconds"] for k in kids]
    # the middle two's mean for an even count: four processes are the usual round
    prog.update(seconds=statistics.median(per_process), run_seconds=per_process, processes=len(kids),
                load_seconds=statistics.median([k["load_seconds"] for k in kids]),
                load_seconds_each=[k["load_seconds"] for k in kids],
                tokens_per_second=prog["new_tokens"] / statistics.median(per_process))
    for k in ("run_cpu_seconds", "run_stolen_seconds", "run_cpu_probe_seconds"):  # each process's median
        prog.pop(k, None)
        if all(kid.get(k) for kid in kids):
            prog[k] = [statistics.median(kid[k]) for kid in kids]
    return prog


def from_llama_processes(rows):
    """Several llama-bench processes of one variant (suite.sh's rounds at 0.5x) as one program record:
    each process's median in runs, the median of those the figure, as from_rounds does; None if none ran."""
    done = [r for r in rows if isinstance(r, dict) and r.get("samples_ns")]
    if len(done) < 2:
        return done[0] if done else None
    prog = dict(done[0])
    prog["process_seconds"] = [median(r["samples_ns"]) / 1e9 for r in done]
    return prog


def from_kernel_processes(rows):
    """Several ember-suite processes of one variant (suite.sh's EMBER_SUITE_PROCESSES) as one record: the
    median of their medians (warm) and of their first runs (cold), each process's median in runs_seconds,
    verified only if every process was; None if none printed a record."""
    done = [r for r in rows if isinstance(r, dict) and "seconds" in r]
    if len(done) < 2:
        return done[0] if done else None
    prog = dict(done[0])
    each = [r["seconds"] for r in done]
    prog.update(seconds=statistics.median(each), runs_seconds=each, processes=len(done),
                verified=all(r.get("verified", True) for r in done))
    for k in ("first_seconds", "compute_seconds"):
        if all(k in r for r in done):
            prog[k] = statistics.median([r[k] for r in done])
    return prog


def from_program(bench, prog):
    """The program's record in the matrix's fields."""
    if bench == "llama-cpp":
        runs = prog.get("process_seconds") or [ns / 1e9 for ns in prog["samples_ns"]]
        # an even count of processes: the middle two's mean, as for hf_rounds.py's
        seconds = statistics.median(runs) if "process_seconds" in prog else median(runs)
        rec = {"working_set_bytes": prog["model_size"], "tokens": prog["n_gen"], "seconds": seconds,
               "runs_seconds": runs, "tokens_per_second": prog["n_gen"] / seconds,
               "n_gpu_layers": prog["n_gpu_layers"], "llama_build": prog.get("build_commit")}
        if "process_seconds" in prog:
            rec["processes"] = len(runs)
        return rec
    if bench.startswith("hf-"):
        rec = {k: prog[k] for k in ("arch", "size", "params", "working_set_bytes", "load_seconds", "seconds",
                                    "tokens_per_second", "expert_bytes", "active_expert_fraction",
                                    "transformers", "torch") if k in prog}
        rec.update(tokens=prog["new_tokens"], runs_seconds=prog["run_seconds"])
        for k in ("processes", "load_seconds_each"):
            if k in prog:
                rec[k] = prog[k]
        for k in ("run_cpu_seconds", "run_stolen_seconds", "run_cpu_probe_seconds"):
            if k in prog:
                rec["runs_" + k[4:]] = prog[k]
        return rec
    return dict(prog)


def token_bytes(rec):
    """Weights one token reads: all of them, or for an MoE the shared part and its experts' share."""
    ws = rec["working_set_bytes"]
    experts = rec.get("expert_bytes", 0)
    return ws - experts + experts * rec.get("active_expert_fraction", 1.0), ws - experts


def bound(rec, resident, probe, sparse, budget):
    high = budget * HIGH_WATERMARK // 100
    ws = rec["working_set_bytes"]
    mapped = probe["mapped_read_Bps"]
    up = max(probe["prefetch_Bps"], probe.get("prefetch_bulk_Bps", 0))
    if rec.get("tokens"):
        per_token, shared = token_bytes(rec)
        # the shared weights are kept resident first; what does not fit of the rest is read over the link
        if not rec.get("expert_bytes"):  # dense: every weight is read by every token
            beyond = max(0, ws - high)
        else:
            experts = rec["expert_bytes"]
            beyond = (per_token - shared) * max(0.0, (experts - max(0, high - shared)) / experts)
        link = rec["tokens"] * beyond / mapped
        res = resident["seconds"] if resident else 0.0
        note = (f"the longer of the resident run and each token's weights beyond the high watermark ({HIGH_WATERMARK}% of "
                f"the budget) read over the link at {mapped / 1e9:.1f} GB/s")
        return max(res, link), note, {"link_bound_tokens_per_second": mapped / beyond if beyond else None}
    compute = resident.get("compute_seconds", resident["seconds"]) if resident else 0.0
    traffic = rec.get("read_bytes", ws)
    written = rec.get("written_bytes") or 0
    rates = sparse["rates_Bps"]
    rate, label = mapped, "mapped"
    wrate, wlabel = rates.get("mapped-populated-write/65536"), "mapped write (64 KiB pieces)"
    if rec.get("sparse"):
        rate, label = rates["mapped-read/128"], "mapped sparse (128-byte pieces)"
        piece = "128" if "mapped-populated-write/128" in rates else "1024"
        wrate, wlabel = rates.get(f"mapped-populated-write/{piece}"), f"mapped sparse write ({piece}-byte pieces)"
    # what the link carries with both directions busy at once (the sparse probe's copying case), where measured
    both = rates.get("mapped-read-write/" + ("128" if rec.get("sparse") else "65536"))
    if not wrate:
        written = 0
    if not written:
        both = None
    top = min(ws, high)
    # each array's (bytes, read, written) where the workload counts them (traffic_by_array; older records
    # count reads alone, reads_by_array), busiest bytes first: the oracle keeps those resident
    arrays = rec.get("traffic_by_array") or [a + [0] for a in rec.get("reads_by_array") or []]
    arrays = sorted(arrays, key=lambda a: -(a[1] + a[2]) / a[0] if a[0] else 0)

    def missed(r):
        """The reads and writes that miss a residency of r bytes: an even share, or, where the workload says
        what it reads and writes of each array, what the busiest bytes resident leave over (the oracle's split)."""
        if not arrays:
            return traffic * (ws - r) / ws, written * (ws - r) / ws
        reads = writes = 0.0
        room = r
        for size, read, wrote in arrays:
            kept = min(size, room)
            room -= kept
            reads += read * (size - kept) / size if size else 0.0
            writes += wrote * (size - kept) / size if size else 0.0
        counted_writes = sum(a[2] for a in arrays) if rec.get("traffic_by_array") else 0.0
        # what the arrays do not account for (reads_by_array's writes) is an even share
        return (reads + max(0.0, traffic - sum(a[1] for a in arrays)),
                writes + max(0.0, written - counted_writes) * (ws - r) / ws)

    cold = warm = link_least = None
    for i in range(65):
        r = top * i / 64
        # reads and writes cross the link in opposite directions: each alone is a floor, and so are both
        # together at the rate the link gives them at once
        reads, writes_left = missed(r)
        link = max(reads / rate, writes_left / wrate if written else 0.0,
                   (reads + writes_left) / both if both else 0.0)
        run = max(compute, link)
        cold = r / up + run if cold is None else min(cold, r / up + run)
        warm = run if warm is None else min(warm, run)
        link_least = link if link_least is None else min(link_least, link)
    writes = (f", or of {written / 1e9:.1f} GB of writes at the {wlabel} rate {wrate / 1e9:.2f} GB/s" +
              (f", or of both at once at the rate the link gives them together ({both / 1e9:.2f} GB/s)" if both else "") +
              ", whichever is longer" if written else "")
    share = ("what the busiest arrays resident first leave over" if arrays else "the non-resident share")
    note = (f"cold: the best residency r <= min(working set, {HIGH_WATERMARK}% of the budget) moved once at {up / 1e9:.1f} GB/s, "
            f"then the longer of the resident compute time and {share} of {traffic / 1e9:.1f} GB "
            f"of reads at the {label} rate {rate / 1e9:.2f} GB/s{writes}; warm: the same, already moved")
    # the link's time alone at the split that needs the least of it: what a run pays on top of its resident
    # compute if nothing overlaps (suite_report.py's `resident + link`)
    return cold, note, {"bound_warm_seconds": warm, "link_warm_seconds": link_least}


def llama_layers(shape, budget):
    from make_gguf import SHAPES, VOCAB
    hidden, layers, ffn, _ = SHAPES[shape]
    layer = 2 * (4 * hidden * hidden + 3 * hidden * ffn)
    output = 2 * VOCAB * hidden
    # the KV cache and compute buffers: half a GiB
    return max(0, min(layers, (budget - (512 << 20) - output) // layer))


def rebound(results, budget, every=False):
    """Bounds for the records without one, or (every) for all, from the probes in results."""
    path = os.path.join(results, "suite.jsonl")
    rows = load_jsonl(path)
    probe = json.load(open(os.path.join(results, "probe.json")))
    sparse = json.load(open(os.path.join(results, "sparse-probe.json")))
    for rec in rows:
        if "error" in rec or ("bound_seconds" in rec and not every) or "seconds" not in rec:
            continue
        resident = rec if rec["variant"] == "resident" else next(
            (r for r in rows if r.get("bench") == rec["bench"] and r.get("scale") == rec["scale"]
             and r.get("variant") == "resident" and "error" not in r), None)
        b, note, extra = bound(rec, resident, probe, sparse, budget)
        rec.update(bound_seconds=b, bound_note=note + "; rates from the session's last probe", **extra)
    with open(path, "w") as f:
        for rec in rows:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-layers")
    ap.add_argument("--rebound")
    ap.add_argument("--every", action="store_true", help="with --rebound: every record's bound, not only missing ones")
    ap.add_argument("--budget", type=int, required=True)
    for a in ("bench", "scale", "variant", "peer", "gpu", "stats", "results", "out", "rounds", "child_variant"):
        ap.add_argument("--" + a, default="")
    for a in ("rc", "timeout", "wall"):
        ap.add_argument("--" + a, type=int, default=0)
    a = ap.parse_args()
    if a.llama_layers:
        print(llama_layers(a.llama_layers, a.budget))
        return
    if a.rebound:
        rebound(a.rebound, a.budget, a.every)
        return
    rec = {"bench": a.bench, "scale": float(a.scale), "variant": a.variant, "gpu": a.gpu, "budget_bytes": a.budget,
           "wall_seconds": a.wall, "exit": a.rc}
    if a.peer:
        rec["peer"] = a.peer
    if a.rounds:
        prog = from_rounds(load_jsonl(a.rounds), a.child_variant or a.variant)
    elif any(isinstance(r, dict) and "child" in r for r in json_lines(a.out)):  # hf_rounds.py's own output
        prog = from_rounds(json_lines(a.out), a.child_variant or a.variant)
    elif a.bench == "llama-cpp":  # one llama-bench process, or several in rounds
        prog = from_llama_processes(json_lines(a.out))
    elif not a.bench.startswith("hf-"):  # one ember-suite process, or several in rounds
        prog = from_kernel_processes(json_lines(a.out))
    else:
        prog = last_json(a.out)
    if a.rc == 124:
        rec["error"] = f"timed out after {a.timeout} s"
        rec["seconds_at_least"] = a.timeout
    elif prog is None:
        rec["error"] = "run failed: no record printed (see the log)"
    else:
        try:
            rec.update(from_program(a.bench, prog))
        except (KeyError, TypeError, ZeroDivisionError) as e:
            rec["error"] = f"record unreadable: {e!r}"
        if a.rc != 0:
            rec["error"] = f"exit status {a.rc}" + (": the answer was wrong" if prog.get("verified") is False else "")
    if a.stats and os.path.exists(a.stats) and os.path.getsize(a.stats):
        st = json.load(open(a.stats))
        devs = st.get("devices", [])
        rec["h2d_bytes"] = sum(d.get("bytes_promoted", 0) for d in devs)
        rec["d2h_bytes"] = sum(d.get("bytes_demoted", 0) for d in devs)
        # settings: the EMBER_* variables the run was given; read_mostly: what EMBER_READ_MOSTLY's advice did
        for k in ("uvm_events", "entry_points", "settings", "read_mostly"):
            if k in st:
                rec[k] = st[k]
    results = a.results
    resident = None
    if a.variant != "resident":
        resident = next((r for r in reversed(load_jsonl(os.path.join(results, "suite.jsonl")))
                         if r.get("bench") == a.bench and r.get("scale") == rec["scale"]
                         and r.get("variant") == "resident" and "error" not in r), None)
        if resident:
            rec["resident_seconds"] = resident["seconds"]
    if "seconds" in rec and "error" not in rec:
        try:
            probe = json.load(open(os.path.join(results, "probe.json")))
            sparse = json.load(open(os.path.join(results, "sparse-probe.json")))
            b, note, extra = bound(rec, resident if a.variant != "resident" else rec, probe, sparse, a.budget)
            rec.update(bound_seconds=b, bound_note=note, **extra)
        except (OSError, ValueError, KeyError) as e:
            rec["bound_note"] = f"no bound: {e!r}"
    print(json.dumps(rec))


if __name__ == "__main__":
    main()
