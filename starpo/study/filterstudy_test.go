package study

import (
	"testing"

	"github.com/ragen-go/ragen/starpo/advantage"
)

// configs/study/filter.yaml: no filter, StarPO-S and RAGEN-2's top_p, on
// SimpleSokoban and FrozenLake; only the rollout filter differs.
func TestFilterStudy(t *testing.T) {
	s, err := LoadSpec("../../configs/study/filter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 3*2*2 {
		t.Fatalf("%d cells, want 3 arms × 2 environments × 2 seeds", len(cells))
	}
	want := map[string]advantage.Filter{
		"no-filter": advantage.StarPOS(1, advantage.FilterStd),
		"starpo-s":  advantage.StarPOS(0.25, advantage.FilterStd),
		"top-p": {Strategy: advantage.StrategyTopP, Value: 0.9, Order: advantage.Largest, TopPMode: advantage.TopPLinear,
			SelectionEps: 0.01, Metric: advantage.MetricRewardVariance},
	}
	for _, c := range cells {
		cfg, err := s.RunConfig(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Filter(); got != want[c.Arm.Name] || cfg.Algorithm.ClipHigh != 0.28 ||
			cfg.Algorithm.AdvEstimator != advantage.EstimatorGAE || cfg.RolloutFilter.LossScaling != advantage.ScaleNone {
			t.Fatalf("%v: filter %+v, want %+v; algorithm %+v", c, got, want[c.Arm.Name], cfg.Algorithm)
		}
		if c.Arm.Name == "top-p" && cfg.RolloutFilter.EmptyStopSteps != 0 {
			t.Fatalf("%v: empty_stop_steps %d, want 0 so that every cell runs its steps", c,
				cfg.RolloutFilter.EmptyStopSteps)
		}
	}
	if _, err := s.WarmStartConfig(nil); err != nil {
		t.Fatal(err)
	}
}
