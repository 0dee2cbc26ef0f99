package starpo

import (
	"fmt"
	"time"

	"github.com/ragen-go/ragen/dist"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
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

	emptySteps int // steps in a row whose rollout filter kept no group (filter.go)
}

// Batch is one step's kept training rows on their way through the update:
// Prepare lays them out with their token rewards, Advantages adds what the
// updates train on.
type Batch struct {
	*batch.Batch
	Rewards     [][]float64 // [Rows][Length−1]: the token rewards (the in-reward KL penalty subtracted)
	RefLogProbs [][]float64 // [Rows][Length−1]: the reference policy's, when a KL term needs them; else nil
	Advantages  [][]float64 // [Rows][Length−1]
	Returns     [][]float64 // [Rows][Length−1]
	OldValues   [][]float64 // [Rows][Length−1]: the critic's values before the update; nil without a critic
	tokens      float64     // real tokens × epochs × reuse rounds over every rank, for the perf/ rates
	keptRatio   float64     // the share of groups the rollout filter kept, for rollout_filter.loss_scaling
}

// Step runs one training step, StarPO's pipeline: play the episodes, keep
// the groups whose rewards disagree most (StarPO-S), compute advantages
// (GAE on the critic's values, or GRPO), then the critic's and the actor's
// PPO epochs over mini-batches of the kept rows. It returns RAGEN-named
// metrics, plus perf/ throughput and memory and the reward terms.
//
// A step is one rollout: with rollout.reuse k (RAGEN's Online-k) its batch
// trains k update rounds, each the whole update above, on the advantages
// and old log-probs computed once after the rollout, so the optimisers
// take k times the steps and the learning-rate schedule, which counts
// training steps, gives every round the step's rate. The critic takes its
// k rounds before the actor takes its k: neither update reads the other
// model, so this is the same as alternating them.
func (t *Trainer) Step(step int) (metrics map[string]float64, err error) {
	defer torchrt.Catch(&err, fmt.Sprintf("training step %d", step))
	if err := t.checkAutocast(); err != nil {
		return nil, err
	}
	if err := t.checkFilterStop(step); err != nil {
		return nil, err
	}
	rec := NewRecorder(step)
	all, local, err := t.Rollout(step, rec)
	if err != nil {
		return nil, err
	}
	b, err := t.Prepare(all, local, rec)
	if err != nil {
		return nil, err
	}
	if t.keptNothing() { // RAGEN's empty_after_filter: the step trains nothing
		return rec.Finish(), nil
	}
	if err := t.Advantages(b, rec); err != nil {
		return nil, err
	}
	if err := t.UpdateCritic(step, b, rec); err != nil {
		return nil, err
	}
	if err := t.UpdateActor(step, b, rec); err != nil {
		return nil, err
	}
	return rec.Finish(), nil
}

// Rollout plays the step's episodes with the actor at the training
// temperature, from the step's seeds. It returns every rank's trajectories
// (all, in env-id order) and this rank's (local), and records train/
// rollout metrics and the generation's time and token rate; OnRollout sees
// all of them.
func (t *Trainer) Rollout(step int, rec *Recorder) (all, local []rollout.Trajectory, err error) {
	defer torchrt.Catch(&err, rec.during())
	t0 := time.Now()
	rc := t.Envs.Config()
	if err := t.Envs.Reset(rc.TrainSeed(step)); err != nil {
		return nil, nil, err
	}
	gen := genOptions(t.Cfg, t.Cfg.Rollout.Temperature)
	gen.Seed += int64(step) * 1_000_003
	generate, release := NewGenerator(t.Actor, t.Tok, gen)
	local, _, err = t.Envs.Run(generate)
	release()
	if err != nil {
		return nil, nil, err
	}
	genS := rec.Time("gen", t0)
	if all, err = t.gatherTrajectories(local); err != nil {
		return nil, nil, err
	}
	rec.Add("train/", rollout.ComputeMetrics(all, rc.GroupSize))
	if t.measuresCollapse(step) {
		met, err := t.measureCollapse(all, uint64(step))
		if err != nil {
			return nil, nil, err
		}
		rec.Add("", met)
	}
	genTokens := 0
	for _, tr := range all {
		genTokens += tr.ResponseTokens
	}
	rec.Metrics["perf/gen_tokens_per_s"] = float64(genTokens) / genS
	if t.OnRollout != nil {
		if err := t.OnRollout(step, all); err != nil {
			return nil, nil, err
		}
	}
	return all, local, nil
}
