"""gather-probe: how fast PyTorch's own gathers read a Mixtral-shaped expert tensor.

A Mixtral-style layer picks two of eight experts per token with an indexing
kernel over the whole expert tensor (hf-mixtral's recorded trace shows it).
The matrix's bound for that workload charges the mapped share of those reads
at the link's streaming rate; this probe measures the rate the gather itself
draws, next to a plain copy of the same bytes, wherever the tensor lives.

    python3 gather_probe.py [REPEATS]

Run it as is (device memory) and under `ember-run --mode mapped --manage-all 1`
(the tensor in host memory, mapped). Prints one JSON line per case: the
median seconds over REPEATS and the gathered bytes' rate.
"""
import json
import os
import statistics
import sys

import torch

EXPERTS, PICKED = 8, 2
HIDDEN, INTERMEDIATE = 2048, 7168  # hf_generate.py's mixtral shapes


def timed(fn, repeats):
    fn()  # kernels chosen, first touches made
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times), min(times), max(times)


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    dev = torch.device("cuda")
    where = os.environ.get("EMBER_MODE", "device")
    # gate-up (448 MiB) and down (224 MiB), as transformers lays out a layer's experts
    shapes = {"gate_up": (EXPERTS, 2 * INTERMEDIATE, HIDDEN), "down": (EXPERTS, HIDDEN, INTERMEDIATE)}
    gen = torch.Generator(device="cpu").manual_seed(0)
    for name, shape in shapes.items():
        w = torch.empty(shape, device=dev, dtype=torch.bfloat16)
        w.copy_(torch.randn(shape, generator=gen, dtype=torch.bfloat16))  # written from the host, as a loader does
        torch.cuda.synchronize()
        picks = torch.randperm(EXPERTS, generator=gen)[:PICKED].sort().values
        idx = picks.to(dev)
        first = int(picks[0])
        gathered = w[0].numel() * w.element_size() * PICKED
        cases = {
            "index": lambda: w[idx],
            "index_select": lambda: torch.index_select(w, 0, idx),
            "slice_copy": lambda: w[first:first + PICKED].clone(),
            "sum": lambda: w[first:first + PICKED].sum(dtype=torch.float32),  # reads alone, nothing written
        }
        for case, fn in cases.items():
            med, lo, hi = timed(fn, repeats)
            print(json.dumps({"bench": "gather-probe", "where": where, "tensor": name, "case": case,
                              "bytes": gathered, "seconds": med, "range": [lo, hi],
                              "gb_per_s": gathered / med / 1e9}), flush=True)
        del w
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
