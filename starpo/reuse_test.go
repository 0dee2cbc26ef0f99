package starpo

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// reuseStep runs step 0 of a fresh tiny trainer on the checkpoint in dir
// with rollout.reuse, ppo_epochs and the actor's learning rate set (one
// mini-batch of 3 kept rows, micro-batches of 2), and returns the trainer, the step's metrics and the
// number of rollouts the step played.
func reuseStep(t *testing.T, dir string, reuse, epochs int, lr float64) (*Trainer, map[string]float64, int) {
	t.Helper()
	tr := newTinyTrainer(t, dir, 2, 3, 1)
	tr.Cfg.Rollout.Reuse, tr.Cfg.Algorithm.PPOEpochs = reuse, epochs
	tr.ActorOpt.SetLR(lr)
	rollouts := 0
	tr.OnRollout = func(int, []rollout.Trajectory) error { rollouts++; return nil }
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	return tr, met, rollouts
}

// Online-k: one rollout trains k update rounds, k times the optimiser
// steps of one round. Round 1 is on-policy (one mini-batch, one epoch: the
// policy that scores it sampled it, so |log-ratio| is the sampler's
// rounding and nothing is clipped); rounds 2 and 3 lag further and further
// behind, and at the actor's learning rate 1e-2 far enough to be clipped.
func TestReuseRounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	one, met1, n1 := reuseStep(t, dir, 1, 1, 1e-2)
	three, met3, n3 := reuseStep(t, dir, 3, 1, 1e-2)
	if n1 != 1 || n3 != 1 {
		t.Fatalf("rollouts per step: %d with reuse 1, %d with reuse 3; want 1", n1, n3)
	}
	if one.ActorOpt.Steps() != 1 || one.CriticOpt.Steps() != 1 {
		t.Fatalf("reuse 1: optimiser steps actor %d critic %d, want 1 each", one.ActorOpt.Steps(), one.CriticOpt.Steps())
	}
	if three.ActorOpt.Steps() != 3 || three.CriticOpt.Steps() != 3 {
		t.Fatalf("reuse 3: optimiser steps actor %d critic %d, want 3 each",
			three.ActorOpt.Steps(), three.CriticOpt.Steps())
	}
	for k := range met1 {
		if strings.HasPrefix(k, "actor/reuse_") {
			t.Errorf("reuse 1 reports the per-round metric %s", k)
		}
	}
	if v := met1["actor/abs_log_ratio"]; !(v >= 0 && v < 1e-4) {
		t.Errorf("reuse 1: actor/abs_log_ratio %v, want on-policy (< 1e-4)", v)
	}
	lag := make([]float64, 3)
	for r := range 3 {
		for _, name := range lagMetrics {
			k := roundMetric(r, name)
			if v, ok := met3[k]; !ok || math.IsNaN(v) || v < 0 || (name == "actor/pg_clipfrac" && v > 1) {
				t.Errorf("reuse 3: %s = %v (present %v)", k, v, ok)
			}
		}
		lag[r] = met3[roundMetric(r, "actor/abs_log_ratio")]
		t.Logf("round %d: abs_log_ratio %.3g pg_clipfrac %.3g", r+1, lag[r], met3[roundMetric(r, "actor/pg_clipfrac")])
	}
	if lag[0] >= 1e-4 || met3["actor/reuse_r1/pg_clipfrac"] != 0 {
		t.Errorf("round 1 is not on-policy: abs_log_ratio %v, pg_clipfrac %v", lag[0], met3["actor/reuse_r1/pg_clipfrac"])
	}
	if !(lag[1] > lag[0] && lag[2] > lag[1]) {
		t.Errorf("the lag does not grow over the rounds: abs_log_ratio %v", lag)
	}
	if met3["actor/reuse_r2/pg_clipfrac"] == 0 || met3["actor/reuse_r3/pg_clipfrac"] == 0 {
		t.Errorf("the clip held nothing back in rounds 2 and 3 at actor lr 1e-2: %v, %v",
			met3["actor/reuse_r2/pg_clipfrac"], met3["actor/reuse_r3/pg_clipfrac"])
	}
	// Round 1 of reuse 3 is reuse 1's whole update.
	if d := math.Abs(lag[0] - met1["actor/abs_log_ratio"]); d > 1e-12 {
		t.Errorf("round 1's abs_log_ratio %v, reuse 1's %v", lag[0], met1["actor/abs_log_ratio"])
	}
	if mean := (lag[0] + lag[1] + lag[2]) / 3; math.Abs(mean-met3["actor/abs_log_ratio"]) > 1e-9 {
		t.Errorf("actor/abs_log_ratio %v is not the rounds' mean %v", met3["actor/abs_log_ratio"], mean)
	}
}

// The update rounds reuse the rollout's advantages and old log-probs, and
// the mini-batches are not reshuffled, so k rounds of e epochs take the
// optimiser steps of k·e epochs in the same order: the same weights, bit
// for bit, and the same metrics. (The critic's rounds all run before the
// actor's; neither reads the other model.)
func TestReuseMatchesEpochs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	a, ma, _ := reuseStep(t, dir, 3, 1, 1e-3)
	b, mb, _ := reuseStep(t, dir, 1, 3, 1e-3)
	for _, pair := range [][2][]model.Param{{a.Actor.Params(), b.Actor.Params()}, {a.Critic.Params(), b.Critic.Params()}} {
		for i := range pair[0] {
			x, y := model.Float32s(pair[0][i].T), model.Float32s(pair[1][i].T)
			for j := range x {
				if x[j] != y[j] {
					t.Fatalf("%s[%d]: %v with reuse 3, %v with ppo_epochs 3", pair[0][i].Name, j, x[j], y[j])
				}
			}
		}
	}
	for k, v := range mb {
		if strings.HasPrefix(k, "timing_s/") || strings.HasPrefix(k, "perf/") {
			continue
		}
		if w, ok := ma[k]; !ok || math.Abs(w-v) > 1e-9*max(1, math.Abs(v)) {
			t.Errorf("%s: %v with reuse 3, %v with ppo_epochs 3", k, w, v)
		}
	}
}
