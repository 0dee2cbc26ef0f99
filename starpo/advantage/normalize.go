package advantage

import (
	"fmt"
	"math"
)

// RewardNorm is a reward normalisation method
// (agent_proxy.reward_normalization.method; ragen-go's algorithm.reward_norm).
type RewardNorm string

// The reward normalisation methods.
const (
	NormIdentity RewardNorm = "identity"  // x
	NormMean     RewardNorm = "mean"      // x − mean
	NormMeanStd  RewardNorm = "mean_std"  // (x − mean)/(std + 1e-6)
	NormAsymClip RewardNorm = "asym_clip" // mean_std clamped to [−1, 3]
)

// Check says whether m is one of the methods.
func (m RewardNorm) Check() error {
	switch m {
	case NormIdentity, NormMean, NormMeanStd, NormAsymClip:
		return nil
	}
	return fmt.Errorf("reward normalization method %q is not one of identity, mean, mean_std, asym_clip", string(m))
}

// normStdFloor is RAGEN's threshold below which a group has no spread.
const normStdFloor = 1e-6

// NormalizeScores is RAGEN's _normalize_score_tensor (docs/ragen.md#rewards):
// it normalises each trajectory's score (turn rewards plus penalty, added
// by the caller) within its group. groups[i] is trajectory i's group id
// (the caller's choice of grouping: group_id for "state", a tag index for
// "inductive", one id for "batch"); members need not be contiguous.
//
//	identity   x
//	mean       x − x̄
//	mean_std   (x − x̄)/(s + 1e-6), s the unbiased std; 0 for the whole
//	           group when s ≤ 1e-6 (a group of one included)
//	asym_clip  mean_std clamped to [−1, 3]
//
// When every group has a single member (validation's group size 1) the
// scores come back unchanged whatever the method, as RAGEN skips
// normalisation unless there are fewer groups than trajectories. The result
// is a new slice. An unknown method or a groups slice of another length is
// an error.
func NormalizeScores(scores []float64, groups []int, method RewardNorm) ([]float64, error) {
	if len(groups) != len(scores) {
		return nil, fmt.Errorf("normalising scores: %d group ids for %d scores", len(groups), len(scores))
	}
	if err := method.Check(); err != nil {
		return nil, err
	}
	var norm func([]float64) []float64
	switch method {
	case NormIdentity:
		norm = func(x []float64) []float64 { return x }
	case NormMean:
		norm = centre
	case NormMeanStd:
		norm = standardise
	case NormAsymClip:
		norm = func(x []float64) []float64 {
			z := standardise(x)
			for i := range z {
				z[i] = min(max(z[i], -1), 3)
			}
			return z
		}
	}
	out := append([]float64(nil), scores...)
	order, members := indexBy(groups)
	if len(order) == len(scores) {
		return out, nil
	}
	for _, g := range order {
		idx := members[g]
		x := make([]float64, len(idx))
		for k, i := range idx {
			x[k] = scores[i]
		}
		for k, v := range norm(x) {
			out[idx[k]] = v
		}
	}
	return out, nil
}

// centre returns x − Mean(x).
func centre(x []float64) []float64 {
	m := Mean(x)
	z := make([]float64, len(x))
	for i, v := range x {
		z[i] = v - m
	}
	return z
}

// standardise returns (x − mean)/(std + 1e-6), or zeros when std ≤ 1e-6 or
// is undefined (one member; NaN in torch, which RAGEN's test also maps to
// zeros).
func standardise(x []float64) []float64 {
	s := stdUnbiased(x)
	z := centre(x)
	if !(math.Abs(s) > normStdFloor) {
		clear(z)
		return z
	}
	for i := range z {
		z[i] /= s + normStdFloor
	}
	return z
}
