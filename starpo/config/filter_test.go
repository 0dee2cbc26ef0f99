package config

import (
	"testing"

	"github.com/ragen-go/ragen/starpo/advantage"
)

// By default the run's filter is StarPO-S from algorithm.filter_ratio and
// filter_type; a strategy hands the choice to rollout_filter.
func TestRolloutFilterSetting(t *testing.T) {
	c, err := Load("", []string{"algorithm.filter_ratio=0.5", "algorithm.filter_type=std_rev"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Filter(), advantage.StarPOS(0.5, advantage.FilterStdRev); got != want {
		t.Errorf("default filter %+v, want StarPO-S %+v", got, want)
	}
	if c.RolloutFilter.EmptyStopSteps != 5 || c.RolloutFilter.LossScaling != advantage.ScaleNone ||
		c.Algorithm.BiLevelGAE || c.Algorithm.HighLevelGamma != 0.95 {
		t.Errorf("defaults: %+v, bi_level_gae %v high_level_gamma %v", c.RolloutFilter, c.Algorithm.BiLevelGAE,
			c.Algorithm.HighLevelGamma)
	}
	c, err = Load("", []string{"rollout_filter={strategy: top_p, value: 0.9, include_zero: false}",
		"rollout_filter.loss_scaling=sqrt", "algorithm.bi_level_gae=true"})
	if err != nil {
		t.Fatal(err)
	}
	want := advantage.Filter{Strategy: advantage.StrategyTopP, Value: 0.9, Order: advantage.Largest,
		TopPMode: advantage.TopPLinear, SelectionEps: 0.01, Metric: advantage.MetricRewardVariance}
	if got := c.Filter(); got != want || c.RolloutFilter.LossScaling != advantage.ScaleSqrt || !c.Algorithm.BiLevelGAE {
		t.Errorf("top_p filter %+v, want %+v; %+v", got, want, c.RolloutFilter)
	}
	if err := c.Filter().Check(); err != nil {
		t.Error(err)
	}
	for _, sets := range [][]string{
		{"rollout_filter.strategy=top_k_abs", "rollout_filter.value=3"},
		{"rollout_filter.strategy=min_p", "rollout_filter.value=0.5", "rollout_filter.type=smallest"},
		{"rollout_filter.strategy=top_k", "rollout_filter.metric=entropy"},
		{"rollout_filter.strategy=top_p", "rollout_filter.top_p_prob_mode=softmax", "rollout_filter.metric=length"},
	} {
		c, err := Load("", sets)
		if err != nil {
			t.Errorf("%v: %v", sets, err)
		} else if err := c.Filter().Check(); err != nil {
			t.Errorf("%v: a valid config whose filter fails Check: %v", sets, err)
		}
	}
}
