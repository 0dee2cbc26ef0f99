"""scripts/gpu-check.sh rehearsed on the CPU with small sizes: the same
script, binary steps and transformers baseline that the one call on a lent
GPU machine runs, so that call is spent on measurement, not debugging."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RAGEN = pathlib.Path(os.environ.get("RAGEN_BIN", ROOT / "bin" / "ragen")).resolve()
TOKENIZER = ROOT / ".cache/tokenizer-data/qwen2.5/tokenizer.json"


def test_gpu_check_rehearsal_on_cpu(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([str(ROOT / "scripts" / "gpu-check.sh"), "run", "--device", "cpu", "--small",
                        "--ragen", str(RAGEN), "--python", sys.executable, "--tokenizer",
                        os.environ.get("RAGEN_TEST_TOKENIZER", str(TOKENIZER)), "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    print(r.stderr[-3000:])
    res = json.loads((out / "gpu-check.json").read_text())
    steps = res["steps"]
    assert set(steps) == {"version", "generate_fp32", "generate_bf16", "train_2_steps", "bench", "bench_static_cache"}
    for name, s in steps.items():
        assert s["ok"], f"{name}: {json.dumps(s)[:1500]}"
    assert r.returncode == 0 and res["ok"]
    g = steps["generate_fp32"]
    assert g["hf_greedy_same"] == g["prompts"] and g["cpu_ids_equal"] and g["static_cache_ids_equal"]
    assert g["hf_logprob_max_diff"] <= 1e-4
    bench = json.loads((out / "bench.json").read_text())
    names = {x["name"] for x in bench["results"]}
    assert {"decode", "rollout", "update_actor", "update_critic"} <= names
    for x in bench["results"]:
        assert x["ratio_vs_torch"] > 0, x
    # The baseline is transformers itself, not the eager copy.
    assert "transformers" in json.dumps(bench.get("baseline", {})), bench.get("baseline")
    print({k: (s.get("hf_logprob_max_diff"), s["seconds"]) for k, s in steps.items()})
