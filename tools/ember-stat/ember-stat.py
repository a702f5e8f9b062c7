#!/usr/bin/env python3
"""ember-stat: what Ember is doing in a program, or did in one, in one shot.

    ember-stat [--json] PID          a running program started with EMBER_LIVE=1
                                     (ember-run --live 1): its /dev/shm/ember-PID.live
    ember-stat [--json] --file PATH  a live file, or the statistics Ember wrote at
                                     exit (EMBER_STATS, ember-run --stats PATH)

Text by default; --json prints one object, the same for both sources:

    {"source": "live" | "exit",
     "pid": int | null,  "mode": "off" | "mapped" | "static" | "adaptive",
     "devices": [{"device", "budget_bytes", "high_bytes", "low_bytes",
                  "resident_bytes", "other_bytes", "peak_bytes",
                  "promotions", "demotions",
                  "bytes_promoted", "bytes_demoted",     (these four: exit only, else null)
                  "refreshes", "bytes_refreshed",        (resident ranges prefetched again after host phases)
                  "bytes_populated",                     (mapped memory the host touched into being: exit only)
                  "bytes_wanted",                        (small tables read densely that the worker promoted once
                                                          room was made, none found at their launch: exit only)
                  "bytes_margin",                        (small tables read densely placed past the high
                                                          watermark, up to the budget: exit only)
                  "bytes_phase_exchanged",               (promoted by the exchanges at host phases: exit only)
                  "bytes_vmm_on_host",                   (cuMemCreate memory past the budget made in host
                                                          memory: exit only)
                  "mapped_bytes"}],                      (placed but read from host memory: live, or at
                                                          exit the allocations still live; null if unknown)
     "allocations": [{"id", "size", "kind": "managed" | "converted",
                      "resident_bytes", "mapped_bytes" (exit; null live),
                      "map", "demand" (live; null at exit: the states and demand levels
                                       ember-top draws, one character a cell),
                      "freed" (exit; false live)}],
     "launches_settled": int | null,                   (exit only: launches that found nothing left to
                                                          decide and skipped their scan)
     "launches_past_scan": int | null,                 (exit only: launches that pointed into more
                                                          allocations than the launch scan holds)
     "launches_tensor_lists": int | null,              (exit only: launches whose PyTorch tensor lists
                                                          were read by the chunks their blocks name)
     "launches_cat_inputs": int | null,                (exit only: launches of torch.cat whose inputs
                                                          were read by the rows that copy them)
     "settings": {"EMBER_NAME": "value", ...} | null,  (exit only: every EMBER_* variable set for the
                                                          program, by the environment or a file)
     "read_mostly": {"bytes_advised", "bytes_withdrawn",
                     "allocations_written"} | null,     (exit only, under EMBER_READ_MOSTLY=1: what its
                                                          advice did)
     "kept_freed": {"reuses", "bytes_kept",            (exit only, under EMBER_KEEP_FREED: allocations given
                    "bytes_trimmed"} | null,              freed memory kept, what was kept at exit, and what
                                                          the program's pool trims let go)
     "uvm_events": {...} | null}                       (exit only: the event queue's counts)

Exit status: 0 shown, 1 no such process or file, 2 bad arguments or an
unreadable record.
"""
import json
import os
import sys

GiB = 1 << 30


def parse_live(text):
    lines = text.splitlines()
    if not lines or lines[0] != "ember-live 1":
        raise ValueError("not an Ember live file (its first line is not 'ember-live 1')")
    out = {"source": "live", "pid": None, "mode": None, "devices": [], "allocations": [], "launches_settled": None,
           "launches_past_scan": None, "launches_tensor_lists": None, "launches_cat_inputs": None, "settings": None, "read_mostly": None, "kept_freed": None, "uvm_events": None}
    for line in lines[1:]:
        f = line.split()
        if not f:
            continue
        if f[0] == "pid":
            out["pid"] = int(f[1])
        elif f[0] == "mode":
            out["mode"] = f[1]
        elif f[0] == "device":
            kv = dict(zip(f[2::2], f[3::2]))
            out["devices"].append({"device": int(f[1]), **{f"{k}_bytes": int(kv[k]) for k in
                                   ("budget", "high", "low", "resident", "other", "peak")},
                                   "promotions": int(kv["promotions"]), "demotions": int(kv["demotions"]),
                                   "bytes_promoted": None, "bytes_demoted": None,
                                   "refreshes": None, "bytes_refreshed": None, "bytes_populated": None,
                                   "bytes_wanted": None, "bytes_margin": None, "bytes_phase_exchanged": None,
                                   "bytes_vmm_on_host": None,
                                   "mapped_bytes": int(kv["mapped"]) if "mapped" in kv else None})
        elif f[0] == "alloc":
            out["allocations"].append({"id": int(f[1]), "size": int(f[3]), "kind": f[4], "resident_bytes": None,
                                       "mapped_bytes": None, "map": f[5] if len(f) > 5 else "", "demand": None,
                                       "freed": False})
        elif f[0] == "demand":  # the allocation line's levels follow it
            for a in out["allocations"]:
                if a["id"] == int(f[1]):
                    a["demand"] = f[2] if len(f) > 2 else ""
    return out


def parse_exit(stats):
    devices = [{k: d.get(k) for k in ("device", "budget_bytes", "high_bytes", "low_bytes", "resident_bytes",
                                      "other_bytes", "peak_bytes", "promotions", "demotions", "bytes_promoted",
                                      "bytes_demoted", "refreshes", "bytes_refreshed", "bytes_populated",
                                      "bytes_wanted", "bytes_margin", "bytes_phase_exchanged",
                                      "bytes_vmm_on_host")}
               for d in stats.get("devices", [])]
    allocs = [{"id": a["id"], "size": a["size"], "kind": a["kind"], "resident_bytes": a.get("resident_bytes"),
               "mapped_bytes": a.get("mapped_bytes"), "map": None, "demand": None, "freed": a.get("freed", False)}
              for a in stats.get("allocations", [])]
    device_of = {a["id"]: a.get("device") for a in stats.get("allocations", [])}
    for d in devices:  # what the allocations still live at exit left in host memory
        mine = [a for a in allocs if not a["freed"] and device_of[a["id"]] == d["device"]]
        d["mapped_bytes"] = (sum(a["mapped_bytes"] for a in mine)
                             if all(a["mapped_bytes"] is not None for a in mine) else None)
    return {"source": "exit", "pid": None, "mode": stats.get("mode"), "devices": devices, "allocations": allocs,
            "launches_settled": stats.get("launches_settled"), "launches_past_scan": stats.get("launches_past_scan"),
            "launches_tensor_lists": stats.get("launches_tensor_lists"),
            "launches_cat_inputs": stats.get("launches_cat_inputs"),
            "settings": stats.get("settings"),
            "read_mostly": stats.get("read_mostly"), "kept_freed": stats.get("kept_freed"),
            "uvm_events": stats.get("uvm_events")}


def gib(b):
    """Bytes in GiB, or MiB below one GiB (a test's small budget)."""
    if b is None:
        return "-"
    return f"{b / GiB:.2f} GiB" if b >= GiB or b == 0 else f"{b / (1 << 20):.1f} MiB"


def text(s):
    who = f"process {s['pid']}" if s["pid"] is not None else "the program"
    lines = [f"{who}: Ember {s['mode']} mode ({'live' if s['source'] == 'live' else 'at exit'})"]
    if s.get("settings"):
        lines.append("settings: " + " ".join(f"{k}={v}" for k, v in s["settings"].items()))
    for d in s["devices"]:
        lines.append(f"GPU {d['device']}: {gib(d['resident_bytes'])} resident of a {gib(d['budget_bytes'])} budget "
                     f"(high watermark {gib(d['high_bytes'])}, peak {gib(d['peak_bytes'])}), "
                     f"{gib(d['other_bytes'])} of plain device memory"
                     + (f", {gib(d['mapped_bytes'])} mapped" if d.get("mapped_bytes") is not None else ""))
        moved = ""
        if d["bytes_promoted"] is not None:
            moved = f" ({gib(d['bytes_promoted'])} and {gib(d['bytes_demoted'])})"
        besides = ""
        if d.get("refreshes"):
            besides = f"; {d['refreshes']} refreshes after host phases ({gib(d['bytes_refreshed'])})"
        if d.get("bytes_populated"):
            besides += f"; {gib(d['bytes_populated'])} made in host memory by the host's touches"
        if d.get("bytes_wanted"):
            besides += f"; {gib(d['bytes_wanted'])} of small tables promoted by the worker once room was made"
        if d.get("bytes_margin"):
            besides += f"; {gib(d['bytes_margin'])} of small tables past the high watermark"
        if d.get("bytes_phase_exchanged"):
            besides += f"; {gib(d['bytes_phase_exchanged'])} promoted by exchanges at host phases"
        if d.get("bytes_vmm_on_host"):
            besides += f"; {gib(d['bytes_vmm_on_host'])} of cuMemCreate memory made in host memory past the budget"
        lines.append(f"       {d['promotions']} promotions and {d['demotions']} demotions{moved}{besides}")
    live = [a for a in s["allocations"] if not a["freed"]]
    total = sum(a["size"] for a in live)
    lines.append(f"{len(live)} allocations placed ({gib(total)})"
                 + (f", {len(s['allocations']) - len(live)} freed" if len(live) < len(s["allocations"]) else ""))
    for a in sorted(live, key=lambda a: -a["size"])[:8]:
        shown = a["map"] if a["map"] is not None else f"{gib(a['resident_bytes'])} resident"
        lines.append(f"  #{a['id']:<4} {gib(a['size']):>11} {a['kind']:9} {shown[:64]}")
    if s.get("read_mostly"):
        r = s["read_mostly"]
        lines.append(f"read-mostly advice on {gib(r['bytes_advised'])} of resident memory kernels only read, "
                     f"withdrawn from {gib(r['bytes_withdrawn'])} ({r['allocations_written']} allocations written "
                     f"after it)")
    if s.get("kept_freed"):
        k = s["kept_freed"]
        lines.append(f"{k['reuses']} stream-ordered allocations were given freed memory kept (EMBER_KEEP_FREED); "
                     f"{gib(k['bytes_kept'])} kept at exit, {gib(k.get('bytes_trimmed', 0))} let go by pool trims")
    if s.get("launches_settled"):
        lines.append(f"{s['launches_settled']} launches found nothing left to decide and skipped their scan")
    if s.get("launches_past_scan"):
        lines.append(f"{s['launches_past_scan']} launches pointed into more allocations than the launch scan "
                     f"holds: the rest went uncredited")
    if s.get("launches_tensor_lists"):
        lines.append(f"{s['launches_tensor_lists']} launches passed PyTorch's tensor lists, read by the chunks "
                     f"their blocks name")
    if s.get("launches_cat_inputs"):
        lines.append(f"{s['launches_cat_inputs']} launches of torch.cat, read by the inputs their rows copy")
    if s["uvm_events"]:
        u = s["uvm_events"]
        lines.append(f"UVM events: {u.get('gpu_faults', 0)} GPU faults, {u.get('driver_evictions', 0)} driver "
                     f"evictions, {u.get('migrations_by_driver', 0)} migrations by the driver")
    return "\n".join(lines)


def main(argv):
    args = [a for a in argv if a != "--json"]
    as_json = len(args) < len(argv)
    if len(args) == 2 and args[0] == "--file":
        path = args[1]
    elif len(args) == 1 and args[0].isdigit():
        path = f"/dev/shm/ember-{args[0]}.live"
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        body = open(path).read()
    except OSError as e:
        hint = " (is it running with EMBER_LIVE=1, under your user?)" if path.startswith("/dev/shm/") else ""
        print(f"ember-stat: cannot read {path}: {e.strerror}{hint}", file=sys.stderr)
        return 1
    try:
        s = parse_live(body) if body.startswith("ember-live") else parse_exit(json.loads(body))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        print(f"ember-stat: {path} is not an Ember live file or statistics: {e}", file=sys.stderr)
        return 2
    print(json.dumps(s) if as_json else text(s))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
