package starpo

import (
	"maps"
	"math"
	"slices"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/loss"
	"github.com/ragen-go/ragen/starpo/optim"
)

// span is a range [lo, hi) of batch rows.
type span struct{ lo, hi int }

// split cuts [lo, hi) into pieces of at most size rows (size ≤ 0: one).
func split(lo, hi, size int) []span {
	if size <= 0 {
		size = hi - lo
	}
	var out []span
	for s := lo; s < hi; s += size {
		out = append(out, span{s, min(hi, s+size)})
	}
	return out
}

// optimiserSteps runs Epochs passes over the batch in mini-batches; each
// mini-batch accumulates micro-batch gradients (fn gets the micro-batch and
// the number of micro-batches in its mini-batch, over all ranks, to scale
// the loss by, and returns the micro-batch's loss value) and then takes one
// optimiser step, after summing the gradients across ranks (Trainer.Dist).
// The step is skipped, its gradients zeroed, when the gradient norm is not
// finite (as verl does) and also when the loss is not finite: a NaN loss
// can come with finite gradients (clamp passes no gradient at NaN), which
// would train on garbage. Both tests see all ranks' values, so every rank
// decides alike. It returns the gradient norms (NaN for a step skipped on
// its loss) and the skipped-step count.
func (t *Trainer) optimiserSteps(b *batch, opt *optim.AdamW, clip float64, fn func(mb span, n int) (float64, error)) (norms []float64, skipped int, err error) {
	globalB := float64(b.B)
	if err := t.Dist.Sum("batch size", &globalB); err != nil {
		return nil, 0, err
	}
	for range max(1, t.Cfg.Algorithm.PPOEpochs) {
		for _, mini := range t.miniBatches(b.B, int(globalB)) {
			if err := opt.ZeroGrad(); err != nil {
				return nil, 0, err
			}
			micro := split(mini.lo, mini.hi, max(1, t.Cfg.Algorithm.MicroBatch))
			n := float64(len(micro))
			if err := t.Dist.Sum("micro-batch count", &n); err != nil {
				return nil, 0, err
			}
			lossSum := 0.0
			for _, mb := range micro {
				l, err := fn(mb, int(n))
				if err != nil {
					return nil, 0, err
				}
				lossSum += l
			}
			if err := t.Dist.Sum("loss", &lossSum); err != nil {
				return nil, 0, err
			}
			if math.IsNaN(lossSum) || math.IsInf(lossSum, 0) {
				if err := opt.ZeroGrad(); err != nil {
					return nil, 0, err
				}
				norms, skipped = append(norms, math.NaN()), skipped+1
				continue
			}
			if err := t.allReduceGrads(opt.Params()); err != nil {
				return nil, 0, err
			}
			norm, stepped, err := optim.StepIfFinite(opt, clip)
			if err != nil {
				return nil, 0, err
			}
			norms = append(norms, norm)
			if !stepped {
				skipped++
			}
		}
	}
	return norms, skipped, opt.ZeroGrad()
}

// inputs builds the model inputs of rows [lo, hi).
func inputs(b *batch, mb span, dev gotch.Device, dt gotch.DType, s *torchrt.Scope) model.Inputs {
	ids, attn := b.rows(mb.lo, mb.hi, dev)
	s.Keep(ids)
	s.Keep(attn)
	pos := s.Op(model.PositionsFromMask(attn))
	bias := s.Op(model.AttentionBias(attn, int64(b.L), dt))
	return model.Inputs{IDs: ids, Positions: pos, Bias: bias}
}

// values are the critic's values in response coordinates, [B][L−1]:
// position j values the state after token j (verl's values[:, :-1]).
func (t *Trainer) values(b *batch) [][]float64 {
	out := make([][]float64, 0, b.B)
	torchrt.Check(torchrt.NoGrad(func() error {
		for _, mb := range split(0, b.B, max(1, t.Cfg.Algorithm.MicroBatch)) {
			func() {
				var s torchrt.Scope
				defer s.Drop()
				v := s.Op(t.Critic.Values(inputs(b, mb, t.Critic.Device, t.Critic.DType, &s)))
				v = s.Op(v.Narrow(1, 0, int64(b.L-1), false))
				out = append(out, toRows(v)...)
			}()
		}
		return nil
	}))
	return out
}

// refLogProbs scores the batch's sampled tokens under the frozen reference
// policy, on the trained positions only.
func (t *Trainer) refLogProbs(b *batch) [][]float64 {
	out := make([][]float64, 0, b.B)
	for _, mb := range split(0, b.B, max(1, t.Cfg.Algorithm.MicroBatch)) {
		func() {
			var s torchrt.Scope
			defer s.Drop()
			ids, attn, only := b.microTensors(mb, t.Ref.Device, &s)
			sc, err := t.Ref.Score(ids, attn, model.ScoreOptions{ChunkRows: t.Cfg.Algorithm.LMHeadChunk, Only: only})
			torchrt.Check(err)
			defer sc.Drop()
			out = append(out, toRows(sc.LogProbs)...)
		}()
	}
	return out
}

// klInReward subtracts β·KL(π_old‖π_ref) per trained token from the
// rewards (verl's apply_kl_penalty with a fixed controller).
func (t *Trainer) klInReward(b *batch, refLogp, rewards [][]float64, met map[string]float64) (err error) {
	defer torchrt.Catch(&err, "in-reward kl")
	var s torchrt.Scope
	defer s.Drop()
	dev := gotch.CPU
	old := s.Keep(floatRows(b.oldLogp, 0, b.B, dev))
	ref := s.Keep(floatRows(refLogp, 0, b.B, dev))
	kl := toRows(s.Op(loss.KL(old, ref, t.Cfg.Algorithm.KLPenalty)))
	var total, n float64
	for i := range rewards {
		for j, m := range b.resp[i] {
			if m == 0 {
				continue
			}
			rewards[i][j] -= t.Cfg.Algorithm.KLCoef * kl[i][j]
			total += kl[i][j]
			n++
		}
	}
	met["actor/reward_kl_penalty"], met["actor/reward_kl_penalty_coeff"] = total/math.Max(n, 1), t.Cfg.Algorithm.KLCoef
	return nil
}

func (t *Trainer) updateCritic(step int, b *batch, oldV, returns [][]float64, met map[string]float64) error {
	if t.CriticLR.Kind != "" {
		t.CriticOpt.SetLR(t.CriticLR.LR(step))
	}
	var vf, clip float64
	norms, skipped, err := t.optimiserSteps(b, t.CriticOpt, t.Cfg.Critic.GradClip, func(mb span, n int) (float64, error) {
		var s torchrt.Scope
		defer s.Drop()
		critic, release, err := t.criticForUpdate()
		if err != nil {
			return 0, err
		}
		defer release()
		dev := critic.Device
		v := s.Op(critic.Values(inputs(b, mb, dev, critic.DType, &s)))
		v = s.Op(v.Narrow(1, 0, int64(b.L-1), false))
		l, vm, err := loss.ValueLoss(v, s.Keep(floatRows(oldV, mb.lo, mb.hi, dev)), s.Keep(floatRows(returns, mb.lo, mb.hi, dev)), s.Keep(floatRows(b.resp, mb.lo, mb.hi, dev)), t.Cfg.Algorithm.ValueClip, t.Cfg.Algorithm.LossAggMode)
		if err != nil {
			return 0, err
		}
		s.Keep(l)
		vf += vm.VFLoss / float64(n)
		clip += vm.VFClipFrac / float64(n)
		return vm.VFLoss, s.Op(l.DivScalar(ts.FloatScalar(float64(n)), false)).Backward()
	})
	if err != nil {
		return err
	}
	if err := t.Dist.Sum("critic metrics", &vf, &clip); err != nil {
		return err
	}
	k := float64(len(norms))
	met["critic/vf_loss"], met["critic/vf_clipfrac"] = vf/k, clip/k
	met["critic/grad_norm"], met["critic/step_skipped"] = advantage.Mean(norms), float64(skipped)
	met["critic/lr"] = t.CriticOpt.LR()
	return nil
}

func (t *Trainer) updateActor(step int, b *batch, adv, refLogp [][]float64, met map[string]float64) error {
	if t.ActorLR.Kind != "" {
		t.ActorOpt.SetLR(t.ActorLR.LR(step))
	}
	useKL := t.Cfg.Algorithm.UseKLLoss && refLogp != nil
	// Every rank reports every key, even one without rows this step, so
	// the sums line up across ranks.
	sums := map[string]float64{"actor/entropy_loss": 0}
	for k := range (loss.PolicyMetrics{}).Metrics() {
		sums[k] = 0
	}
	if useKL {
		sums["actor/kl_loss"] = 0
	}
	norms, skipped, err := t.optimiserSteps(b, t.ActorOpt, t.Cfg.Actor.GradClip, func(mb span, n int) (float64, error) {
		var s torchrt.Scope
		defer s.Drop()
		actor, release, err := t.actorForUpdate()
		if err != nil {
			return 0, err
		}
		defer release()
		dev := actor.Device
		ids, attn, resp := b.microTensors(mb, dev, &s)
		sc, err := actor.ScoreForTraining(ids, attn, resp, t.Cfg.Algorithm.LMHeadChunk)
		if err != nil {
			return 0, err
		}
		defer sc.Drop()
		pg, pm, err := loss.PolicyLoss(sc.LogProbs, s.Keep(floatRows(b.oldLogp, mb.lo, mb.hi, dev)), s.Keep(floatRows(adv, mb.lo, mb.hi, dev)), resp, t.Cfg.Algorithm.ClipLow, t.Cfg.Algorithm.ClipHigh, t.Cfg.Algorithm.ClipC, t.Cfg.Algorithm.LossAggMode)
		if err != nil {
			return 0, err
		}
		s.Keep(pg)
		ent, entV, err := loss.EntropyLoss(sc.Entropy, resp, t.Cfg.Algorithm.LossAggMode)
		if err != nil {
			return 0, err
		}
		s.Keep(ent)
		for k, v := range pm.Metrics() {
			sums[k] += v / float64(n)
		}
		sums["actor/entropy_loss"] += entV / float64(n)
		// loss = (pg − c·H + β·KL) / n, so the micro-batches of one
		// mini-batch add up.
		total := s.Op(pg.Sub(s.Op(ent.MulScalar(ts.FloatScalar(t.Cfg.Algorithm.EntropyCoef), false)), false))
		if useKL {
			kl, klV, err := loss.KLLoss(sc.LogProbs, s.Keep(floatRows(refLogp, mb.lo, mb.hi, dev)), resp, t.Cfg.Algorithm.KLLossType, t.Cfg.Algorithm.LossAggMode)
			if err != nil {
				return 0, err
			}
			s.Keep(kl)
			sums["actor/kl_loss"] += klV / float64(n)
			total = s.Op(total.Add(s.Op(kl.MulScalar(ts.FloatScalar(t.Cfg.Algorithm.KLLossCoef), false)), false))
		}
		lossV := float64(model.Float32s(total)[0])
		total = s.Op(total.DivScalar(ts.FloatScalar(float64(n)), false))
		if err := total.Backward(); err != nil {
			return 0, err
		}
		return lossV, sc.Backward()
	})
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(sums))
	vals := make([]float64, len(names))
	for i, name := range names {
		vals[i] = sums[name]
	}
	if err := t.Dist.SumSlice("actor metrics", vals); err != nil {
		return err
	}
	k := float64(len(norms))
	for i, name := range names {
		met[name] = vals[i] / k
	}
	if useKL {
		met["actor/kl_coef"] = t.Cfg.Algorithm.KLLossCoef
	}
	met["actor/grad_norm"], met["actor/step_skipped"], met["actor/lr"] = advantage.Mean(norms), float64(skipped), t.ActorOpt.LR()
	return nil
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
