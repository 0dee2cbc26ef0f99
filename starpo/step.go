package starpo

import (
	"fmt"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/loss"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// StepConfig holds the algorithm settings of one StarPO(-S) PPO step.
type StepConfig struct {
	Gen          GenOptions   // rollout sampling
	AdvEstimator string       // "gae" (PPO with the critic) or "grpo" (no critic)
	RewardNorm   string       // score normalisation per initial state: identity, mean, mean_std, asym_clip
	FilterRatio  float64      // StarPO-S: keep this share of groups (1 = all)
	FilterMode   string       // "std" (highest in-group std) or "std_rev"
	Gamma        float64      // GAE discount
	Lambda       float64      // GAE λ
	ClipLow      float64      // ε_low
	ClipHigh     float64      // ε_high (clip-higher)
	ClipC        float64      // dual-clip bound
	ValueClip    float64      // critic value clipping
	EntropyCoef  float64      // entropy bonus
	AggMode      loss.AggMode // loss aggregation
	MicroBatch   int          // trajectories per forward/backward
	GradClip     float64      // global gradient-norm clip
	ChunkRows    int          // lm-head chunk for training scores
}

// DefaultStepConfig is StarPO-S with RAGEN's defaults (spec §1.3, §9.11).
func DefaultStepConfig() StepConfig {
	return StepConfig{
		Gen:          GenOptions{Sampling: model.Sampling{Temperature: 1, TopP: 1}, MaxTokens: 400, Stop: []string{"</answer>"}},
		AdvEstimator: "gae", RewardNorm: advantage.NormIdentity,
		FilterRatio: 0.25, FilterMode: advantage.FilterStd, Gamma: 1, Lambda: 1,
		ClipLow: 0.2, ClipHigh: 0.28, ClipC: 3, ValueClip: 0.5, EntropyCoef: 0.001,
		AggMode: loss.TokenMean, MicroBatch: 1, GradClip: 1,
	}
}

// Trainer runs PPO steps of StarPO: with the critic (GAE), or critic-free
// with GRPO (Critic and CriticOpt nil).
type Trainer struct {
	Cfg       StepConfig
	Actor     *model.CausalLM
	Critic    *model.ValueModel
	Tok       *tokenizer.Tokenizer
	Envs      *rollout.Manager
	ActorOpt  *optim.AdamW
	CriticOpt *optim.AdamW
}

// Step runs one training step: rollout, StarPO-S filter, old values, GAE
// with whitening, a critic update and an actor update (one mini-batch of
// all kept trajectories, micro-batched). It returns RAGEN-named metrics.
func (t *Trainer) Step(step int) (metrics map[string]float64, err error) {
	defer torchrt.Catch(&err, fmt.Sprintf("training step %d", step))
	met := map[string]float64{}
	t0 := time.Now()
	rc := t.Envs.Config()
	if err := t.Envs.Reset(rc.TrainSeed(step)); err != nil {
		return nil, err
	}
	gen := t.Cfg.Gen
	gen.Seed += int64(step) * 1_000_003
	trajs, rm, err := t.Envs.Run(NewGenerator(t.Actor, t.Tok, gen))
	if err != nil {
		return nil, err
	}
	for k, v := range rm {
		met["train/"+k] = v
	}
	met["timing_s/gen"] = time.Since(t0).Seconds()

	scores, groups := make([]float64, len(trajs)), make([]int, len(trajs))
	for i, tr := range trajs {
		scores[i], groups[i] = tr.Score, tr.GroupID
	}
	// RAGEN normalises by initial-state group before the filter sees the
	// scores (spec §3.8 step 6).
	if scores, err = advantage.NormalizeScores(scores, groups, t.Cfg.RewardNorm); err != nil {
		return nil, err
	}
	keep, fs, err := advantage.FilterGroups(scores, rc.GroupSize, t.Cfg.FilterRatio, t.Cfg.FilterMode)
	if err != nil {
		return nil, err
	}
	for k, v := range fs.Metrics() {
		met[k] = v
	}
	var kept []rollout.Trajectory
	var keptScores []float64
	for _, r := range advantage.Rows(keep, rc.GroupSize) {
		kept = append(kept, trajs[r])
		keptScores = append(keptScores, scores[r])
	}
	b := newBatch(kept)
	rewards := make([][]float64, b.B)
	for i := range kept {
		rewards[i] = advantage.PlaceScore(b.resp[i], keptScores[i])
	}
	met["critic/score/mean"] = advantage.Mean(keptScores)

	t1 := time.Now()
	var adv, returns, oldV [][]float64
	switch t.Cfg.AdvEstimator {
	case "grpo":
		adv, _ = advantage.GRPOOutcome(rewards, b.resp)
	case "gae":
		oldV = t.values(b)
		adv, returns = advantage.GAE(rewards, oldV, b.resp, t.Cfg.Gamma, t.Cfg.Lambda)
		if adv, err = advantage.WhitenMasked(adv, b.resp); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("advantage estimator %q is not gae or grpo", t.Cfg.AdvEstimator)
	}
	met["timing_s/adv"] = time.Since(t1).Seconds()

	if t.Cfg.AdvEstimator == "gae" {
		t2 := time.Now()
		if err := t.updateCritic(b, oldV, returns, met); err != nil {
			return nil, err
		}
		met["timing_s/update_critic"] = time.Since(t2).Seconds()
	}
	t3 := time.Now()
	if err := t.updateActor(b, adv, met); err != nil {
		return nil, err
	}
	met["timing_s/update_actor"] = time.Since(t3).Seconds()
	met["timing_s/step"] = time.Since(t0).Seconds()
	return met, nil
}

// microBatches calls fn for each [lo, hi) of the batch; n is their count.
func (t *Trainer) microBatches(b *batch, fn func(lo, hi, n int) error) error {
	mb := max(1, t.Cfg.MicroBatch)
	n := (b.B + mb - 1) / mb
	for lo := 0; lo < b.B; lo += mb {
		if err := fn(lo, min(b.B, lo+mb), n); err != nil {
			return err
		}
	}
	return nil
}

// inputs builds the model inputs of rows [lo, hi).
func inputs(b *batch, lo, hi int, dev gotch.Device, dt gotch.DType, s *torchrt.Scope) model.Inputs {
	ids, attn := b.rows(lo, hi, dev)
	s.Keep(ids)
	s.Keep(attn)
	pos := s.Keep(torchrt.Must(model.PositionsFromMask(attn)))
	bias := s.Keep(torchrt.Must(model.AttentionBias(attn, int64(b.L), dt)))
	return model.Inputs{IDs: ids, Positions: pos, Bias: bias}
}

// values are the critic's values in response coordinates, [B][L−1]:
// position j values the state after token j (verl's values[:, :-1]).
func (t *Trainer) values(b *batch) [][]float64 {
	out := make([][]float64, 0, b.B)
	torchrt.Check(torchrt.NoGrad(func() error {
		return t.microBatches(b, func(lo, hi, _ int) error {
			var s torchrt.Scope
			defer s.Drop()
			v := s.Keep(torchrt.Must(t.Critic.Values(inputs(b, lo, hi, t.Critic.Device, t.Critic.DType, &s))))
			v = s.Keep(torchrt.Must(v.Narrow(1, 0, int64(b.L-1), false)))
			out = append(out, toRows(v)...)
			return nil
		})
	}))
	return out
}

func (t *Trainer) updateCritic(b *batch, oldV, returns [][]float64, met map[string]float64) error {
	if err := t.CriticOpt.ZeroGrad(); err != nil {
		return err
	}
	var vf, clip float64
	err := t.microBatches(b, func(lo, hi, n int) error {
		var s torchrt.Scope
		defer s.Drop()
		dev := t.Critic.Device
		v := s.Keep(torchrt.Must(t.Critic.Values(inputs(b, lo, hi, dev, t.Critic.DType, &s))))
		v = s.Keep(torchrt.Must(v.Narrow(1, 0, int64(b.L-1), false)))
		l, vm, err := loss.ValueLoss(v, s.Keep(floatRows(oldV, lo, hi, dev)), s.Keep(floatRows(returns, lo, hi, dev)), s.Keep(floatRows(b.resp, lo, hi, dev)), t.Cfg.ValueClip, t.Cfg.AggMode)
		if err != nil {
			return err
		}
		s.Keep(l)
		vf += vm.VFLoss / float64(n)
		clip += vm.VFClipFrac / float64(n)
		return s.Keep(torchrt.Must(l.DivScalar(ts.FloatScalar(float64(n)), false))).Backward()
	})
	if err != nil {
		return err
	}
	norm, stepped, err := optim.StepIfFinite(t.CriticOpt, t.Cfg.GradClip)
	if err != nil {
		return err
	}
	met["critic/vf_loss"], met["critic/vf_clipfrac"], met["critic/grad_norm"] = vf, clip, norm
	met["critic/step_skipped"] = b2f(!stepped)
	return t.CriticOpt.ZeroGrad()
}

func (t *Trainer) updateActor(b *batch, adv [][]float64, met map[string]float64) error {
	if err := t.ActorOpt.ZeroGrad(); err != nil {
		return err
	}
	sums := map[string]float64{}
	err := t.microBatches(b, func(lo, hi, n int) error {
		var s torchrt.Scope
		defer s.Drop()
		dev := t.Actor.Device
		ids, attn := b.rows(lo, hi, dev)
		s.Keep(ids)
		s.Keep(attn)
		sc, err := t.Actor.ScoreForTraining(ids, attn, t.Cfg.ChunkRows)
		if err != nil {
			return err
		}
		defer sc.Drop()
		resp := s.Keep(floatRows(b.resp, lo, hi, dev))
		pg, pm, err := loss.PolicyLoss(sc.LogProbs, s.Keep(floatRows(b.oldLogp, lo, hi, dev)), s.Keep(floatRows(adv, lo, hi, dev)), resp, t.Cfg.ClipLow, t.Cfg.ClipHigh, t.Cfg.ClipC, t.Cfg.AggMode)
		if err != nil {
			return err
		}
		s.Keep(pg)
		ent, entV, err := loss.EntropyLoss(sc.Entropy, resp, t.Cfg.AggMode)
		if err != nil {
			return err
		}
		s.Keep(ent)
		for k, v := range pm.Metrics() {
			sums[k] += v / float64(n)
		}
		sums["actor/entropy_loss"] += entV / float64(n)
		// loss = (pg − c·H) / n, so the micro-batches of one mini-batch add up.
		total := s.Keep(torchrt.Must(pg.Sub(s.Keep(torchrt.Must(ent.MulScalar(ts.FloatScalar(t.Cfg.EntropyCoef), false))), false)))
		total = s.Keep(torchrt.Must(total.DivScalar(ts.FloatScalar(float64(n)), false)))
		if err := total.Backward(); err != nil {
			return err
		}
		return sc.Backward()
	})
	if err != nil {
		return err
	}
	norm, stepped, err := optim.StepIfFinite(t.ActorOpt, t.Cfg.GradClip)
	if err != nil {
		return err
	}
	for k, v := range sums {
		met[k] = v
	}
	met["actor/grad_norm"], met["actor/step_skipped"], met["actor/lr"] = norm, b2f(!stepped), t.ActorOpt.LR()
	return t.ActorOpt.ZeroGrad()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
