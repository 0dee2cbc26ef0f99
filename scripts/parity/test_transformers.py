"""ragen-go against HuggingFace transformers, the reference implementation.

Randomly initialised Qwen2ForCausalLM checkpoints (tied and untied
embeddings, GQA, non-zero q/k/v biases, rope_theta 1e6, Qwen's full
vocabulary, the real tokenizer beside them) are saved with save_pretrained,
single-file and sharded, fp32 and bf16; and LlamaForCausalLM checkpoints of
the same shape (without biases, with attention_bias and mlp_bias, with
llama3 rotary scaling, an explicit head_dim and a list of eos ids). Then:

* `ragen generate --json`, one left-padded batch of prompts of several
  lengths, must give transformers' greedy ids, and log-probs equal to
  transformers' forward pass on the same ids;
* `ragen train` trains a few steps; its export must load with
  Qwen2ForCausalLM / AutoTokenizer.from_pretrained, give our log-probs,
  differ from the starting weights, and render conversations with
  apply_chat_template exactly as our tokenizer package does.

Run from the repository root:

    .cache/parity/bin/python -m pytest -q scripts/parity/test_transformers.py

RAGEN_BIN names the ragen binary (default bin/ragen); RAGEN_TEST_TOKENIZER
a Qwen tokenizer.json (default: the one scripts/fetch-tokenizer-data.sh
fetches). Each test prints the differences it measured (pytest -s shows
them).
"""

import json
import os
import pathlib
import subprocess

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM
from transformers.utils import logging as hf_logging

ROOT = pathlib.Path(__file__).resolve().parents[2]
RAGEN = pathlib.Path(os.environ.get("RAGEN_BIN", ROOT / "bin" / "ragen")).resolve()
TEMPLATE = ROOT / "tokenizer" / "qwen2.5-instruct-chat-template.jinja"
TOKENIZER_DEFAULT = ".cache/tokenizer-data/qwen2.5/tokenizer.json"

VOCAB = 151936  # Qwen2.5's embedding rows (the tokenizer has 151665 ids)
PAD, IM_END = 151643, 151645  # <|endoftext|>, <|im_end|>
EOS = [IM_END, PAD]  # Qwen2.5-Instruct's generation_config eos_token_id
NEW_TOKENS = 24

# fp32: the whole tiny model, as STYLE.md asks of every fp32 comparison.
FP32_TOL = 1e-4
# bf16: both sides round every matmul output and activation to bf16 (8
# significant bits, relative step 2^-8 = 0.0039), in a different order (our
# KV-cache decode vs. transformers' full forward, libtorch 1.13 vs 2.11
# kernels). These models' logits reach |9| (std 1.6), where one bf16 step
# is 0.03, and a log-prob carries the errors of its own logit and of the
# log-sum-exp. Measured over the four bf16 checkpoints, 120 tokens each:
# ragen vs transformers up to 0.091; each from the fp32 forward pass of the
# same weights, ragen up to 0.077 and transformers up to 0.103, so ours is
# no worse than the reference's own rounding (asserted below, within 2x).
# The tolerance is about 3x the largest difference seen; defects are far
# above it (a RoPE base of 1e4 for 1e6 gives 8.7, an RMSNorm eps of 1e-2
# for 1e-6 gives 2.1, measured in fp32).
BF16_TOL = 0.25
# A bf16 greedy choice may differ from transformers' only where the two best
# logits are this close (in exact arithmetic): a few bf16 steps of a logit.
BF16_TIE = 0.1

torch.set_num_threads(2)
hf_logging.disable_progress_bar()


def tokenizer_source():
    p = os.environ.get("RAGEN_TEST_TOKENIZER") or str(ROOT / TOKENIZER_DEFAULT)
    p = pathlib.Path(p)
    if p.is_dir():
        p = p / "tokenizer.json"
    if not p.exists():
        pytest.fail(f"test tokenizer {p} is missing: run scripts/fetch-tokenizer-data.sh or set RAGEN_TEST_TOKENIZER")
    return p


def write_tokenizer(out):
    """Qwen2.5-Instruct's tokenizer files in folder out.

    The test vocabulary is Qwen3's tokenizer.json: Qwen2.5's BPE with four
    more added tokens (<tool_response>, </tool_response>, <think>,
    </think>, ids 151665-151668). Dropping them gives Qwen2.5's
    tokenizer.json, so "<think>" in RAGEN's prompts is plain text, as it is
    for Qwen2.5. tokenizer_config.json is Qwen2.5-Instruct's: its chat
    template, eos <|im_end|>, pad <|endoftext|>, no bos.
    """
    data = json.loads(tokenizer_source().read_text())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["id"] <= 151664]
    (out / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False))
    decoder = {
        str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")}
        for t in data["added_tokens"]
    }
    special = [t["content"] for t in data["added_tokens"] if t["special"] and t["id"] != PAD]
    cfg = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "additional_special_tokens": special,
        "bos_token": None,
        "chat_template": TEMPLATE.read_text(),
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, indent=2, ensure_ascii=False))


# Llama variants of the random checkpoints: LlamaConfig keyword arguments.
# "rope" is Llama 3.1/3.2's llama3 scaling with an original context of 64,
# which puts this model's 8 rotary wavelengths (head_dim 16, theta 1e6: 6
# to 2.6e5 positions) in all three of its regimes, and an explicit head_dim
# wider than hidden/heads; the first eos is <|im_end|>, as a list.
LLAMA = {
    "plain": {},
    "biases": {"attention_bias": True, "mlp_bias": True},
    "rope": {"head_dim": 32, "eos_token_id": [IM_END, PAD], "rope_parameters": {
        "rope_type": "llama3", "rope_theta": 1e6, "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 64}},
}


def make_checkpoint(out, tied, dtype, sharded, seed=0, llama=None):
    """A random Qwen2.5-shaped checkpoint in folder out, saved by transformers;
    with llama (a key of LLAMA), a LlamaForCausalLM of the same shape."""
    torch.manual_seed(seed)
    shape = dict(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, rope_theta=1e6, rms_norm_eps=1e-6,
        max_position_embeddings=512, tie_word_embeddings=tied, bos_token_id=PAD,
        eos_token_id=IM_END, initializer_range=0.2,
    )
    if llama is None:
        cfg = Qwen2Config(**shape)
        model = Qwen2ForCausalLM(cfg).eval()
        want_biases = ["q_proj", "k_proj", "v_proj"]
    else:
        extra = dict(LLAMA[llama])
        if "rope_parameters" in extra:
            del shape["rope_theta"]
        cfg = LlamaConfig(**{**shape, **extra})
        model = LlamaForCausalLM(cfg).eval()
        want_biases = (["q_proj", "k_proj", "v_proj", "o_proj"] if cfg.attention_bias else []) + \
            (["gate_proj", "up_proj", "down_proj"] if cfg.mlp_bias else [])
    with torch.no_grad():
        # transformers initialises biases to 0 and norms to 1, which would
        # hide a dropped bias or norm weight: give them random values.
        biases = []
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.normal_(0, 0.5)
                biases.append(name.split(".")[-2])
            elif name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn_like(p))
    assert sorted(biases) == sorted(want_biases * cfg.num_hidden_layers), biases
    model = model.to(dtype)
    out.mkdir(parents=True)
    model.save_pretrained(out, max_shard_size="8MB" if sharded else "5GB")
    write_tokenizer(out)
    files = sorted(f.name for f in out.glob("*.safetensors"))
    assert (len(files) > 1) == sharded, files
    assert (out / "model.safetensors.index.json").exists() == sharded
    return out


def ragen(*args, stdin=None):
    if not RAGEN.exists():
        pytest.fail(f"{RAGEN} does not exist: build it (go build -o bin/ragen ./cmd/ragen) or set RAGEN_BIN")
    r = subprocess.run([str(RAGEN), *map(str, args)], input=stdin, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise AssertionError(f"ragen {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def ragen_generate(folder, prompt_args, dtype, *extra):
    out = ragen("generate", "--model", folder, "--json", "--max-new-tokens", NEW_TOKENS,
                "--dtype", dtype, "--device", "cpu", *prompt_args, *extra)
    return [json.loads(line) for line in out.splitlines()]


def load_hf(folder, dtype):
    return AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).eval()


@torch.no_grad()
def hf_greedy(model, prompt):
    """transformers' greedy continuation of one prompt, unpadded."""
    ids = torch.tensor([prompt])
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS,
                         do_sample=False, eos_token_id=EOS, pad_token_id=PAD)
    return out[0, len(prompt):].tolist()


@torch.no_grad()
def hf_logits(model, prompt, gen):
    """Teacher-forced logits [len(gen), V] (fp32) of gen after prompt."""
    ids = torch.tensor([prompt + gen])
    logits = model(ids).logits[0].float()
    return logits[len(prompt) - 1:len(prompt) + len(gen) - 1]


def hf_logprobs(model, prompt, gen):
    lp = torch.log_softmax(hf_logits(model, prompt, gen), -1)
    return lp.gather(1, torch.tensor(gen)[:, None])[:, 0]


def random_prompts(lengths, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, PAD, (n,), generator=g).tolist() for n in lengths]


def compare(folder, prompts, ours, dtype, greedy=True):
    """Checks ours (ragen's outputs for prompts) against transformers.

    Returns the largest |Δ log-prob| between ragen and transformers at the
    same dtype over all generated tokens; for bf16 also each one's largest
    distance from the fp32 forward pass of the same (bf16-valued) weights;
    and for each prompt where greedy ids diverge, the prompt length, the
    position and transformers' fp32 margin between its top two logits there
    (with greedy=False, for sampled ids, only the log-probs are compared).
    """
    ref = load_hf(folder, dtype)
    truth = load_hf(folder, torch.float32) if dtype != torch.float32 else ref
    stats = {"ours_vs_hf": 0.0, "ours_vs_fp32": 0.0, "hf_vs_fp32": 0.0, "diverged": []}
    for p, o in zip(prompts, ours, strict=True):
        assert o["prompt_ids"] == p
        assert len(o["logprobs"]) == len(o["ids"])
        # Our ids, teacher-forced through transformers: the log-probs of the
        # same tokens in the same context, whatever the greedy choices were.
        mine = torch.tensor(o["logprobs"])
        lp = hf_logprobs(ref, p, o["ids"])
        stats["ours_vs_hf"] = max(stats["ours_vs_hf"], (lp - mine).abs().max().item())
        if truth is not ref:
            exact = hf_logprobs(truth, p, o["ids"])
            stats["ours_vs_fp32"] = max(stats["ours_vs_fp32"], (mine - exact).abs().max().item())
            stats["hf_vs_fp32"] = max(stats["hf_vs_fp32"], (lp - exact).abs().max().item())
        want = hf_greedy(ref, p) if greedy else o["ids"]
        if o["ids"] != want:
            k = next((i for i, (a, b) in enumerate(zip(o["ids"], want)) if a != b), min(len(want), len(o["ids"])))
            top2 = hf_logits(truth, p, o["ids"][:k + 1])[k].topk(2).values
            stats["diverged"].append((len(p), k, round((top2[0] - top2[1]).item(), 4)))
    return stats


CHECKPOINTS = [
    pytest.param(tied, dtype, sharded, None, id=f"{'tied' if tied else 'untied'}-{name}-{'sharded' if sharded else 'single'}")
    for tied in (True, False)
    for dtype, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16"))
    for sharded in (False, True)
] + [
    pytest.param(True, torch.float32, False, "plain", id="llama-tied-fp32-single"),
    pytest.param(False, torch.float32, True, "biases", id="llama-biases-untied-fp32-sharded"),
    pytest.param(True, torch.float32, False, "rope", id="llama3-rope-head_dim-tied-fp32-single"),
    pytest.param(False, torch.bfloat16, True, "plain", id="llama-untied-bf16-sharded"),
    pytest.param(True, torch.bfloat16, False, "rope", id="llama3-rope-head_dim-tied-bf16-single"),
]


@pytest.mark.parametrize("tied,dtype,sharded,llama", CHECKPOINTS)
def test_generate_matches_transformers(tmp_path, tied, dtype, sharded, llama):
    folder = make_checkpoint(tmp_path / "hf", tied, dtype, sharded, llama=llama)
    name = "bf16" if dtype == torch.bfloat16 else "fp32"
    # One batch of five lengths: the shorter ones are left-padded by up to 36.
    prompts = random_prompts([1, 3, 8, 17, 37], seed=1)
    ours = ragen_generate(folder, [a for p in prompts for a in ("--prompt-ids", ",".join(map(str, p)))], name)
    assert [o["prompt_ids"] for o in ours] == prompts, "outputs out of prompt order"
    st = compare(folder, prompts, ours, dtype)
    n = sum(len(o["ids"]) for o in ours)
    print(f"\n{llama or 'qwen2'} {name} tied={tied} sharded={sharded}, {n} tokens: max |Δ logprob| ragen vs transformers "
          f"{st['ours_vs_hf']:.3g}", end="")
    if dtype == torch.float32:
        print(f"; greedy ids equal: {not st['diverged']}")
        assert st["ours_vs_hf"] <= FP32_TOL, st
        assert not st["diverged"], f"fp32 greedy ids differ from transformers at (prompt length, position, margin) {st['diverged']}"
        return
    print(f"; from fp32 on the same weights: ragen {st['ours_vs_fp32']:.3g}, transformers {st['hf_vs_fp32']:.3g}; "
          f"greedy divergences (prompt length, position, fp32 top-2 margin): {st['diverged']}")
    assert st["ours_vs_hf"] <= BF16_TOL, st
    # Our bf16 is no further from exact arithmetic than transformers' own.
    assert st["ours_vs_fp32"] <= 2 * st["hf_vs_fp32"], st
    # bf16 may pick the other token of a near-tie; anything else is a defect.
    for _, _, margin in st["diverged"]:
        assert margin < BF16_TIE, f"bf16 ids diverged where transformers' top-2 margin is {margin}: not a near-tie"


def test_chat_prompts_match_transformers(tmp_path):
    """--chat text prompts: our template and tokenizer give transformers' ids."""
    folder = make_checkpoint(tmp_path / "hf", True, torch.float32, False)
    tok = AutoTokenizer.from_pretrained(folder)
    users = ["Hi", "Solve: 3 + 4 = ?  Answer in <answer></answer>.", "Ünïcödé and emoji 🤖, then\n\nnewlines\tand tabs"]
    args = [a for u in users for a in ("--prompt", u)]
    ours = ragen_generate(folder, ["--chat", *args], "fp32")
    prompts = [tok.apply_chat_template([{"role": "user", "content": u}], add_generation_prompt=True, tokenize=True, return_dict=False)
               for u in users]
    assert [o["prompt_ids"] for o in ours] == prompts
    st = compare(folder, prompts, ours, torch.float32)
    for o in ours:
        assert o["text"] == tok.decode(o["ids"], skip_special_tokens=True)
    print(f"\nchat prompts: prompt ids equal apply_chat_template's; max |Δ logprob| {st['ours_vs_hf']:.3g}; "
          f"greedy ids equal: {not st['diverged']}")
    assert st["ours_vs_hf"] <= FP32_TOL and not st["diverged"], st


def train(tmp_path, start):
    run = tmp_path / "run"
    ragen("train", "--config", "configs/smoke.yaml", "--model", start, "--out", run,
          "--set", "agent.max_turn=2", "--set", "actor.lr=1e-3", "--set", "critic.lr=1e-3")
    return run


@pytest.fixture(scope="module", params=[None, "plain"], ids=["qwen2", "llama"])
def trained(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train")
    start = make_checkpoint(tmp / "start", False, torch.float32, True, seed=7, llama=request.param)
    return start, train(tmp, start)


def test_export_loads_and_matches(trained):
    start, run = trained
    export = run / "export"
    model = load_hf(export, torch.float32)
    assert model.config.vocab_size == VOCAB and not model.config.tie_word_embeddings
    # The export is the architecture it was loaded as.
    want_arch = json.loads((start / "config.json").read_text())["architectures"]
    assert model.config.architectures == want_arch, (model.config.architectures, want_arch)

    # Training did happen: every tensor moved.
    before = {}
    for f in start.glob("*.safetensors"):
        before.update(load_file(f))
    after = {}
    for f in export.glob("*.safetensors"):
        after.update(load_file(f))
    assert before.keys() == after.keys()
    moved = {k: (after[k].float() - before[k].float()).abs().max().item() for k in before}
    # Weight decay alone (2 steps × lr 1e-3 × 0.01 × |w| ≤ 2) moves a weight by
    # at most 4e-5; a gradient step of Adam by about lr.
    still = [k for k, d in moved.items() if d < 1e-4]
    print(f"\nexport: {len(moved)} tensors, {len(moved) - len(still)} moved by more than weight decay could; "
          f"change per tensor from {min(moved.values()):.3g} to {max(moved.values()):.3g}")
    assert not still, f"tensors not trained: {still}"
    for k, v in model.state_dict().items():
        assert torch.equal(v, after[k].float()), f"from_pretrained did not load {k} as stored"

    prompts = random_prompts([2, 11, 30], seed=3)
    ours = ragen_generate(export, [a for p in prompts for a in ("--prompt-ids", ",".join(map(str, p)))], "fp32")
    st = compare(export, prompts, ours, torch.float32)
    print(f"export: greedy: max |Δ logprob| {st['ours_vs_hf']:.3g}; greedy ids equal: {not st['diverged']}")
    assert st["ours_vs_hf"] <= FP32_TOL and not st["diverged"], st
    # Sampled ids reach all over the distribution, not just its top: their
    # log-probs compare the logits of ordinary tokens too.
    ours = ragen_generate(export, [a for p in prompts for a in ("--prompt-ids", ",".join(map(str, p)))], "fp32",
                          "--temperature", "1", "--seed", "5")
    st = compare(export, prompts, ours, torch.float32, greedy=False)
    lps = [x for o in ours for x in o["logprobs"]]
    print(f"export: sampled (log-probs {min(lps):.3g} to {max(lps):.3g}): max |Δ logprob| {st['ours_vs_hf']:.3g}")
    assert st["ours_vs_hf"] <= FP32_TOL, st


def conversations(run):
    """RAGEN-style conversations of the run's validation trajectories."""
    convs = []
    for f in sorted((run / "trajectories").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            convs.append(json.loads(line)["messages"])
    return convs


def test_export_chat_template_matches(trained):
    _, run = trained
    export = run / "export"
    tok = AutoTokenizer.from_pretrained(export)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    convs = conversations(run)
    # A hand-written one too: system, user, assistant, user, as RAGEN's turns.
    convs.append([
        {"role": "system", "content": "You're a helpful assistant. You always respond in the format <think>...</think><answer>...</answer>."},
        {"role": "user", "content": "Turn 1:\nState:\n#####\n#_P_#\n#####\nYou have 5 actions left. Always output: <think> [Your thoughts] </think> <answer> [your answer] </answer>"},
        {"role": "assistant", "content": "<think>The goal is left.</think><answer>Left || Up</answer>"},
        {"role": "user", "content": "Reward:\n-0.1\n\nTurn 2:\nState:\n#####\n#P__#\n#####\n"},
    ])
    assert any(len(c) >= 4 for c in convs), "no multi-turn conversation to compare"
    for gen_prompt in (True, False):
        flag = [] if gen_prompt else ["--generation-prompt=false"]
        out = ragen("tokenize", "--tokenizer", export, "--chat", *flag,
                    stdin="".join(json.dumps(c) + "\n" for c in convs)).splitlines()
        for c, line in zip(convs, out, strict=True):
            ours = json.loads(line)
            want = tok.apply_chat_template(c, tokenize=False, add_generation_prompt=gen_prompt)
            assert ours["text"] == want
            assert ours["ids"] == tok.apply_chat_template(c, tokenize=True, add_generation_prompt=gen_prompt, return_dict=False)
    print(f"\nchat template: {len(convs)} conversations ({max(map(len, convs))} messages at most) render and "
          f"tokenise as apply_chat_template does, with and without the generation prompt")


def test_export_gguf_runs_in_llama_cpp(trained, tmp_path):
    """The trained policy, exported as GGUF (F32), continues prompts in
    llama.cpp (llama-cpp-python) with ragen's greedy ids and log-probs."""
    import llama_cpp
    import numpy as np

    _, run = trained
    path = tmp_path / "policy.gguf"
    ragen("export", "--model", run / "export", "--gguf", "--type", "f32", "--out", path)
    prompts = random_prompts([3, 9, 21], seed=11)
    ours = ragen_generate(run / "export", [a for p in prompts for a in ("--prompt-ids", ",".join(map(str, p)))], "fp32",
                          "--max-new-tokens", 16)
    m = llama_cpp.Llama(model_path=str(path), n_ctx=256, n_threads=2, logits_all=True, verbose=False, type_k=0, type_v=0)
    worst = 0.0
    for p, o in zip(prompts, ours, strict=True):
        m.reset()
        ids = []
        for t in m.generate(p, top_k=1, temp=0.0, repeat_penalty=1.0):
            ids.append(t)
            if len(ids) == len(o["ids"]):
                break
        assert ids == o["ids"], f"llama.cpp {ids} vs ragen {o['ids']}"
        scores = np.array(m.scores[len(p) - 1:len(p) + len(ids) - 1], dtype=np.float64)
        scores -= scores.max(-1, keepdims=True)
        lp = (scores - np.log(np.exp(scores).sum(-1, keepdims=True)))[np.arange(len(ids)), ids]
        worst = max(worst, float(np.abs(lp - np.array(o["logprobs"])).max()))
    arch = json.loads((run / "export" / "config.json").read_text())["architectures"][0]
    print(f"\n{arch} trained policy as GGUF (F32) in llama.cpp: greedy ids equal ragen's on 3 prompts; "
          f"max |Δ logprob| {worst:.3g}")
    assert worst <= FP32_TOL
