#!/usr/bin/env python3
"""The GPU check's measurements (scripts/gpu-check.sh runs this).

Needs a python with torch and transformers (the GPU machine's python3 has
torch 2.11.0+cu130 and transformers 5.17) and a ragen binary built against
the same torch version. Every step's result goes to OUT/gpu-check.json as it
finishes, so a call cut short still reports what it measured:

1. `ragen version` (and that it sees the device asked for);
2. a random Qwen2 checkpoint saved by transformers (GQA, q/k/v biases, rope
   theta 1e6, Qwen's vocabulary), a left-padded batch of prompts: ragen's
   greedy ids and log-probs on DEVICE against ragen on the CPU and against
   transformers on DEVICE, fp32 and bf16; the static-cache path (and on CUDA
   the CUDA-graph replay) against the dynamic one;
3. two StarPO-S training steps on DEVICE (on CUDA with the bf16 autocast);
4. `ragen bench --vs-torch` with RAGEN_BENCH_IMPL=transformers: decode,
   rollout, log-prob pass and updates, ragen beside transformers in the same
   process pair, with ratios (and again with CUDA graphs on CUDA).

Usage: gpu_check.py --ragen BIN --tokenizer tokenizer.json --out DIR
       [--device cuda|cpu] [--small]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
import traceback

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAD, IM_END = 151643, 151645
VOCAB = 151936
FP32_TOL = 1e-4  # log-probs, ragen vs transformers and CUDA vs CPU (fp32)
BF16_TOL = 0.25  # log-probs in bf16: see scripts/parity/test_transformers.py

args = None
results = {"steps": {}}


def save():
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu-check.json").write_text(json.dumps(results, indent=2))


def step(name):
    """Runs the decorated step now, recording its result or its error."""
    def run(fn):
        t0 = time.time()
        print(f"gpu-check: {name} ...", file=sys.stderr, flush=True)
        try:
            r = fn()
            r = {"ok": all(v for k, v in r.items() if k.startswith("pass_")), **r}
        except Exception as e:  # record, go on with the next step
            r = {"ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
        r["seconds"] = round(time.time() - t0, 2)
        results["steps"][name] = r
        print(f"gpu-check: {name}: {'ok' if r['ok'] else 'FAILED'} ({r['seconds']} s)"
              + ("" if r["ok"] else " " + r.get("error", json.dumps(r)[:400])), file=sys.stderr, flush=True)
        save()
        return fn
    return run


def ragen(*a, env=None):
    cmd = [args.ragen, *map(str, a)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-1500:]}")
    return r.stdout


def write_tokenizer(d):
    data = json.loads(pathlib.Path(args.tokenizer).read_text())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["id"] <= 151664]
    (d / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False))
    (d / "tokenizer_config.json").write_text(json.dumps({
        "add_bos_token": False, "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "chat_template": (ROOT / "tokenizer" / "qwen2.5-instruct-chat-template.jinja").read_text(),
        "tokenizer_class": "Qwen2Tokenizer", "model_max_length": 131072}))


def make_checkpoint(d, dtype):
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                      rope_theta=1e6, rms_norm_eps=1e-6, tie_word_embeddings=False,
                      bos_token_id=PAD, eos_token_id=IM_END)
    m = Qwen2ForCausalLM(cfg)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.2)
    m.to(dtype).save_pretrained(d)
    write_tokenizer(d)


def generate(d, prompts, device, dtype, *extra):
    pa = [x for p in prompts for x in ("--prompt-ids", ",".join(map(str, p)))]
    out = ragen("generate", "--model", d, "--json", "--max-new-tokens", 16, "--dtype", dtype, "--device", device, *pa, *extra)
    return [json.loads(line) for line in out.splitlines()]


@torch.no_grad()
def hf_check(d, prompts, ours, dtype, device):
    """transformers on device: greedy ids of each prompt alone, and the
    log-probs of ragen's ids by a full forward."""
    from transformers import Qwen2ForCausalLM
    m = Qwen2ForCausalLM.from_pretrained(d, dtype=dtype).to(device).eval()
    same, worst = 0, 0.0
    for p, o in zip(prompts, ours):
        ids = torch.tensor([p], device=device)
        g = m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=16, do_sample=False,
                       eos_token_id=[IM_END, PAD], pad_token_id=PAD)[0, len(p):].tolist()
        same += g == o["ids"]
        full = torch.tensor([p + o["ids"]], device=device)
        lp = torch.log_softmax(m(full).logits[0].float(), -1)[len(p) - 1:len(p) + len(o["ids"]) - 1]
        ref = lp.gather(1, torch.tensor(o["ids"], device=device)[:, None])[:, 0].cpu()
        worst = max(worst, (ref - torch.tensor(o["logprobs"])).abs().max().item())
    return same, worst


def max_lp_diff(a, b):
    return max(max(abs(x - y) for x, y in zip(p["logprobs"], q["logprobs"])) for p, q in zip(a, b))


def main():
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--ragen", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true", help="small sizes (the CPU rehearsal)")
    args = ap.parse_args()
    cuda = args.device.startswith("cuda")
    work = pathlib.Path(args.out) / "work"
    work.mkdir(parents=True, exist_ok=True)
    results.update({"device": args.device, "small": args.small, "torch": torch.__version__,
                    "cuda_available": torch.cuda.is_available(),
                    "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None})
    save()

    @step("version")
    def _():
        out = ragen("version")
        line = next((l for l in out.splitlines() if l.startswith("device")), "")
        return {"text": out, "pass_device": ("cuda" in line and "0 GPU" not in line) if cuda else True}

    prompts = [torch.randint(0, PAD, (n,), generator=torch.Generator().manual_seed(n)).tolist() for n in (3, 11, 7, 19)]
    for dt in ("fp32", "bf16"):
        d = work / f"ckpt-{dt}"

        @step(f"generate_{dt}")
        def _():
            make_checkpoint(d, torch.float32 if dt == "fp32" else torch.bfloat16)
            ours = generate(d, prompts, args.device, dt)
            tol = FP32_TOL if dt == "fp32" else BF16_TOL
            same, hf = hf_check(d, prompts, ours, torch.float32 if dt == "fp32" else torch.bfloat16, args.device)
            r = {"prompts": len(prompts), "hf_greedy_same": same, "hf_logprob_max_diff": hf, "tolerance": tol,
                 "pass_hf_logprobs": hf <= tol}
            if dt == "fp32":
                r["pass_hf_ids"] = same == len(prompts)
                cpu = generate(d, prompts, "cpu", dt)
                r["cpu_ids_equal"] = [p["ids"] for p in cpu] == [p["ids"] for p in ours]
                r["cpu_logprob_max_diff"] = max_lp_diff(cpu, ours)
                r["pass_cpu"] = r["cpu_ids_equal"] and r["cpu_logprob_max_diff"] <= FP32_TOL
            for flag in ["--static-cache"] + (["--cuda-graphs"] if cuda else []):
                alt = generate(d, prompts, args.device, dt, flag)
                key = flag.strip("-").replace("-", "_")
                r[key + "_ids_equal"] = [p["ids"] for p in alt] == [p["ids"] for p in ours]
                r[key + "_logprob_max_diff"] = max_lp_diff(alt, ours)
                r["pass_" + key] = r[key + "_ids_equal"] and (dt == "bf16" or r[key + "_logprob_max_diff"] <= FP32_TOL)
            return r

    @step("train_2_steps")
    def _():
        run = work / "train"
        sets = ["steps=2", f"device={args.device}", "save_every=0"]
        if cuda:
            sets.append("algorithm.autocast=bf16")
        ragen("train", "--config", "configs/smoke.yaml", "--model", work / "ckpt-fp32", "--out", run,
              "--log-format", "json", *[x for s in sets for x in ("--set", s)])
        lines = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines() if l.strip()]
        trained = [l for l in lines if "actor/pg_loss" in l]  # the other lines are validations
        last = {k: v for k, v in trained[-1].items() if "loss" in k or "grad_norm" in k} if trained else {}
        return {"sets": sets, "training_steps": len(trained), "last": last, "pass_steps": len(trained) == 2}

    if args.small:
        b = ["--preset", "tiny", "--decode-batches", "4", "--decode-prompt", "16", "--decode-tokens", "8",
             "--rollout-groups", "1", "--rollout-group-size", "2", "--rollout-turns", "2", "--rollout-tokens", "8",
             "--update-seqs", "2", "--micro-batch", "1", "--repeat", "1"]
    else:
        # The shapes: Qwen2.5-0.5B, decode at batch 128, a 5-turn
        # rollout of 128 trajectories (16 groups × 8) of up to 100 tokens a
        # turn, updates of 32 sequences.
        b = ["--preset", "qwen2.5-0.5b", "--decode-batches", "128", "--decode-prompt", "256", "--decode-tokens", "64",
             "--rollout-groups", "16", "--rollout-group-size", "8", "--rollout-turns", "5", "--rollout-tokens", "100",
             "--update-seqs", "32", "--micro-batch", "8", "--repeat", "2"]
    common = b + ["--device", args.device, "--vs-torch", "--python", sys.executable,
                  "--torch-script", str(ROOT / "scripts" / "bench_torch.py"), "--tokenizer", args.tokenizer,
                  "--json", "--log-format", "json"]
    env = {"RAGEN_BENCH_IMPL": "transformers"}
    runs = [("bench", ["--parts", "decode,rollout,update"])]
    if cuda:
        runs.append(("bench_cuda_graphs", ["--cuda-graphs", "--parts", "decode,rollout"]))
    else:
        runs.append(("bench_static_cache", ["--static-cache", "--parts", "decode"]))
    for name, extra in runs:
        @step(name)
        def _():
            out = ragen("bench", *common, *extra, env=env)
            (pathlib.Path(args.out) / f"{name}.json").write_text(out)
            return {"report": json.loads(out)}

    ok = all(s["ok"] for s in results["steps"].values())
    results["ok"] = ok
    save()
    print(f"gpu-check: {'all steps passed' if ok else 'some steps FAILED'}; {args.out}/gpu-check.json", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
