"""Microseconds per tiny JAX op (x = f(x), f jitted to x + 1 on 16 floats):
what a dispatch through Ember costs, with the allocation each op's output
takes from JAX's allocator (its BFC pool; its platform allocator, a
cuMemCreate per array; or cuda_async, a cuMemAllocFromPoolAsync per array,
which Ember converts under EMBER_MANAGE_ALL=1). Prints one JSON record:
the median over chunks of 1000 ops, and the 10th and 90th percentiles.
   jax_tiny_ops.py [CHUNKS]"""
import json
import sys

import jax
import jax.numpy as jnp

from tiny_ops import time_ops

chunks = int(sys.argv[1]) if len(sys.argv) > 1 else 30
f = jax.jit(lambda x: x + 1)
record = time_ops(f, lambda x: x.block_until_ready(), lambda x: float(x[0]), jnp.ones(16, dtype=jnp.float32), chunks)
print(json.dumps(record))
