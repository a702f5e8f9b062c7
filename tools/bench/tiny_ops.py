"""The timing loop of torch_tiny_ops.py and jax_tiny_ops.py: x = op(x), 2000
times to warm, then chunks of 1000, each ended by sync(x); checks that x[0]
counted every op, and returns the record's figures: microseconds per op, the
median over chunks and the 10th and 90th percentiles."""
import time

WARM, CHUNK = 2000, 1000


def time_ops(op, sync, first, x, chunks):
    """first(x): x's first element as a number; x starts at 1 and each op adds 1."""
    for _ in range(WARM):  # warm: the compilation or the kernel's module, the allocator
        x = op(x)
    sync(x)
    per_op = []
    for _ in range(chunks):
        t0 = time.perf_counter()
        for _ in range(CHUNK):
            x = op(x)
        sync(x)
        per_op.append((time.perf_counter() - t0) / CHUNK * 1e6)
    per_op.sort()
    expect = 1 + WARM + CHUNK * chunks
    assert first(x) == expect, f"x is {first(x)}, not {expect}"
    return {"ops": CHUNK * chunks, "median_us": per_op[len(per_op) // 2],
            "p10_us": per_op[len(per_op) // 10], "p90_us": per_op[len(per_op) * 9 // 10]}
