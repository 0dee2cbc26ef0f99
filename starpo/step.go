package starpo

import (
	"fmt"
	"time"

	"github.com/ragen-go/ragen/dist"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// Trainer runs PPO steps of StarPO: with the critic (GAE), or critic-free
// with GRPO (Critic and CriticOpt nil). Ref, when set, is the frozen
// reference policy the KL terms are measured against.
type Trainer struct {
	Cfg       config.Config // the run's settings: Algorithm, Rollout's sampling, Actor and Critic's gradient clips
	Actor     *model.CausalLM
	Critic    *model.ValueModel
	Ref       *model.CausalLM
	Tok       *tokenizer.Tokenizer
	Envs      *rollout.Manager
	ActorOpt  *optim.AdamW
	CriticOpt *optim.AdamW
	ActorLR   optim.Schedule // learning rate per training step; zero value = keep the optimiser's
	CriticLR  optim.Schedule

	// OnRollout, when set, sees each step's trajectories (all of them, of
	// every rank, before the filter) before the update, e.g. to write them
	// to disk.
	OnRollout func(step int, trajs []rollout.Trajectory) error

	// Dist is the data-parallel job this trainer is a rank of (see dp.go);
	// nil trains alone. Envs then holds this rank's shard.
	Dist *dist.Comm
}

// Step runs one training step: rollout, score normalisation, StarPO-S
// filter, optional reference log-probs, advantages (GAE with the critic's
// values and whitening, or GRPO), then the critic's and the actor's PPO
// epochs over mini-batches of the kept trajectories. It returns RAGEN-named
// metrics, plus perf/ throughput and memory and the reward terms.
func (t *Trainer) Step(step int) (metrics map[string]float64, err error) {
	defer torchrt.Catch(&err, fmt.Sprintf("training step %d", step))
	if err := t.checkAutocast(); err != nil {
		return nil, err
	}
	met := map[string]float64{}
	t0 := time.Now()
	rc := t.Envs.Config()
	if err := t.Envs.Reset(rc.TrainSeed(step)); err != nil {
		return nil, err
	}
	gen := genOptions(t.Cfg, t.Cfg.Rollout.Temperature)
	gen.Seed += int64(step) * 1_000_003
	generate, release := NewGenerator(t.Actor, t.Tok, gen)
	local, _, err := t.Envs.Run(generate)
	release()
	if err != nil {
		return nil, err
	}
	genS := time.Since(t0).Seconds()
	trajs, err := t.gatherTrajectories(local)
	if err != nil {
		return nil, err
	}
	for k, v := range rollout.ComputeMetrics(trajs, rc.GroupSize) {
		met["train/"+k] = v
	}
	met["timing_s/gen"] = genS
	genTokens := 0
	for _, tr := range trajs {
		genTokens += tr.ResponseTokens
	}
	met["perf/gen_tokens_per_s"] = float64(genTokens) / genS
	if t.OnRollout != nil {
		if err := t.OnRollout(step, trajs); err != nil {
			return nil, err
		}
	}

	rewards, b, err := t.selectKept(trajs, local, met)
	if err != nil {
		return nil, err
	}

	t1 := time.Now()
	var refLogp [][]float64
	if t.Ref != nil && (t.Cfg.Algorithm.UseKLLoss || t.Cfg.Algorithm.UseKLInReward) {
		refLogp = t.refLogProbs(b)
		met["timing_s/ref"] = time.Since(t1).Seconds()
		if t.Cfg.Algorithm.UseKLInReward {
			if err := t.klInReward(b, refLogp, rewards, met); err != nil {
				return nil, err
			}
		}
	}

	t2 := time.Now()
	adv, returns, oldV, err := t.advantages(rewards, b)
	if err != nil {
		return nil, err
	}
	if oldV != nil {
		if met["critic/vf_explained_var"], err = explainedVariance(returns, oldV, b.resp, t.sum("explained variance")); err != nil {
			return nil, err
		}
		if met["critic/values/mean"], err = maskedMean(oldV, b.resp, t.sum("value mean")); err != nil {
			return nil, err
		}
	}
	if met["critic/advantages/mean"], err = maskedMean(adv, b.resp, t.sum("advantage mean")); err != nil {
		return nil, err
	}
	if met["critic/returns/mean"], err = maskedMean(returns, b.resp, t.sum("return mean")); err != nil {
		return nil, err
	}
	met["timing_s/adv"] = time.Since(t2).Seconds()

	// Throughput of the whole job: every rank's tokens over this rank's time.
	tokens := float64(b.tokens() * max(1, t.Cfg.Algorithm.PPOEpochs))
	if err := t.Dist.Sum("token count", &tokens); err != nil {
		return nil, err
	}
	var updS float64
	if t.Cfg.Algorithm.AdvEstimator == advantage.EstimatorGAE {
		t3 := time.Now()
		if err := t.updateCritic(step, b, oldV, returns, met); err != nil {
			return nil, err
		}
		s := time.Since(t3).Seconds()
		met["timing_s/update_critic"], met["perf/update_critic_tokens_per_s"] = s, tokens/s
		updS += s
	}
	t4 := time.Now()
	if err := t.updateActor(step, b, adv, refLogp, met); err != nil {
		return nil, err
	}
	s := time.Since(t4).Seconds()
	met["timing_s/update_actor"], met["perf/update_actor_tokens_per_s"] = s, tokens/s
	updS += s
	met["perf/train_tokens_per_s"] = tokens / updS
	met["timing_s/step"] = time.Since(t0).Seconds()
	mem := torchrt.ReadMemory()
	met["perf/memory_mb"], met["perf/max_memory_mb"] = float64(mem.Resident)/(1<<20), float64(mem.Peak)/(1<<20)
	return met, nil
}

// advantages are the kept trajectories' advantages and returns in response
// coordinates: GRPO's, or GAE's on the critic's values (oldV, nil for GRPO)
// with the advantages whitened over every rank's batch.
func (t *Trainer) advantages(rewards [][]float64, b *batch) (adv, returns, oldV [][]float64, err error) {
	switch t.Cfg.Algorithm.AdvEstimator {
	case advantage.EstimatorGRPO:
		adv, returns = advantage.GRPOOutcome(rewards, b.resp)
		return adv, returns, nil, nil
	case advantage.EstimatorGAE:
		if t.Critic == nil {
			return nil, nil, nil, fmt.Errorf("advantage estimator gae needs the critic")
		}
		oldV = t.values(b)
		adv, returns = advantage.GAE(rewards, oldV, b.resp, t.Cfg.Algorithm.Gamma, t.Cfg.Algorithm.Lambda)
		adv, err = advantage.WhitenMaskedAcross(adv, b.resp, t.sum("advantage whitening"))
		return adv, returns, oldV, err
	}
	return nil, nil, nil, fmt.Errorf("advantage estimator %q is not gae or grpo", t.Cfg.Algorithm.AdvEstimator)
}

// selectKept normalises the scores, applies the StarPO-S filter and places
// the rewards of the kept trajectories in response coordinates. all is
// every rank's trajectories in env-id order, local this rank's: the
// normalisation and the filter see all groups, and the batch holds this
// rank's kept ones.
func (t *Trainer) selectKept(all, local []rollout.Trajectory, met map[string]float64) ([][]float64, *batch, error) {
	rc := t.Envs.Config()
	scores, groups := make([]float64, len(all)), make([]int, len(all))
	for i, tr := range all {
		scores[i], groups[i] = tr.Score, tr.GroupID
		if t.Cfg.Algorithm.UseTurnScores {
			scores[i] = sum(tr.TurnRewards)
		}
	}
	var err error
	// RAGEN normalises by initial-state group before the filter sees the
	// scores (spec §3.8 step 6), and not at all with turn scores.
	if !t.Cfg.Algorithm.UseTurnScores {
		if scores, err = advantage.NormalizeScores(scores, groups, t.Cfg.Algorithm.RewardNorm); err != nil {
			return nil, nil, err
		}
	}
	var tags []string // nil: RAGEN's one ranking of the whole batch
	if t.Cfg.Algorithm.FilterPerTag && rc.GroupSize > 0 {
		tags = make([]string, len(all)/rc.GroupSize)
		for g := range tags {
			tags[g] = all[g*rc.GroupSize].Tag
		}
	}
	keep, fs, err := advantage.FilterGroupsByTag(scores, rc.GroupSize, t.Cfg.Algorithm.FilterRatio, t.Cfg.Algorithm.FilterType, tags)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range fs.Metrics() {
		met[k] = v
	}
	score := map[int]float64{} // env id → normalised score, of kept trajectories
	var keptScores []float64
	for _, r := range advantage.Rows(keep, rc.GroupSize) {
		score[all[r].EnvID] = scores[r]
		keptScores = append(keptScores, scores[r])
	}
	var kept []rollout.Trajectory
	for _, tr := range local {
		if _, ok := score[tr.EnvID]; ok {
			kept = append(kept, tr)
		}
	}
	rows, owner, turn := trainingRows(kept)
	b := newBatch(rows)
	rewards := make([][]float64, b.B)
	for i := range rows {
		tr := kept[owner[i]]
		switch {
		case !t.Cfg.Algorithm.UseTurnScores:
			// A turn in its own window carries the episode's score too: with
			// γ = λ = 1 its advantages are then the same R − V as in the
			// whole episode.
			rewards[i] = advantage.PlaceScore(b.resp[i], score[tr.EnvID])
		case len(tr.PerTurn) > 0 && turn[i] >= len(tr.TurnRewards):
			err = fmt.Errorf("trajectory %d: turn %d has no reward (%d turn rewards)", tr.EnvID, turn[i]+1, len(tr.TurnRewards))
		case len(tr.PerTurn) > 0:
			// One turn of a windowed episode: the return from this turn on,
			// which is what the whole episode's GAE gives its tokens at γ = 1.
			rewards[i], err = advantage.PlaceTurnRewards(b.resp[i], b.turnEnds[i], []float64{sum(tr.TurnRewards[turn[i]:])})
		default:
			rewards[i], err = advantage.PlaceTurnRewards(b.resp[i], b.turnEnds[i], tr.TurnRewards)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	met["train/rows"] = float64(b.B)
	met["critic/score/mean"] = advantage.Mean(keptScores)
	met["train/kept_trajectories"] = float64(len(keptScores))
	return rewards, b, nil
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
