package starpo

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// filterTrainer is a trainer without models, enough for selectKept and
// Prepare without a reference: groups of size trajectories.
func filterTrainer(t *testing.T, groups, size int) *Trainer {
	t.Helper()
	tok, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := rollout.DefaultConfig()
	rc.EnvGroups, rc.GroupSize, rc.NGroups = groups, size, []int{groups}
	mgr, err := rollout.NewManager(rc, tok)
	if err != nil {
		t.Fatal(err)
	}
	return &Trainer{Cfg: config.Default(), Tok: tok, Envs: mgr}
}

// fakeTrajectory is one single-turn episode: a prompt token, then one
// sampled token per log-prob, trained.
func fakeTrajectory(id, size int, score float64, logps ...float64) rollout.Trajectory {
	s := rollout.Sequence{IDs: []int{1}, LossMask: []float64{0}, OldLogProbs: []float64{0}}
	for _, lp := range logps {
		s.IDs, s.LossMask, s.OldLogProbs = append(s.IDs, 2), append(s.LossMask, 1), append(s.OldLogProbs, lp)
	}
	s.TurnEnds = []int{len(s.IDs) - 1}
	return rollout.Trajectory{EnvID: id, GroupID: id / size, Tag: "SimpleSokoban", Sequence: s, Score: score,
		TurnRewards: []float64{score}}
}

// Four groups of two: score stds 0, √½, 0, √2 (as advantage's filter
// tests); group 0 samples the least likely tokens (the most entropy),
// group 2 the longest answers.
func filterBatch() []rollout.Trajectory {
	scores := []float64{0, 0, 0, 1, 1, 1, 0, 2}
	var all []rollout.Trajectory
	for i, s := range scores {
		lp := []float64{-0.5, -0.5}
		switch i / 2 {
		case 0:
			lp = []float64{-2, -3}
		case 2:
			lp = []float64{-0.5, -0.5, -0.5, -0.5, -0.5}
		}
		all = append(all, fakeTrajectory(i, 2, s, lp...))
	}
	return all
}

// selectKept keeps what the configured filter chooses: StarPO-S by
// default (the same groups as FilterGroupsByTag), RAGEN-2's strategies and
// metrics through rollout_filter; the kept share reaches the batch.
func TestPrepareRolloutFilter(t *testing.T) {
	all := filterBatch()
	for _, tc := range []struct {
		name  string
		set   func(*config.Config)
		rows  int
		ratio float64
		mean  float64 // the kept scores' mean, which tells the groups apart
		check string  // a metric that must be present
	}{
		// Group 3: (0 + 2)/2.
		{"StarPO-S", func(c *config.Config) {}, 2, 0.25, 1, "rollout/chosen_in_group_std"},
		// Groups 1 and 3: (0 + 1 + 0 + 2)/4.
		{"top_p", func(c *config.Config) {
			c.RolloutFilter.Strategy, c.RolloutFilter.Value, c.RolloutFilter.IncludeZero = advantage.StrategyTopP, 0.9, false
		}, 4, 0.5, 0.75, "rollout/filter_zero_count"},
		// Group 0: −log p of 2 and 3 (mean 2.5) against 0.5 elsewhere.
		{"entropy", func(c *config.Config) {
			c.RolloutFilter.Strategy, c.RolloutFilter.Value = advantage.StrategyTopK, 0.25
			c.RolloutFilter.Metric = advantage.MetricEntropy
		}, 2, 0.25, 0, "rollout/chosen_in_group_entropy_mean"},
		// Group 2: 5 trained tokens against 2.
		{"length", func(c *config.Config) {
			c.RolloutFilter.Strategy, c.RolloutFilter.Value = advantage.StrategyTopKAbs, 1
			c.RolloutFilter.Metric = advantage.MetricLength
		}, 2, 0.25, 1, "rollout/in_group_length_mean"},
	} {
		tr := filterTrainer(t, 4, 2)
		tc.set(&tr.Cfg)
		if err := tr.Cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rec := NewRecorder(0)
		b, err := tr.Prepare(all, all, rec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if b.Rows != tc.rows || b.keptRatio != tc.ratio || rec.Metrics["rollout/filter_kept_ratio"] != tc.ratio ||
			rec.Metrics["critic/score/mean"] != tc.mean || rec.Metrics["rollout/empty_after_filter"] != 0 ||
			tr.keptNothing() {
			t.Errorf("%s: %d rows, kept ratio %v, metrics %v", tc.name, b.Rows, b.keptRatio, rec.Metrics)
		}
		if _, ok := rec.Metrics[tc.check]; !ok {
			t.Errorf("%s: no %s in %v", tc.name, tc.check, rec.Metrics)
		}
	}
	// StarPO-S through the trainer is FilterGroupsByTag's choice.
	tr := filterTrainer(t, 4, 2)
	tr.Cfg.Algorithm.FilterRatio = 0.5
	rec := NewRecorder(0)
	b, err := tr.selectKept(all, all, rec)
	if err != nil {
		t.Fatal(err)
	}
	scores := make([]float64, len(all))
	for i, tj := range all {
		scores[i] = tj.Score
	}
	keep, fs, err := advantage.FilterGroupsByTag(scores, 2, 0.5, advantage.FilterStd, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range fs.Metrics() {
		if rec.Metrics[k] != v {
			t.Errorf("%s = %v, FilterGroupsByTag's %v", k, rec.Metrics[k], v)
		}
	}
	if b.Rows != 2*len(keep) || !slices.Equal(keep, []int{1, 3}) {
		t.Errorf("StarPO-S at 0.5 kept %d rows; FilterGroupsByTag keeps groups %v", b.Rows, keep)
	}
}

// The per-trajectory entropy and length the filter ranks: −log p averaged
// over a row's trained tokens and then over a windowed episode's turns;
// trained tokens summed over the rows.
func TestFilterTrajectoryValues(t *testing.T) {
	one := fakeTrajectory(0, 1, 0, -1, -2, -3)
	if got := sampledEntropy(one); got != 2 {
		t.Errorf("entropy of −log p 1, 2, 3: %v, want 2", got)
	}
	if got := trainedTokens(one); got != 3 {
		t.Errorf("trained tokens %v, want 3", got)
	}
	windowed := rollout.Trajectory{PerTurn: []rollout.Sequence{
		fakeTrajectory(0, 1, 0, -1, -3).Sequence, // turn mean 2
		fakeTrajectory(0, 1, 0, -4).Sequence,     // turn mean 4
	}}
	if got := sampledEntropy(windowed); got != 3 {
		t.Errorf("windowed entropy %v, want the turns' mean 3", got)
	}
	if got := trainedTokens(windowed); got != 3 {
		t.Errorf("windowed trained tokens %v, want 3", got)
	}
}

// A step whose filter keeps no group trains nothing, and after
// rollout_filter.empty_stop_steps such steps in a row the next refuses to
// start, naming the key; a step that keeps something resets the count.
func TestFilterEmptyStepsStop(t *testing.T) {
	tr := filterTrainer(t, 4, 2)
	tr.Cfg.RolloutFilter.Strategy, tr.Cfg.RolloutFilter.Value = advantage.StrategyTopP, 0.9
	tr.Cfg.RolloutFilter.IncludeZero, tr.Cfg.RolloutFilter.EmptyStopSteps = false, 2
	flat := make([]rollout.Trajectory, 8) // every group's rewards agree: no candidate
	for i := range flat {
		flat[i] = fakeTrajectory(i, 2, 1, -1)
	}
	for step := range 2 {
		if err := tr.checkFilterStop(step); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		rec := NewRecorder(step)
		b, err := tr.Prepare(flat, flat, rec)
		if err != nil {
			t.Fatal(err)
		}
		if b.Rows != 0 || !tr.keptNothing() || rec.Metrics["rollout/empty_after_filter"] != 1 ||
			rec.Metrics["rollout/consecutive_empty_after_filter_steps"] != float64(step+1) ||
			!math.IsNaN(rec.Metrics["actor/grad_norm"]) {
			t.Fatalf("step %d: %d rows, metrics %v", step, b.Rows, rec.Metrics)
		}
	}
	err := tr.checkFilterStop(2)
	if err == nil || !strings.Contains(err.Error(), "kept no group in the last 2 steps (rollout_filter.empty_stop_steps 2)") {
		t.Fatalf("after two empty steps: %v", err)
	}
	tr.Cfg.RolloutFilter.EmptyStopSteps = 0
	if err := tr.checkFilterStop(2); err != nil {
		t.Fatalf("empty_stop_steps 0 stops: %v", err)
	}
	rec := NewRecorder(2)
	if _, err := tr.Prepare(filterBatch(), filterBatch(), rec); err != nil || tr.keptNothing() ||
		rec.Metrics["rollout/consecutive_empty_after_filter_steps"] != 0 {
		t.Fatalf("a step that keeps groups: %v, metrics %v", err, rec.Metrics)
	}
}

// A whole training step whose filter keeps nothing leaves the weights as
// they were: groups of one have no reward spread, and linear top_p below 1
// then keeps no group.
func TestFilterEmptyStepTrainsNothing(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 1, 1)
	tr.Cfg.RolloutFilter.Strategy, tr.Cfg.RolloutFilter.Value = advantage.StrategyTopP, 0.9
	tr.Cfg.RolloutFilter.EmptyStopSteps = 1
	before := model.Float32s(tr.Actor.Norm.Weight)
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	if met["rollout/empty_after_filter"] != 1 || !slices.Equal(before, model.Float32s(tr.Actor.Norm.Weight)) {
		t.Fatalf("an empty step: metrics %v, or the actor changed", met)
	}
	if _, err := tr.Step(1); err == nil || !strings.Contains(err.Error(), "rollout_filter.empty_stop_steps 1") {
		t.Fatalf("the step after empty_stop_steps empty ones: %v", err)
	}
}

// Bi-level GAE through the trainer, on real multi-turn rows: at γ = λ = 1
// and high_level_gamma 1 it is GAE on the trained positions (both R − V);
// high_level_gamma 0.5 discounts earlier turns. loss_scaling linear
// multiplies the advantages by the kept share.
func TestAdvantagesBiLevelGAEAndLossScaling(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 2, 3)
	tr.Cfg.Algorithm.FilterRatio = 1
	trajs := playOnce(t, tr, 0)
	b, err := tr.Prepare(trajs, trajs, NewRecorder(0))
	if err != nil {
		t.Fatal(err)
	}
	advantages := func(bi bool, high float64, scaling advantage.LossScaling) [][]float64 {
		tr.Cfg.Algorithm.BiLevelGAE, tr.Cfg.Algorithm.HighLevelGamma = bi, high
		tr.Cfg.RolloutFilter.LossScaling = scaling
		if err := tr.Advantages(b, NewRecorder(0)); err != nil {
			t.Fatal(err)
		}
		return b.Advantages
	}
	if b.keptRatio != 1 {
		t.Fatalf("kept ratio %v with filter_ratio 1", b.keptRatio)
	}
	plain := advantages(false, 0.95, advantage.ScaleNone)
	same := advantages(true, 1, advantage.ScaleNone)
	discounted := advantages(true, 0.5, advantage.ScaleNone)
	multiTurn := false
	for i := range plain {
		for j, m := range b.Resp[i] {
			if m != 0 && math.Abs(plain[i][j]-same[i][j]) > 1e-9 {
				t.Fatalf("row %d position %d: GAE %v, bi-level at γ_H 1 %v", i, j, plain[i][j], same[i][j])
			}
		}
		if ends := b.TurnEnds[i]; len(ends) > 1 {
			multiTurn = true
			if e := ends[0]; math.Abs(discounted[i][e]-same[i][e]) < 1e-9 {
				t.Errorf("row %d: high_level_gamma 0.5 left the first turn's advantage at %v", i, same[i][e])
			}
		}
	}
	if !multiTurn {
		t.Fatal("no row with two turns: the turn level went untested")
	}
	b.keptRatio = 0.25
	scaled := advantages(false, 0.95, advantage.ScaleLinear)
	for i := range plain {
		for j := range plain[i] {
			if scaled[i][j] != 0.25*plain[i][j] {
				t.Fatalf("linear loss scaling at 0.25: %v, from %v", scaled[i][j], plain[i][j])
			}
		}
	}
}
