package advantage

import (
	"fmt"
	"math"
	"slices"
)

// RAGEN-2's rollout filter (ragen/trainer/rollout_filter.py, "SNR-Adaptive
// Filtering"): a metric per group (its reward std by default), then a
// strategy that keeps the groups at one end of that metric. The paper's
// StarPO-S filter, FilterGroups, is one setting of it (StarPOS). Unlike
// StarPO-S it may keep no group at all; the trainer then skips the step
// (RAGEN's empty_after_filter).

// Strategy is how the filter chooses groups by their metric
// (RAGEN's rollout_filter_strategy).
type Strategy string

// The strategies. "The best" is the largest metric under Largest, the
// smallest under Smallest.
const (
	StrategyTopP    Strategy = "top_p"     // the best groups whose metric mass reaches value (TopPMode)
	StrategyTopK    Strategy = "top_k"     // the best max(1, ⌊value·groups⌋)
	StrategyTopKAbs Strategy = "top_k_abs" // the best max(1, ⌊value⌋)
	StrategyMinP    Strategy = "min_p"     // those within a factor value of the best
)

// Check says whether s is one of the strategies.
func (s Strategy) Check() error {
	switch s {
	case StrategyTopP, StrategyTopK, StrategyTopKAbs, StrategyMinP:
		return nil
	}
	return fmt.Errorf("rollout filter strategy %q is not one of top_p, top_k, top_k_abs, min_p", string(s))
}

// Order is which end of the ranking the filter keeps (rollout_filter_type).
type Order string

// The orders.
const (
	Largest  Order = "largest"  // keep the groups of largest metric
	Smallest Order = "smallest" // keep the groups of smallest metric
)

// Check says whether o is one of the orders.
func (o Order) Check() error {
	if o != Largest && o != Smallest {
		return fmt.Errorf("rollout filter type %q is not largest or smallest", string(o))
	}
	return nil
}

// TopPMode is how top_p turns metrics into a mass
// (rollout_filter_top_p_prob_mode).
type TopPMode string

// The top_p modes.
const (
	TopPLinear  TopPMode = "linear"  // the metrics themselves, against value·Σ − selection_eps
	TopPSoftmax TopPMode = "softmax" // softmax(±metric), against value
)

// Check says whether m is one of the modes.
func (m TopPMode) Check() error {
	if m != TopPLinear && m != TopPSoftmax {
		return fmt.Errorf("top_p mode %q is not linear or softmax", string(m))
	}
	return nil
}

// GroupMetric is the per-group value the filter ranks
// (rollout_filter_metric): a statistic of one per-trajectory quantity.
type GroupMetric string

// The metrics. RAGEN's "variance" metrics are unbiased standard
// deviations (torch.std), whatever their names say.
const (
	MetricRewardVariance  GroupMetric = "reward_variance"  // std of the scores
	MetricReward          GroupMetric = "reward"           // mean score
	MetricRewardSum       GroupMetric = "reward_sum"       // summed scores
	MetricEntropy         GroupMetric = "entropy"          // mean of the trajectories' per-token entropy
	MetricEntropyVariance GroupMetric = "entropy_variance" // std of the trajectories' per-token entropy
	MetricLength          GroupMetric = "length"           // mean trained tokens per trajectory
)

// Check says whether m is one of the metrics.
func (m GroupMetric) Check() error {
	switch m {
	case MetricRewardVariance, MetricReward, MetricRewardSum, MetricEntropy, MetricEntropyVariance, MetricLength:
		return nil
	}
	return fmt.Errorf("rollout filter metric %q is not one of reward_variance, reward, reward_sum, entropy, "+
		"entropy_variance, length", string(m))
}

// NeedsEntropy says whether m ranks the trajectories' entropy.
func (m GroupMetric) NeedsEntropy() bool { return m == MetricEntropy || m == MetricEntropyVariance }

// source is the family of the quantity m summarises, as RAGEN's metric
// names spell it: "reward", "entropy" or "length".
func (m GroupMetric) source() string {
	switch {
	case m.NeedsEntropy():
		return "entropy"
	case m == MetricLength:
		return "length"
	}
	return "reward"
}

// LossScaling scales the advantages by the share of groups the filter kept
// (RAGEN's actor.filter_loss_scaling), so that a step that kept little
// moves the policy less.
type LossScaling string

// The loss scalings.
const (
	ScaleNone   LossScaling = "none"   // × 1
	ScaleLinear LossScaling = "linear" // × kept ratio
	ScaleSqrt   LossScaling = "sqrt"   // × √(kept ratio)
)

// Check says whether l is one of the scalings.
func (l LossScaling) Check() error {
	if l != ScaleNone && l != ScaleLinear && l != ScaleSqrt {
		return fmt.Errorf("filter loss scaling %q is not one of none, linear, sqrt", string(l))
	}
	return nil
}

// Factor is what the advantages are multiplied by when the filter kept
// keptRatio of the groups (RAGEN: after compute_advantage, its whitening
// included, before the update; the returns are not scaled).
func (l LossScaling) Factor(keptRatio float64) float64 {
	switch l {
	case ScaleLinear:
		return keptRatio
	case ScaleSqrt:
		return math.Sqrt(keptRatio)
	}
	return 1
}

// Filter is one setting of the rollout filter; the names are RAGEN's
// rollout_filter_* keys.
type Filter struct {
	Strategy     Strategy
	Value        float64 // top_p: mass in (0, 1]; top_k: share in (0, 1]; top_k_abs: a count ≥ 1; min_p: factor in (0, 1]
	Order        Order
	IncludeZero  bool     // false: groups whose metric is 0 (|m| ≤ 1e-10) are never kept
	TopPMode     TopPMode // top_p only
	SelectionEps float64  // linear top_p: the threshold is value·Σ − SelectionEps
	Metric       GroupMetric
}

// StarPOS is the setting that is StarPO-S's filter, FilterGroups(ratio,
// mode): top_k of the reward std, largest for std and smallest for
// std_rev, zero-std groups allowed.
func StarPOS(ratio float64, mode FilterType) Filter {
	o := Largest
	if mode == FilterStdRev {
		o = Smallest
	}
	return Filter{Strategy: StrategyTopK, Value: ratio, Order: o, IncludeZero: true, TopPMode: TopPLinear,
		Metric: MetricRewardVariance}
}

// Check says whether f is a valid setting; errors name the field, as
// RAGEN's key suffix, and the value.
func (f Filter) Check() error {
	for _, err := range []error{f.Strategy.Check(), f.Order.Check(), f.Metric.Check()} {
		if err != nil {
			return err
		}
	}
	if f.Strategy == StrategyTopP {
		if err := f.TopPMode.Check(); err != nil {
			return err
		}
	}
	switch {
	case f.Strategy == StrategyTopKAbs && !(f.Value >= 1 && f.Value == math.Trunc(f.Value) && f.Value < 1<<31):
		return fmt.Errorf("rollout filter value %v must be a whole number of groups ≥ 1 for top_k_abs", f.Value)
	case f.Strategy != StrategyTopKAbs && !(f.Value > 0 && f.Value <= 1):
		return fmt.Errorf("rollout filter value %v must be in (0, 1] for %s", f.Value, f.Strategy)
	case !(f.SelectionEps >= 0) || math.IsInf(f.SelectionEps, 1):
		return fmt.Errorf("rollout filter selection_eps %v must be a finite number ≥ 0", f.SelectionEps)
	}
	return nil
}

// zeroTol is RAGEN's bound below which a group's metric counts as zero.
const zeroTol = 1e-10

// Select is RAGEN's _select_top_groups on all groups at once: which of the
// groups, metric[g] being group g's, the filter keeps, in ascending order
// (the order RAGEN's boolean mask leaves the batch in). With IncludeZero
// false only groups with |metric| > 1e-10 are candidates; none left keeps
// none. Then, n being all groups (candidates or not) and "ranked" the
// candidates best first:
//
//	top_p, value ≥ 1   every candidate
//	top_p linear       the shortest ranked prefix whose sum reaches
//	                   value·Σ(candidates) − selection_eps, taking no group
//	                   of metric ≤ 0; none when it cannot be reached
//	top_p softmax      p = softmax(metric) (Largest) or softmax(−metric), over
//	                   the candidates; the shortest prefix by descending p
//	                   whose mass reaches value (all when rounding falls short)
//	top_k              the first min(max(1, ⌊value·n⌋) capped at the candidates)
//	top_k_abs          as top_k with ⌊value⌋
//	min_p              Largest: metric ≥ value·max − 1e-10;
//	                   Smallest: metric ≤ min/(value + 1e-10) + 1e-10
//
// Where RAGEN differs: ties in a ranking go to the lower group index
// (torch's sort and topk leave their order unspecified), and the
// arithmetic is float64 (RAGEN's float32). f must pass Check.
func (f Filter) Select(metric []float64) []int {
	cand := make([]int, 0, len(metric))
	for g, m := range metric {
		if f.IncludeZero || math.Abs(m) > zeroTol {
			cand = append(cand, g)
		}
	}
	if len(cand) == 0 {
		return nil
	}
	best := func(key []float64) []int { // candidates, largest key first, ties by index
		r := slices.Clone(cand)
		slices.SortStableFunc(r, func(a, b int) int {
			switch {
			case key[a] > key[b]:
				return -1
			case key[a] < key[b]:
				return 1
			}
			return 0
		})
		return r
	}
	signed := metric // the metric, negated under Smallest: larger is better
	if f.Order == Smallest {
		signed = make([]float64, len(metric))
		for g, m := range metric {
			signed[g] = -m
		}
	}
	var keep []int
	switch f.Strategy {
	case StrategyTopP:
		switch {
		case f.Value >= 1:
			keep = cand
		case f.TopPMode == TopPSoftmax:
			keep = f.topPSoftmax(cand, signed, best)
		default:
			keep = f.topPLinear(cand, metric, best(signed))
		}
	case StrategyTopK, StrategyTopKAbs:
		k := int(f.Value)
		if f.Strategy == StrategyTopK {
			k = int(f.Value * float64(len(metric)))
		}
		keep = best(signed)[:max(1, min(k, len(cand)))]
	case StrategyMinP:
		keep = f.minP(cand, metric)
	}
	keep = slices.Clone(keep)
	slices.Sort(keep)
	return keep
}

// topPLinear walks ranked (best first), adding metrics until their sum
// reaches value·Σ − eps; a metric ≤ 0 ends the walk.
func (f Filter) topPLinear(cand []int, metric []float64, ranked []int) []int {
	total := 0.0
	for _, g := range cand {
		total += metric[g]
	}
	threshold := f.Value*total - f.SelectionEps
	sum, n := 0.0, 0
	for _, g := range ranked {
		if sum >= threshold || metric[g] <= 0 {
			break
		}
		sum += metric[g]
		n++
	}
	if sum >= threshold {
		return ranked[:n]
	}
	return nil
}

// topPSoftmax keeps the shortest prefix of the candidates by descending
// softmax(signed) whose mass reaches value (torch.searchsorted's left
// side: the first cumulative mass ≥ value, plus one).
func (f Filter) topPSoftmax(cand []int, signed []float64, best func([]float64) []int) []int {
	top := math.Inf(-1)
	for _, g := range cand {
		top = max(top, signed[g])
	}
	p, z := make([]float64, len(signed)), 0.0
	for _, g := range cand {
		p[g] = math.Exp(signed[g] - top)
		z += p[g]
	}
	for _, g := range cand {
		p[g] /= z
	}
	ranked := best(p)
	k, mass := len(ranked), 0.0
	for i, g := range ranked {
		if mass += p[g]; mass >= f.Value {
			k = i + 1
			break
		}
	}
	return ranked[:k]
}

// minP keeps the candidates within a factor value of the best.
func (f Filter) minP(cand []int, metric []float64) []int {
	var keep []int
	if f.Order == Largest {
		top := math.Inf(-1)
		for _, g := range cand {
			top = max(top, metric[g])
		}
		for _, g := range cand {
			if metric[g] >= top*f.Value-zeroTol {
				keep = append(keep, g)
			}
		}
		return keep
	}
	low := math.Inf(1)
	for _, g := range cand {
		low = min(low, metric[g])
	}
	for _, g := range cand {
		if metric[g] <= low/(f.Value+zeroTol)+zeroTol {
			keep = append(keep, g)
		}
	}
	return keep
}
