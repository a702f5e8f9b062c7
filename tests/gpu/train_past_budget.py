"""A PyTorch training loop whose model, gradients and optimizer state pass Ember's budget.

    train_past_budget.py MIB [STEPS]

Builds an MLP of residual blocks (Linear d -> 4d, GELU, Linear 4d -> d) in
fp32 with as many whole blocks as its parameters, their gradients and AdamW's two
moments (16 bytes a parameter) fit in MIB MiB, then trains it for STEPS steps
(default 3) under bf16 autocast on random batches, as a fine-tuning script
would. The gradients are set to None after each step, so every backward pass
allocates them again from PyTorch's cache: blocks that held last step's
activations or gradients are recycled.

Under EMBER_MANAGE_ALL=1 with a budget smaller than MIB, what passes the
budget lives in host memory mapped for the GPU. Deterministic algorithms and
fixed seeds make the run bit-reproducible, so run_both.sh requires the same
stdout with and without Ember: each step's loss and two checksums of the weights,
one of them over the weights joined by torch.cat, printed exactly (float.hex).
"""
import os
import sys

BYTES_PER_PARAM = 16  # fp32 weight, its gradient, AdamW's exp_avg and exp_avg_sq
SEED = 1234


def block_params(width):
    return 8 * width * width + 5 * width  # two weights and their biases


def blocks_for(mib, width):
    return max(1, (mib << 20) // (BYTES_PER_PARAM * block_params(width)))


class Trainer:
    """The model, its optimizer and the batches: the same for every variant that trains on the GPU."""

    def __init__(self, torch, mib, width, tokens):
        self.t = torch
        nn = torch.nn
        torch.manual_seed(SEED)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(width, 4 * width, device="cuda"), nn.GELU(),
                          nn.Linear(4 * width, width, device="cuda"))
            for _ in range(blocks_for(mib, width)))
        self.opt = torch.optim.AdamW(self.blocks.parameters(), lr=1e-4, fused=True)
        self.batches = torch.Generator(device="cuda").manual_seed(SEED)
        self.width, self.tokens = width, tokens

    def batch(self):
        t = self.t
        x = t.randn(self.tokens, self.width, device="cuda", generator=self.batches)
        y = t.randn(self.tokens, self.width, device="cuda", generator=self.batches)
        return x, y

    def step(self):
        """One step; the loss as a GPU tensor, so that the caller decides when to wait."""
        t = self.t
        x, y = self.batch()
        with t.autocast("cuda", dtype=t.bfloat16):
            for b in self.blocks:
                x = x + b(x)
            loss = t.nn.functional.mse_loss(x.float(), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return loss.detach()

    def params(self):
        return sum(p.numel() for p in self.blocks.parameters())

    def checksum(self):
        """The weights summed in float64 on the GPU: one exact number to compare."""
        return float(sum(p.detach().double().sum() for p in self.blocks.parameters()).item())

    def joined_checksum(self):
        """The weights joined into one flat tensor (torch.cat, as a script saving them would), summed in float64."""
        t = self.t
        return float(t.cat([p.detach().flatten() for p in self.blocks.parameters()]).double().sum().item())


def load_torch():
    # cuBLAS needs a fixed workspace to be deterministic; set before it starts
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    if not torch.cuda.is_available():
        raise LookupError("torch sees no CUDA device")
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    return torch


def main():
    args = sys.argv[1:]
    if not 1 <= len(args) <= 2 or not all(a.isdigit() and int(a) > 0 for a in args):
        print("usage: train_past_budget.py MIB [STEPS]", file=sys.stderr)
        return 2
    mib, steps = int(args[0]), int(args[1]) if len(args) > 1 else 3
    try:
        torch = load_torch()
    except ImportError:
        print("SKIP: torch not installed")
        return 77
    except (LookupError, RuntimeError) as e:
        print(f"SKIP: {str(e).splitlines()[0]}")
        return 77
    trainer = Trainer(torch, mib, width=1024, tokens=512)
    print(f"train_past_budget: {len(trainer.blocks)} blocks, {trainer.params()} parameters "
          f"({trainer.params() * BYTES_PER_PARAM >> 20} MiB with gradients and AdamW's moments), {steps} steps")
    for s in range(1, steps + 1):
        print(f"step {s}: loss {float(trainer.step().item()).hex()}")
    print(f"weights: sum {trainer.checksum().hex()}")
    print(f"weights joined: sum {trainer.joined_checksum().hex()}")
    print("torch: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
