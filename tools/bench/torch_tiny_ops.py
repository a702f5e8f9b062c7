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

import torch

from tiny_ops import time_ops

chunks = int(sys.argv[1]) if len(sys.argv) > 1 else 30
alloc = len(sys.argv) > 2 and sys.argv[2] == "alloc"


def op(x):
    if alloc:
        return x + 1
    return x.add_(1)


record = time_ops(op, lambda x: torch.cuda.synchronize(), lambda x: x[0].item(), torch.ones(16, device="cuda"), chunks)
print(json.dumps({"ops": record.pop("ops"), "allocating": alloc, **record}))
