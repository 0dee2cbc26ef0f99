package starpo

import (
	"fmt"
	"math"
	"time"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/batch"
)

// Advantages computes the kept rows' advantages and returns in response
// coordinates: GAE (with bi_level_gae bi-level GAE) on the critic's values
// (kept as OldValues) with the advantages whitened over every rank's
// batch, or GRPO's; then rollout_filter.loss_scaling scales the
// advantages. It records their means, the critic's explained variance and
// the time taken.
func (t *Trainer) Advantages(b *Batch, rec *Recorder) (err error) {
	defer torchrt.Catch(&err, rec.during())
	t0 := time.Now()
	a := t.Cfg.Algorithm
	switch a.AdvEstimator {
	case advantage.EstimatorGRPO:
		b.Advantages, b.Returns = advantage.GRPOOutcome(b.Rewards, b.Resp)
	case advantage.EstimatorGAE:
		if t.Critic == nil {
			return fmt.Errorf("advantage estimator gae needs the critic")
		}
		b.OldValues = t.values(b)
		var adv, returns [][]float64
		if a.BiLevelGAE {
			adv, returns = advantage.BiLevelGAE(b.Rewards, b.OldValues, b.Resp, b.TurnEnds, a.Gamma, a.Lambda,
				a.HighLevelGamma)
		} else {
			adv, returns = advantage.GAE(b.Rewards, b.OldValues, b.Resp, a.Gamma, a.Lambda)
		}
		if b.Advantages, err = advantage.WhitenMaskedAcross(adv, b.Resp, t.sum("advantage whitening")); err != nil {
			return err
		}
		b.Returns = returns
	default:
		return fmt.Errorf("advantage estimator %q is not gae or grpo", a.AdvEstimator)
	}
	t.scaleAdvantages(b)
	m := rec.Metrics
	if b.OldValues != nil {
		ev, err := explainedVariance(b.Returns, b.OldValues, b.Resp, t.sum("explained variance"))
		if err != nil {
			return err
		}
		m["critic/vf_explained_var"] = ev
		if m["critic/values/mean"], err = maskedMean(b.OldValues, b.Resp, t.sum("value mean")); err != nil {
			return err
		}
	}
	if m["critic/advantages/mean"], err = maskedMean(b.Advantages, b.Resp, t.sum("advantage mean")); err != nil {
		return err
	}
	if m["critic/returns/mean"], err = maskedMean(b.Returns, b.Resp, t.sum("return mean")); err != nil {
		return err
	}
	rec.Time("adv", t0)
	return nil
}

// values are the critic's values in response coordinates, [Rows][Length−1]:
// position j values the state after token j (verl's values[:, :-1]).
func (t *Trainer) values(b *Batch) [][]float64 {
	out := make([][]float64, 0, b.Rows)
	torchrt.Check(torchrt.NoGrad(func() error {
		for _, mb := range batch.Split(0, b.Rows, max(1, t.Cfg.Algorithm.MicroBatch)) {
			func() {
				var s torchrt.Scope
				defer s.Drop()
				v := s.Op(t.Critic.Values(inputs(b, mb, t.Critic.Device, t.Critic.DType, &s)))
				v = s.Op(v.Narrow(1, 0, int64(b.Length-1), false))
				out = append(out, batch.ToRows(v)...)
			}()
		}
		return nil
	}))
	return out
}

// inputs builds the model inputs of rows mb, held by s.
func inputs(b *Batch, mb batch.Span, dev gotch.Device, dt gotch.DType, s *torchrt.Scope) model.Inputs {
	ids, attn := b.Tensors(mb, dev, s)
	pos := s.Op(model.PositionsFromMask(attn))
	bias := s.Op(model.AttentionBias(attn, int64(b.Length), dt))
	return model.Inputs{IDs: ids, Positions: pos, Bias: bias}
}

// maskedMean is the mean of x over the positions where mask is 1, over
// all ranks (sum nil: this process's batch).
func maskedMean(x, mask [][]float64, sum func(v ...*float64) error) (float64, error) {
	var s, n float64
	for i := range x {
		for j, m := range mask[i] {
			s += x[i][j] * m
			n += m
		}
	}
	if sum != nil {
		if err := sum(&s, &n); err != nil {
			return 0, err
		}
	}
	return s / math.Max(n, 1), nil
}

// explainedVariance is 1 − Var(R − V)/Var(R) over the trained positions of
// all ranks: how much of the returns the critic's values (before the
// update) explain (verl's critic/vf_explained_var). 1 is perfect, ≤ 0 no
// better than the mean; NaN when the returns do not vary.
func explainedVariance(returns, values, mask [][]float64, sum func(v ...*float64) error) (float64, error) {
	var r, d, rr, dd, n float64
	for i := range returns {
		for j, m := range mask[i] {
			if m == 0 {
				continue
			}
			e := returns[i][j] - values[i][j]
			r, rr, d, dd, n = r+returns[i][j], rr+returns[i][j]*returns[i][j], d+e, dd+e*e, n+1
		}
	}
	if sum != nil {
		if err := sum(&r, &rr, &d, &dd, &n); err != nil {
			return 0, err
		}
	}
	if n == 0 {
		return math.NaN(), nil
	}
	varR, varD := rr/n-(r/n)*(r/n), dd/n-(d/n)*(d/n)
	if varR <= 1e-12 {
		return math.NaN(), nil
	}
	return 1 - varD/varR, nil
}
