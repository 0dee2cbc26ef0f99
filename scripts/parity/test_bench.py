"""`ragen bench --vs-torch --vs-llamacpp` runs its three sides fairly.

On the tiny preset (a real Qwen2 checkpoint with random weights), the
report must give the PyTorch baseline as many threads as ragen uses in
all (libtorch's pool and OpenBLAS's), give llama.cpp as many, keep
llama.cpp's keys and values in F32, and put a llama.cpp figure beside
every prefill and decode row. The figures themselves are measurements
(docs/benchmarks.md), not checked here.

Run from the repository root (make parity does):

    .cache/parity/bin/python -m pytest -q scripts/parity/test_bench.py
"""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RAGEN = pathlib.Path(os.environ.get("RAGEN_BIN", ROOT / "bin" / "ragen")).resolve()


def test_three_sides_same_threads():
    out = subprocess.run(
        [str(RAGEN), "bench", "--preset", "tiny", "--parts", "prefill,decode", "--prefill-batches", "1,4",
         "--decode-batches", "1,4", "--decode-tokens", "6", "--repeat", "1", "--json",
         "--vs-torch", "--vs-llamacpp", "--python", sys.executable],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    rt = rep["runtime"]
    ours = max(rt["torch_threads"], rt["blas_threads"])
    assert rep["baseline"]["threads"] == ours, (rep["baseline"], rt)
    assert rep["llama_cpp"]["threads"] == ours, (rep["llama_cpp"], rt)
    assert rep["llama_cpp"]["kv"] == "f32"
    rows = [(r["name"], r["batch"]) for r in rep["results"]]
    assert rows == [("prefill", 1), ("prefill", 4), ("decode", 1), ("decode", 4)], rows
    for r in rep["results"]:
        assert r["llama_cpp"]["tokens_per_s"] > 0 and r["torch"]["tokens_per_s"] > 0, r
        assert abs(r["ratio_vs_llama_cpp"] - r["ours"]["tokens_per_s"] / r["llama_cpp"]["tokens_per_s"]) < 1e-9, r
