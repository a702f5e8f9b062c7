"""How fast a PyTorch training step runs past Ember's budget: one JSON line.

    train_step.py MIB STEPS [--offload-optimizer]

Trains tests/gpu/train_past_budget.py's model at a larger width (4096, 2048
tokens a batch), with MIB MiB of weights, gradients and AdamW moments, for
one step that allocates the gradients and moments, then STEPS timed steps,
each to the GPU's end. Run it without Ember for everything resident, and
under ember-run --manage-all 1 with a budget smaller than the working set.

--offload-optimizer is the peer a user without Ember would reach for when
the model does not fit: the optimizer offload of ZeRO-Offload, written in
plain PyTorch. The GPU holds bf16 weights and gradients; fp32 master weights
and AdamW run on the host, the gradients come down and the weights go back
up each step through page-locked buffers. Its losses differ from the others'
(bf16 weights, not autocast), so only its time compares.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "gpu"))
from train_past_budget import BYTES_PER_PARAM, SEED, Trainer, blocks_for, load_torch  # noqa: E402

WIDTH, TOKENS = 4096, 2048


class OffloadTrainer:
    """Weights and gradients in bf16 on the GPU; fp32 master weights and AdamW on the host."""

    def __init__(self, torch, mib, width, tokens):
        nn = torch.nn
        self.t = torch
        torch.manual_seed(SEED)
        host = nn.ModuleList(
            nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
            for _ in range(blocks_for(mib, width)))
        self.master = [p.detach().pin_memory() for p in host.parameters()]
        for m in self.master:
            m.grad = torch.empty_like(m)
        self.blocks = host.to(device="cuda", dtype=torch.bfloat16)
        self.gpu = list(self.blocks.parameters())
        self.grads = [torch.empty(m.shape, dtype=torch.bfloat16).pin_memory() for m in self.master]
        self.staging = [torch.empty(m.shape, dtype=torch.bfloat16).pin_memory() for m in self.master]
        try:
            self.opt = torch.optim.AdamW(self.master, lr=1e-4, fused=True)
        except (RuntimeError, ValueError):  # no fused AdamW on the host in this PyTorch
            self.opt = torch.optim.AdamW(self.master, lr=1e-4, foreach=True)
        self.batches = torch.Generator(device="cuda").manual_seed(SEED)
        self.width, self.tokens = width, tokens

    def step(self):
        t = self.t
        x = t.randn(self.tokens, self.width, device="cuda", generator=self.batches).bfloat16()
        y = t.randn(self.tokens, self.width, device="cuda", generator=self.batches)
        for b in self.blocks:
            x = x + b(x)
        loss = t.nn.functional.mse_loss(x.float(), y)
        loss.backward()
        for p, g in zip(self.gpu, self.grads):
            g.copy_(p.grad, non_blocking=True)
            p.grad = None
        t.cuda.synchronize()
        for m, g in zip(self.master, self.grads):
            m.grad.copy_(g)
        self.opt.step()
        for p, m, s in zip(self.gpu, self.master, self.staging):
            s.copy_(m)
            p.data.copy_(s, non_blocking=True)
        return loss.detach()

    def params(self):
        return sum(m.numel() for m in self.master)


def main():
    args = [a for a in sys.argv[1:] if a != "--offload-optimizer"]
    offload = len(args) < len(sys.argv) - 1
    if len(args) != 2 or not all(a.isdigit() and int(a) > 0 for a in args):
        print("usage: train_step.py MIB STEPS [--offload-optimizer]", file=sys.stderr)
        return 2
    mib, steps = int(args[0]), int(args[1])
    torch = load_torch()
    t0 = time.perf_counter()
    trainer = (OffloadTrainer if offload else Trainer)(torch, mib, WIDTH, TOKENS)
    losses = [float(trainer.step().item())]  # the first step allocates gradients and moments
    build = time.perf_counter() - t0
    seconds = []
    for _ in range(steps):
        t0 = time.perf_counter()
        losses.append(float(trainer.step().item()))
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - t0)
    print(json.dumps({
        "bench": "train-step", "variant": os.environ.get("TRAIN_VARIANT", "offload-optimizer" if offload else ""),
        "params": trainer.params(), "state_bytes": trainer.params() * BYTES_PER_PARAM,
        "gpu_peak_bytes": torch.cuda.max_memory_allocated(), "blocks": len(trainer.blocks),
        "width": WIDTH, "tokens": TOKENS, "steps": steps, "build_seconds": round(build, 4),
        "step_seconds": [round(s, 4) for s in seconds], "median_step_seconds": round(statistics.median(seconds), 4),
        "losses": [v.hex() for v in losses], "gpu": torch.cuda.get_device_name(0),
        "budget": os.environ.get("EMBER_BUDGET", ""),  # ember-run's --budget; empty without Ember
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
