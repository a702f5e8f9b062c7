"""CuPy on the GPU, with bit-reproducible output.

run_both.sh runs this once plainly and once with Ember preloaded; stdout must
match byte for byte. Inputs come from NumPy's seeded generator on the host;
what is printed is integers, exact float bits (float.hex) or SHA-256 digests,
and each result is also checked against NumPy.

Covers: ElementwiseKernel and ReductionKernel (compiled at run time), a
RawKernel (NVRTC, launched through the driver), built-in reductions, a
cuBLAS matmul, two non-blocking streams ordered by an event, and pinned
memory with async copies.
"""
import hashlib
import sys

try:
    import cupy as cp
except ImportError:
    print("SKIP: cupy not installed")
    sys.exit(77)
import numpy as np


def digest(arr):
    a = cp.asnumpy(arr) if isinstance(arr, cp.ndarray) else arr
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


RAW_SRC = r"""
extern "C" __global__
void xorshift_rounds(const unsigned int* in, unsigned int* out, int n, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int x = in[i] ^ (unsigned int)i;
    for (int r = 0; r < rounds; r++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    out[i] = x;
}
"""


def xorshift_np(a, rounds):
    x = (a ^ np.arange(a.size, dtype=np.uint32)).astype(np.uint32)
    for _ in range(rounds):
        x ^= x << np.uint32(13)
        x ^= x >> np.uint32(17)
        x ^= x << np.uint32(5)
    return x


def main():
    try:
        ndev = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as e:
        print(f"SKIP: cupy sees no CUDA device ({e})")
        return 77
    if ndev < 1:
        print("SKIP: cupy sees no CUDA device")
        return 77

    ok = True
    rng = np.random.default_rng(2024)

    def check(name, good):
        nonlocal ok
        print(f"{name}: {'ok' if good else 'MISMATCH'}")
        ok = ok and bool(good)

    # ---- elementwise kernels ---------------------------------------------
    n = 1 << 20
    hi = rng.integers(0, 1 << 31, size=n, dtype=np.int64)
    hx = rng.standard_normal(n).astype(np.float32)
    di, dx = cp.asarray(hi), cp.asarray(hx)

    affine_mod = cp.ElementwiseKernel(
        "int64 x, int64 a, int64 b", "int64 y",
        "y = (x * a + b) % 1000000007", "ember_affine_mod")
    dy = affine_mod(di, 48271, 11)
    hy = (hi * 48271 + 11) % 1000000007
    print(f"elementwise int sha256 {digest(dy)}")
    check("elementwise int vs numpy", np.array_equal(cp.asnumpy(dy), hy))

    # Exact in fp32: (x*2)+1 has one rounding, same on both sides.
    dz = dx * cp.float32(2) + cp.float32(1)
    print(f"elementwise float sha256 {digest(dz)}")
    check("elementwise float vs numpy",
          np.array_equal(cp.asnumpy(dz), hx * np.float32(2) + np.float32(1)))

    # ---- RawKernel --------------------------------------------------------
    raw = cp.RawKernel(RAW_SRC, "xorshift_rounds")
    hu = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    du = cp.asarray(hu)
    dout = cp.empty_like(du)
    threads = 256
    raw(((n + threads - 1) // threads,), (threads,), (du, dout, cp.int32(n), cp.int32(9)))
    print(f"rawkernel sha256 {digest(dout)}")
    check("rawkernel vs numpy", np.array_equal(cp.asnumpy(dout), xorshift_np(hu, 9)))

    # ---- reductions -------------------------------------------------------
    isum = int(dy.sum())
    check(f"int sum {isum}", isum == int(hy.sum()))
    imax = int(di.max())
    check(f"int max {imax}", imax == int(hi.max()))
    # Float reductions: CuPy's reduction kernels use a fixed tree, so the
    # bits are the same every run on the same GPU; compare to NumPy loosely.
    fsum = float(dx.sum())
    print(f"float sum {fsum.hex()}")
    check("float sum close to numpy", abs(fsum - float(hx.astype(np.float64).sum())) < 1e-1)
    sumsq = cp.ReductionKernel(
        "T x", "T y", "x * x", "a + b", "y = a", "0", "ember_sumsq")
    ssq = float(sumsq(dx.astype(cp.float64)))
    print(f"reductionkernel sum of squares {ssq.hex()}")
    check("reductionkernel close to numpy",
          abs(ssq - float((hx.astype(np.float64) ** 2).sum())) < 1e-6 * ssq)

    # ---- matmul -----------------------------------------------------------
    ha = rng.standard_normal((384, 512)).astype(np.float32)
    hb = rng.standard_normal((512, 256)).astype(np.float32)
    dc = cp.asarray(ha) @ cp.asarray(hb)
    print(f"matmul fp32 sha256 {digest(dc)}")
    check("matmul close to numpy",
          np.allclose(cp.asnumpy(dc), ha.astype(np.float64) @ hb.astype(np.float64),
                      rtol=1e-4, atol=1e-3))
    hai = rng.integers(-50, 50, size=(200, 300)).astype(np.float64)
    hbi = rng.integers(-50, 50, size=(300, 100)).astype(np.float64)
    dci = cp.asarray(hai) @ cp.asarray(hbi)  # small integers: exact in fp64
    print(f"matmul fp64 ints sha256 {digest(dci)}")
    check("matmul fp64 ints exact", np.array_equal(cp.asnumpy(dci), hai @ hbi))

    # ---- streams, events, pinned memory ------------------------------------
    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)
    m = 1 << 20
    pinned = cp.cuda.alloc_pinned_memory(m * 4)
    hp = np.frombuffer(pinned, dtype=np.int32, count=m)
    hp[:] = np.arange(m, dtype=np.int32) * 3
    with s1:
        da = cp.empty(m, dtype=cp.int32)
        da.set(hp, stream=s1)
        da *= 5
        ev = s1.record()
    s2.wait_event(ev)
    with s2:
        db = da + 7
        res = db.get(stream=s2)
    s2.synchronize()
    s1.synchronize()
    want = np.arange(m, dtype=np.int32) * 15 + 7
    print(f"streams sha256 {digest(res)}")
    check("streams vs numpy", np.array_equal(res, want))

    cp.cuda.Device(0).synchronize()
    if not ok:
        print("cupy_prog: FAILED")
        return 1
    print("cupy_prog: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
