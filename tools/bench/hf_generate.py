"""hf-generate: token generation through transformers generate(), random weights.

An ordinary transformers program: a Llama-shaped (or Mixtral-shaped) causal
LM built from a config on the GPU in bf16, weights drawn at random (nothing
is downloaded), greedy generate() of a fixed number of new tokens after a
short prompt. Under EMBER_MANAGE_ALL=1 its allocations become managed
memory that Ember places under the budget.

    python3 hf_generate.py ARCH SIZE NEW_TOKENS RUNS [accelerate GPU_BYTES | load DIR]
    python3 hf_generate.py ARCH SIZE save DIR

ARCH: llama or mixtral. SIZE: 13b (Llama 2 13B shape, 26 GB bf16), 7b, 4b
(8.6 GB), tiny (a smoke test), or mixtral shapes: 8x1.5b (36 layers, 25 GB),
8x1b (24 layers, 17 GB), 8x1b-12 (12 layers, 8.6 GB), tiny. With
`accelerate GPU_BYTES`, the peer a user would pick instead of Ember: the
model in host memory (drawn on the GPU, then moved there) and dispatched by accelerate's device_map with
max_memory capping the GPU at GPU_BYTES, the rest offloaded to the CPU
(weights copied to the GPU layer by layer as each forward needs them).
With `load DIR`, the model is not drawn but loaded, as a user loads a
checkpoint: from_pretrained(DIR) onto the GPU (device_map "cuda"), DIR
being what `save DIR` wrote (the model drawn as above, then saved as
safetensors; run it once, without Ember). Prints one JSON record:
the load (build and initialise, or from_pretrained) time, the median seconds and tokens per
second of generation over RUNS runs, each after a one-token warm-up.
"""
import json
import os
import statistics
import sys
import time

import ember_hooks

import torch
import transformers

SHAPES = {
    ("llama", "13b"): dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=40,
                           num_attention_heads=40, num_key_value_heads=40),
    ("llama", "7b"): dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                          num_attention_heads=32, num_key_value_heads=32),
    ("llama", "4b"): dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=36,
                          num_attention_heads=24, num_key_value_heads=24),
    ("llama", "tiny"): dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=4),
    # Mixtral-style MoE: eight experts, two active per token, so each token reads a quarter of the expert weights
    ("mixtral", "8x1b"): dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=24,
                              num_attention_heads=16, num_key_value_heads=8, num_local_experts=8,
                              num_experts_per_tok=2),
    ("mixtral", "8x1.5b"): dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=36,
                                num_attention_heads=16, num_key_value_heads=8, num_local_experts=8,
                                num_experts_per_tok=2),
    ("mixtral", "8x1b-12"): dict(hidden_size=2048, intermediate_size=7168, num_hidden_layers=12,
                                 num_attention_heads=16, num_key_value_heads=8, num_local_experts=8,
                                 num_experts_per_tok=2),
    ("mixtral", "tiny"): dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                              num_experts_per_tok=2),
}


def stolen_seconds():
    """CPU time the hypervisor took from this machine's virtual CPUs, all of them (/proc/stat's steal)."""
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def model_config(arch, size):
    """The config of ARCH at SIZE (SHAPES) and the model class that builds it."""
    shape = SHAPES[(arch, size)]
    common = dict(vocab_size=32000, max_position_embeddings=4096, torch_dtype=torch.bfloat16)
    if arch == "llama":
        return transformers.LlamaConfig(**shape, **common), transformers.LlamaForCausalLM
    return transformers.MixtralConfig(**shape, **common), transformers.MixtralForCausalLM


def build(arch, size, offload_gpu_bytes=None):
    config, cls = model_config(arch, size)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    # weights made on the GPU in bf16 and drawn there: the way a program builds a model it then loads
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = cls(config)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
    model.eval()
    if offload_gpu_bytes:
        # The peer runs without Ember on a card that holds the whole model, so
        # it is drawn there too (on the CPU, 13B took minutes) and then moved
        # to host memory, where accelerate's offload starts from.
        model.to("cpu")
        torch.cuda.empty_cache()
        import accelerate
        limits = {0: offload_gpu_bytes, "cpu": 400 << 30}
        no_split = [m.__class__.__name__ for m in model.modules() if m.__class__.__name__.endswith("DecoderLayer")][:1]
        device_map = accelerate.infer_auto_device_map(model, max_memory=limits, no_split_module_classes=no_split)
        model = accelerate.dispatch_model(model, device_map=device_map)
    torch.cuda.synchronize()
    load = time.perf_counter() - t0
    params = sum(p.numel() for p in model.parameters())
    # an MoE token reads the shared weights and only its experts' share of the rest
    experts = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
    return model, config, load, params, experts


def load_checkpoint(arch, ckpt):
    """The model from_pretrained(ckpt) onto the GPU, and the seconds that took."""
    cls = transformers.LlamaForCausalLM if arch == "llama" else transformers.MixtralForCausalLM
    t0 = time.perf_counter()
    model = cls.from_pretrained(ckpt, torch_dtype=torch.bfloat16, device_map="cuda")
    model.eval()
    torch.cuda.synchronize()
    load = time.perf_counter() - t0
    params = sum(p.numel() for p in model.parameters())
    experts = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
    return model, model.config, load, params, experts


def save_checkpoint(arch, size, ckpt):
    """Draw the model (build) and write it to ckpt as safetensors: the checkpoint `load DIR` reads."""
    model = build(arch, size)[0]
    t0 = time.perf_counter()
    model.save_pretrained(ckpt, safe_serialization=True)
    return {"saved": ckpt, "arch": arch, "size": size, "save_seconds": round(time.perf_counter() - t0, 3)}


def cpu_probe(ops=2000):
    """Seconds for OPS tiny in-place adds on a CPU tensor: PyTorch's dispatch alone, no GPU and no Ember.
    Launch-bound generation runs at its process's CPU speed, which on the lent machine differs between
    processes by up to half (every op's own time moved together in ab-25's profiles); a generation's
    time against this one's is that speed taken out."""
    x = torch.zeros(1)
    t0 = time.perf_counter()
    for _ in range(ops):
        x.add_(1)
    return time.perf_counter() - t0


def measure(arch, size, new_tokens, runs, offload=None, checkpoint=None):
    """Build the model (or load it from checkpoint), generate RUNS times after a warm-up; the record."""
    if checkpoint:
        model, config, load, params, experts = load_checkpoint(arch, checkpoint)
    else:
        model, config, load, params, experts = build(arch, size, offload)
    prompt = torch.randint(0, config.vocab_size, (1, 8), device="cuda")
    gen = dict(do_sample=False, pad_token_id=0, eos_token_id=None)

    def generate(n):
        """The generation's seconds, the generating thread's CPU seconds, and the machine's stolen seconds."""
        torch.cuda.synchronize()
        t0, c0, s0 = time.perf_counter(), time.thread_time(), stolen_seconds()
        with torch.no_grad():
            out = model.generate(prompt, max_new_tokens=n, min_new_tokens=n, **gen)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0, time.thread_time() - c0, stolen_seconds() - s0), out

    generate(1)  # warm-up: kernels chosen, caches made, the static split done
    ember_hooks.flush()
    times, cpu, stolen, probe = [], [], [], []
    for _ in range(runs):
        (t, c, st), out = generate(new_tokens)
        times.append(t)
        cpu.append(c)
        stolen.append(st)
        probe.append(cpu_probe())
    assert out.shape[1] == prompt.shape[1] + new_tokens, out.shape
    seconds = statistics.median(times)
    return {
        "bench": "hf-generate", "arch": arch, "size": size, "params": params,
        "working_set_bytes": params * 2, "new_tokens": new_tokens, "runs": runs,
        "expert_bytes": experts * 2,
        "active_expert_fraction": getattr(config, "num_experts_per_tok", 1) / getattr(config, "num_local_experts", 1),
        "load_seconds": round(load, 3), "seconds": seconds, "tokens_per_second": new_tokens / seconds,
        "run_seconds": [round(t, 4) for t in times],
        # launch-bound runs spread with the machine: what the thread itself ran, and what the hypervisor took
        "run_cpu_seconds": [round(c, 4) for c in cpu], "run_stolen_seconds": [round(st, 3) for st in stolen],
        "run_cpu_probe_seconds": [round(p, 5) for p in probe],
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        **({"peer": "accelerate", "peer_gpu_bytes": offload} if offload else {}),
        **({"load_from": "checkpoint"} if checkpoint else {}),
    }


def main():
    if len(sys.argv) == 5 and sys.argv[3] == "save":
        print(json.dumps(save_checkpoint(sys.argv[1], sys.argv[2], sys.argv[4])))
        return
    arch, size, new_tokens, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    extra = sys.argv[5:7] if len(sys.argv) == 7 else [None, None]
    offload = int(extra[1]) if extra[0] == "accelerate" else None
    checkpoint = extra[1] if extra[0] == "load" else None
    print(json.dumps(measure(arch, size, new_tokens, runs, offload, checkpoint)))


if __name__ == "__main__":
    main()
