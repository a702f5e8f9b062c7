#!/usr/bin/env python3
"""Whether Ember's own driver calls break a program's CUDA graph capture.

    capture_probe.py [--gib N] [--captures N] [--hold-ms N] [--mode global|thread_local|relaxed]

In global capture mode (torch.cuda.graph's default) a potentially unsafe
driver call from any thread can invalidate a capture, and on NVIDIA GPUs a
synchronising call from another thread on the same GPU does. Ember's worker
advises and prefetches from its own thread whenever its passes run. Run
this under ember-run with a budget smaller than --gib (EMBER_MANAGE_ALL=1,
adaptive), so that the worker moves data while the program captures: it
touches its tensors in turn and, before the touch has finished, captures a
small graph held open for --hold-ms (the worker's moves for the touch come
within it); it prints one JSON line: captures tried, captures that failed,
the first error.
Run plainly it is the baseline (every capture succeeds).
"""
import argparse
import json
import sys
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=3.0, help="total size of the tensors touched in turn")
    ap.add_argument("--captures", type=int, default=60)
    ap.add_argument("--hold-ms", type=float, default=20.0, help="how long each capture stays open")
    ap.add_argument("--mode", default="global", choices=["global", "thread_local", "relaxed"])
    a = ap.parse_args()
    dev = torch.device("cuda")
    chunk = 256 << 20
    tensors = [torch.ones(chunk // 4, device=dev) for _ in range(max(1, int(a.gib * (1 << 30)) // chunk))]
    x = torch.randn(1024, 1024, device=dev)
    w = torch.randn(1024, 1024, device=dev)
    side = torch.cuda.Stream()
    # warm up on the side stream first, as torch.cuda.graph's documentation asks (cuBLAS's handle
    # and workspace are made outside any capture)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch.relu(x @ w)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    failed, first_error = 0, None
    for i in range(a.captures):
        tensors[i % len(tensors)].add_(1.0)  # a touch the worker may answer with moves
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.stream(side):
                with torch.cuda.graph(g, stream=side, capture_error_mode=a.mode):
                    y = torch.relu(x @ w)
                    time.sleep(a.hold_ms / 1e3)  # host time only: the capture stays open
            g.replay()
            torch.cuda.synchronize()
            if not torch.allclose(y, torch.relu(x @ w)):
                raise RuntimeError("replayed result differs")
        except Exception as e:  # a failed capture is what is counted
            failed += 1
            if first_error is None:
                first_error = f"capture {i}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            torch.cuda.synchronize()
    print(json.dumps({"bench": "capture-probe", "mode": a.mode, "tensor_gib": len(tensors) * chunk / (1 << 30),
                      "captures": a.captures, "failed": failed, "first_error": first_error}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
