"""A framework's arrays past Ember's budget, with bit-reproducible output.

    past_budget.py FRAMEWORK MIB     (FRAMEWORK: torch, cupy, cupy-async or jax)

Makes MIB MiB of integer arrays on the GPU in arrays of 64 MiB, all alive at
once, then passes over every one of them three times (x = 3x + 1, mod 2^32).
Under a smaller EMBER_BUDGET with EMBER_MANAGE_ALL=1, the arrays past the
budget live in host memory mapped for the GPU, and the program runs as it
does with everything on the card. run_both.sh runs it plainly and with Ember
preloaded: stdout must match byte for byte. What is printed is each pass's
checksum, the sum over every element x of (x mod 2^16) * x, mod 2^32;
sampled elements are checked against the same arithmetic on the host.

Element i of array a starts as ((a * n + i) * 2654435761) mod 2^32. torch
keeps them as int64 (its uint32 tensors lack arithmetic), masked to 32 bits.
"""
import sys

ARRAY_MIB = 64
PASSES = 3
MASK = 0xFFFFFFFF
GOLDEN = 2654435761
SAMPLES = 64


def expected(a, n, i, passes):
    v = ((a * n + i) * GOLDEN) & MASK
    for _ in range(passes):
        v = (v * 3 + 1) & MASK
    return v


class Torch:
    item = 8

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise LookupError("torch sees no CUDA device")
        self.t = torch

    def make(self, a, n):
        t = self.t
        return (t.arange(a * n, (a + 1) * n, dtype=t.int64, device="cuda") * GOLDEN).bitwise_and_(MASK)

    def step(self, x):
        return x.mul_(3).add_(1).bitwise_and_(MASK)

    def total(self, x):
        return int(((x & 0xFFFF) * x).bitwise_and_(MASK).sum().item()) & MASK

    def sample(self, x, idx):
        return [int(v) for v in x[self.t.tensor(idx, device="cuda")].cpu().tolist()]


class Cupy:
    item = 4

    def __init__(self):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise LookupError("cupy sees no CUDA device")
        self.cp = cupy

    def make(self, a, n):
        cp = self.cp
        # the start wraps as the elements do: past 16 GiB of arrays a * n passes 2^32
        return (cp.arange(n, dtype=cp.uint32) + cp.uint32((a * n) & MASK)) * cp.uint32(GOLDEN)

    def step(self, x):
        x *= self.cp.uint32(3)
        x += self.cp.uint32(1)
        return x

    def total(self, x):
        return int(self.cp.sum((x & self.cp.uint32(0xFFFF)) * x, dtype=self.cp.uint64)) & MASK

    def sample(self, x, idx):
        return [int(v) for v in self.cp.asnumpy(x[self.cp.asarray(idx)])]


class CupyAsync(Cupy):
    """CuPy with its stream-ordered pool (cudaMallocFromPoolAsync) in place of its own."""

    def __init__(self):
        super().__init__()
        self.cp.cuda.set_allocator(self.cp.cuda.MemoryAsyncPool().malloc)


class Jax:
    item = 4

    def __init__(self):
        import jax
        import jax.numpy as jnp
        if not jax.devices("gpu"):
            raise LookupError("jax has no GPU backend")
        self.jax, self.jnp = jax, jnp
        self._step = jax.jit(lambda x: x * jnp.uint32(3) + jnp.uint32(1), donate_argnums=0)
        self._total = jax.jit(lambda x: jnp.sum((x & jnp.uint32(0xFFFF)) * x, dtype=jnp.uint32))

    def make(self, a, n):
        jnp = self.jnp
        start = jnp.uint32((a * n) & MASK)
        return (jnp.arange(n, dtype=jnp.uint32) + start) * jnp.uint32(GOLDEN)

    def step(self, x):
        return self._step(x)

    def total(self, x):
        return int(self._total(x))

    def sample(self, x, idx):
        import numpy as np
        return [int(v) for v in np.asarray(x[self.jnp.asarray(idx)])]


FRAMEWORKS = {"torch": Torch, "cupy": Cupy, "cupy-async": CupyAsync, "jax": Jax}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in FRAMEWORKS or not sys.argv[2].isdigit() or int(sys.argv[2]) < ARRAY_MIB:
        print(f"usage: past_budget.py {{{','.join(FRAMEWORKS)}}} MIB (at least {ARRAY_MIB})", file=sys.stderr)
        return 2
    name, mib = sys.argv[1], int(sys.argv[2])
    try:
        fw = FRAMEWORKS[name]()
    except ImportError:
        print(f"SKIP: {name} not installed")
        return 77
    except (LookupError, RuntimeError) as e:
        print(f"SKIP: {str(e).splitlines()[0]}")
        return 77
    n = (ARRAY_MIB << 20) // fw.item
    count = mib // ARRAY_MIB
    arrays = [fw.make(a, n) for a in range(count)]
    print(f"past_budget: {name}, {count} arrays of {ARRAY_MIB} MiB ({count * ARRAY_MIB} MiB), {PASSES} passes")
    for p in range(1, PASSES + 1):
        arrays = [fw.step(x) for x in arrays]
        print(f"pass {p}: checksum {sum(fw.total(x) for x in arrays) & MASK:#010x}")
    idx = [(k * 2654435761 + 12345) % n for k in range(SAMPLES)]
    wrong = 0
    for a, x in enumerate(arrays):
        got = fw.sample(x, idx)
        wrong += sum(g != expected(a, n, i, PASSES) for g, i in zip(got, idx))
    if wrong:
        print(f"past_budget: {wrong} of {count * SAMPLES} sampled elements wrong")
        return 1
    print(f"past_budget: {count * SAMPLES} sampled elements right")
    print(f"{name}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
