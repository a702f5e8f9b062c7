#!/usr/bin/env python3
"""Check an EMBER_STATS report from a GPU test run, and print one summary line.

  check_stats.py STATS.json [converted] [uvm-events] [past-budget] [kept-trimmed] [tensor-lists] [cat-inputs]

converted   at least one plain allocation was converted (EMBER_MANAGE_ALL)
past-budget the program had memory past the budget, made in host memory (converted memory the
            host's touches made, or cuMemCreate memory), and each GPU's peak of Ember's
            residency and plain memory stayed within its high watermark
kept-trimmed under EMBER_KEEP_FREED, allocations were given freed memory kept, and the program's pool
            trim (empty_cache) let some go
uvm-events  the UVM tools event queue was read: no malformed records, at
            least one migration that Ember requested, no driver evictions
tensor-lists at least one launch's tensor lists (PyTorch's foreach ops and fused optimizers, apex's
            form of them) were read by the chunks its blocks name: the structure's layout is one
            shim/signal/tensor_lists.c knows
cat-inputs  at least one torch.cat launch's inputs were read by the rows that copy them: the
            structure's layout is one shim/signal/cat_inputs.c knows

Exit status 0 when every expectation holds, else 1 with the reasons.
"""
import json
import sys


# Structure arguments the launch scan decodes: the expectation, its count in the report, the summary's
# words, and what its absence means.
STRUCTURES = {
    "tensor-lists": ("launches_tensor_lists", "read as tensor lists",
                     "no launch's tensor lists were read by their blocks: the program's multi_tensor_apply "
                     "structure is not one shim/signal/tensor_lists.c knows, and its launches were scanned word "
                     "by word"),
    "cat-inputs": ("launches_cat_inputs", "of torch.cat read by their rows",
                   "no torch.cat launch's inputs were read by its rows: the program's cat structure is not "
                   "one shim/signal/cat_inputs.c knows, and its launches were scanned word by word"),
}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            stats = json.load(f)
    except (OSError, ValueError) as e:
        print(f"no readable EMBER_STATS report: {e}")
        return 1
    wants = sys.argv[2:]
    bad = []
    entries = stats.get("entry_points", {})
    census = ", ".join(f"{name} {e['calls']} ({e['converted']} converted)" for name, e in entries.items())
    summary = [f"allocations: {census or 'none'}"]
    if "converted" in wants and not sum(e["converted"] for e in entries.values()):
        bad.append("no allocation was converted under EMBER_MANAGE_ALL")
    if "past-budget" in wants:
        devices = stats.get("devices", [])
        on_host = sum(d.get("bytes_populated", 0) + d.get("bytes_vmm_on_host", 0) for d in devices)
        summary.append(f"past the budget: {on_host >> 20} MiB made in host memory; peak " +
                       ", ".join(f"{d['peak_bytes'] >> 20} MiB of {d['high_bytes'] >> 20}" for d in devices))
        if not on_host:
            bad.append("nothing was made in host memory: the program never went past the budget")
        for d in devices:
            if d["peak_bytes"] > d["high_bytes"]:
                bad.append(f"GPU {d['device']}'s peak of {d['peak_bytes']} bytes passed its high watermark "
                           f"({d['high_bytes']})")
    if "kept-trimmed" in wants:
        k = stats.get("kept_freed")
        if k is None:
            bad.append("the report has no kept_freed: EMBER_KEEP_FREED was not set")
        else:
            summary.append(f"kept freed memory: {k['reuses']} reuses, {k['bytes_trimmed']} bytes let go by pool "
                           f"trims, {k['bytes_kept']} kept at exit")
            if not k["reuses"]:
                bad.append("no allocation was given freed memory kept")
            if not k["bytes_trimmed"]:
                bad.append("the program trimmed its pool, and no kept memory was let go")
    for want, (count, read_as, missing) in STRUCTURES.items():
        if want in wants:
            n = stats.get(count) or 0
            summary.append(f"{n} launches {read_as}")
            if not n:
                bad.append(missing)
    if "uvm-events" in wants:
        u = stats.get("uvm_events")
        if u is None:
            bad.append("the report has no uvm_events: the tools event queue was not read")
        else:
            summary.append("UVM events: {migrations_requested} migrations requested, {migrations_by_driver} by "
                           "the driver, {driver_evictions} driver evictions, {gpu_faults} faults, "
                           "{malformed} malformed".format(**u))
            if u["malformed"]:
                bad.append(f"{u['malformed']} malformed event records")
            if not u["migrations_requested"]:
                bad.append("no migration that Ember requested was seen in the event queue")
            if u["driver_evictions"]:
                bad.append(f"the driver evicted {u['driver_evictions']} times under Ember")
    print("; ".join(summary))
    for b in bad:
        print(f"  - {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
