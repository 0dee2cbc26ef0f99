package config

import (
	"fmt"
	"math"

	"github.com/ragen-go/ragen/starpo/advantage"
)

// RolloutFilter is RAGEN-2's rollout filter (advantage.Filter,
// docs/training.md). Its keys are RAGEN's actor_rollout_ref.rollout.
// rollout_filter_* without the prefix, plus loss_scaling (RAGEN's
// actor.filter_loss_scaling), in a section of their own rather than in
// algorithm: RAGEN's value and type mean something else than
// algorithm.filter_ratio and filter_type (the paper's StarPO-S filter,
// kept as it was), and one section named after the family reads
// key for key against a RAGEN config.
//
// strategy "" (the default) is StarPO-S: algorithm.filter_ratio and
// filter_type choose the groups, as top_k of the reward std
// (advantage.StarPOS), and this section's selection keys must keep their
// defaults. A strategy hands the choice to this section, and then
// algorithm.filter_ratio and filter_type are not read. filter_per_tag,
// empty_stop_steps and loss_scaling apply either way.
type RolloutFilter struct {
	Strategy       advantage.Strategy    `yaml:"strategy"`         // "" (StarPO-S), top_p, top_k, top_k_abs or min_p
	Value          float64               `yaml:"value"`            // top_p mass, top_k share, top_k_abs count, min_p factor
	Type           advantage.Order       `yaml:"type"`             // largest or smallest: which end of the metric is kept
	IncludeZero    bool                  `yaml:"include_zero"`     // groups whose metric is 0 may be kept
	TopPProbMode   advantage.TopPMode    `yaml:"top_p_prob_mode"`  // top_p: linear (metric sums) or softmax
	SelectionEps   float64               `yaml:"selection_eps"`    // linear top_p: the threshold is value·Σ − eps
	Metric         advantage.GroupMetric `yaml:"metric"`           // reward_variance, reward, reward_sum, entropy, entropy_variance, length
	EmptyStopSteps int                   `yaml:"empty_stop_steps"` // stop after this many steps in a row that kept nothing; 0 = never
	LossScaling    advantage.LossScaling `yaml:"loss_scaling"`     // none, linear or sqrt: advantages × (share of groups kept)
}

// defaultRolloutFilter is RAGEN's base.yaml, except the strategy: RAGEN's
// top_p at value 1 keeps every group; "" here keeps StarPO-S.
func defaultRolloutFilter() RolloutFilter {
	return RolloutFilter{Value: 1, Type: advantage.Largest, IncludeZero: true, TopPProbMode: advantage.TopPLinear,
		SelectionEps: 0.01, Metric: advantage.MetricRewardVariance, EmptyStopSteps: 5, LossScaling: advantage.ScaleNone}
}

// Filter is the run's rollout filter: this section's, or with strategy ""
// StarPO-S's from algorithm.filter_ratio and filter_type.
func (c Config) Filter() advantage.Filter {
	f := c.RolloutFilter
	if f.Strategy == "" {
		return advantage.StarPOS(c.Algorithm.FilterRatio, c.Algorithm.FilterType)
	}
	return advantage.Filter{Strategy: f.Strategy, Value: f.Value, Order: f.Type, IncludeZero: f.IncludeZero,
		TopPMode: f.TopPProbMode, SelectionEps: f.SelectionEps, Metric: f.Metric}
}

// checkRolloutFilter validates the rollout_filter section, each error a
// sentence naming its key.
func (c Config) checkRolloutFilter() error {
	f := c.RolloutFilter
	switch {
	case f.Strategy != "" && f.Strategy.Check() != nil:
		return fmt.Errorf("rollout_filter.strategy %q is not one of \"\" (StarPO-S: algorithm.filter_ratio), "+
			"top_p, top_k, top_k_abs, min_p", f.Strategy)
	case f.Type.Check() != nil:
		return fmt.Errorf("rollout_filter.type %q is not largest or smallest", f.Type)
	case f.TopPProbMode.Check() != nil:
		return fmt.Errorf("rollout_filter.top_p_prob_mode %q is not linear or softmax", f.TopPProbMode)
	case f.Metric.Check() != nil:
		return fmt.Errorf("rollout_filter.metric %q is not one of reward_variance, reward, reward_sum, entropy, "+
			"entropy_variance, length", f.Metric)
	case f.LossScaling.Check() != nil:
		return fmt.Errorf("rollout_filter.loss_scaling %q is not one of none, linear, sqrt", f.LossScaling)
	case !(f.SelectionEps >= 0) || math.IsInf(f.SelectionEps, 1):
		return fmt.Errorf("rollout_filter.selection_eps %v must be a finite number ≥ 0", f.SelectionEps)
	case f.EmptyStopSteps < 0:
		return fmt.Errorf("rollout_filter.empty_stop_steps %d must be ≥ 0 (0: never stop on steps that kept nothing)",
			f.EmptyStopSteps)
	case f.Strategy == "":
		return f.checkUnused()
	case f.Strategy == advantage.StrategyTopKAbs &&
		!(f.Value >= 1 && f.Value == math.Trunc(f.Value) && f.Value < 1<<31):
		return fmt.Errorf("rollout_filter.value %v must be a whole number of groups ≥ 1 for strategy top_k_abs", f.Value)
	case f.Strategy != advantage.StrategyTopKAbs && !(f.Value > 0 && f.Value <= 1):
		return fmt.Errorf("rollout_filter.value %v must be in (0, 1] for strategy %s", f.Value, f.Strategy)
	}
	return nil
}

// checkUnused refuses selection keys set away from their defaults under
// StarPO-S, which would otherwise do nothing.
func (f RolloutFilter) checkUnused() error {
	d := defaultRolloutFilter()
	key := ""
	switch {
	case f.Value != d.Value:
		key = fmt.Sprintf("rollout_filter.value %v", f.Value)
	case f.Type != d.Type:
		key = fmt.Sprintf("rollout_filter.type %s", f.Type)
	case f.IncludeZero != d.IncludeZero:
		key = fmt.Sprintf("rollout_filter.include_zero %v", f.IncludeZero)
	case f.TopPProbMode != d.TopPProbMode:
		key = fmt.Sprintf("rollout_filter.top_p_prob_mode %s", f.TopPProbMode)
	case f.SelectionEps != d.SelectionEps:
		key = fmt.Sprintf("rollout_filter.selection_eps %v", f.SelectionEps)
	case f.Metric != d.Metric:
		key = fmt.Sprintf("rollout_filter.metric %s", f.Metric)
	default:
		return nil
	}
	return fmt.Errorf("%s needs a rollout_filter.strategy: without one, StarPO-S's algorithm.filter_ratio and "+
		"filter_type choose the groups by reward std", key)
}

// checkBiLevelGAE validates algorithm.bi_level_gae and high_level_gamma,
// with RAGEN's constraints (train.py): the turn level bootstraps from the
// critic, and RAGEN does not support turn scores with it.
func (c Config) checkBiLevelGAE() error {
	a := c.Algorithm
	switch {
	case !(a.HighLevelGamma >= 0 && a.HighLevelGamma <= 1):
		return fmt.Errorf("algorithm.high_level_gamma %v must be in [0, 1]", a.HighLevelGamma)
	case a.BiLevelGAE && a.AdvEstimator != advantage.EstimatorGAE:
		return fmt.Errorf("algorithm.bi_level_gae needs algorithm.adv_estimator gae (the turn level bootstraps "+
			"from the critic), not %s", a.AdvEstimator)
	case a.BiLevelGAE && a.UseTurnScores:
		return fmt.Errorf("algorithm.bi_level_gae does not go with algorithm.use_turn_scores " +
			"(RAGEN refuses the pair: its bi-level GAE does not support turn scores yet)")
	}
	return nil
}
