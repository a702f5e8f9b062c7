#!/usr/bin/env python3
"""Where initialising a transformers model past the budget spends its time, phase by phase.

    init_phases.py ARCH SIZE [STACKS_FILE]

hf_generate.py's build(), taken apart: the model built under torch.device("cuda") (its modules'
own initialisation draws every weight once), then every parameter drawn again with normal_(), each
phase timed on the host as it returns and again once the GPU has finished it. With STACKS_FILE,
faulthandler writes every thread's Python stack there every 0.25 s (from a C thread, so a main
thread held in a driver call is seen too): where a phase waits. Prints one JSON record.
On Python 3.12 before 3.12.8 the sampling can itself crash the process when it finds the main thread in
an interpreter trampoline frame (CPython's gh-123967; ab-43's call 5): a run with STACKS_FILE that dies
with SIGSEGV says nothing about the program.
"""
import faulthandler
import json
import sys
import time

import torch

from hf_generate import model_config


def main():
    arch, size = sys.argv[1], sys.argv[2]
    stacks = open(sys.argv[3], "w") if len(sys.argv) > 3 else None
    config, cls = model_config(arch, size)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    torch.zeros(1, device="cuda")  # the context made before the clock starts
    torch.cuda.synchronize()
    if stacks:
        faulthandler.dump_traceback_later(0.25, repeat=True, file=stacks)
    t = [time.perf_counter()]
    with torch.device("cuda"):
        model = cls(config)
    t.append(time.perf_counter())
    torch.cuda.synchronize()
    t.append(time.perf_counter())
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
    t.append(time.perf_counter())
    torch.cuda.synchronize()
    t.append(time.perf_counter())
    if stacks:
        faulthandler.cancel_dump_traceback_later()
    print(json.dumps({"bench": "init-phases", "arch": arch, "size": size,
                      "params_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
                      "build_host_s": round(t[1] - t[0], 4), "build_gpu_wait_s": round(t[2] - t[1], 4),
                      "draw_host_s": round(t[3] - t[2], 4), "draw_gpu_wait_s": round(t[4] - t[3], 4),
                      "total_s": round(t[4] - t[0], 4)}))


if __name__ == "__main__":
    main()
