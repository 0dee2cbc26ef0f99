#!/usr/bin/env python3
"""llama.cpp as the inference-engine anchor of `ragen bench --vs-llamacpp`.

Measures prefill and cached greedy decoding of a GGUF file (one that
`ragen export --gguf` wrote from the model being benchmarked) through
llama-cpp-python's low-level API, the same way `ragen bench` measures its
own: prefill of B prompts of P random tokens (the time of the forward
pass), and decoding of N tokens after a prompt of P tokens for B sequences
at once (the time of the N decode steps; llama.cpp's batch API puts one
token of every sequence in each llama_decode call, each sequence its own
seq_id). The keys and values are kept in the model's dtype (F32 for an F32
export: llama.cpp's default is F16) and the threads are the caller's.
Each measurement runs `repeat` times; the fastest counts.

One JSON request on stdin:
  {"model": PATH, "threads": T, "repeat": R, "seed": S,
   "prefill": [{"batch": B, "tokens": P}, ...],
   "decode": [{"batch": B, "prompt": P, "new": N}, ...]}
One JSON answer on stdout:
  {"llama_cpp": version, "kv": "f32"|"f16",
   "prefill": [{"batch", "tokens", "seconds", "tokens_per_s"}],
   "decode": [{"batch", "prompt", "new", "seconds", "tokens_per_s"}]}
"""
import json
import sys
import time

import numpy as np

import llama_cpp as L

GGML_TYPE_F32, GGML_TYPE_F16 = 0, 1


@L.llama_log_callback
def _quiet(level, text, user_data):
    """llama.cpp's own log (thousands of lines per load) stays out."""


L.llama_log_set(_quiet, None)


class Engine:
    def __init__(self, path, threads, max_batch, max_tokens, kv):
        L.llama_backend_init()
        mp = L.llama_model_default_params()
        self.model = L.llama_model_load_from_file(path.encode(), mp)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        cp = L.llama_context_default_params()
        cp.n_ctx = max_batch * max_tokens
        cp.n_batch = cp.n_ctx
        cp.n_ubatch = min(cp.n_ctx, 2048)
        cp.n_seq_max = max_batch
        cp.n_threads = cp.n_threads_batch = threads
        cp.type_k = cp.type_v = kv
        cp.kv_unified = True
        self.ctx = L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise RuntimeError("llama.cpp cannot make a context")
        self.batch = L.llama_batch_init(cp.n_batch, 0, 1)

    def clear(self):
        L.llama_memory_clear(L.llama_get_memory(self.ctx), True)

    def fill(self, items):
        """items: (token, pos, seq, want_logits) in order."""
        b = self.batch
        b.n_tokens = len(items)
        for i, (tok, pos, seq, logits) in enumerate(items):
            b.token[i], b.pos[i], b.n_seq_id[i] = tok, pos, 1
            b.seq_id[i][0] = seq
            b.logits[i] = logits

    def decode(self):
        rc = L.llama_decode(self.ctx, self.batch)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")

    def argmax(self, i):
        p = L.llama_get_logits_ith(self.ctx, i)
        return int(np.argmax(np.ctypeslib.as_array(p, shape=(self.n_vocab,))))

    def prefill(self, prompts):
        """Every prompt in one llama_decode; the logits of each last token."""
        self.clear()
        items = []
        for s, p in enumerate(prompts):
            items += [(t, j, s, j == len(p) - 1) for j, t in enumerate(p)]
        self.fill(items)
        t0 = time.perf_counter()
        self.decode()
        return time.perf_counter() - t0

    def generate(self, prompts, n):
        """Greedy decoding of n tokens for every prompt; the time of the
        decode steps (after the prefill)."""
        self.prefill(prompts)
        last = [0] * len(prompts)
        k = 0
        for s, p in enumerate(prompts):
            k += len(p)
            last[s] = self.argmax(k - 1)
        t0 = time.perf_counter()
        for step in range(n - 1):
            self.fill([(last[s], len(p) + step, s, True) for s, p in enumerate(prompts)])
            self.decode()
            last = [self.argmax(s) for s in range(len(prompts))]
        return time.perf_counter() - t0


def main():
    req = json.loads(sys.stdin.read())
    rng = np.random.default_rng(req.get("seed", 0))
    pre, dec = req.get("prefill") or [], req.get("decode") or []  # Go sends null for a part not run
    max_batch = max([m["batch"] for m in pre + dec] or [1])
    max_tokens = max([m["tokens"] for m in pre] + [m["prompt"] + m["new"] for m in dec] or [1])
    kv = {"f32": GGML_TYPE_F32, "f16": GGML_TYPE_F16}[req.get("kv", "f32")]
    eng = Engine(req["model"], req["threads"], max_batch, max_tokens + 8, kv)
    hi = min(eng.n_vocab, 30000)
    out = {"llama_cpp": L.__version__, "kv": req.get("kv", "f32"), "threads": req["threads"], "prefill": [], "decode": []}
    for m in pre:
        prompts = rng.integers(100, hi, (m["batch"], m["tokens"])).tolist()
        best = min(eng.prefill(prompts) for _ in range(req.get("repeat", 3)))
        out["prefill"].append({**m, "seconds": best, "tokens_per_s": m["batch"] * m["tokens"] / best})
        print(f"llama.cpp prefill {m}: {out['prefill'][-1]['tokens_per_s']:.1f} tok/s", file=sys.stderr)
    for m in dec:
        prompts = rng.integers(100, hi, (m["batch"], m["prompt"])).tolist()
        best = min(eng.generate(prompts, m["new"] + 1) for _ in range(req.get("repeat", 3)))
        out["decode"].append({**m, "seconds": best, "tokens_per_s": m["batch"] * m["new"] / best})
        print(f"llama.cpp decode {m}: {out['decode'][-1]['tokens_per_s']:.1f} tok/s", file=sys.stderr)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
