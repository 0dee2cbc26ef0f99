package advantage

import (
	"fmt"
	"math"
	"slices"
)

// FilterType is the rollout filter's ranking
// (actor_rollout_ref.rollout.rollout_filter_type; ragen-go's
// algorithm.filter_type).
type FilterType string

// The rollout filter types.
const (
	FilterStd    FilterType = "std"     // keep the groups of highest in-group std
	FilterStdRev FilterType = "std_rev" // keep the groups of lowest in-group std
)

// Check says whether f is one of the filter types.
func (f FilterType) Check() error {
	if f != FilterStd && f != FilterStdRev {
		return fmt.Errorf("rollout filter type %q is not one of std, std_rev", string(f))
	}
	return nil
}

// FilterStats are the rollout filter's metrics: per-group statistics of
// the scores averaged over all groups, and over the kept groups only.
type FilterStats struct {
	InGroupStd        float64 // rollout/in_group_std: mean of per-group unbiased std
	InGroupMax        float64 // rollout/in_group_max: mean of per-group max
	InGroupMean       float64 // rollout/in_group_mean: mean of per-group mean
	ChosenInGroupStd  float64 // rollout/chosen_in_group_std: as InGroupStd, kept groups
	ChosenInGroupMax  float64 // rollout/chosen_in_group_max
	ChosenInGroupMean float64 // rollout/chosen_in_group_mean
}

// Metrics returns the statistics under RAGEN's metric names
// (docs/ragen.md#metrics).
func (s FilterStats) Metrics() map[string]float64 {
	return map[string]float64{
		"rollout/in_group_std":         s.InGroupStd,
		"rollout/in_group_max":         s.InGroupMax,
		"rollout/in_group_mean":        s.InGroupMean,
		"rollout/chosen_in_group_std":  s.ChosenInGroupStd,
		"rollout/chosen_in_group_max":  s.ChosenInGroupMax,
		"rollout/chosen_in_group_mean": s.ChosenInGroupMean,
	}
}

// FilterGroups is StarPO-S's rollout filter, RAGEN's _filter_rollout
// (docs/ragen.md#filter): it keeps the prompt groups whose rewards disagree
// most. scores holds one score per trajectory, groups of groupSize contiguous
// trajectories (group g is scores[g·groupSize : (g+1)·groupSize]); they are
// the normalised, penalised scores of NormalizeScores, as in RAGEN.
//
// For each group it takes the unbiased std, the max and the mean. ratio 1
// keeps every group; otherwise it keeps k = max(1, ⌊ratio·groups⌋) groups,
// those of highest std (FilterStd) or lowest (FilterStdRev). Where RAGEN
// differs:
//
//   - Ties go to the lower group index (a stable sort), where torch.topk
//     leaves their order unspecified.
//   - At least one group is kept; RAGEN would keep none when ratio·groups
//     < 1 and fail later on an empty batch.
//   - A group of one has std 0 (torch: NaN).
//   - mode is checked even when ratio is 1.
//
// keep lists the kept group indices in ascending order, the order RAGEN's
// boolean mask leaves the batch in; Rows expands them to trajectories.
// Errors name the bad value: an empty batch, groupSize < 1 or not dividing
// the batch, ratio outside (0, 1], an unknown mode, a non-finite score.
// The trainer runs it as RAGEN-2's filter set to StarPOS(ratio, mode),
// which keeps the same groups.
func FilterGroups(scores []float64, groupSize int, ratio float64,
	mode FilterType) (keep []int, stats FilterStats, err error) {
	return FilterGroupsByTag(scores, groupSize, ratio, mode, nil)
}

// Rows expands kept group indices to the trajectory indices they cover, in
// order: group g is rows g·groupSize … (g+1)·groupSize − 1.
func Rows(keep []int, groupSize int) []int {
	rows := make([]int, 0, len(keep)*groupSize)
	for _, g := range keep {
		for i := range groupSize {
			rows = append(rows, g*groupSize+i)
		}
	}
	return rows
}

// FilterGroupsByTag is FilterGroups applied to each environment's groups
// on their own: tags[g] names group g's environment, and each tag keeps
// max(1, ⌊ratio·its groups⌋) of its groups; nil tags rank all groups
// together (FilterGroups). RAGEN ranks all groups of the batch together,
// which is right for one environment; across environments whose rewards
// differ in scale (Sokoban pays 10 for a solve, FrozenLake 1) the larger
// scale wins every place, and the other environments stop training
// (measured: FrozenLake trained beside SimpleSokoban fell from 0.133 to
// 0.004). The statistics cover all groups, and the kept ones.
func FilterGroupsByTag(scores []float64, groupSize int, ratio float64, mode FilterType,
	tags []string) (keep []int, stats FilterStats, err error) {
	switch {
	case len(scores) == 0:
		return nil, stats, fmt.Errorf("rollout filter: no scores")
	case groupSize < 1:
		return nil, stats, fmt.Errorf("rollout filter: group size %d is not positive", groupSize)
	case len(scores)%groupSize != 0:
		return nil, stats, fmt.Errorf("rollout filter: %d scores do not split into groups of %d",
			len(scores), groupSize)
	case tags != nil && len(tags) != len(scores)/groupSize:
		return nil, stats, fmt.Errorf("rollout filter: %d tags for %d scores in groups of %d",
			len(tags), len(scores), groupSize)
	case !(ratio > 0 && ratio <= 1):
		return nil, stats, fmt.Errorf("rollout filter ratio %v is not in (0, 1]", ratio)
	case mode.Check() != nil:
		return nil, stats, mode.Check()
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, stats, fmt.Errorf("rollout filter: score %d is %v", i, s)
		}
	}
	n := len(scores) / groupSize
	std, mx, mu := make([]float64, n), make([]float64, n), make([]float64, n)
	for g := range n {
		x := scores[g*groupSize : (g+1)*groupSize]
		std[g], mx[g], mu[g] = stdUnbiased(x), maxOf(x), Mean(x)
	}
	if tags == nil {
		tags = make([]string, n) // one ranking
	}
	order, byTag := indexBy(tags)
	for _, tag := range order {
		keep = append(keep, topGroups(byTag[tag], std, ratio, mode)...)
	}
	slices.Sort(keep)
	pick := func(v []float64) []float64 {
		out := make([]float64, len(keep))
		for i, g := range keep {
			out[i] = v[g]
		}
		return out
	}
	stats = FilterStats{
		InGroupStd: Mean(std), InGroupMax: Mean(mx), InGroupMean: Mean(mu),
		ChosenInGroupStd: Mean(pick(std)), ChosenInGroupMax: Mean(pick(mx)), ChosenInGroupMean: Mean(pick(mu)),
	}
	return keep, stats, nil
}

// topGroups returns, of groups (ascending indices), all of them at ratio
// 1, else the max(1, ⌊ratio·len⌋) of highest std (FilterStd) or lowest
// (FilterStdRev), ties to the lower index.
func topGroups(groups []int, std []float64, ratio float64, mode FilterType) []int {
	if ratio >= 1 {
		return groups
	}
	ranked := slices.Clone(groups)
	slices.SortStableFunc(ranked, func(a, b int) int {
		if mode == FilterStdRev {
			a, b = b, a
		}
		switch { // descending std for FilterStd
		case std[a] > std[b]:
			return -1
		case std[a] < std[b]:
			return 1
		}
		return 0
	})
	return ranked[:max(1, int(ratio*float64(len(groups))))]
}
