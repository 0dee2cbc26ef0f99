#!/usr/bin/python3
"""PyTorch baseline for `ragen bench --vs-torch`.

The same Qwen2 written the way a PyTorch user writes it: HuggingFace's
modeling_qwen2 eager path (nn.Module per HF module, rotate-half RoPE,
repeat_kv for GQA, an additive [B, 1, T, S] mask, softmax in fp32), a
DynamicCache that grows by torch.cat, HF generate's batched multinomial
sampling loop (finished rows stay in the batch), and verl's PPO losses with
torch.optim.AdamW and clip_grad_norm_. No transformers or safetensors
package is needed: the checkpoint is read by the 30-line reader below.

It is a long-lived server: one JSON request per line on stdin, one JSON
answer per line on stdout ({"ok": true, ...} or {"ok": false, "error":
...}); `ragen bench` starts it once, so the model is loaded once and each
measurement runs interleaved with the Go one. Logs go to stderr.

RAGEN_BENCH_IMPL=transformers runs transformers' own model classes
(AutoModelForCausalLM and AutoModelForTokenClassification: Qwen2 or Llama,
SDPA attention, transformers' DynamicCache) through the same loops instead
of the eager copy below (scripts/gpu-check.sh does, on the GPU machine).
The eager copy follows the checkpoint's architecture too: Qwen2's q/k/v
biases, or Llama's attention_bias and mlp_bias.

Requests (cmd): load, peak, logits, prefill, decode, rollout,
train_actor, train_critic, quit. See handle() for their fields.
"""
import json
import math
import os
import resource
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
ST_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16, "F64": torch.float64}


# --- checkpoint -----------------------------------------------------------

def read_safetensors(path):
    """A safetensors file: an 8-byte little-endian header length, a JSON
    header {name: {dtype, shape, data_offsets}}, then the raw data."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        dt = ST_DTYPES[info["dtype"]]
        t = torch.frombuffer(data, dtype=dt, count=(hi - lo) // torch.tensor([], dtype=dt).element_size(), offset=lo)
        out[name] = t.reshape(info["shape"]).clone()
    return out


def read_checkpoint(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    tensors = {}
    for name in files:
        tensors.update(read_safetensors(os.path.join(d, name)))
    return tensors


class Config:
    def __init__(self, d):
        with open(os.path.join(d, "config.json")) as f:
            c = json.load(f)
        self.hidden_size = c["hidden_size"]
        self.intermediate_size = c["intermediate_size"]
        self.num_hidden_layers = c["num_hidden_layers"]
        self.num_attention_heads = c["num_attention_heads"]
        self.num_key_value_heads = c["num_key_value_heads"]
        self.head_dim = c.get("head_dim") or self.hidden_size // self.num_attention_heads
        self.rope_theta = c["rope_theta"]
        self.rms_norm_eps = c["rms_norm_eps"]
        self.vocab_size = c["vocab_size"]
        self.tie_word_embeddings = c.get("tie_word_embeddings", False)
        # Qwen2 has biases on q/k/v; Llama on q/k/v/o with attention_bias
        # and on the MLP with mlp_bias (both usually false).
        self.model_type = c.get("model_type", "qwen2")
        llama = self.model_type == "llama"
        self.qkv_bias = c.get("attention_bias", False) if llama else True
        self.o_bias = c.get("attention_bias", False) if llama else False
        self.mlp_bias = c.get("mlp_bias", False) if llama else False
        if c.get("rope_scaling") or (c.get("rope_parameters") or {}).get("rope_type", "default") != "default":
            raise ValueError("the eager baseline implements plain rotary embeddings only; use RAGEN_BENCH_IMPL=transformers")


# --- the model (HuggingFace modeling_qwen2, eager attention) ---------------

class Qwen2RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class Qwen2RotaryEmbedding(nn.Module):
    def __init__(self, dim, base):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        pos = position_ids[:, None, :].float()
        freqs = (inv_freq @ pos).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def repeat_kv(hidden_states, n_rep):
    b, nkv, s, hd = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(b, nkv, n_rep, s, hd)
    return hidden_states.reshape(b, nkv * n_rep, s, hd)


class DynamicCache:
    """HuggingFace's default cache: keys and values grow by torch.cat."""

    def __init__(self, layers):
        self.key_cache = [None] * layers
        self.value_cache = [None] * layers

    def update(self, k, v, i):
        if self.key_cache[i] is None:
            self.key_cache[i], self.value_cache[i] = k, v
        else:
            self.key_cache[i] = torch.cat([self.key_cache[i], k], dim=-2)
            self.value_cache[i] = torch.cat([self.value_cache[i], v], dim=-2)
        return self.key_cache[i], self.value_cache[i]

    def length(self):
        return 0 if self.key_cache[0] is None else self.key_cache[0].shape[-2]


class Qwen2Attention(nn.Module):
    def __init__(self, cfg, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = cfg.head_dim
        self.num_key_value_groups = cfg.num_attention_heads // cfg.num_key_value_heads
        self.scaling = self.head_dim ** -0.5
        d, q, kv = cfg.hidden_size, cfg.num_attention_heads * cfg.head_dim, cfg.num_key_value_heads * cfg.head_dim
        self.q_proj = nn.Linear(d, q, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(d, kv, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(d, kv, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(q, d, bias=cfg.o_bias)

    def forward(self, hidden_states, cos, sin, attention_mask, cache):
        bsz, q_len, _ = hidden_states.shape
        shape = (bsz, q_len, -1, self.head_dim)
        query = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        key = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        value = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        query, key = apply_rotary_pos_emb(query, key, cos, sin)
        if cache is not None:
            key, value = cache.update(key, value, self.layer_idx)
        key = repeat_kv(key, self.num_key_value_groups)
        value = repeat_kv(value, self.num_key_value_groups)
        attn_weights = torch.matmul(query, key.transpose(2, 3)) * self.scaling
        attn_weights = attn_weights + attention_mask[:, :, :, : key.shape[-2]]
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        attn_weights = F.dropout(attn_weights, p=0.0, training=self.training)
        out = torch.matmul(attn_weights, value)
        out = out.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(out)


class Qwen2MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, i = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = nn.Linear(d, i, bias=cfg.mlp_bias)
        self.up_proj = nn.Linear(d, i, bias=cfg.mlp_bias)
        self.down_proj = nn.Linear(i, d, bias=cfg.mlp_bias)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Qwen2DecoderLayer(nn.Module):
    def __init__(self, cfg, layer_idx):
        super().__init__()
        self.self_attn = Qwen2Attention(cfg, layer_idx)
        self.mlp = Qwen2MLP(cfg)
        self.input_layernorm = Qwen2RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = Qwen2RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, hidden_states, cos, sin, attention_mask, cache):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), cos, sin, attention_mask, cache)
        hidden_states = residual + hidden_states
        residual = hidden_states
        return residual + self.mlp(self.post_attention_layernorm(hidden_states))


def causal_mask(attention_mask, q_len, dtype):
    """The additive [B, 1, q_len, S] mask for the last q_len of S positions:
    0 where a key is visible (causal and not padding), the dtype's minimum
    elsewhere (HF's _update_causal_mask)."""
    b, s = attention_mask.shape
    min_dtype = torch.finfo(dtype).min
    past = s - q_len
    mask = torch.full((q_len, s), min_dtype, dtype=dtype, device=attention_mask.device)
    mask = torch.triu(mask, diagonal=past + 1)
    mask = mask[None, None, :, :].expand(b, 1, -1, -1).clone()
    padding = attention_mask[:, None, None, :] == 0
    return mask.masked_fill(padding, min_dtype)


class Qwen2Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Qwen2DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers)])
        self.norm = Qwen2RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary_emb = Qwen2RotaryEmbedding(cfg.head_dim, cfg.rope_theta)

    def forward(self, input_ids, attention_mask, position_ids, cache=None):
        h = self.embed_tokens(input_ids)
        mask = causal_mask(attention_mask, input_ids.shape[1], h.dtype)
        cos, sin = self.rotary_emb(h, position_ids)
        for layer in self.layers:
            h = layer(h, cos, sin, mask, cache)
        return self.norm(h)


class Qwen2ForCausalLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.model = Qwen2Model(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def new_cache(self):
        return DynamicCache(self.model.cfg.num_hidden_layers)

    def forward(self, input_ids, attention_mask, position_ids, cache=None, logits_to_keep=0):
        h = self.model(input_ids, attention_mask, position_ids, cache)
        if logits_to_keep:
            h = h[:, -logits_to_keep:, :]
        return self.lm_head(h).float()


class Qwen2ForTokenClassification(nn.Module):
    """The critic as verl builds it: the backbone and a one-label score head."""

    def __init__(self, cfg):
        super().__init__()
        self.model = Qwen2Model(cfg)
        self.score = nn.Linear(cfg.hidden_size, 1, bias=True)

    def forward(self, input_ids, attention_mask, position_ids):
        return self.score(self.model(input_ids, attention_mask, position_ids)).float()


def positions(attention_mask):
    """HF generate's position ids for a left-padded batch."""
    p = attention_mask.long().cumsum(-1) - 1
    return p.masked_fill(attention_mask == 0, 1)


# --- generation (HF generate's sample loop) ---------------------------------

def left_pad(prompts, device):
    L = max(len(p) for p in prompts)
    ids = torch.zeros(len(prompts), L, dtype=torch.long)
    mask = torch.zeros(len(prompts), L, dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, L - len(p):] = torch.tensor(p)
        mask[i, L - len(p):] = 1
    return ids.to(device), mask.to(device)


@torch.no_grad()
def generate(model, prompts, lengths, temperature, device, on_first=None):
    """Samples until every row has its lengths[i] tokens; finished rows keep
    running with pad tokens, as in HF's generate. Returns the new tokens and
    their log-probabilities (what RL keeps)."""
    input_ids, attention_mask = left_pad(prompts, device)
    B = input_ids.shape[0]
    cache = model.new_cache()
    unfinished = torch.ones(B, dtype=torch.long, device=device)
    target = torch.tensor(lengths, device=device)
    cur = input_ids
    generated = []
    for step in range(max(lengths)):
        pos = positions(attention_mask)[:, -cur.shape[1]:]
        logits = model(cur, attention_mask, pos, cache, logits_to_keep=1)
        next_logits = logits[:, -1, :].clone().float()
        scores = next_logits / temperature if temperature != 1.0 else next_logits
        probs = F.softmax(scores, dim=-1)
        next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
        logp = F.log_softmax(next_logits, dim=-1).gather(1, next_tokens[:, None]).squeeze(1)
        next_tokens = next_tokens * unfinished
        generated.append((next_tokens, logp))
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones((B, 1))], dim=-1)
        unfinished = unfinished & (target > step + 1).long()
        cur = next_tokens[:, None]
        if step == 0 and on_first is not None:
            on_first()
        if unfinished.max() == 0:
            break
    return generated


# --- PPO (verl's core_algos) ------------------------------------------------

def agg_token_mean(loss, mask):
    return (loss * mask).sum() / (mask.sum() + 1e-8)


def policy_loss(logp, old_logp, adv, mask, clip_low, clip_high, clip_c):
    neg_kl = torch.clamp(logp - old_logp, -20.0, 20.0)
    ratio = torch.exp(neg_kl)
    pg1 = -adv * ratio
    pg2 = -adv * torch.clamp(ratio, 1 - clip_low, 1 + clip_high)
    clip1 = torch.maximum(pg1, pg2)
    pg3 = -adv * clip_c
    clip2 = torch.min(pg3, clip1)
    pg = torch.where(adv < 0, clip2, clip1)
    return agg_token_mean(pg, mask)


def value_loss(v, old_v, returns, mask, clip):
    v_clip = old_v + (v - old_v).clamp(-clip, clip)
    l1 = (v - returns) ** 2
    l2 = (v_clip - returns) ** 2
    return 0.5 * agg_token_mean(torch.max(l1, l2), mask)


def entropy_from_logits(logits):
    pd = F.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (pd * logits).sum(-1)


def batch_tensors(b, device):
    rows, L = b["rows"], b["length"]
    ids = torch.tensor(b["ids"], dtype=torch.long).view(rows, L).to(device)
    attn = torch.tensor(b["attn"], dtype=torch.long).view(rows, L).to(device)
    f = lambda k: torch.tensor(b[k], dtype=torch.float32).to(device)
    return ids, attn, f("resp"), f("old_logp"), f("adv"), f("returns"), f("old_values")


def warm_up(params, b, micro_loss):
    """One untimed micro-batch forward and backward, gradients then
    dropped: the first pass of a process pays for growing the heap."""
    micro_loss(0, min(b["rows"], max(1, b["micro_batch"]))).backward()
    for p in params:
        p.grad = None


def ppo_epochs(params, opt, b, clip, micro_loss):
    """Epochs over mini-batches; each mini-batch accumulates micro-batch
    gradients, clips them and steps (skipped when the norm is not finite).
    Returns the gradient norms before clipping, one per mini-batch."""
    norms = []
    rows = b["rows"]
    mini = b["mini_batch"] or rows
    micro = max(1, b["micro_batch"])
    for _ in range(max(1, b["epochs"])):
        for lo in range(0, rows, mini):
            hi = min(rows, lo + mini)
            opt.zero_grad()
            spans = [(s, min(hi, s + micro)) for s in range(lo, hi, micro)]
            for s, e in spans:
                (micro_loss(s, e) / len(spans)).backward()
            norm = torch.nn.utils.clip_grad_norm_(params, clip)
            norms.append(norm.item())
            if torch.isfinite(norm):
                opt.step()
            else:
                opt.zero_grad()
    opt.zero_grad()
    return norms


def adamw(params, b, lr):
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=b["weight_decay"])


# --- the server -------------------------------------------------------------

class State:
    def __init__(self):
        self.actor = self.critic = self.actor_opt = self.critic_opt = None
        self.cfg = None
        self.dir = None
        self.device = torch.device("cpu")
        self.dtype = torch.float32

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def reset_peak(st):
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    if st.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(st.device)


def peak_memory(st):
    out = {"peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    out["peak_rss_bytes"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    if st.device.type == "cuda":
        out["peak_gpu_bytes"] = torch.cuda.max_memory_allocated(st.device)
    return out


# --- transformers itself (RAGEN_BENCH_IMPL=transformers) -----------------------

class HFCausalLM(nn.Module):
    """transformers' own model (Qwen2ForCausalLM or LlamaForCausalLM, SDPA
    attention, its DynamicCache) behind this script's interface, so
    generate(), the rollout and the updates above run the peer's modules
    instead of the eager copy."""

    def __init__(self, d, dtype):
        super().__init__()
        from transformers import AutoModelForCausalLM as HF
        self.m = HF.from_pretrained(d, dtype=dtype, attn_implementation="sdpa")

    def new_cache(self):
        from transformers import DynamicCache as HFCache
        return HFCache()

    def forward(self, input_ids, attention_mask, position_ids, cache=None, logits_to_keep=0):
        out = self.m(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                     past_key_values=cache, use_cache=cache is not None, logits_to_keep=logits_to_keep)
        return out.logits.float()


class HFCritic(nn.Module):
    """transformers' *ForTokenClassification with one label (verl's critic).
    verl turns its dropout off (classifier_dropout 0); transformers' default
    for a Llama or Qwen2 head is 0.1, live in train mode."""

    def __init__(self, d, dtype, weight, bias):
        super().__init__()
        from transformers import AutoConfig, AutoModelForTokenClassification as HF
        cfg = AutoConfig.from_pretrained(d, num_labels=1)
        cfg.classifier_dropout = 0.0
        self.m = HF.from_pretrained(d, config=cfg, dtype=torch.float32, attn_implementation="sdpa")
        with torch.no_grad():
            self.m.score.weight.copy_(weight)
            self.m.score.bias.copy_(bias)
        self.m.to(dtype=dtype)

    def forward(self, input_ids, attention_mask, position_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).logits.float()


def impl():
    v = os.environ.get("RAGEN_BENCH_IMPL", "eager")
    if v not in ("eager", "transformers"):
        raise ValueError("RAGEN_BENCH_IMPL=%r is not eager or transformers" % v)
    return v


def load(st, req):
    st.dir = req["model"]
    st.cfg = Config(st.dir)
    st.device = torch.device(req.get("device", "cpu"))
    if req.get("threads"):
        torch.set_num_threads(req["threads"])
    st.dtype = DTYPES[req.get("dtype", "fp32")]
    if impl() == "transformers":
        import transformers
        st.actor = HFCausalLM(st.dir, st.dtype).to(st.device).eval()
        return {"parameters": sum(p.numel() for p in st.actor.parameters()),
                "torch": torch.__version__ + ", transformers " + transformers.__version__,
                "python": sys.version.split()[0], "threads": torch.get_num_threads()}
    st.actor = Qwen2ForCausalLM(st.cfg)
    tensors = read_checkpoint(st.dir)
    if st.cfg.tie_word_embeddings:
        tensors.pop("lm_head.weight", None)
        tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"]
    st.actor.load_state_dict(tensors, strict=True)
    st.actor.to(device=st.device, dtype=st.dtype).eval()
    return {"parameters": sum(p.numel() for p in st.actor.parameters()),
            "torch": torch.__version__, "python": sys.version.split()[0],
            "threads": torch.get_num_threads()}


def ensure_critic(st, req):
    """The critic: the checkpoint's backbone and the score head the request
    brings (the Go side's freshly drawn one, so both critics start equal)."""
    if st.critic is not None:
        return
    if impl() == "transformers":
        w = torch.tensor(req["score_weight"], dtype=torch.float32).view(1, st.cfg.hidden_size)
        b = torch.tensor(req["score_bias"], dtype=torch.float32).view(1)
        st.critic = HFCritic(st.dir, st.dtype, w, b).to(st.device).train()
        return
    st.critic = Qwen2ForTokenClassification(st.cfg)
    tensors = {k: v for k, v in read_checkpoint(st.dir).items() if k.startswith("model.")}
    tensors["score.weight"] = torch.tensor(req["score_weight"], dtype=torch.float32).view(1, st.cfg.hidden_size)
    tensors["score.bias"] = torch.tensor(req["score_bias"], dtype=torch.float32).view(1)
    st.critic.load_state_dict(tensors, strict=True)
    st.critic.to(device=st.device, dtype=st.dtype).train()


def cmd_peak(st, req):
    dt = DTYPES[req.get("dtype", "fp32")]
    threads = torch.get_num_threads()
    if req.get("threads"):
        torch.set_num_threads(req["threads"])
    try:
        return {"flop_per_s": matmul_peak(st, dt, req)}
    finally:
        torch.set_num_threads(threads)


def matmul_peak(st, dt, req):
    best = 0.0
    for n in req["sizes"]:
        a = torch.randn(n, n, device=st.device).to(dt)
        b = torch.randn(n, n, device=st.device).to(dt)
        torch.matmul(a, b)
        st.sync()
        k, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < req["seconds"]:
            torch.matmul(a, b)
            k += 1
            if k % 8 == 0:
                st.sync()
        st.sync()
        best = max(best, 2.0 * n ** 3 * k / (time.perf_counter() - t0))
    return best


@torch.no_grad()
def cmd_logits(st, req):
    ids, mask = left_pad(req["ids"], st.device)
    logits = st.actor(ids, mask, positions(mask))
    return {"logits": logits.cpu().tolist()}


def cmd_prefill(st, req):
    torch.manual_seed(req.get("seed", 0))
    t0 = time.perf_counter()
    generate(st.actor, req["prompts"], [1] * len(req["prompts"]), req.get("temperature", 1.0), st.device)
    st.sync()
    return {"seconds": time.perf_counter() - t0}


def cmd_decode(st, req):
    torch.manual_seed(req.get("seed", 0))
    marks = {}
    n = req["new_tokens"]

    def first():
        st.sync()
        marks["first"] = time.perf_counter()

    t0 = time.perf_counter()
    generate(st.actor, req["prompts"], [n] * len(req["prompts"]), req.get("temperature", 1.0), st.device, first)
    st.sync()
    t1 = time.perf_counter()
    return {"prefill_seconds": marks["first"] - t0, "seconds": t1 - marks["first"]}


def cmd_rollout(st, req):
    """Replays a rollout's turns: each turn's prompts (the whole conversation
    so far, re-prefilled, as HF generate does without a carried cache) and
    the number of tokens each sequence sampled."""
    torch.manual_seed(req.get("seed", 0))
    t0 = time.perf_counter()
    for turn in req["turns"]:
        generate(st.actor, turn["prompts"], turn["new_tokens"], req.get("temperature", 1.0), st.device)
    st.sync()
    return {"seconds": time.perf_counter() - t0}


def cmd_train_actor(st, req):
    b = req["batch"]
    ids, attn, resp, old_logp, adv, _, _ = batch_tensors(b, st.device)
    model = st.actor.train()
    params = [p for p in model.parameters()]
    if st.actor_opt is None:
        st.actor_opt = adamw(params, b, b["actor_lr"])
    pos = positions(attn)

    def micro_loss(s, e):
        logits = model(ids[s:e], attn[s:e], pos[s:e])[:, :-1, :]  # [n, L−1, V]
        labels = ids[s:e, 1:]
        logp = F.log_softmax(logits, dim=-1).gather(-1, labels[..., None]).squeeze(-1)
        ent = entropy_from_logits(logits)
        pg = policy_loss(logp, old_logp[s:e], adv[s:e], resp[s:e], b["clip_low"], b["clip_high"], b["clip_c"])
        return pg - b["entropy_coef"] * agg_token_mean(ent, resp[s:e])

    if req.get("warmup"):
        warm_up(params, b, micro_loss)
    t0 = time.perf_counter()
    norms = ppo_epochs(params, st.actor_opt, b, b["grad_clip"], micro_loss)
    st.sync()
    model.eval()
    return {"seconds": time.perf_counter() - t0, "grad_norms": norms}


def cmd_train_critic(st, req):
    b = req["batch"]
    ensure_critic(st, req)
    ids, attn, resp, _, _, returns, old_v = batch_tensors(b, st.device)
    params = [p for p in st.critic.parameters()]
    if st.critic_opt is None:
        st.critic_opt = adamw(params, b, b["critic_lr"])
    pos = positions(attn)

    def micro_loss(s, e):
        v = st.critic(ids[s:e], attn[s:e], pos[s:e]).squeeze(-1)[:, :-1]
        return value_loss(v, old_v[s:e], returns[s:e], resp[s:e], b["value_clip"])

    if req.get("warmup"):
        warm_up(params, b, micro_loss)
    t0 = time.perf_counter()
    norms = ppo_epochs(params, st.critic_opt, b, b["critic_grad_clip"], micro_loss)
    st.sync()
    return {"seconds": time.perf_counter() - t0, "grad_norms": norms}


COMMANDS = {
    "load": load, "peak": cmd_peak, "logits": cmd_logits, "prefill": cmd_prefill, "decode": cmd_decode,
    "rollout": cmd_rollout, "train_actor": cmd_train_actor, "train_critic": cmd_train_critic,
}


def handle(st, req):
    cmd = req.get("cmd")
    if cmd not in COMMANDS:
        raise ValueError("unknown command %r" % cmd)
    if cmd != "load" and st.actor is None:
        raise ValueError("no model loaded (send load first)")
    reset_peak(st)
    out = COMMANDS[cmd](st, req)
    out.update(peak_memory(st))
    return out


def main():
    st = State()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if req.get("cmd") == "quit":
                break
            out = handle(st, req)
            out["ok"] = True
        except Exception as e:  # report, keep serving
            out = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
