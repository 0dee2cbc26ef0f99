package starpo

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/loss"
	"github.com/ragen-go/ragen/starpo/optim"
)

// UpdateCritic takes the critic's PPO epochs on b, rollout.reuse rounds of
// them, the clipped value loss towards the returns, and records critic/
// metrics (means over every optimiser step); without the critic (GRPO)
// there is nothing to train.
func (t *Trainer) UpdateCritic(step int, b *Batch, rec *Recorder) (err error) {
	defer torchrt.Catch(&err, rec.during())
	if t.Cfg.Algorithm.AdvEstimator != advantage.EstimatorGAE {
		return nil
	}
	if t.Critic == nil || b.OldValues == nil {
		return fmt.Errorf("the critic update needs a critic and the batch's values")
	}
	t0 := time.Now()
	if t.CriticLR.Kind != "" {
		t.CriticOpt.SetLR(t.CriticLR.LR(step))
	}
	var vf, clip float64
	micro := func(_ int, mb batch.Span, n int) (float64, error) {
		vm, err := t.criticMicroBatch(b, mb, n)
		vf += vm.VFLoss / float64(n)
		clip += vm.VFClipFrac / float64(n)
		return vm.VFLoss, err
	}
	norms, skipped, err := t.optimiserSteps(b, t.CriticOpt, t.Cfg.Critic.GradClip, micro)
	if err != nil {
		return err
	}
	if err := t.Dist.Sum("critic metrics", &vf, &clip); err != nil {
		return err
	}
	k := float64(len(norms))
	rec.update("update_critic", t0, b, map[string]float64{
		"critic/vf_loss": vf / k, "critic/vf_clipfrac": clip / k, "critic/grad_norm": advantage.Mean(norms),
		"critic/step_skipped": float64(skipped), "critic/lr": t.CriticOpt.LR(),
	})
	return nil
}

// criticMicroBatch accumulates the gradient of rows mb's value loss,
// divided by n so that a mini-batch's n micro-batches add up, and returns
// the loss's metrics.
func (t *Trainer) criticMicroBatch(b *Batch, mb batch.Span, n int) (vm loss.ValueMetrics, err error) {
	var s torchrt.Scope
	defer s.Drop()
	critic, release, err := t.criticForUpdate()
	if err != nil {
		return vm, err
	}
	defer release()
	a, dev := t.Cfg.Algorithm, critic.Device
	v := s.Op(critic.Values(inputs(b, mb, dev, critic.DType, &s)))
	v = s.Op(v.Narrow(1, 0, int64(b.Length-1), false))
	oldV, returns := s.Keep(batch.FloatRows(b.OldValues, mb, dev)), s.Keep(batch.FloatRows(b.Returns, mb, dev))
	resp := s.Keep(batch.FloatRows(b.Resp, mb, dev))
	l, vm, err := loss.ValueLoss(v, oldV, returns, resp, loss.ValueOptions{Clip: a.ValueClip, Agg: a.LossAggMode})
	if err != nil {
		return vm, err
	}
	s.Keep(l)
	return vm, s.Op(l.DivScalar(ts.FloatScalar(float64(n)), false)).Backward()
}

// UpdateActor takes the actor's PPO epochs on b, rollout.reuse rounds of
// them: the clipped policy loss, minus the entropy bonus, plus the KL loss
// to the reference with use_kl_loss. It records actor/ metrics, means over
// every optimiser step; with rollout.reuse k > 1 also each round's lag
// behind the policy that sampled b (lagMetrics, as actor/reuse_r{i}/…).
func (t *Trainer) UpdateActor(step int, b *Batch, rec *Recorder) (err error) {
	defer torchrt.Catch(&err, rec.during())
	t0 := time.Now()
	if t.ActorLR.Kind != "" {
		t.ActorOpt.SetLR(t.ActorLR.LR(step))
	}
	useKL := t.Cfg.Algorithm.UseKLLoss && b.RefLogProbs != nil
	// Every rank reports every key, even one without rows this step, so
	// the sums line up across ranks. Each round sums apart.
	rounds := make([]map[string]float64, t.reuse())
	for r := range rounds {
		rounds[r] = map[string]float64{"actor/entropy_loss": 0}
		for k := range (loss.PolicyMetrics{}).Metrics() {
			rounds[r][k] = 0
		}
		if useKL {
			rounds[r]["actor/kl_loss"] = 0
		}
	}
	micro := func(round int, mb batch.Span, n int) (float64, error) {
		return t.actorMicroBatch(b, mb, n, useKL, rounds[round])
	}
	norms, skipped, err := t.optimiserSteps(b, t.ActorOpt, t.Cfg.Actor.GradClip, micro)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(rounds[0]))
	vals := make([]float64, 0, len(rounds)*len(names)) // [round][name]
	for _, sums := range rounds {
		for _, name := range names {
			vals = append(vals, sums[name])
		}
	}
	if err := t.Dist.SumSlice("actor metrics", vals); err != nil {
		return err
	}
	met, k := map[string]float64{}, float64(len(norms))
	perRound := k / float64(len(rounds)) // every round takes the same optimiser steps
	for r := range rounds {
		for i, name := range names {
			v := vals[r*len(names)+i]
			met[name] += v / k
			if len(rounds) > 1 && slices.Contains(lagMetrics, name) {
				met[roundMetric(r, name)] = v / perRound
			}
		}
	}
	if useKL {
		met["actor/kl_coef"] = t.Cfg.Algorithm.KLLossCoef
	}
	met["actor/grad_norm"], met["actor/step_skipped"] = advantage.Mean(norms), float64(skipped)
	met["actor/lr"] = t.ActorOpt.LR()
	rec.update("update_actor", t0, b, met)
	return nil
}

// lagMetrics are the actor metrics reported per round when a rollout batch
// trains several (rollout.reuse, RAGEN's Online-k): how far the policy has
// moved from the one that sampled the batch, and how much of the batch the
// PPO clip then holds back.
var lagMetrics = []string{"actor/abs_log_ratio", "actor/pg_clipfrac"}

// roundMetric is lag metric name's key for round (0-based):
// actor/reuse_r{round+1}/….
func roundMetric(round int, name string) string {
	return fmt.Sprintf("actor/reuse_r%d/%s", round+1, strings.TrimPrefix(name, "actor/"))
}

// reuse is how many update rounds each rollout batch trains (rollout.reuse).
func (t *Trainer) reuse() int { return max(1, t.Cfg.Rollout.Reuse) }

// actorMicroBatch accumulates the gradient of rows mb's actor loss,
// (pg − c·H + β·KL)/n so that a mini-batch's n micro-batches add up, adds
// its metrics, divided by n, to sums and returns its loss.
func (t *Trainer) actorMicroBatch(b *Batch, mb batch.Span, n int, useKL bool,
	sums map[string]float64) (float64, error) {
	var s torchrt.Scope
	defer s.Drop()
	actor, release, err := t.actorForUpdate()
	if err != nil {
		return 0, err
	}
	defer release()
	a, dev := t.Cfg.Algorithm, actor.Device
	ids, attn, resp := b.Micro(mb, dev, &s)
	sc, err := actor.ScoreForTraining(ids, attn, resp, a.LMHeadChunk)
	if err != nil {
		return 0, err
	}
	defer sc.Drop()
	old, adv := s.Keep(batch.FloatRows(b.OldLogProbs, mb, dev)), s.Keep(batch.FloatRows(b.Advantages, mb, dev))
	clip := loss.PolicyOptions{ClipLow: a.ClipLow, ClipHigh: a.ClipHigh, ClipC: a.ClipC, Agg: a.LossAggMode}
	pg, pm, err := loss.PolicyLoss(sc.LogProbs, old, adv, resp, clip)
	if err != nil {
		return 0, err
	}
	s.Keep(pg)
	ent, entV, err := loss.EntropyLoss(sc.Entropy, resp, a.LossAggMode)
	if err != nil {
		return 0, err
	}
	s.Keep(ent)
	for k, v := range pm.Metrics() {
		sums[k] += v / float64(n)
	}
	sums["actor/entropy_loss"] += entV / float64(n)
	total := s.Op(pg.Sub(s.Op(ent.MulScalar(ts.FloatScalar(a.EntropyCoef), false)), false))
	if useKL {
		ref := s.Keep(batch.FloatRows(b.RefLogProbs, mb, dev))
		kl, klV, err := loss.KLLoss(sc.LogProbs, ref, resp, loss.KLOptions{Type: a.KLLossType, Agg: a.LossAggMode})
		if err != nil {
			return 0, err
		}
		s.Keep(kl)
		sums["actor/kl_loss"] += klV / float64(n)
		total = s.Op(total.Add(s.Op(kl.MulScalar(ts.FloatScalar(a.KLLossCoef), false)), false))
	}
	lossV := float64(model.Float32s(total)[0])
	total = s.Op(total.DivScalar(ts.FloatScalar(float64(n)), false))
	if err := total.Backward(); err != nil {
		return 0, err
	}
	return lossV, sc.Backward()
}

// optimiserSteps runs rollout.reuse rounds of PPOEpochs passes over the
// batch in mini-batches, every round on the same old log-probs, values and
// advantages; each mini-batch accumulates micro-batch gradients (fn gets
// the round, from 0, the micro-batch and the number of micro-batches in its
// mini-batch, over all ranks, to scale the loss by, and returns the
// micro-batch's loss value) and then takes one optimiser step, after
// summing the gradients across ranks (Trainer.Dist).
// The step is skipped, its gradients zeroed, when the gradient norm is not
// finite (as verl does) and also when the loss is not finite: a NaN loss
// can come with finite gradients (clamp passes no gradient at NaN), which
// would train on garbage. Both tests see all ranks' values, so every rank
// decides alike. It returns the gradient norms (NaN for a step skipped on
// its loss) and the skipped-step count.
func (t *Trainer) optimiserSteps(b *Batch, opt *optim.AdamW, clip float64,
	fn func(round int, mb batch.Span, n int) (float64, error)) (norms []float64, skipped int, err error) {
	globalB := float64(b.Rows)
	if err := t.Dist.Sum("batch size", &globalB); err != nil {
		return nil, 0, err
	}
	for round := range t.reuse() {
		micro := func(mb batch.Span, n int) (float64, error) { return fn(round, mb, n) }
		for range max(1, t.Cfg.Algorithm.PPOEpochs) {
			for _, mini := range t.miniBatches(b.Rows, int(globalB)) {
				norm, ok, err := t.optimiserStep(opt, clip, mini, micro)
				if err != nil {
					return nil, 0, err
				}
				norms = append(norms, norm)
				if !ok {
					skipped++
				}
			}
		}
	}
	return norms, skipped, opt.ZeroGrad()
}

// optimiserStep is optimiserSteps' step on mini-batch mini: its gradient
// norm (NaN when the loss was not finite), and whether it was taken.
func (t *Trainer) optimiserStep(opt *optim.AdamW, clip float64, mini batch.Span,
	fn func(mb batch.Span, n int) (float64, error)) (norm float64, stepped bool, err error) {
	if err := opt.ZeroGrad(); err != nil {
		return 0, false, err
	}
	micro := batch.Split(mini.Lo, mini.Hi, max(1, t.Cfg.Algorithm.MicroBatch))
	n := float64(len(micro))
	if err := t.Dist.Sum("micro-batch count", &n); err != nil {
		return 0, false, err
	}
	lossSum := 0.0
	for _, mb := range micro {
		l, err := fn(mb, int(n))
		if err != nil {
			return 0, false, err
		}
		lossSum += l
	}
	if err := t.Dist.Sum("loss", &lossSum); err != nil {
		return 0, false, err
	}
	if math.IsNaN(lossSum) || math.IsInf(lossSum, 0) {
		return math.NaN(), false, opt.ZeroGrad()
	}
	if err := t.allReduceGrads(opt.Params()); err != nil {
		return 0, false, err
	}
	return optim.StepIfFinite(opt, clip)
}

// WarmUp runs one untimed micro-batch forward and backward of the actor
// (critic false) or the critic on b, then zeroes the gradients. The first
// training pass of a process grows the heap by the activations' size, and
// the kernel zeroes every new page: on the 50M benchmark preset that made
// the first micro-batch three times slower than the next, so `ragen bench`
// times each update after this, as a training loop's steady state.
func (t *Trainer) WarmUp(b *Batch, critic bool) (err error) {
	defer torchrt.Catch(&err, "update warm-up")
	var s torchrt.Scope
	defer s.Drop()
	mb := batch.Span{Lo: 0, Hi: min(max(1, t.Cfg.Algorithm.MicroBatch), b.Rows)}
	if critic {
		v := s.Op(t.Critic.Values(inputs(b, mb, t.Critic.Device, t.Critic.DType, &s)))
		torchrt.Check(s.Op(v.Sum(gotch.Float, false)).Backward())
		return t.CriticOpt.ZeroGrad()
	}
	ids, attn, resp := b.Micro(mb, t.Actor.Device, &s)
	sc, err := t.Actor.ScoreForTraining(ids, attn, resp, t.Cfg.Algorithm.LMHeadChunk)
	if err != nil {
		return err
	}
	defer sc.Drop()
	l := s.Op(s.Op(sc.LogProbs.Mul(resp, false)).Sum(gotch.Float, false))
	torchrt.Check(l.Backward())
	torchrt.Check(sc.Backward())
	return t.ActorOpt.ZeroGrad()
}
