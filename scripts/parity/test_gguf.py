"""ragen-go's GGUF models against transformers' GGUF loader and llama.cpp.

GGUF in: ragen reads a GGUF file as a HuggingFace checkpoint (config from
the metadata, tensors dequantized, llama's q/k rows un-permuted).
`ragen export --model X.gguf --out DIR` writes what it read as a
HuggingFace folder, which is compared with transformers'
`from_pretrained(..., gguf_file=X)` (with gguf-py's dequantization):

* small random Llama and Qwen2 GGUF files written by gguf-py's GGUFWriter,
  with tensors of every type ragen reads (F32, F16, BF16, Q8_0, Q4_0,
  Q4_1, Q4_K, Q5_K, Q6_K): every tensor equal, bit for bit;
* SmolLM2-135M-Instruct's real GGUF (Q4_1/Q8_0): every tensor equal, and
  `ragen generate` on five chat prompts in one left-padded batch gives
  transformers' greedy ids, and log-probs within 1e-4 in fp32.

GGUF out: `ragen export --gguf` of SmolLM2 and of a policy trained by
`ragen train` loads in llama.cpp (llama-cpp-python); its greedy
continuation of three chat prompts equals ragen's for 16 tokens in F32 and
F16, Q8_0's log-probs of those tokens stay within Q8_0_TOL of ragen's, and
ragen reads its own export back to the same ids.

Run from the repository root (make parity does):

    .cache/parity/bin/python -m pytest -q scripts/parity/test_gguf.py
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM
from transformers.utils import logging as hf_logging

import gguf
from gguf import GGMLQuantizationType as T

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from gguf_ref import k_blocks  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
RAGEN = pathlib.Path(os.environ.get("RAGEN_BIN", ROOT / "bin" / "ragen")).resolve()
SMOLLM2 = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
FP32_TOL = 1e-4
# Q8_0 stores each block of 32 weights as int8 times one fp16 scale:
# relative error up to 2^-8 per weight. On SmolLM2 (30 layers) the
# log-prob of a greedy token under the Q8_0 export moves by up to
# Q8_0_TOL from ragen's fp32 (measured: see docs/model.md).
Q8_0_TOL = 0.25
NEW_TOKENS = 16
# llama.cpp keeps its KV cache in F16 by default; the comparisons hold
# keys and values in F32 (GGML_TYPE_F32 = 0), as ragen does in fp32.
F32_CACHE = {"type_k": 0, "type_v": 0}
CHATS = ["What is the capital of France? Answer in one sentence.",
         "Write the numbers from 1 to 12, separated by commas.",
         "You are in a 3x3 grid. The goal is up. Answer with <answer>Up</answer> or <answer>Down</answer>."]

torch.set_num_threads(2)
hf_logging.disable_progress_bar()


def ragen(*args, stdin=None):
    if not RAGEN.exists():
        pytest.fail(f"{RAGEN} does not exist: build it (make build) or set RAGEN_BIN")
    r = subprocess.run([str(RAGEN), *map(str, args)], input=stdin, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise AssertionError(f"ragen {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def smollm2():
    if not SMOLLM2.exists():
        pytest.fail(f"{SMOLLM2} is missing: run make deps (scripts/fetch-model.sh)")
    return SMOLLM2


def load_state(folder):
    state = {}
    for f in pathlib.Path(folder).glob("*.safetensors"):
        state.update(load_file(f))
    return state


def hf_from_gguf(path):
    return AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32).eval()


def compare_tensors(gguf_path, tmp):
    """ragen's reading of gguf_path against transformers': every tensor
    (transformers ties lm_head to the embedding; ragen lists it once)."""
    out = tmp / "hf"
    ragen("export", "--model", gguf_path, "--out", out)
    ours = load_state(out)
    ref = hf_from_gguf(gguf_path)
    theirs = {k: v for k, v in ref.state_dict().items()
              if not (k == "lm_head.weight" and ref.config.tie_word_embeddings)}
    assert sorted(ours) == sorted(theirs), (sorted(set(ours) ^ set(theirs)))
    for k, v in theirs.items():
        assert ours[k].dtype == torch.float32 and ours[k].shape == v.shape, (k, ours[k].shape, v.shape)
        assert torch.equal(ours[k], v.float()), f"{k}: max |Δ| {(ours[k] - v.float()).abs().max().item()}"
    return ours, ref


def byte_vocab(n):
    """A byte-level BPE vocabulary of n tokens: GPT-2's 256 byte tokens,
    then merges of two lowercase letters, in id order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, k = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + k)
            k += 1
    byte_tok = dict(zip(bs, map(chr, cs)))
    tokens = [byte_tok[b] for b in range(256)]
    merges = []
    letters = "etaoinshrdlucmfw"
    for a in letters:
        for b in letters:
            if len(tokens) == n:
                return tokens, merges
            tokens.append(a + b)
            merges.append(f"{a} {b}")
    return tokens, merges


TYPES = [T.Q4_K, T.Q5_K, T.Q6_K, T.Q4_0, T.Q4_1, T.F16, T.BF16, T.Q8_0]


def quantize(rng, t, shape):
    if t in (T.Q4_K, T.Q5_K, T.Q6_K):
        n = int(np.prod(shape)) // gguf.GGML_QUANT_SIZES[t][0]
        b = k_blocks(rng, t, n)
        return b.reshape(shape[0], -1), t
    x = (rng.standard_normal(shape) * 0.05).astype(np.float32)
    if t == T.F32:
        return x, None
    return gguf.quants.quantize(x, t), t


def write_random(path, arch, seed):
    """A 2-layer model of width 256 (the K-quants' block) in gguf-py's own
    layout, the matrices spread over every type ragen reads."""
    rng = np.random.default_rng(seed)
    d, ffn, heads, kv, vocab = 256, 512, 4, 2, 384
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(512)
    w.add_embedding_length(d)
    w.add_block_count(2)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_freq_base(1e6 if arch == "qwen2" else 5e5)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(d // heads)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2" if arch == "qwen2" else "llama-bpe")
    tokens, merges = byte_vocab(vocab)
    w.add_token_list(tokens)
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)

    def add(name, shape, t):
        data, qt = quantize(rng, t, shape)
        w.add_tensor(name, data, raw_dtype=qt)

    add("token_embd.weight", (vocab, d), T.Q8_0)
    add("output_norm.weight", (d,), T.F32)
    add("output.weight", (vocab, d), T.Q6_K)
    k = 0
    hd = d // heads
    for i in range(2):
        p = f"blk.{i}."
        add(p + "attn_norm.weight", (d,), T.F32)
        add(p + "ffn_norm.weight", (d,), T.F32)
        for name, shape in (("attn_q", (heads * hd, d)), ("attn_k", (kv * hd, d)), ("attn_v", (kv * hd, d)),
                            ("attn_output", (d, heads * hd)), ("ffn_gate", (ffn, d)), ("ffn_up", (ffn, d)),
                            ("ffn_down", (d, ffn))):
            add(p + name + ".weight", shape, TYPES[k % len(TYPES)])
            k += 1
            if arch == "qwen2" and name in ("attn_q", "attn_k", "attn_v"):
                add(p + name + ".bias", (shape[0],), T.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_random_gguf_tensors_match_transformers(tmp_path, arch):
    path = write_random(tmp_path / f"{arch}.gguf", arch, seed=5)
    ours, ref = compare_tensors(path, tmp_path)
    types = {t.tensor_type.name for t in gguf.GGUFReader(str(path)).tensors}
    print(f"\n{arch}: {len(ours)} tensors of types {sorted(types)} equal transformers' GGUF loader's, bit for bit")


def test_smollm2_tensors_match_transformers(tmp_path):
    ours, _ = compare_tensors(smollm2(), tmp_path)
    n = sum(v.numel() for v in ours.values())
    print(f"\nSmolLM2: {len(ours)} tensors ({n} weights) equal transformers' GGUF loader's, bit for bit")


def chat_generate(model, *extra):
    """ragen's greedy continuation of CHATS (one left-padded batch)."""
    out = ragen("generate", "--model", model, "--chat", "--json", "--max-new-tokens", NEW_TOKENS,
                "--dtype", "fp32", "--device", "cpu", *[a for c in CHATS for a in ("--prompt", c)], *extra)
    return [json.loads(line) for line in out.splitlines()]


@torch.no_grad()
def hf_check(model, outs, n):
    """Whether transformers' greedy continuations (n new tokens at most)
    are ours, and the largest difference of our log-probs from its."""
    worst, same = 0.0, True
    for o in outs:
        p = torch.tensor([o["prompt_ids"]])
        g = model.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=n, do_sample=False,
                           eos_token_id=model.generation_config.eos_token_id, pad_token_id=0)
        same &= g[0, p.shape[1]:].tolist() == o["ids"]
        ids = torch.tensor([o["prompt_ids"] + o["ids"]])
        lp = torch.log_softmax(model(ids).logits[0, p.shape[1] - 1:-1].float(), -1)
        lp = lp.gather(1, torch.tensor(o["ids"])[:, None])[:, 0]
        worst = max(worst, (lp - torch.tensor(o["logprobs"])).abs().max().item())
    return same, worst


def test_smollm2_generate_matches_transformers():
    # Five prompts of a few lengths in one batch: the shorter are left-padded.
    chats = CHATS + ["Hi", "List three colours of the rainbow, one per line, and nothing else, please."]
    out = ragen("generate", "--model", smollm2(), "--chat", "--json", "--max-new-tokens", 24, "--dtype", "fp32",
                "--device", "cpu", *[a for c in chats for a in ("--prompt", c)])
    outs = [json.loads(line) for line in out.splitlines()]
    assert len({len(o["prompt_ids"]) for o in outs}) == 5, "the prompts should differ in length"
    same, worst = hf_check(hf_from_gguf(smollm2()), outs, 24)
    print(f"\nSmolLM2, 5 chat prompts ({sorted(len(o['prompt_ids']) for o in outs)} tokens), batched: "
          f"greedy ids equal transformers': {same}; max |Δ logprob| {worst:.3g}; first: {outs[0]['text']!r}")
    assert same and worst <= FP32_TOL


def llama_cpp_greedy(path, prompt, n):
    """llama.cpp's greedy ids after prompt, and its log-probs of them."""
    import llama_cpp
    m = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_threads=2, logits_all=True, verbose=False, **F32_CACHE)
    ids = []
    for t in m.generate(prompt, top_k=1, temp=0.0, repeat_penalty=1.0):
        ids.append(t)
        if len(ids) == n or t in (m.token_eos(),):
            break
    return ids, m


def llama_cpp_logprobs(path, prompt, ids):
    import llama_cpp
    m = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_threads=2, logits_all=True, verbose=False, **F32_CACHE)
    m.eval(prompt + ids)
    scores = np.array(m.scores[len(prompt) - 1:len(prompt) + len(ids) - 1], dtype=np.float64)
    scores -= scores.max(-1, keepdims=True)
    lp = scores - np.log(np.exp(scores).sum(-1, keepdims=True))
    return lp[np.arange(len(ids)), ids]


def check_llama_cpp(model, tmp, label):
    ours = chat_generate(model)
    results = {}
    for typ in ("f32", "f16", "q8_0"):
        path = tmp / f"{label}-{typ}.gguf"
        ragen("export", "--model", model, "--gguf", "--type", typ, "--out", path)
        worst = 0.0
        for o in ours:
            if typ != "q8_0":
                ids, _ = llama_cpp_greedy(path, o["prompt_ids"], len(o["ids"]))
                assert ids == o["ids"], f"{label} {typ}: llama.cpp {ids} vs ragen {o['ids']}"
            lp = llama_cpp_logprobs(path, o["prompt_ids"], o["ids"])
            worst = max(worst, float(np.abs(lp - np.array(o["logprobs"])).max()))
        results[typ] = worst
        # ragen reads its own export back.
        back = chat_generate(path)
        if typ == "f32":
            assert [b["ids"] for b in back] == [o["ids"] for o in ours]
            assert max(abs(a - b) for x, y in zip(back, ours) for a, b in zip(x["logprobs"], y["logprobs"])) <= FP32_TOL
    print(f"\n{label}: llama.cpp on ragen's GGUF export gives ragen's greedy ids ({NEW_TOKENS} tokens, "
          f"{len(CHATS)} chat prompts) in F32 and F16; max |Δ logprob| vs ragen fp32: "
          + ", ".join(f"{k} {v:.3g}" for k, v in results.items()))
    assert results["f32"] <= FP32_TOL and results["q8_0"] <= Q8_0_TOL, results


def test_smollm2_export_runs_in_llama_cpp(tmp_path):
    check_llama_cpp(smollm2(), tmp_path, "SmolLM2")
