"""Microseconds per tiny PyTorch eager op (x.add_(1) on 16 floats): what a
launch through Ember costs a framework that launches one small kernel per
op. Prints one JSON record: the median over chunks of 1000 ops, and the
10th and 90th percentiles. Nothing here is managed unless the run is under
EMBER_MANAGE_ALL=1.
   torch_tiny_ops.py [CHUNKS] [alloc]
With alloc, each op makes a new tensor (x = x + 1), whose memory the
allocator gives: from its cache, or under
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync a cuMemAllocAsync and a
cuMemFreeAsync per op, which Ember converts under EMBER_MANAGE_ALL=1."""
import json
import sys
import time

import torch

chunks = int(sys.argv[1]) if len(sys.argv) > 1 else 30
alloc = len(sys.argv) > 2 and sys.argv[2] == "alloc"
x = torch.ones(16, device="cuda")


def op(x):
    if alloc:
        return x + 1
    return x.add_(1)


for _ in range(2000):  # warm: the allocator, the kernel's module
    x = op(x)
torch.cuda.synchronize()
per_op = []
for _ in range(chunks):
    t0 = time.perf_counter()
    for _ in range(1000):
        x = op(x)
    torch.cuda.synchronize()
    per_op.append((time.perf_counter() - t0) / 1000 * 1e6)
per_op.sort()
expect = 1 + 2000 + 1000 * chunks
assert x[0].item() == expect, f"x is {x[0].item()}, not {expect}"
print(json.dumps({"ops": 1000 * chunks, "allocating": alloc, "median_us": per_op[len(per_op) // 2],
                  "p10_us": per_op[len(per_op) // 10], "p90_us": per_op[len(per_op) * 9 // 10]}))
