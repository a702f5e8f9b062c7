"""Microseconds per tiny JAX op (x = f(x), f jitted to x + 1 on 16 floats):
what a dispatch through Ember costs, with the allocation each op's output
takes from JAX's allocator (its BFC pool; its platform allocator, a
cuMemCreate per array; or cuda_async, a cuMemAllocFromPoolAsync per array,
which Ember converts under EMBER_MANAGE_ALL=1). Prints one JSON record:
the median over chunks of 1000 ops, and the 10th and 90th percentiles.
   jax_tiny_ops.py [CHUNKS]"""
import json
import sys
import time

import jax
import jax.numpy as jnp

chunks = int(sys.argv[1]) if len(sys.argv) > 1 else 30
f = jax.jit(lambda x: x + 1)
x = jnp.ones(16, dtype=jnp.float32)
for _ in range(2000):  # warm: the compilation, the allocator
    x = f(x)
x.block_until_ready()
per_op = []
for _ in range(chunks):
    t0 = time.perf_counter()
    for _ in range(1000):
        x = f(x)
    x.block_until_ready()
    per_op.append((time.perf_counter() - t0) / 1000 * 1e6)
per_op.sort()
expect = 1 + 2000 + 1000 * chunks
assert float(x[0]) == expect, f"x is {float(x[0])}, not {expect}"
print(json.dumps({"ops": 1000 * chunks, "median_us": per_op[len(per_op) // 2],
                  "p10_us": per_op[len(per_op) // 10], "p90_us": per_op[len(per_op) * 9 // 10]}))
