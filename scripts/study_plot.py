#!/usr/bin/env python3
"""study_plot: curves of a `ragen study` folder as one SVG, for the docs.

    python3 scripts/study_plot.py STUDY_DIR ENV OUT.svg KEY[:LABEL] ...

Each KEY is a metrics.jsonl key of the runs (train lines, or val-env/…
validation lines); each panel draws, per arm, the mean over the seeds at
each step with a band of ± one standard error. Standard library only.
"""
import json
import math
import os
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 330, 210, 46, 10, 28, 30


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def series(study, env, key):
    """{arm: {step: [values over seeds]}} for key."""
    out = {}
    base = os.path.join(study, "runs", env)
    for arm in sorted(os.listdir(base)):
        adir = os.path.join(base, arm)
        if not os.path.isdir(adir):
            continue
        for seed in sorted(os.listdir(adir)):
            m = os.path.join(adir, seed, "metrics.jsonl")
            if not os.path.isfile(m):
                continue
            for r in load(m):
                if key in r and r[key] is not None:
                    out.setdefault(arm, {}).setdefault(int(r["step"]), []).append(r[key])
    return out


def stat(xs):
    n = len(xs)
    mean = sum(xs) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1) / n) if n > 1 else 0.0
    return mean, se


def panel(x0, y0, title, data, arms):
    pts = [(s, *stat(v)) for a in data for s, v in data[a].items()]
    if not pts:
        return []
    smin, smax = min(p[0] for p in pts), max(p[0] for p in pts)
    lo = min(p[1] - p[2] for p in pts)
    hi = max(p[1] + p[2] for p in pts)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad
    sx = lambda s: x0 + PAD_L + (s - smin) / max(smax - smin, 1) * (W - PAD_L - PAD_R)
    sy = lambda v: y0 + PAD_T + (hi - v) / (hi - lo) * (H - PAD_T - PAD_B)
    out = [f'<text x="{x0 + W / 2}" y="{y0 + 16}" text-anchor="middle" font-size="12">{title}</text>',
           f'<rect x="{x0 + PAD_L}" y="{y0 + PAD_T}" width="{W - PAD_L - PAD_R}" height="{H - PAD_T - PAD_B}" '
           f'fill="none" stroke="#bbb"/>']
    for v in (lo + pad, (lo + hi) / 2, hi - pad):
        out.append(f'<text x="{x0 + PAD_L - 4}" y="{sy(v) + 4}" text-anchor="end" font-size="10">{v:.2f}</text>')
    for s in sorted({p[0] for p in pts}):
        out.append(f'<text x="{sx(s)}" y="{y0 + H - PAD_B + 13}" text-anchor="middle" font-size="10">{s}</text>')
    out.append(f'<text x="{x0 + W / 2}" y="{y0 + H - 4}" text-anchor="middle" font-size="10">step</text>')
    for a in data:
        c = COLOURS[arms.index(a) % len(COLOURS)]
        steps = sorted(data[a])
        st = [stat(data[a][s]) for s in steps]
        band = [(sx(s), sy(m + e)) for s, (m, e) in zip(steps, st)] + \
               [(sx(s), sy(m - e)) for s, (m, e) in reversed(list(zip(steps, st)))]
        out.append('<polygon fill="%s" fill-opacity="0.15" stroke="none" points="%s"/>' %
                   (c, " ".join(f"{x:.1f},{y:.1f}" for x, y in band)))
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' %
                   (c, " ".join(f"{sx(s):.1f},{sy(m):.1f}" for s, (m, _) in zip(steps, st))))
        for s, (m, _) in zip(steps, st):
            out.append(f'<circle cx="{sx(s):.1f}" cy="{sy(m):.1f}" r="2.5" fill="{c}"/>')
    return out


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    study, env, out, keys = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    panels = []
    arms = []
    for k in keys:
        key, _, label = k.partition(":")
        data = series(study, env, key)
        arms += [a for a in data if a not in arms]
        panels.append((label or key, data))
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    legend_h = 22
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * W}" height="{rows * H + legend_h}" '
           f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>']
    for i, (title, data) in enumerate(panels):
        svg += panel((i % cols) * W, legend_h + (i // cols) * H, title, data, arms)
    x = 10
    for i, a in enumerate(arms):
        svg.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{COLOURS[i % len(COLOURS)]}"/>')
        svg.append(f'<text x="{x + 16}" y="16" font-size="12">{a}</text>')
        x += 24 + 7 * len(a)
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
