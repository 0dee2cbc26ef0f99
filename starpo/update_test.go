package starpo

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/loss"
	"github.com/ragen-go/ragen/starpo/rollout"
)

func allFinite(t *testing.T, what string, ps []model.Param) {
	t.Helper()
	for _, p := range ps {
		for _, v := range model.Float32s(p.T) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s %s has a non-finite weight", what, p.Name)
			}
		}
	}
}

// A step whose loss is not finite is skipped: the actor's weights stay
// exactly as they were, and finite, while the critic (whose loss is fine)
// still steps. The NaN comes in as the sampler's log-probabilities (as an
// fp16 overflow on a GPU gives them), set through the rollout hook.
func TestTrainerSkipsNonFiniteStep(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 2, 1)
	tr.OnRollout = func(_ int, trajs []rollout.Trajectory) error {
		for _, tj := range trajs {
			for j, m := range tj.LossMask {
				if m == 1 {
					tj.OldLogProbs[j] = math.NaN()
				}
			}
		}
		return nil
	}
	before := model.Float32s(tr.Actor.Norm.Weight)
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	if met["actor/step_skipped"] != 1 || met["critic/step_skipped"] != 0 {
		t.Fatalf("skipped steps: actor %v critic %v, want 1 and 0 (grad norms %v, %v)",
			met["actor/step_skipped"], met["critic/step_skipped"], met["actor/grad_norm"], met["critic/grad_norm"])
	}
	if tr.ActorOpt.Steps() != 0 || tr.CriticOpt.Steps() != 1 {
		t.Fatalf("optimiser steps taken: actor %d critic %d, want 0 and 1", tr.ActorOpt.Steps(), tr.CriticOpt.Steps())
	}
	for i, v := range model.Float32s(tr.Actor.Norm.Weight) {
		if v != before[i] {
			t.Fatalf("actor weight %d changed", i)
		}
	}
	allFinite(t, "actor", tr.Actor.Params())
	allFinite(t, "critic", tr.Critic.Params())
}

// Turn scores, both KL terms against a frozen reference, and two PPO epochs
// over mini-batches of two: the metrics are there and finite, the number
// of optimiser steps is epochs × mini-batches, and the reference is not
// trained.
func TestTrainerKLTurnScoresEpochs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	tr := newTinyTrainer(t, dir, 2, 2, 2)
	ref, err := model.LoadCausalLM(dir, model.Options{Device: tr.Actor.Device, DType: tr.Actor.DType})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ref.Drop)
	refBefore := model.Float32s(ref.Norm.Weight)
	tr.Ref = ref
	c := &tr.Cfg.Algorithm
	c.UseTurnScores, c.UseKLLoss, c.KLLossCoef, c.UseKLInReward, c.KLCoef = true, true, 0.1, true, 0.05
	c.KLLossType = loss.KLLowVar
	c.FilterRatio, c.PPOEpochs, c.PPOMiniBatch, c.MicroBatch = 1, 2, 2, 1
	for step := range 2 {
		met, err := tr.Step(step)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"actor/kl_loss", "actor/kl_coef", "actor/reward_kl_penalty",
			"critic/vf_explained_var", "perf/gen_tokens_per_s", "perf/train_tokens_per_s", "perf/max_memory_mb",
			"timing_s/ref"} {
			v, ok := met[k]
			if !ok || math.IsInf(v, 0) || (math.IsNaN(v) && k != "critic/vf_explained_var") {
				t.Errorf("step %d: metric %s = %v (present %v)", step, k, v, ok)
			}
		}
		if step == 1 && met["actor/kl_loss"] == 0 {
			t.Errorf("the policy moved but the KL to the reference is 0")
		}
	}
	// 4 trajectories, mini-batches of 2, 2 epochs: 4 optimiser steps per
	// training step.
	if tr.ActorOpt.Steps() != 8 || tr.CriticOpt.Steps() != 8 {
		t.Fatalf("optimiser steps: actor %d critic %d, want 8 each", tr.ActorOpt.Steps(), tr.CriticOpt.Steps())
	}
	for i, v := range model.Float32s(ref.Norm.Weight) {
		if v != refBefore[i] {
			t.Fatalf("the reference policy changed (weight %d)", i)
		}
	}
}
