package rollout

import "strconv"

// Metrics are rollout metrics by RAGEN's names (spec §5), without the
// train/ or val-env/ prefix, which the caller adds.
type Metrics map[string]float64

// ComputeMetrics gives, for each tag, the means over its environments of
// success, num_actions, action_is_effective and action_is_valid (each a
// per-turn average within an episode), and pass@{groupSize}: the fraction
// of the tag's groups with at least one success. response_length is the
// mean number of sampled tokens per trajectory, over all tags.
func ComputeMetrics(trajs []Trajectory, groupSize int) Metrics {
	type acc struct {
		n, success, actions, effective, valid float64
		groups                                map[int]bool // group id → any success
	}
	byTag := map[string]*acc{}
	out := Metrics{}
	var tokens float64
	for _, t := range trajs {
		a := byTag[t.Tag]
		if a == nil {
			a = &acc{groups: map[int]bool{}}
			byTag[t.Tag] = a
		}
		a.n++
		if t.Success {
			a.success++
		}
		a.actions += float64(t.NumActions)
		a.effective += t.ActionIsEffective
		a.valid += t.ActionIsValid
		a.groups[t.GroupID] = a.groups[t.GroupID] || t.Success
		tokens += float64(t.ResponseTokens)
	}
	for tag, a := range byTag {
		out[tag+"/success"] = a.success / a.n
		out[tag+"/num_actions"] = a.actions / a.n
		out[tag+"/action_is_effective"] = a.effective / a.n
		out[tag+"/action_is_valid"] = a.valid / a.n
		pass := 0.0
		for _, ok := range a.groups {
			if ok {
				pass++
			}
		}
		out[tag+"/pass@"+strconv.Itoa(groupSize)] = pass / float64(len(a.groups))
	}
	if len(trajs) > 0 {
		out["response_length"] = tokens / float64(len(trajs))
	}
	return out
}
