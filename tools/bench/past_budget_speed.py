"""How fast a framework's arrays run past Ember's budget: one JSON line.

    past_budget_speed.py FRAMEWORK MIB PASSES    (FRAMEWORK: torch, cupy, cupy-async or jax)

The arrays and passes of tests/gpu/past_budget.py (MIB MiB of integer
arrays of 64 MiB, all alive at once; each pass x = 3x + 1 over every one),
timed: the build, then each pass to the GPU's end. Run it without Ember for
everything resident, and under EMBER_MANAGE_ALL=1 with a budget smaller
than MIB with each of the framework's allocators (JAX: its BFC pool of
cuMemCreate memory, made in host memory past the budget and never
promoted; the platform allocator and cuda_async, whose allocations Ember
converts and places). The last pass's checksum is printed with the times,
so that variants can be seen to compute the same thing.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "gpu"))
from past_budget import ARRAY_MIB, FRAMEWORKS, MASK  # noqa: E402


def synchronizer(name, fw):
    """A call that returns once the GPU has finished what was asked of it."""
    if name == "torch":
        return lambda arrays: fw.t.cuda.synchronize()
    if name == "jax":
        return lambda arrays: fw.jax.block_until_ready(arrays)
    return lambda arrays: fw.cp.cuda.runtime.deviceSynchronize()


def gpu_name(name, fw):
    """The card, as the framework names it: every record says which GPU it ran on."""
    if name == "torch":
        return fw.t.cuda.get_device_name(0)
    if name == "jax":
        return fw.jax.devices("gpu")[0].device_kind
    props = fw.cp.cuda.runtime.getDeviceProperties(0)["name"]
    return props.decode() if isinstance(props, bytes) else props


def main():
    if (len(sys.argv) != 4 or sys.argv[1] not in FRAMEWORKS or not sys.argv[2].isdigit()
            or int(sys.argv[2]) < ARRAY_MIB or not sys.argv[3].isdigit() or int(sys.argv[3]) < 1):
        print(f"usage: past_budget_speed.py {{{','.join(FRAMEWORKS)}}} MIB PASSES", file=sys.stderr)
        return 2
    name, mib, passes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    fw = FRAMEWORKS[name]()
    sync = synchronizer(name, fw)
    n = (ARRAY_MIB << 20) // fw.item
    count = mib // ARRAY_MIB
    t0 = time.perf_counter()
    arrays = [fw.make(a, n) for a in range(count)]
    sync(arrays)
    build = time.perf_counter() - t0
    seconds = []
    for _ in range(passes):
        t0 = time.perf_counter()
        arrays = [fw.step(x) for x in arrays]
        sync(arrays)
        seconds.append(time.perf_counter() - t0)
    checksum = sum(fw.total(x) for x in arrays) & MASK
    print(json.dumps({
        "bench": "past-budget-speed", "framework": name, "working_set_bytes": count * (ARRAY_MIB << 20),
        "passes": passes, "build_seconds": round(build, 4), "pass_seconds": [round(s, 4) for s in seconds],
        "median_pass_seconds": round(statistics.median(seconds), 4), "checksum": f"{checksum:#010x}",
        "variant": os.environ.get("PAST_BUDGET_VARIANT", ""), "gpu": gpu_name(name, fw),
        "budget": os.environ.get("EMBER_BUDGET", ""),  # ember-run's --budget; empty without Ember
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
