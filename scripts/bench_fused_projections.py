#!/usr/bin/env python3
"""What fusing q/k/v and gate/up would save in decoding, measured on the
libtorch and BLAS that ragen links by default.

Run with Debian's python3-torch (the same libtorch 1.13 and OpenBLAS as
ragen's default build), with ragen's default thread split (libtorch's pool
at 1 thread, OpenBLAS on every core):

    OPENBLAS_NUM_THREADS=2 /usr/bin/python3 scripts/bench_fused_projections.py

One decoding step of SmolLM2-135M-Instruct's matrix products (30 layers of
d 576, 9 query and 3 key/value heads of 64, MLP 1536, then the 49,152-row
tied head), for a batch of B new tokens:
- separate: the seven products of a layer (q, k, v, o, gate, up, down);
- fused: four (one [q;k;v] product, o, one [gate;up] product, down), the
  fused outputs split by views, as a fused model would compute them.
Only the products and the SwiGLU product are timed: the rest of a layer is
the same on both sides. Both sides run alternately, each round the mean
of N steps; the median round counts. Prints ms per step and the ratio.
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", default="1,32", help="rows per product (comma-separated)")
    ap.add_argument("--rounds", type=int, default=7, help="alternating rounds per side")
    ap.add_argument("--steps", type=int, default=10, help="decoding steps per round")
    ap.add_argument("--threads", type=int, default=1, help="libtorch intra-op threads")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    d, kv, ff, layers, vocab = 576, 192, 1536, 30, 49152
    g = lambda o, i: torch.randn(o, i) * 0.02
    ws = [dict(q=g(d, d), k=g(kv, d), v=g(kv, d), o=g(d, d), gate=g(ff, d), up=g(ff, d), down=g(d, ff))
          for _ in range(layers)]
    fused = [dict(qkv=torch.cat([w["q"], w["k"], w["v"]]), o=w["o"],
                  gu=torch.cat([w["gate"], w["up"]]), down=w["down"]) for w in ws]
    head = g(vocab, d)

    def lin(x, w):
        # ragen's Linear: one row takes the matrix-vector kernel (model/kernels.go).
        return (w @ x[0]).unsqueeze(0) if x.shape[0] == 1 else x @ w.t()

    def separate_step(x):
        for w in ws:
            q, k, v = lin(x, w["q"]), lin(x, w["k"]), lin(x, w["v"])
            lin(q, w["o"])
            y = torch.nn.functional.silu(lin(x, w["gate"])) * lin(x, w["up"])
            lin(y, w["down"])
        lin(x, head)

    def fused_step(x):
        for w in fused:
            qkv = lin(x, w["qkv"])
            q, k, v = qkv[:, :d], qkv[:, d:d + kv], qkv[:, d + kv:]
            lin(q, w["o"])
            gu = lin(x, w["gu"])
            y = torch.nn.functional.silu(gu[:, :ff]) * gu[:, ff:]
            lin(y, w["down"])
        lin(x, head)

    print(f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}, "
          f"{args.rounds} alternating rounds of {args.steps} steps; median ms per decoding step")
    print("batch  separate (7 products/layer)  fused (4 products/layer)  separate ÷ fused")
    for b in [int(s) for s in args.batches.split(",")]:
        x = torch.randn(b, d)
        times = {separate_step: [], fused_step: []}
        for f in times:
            f(x)  # warm
        for _ in range(args.rounds):
            for f in times:
                t = time.perf_counter()
                for _ in range(args.steps):
                    f(x)
                times[f].append((time.perf_counter() - t) / args.steps * 1e3)
        sep, fus = statistics.median(times[separate_step]), statistics.median(times[fused_step])
        print(f"{b:5d}  {sep:27.2f}  {fus:24.2f}  {sep / fus:15.2f}×")


if __name__ == "__main__":
    main()
