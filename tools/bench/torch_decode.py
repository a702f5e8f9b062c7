"""torch-decode: token-by-token generation through a stack of bf16 linear layers.

The model is ordinary PyTorch: weights created on the GPU, batch 1, one
matrix-vector product per layer per token. Under EMBER_MANAGE_ALL=1 its
cudaMalloc calls become managed memory that Ember places under the budget.

    python3 torch_decode.py BYTES TOKENS RUNS

Prints one JSON record: the median seconds for TOKENS tokens over RUNS runs.
"""
import json
import statistics
import sys
import time

import ember_hooks

import torch

DIM = 8192  # one layer: DIM x DIM bf16 = 128 MiB


def main():
    nbytes, tokens, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    layer_bytes = DIM * DIM * 2
    layers = max(1, nbytes // layer_bytes)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    weights = [torch.randn(DIM, DIM, device=dev, dtype=torch.bfloat16) * (DIM ** -0.5) for _ in range(layers)]
    torch.cuda.synchronize()

    def generate(n):
        x = torch.randn(1, DIM, device=dev, dtype=torch.bfloat16)
        for _ in range(n):
            h = x
            for w in weights:
                h = torch.nn.functional.linear(h, w)
                h = h * torch.rsqrt(h.float().pow(2).mean() + 1e-6).to(h.dtype)
            x = h
        torch.cuda.synchronize()
        return x

    generate(1)  # warm-up: kernels selected, caches filled
    ember_hooks.flush()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = generate(tokens)
        times.append(time.perf_counter() - t0)
    assert torch.isfinite(out.float()).all(), "generation produced non-finite values"
    print(json.dumps({
        "bench": "torch-decode", "working_set_bytes": layers * layer_bytes, "layers": layers,
        "tokens": tokens, "runs": runs, "seconds": statistics.median(times),
        "run_seconds": [round(t, 6) for t in times],
    }))


if __name__ == "__main__":
    main()
