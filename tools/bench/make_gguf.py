"""make-gguf: a Llama-architecture F16 GGUF with synthetic weights, for llama.cpp benchmarks.

    python3 make_gguf.py GGUF_PY_DIR OUT.gguf [13b|7b|4b|tiny]

GGUF_PY_DIR is the gguf-py folder of a llama.cpp source tree (not part of
Ember: bring it, see DESIGN.md). Nothing is downloaded: the weights are a
block of normal(0, 0.02) values repeated, the vocabulary is made-up tokens.
Tensors are streamed to the file one at a time, so memory stays small.
"""
import sys
import time

SHAPES = {
    # hidden, layers, ffn, heads
    "13b": (5120, 40, 13824, 40),
    "7b": (4096, 32, 11008, 32),
    "4b": (3072, 36, 8192, 24),
    "tiny": (256, 2, 512, 4),
}
VOCAB = 32000


def main():
    sys.path.insert(0, sys.argv[1])
    import gguf
    import numpy as np  # here, not above: suite_record.py takes SHAPES from this file without numpy

    out, size = sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "13b"
    hidden, layers, ffn, heads = SHAPES[size]
    t0 = time.time()
    w = gguf.GGUFWriter(out, "llama")
    w.add_name(f"ember-synthetic-llama-{size}")
    w.add_context_length(4096)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_rope_dimension_count(hidden // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_vocab_size(VOCAB)
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(3, VOCAB)])
    w.add_token_scores([0.0] * VOCAB)
    w.add_token_types([gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] +
                      [gguf.TokenType.NORMAL] * (VOCAB - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    # (name, numpy shape, dtype): norms in F32, matrices in F16, as llama.cpp's converter writes them
    tensors = [("token_embd.weight", (VOCAB, hidden), np.float16)]
    for i in range(layers):
        b = f"blk.{i}."
        tensors += [(b + "attn_norm.weight", (hidden,), np.float32),
                    (b + "attn_q.weight", (hidden, hidden), np.float16),
                    (b + "attn_k.weight", (hidden, hidden), np.float16),
                    (b + "attn_v.weight", (hidden, hidden), np.float16),
                    (b + "attn_output.weight", (hidden, hidden), np.float16),
                    (b + "ffn_norm.weight", (hidden,), np.float32),
                    (b + "ffn_gate.weight", (ffn, hidden), np.float16),
                    (b + "ffn_up.weight", (ffn, hidden), np.float16),
                    (b + "ffn_down.weight", (hidden, ffn), np.float16)]
    tensors += [("output_norm.weight", (hidden,), np.float32), ("output.weight", (VOCAB, hidden), np.float16)]
    for name, shape, dtype in tensors:
        w.add_tensor_info(name, shape, np.dtype(dtype), int(np.prod(shape)) * np.dtype(dtype).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()

    rng = np.random.default_rng(0)
    block = (rng.standard_normal(1 << 20) * 0.02).astype(np.float16)
    total = 0
    for name, shape, dtype in tensors:
        n = int(np.prod(shape))
        if dtype == np.float32:
            data = np.ones(n, dtype=np.float32)
        else:
            data = np.resize(block, n)
        w.write_tensor_data(data.reshape(shape))
        total += data.nbytes
    w.close()
    print(f"make-gguf: {out}: {len(tensors)} tensors, {total / 1e9:.1f} GB in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
