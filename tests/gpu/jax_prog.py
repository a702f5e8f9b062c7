"""JAX on the GPU, with bit-reproducible output.

run_both.sh runs this once plainly and once with Ember preloaded; stdout must
match byte for byte. XLA is asked for deterministic ops, which also turns
off its timing-based autotuning (two runs could otherwise pick different
GEMM algorithms and so different bits); what is printed is exact float bits
(float.hex) or SHA-256 digests of results.

Covers: a jit-compiled function, a matmul, a grad step (value_and_grad of an
MLP loss, jitted), a few SGD steps, and host<->device transfers.
"""
import hashlib
import os
import sys

# Set before JAX initialises its GPU backend.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.10")
_flags = os.environ.get("XLA_FLAGS", "")
if "xla_gpu_deterministic_ops" not in _flags:
    os.environ["XLA_FLAGS"] = (_flags + " --xla_gpu_deterministic_ops=true").strip()

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("SKIP: jax not installed")
    sys.exit(77)
import numpy as np


def digest(x):
    a = np.asarray(jax.device_get(x))
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def main():
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        print(f"SKIP: jax has no GPU backend ({str(e).splitlines()[0]})")
        return 77
    if not gpus:
        print("SKIP: jax has no GPU backend")
        return 77
    dev = gpus[0]
    ok = True

    def check(name, good):
        nonlocal ok
        print(f"{name}: {'ok' if good else 'MISMATCH'}")
        ok = ok and bool(good)

    print(f"backend: {jax.default_backend()}")

    # ---- jit and matmul -----------------------------------------------------
    rng = np.random.default_rng(99)
    ha = rng.standard_normal((256, 512)).astype(np.float32)
    hb = rng.standard_normal((512, 128)).astype(np.float32)
    a = jax.device_put(ha, dev)
    b = jax.device_put(hb, dev)

    @jax.jit
    def f(a, b):
        # Full fp32 precision, so the CPU check can be tight.
        c = jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)
        return jnp.tanh(c * 0.05) + jnp.sin(c) * 0.25, c

    y, c = f(a, b)
    y.block_until_ready()
    print(f"jit matmul sha256 {digest(c)}")
    print(f"jit output sha256 {digest(y)}")
    print(f"jit output sum {float(jnp.sum(y)).hex()}")
    ref = ha.astype(np.float64) @ hb.astype(np.float64)
    check("matmul close to numpy", np.allclose(np.asarray(c), ref, rtol=1e-4, atol=1e-3))
    # Integer work is exact: compare it exactly.
    hi = rng.integers(-1000, 1000, size=(64, 64)).astype(np.int32)
    ci = jax.jit(lambda m: (m @ m.T) % 9973)(jax.device_put(hi, dev))
    check("int matmul exact", np.array_equal(np.asarray(ci), (hi.astype(np.int64) @ hi.T.astype(np.int64)) % 9973))

    # ---- grad steps on a small MLP ------------------------------------------
    key = jax.random.PRNGKey(0)
    k1, k2, k3, k4 = jax.random.split(key, 4)
    d_in, d_h, d_out, n = 32, 64, 4, 512
    params = {
        "w1": jax.random.normal(k1, (d_in, d_h)) * (1.0 / np.sqrt(d_in)),
        "b1": jnp.zeros((d_h,)),
        "w2": jax.random.normal(k2, (d_h, d_out)) * (1.0 / np.sqrt(d_h)),
        "b2": jnp.zeros((d_out,)),
    }
    x = jax.random.normal(k3, (n, d_in))
    w_true = jax.random.normal(k4, (d_in, d_out))
    t = jnp.sin(x @ w_true)

    def loss_fn(p, x, t):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        out = h @ p["w2"] + p["b2"]
        return jnp.mean((out - t) ** 2)

    @jax.jit
    def step(p, x, t):
        loss, g = jax.value_and_grad(loss_fn)(p, x, t)
        p = jax.tree_util.tree_map(lambda w, gw: w - 0.1 * gw, p, g)
        return p, loss, g

    losses = []
    for i in range(5):
        params, loss, grads = step(params, x, t)
        losses.append(float(loss))
        print(f"step {i} loss {float(loss).hex()}")
    print(f"last grad w1 sha256 {digest(grads['w1'])}")
    flat = jnp.concatenate([jnp.ravel(params[k]) for k in sorted(params)])
    print(f"params {flat.size} sha256 {digest(flat)}")
    check("loss decreased", losses[-1] < losses[0])

    if not ok:
        print("jax_prog: FAILED")
        return 1
    print("jax_prog: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
