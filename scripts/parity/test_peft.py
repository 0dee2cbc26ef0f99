"""ragen-go's LoRA against HuggingFace PEFT, the reference implementation.

`ragen train` with lora.rank trains adapters over a random transformers
checkpoint (test_transformers.make_checkpoint: Qwen2 with q/k/v biases, and
Llama with attention and MLP biases). Then the run's export-adapter/ must
load with peft.PeftModel.from_pretrained over the transformers base model
and, for the same ids, give the log-probs and greedy ids of our unmerged
forward (`ragen generate --model BASE --adapter export-adapter/`); and
PEFT's merge_and_unload must give the weights of our merged export/.

Run from the repository root:

    .cache/parity/bin/python -m pytest -q scripts/parity/test_peft.py
"""

import json

import pytest
import torch
from peft import PeftModel
from safetensors.torch import load_file

from test_transformers import (FP32_TOL, hf_greedy, hf_logprobs, load_hf, make_checkpoint, ragen, ragen_generate,
                               random_prompts)

RANK, ALPHA = 8, 16  # a scale α/r of 2, so that a dropped or doubled scale shows
# Our merge and PEFT's both form W + (B·A)·α/r in fp32; only the order of
# the rank-8 sums inside B·A may differ: a few fp32 ulps of the weights.
MERGE_TOL = 1e-6


def arch(folder):
    return json.loads((folder / "config.json").read_text())["architectures"][0]


@pytest.fixture(scope="module", params=[None, "biases"], ids=["qwen2", "llama-biases"])
def lora_run(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lora")
    start = make_checkpoint(tmp / "start", False, torch.float32, False, seed=9, llama=request.param)
    run = tmp / "run"
    ragen("train", "--config", "configs/smoke.yaml", "--model", start, "--out", run,
          "--set", f"lora.rank={RANK}", "--set", f"lora.alpha={ALPHA}", "--set", "agent.max_turn=2",
          "--set", "actor.lr=1e-2", "--set", "critic.lr=1e-3")
    return start, run


def test_lora_adapter_matches_peft(lora_run):
    start, run = lora_run
    adapter = run / "export-adapter"
    base = load_hf(start, torch.float32)
    model = PeftModel.from_pretrained(base, adapter).eval()
    cfg = model.peft_config["default"]
    assert (cfg.r, cfg.lora_alpha, cfg.peft_type, cfg.task_type) == (RANK, ALPHA, "LORA", "CAUSAL_LM")
    assert set(cfg.target_modules) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    # PEFT took every stored tensor (a name it did not know would be left out
    # of the model and warned about; here it would leave a zero B).
    stored = load_file(adapter / "adapter_model.safetensors")
    loaded = {k.replace(".default", ""): v for k, v in model.state_dict().items() if "lora_" in k}
    assert stored.keys() == loaded.keys()
    for k, v in stored.items():
        assert torch.equal(v, loaded[k]), k

    prompts = random_prompts([3, 12, 25], seed=13)
    args = [a for p in prompts for a in ("--prompt-ids", ",".join(map(str, p)))]
    for extra in ([], ["--temperature", "1", "--seed", "3"]):
        ours = ragen_generate(start, args, "fp32", "--adapter", adapter, *extra)
        worst, moved = 0.0, 0.0
        for p, o in zip(prompts, ours, strict=True):
            assert o["prompt_ids"] == p
            lp = hf_logprobs(model, p, o["ids"])
            worst = max(worst, (lp - torch.tensor(o["logprobs"])).abs().max().item())
            with model.disable_adapter():
                moved = max(moved, (lp - hf_logprobs(model, p, o["ids"])).abs().max().item())
            if not extra:
                assert o["ids"] == hf_greedy(model, p), "greedy ids differ from PEFT's"
        kind = "sampled" if extra else "greedy"
        print(f"\n{arch(start)} LoRA r={RANK} α={ALPHA}, {kind}: max |Δ logprob| ragen --adapter vs PEFT "
              f"{worst:.3g}; the adapters move log-probs by up to {moved:.3g}")
        assert worst <= FP32_TOL
        assert moved > 100 * FP32_TOL, "the adapters barely trained: the comparison would not see them"


def test_lora_merged_export_matches_peft_merge(lora_run):
    start, run = lora_run
    merged = PeftModel.from_pretrained(load_hf(start, torch.float32), run / "export-adapter").merge_and_unload()
    want = {k: v for k, v in merged.state_dict().items()}
    ours = {}
    for f in (run / "export").glob("*.safetensors"):
        ours.update(load_file(f))
    assert ours.keys() == want.keys() or ours.keys() == want.keys() - {"lm_head.weight"}
    worst = max((ours[k] - want[k]).abs().max().item() for k in ours)
    base = {}
    for f in start.glob("*.safetensors"):
        base.update(load_file(f))
    adapted = [k for k in ours if not torch.equal(ours[k], base[k])]
    print(f"\n{arch(start)} merged export vs PEFT merge_and_unload: max |Δ weight| {worst:.3g} over {len(ours)} tensors "
          f"({len(adapted)} adapted)")
    assert worst <= MERGE_TOL
    assert all(k.split(".")[-2].endswith("_proj") for k in adapted) and adapted
    assert json.loads((run / "export" / "config.json").read_text())["torch_dtype"] == "float32"
