"""PyTorch on the GPU, with bit-reproducible output.

run_both.sh runs this once plainly and once with Ember preloaded; stdout must
match byte for byte. So everything printed is either an exact value
(float.hex) or a SHA-256 of a tensor's bytes, computed with deterministic
algorithms only, and nothing printed depends on timing or addresses.

Covers: an fp32 and a bf16 matmul (cuBLAS), work on a side stream ordered by
events, pinned-memory async copies, and a few AdamW training steps of a small
MLP (forward, backward, optimizer) on synthetic data, then empty_cache.
"""
import hashlib
import os
import sys

# Must be set before CUDA (cuBLAS) is initialised for deterministic GEMMs.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

try:
    import torch
except ImportError:
    print("SKIP: torch not installed")
    sys.exit(77)


def digest(t):
    """SHA-256 (first 16 hex digits) of a tensor's exact bytes."""
    t = t.detach().contiguous().cpu()
    return hashlib.sha256(t.view(torch.uint8).numpy().tobytes()).hexdigest()[:16]


def main():
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77

    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    dev = torch.device("cuda", 0)
    # Inputs come from a CPU generator, so they do not depend on GPU RNG.
    gen = torch.Generator().manual_seed(42)

    # ---- matmuls ---------------------------------------------------------
    a = torch.randn(512, 384, generator=gen)
    b = torch.randn(384, 256, generator=gen)
    ga, gb = a.to(dev), b.to(dev)
    c32 = ga @ gb
    c16 = ga.bfloat16() @ gb.bfloat16()
    torch.cuda.synchronize()
    # Sanity against the CPU (not bit-exact across devices: a tolerance).
    ref = a.double() @ b.double()
    err32 = (c32.double().cpu() - ref).abs().max().item()
    err16 = (c16.double().cpu() - ref).abs().max().item()
    ok = err32 < 1e-3 and err16 < 1.0
    print(f"matmul fp32 {tuple(c32.shape)} sha256 {digest(c32)} sum {c32.double().sum().item().hex()}")
    print(f"matmul bf16 {tuple(c16.shape)} sha256 {digest(c16)} sum {c16.double().sum().item().hex()}")
    print(f"matmul close to cpu: {'yes' if ok else 'NO'}")

    # ---- streams and events ----------------------------------------------
    side = torch.cuda.Stream()
    done = torch.cuda.Event()
    host = torch.arange(1 << 20, dtype=torch.int64).pin_memory()
    with torch.cuda.stream(side):
        x = host.to(dev, non_blocking=True)
        y = (x * x) % 1000003
        done.record(side)
    torch.cuda.current_stream().wait_event(done)
    y_sum = int(y.sum().item())  # integer sum: exact
    want = sum((i * i) % 1000003 for i in range(1 << 20))
    print(f"stream int sum {y_sum} {'ok' if y_sum == want else 'MISMATCH'}")
    ok = ok and y_sum == want
    back = torch.empty_like(host).pin_memory()
    back.copy_(y, non_blocking=True)
    torch.cuda.synchronize()
    print(f"pinned copy back sha256 {digest(back)}")

    # ---- a few training steps --------------------------------------------
    n, d_in, d_hidden, n_cls = 1024, 64, 128, 10
    feats = torch.randn(n, d_in, generator=gen)
    w_true = torch.randn(d_in, n_cls, generator=gen)
    labels = (feats @ w_true).argmax(dim=1)
    feats, labels = feats.to(dev), labels.to(dev)

    torch.manual_seed(7)
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, d_hidden),
        torch.nn.GELU(),
        torch.nn.LayerNorm(d_hidden),
        torch.nn.Linear(d_hidden, d_hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(d_hidden, n_cls),
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)
    losses = []
    for step in range(5):
        opt.zero_grad(set_to_none=True)
        logits = model(feats)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        print(f"step {step} loss {loss.item().hex()}")
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    print(f"params {params.numel()} sha256 {digest(params)}")
    with torch.no_grad():
        acc = (model(feats).argmax(dim=1) == labels).sum().item()
    print(f"train correct {acc}/{n}")
    decreased = losses[-1] < losses[0]
    print(f"loss decreased: {'yes' if decreased else 'NO'}")
    ok = ok and decreased

    # ---- the allocator's own count -------------------------------------
    # memory_allocated() counts a live tensor (under backend:cudaMallocAsync
    # PyTorch reads the driver's pool, whose converted memory Ember adds)
    big = torch.empty(64 << 20, dtype=torch.uint8, device=dev)
    counted = torch.cuda.memory_allocated(dev) >= big.numel()
    print(f"memory_allocated counts a live 64 MiB tensor: {'yes' if counted else 'NO'}")
    ok = ok and counted
    del big

    torch.cuda.synchronize()
    # hand the cached memory back, as a program between phases does (under backend:cudaMallocAsync: a pool trim)
    torch.cuda.empty_cache()
    if not ok:
        print("torch_prog: FAILED")
        return 1
    print("torch_prog: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
