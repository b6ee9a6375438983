#!/usr/bin/env python3
"""A tiny llama-architecture GGUF model with random weights, for llama.cpp's decode benchmark
under encore (issue 13, scripts/gpu/llama). Nothing is downloaded: the gguf package (llama.cpp's
gguf-py, pure Python with numpy) writes the file.

    make-tiny-gguf.py OUT.gguf [--layers 8] [--embd 256] [--ff 704] [--heads 8] [--vocab 512] [--seed 0]

A small model keeps each decode step's kernels small, so launching them is what costs: the
case llama.cpp's own CUDA graphs are for. The vocabulary is a minimal SentencePiece-style one
(<unk>, <s>, </s>, the 256 byte tokens, then filler pieces): enough for llama-bench, which
feeds random token ids. Weights are F16, normal with a small scale (norms 1.0), so that the
logits stay finite and every run computes the same numbers.
"""
import argparse
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--ff", type=int, default=704)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gguf-py", default=os.environ.get("GGUF_PY"), help="llama.cpp's gguf-py directory, if gguf "
                    "is not installed")
    a = ap.parse_args()
    if a.gguf_py:
        sys.path.insert(0, a.gguf_py)
    import gguf  # noqa: E402

    if a.vocab < 259 + 1 or a.embd % a.heads:
        sys.exit("make-tiny-gguf: need --vocab > 259 and --embd a multiple of --heads")
    rng = np.random.default_rng(a.seed)
    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("encore-tiny-random")
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.heads)
    w.add_rope_dimension_count(a.embd // a.heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    tokens, scores, types = [b"<unk>", b"<s>", b"</s>"], [0.0, 0.0, 0.0], \
        [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    for i in range(256):
        tokens.append(b"<0x%02X>" % i)
        scores.append(0.0)
        types.append(gguf.TokenType.BYTE)
    i = 0
    while len(tokens) < a.vocab:
        tokens.append(("\u2581t%d" % i).encode())
        scores.append(-float(i))
        types.append(gguf.TokenType.NORMAL)
        i += 1
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    def mat(rows, cols):  # GGUF/numpy shape (rows, cols): ggml's ne = (cols, rows)
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    ones = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731  (norms stay F32, as llama.cpp writes them)
    E, F, V = a.embd, a.ff, a.vocab
    w.add_tensor("token_embd.weight", mat(V, E))
    for b in range(a.layers):
        p = f"blk.{b}."
        w.add_tensor(p + "attn_norm.weight", ones(E))
        for n in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + n + ".weight", mat(E, E))
        w.add_tensor(p + "ffn_norm.weight", ones(E))
        w.add_tensor(p + "ffn_gate.weight", mat(F, E))
        w.add_tensor(p + "ffn_up.weight", mat(F, E))
        w.add_tensor(p + "ffn_down.weight", mat(E, F))
    w.add_tensor("output_norm.weight", ones(E))
    w.add_tensor("output.weight", mat(V, E))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"make-tiny-gguf: {a.out}: {a.layers} layers, embd {E}, ff {F}, {a.heads} heads, vocab {V}, "
          f"{os.path.getsize(a.out) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
