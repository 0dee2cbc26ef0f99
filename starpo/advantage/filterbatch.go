package advantage

import (
	"fmt"
	"math"
	"slices"
)

// GroupValues are a batch's per-trajectory quantities the rollout filter
// may rank, groups of GroupSize contiguous trajectories (group g is
// [g·GroupSize, (g+1)·GroupSize)).
type GroupValues struct {
	Scores    []float64 // the normalised, penalised scores (NormalizeScores); always needed
	Entropy   []float64 // per-token entropy of each trajectory; needed by the entropy metrics only
	Length    []float64 // trained tokens of each trajectory; needed by the length metric only
	GroupSize int
	Tags      []string // tags[g] is group g's environment: each tag's groups are filtered apart; nil: all together
}

// RolloutStats are the rollout filter's metrics: the scores' statistics
// as FilterGroups reports them, the ranked quantity's, and how many groups
// were kept.
type RolloutStats struct {
	FilterStats             // rollout/in_group_* and chosen_in_group_*: of the scores, whatever the metric
	Metric      GroupMetric // what was ranked
	// Per-group std, max, mean and sum of the ranked quantity (the scores
	// for the reward metrics), averaged over all groups and over the kept.
	Std, Max, Mean, Sum                         float64
	ChosenStd, ChosenMax, ChosenMean, ChosenSum float64
	Kept, Groups                                int // groups kept, of all groups
	Zero                                        int // groups whose ranked metric is 0 (|m| ≤ 1e-10)
}

// KeptRatio is the share of groups kept (RAGEN's filter_kept_ratio, which
// filter_loss_scaling reads).
func (s RolloutStats) KeptRatio() float64 {
	if s.Groups == 0 {
		return 0
	}
	return float64(s.Kept) / float64(s.Groups)
}

// Metrics returns the statistics under RAGEN's names. Where RAGEN differs:
// its rollout/in_group_std, _max, _mean (and chosen_) describe the ranked
// quantity, so entropy or length under the entropy and length metrics;
// here they always describe the scores, which the Echo-Trap watch reads,
// and the ranked quantity has its own names (in_group_entropy_*,
// in_group_length_*) as in RAGEN.
func (s RolloutStats) Metrics() map[string]float64 {
	m := s.FilterStats.Metrics()
	src := "rollout/in_group_" + s.Metric.source() + "_"
	chosen := "rollout/chosen_in_group_" + s.Metric.source() + "_"
	m[src+"std"], m[src+"max"], m[src+"mean"] = s.Std, s.Max, s.Mean
	m[chosen+"std"], m[chosen+"max"], m[chosen+"mean"] = s.ChosenStd, s.ChosenMax, s.ChosenMean
	if s.Metric.source() == "reward" {
		m[src+"sum"], m[chosen+"sum"] = s.Sum, s.ChosenSum
	}
	m["rollout/filter_kept_count"] = float64(s.Kept)
	m["rollout/filter_kept_ratio"] = s.KeptRatio()
	m["rollout/filter_zero_count"] = float64(s.Zero)
	return m
}

// Apply is RAGEN-2's rollout filter on a batch (RAGEN's RewardRolloutFilter,
// EntropyRolloutFilter and LengthRolloutFilter): it computes each group's
// metric and keeps, per Select, the groups f chooses. keep lists the kept
// group indices in ascending order; Rows expands them to trajectories. It
// may be empty.
//
// Per group, of the quantity the metric names (the scores, the entropies
// or the lengths): the unbiased std (0 for a group of one, where torch
// gives NaN), the max, the mean and the sum. The metric is the std for
// reward_variance and entropy_variance, the sum for reward_sum, the mean
// otherwise. With Tags each tag's groups are selected on their own, with
// n in Select their number (FilterGroupsByTag says why); RAGEN selects over
// the whole batch.
//
// Errors name the bad input: an empty batch, a group size that does not
// divide it, tags or a ranked quantity of another length, a non-finite
// value, a setting that fails Check.
func (f Filter) Apply(v GroupValues) (keep []int, stats RolloutStats, err error) {
	if err := f.Check(); err != nil {
		return nil, stats, err
	}
	src, name := v.Scores, "score"
	switch f.Metric.source() {
	case "entropy":
		src, name = v.Entropy, "entropy"
	case "length":
		src, name = v.Length, "length"
	}
	n := len(v.Scores)
	switch {
	case n == 0:
		return nil, stats, fmt.Errorf("rollout filter: no scores")
	case v.GroupSize < 1:
		return nil, stats, fmt.Errorf("rollout filter: group size %d is not positive", v.GroupSize)
	case n%v.GroupSize != 0:
		return nil, stats, fmt.Errorf("rollout filter: %d scores do not split into groups of %d", n, v.GroupSize)
	case len(src) != n:
		return nil, stats, fmt.Errorf("rollout filter: metric %s needs one %s per trajectory: %d for %d scores",
			f.Metric, name, len(src), n)
	case v.Tags != nil && len(v.Tags) != n/v.GroupSize:
		return nil, stats, fmt.Errorf("rollout filter: %d tags for %d scores in groups of %d",
			len(v.Tags), n, v.GroupSize)
	}
	for i := range n {
		if !finite(v.Scores[i]) || !finite(src[i]) {
			return nil, stats, fmt.Errorf("rollout filter: trajectory %d has score %v, %s %v", i, v.Scores[i], name, src[i])
		}
	}
	groups := n / v.GroupSize
	s := groupStats(v.Scores, v.GroupSize)
	q := groupStats(src, v.GroupSize)
	metric := q.mean
	switch f.Metric {
	case MetricRewardVariance, MetricEntropyVariance:
		metric = q.std
	case MetricRewardSum:
		metric = q.sum
	}
	tags := v.Tags
	if tags == nil {
		tags = make([]string, groups) // one selection
	}
	order, byTag := indexBy(tags)
	for _, tag := range order {
		members := byTag[tag]
		sub := make([]float64, len(members))
		for i, g := range members {
			sub[i] = metric[g]
		}
		for _, i := range f.Select(sub) {
			keep = append(keep, members[i])
		}
	}
	slices.Sort(keep)
	stats = RolloutStats{
		FilterStats: FilterStats{
			InGroupStd: Mean(s.std), InGroupMax: Mean(s.max), InGroupMean: Mean(s.mean),
			ChosenInGroupStd: pickMean(s.std, keep), ChosenInGroupMax: pickMean(s.max, keep),
			ChosenInGroupMean: pickMean(s.mean, keep),
		},
		Metric: f.Metric,
		Std:    Mean(q.std), Max: Mean(q.max), Mean: Mean(q.mean), Sum: Mean(q.sum),
		ChosenStd: pickMean(q.std, keep), ChosenMax: pickMean(q.max, keep),
		ChosenMean: pickMean(q.mean, keep), ChosenSum: pickMean(q.sum, keep),
		Kept: len(keep), Groups: groups,
	}
	for _, m := range metric {
		if math.Abs(m) <= zeroTol {
			stats.Zero++
		}
	}
	return keep, stats, nil
}

// perGroup holds one statistic per group.
type perGroup struct{ std, max, mean, sum []float64 }

// groupStats is the per-group unbiased std, max, mean and sum of x, groups
// of size contiguous values.
func groupStats(x []float64, size int) perGroup {
	n := len(x) / size
	p := perGroup{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	for g := range n {
		y := x[g*size : (g+1)*size]
		p.std[g], p.max[g], p.mean[g] = stdUnbiased(y), maxOf(y), Mean(y)
		for _, v := range y {
			p.sum[g] += v
		}
	}
	return p
}

// pickMean is the mean of v over the indices in keep; 0 for none (RAGEN's
// _selected_mean).
func pickMean(v []float64, keep []int) float64 {
	if len(keep) == 0 {
		return 0
	}
	s := 0.0
	for _, g := range keep {
		s += v[g]
	}
	return s / float64(len(keep))
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
