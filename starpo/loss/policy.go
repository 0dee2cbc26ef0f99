package loss

import (
	"fmt"
	"math"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// logRatioClamp bounds log ρ before exp, as verl does for stability: beyond
// it the ratio saturates and passes no gradient.
const logRatioClamp = 20.0

// PolicyMetrics are the clipped policy loss's metrics, over the trained
// positions of one call.
type PolicyMetrics struct {
	PGLoss          float64 // actor/pg_loss: the aggregated loss
	PGClipFrac      float64 // actor/pg_clipfrac: share of tokens where the clipped term won (pg2 > pg1)
	PPOKL           float64 // actor/ppo_kl: masked mean of logp_old − logp (the clamped log-ratio)
	PGClipFracLower float64 // actor/pg_clipfrac_lower: share of tokens where the dual clip binds (A < 0)
	AbsLogRatio     float64 // actor/abs_log_ratio: masked mean of |logp − logp_old|, how far the policy has moved
}

// Metrics returns the metrics under RAGEN's names (docs/ragen.md#metrics).
func (p PolicyMetrics) Metrics() map[string]float64 {
	return map[string]float64{
		"actor/pg_loss":           p.PGLoss,
		"actor/pg_clipfrac":       p.PGClipFrac,
		"actor/ppo_kl":            p.PPOKL,
		"actor/pg_clipfrac_lower": p.PGClipFracLower,
		"actor/abs_log_ratio":     p.AbsLogRatio,
	}
}

// PolicyOptions are the clipped policy loss's settings. StarPO's are
// ClipLow 0.2, ClipHigh 0.28, ClipC 3, Agg TokenMean.
type PolicyOptions struct {
	ClipLow  float64 // ε_low: ρ is clipped below at 1 − ClipLow (clip_ratio_low)
	ClipHigh float64 // ε_high: ρ is clipped above at 1 + ClipHigh (clip_ratio_high, "clip-higher")
	ClipC    float64 // dual-clip bound: −A·ρ is at most −A·ClipC where A < 0 (clip_ratio_c)
	Agg      AggMode // loss_agg_mode
}

// PolicyLoss is verl's compute_policy_loss: PPO's clipped surrogate with
// decoupled ("clip-higher") bounds and dual clip (docs/ragen.md#policy-loss).
// Per token,
//
//	ρ    = exp(clamp(logp − logp_old, −20, 20))
//	pg1  = −A·ρ,  pg2 = −A·clip(ρ, 1 − ClipLow, 1 + ClipHigh)
//	pg   = max(pg1, pg2)                 for A ≥ 0
//	pg   = min(max(pg1, pg2), −A·ClipC)  for A < 0 (dual clip)
//
// aggregated over the trained positions by o.Agg. logp (which carries the
// graph), oldLogp and adv are [B, T] like mask; oldLogp and adv are taken
// as constants. The clamp of log ρ is verl's: beyond ±20 the ratio
// saturates and passes no gradient.
//
// Bounds outside 0 ≤ ClipLow < 1, ClipHigh ≥ 0, ClipC > 1 (verl asserts the
// last), an unknown mode or mismatched shapes are errors.
func PolicyLoss(logp, oldLogp, adv, mask *ts.Tensor, o PolicyOptions) (loss *ts.Tensor, pm PolicyMetrics, err error) {
	clipLow, clipHigh, clipC, mode := o.ClipLow, o.ClipHigh, o.ClipC, o.Agg
	switch {
	case !(clipLow >= 0 && clipLow < 1):
		return nil, pm, fmt.Errorf("policy loss: clip_ratio_low %v is not in [0, 1)", clipLow)
	case !(clipHigh >= 0) || math.IsInf(clipHigh, 1):
		return nil, pm, fmt.Errorf("policy loss: clip_ratio_high %v is not a non-negative number", clipHigh)
	case !(clipC > 1) || math.IsInf(clipC, 1):
		return nil, pm, fmt.Errorf("policy loss: clip_ratio_c %v is not greater than 1", clipC)
	}
	if err := mode.Check(); err != nil {
		return nil, pm, err
	}
	defer torchrt.Catch(&err, "policy loss")
	s := &scope{}
	defer s.Drop()
	m := newMasked(s, mask, accDType(logp))
	lp := m.clean("log_prob", logp)
	old := m.clean("old_log_prob", oldLogp)
	a := m.clean("advantages", adv)

	lo, hi := ts.FloatScalar(-logRatioClamp), ts.FloatScalar(logRatioClamp)
	logRatio := s.Op(s.Op(lp.Sub(old, false)).Clamp(lo, hi, false))
	ratio := s.Op(logRatio.Exp(false))
	negA := s.Op(a.Neg(false))
	pg1 := s.Op(negA.Mul(ratio, false))
	pg2 := s.Op(negA.Mul(s.Op(ratio.Clamp(ts.FloatScalar(1-clipLow), ts.FloatScalar(1+clipHigh), false)), false))
	clip1 := s.Op(pg1.Maximum(pg2, false))
	pg3 := s.Op(negA.MulScalar(ts.FloatScalar(clipC), false))
	clip2 := s.Op(clip1.Minimum(pg3, false))
	negative := s.Op(a.Lt(ts.FloatScalar(0), false))
	pg := s.Op(clip2.WhereSelf(negative, clip1, false)) // A < 0 ? clip2 : clip1

	out := m.aggregate(pg, mode)
	pm.PGLoss = value(out)
	pm.PGClipFrac = m.fraction(s.Op(pg2.GtTensor(pg1, false)))
	pm.PPOKL = -value(m.mean(logRatio))
	pm.AbsLogRatio = value(m.mean(s.Op(logRatio.Abs(false))))
	lower := s.Op(s.Op(clip1.GtTensor(pg3, false)).Totype(m.weight.DType(), false))
	pm.PGClipFracLower = value(m.mean(s.Op(lower.Mul(s.Op(negative.Totype(m.weight.DType(), false)), false))))
	return s.Release(out), pm, nil
}
