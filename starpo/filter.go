package starpo

import (
	"fmt"
	"math"

	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// The rollout filter in the trainer (advantage.Filter, config
// rollout_filter): selectKept ranks the groups, a step that keeps none
// trains nothing (RAGEN's empty_after_filter), rollout_filter.
// empty_stop_steps such steps in a row stop the run, and loss_scaling
// scales the advantages by the share of groups kept.

// filterGroups applies the run's rollout filter to all, whose normalised
// scores are scores, and records its metrics and whether it kept nothing.
func (t *Trainer) filterGroups(all []rollout.Trajectory, scores []float64, rec *Recorder) (keep []int,
	keptRatio float64, err error) {
	f, groupSize := t.Cfg.Filter(), t.Envs.Config().GroupSize
	v := advantage.GroupValues{Scores: scores, GroupSize: groupSize}
	if t.Cfg.Algorithm.FilterPerTag && groupSize > 0 { // nil: RAGEN's one ranking of the whole batch
		v.Tags = make([]string, len(all)/groupSize)
		for g := range v.Tags {
			v.Tags[g] = all[g*groupSize].Tag
		}
	}
	switch {
	case f.Metric.NeedsEntropy():
		v.Entropy = make([]float64, len(all))
		for i, tr := range all {
			v.Entropy[i] = sampledEntropy(tr)
		}
	case f.Metric == advantage.MetricLength:
		v.Length = make([]float64, len(all))
		for i, tr := range all {
			v.Length[i] = trainedTokens(tr)
		}
	}
	keep, st, err := f.Apply(v)
	if err != nil {
		return nil, 0, err
	}
	rec.Add("", st.Metrics())
	t.emptySteps++
	if len(keep) > 0 {
		t.emptySteps = 0
	}
	rec.Metrics["rollout/empty_after_filter"] = 0
	if len(keep) == 0 {
		rec.Metrics["rollout/empty_after_filter"] = 1
		// No update: a grad norm of 0 would drag the Echo-Trap watch's
		// median down; NaN is skipped (and written as null).
		rec.Metrics["actor/grad_norm"] = math.NaN()
	}
	rec.Metrics["rollout/consecutive_empty_after_filter_steps"] = float64(t.emptySteps)
	return keep, st.KeptRatio(), nil
}

// keptNothing says whether this step's filter kept no group: the step then
// trains nothing.
func (t *Trainer) keptNothing() bool { return t.emptySteps > 0 }

// checkFilterStop refuses to start step once the filter has kept nothing
// for rollout_filter.empty_stop_steps steps in a row (RAGEN's early stop,
// empty_filtered_steps). The count restarts with the process: a resumed
// run begins from zero.
func (t *Trainer) checkFilterStop(step int) error {
	k := t.Cfg.RolloutFilter.EmptyStopSteps
	if k == 0 || t.emptySteps < k {
		return nil
	}
	return fmt.Errorf("stopping before step %d: the rollout filter kept no group in the last %d steps "+
		"(rollout_filter.empty_stop_steps %d); loosen rollout_filter.value or include_zero, or set "+
		"rollout_filter.empty_stop_steps=0 to go on", step+1, t.emptySteps, k)
}

// scaleAdvantages multiplies b's advantages by rollout_filter.loss_scaling's
// factor of the share of groups kept, as RAGEN does after computing them
// (whitening included); the returns keep their scale.
func (t *Trainer) scaleAdvantages(b *Batch) {
	s := t.Cfg.RolloutFilter.LossScaling.Factor(b.keptRatio)
	if s == 1 {
		return
	}
	for _, row := range b.Advantages {
		for j := range row {
			row[j] *= s
		}
	}
}

// sampledEntropy is the entropy metric's per-trajectory value: the mean of
// −log p over each row's trained tokens (p the policy's probability of the
// sampled token, before temperature, as the rollout recorded it), averaged
// over the rows (a windowed episode's turns), 0 for a row without trained
// tokens. RAGEN scores the batch with the actor once more to take each
// token's exact entropy (EntropyRolloutFilter, compute_log_prob); −log p
// of a token drawn from p is a one-sample estimate of that entropy, exact
// in expectation at temperature 1 with top_p 1 and top_k off (RAGEN's
// training sampling) and the sampler's cross-entropy against the policy
// otherwise, and it costs no forward pass.
func sampledEntropy(tr rollout.Trajectory) float64 {
	rs := tr.Rows()
	total := 0.0
	for _, s := range rs {
		sum, n := 0.0, 0.0
		for j, m := range s.LossMask {
			if m != 0 {
				sum -= s.OldLogProbs[j]
				n++
			}
		}
		total += sum / math.Max(n, 1)
	}
	return total / float64(len(rs))
}

// trainedTokens is the length metric's per-trajectory value: the trained
// tokens over the trajectory's rows (RAGEN's response_mask summed over an
// episode's rows).
func trainedTokens(tr rollout.Trajectory) float64 {
	n := 0.0
	for _, s := range tr.Rows() {
		for _, m := range s.LossMask {
			if m != 0 {
				n++
			}
		}
	}
	return n
}
