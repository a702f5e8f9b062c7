"""Session 24 diagnostic: where a launch-bound generation's host time goes, op by op.

    python3 op_profile.py ARCH SIZE TOKENS

Builds the model as hf_generate.py does, warms up, then profiles three
generations of TOKENS tokens with torch.profiler (CPU activity only: no
CUPTI, which would sit beside Ember) and prints one JSON line: the wall
seconds of each generation and the 30 ops with the most self CPU time.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
import hf_generate  # noqa: E402  (tools/bench)
import torch  # noqa: E402


def main():
    arch, size, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model, config, _, _, _ = hf_generate.build(arch, size)
    prompt = torch.randint(0, config.vocab_size, (1, 8), device="cuda")
    gen = dict(do_sample=False, pad_token_id=0, eos_token_id=None, max_new_tokens=tokens, min_new_tokens=tokens)
    with torch.no_grad():
        model.generate(prompt, **gen)
        torch.cuda.synchronize()
        walls = []
        for _ in range(2):  # unprofiled, for the wall time
            t0 = time.perf_counter()
            model.generate(prompt, **gen)
            torch.cuda.synchronize()
            walls.append(time.perf_counter() - t0)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                model.generate(prompt, **gen)
            torch.cuda.synchronize()
    ops = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:30]
    print(json.dumps({"arch": arch, "size": size, "tokens": tokens, "walls": walls, "mode": os.environ.get("EMBER_MODE", "none"),
                      "ops": [{"name": e.key, "count": e.count, "self_cpu_us": round(e.self_cpu_time_total, 1),
                               "cpu_us": round(e.cpu_time_total, 1)} for e in ops]}))


if __name__ == "__main__":
    main()
