"""verl's RL math as the reference for ragen-go's parity tests (parity/).

Reads one JSON request on standard input, {"cases": [{"name", "fn", "dtype",
...inputs}]}, and writes {"results": {name: outputs}} on standard output. Every
case is computed by verl's own functions (verl.trainer.ppo.core_algos and
verl.utils.torch_functional), never by a transcription of them: this script
only turns JSON into tensors and back, and takes gradients with autograd.

Inputs are nested lists of numbers, converted to the case's dtype ("float32"
or "float64"); non-finite outputs are written as the strings "NaN", "Inf",
"-Inf", which JSON has no numbers for.
"""

import json
import math
import sys

import numpy as np
import torch

import verl.trainer.ppo.core_algos as core_algos
import verl.utils.torch_functional as verl_F
from verl.workers.config import ActorConfig


def num(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    return x


def out(t):
    """A tensor (or number) as JSON: nested lists of numbers."""
    if isinstance(t, torch.Tensor):
        t = t.detach().double().tolist()
    if isinstance(t, list):
        return [out(v) for v in t]
    return num(t)


def leaf(x, dt):
    return torch.tensor(x, dtype=dt, requires_grad=True)


def grad_of(loss, x):
    (g,) = torch.autograd.grad(loss, x)
    return out(g)


def gae(c, dt):
    rewards, values, mask = (torch.tensor(c[k], dtype=dt) for k in ("rewards", "values", "mask"))
    adv, ret = core_algos.compute_gae_advantage_return(
        token_level_rewards=rewards, values=values, response_mask=mask, gamma=c["gamma"], lam=c["lam"]
    )
    return {"advantages": out(adv), "returns": out(ret)}


def grpo(c, dt):
    rewards, mask = torch.tensor(c["rewards"], dtype=dt), torch.tensor(c["mask"], dtype=dt)
    adv, ret = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=rewards,
        response_mask=mask,
        index=np.array(c["index"]),
        norm_adv_by_std_in_grpo=c["norm_by_std"],
    )
    return {"advantages": out(adv), "returns": out(ret)}


def whiten(c, dt):
    x, mask = torch.tensor(c["x"], dtype=dt), torch.tensor(c["mask"], dtype=dt)
    try:
        return {"whitened": out(verl_F.masked_whiten(x, mask))}
    except ValueError as e:  # fewer than two trained positions
        return {"error": str(e)}


def agg(c, dt):
    loss_mat = leaf(c["loss_mat"], dt)
    loss = core_algos.agg_loss(loss_mat, torch.tensor(c["mask"], dtype=dt), c["mode"])
    return {"loss": num(loss), "grad": grad_of(loss, loss_mat)}


def policy(c, dt):
    logp = leaf(c["log_prob"], dt)
    config = ActorConfig(
        strategy="fsdp",
        ppo_mini_batch_size=1,
        ppo_micro_batch_size_per_gpu=1,
        rollout_n=1,
        clip_ratio=c["clip_low"],
        clip_ratio_low=c["clip_low"],
        clip_ratio_high=c["clip_high"],
        clip_ratio_c=c["clip_c"],
        loss_agg_mode=c["mode"],
    )
    loss, metrics = core_algos.compute_policy_loss_vanilla(
        old_log_prob=torch.tensor(c["old_log_prob"], dtype=dt),
        log_prob=logp,
        advantages=torch.tensor(c["advantages"], dtype=dt),
        response_mask=torch.tensor(c["mask"], dtype=dt),
        loss_agg_mode=c["mode"],
        config=config,
    )
    return {
        "loss": num(loss),
        "clipfrac": num(metrics["actor/pg_clipfrac"]),
        "ppo_kl": num(metrics["actor/ppo_kl"]),
        "clipfrac_lower": num(metrics["actor/pg_clipfrac_lower"]),
        "grad": grad_of(loss, logp),
    }


def value(c, dt):
    vpreds = leaf(c["vpreds"], dt)
    loss, clipfrac = core_algos.compute_value_loss(
        vpreds=vpreds,
        returns=torch.tensor(c["returns"], dtype=dt),
        values=torch.tensor(c["values"], dtype=dt),
        response_mask=torch.tensor(c["mask"], dtype=dt),
        cliprange_value=c["clip"],
        loss_agg_mode=c["mode"],
    )
    return {"loss": num(loss), "clipfrac": num(clipfrac), "grad": grad_of(loss, vpreds)}


def kl(c, dt):
    logp = leaf(c["log_prob"], dt)
    ref = torch.tensor(c["ref_log_prob"], dtype=dt)
    try:
        per_token = core_algos.kl_penalty(logp, ref, c["kind"])
    except NotImplementedError:
        return {"not_implemented": True}
    loss = core_algos.agg_loss(per_token, torch.tensor(c["mask"], dtype=dt), c["mode"])
    return {"kl": out(per_token), "loss": num(loss), "grad": grad_of(loss, logp)}


def entropy(c, dt):
    # The logits come from the final hidden states and the lm head, as in the
    # model; verl takes logits, so the gradient is taken through the matmul
    # to compare with ragen-go's closed-form lm-head gradient.
    hidden = torch.tensor(c["hidden"], dtype=dt)  # [B, T, d]
    weight = leaf(c["weight"], dt)  # [V, d]
    logits = hidden @ weight.T  # [B, T, V]
    mask = torch.tensor(c["mask"], dtype=dt)
    labels = torch.tensor(c["labels"], dtype=torch.long)
    ent = verl_F.entropy_from_logits(logits)
    logp = verl_F.logprobs_from_logits(logits, labels)
    ent_loss = core_algos.compute_entropy_loss(logits, mask, c["mode"])
    total = c["coef_entropy"] * ent_loss + c["coef_logp"] * core_algos.agg_loss(logp, mask, c["mode"])
    return {"entropy": out(ent), "log_prob": out(logp), "loss": num(ent_loss), "grad_weight": grad_of(total, weight)}


FNS = {"gae": gae, "grpo": grpo, "whiten": whiten, "agg": agg, "policy": policy, "value": value, "kl": kl, "entropy": entropy}
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def main():
    torch.use_deterministic_algorithms(True)
    req = json.load(sys.stdin)
    results = {}
    for c in req["cases"]:
        results[c["name"]] = FNS[c["fn"]](c, DTYPES[c["dtype"]])
    json.dump({"versions": {"torch": torch.__version__, "verl": __import__("verl").__version__}, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
