package config

import (
	"fmt"
	"math"
)

// checkRanges holds the numbers that the optimisers, the sampler and the
// losses would otherwise refuse only once the model is loaded (or after a
// first rollout): finite and in range, each error naming its key. NaN
// (.nan in YAML) fails every check here, as it passes a plain x < 0.
func (c Config) checkRanges() error {
	for _, o := range []struct {
		key string
		o   Optim
	}{{"actor", c.Actor}, {"critic", c.Critic}} {
		switch {
		case !atLeast(o.o.LR, 0):
			return fmt.Errorf("%s.lr %v must be a finite number ≥ 0", o.key, o.o.LR)
		case !atLeast(o.o.WeightDecay, 0):
			return fmt.Errorf("%s.weight_decay %v must be a finite number ≥ 0", o.key, o.o.WeightDecay)
		case !(o.o.GradClip > 0) || math.IsInf(o.o.GradClip, 0):
			return fmt.Errorf("%s.grad_clip %v must be a finite number > 0", o.key, o.o.GradClip)
		case o.o.WarmupSteps < -1:
			return fmt.Errorf("%s.warmup_steps %d must be ≥ 0, or -1 to use warmup_ratio", o.key, o.o.WarmupSteps)
		case !(o.o.WarmupRatio >= 0 && o.o.WarmupRatio <= 1):
			return fmt.Errorf("%s.warmup_ratio %v must be in [0, 1]", o.key, o.o.WarmupRatio)
		}
	}
	r, a := c.Rollout, c.Algorithm
	switch {
	case !atLeast(r.Temperature, 0):
		return fmt.Errorf("rollout.temperature %v must be a finite number ≥ 0", r.Temperature)
	case !atLeast(r.ValTemperature, 0):
		return fmt.Errorf("rollout.val_temperature %v must be a finite number ≥ 0", r.ValTemperature)
	case !(r.TopP > 0 && r.TopP <= 1):
		return fmt.Errorf("rollout.top_p %v must be in (0, 1]", r.TopP)
	case r.TopK < -1:
		return fmt.Errorf("rollout.top_k %d must be ≥ 1, or 0 or -1 for off", r.TopK)
	case !(a.Gamma >= 0 && a.Gamma <= 1):
		return fmt.Errorf("algorithm.gamma %v must be in [0, 1]", a.Gamma)
	case !(a.Lambda >= 0 && a.Lambda <= 1):
		return fmt.Errorf("algorithm.lambda %v must be in [0, 1]", a.Lambda)
	case !(a.FilterRatio > 0 && a.FilterRatio <= 1):
		return fmt.Errorf("algorithm.filter_ratio %v must be in (0, 1]", a.FilterRatio)
	case !(a.ClipLow >= 0 && a.ClipLow < 1):
		return fmt.Errorf("algorithm.clip_low %v must be in [0, 1)", a.ClipLow)
	case !atLeast(a.ClipHigh, 0):
		return fmt.Errorf("algorithm.clip_high %v must be a finite number ≥ 0", a.ClipHigh)
	case !(a.ClipC > 1) || math.IsInf(a.ClipC, 0):
		return fmt.Errorf("algorithm.clip_c %v must be a finite number > 1", a.ClipC)
	case !atLeast(a.ValueClip, 0):
		return fmt.Errorf("algorithm.value_clip %v must be a finite number ≥ 0", a.ValueClip)
	case !finite(a.EntropyCoef):
		return fmt.Errorf("algorithm.entropy_coef %v must be a finite number", a.EntropyCoef)
	case !atLeast(a.KLLossCoef, 0):
		return fmt.Errorf("algorithm.kl_loss_coef %v must be a finite number ≥ 0", a.KLLossCoef)
	case !atLeast(a.KLCoef, 0):
		return fmt.Errorf("algorithm.kl_coef %v must be a finite number ≥ 0", a.KLCoef)
	case !finite(c.Agent.FormatPenalty):
		return fmt.Errorf("agent.format_penalty %v must be a finite number", c.Agent.FormatPenalty)
	case !finite(c.Shaping.ThinkBonus) || !finite(c.Shaping.EmptyThinkPenalty) || !finite(c.Shaping.LongThinkPenalty):
		return fmt.Errorf("shaping.think_bonus %v, empty_think_penalty %v and long_think_penalty %v must be finite numbers",
			c.Shaping.ThinkBonus, c.Shaping.EmptyThinkPenalty, c.Shaping.LongThinkPenalty)
	case !atLeast(c.Reasoning.Consistency, 0):
		return fmt.Errorf("reasoning.consistency %v must be a finite number ≥ 0", c.Reasoning.Consistency)
	case !atLeast(c.Reasoning.Claims, 0):
		return fmt.Errorf("reasoning.claims %v must be a finite number ≥ 0", c.Reasoning.Claims)
	case !atLeast(c.Reasoning.Plan, 0):
		return fmt.Errorf("reasoning.plan %v must be a finite number ≥ 0", c.Reasoning.Plan)
	case c.Echo.BaselineSteps < 1:
		return fmt.Errorf("echo.baseline_steps %d must be ≥ 1", c.Echo.BaselineSteps)
	case !(c.Echo.CollapseFrac > 0 && c.Echo.CollapseFrac < 1):
		return fmt.Errorf("echo.collapse_frac %v must be in (0, 1)", c.Echo.CollapseFrac)
	case !(c.Echo.SpikeFactor > 1) || math.IsInf(c.Echo.SpikeFactor, 0):
		return fmt.Errorf("echo.spike_factor %v must be a finite number > 1", c.Echo.SpikeFactor)
	case !(c.Echo.ThinkCollapseFrac > 0 && c.Echo.ThinkCollapseFrac < 1):
		return fmt.Errorf("echo.think_collapse_frac %v must be in (0, 1)", c.Echo.ThinkCollapseFrac)
	case !(c.Echo.MICollapseFrac > 0 && c.Echo.MICollapseFrac < 1):
		return fmt.Errorf("echo.mi_collapse_frac %v must be in (0, 1)", c.Echo.MICollapseFrac)
	case c.SFT.Think != ThinkGrounded && c.SFT.Think != ThinkShort:
		return fmt.Errorf("sft.think %q must be %s or %s", c.SFT.Think, ThinkGrounded, ThinkShort)
	case c.Collapse.Every < 0:
		return fmt.Errorf("collapse.every %d must be ≥ 0 (0 never measures)", c.Collapse.Every)
	case c.Collapse.Samples < 2 || c.Collapse.Samples > 256:
		return fmt.Errorf("collapse.samples %d must be in [2, 256]: the estimate compares samples with each other, at samples² scorings", c.Collapse.Samples)
	case !finite(c.Builtin.RopeTheta):
		return fmt.Errorf("builtin_model.rope_theta %v must be a finite number", c.Builtin.RopeTheta)
	case a.LMHeadChunk < 1:
		return fmt.Errorf("algorithm.lm_head_chunk %d must be ≥ 1", a.LMHeadChunk)
	case !atLeast(c.SFT.LR, 0):
		return fmt.Errorf("sft.lr %v must be a finite number ≥ 0", c.SFT.LR)
	}
	return nil
}

// atLeast says whether x is a finite number ≥ lo.
func atLeast(x, lo float64) bool { return x >= lo && !math.IsInf(x, 1) }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
